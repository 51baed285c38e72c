// LayerNorm in three passes (mean, variance, normalize) with several
// launches, function-like macros, a namespace and a kernel under #if.
#include <cuda_runtime.h>
#include "kloop.h"

#define CUDA_TRY(expr)                                                                     \
	do {                                                                               \
		cudaError_t e_ = (expr);                                                   \
		if (e_ != cudaSuccess)                                                     \
			return (int)e_;                                                    \
	} while (0)
#define IDX(r, c, ld) ((r) * (ld) + (c))
#define ROWS_PER_BLOCK 4
#define EPS_SHIFT 5

namespace ln {

const int kThreads = 128;
const unsigned kSmemBytes = 4096;

__device__ float block_reduce(float v, float *smem)
{
	smem[threadIdx.x] = v;
	__syncthreads();
	for (int s = blockDim.x / 2; s > 0; s >>= 1) {
		if (threadIdx.x < s)
			smem[threadIdx.x] += smem[threadIdx.x + s];
		__syncthreads();
	}
	return smem[0];
}

__global__ void row_mean(const float *x, float *mean, int cols)
{
	extern __shared__ float smem[];
	float acc = 0.f;
	for (int c = threadIdx.x; c < cols; c += blockDim.x)
		acc += x[IDX(blockIdx.x, c, cols)];
	float t = block_reduce(acc, smem);
	if (threadIdx.x == 0)
		mean[blockIdx.x] = t / cols;
}

__global__ void row_var(const float *x, const float *mean, float *rstd, int cols)
{
	extern __shared__ float smem[];
	float acc = 0.f, m = mean[blockIdx.x];
	for (int c = threadIdx.x; c < cols; c += blockDim.x) {
		float d = x[IDX(blockIdx.x, c, cols)] - m;
		acc += d * d;
	}
	float t = block_reduce(acc, smem);
	if (threadIdx.x == 0)
		rstd[blockIdx.x] = rsqrtf(t / cols + 1e-5f);
}

#if ROWS_PER_BLOCK > 1
__global__ void normalize(const float *x, const float *mean, const float *rstd, float *y,
			  int rows, int cols)
{
	int r = blockIdx.x * ROWS_PER_BLOCK + threadIdx.y;
	if (r >= rows)
		return;
	for (int c = threadIdx.x; c < cols; c += blockDim.x)
		y[IDX(r, c, cols)] = (x[IDX(r, c, cols)] - mean[r]) * rstd[r];
}
#endif

} // namespace ln

static int layernorm(const float *x, float *y, float *work, int rows, int cols, cudaStream_t s)
{
	float *mean = work, *rstd = work + rows;
	ln::row_mean<<<rows, ln::kThreads, ln::kThreads * sizeof(float), s>>>(x, mean, cols);
	CUDA_TRY(cudaGetLastError());
	ln::row_var<<<rows, 128, 512, s>>>(x, mean, rstd, cols);
	CUDA_TRY(cudaGetLastError());
	dim3 block(32, ROWS_PER_BLOCK);
	ln::normalize<<<(rows + ROWS_PER_BLOCK - 1) / ROWS_PER_BLOCK, block>>>(x, mean, rstd, y, rows,
									      cols);
	return 0;
}

extern "C" int kl_run(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *stream)
{
	int rows = (int)in[0].shape[0], cols = (int)in[0].shape[1];
	float *work = nullptr;
	CUDA_TRY(cudaMallocAsync((void **)&work, 2 * rows * sizeof(float), (cudaStream_t)stream));
	int rc = layernorm((const float *)in[0].data, (float *)out[0].data, work, rows, cols,
			   (cudaStream_t)stream);
	CUDA_TRY(cudaFreeAsync(work, (cudaStream_t)stream));
	return rc;
}
