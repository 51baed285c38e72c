// mean squared error to a scalar in two kernels: partial sums a block,
// then one block sums them (bench/gpu/usec.sh: two kernels, a launch
// between them)
#include <cuda_runtime.h>

#include "kloop.h"

#define BLOCKS 264
#define T 256

__device__ float kl_partial[BLOCKS];

__global__ void kl_mse_partial(const float *p, const float *q, long long n)
{
	__shared__ float sh[T / 32];
	float s = 0;
	for (long long i = blockIdx.x * (long long)T + threadIdx.x; i < n;
	     i += (long long)BLOCKS * T) {
		float d = p[i] - q[i];
		s += d * d;
	}
	for (int o = 16; o > 0; o >>= 1)
		s += __shfl_xor_sync(0xffffffffu, s, o);
	if ((threadIdx.x & 31) == 0)
		sh[threadIdx.x >> 5] = s;
	__syncthreads();
	if (threadIdx.x == 0) {
		float t = 0;
		for (int w = 0; w < T / 32; w++)
			t += sh[w];
		kl_partial[blockIdx.x] = t;
	}
}

__global__ void kl_mse_final(float *y, long long n)
{
	__shared__ float sh[T / 32];
	float s = 0;
	for (int i = threadIdx.x; i < BLOCKS; i += T)
		s += kl_partial[i];
	for (int o = 16; o > 0; o >>= 1)
		s += __shfl_xor_sync(0xffffffffu, s, o);
	if ((threadIdx.x & 31) == 0)
		sh[threadIdx.x >> 5] = s;
	__syncthreads();
	if (threadIdx.x == 0) {
		float t = 0;
		for (int w = 0; w < T / 32; w++)
			t += sh[w];
		*y = t / (float)n;
	}
}

extern "C" int kl_run(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *stream)
{
	long long n = kl_numel(&in[0]);
	cudaStream_t s = (cudaStream_t)stream;
	kl_mse_partial<<<BLOCKS, T, 0, s>>>((const float *)in[0].data, (const float *)in[1].data,
	                                     n);
	kl_mse_final<<<1, T, 0, s>>>((float *)out[0].data, n);
	return cudaGetLastError() != cudaSuccess;
}
