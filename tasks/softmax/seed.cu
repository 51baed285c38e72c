/*
 * softmax/seed.cu - naive cuda seed: one block of 256 threads per row, three
 * passes (max, sum of exponentials, write), float throughout.
 */
#include <cuda_runtime.h>

#include "kloop.h"

#define THREADS 256

__global__ void softmax_rows(const float *x, float *y, int cols)
{
	__shared__ float red[THREADS];
	const float *xr = x + (size_t)blockIdx.x * cols;
	float *yr = y + (size_t)blockIdx.x * cols;
	int t = threadIdx.x;

	float m = -INFINITY;
	for (int c = t; c < cols; c += THREADS)
		m = fmaxf(m, xr[c]);
	red[t] = m;
	__syncthreads();
	for (int s = THREADS / 2; s > 0; s /= 2) {
		if (t < s)
			red[t] = fmaxf(red[t], red[t + s]);
		__syncthreads();
	}
	m = red[0];
	__syncthreads();

	float sum = 0.0f;
	for (int c = t; c < cols; c += THREADS)
		sum += expf(xr[c] - m);
	red[t] = sum;
	__syncthreads();
	for (int s = THREADS / 2; s > 0; s /= 2) {
		if (t < s)
			red[t] += red[t + s];
		__syncthreads();
	}
	sum = red[0];

	for (int c = t; c < cols; c += THREADS)
		yr[c] = expf(xr[c] - m) / sum;
}

extern "C" int kl_run(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *stream)
{
	if (n_in != 1 || n_out != 1)
		return 1;
	int cols = (int)in[0].shape[in[0].ndim - 1];
	int rows = (int)(kl_numel(&in[0]) / cols);
	softmax_rows<<<rows, THREADS, 0, (cudaStream_t)stream>>>((const float *)in[0].data,
	                                                         (float *)out[0].data, cols);
	return cudaGetLastError() != cudaSuccess;
}
