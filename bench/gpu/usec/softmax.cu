// row softmax, a block of 1024 threads a row, the row in registers
// (bench/gpu/usec.sh)
#include <cuda_runtime.h>

#include "kloop.h"

#define T 1024
#define PER 16 /* elements a thread: rows of up to 16384 */

__device__ float block_reduce(float v, int isMax, float *sh)
{
	for (int o = 16; o > 0; o >>= 1) {
		float w = __shfl_xor_sync(0xffffffffu, v, o);
		v = isMax ? fmaxf(v, w) : v + w;
	}
	int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
	if (lane == 0)
		sh[wid] = v;
	__syncthreads();
	if (wid == 0) {
		v = sh[lane];
		for (int o = 16; o > 0; o >>= 1) {
			float w = __shfl_xor_sync(0xffffffffu, v, o);
			v = isMax ? fmaxf(v, w) : v + w;
		}
		if (lane == 0)
			sh[32] = v;
	}
	__syncthreads();
	v = sh[32];
	__syncthreads();
	return v;
}

__global__ void kl_softmax_rows(const float *x, float *y, int cols)
{
	__shared__ float sh[33];
	const float *r = x + (long long)blockIdx.x * cols;
	float *o = y + (long long)blockIdx.x * cols;
	float v[PER], m = -INFINITY;
	for (int k = 0; k < PER; k++) {
		int c = threadIdx.x + k * T;
		v[k] = c < cols ? r[c] : -INFINITY;
		m = fmaxf(m, v[k]);
	}
	m = block_reduce(m, 1, sh);
	float s = 0;
	for (int k = 0; k < PER; k++) {
		v[k] = threadIdx.x + k * T < cols ? __expf(v[k] - m) : 0.0f;
		s += v[k];
	}
	s = block_reduce(s, 0, sh);
	float inv = 1.0f / s;
	for (int k = 0; k < PER; k++) {
		int c = threadIdx.x + k * T;
		if (c < cols)
			o[c] = v[k] * inv;
	}
}

extern "C" int kl_run(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *stream)
{
	int rows = (int)in[0].shape[0], cols = (int)in[0].shape[1];
	if (cols > T * PER)
		return 1;
	kl_softmax_rows<<<rows, T, 0, (cudaStream_t)stream>>>((const float *)in[0].data,
	                                                      (float *)out[0].data, cols);
	return cudaGetLastError() != cudaSuccess;
}
