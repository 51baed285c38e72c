/*
 * hgemm/seed_naive.cu - the former naive cuda seed, kept for comparison (the
 * hgemm figures of bench/RESULTS.md before issue 36 are its): one thread per
 * element of C, f16 operands read from global memory and accumulated in
 * float, the result stored as f16. Not a seed of task.json any more.
 */
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "kloop.h"

__global__ void hgemm_naive(const __half *A, const __half *B, __half *C, int M, int K, int N)
{
	int j = blockIdx.x * blockDim.x + threadIdx.x;
	int i = blockIdx.y * blockDim.y + threadIdx.y;
	if (i >= M || j >= N)
		return;
	float acc = 0.0f;
	for (int k = 0; k < K; k++)
		acc += __half2float(A[(size_t)i * K + k]) * __half2float(B[(size_t)k * N + j]);
	C[(size_t)i * N + j] = __float2half(acc);
}

extern "C" int kl_run(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *stream)
{
	if (n_in != 2 || n_out != 1)
		return 1;
	int M = (int)in[0].shape[0], K = (int)in[0].shape[1], N = (int)in[1].shape[1];
	dim3 block(16, 16), grid((N + 15) / 16, (M + 15) / 16);
	hgemm_naive<<<grid, block, 0, (cudaStream_t)stream>>>(
	    (const __half *)in[0].data, (const __half *)in[1].data, (__half *)out[0].data, M, K, N);
	return cudaGetLastError() != cudaSuccess;
}
