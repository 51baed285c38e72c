// Half-precision GEMM on tensor cores: one warp per 16x16 output tile with
// nvcuda::wmma, plus an mma.sync variant through inline PTX.
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <mma.h>
#include "kloop.h"

using namespace nvcuda;

constexpr int WM = 16;
constexpr int WN = 16;
constexpr int WK = 16;
constexpr unsigned WARPS_PER_BLOCK = 4u;

__global__ void wmma_gemm(const half *a, const half *b, float *c, int M, int N, int K)
{
	int warp_m = (blockIdx.x * blockDim.x + threadIdx.x) / warpSize;
	int warp_n = blockIdx.y * blockDim.y + threadIdx.y;
	wmma::fragment<wmma::matrix_a, WM, WN, WK, half, wmma::row_major> fa;
	wmma::fragment<wmma::matrix_b, WM, WN, WK, half, wmma::col_major> fb;
	wmma::fragment<wmma::accumulator, WM, WN, WK, float> acc;
	wmma::fill_fragment(acc, 0.0f);
	for (int k = 0; k < K; k += WK) {
		int ar = warp_m * WM, bc = warp_n * WN;
		if (ar < M && bc < N) {
			wmma::load_matrix_sync(fa, a + ar * K + k, K);
			wmma::load_matrix_sync(fb, b + bc * K + k, K);
			wmma::mma_sync(acc, fa, fb, acc);
		}
	}
	int cr = warp_m * WM, cc = warp_n * WN;
	if (cr < M && cc < N)
		wmma::store_matrix_sync(c + cr * N + cc, acc, N, wmma::mem_row_major);
}

__device__ inline void mma_m16n8k16(float *d, const unsigned *a, const unsigned *b, const float *c)
{
	asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
		     "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};\n"
		     : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
		     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]),
		       "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));
}

__global__ void bias_half2(half2 *y, const __nv_bfloat16 *bias, int n2)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n2) {
		half2 b = __float2half2_rn(__bfloat162float(bias[i % 64]));
		y[i] = __hadd2(y[i], b);
	}
}

extern "C" int kl_run(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *stream)
{
	int M = (int)in[0].shape[0], K = (int)in[0].shape[1], N = (int)in[1].shape[0];
	dim3 block(128, 1);
	dim3 grid((M + (WM * 128 / 32) - 1) / (WM * 128 / 32), (N + WN - 1) / WN);
	wmma_gemm<<<grid, block, 0, (cudaStream_t)stream>>>((const half *)in[0].data,
							    (const half *)in[1].data,
							    (float *)out[0].data, M, N, K);
	return 0;
}
