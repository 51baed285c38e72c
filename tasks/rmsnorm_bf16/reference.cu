/*
 * rmsnorm_bf16/reference.cu - the cuda reference: one block per row, the sum
 * of squares in double (a shared-memory tree), then y = x / sqrt(mean + 1e-6)
 * * w in double, rounded to bf16 (a KL_F64 output: the exact result
 * unrounded, the float64 reference of the precision verdict).
 */
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "kloop.h"

#define THREADS 256
#define EPS 1e-6

__device__ __forceinline__ void put(double *p, double v)
{
	*p = v;
}
__device__ __forceinline__ void put(__nv_bfloat16 *p, double v)
{
	*p = __float2bfloat16_rn((float)v);
}

template <typename O>
__global__ void rmsnorm_ref(const __nv_bfloat16 *x, const __nv_bfloat16 *w, O *y, int cols)
{
	__shared__ double part[THREADS];
	const __nv_bfloat16 *xr = x + (size_t)blockIdx.x * cols;
	double ss = 0.0;
	for (int c = threadIdx.x; c < cols; c += THREADS) {
		double v = __bfloat162float(xr[c]);
		ss += v * v;
	}
	part[threadIdx.x] = ss;
	__syncthreads();
	for (int k = THREADS / 2; k > 0; k /= 2) {
		if (threadIdx.x < k)
			part[threadIdx.x] += part[threadIdx.x + k];
		__syncthreads();
	}
	double inv = 1.0 / sqrt(part[0] / cols + EPS);
	for (int c = threadIdx.x; c < cols; c += THREADS)
		put(&y[(size_t)blockIdx.x * cols + c],
		    (double)__bfloat162float(xr[c]) * inv * (double)__bfloat162float(w[c]));
}

extern "C" int kl_run(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *stream)
{
	if (n_in != 2 || n_out != 1)
		return 1;
	if (in[0].dtype != KL_BF16 || in[1].dtype != KL_BF16 ||
	    (out[0].dtype != KL_BF16 && out[0].dtype != KL_F64))
		return 2;
	if (in[0].ndim != 2 || in[1].ndim != 1 || out[0].ndim != 2)
		return 3;
	int64_t rows = in[0].shape[0], cols = in[0].shape[1];
	if (in[1].shape[0] != cols || out[0].shape[0] != rows || out[0].shape[1] != cols)
		return 3;
	if (rows == 0)
		return 0;
	const __nv_bfloat16 *x = (const __nv_bfloat16 *)in[0].data,
	                    *w = (const __nv_bfloat16 *)in[1].data;
	if (out[0].dtype == KL_F64)
		rmsnorm_ref<<<(unsigned)rows, THREADS, 0, (cudaStream_t)stream>>>(
		    x, w, (double *)out[0].data, (int)cols);
	else
		rmsnorm_ref<<<(unsigned)rows, THREADS, 0, (cudaStream_t)stream>>>(
		    x, w, (__nv_bfloat16 *)out[0].data, (int)cols);
	return cudaGetLastError() != cudaSuccess;
}
