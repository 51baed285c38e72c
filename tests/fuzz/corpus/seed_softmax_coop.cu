// Row softmax: one block per row, warp shuffles for the reductions,
// cooperative groups for the block-level steps.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cfloat>
#include "kloop.h"

namespace cg = cooperative_groups;

#define BLOCK 256
#define WARPS (BLOCK / 32)

__device__ __forceinline__ float warp_max(float v)
{
#pragma unroll
	for (int off = 16; off > 0; off >>= 1)
		v = fmaxf(v, __shfl_xor_sync(0xffffffff, v, off));
	return v;
}

__device__ __forceinline__ float warp_sum(float v)
{
#pragma unroll
	for (int off = 16; off > 0; off >>= 1)
		v += __shfl_xor_sync(0xffffffffu, v, off);
	return v;
}

__global__ void __launch_bounds__(BLOCK) softmax_rows(const float *x, float *y, int cols)
{
	cg::thread_block block = cg::this_thread_block();
	cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
	__shared__ float red[WARPS];
	const float *row = x + (size_t)blockIdx.x * cols;
	float *out = y + (size_t)blockIdx.x * cols;

	float m = -FLT_MAX;
	for (int i = threadIdx.x; i < cols; i += blockDim.x)
		m = fmaxf(m, row[i]);
	m = warp_max(m);
	if (warp.thread_rank() == 0)
		red[warp.meta_group_rank()] = m;
	block.sync();
	m = threadIdx.x < WARPS ? red[threadIdx.x] : -FLT_MAX;
	m = cg::reduce(warp, m, cg::greater<float>());
	block.sync();

	float s = 0.f;
	for (int i = threadIdx.x; i < cols; i += blockDim.x)
		s += __expf(row[i] - m);
	s = warp_sum(s);
	if (warp.thread_rank() == 0)
		red[warp.meta_group_rank()] = s;
	block.sync();
	s = threadIdx.x < WARPS ? red[threadIdx.x] : 0.f;
	s = warp_sum(s);
	const float inv = 1.f / s;
	for (int i = threadIdx.x; i < cols; i += blockDim.x)
		out[i] = __expf(row[i] - m) * inv;
}

__global__ void scale_rows(float *y, float alpha, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] *= alpha;
}

extern "C" int kl_run(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *stream)
{
	cudaStream_t s = (cudaStream_t)stream;
	int rows = (int)in[0].shape[0], cols = (int)in[0].shape[1];
	softmax_rows<<<rows, BLOCK, 0, s>>>((const float *)in[0].data, (float *)out[0].data, cols);
	int n = rows * cols;
	scale_rows<<<(n + 255) / 256, 256, 0, s>>>((float *)out[0].data, 1.0f, n);
	return 0;
}
