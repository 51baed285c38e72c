/*
 * softmax/reference.cu - the cuda reference: one block per row; the max in
 * float, the exponentials and the sum in double, as the host reference does.
 */
#include <cuda_runtime.h>
#include <math.h>

#include "kloop.h"

#define THREADS 256

/* the value stored as the output's type (a KL_F64 output: the exact
 * result unrounded, the float64 reference of the precision verdict) */
__device__ __forceinline__ void put(float *p, double v)
{
	*p = (float)v;
}
__device__ __forceinline__ void put(double *p, double v)
{
	*p = v;
}

template <typename O> __global__ void softmax_ref(const float *x, O *y, long long cols)
{
	__shared__ float smax[THREADS];
	__shared__ double ssum[THREADS];
	const float *xr = x + (long long)blockIdx.x * cols;
	O *yr = y + (long long)blockIdx.x * cols;
	int t = threadIdx.x;

	float m = -INFINITY;
	for (long long c = t; c < cols; c += THREADS)
		m = fmaxf(m, xr[c]);
	smax[t] = m;
	__syncthreads();
	for (int s = THREADS / 2; s > 0; s /= 2) {
		if (t < s)
			smax[t] = fmaxf(smax[t], smax[t + s]);
		__syncthreads();
	}
	double rmax = smax[0];

	double sum = 0.0;
	for (long long c = t; c < cols; c += THREADS)
		sum += exp((double)xr[c] - rmax);
	ssum[t] = sum;
	__syncthreads();
	for (int s = THREADS / 2; s > 0; s /= 2) {
		if (t < s)
			ssum[t] += ssum[t + s];
		__syncthreads();
	}
	double rsum = ssum[0];

	for (long long c = t; c < cols; c += THREADS)
		put(&yr[c], exp((double)xr[c] - rmax) / rsum);
}

extern "C" int kl_run(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *stream)
{
	if (n_in != 1 || n_out != 1)
		return 1;
	if (in[0].dtype != KL_F32 || (out[0].dtype != KL_F32 && out[0].dtype != KL_F64) ||
	    in[0].ndim < 1)
		return 2;
	if (kl_numel(&in[0]) != kl_numel(&out[0]))
		return 3;
	long long cols = in[0].shape[in[0].ndim - 1];
	long long rows = cols ? kl_numel(&in[0]) / cols : 0;
	if (rows == 0)
		return 0;
	if (out[0].dtype == KL_F64)
		softmax_ref<<<(unsigned)rows, THREADS, 0, (cudaStream_t)stream>>>(
		    (const float *)in[0].data, (double *)out[0].data, cols);
	else
		softmax_ref<<<(unsigned)rows, THREADS, 0, (cudaStream_t)stream>>>(
		    (const float *)in[0].data, (float *)out[0].data, cols);
	return cudaGetLastError() != cudaSuccess;
}
