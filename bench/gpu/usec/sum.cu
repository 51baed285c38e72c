// a sum over dimension 1 of [B, N, M], kept: a thread a (b, j), its column
// read down (bench/gpu/usec.sh)
#include <cuda_runtime.h>

#include "kloop.h"

__global__ void kl_sum_dim1(const float *x, float *y, int B, int N, int M)
{
	int t = blockIdx.x * blockDim.x + threadIdx.x;
	if (t >= B * M)
		return;
	int b = t / M, j = t % M;
	const float *p = x + (long long)b * N * M + j;
	float s = 0;
	for (int i = 0; i < N; i++)
		s += p[(long long)i * M];
	y[t] = s;
}

extern "C" int kl_run(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *stream)
{
	int B = (int)in[0].shape[0], N = (int)in[0].shape[1], M = (int)in[0].shape[2];
	kl_sum_dim1<<<(B * M + 127) / 128, 128, 0, (cudaStream_t)stream>>>(
	    (const float *)in[0].data, (float *)out[0].data, B, N, M);
	return cudaGetLastError() != cudaSuccess;
}
