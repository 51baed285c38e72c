/*
 * layernorm/seed.cu - naive cuda seed: blocks over each row add their float sum
 * and sum of squares atomically into a scratch buffer, then one thread per
 * element normalises with var = E[x^2] - mean^2.
 */
#include <cuda_runtime.h>

#include "kloop.h"

#define THREADS 256
#define CHUNK 4096

__global__ void ln_stats(const float *x, int n, float *stats)
{
	__shared__ float s1[THREADS], s2[THREADS];
	const float *xr = x + (size_t)blockIdx.y * n;
	int start = blockIdx.x * CHUNK, end = min(start + CHUNK, n);
	float a = 0.0f, q = 0.0f;
	for (int i = start + threadIdx.x; i < end; i += THREADS) {
		a += xr[i];
		q += xr[i] * xr[i];
	}
	s1[threadIdx.x] = a;
	s2[threadIdx.x] = q;
	__syncthreads();
	for (int k = THREADS / 2; k > 0; k /= 2) {
		if (threadIdx.x < k) {
			s1[threadIdx.x] += s1[threadIdx.x + k];
			s2[threadIdx.x] += s2[threadIdx.x + k];
		}
		__syncthreads();
	}
	if (threadIdx.x == 0) {
		atomicAdd(&stats[2 * blockIdx.y], s1[0]);
		atomicAdd(&stats[2 * blockIdx.y + 1], s2[0]);
	}
}

__global__ void ln_norm(const float *x, const float *w, const float *b, float *y, int n,
                        size_t total, const float *stats)
{
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= total)
		return;
	size_t row = i / n, j = i % n;
	float mean = stats[2 * row] / n;
	float var = stats[2 * row + 1] / n - mean * mean;
	y[i] = (x[i] - mean) * rsqrtf(var + 1e-5f) * w[j] + b[j];
}

extern "C" int kl_run(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *stream)
{
	cudaStream_t s = (cudaStream_t)stream;
	if (n_in != 3 || n_out != 1)
		return 1;
	int n = (int)kl_numel(&in[1]);
	size_t total = (size_t)kl_numel(&in[0]);
	int rows = (int)(total / n);

	float *stats;
	if (cudaMallocAsync((void **)&stats, 2 * rows * sizeof(float), s) != cudaSuccess)
		return 2;
	cudaMemsetAsync(stats, 0, 2 * rows * sizeof(float), s);
	dim3 grid((n + CHUNK - 1) / CHUNK, rows);
	ln_stats<<<grid, THREADS, 0, s>>>((const float *)in[0].data, n, stats);
	ln_norm<<<(unsigned)((total + THREADS - 1) / THREADS), THREADS, 0, s>>>(
	    (const float *)in[0].data, (const float *)in[1].data, (const float *)in[2].data,
	    (float *)out[0].data, n, total, stats);
	cudaFreeAsync(stats, s);
	return cudaGetLastError() != cudaSuccess;
}
