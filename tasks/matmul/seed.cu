/*
 * matmul/seed.cu - naive cuda seed: one thread per element of C, a float
 * accumulator, operands read straight from global memory.
 */
#include <cuda_runtime.h>

#include "kloop.h"

__global__ void matmul_naive(const float *A, const float *B, float *C, int M, int K, int N)
{
	int j = blockIdx.x * blockDim.x + threadIdx.x;
	int i = blockIdx.y * blockDim.y + threadIdx.y;
	if (i >= M || j >= N)
		return;
	float acc = 0.0f;
	for (int k = 0; k < K; k++)
		acc += A[(size_t)i * K + k] * B[(size_t)k * N + j];
	C[(size_t)i * N + j] = acc;
}

extern "C" int kl_run(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *stream)
{
	if (n_in != 2 || n_out != 1)
		return 1;
	int M = (int)in[0].shape[0], K = (int)in[0].shape[1], N = (int)in[1].shape[1];
	dim3 block(16, 16), grid((N + 15) / 16, (M + 15) / 16);
	matmul_naive<<<grid, block, 0, (cudaStream_t)stream>>>(
	    (const float *)in[0].data, (const float *)in[1].data, (float *)out[0].data, M, K, N);
	return cudaGetLastError() != cudaSuccess;
}
