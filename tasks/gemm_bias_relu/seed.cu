/*
 * gemm_bias_relu/seed.cu - naive cuda seed: one thread per element of y, a
 * float dot product of a row of x with a row of W, plus bias, then ReLU.
 */
#include <cuda_runtime.h>

#include "kloop.h"

__global__ void gbr_naive(const float *x, const float *w, const float *b, float *y, int M, int K,
                          int N)
{
	int j = blockIdx.x * blockDim.x + threadIdx.x;
	int i = blockIdx.y * blockDim.y + threadIdx.y;
	if (i >= M || j >= N)
		return;
	float acc = 0.0f;
	for (int k = 0; k < K; k++)
		acc += x[(size_t)i * K + k] * w[(size_t)j * K + k];
	acc += b[j];
	y[(size_t)i * N + j] = fmaxf(acc, 0.0f);
}

extern "C" int kl_run(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *stream)
{
	if (n_in != 3 || n_out != 1)
		return 1;
	int M = (int)in[0].shape[0], K = (int)in[0].shape[1], N = (int)in[1].shape[0];
	dim3 block(16, 16), grid((N + 15) / 16, (M + 15) / 16);
	gbr_naive<<<grid, block, 0, (cudaStream_t)stream>>>(
	    (const float *)in[0].data, (const float *)in[2].data, (const float *)in[1].data,
	    (float *)out[0].data, M, K, N);
	return cudaGetLastError() != cudaSuccess;
}
