/*
 * fp8_gemm/seed.cu - tensor-core seed: C = scale_a scale_b A B^T with e4m3
 * operands, fp32 accumulation and bf16 output, through WMMA on f16 fragments
 * (nvcuda::wmma 16x16x16, float accumulators; sm_70+). Every e4m3 value is
 * exact in f16 (e4m3's 3 mantissa bits and exponents 2^-9..2^8 fit in f16's
 * 10 bits and 2^-24..2^15), so the products are the fp8 products, exact,
 * summed in fp32: the task's arithmetic, at f16 tensor-core speed.
 *
 * Each block of 256 threads (8 warps, 2 x 4) computes a 128 x 128 tile of C;
 * each warp a 64 x 32 part (4 x 2 accumulator fragments). The K loop goes 32
 * at a time: each thread loads 16 bytes of A's tile and 16 of B's (16 e4m3
 * each) into registers while the tensor cores work on the tile in shared
 * memory, then converts them to f16 into it. A is row-major in shared
 * memory, B (held [N,K]) as WMMA's column-major matrix_b; rows padded by 8
 * halves against bank conflicts. Rows past M or N and K past its end are
 * zeros; K and N must be multiples of 16 and 8 (16-byte loads and stores),
 * else kl_run returns 5.
 *
 * Not done yet (the search's work): fp8 tensor cores themselves
 * (mma.sync.m16n8k32 e4m3 on sm_89+, wgmma on sm_90a), cp.async or TMA
 * pipelines with more stages, swizzled shared memory, a tile order for L2
 * reuse, split-K for skinny shapes.
 */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>
#include <mma.h>
#include <stdint.h>

#include "kloop.h"

using namespace nvcuda;

#define BM 128       /* block tile rows (M) */
#define BN 128       /* block tile columns (N) */
#define BK 32        /* K per step */
#define LDS (BK + 8) /* padded shared row, in halves: 80 bytes */
#define WM 64        /* warp tile rows */
#define WN 32        /* warp tile columns */
#define FM (WM / 16) /* accumulator fragments down */
#define FN (WN / 16) /* accumulator fragments across */
#define THREADS 256  /* 8 warps: 2 down x 4 across */
#define PER_A (BM * BK / 16 / THREADS) /* 16-byte loads of A's tile a thread */
#define PER_B (BN * BK / 16 / THREADS)

static_assert((BM / WM) * (BN / WN) == THREADS / 32, "the warp tiles cover the block tile");
static_assert(BM % WM == 0 && BN % WN == 0 && WM % 16 == 0 && WN % 16 == 0 && BK % 16 == 0,
              "warp tiles of whole 16x16 fragments, K tiles of whole 16-deep steps");
static_assert(PER_A >= 1 && PER_B >= 1 && BM * BK / 16 % THREADS == 0 &&
                  BN * BK / 16 % THREADS == 0,
              "the 16-byte loads of a tile spread evenly over the threads");

/* 16 e4m3 of row r from column k (zeros past the matrix) */
__device__ __forceinline__ uint4 fetch16(const uint8_t *P, int rows, int K, int r, int k)
{
	if (r < rows && k < K)
		return __ldg((const uint4 *)(P + (size_t)r * K + k));
	return make_uint4(0, 0, 0, 0);
}

/* this thread's part of the K tile at k0: A[m0.., k0..] and B[n0.., k0..] */
__device__ __forceinline__ void fetch_tile(uint4 *ra, uint4 *rb, const uint8_t *A,
                                           const uint8_t *B, int M, int N, int K, int m0, int n0,
                                           int k0)
{
#pragma unroll
	for (int i = 0; i < PER_A; i++) {
		int c = threadIdx.x + i * THREADS, r = c / (BK / 16), k16 = (c % (BK / 16)) * 16;
		ra[i] = fetch16(A, M, K, m0 + r, k0 + k16);
	}
#pragma unroll
	for (int i = 0; i < PER_B; i++) {
		int c = threadIdx.x + i * THREADS, r = c / (BK / 16), k16 = (c % (BK / 16)) * 16;
		rb[i] = fetch16(B, N, K, n0 + r, k0 + k16);
	}
}

/* 16 e4m3 as 16 halves at dst (32 bytes, 16-byte aligned) */
__device__ __forceinline__ void put16(__half *dst, uint4 v)
{
	const unsigned w[4] = {v.x, v.y, v.z, v.w};
	union {
		uint4 u[2];
		__half2_raw h[8];
	} o;
#pragma unroll
	for (int e = 0; e < 8; e++)
		o.h[e] = __nv_cvt_fp8x2_to_halfraw2(
		    (__nv_fp8x2_storage_t)(e & 1 ? w[e / 2] >> 16 : w[e / 2] & 0xffff), __NV_E4M3);
	((uint4 *)dst)[0] = o.u[0];
	((uint4 *)dst)[1] = o.u[1];
}

__device__ __forceinline__ void store_tile(__half *sa, __half *sb, const uint4 *ra,
                                           const uint4 *rb)
{
#pragma unroll
	for (int i = 0; i < PER_A; i++) {
		int c = threadIdx.x + i * THREADS, r = c / (BK / 16), k16 = (c % (BK / 16)) * 16;
		put16(sa + r * LDS + k16, ra[i]);
	}
#pragma unroll
	for (int i = 0; i < PER_B; i++) {
		int c = threadIdx.x + i * THREADS, r = c / (BK / 16), k16 = (c % (BK / 16)) * 16;
		put16(sb + r * LDS + k16, rb[i]);
	}
}

__global__ void __launch_bounds__(THREADS)
    gemm_fp8_wmma(const uint8_t *__restrict__ A, const uint8_t *__restrict__ B,
                  const float *__restrict__ scaleA, const float *__restrict__ scaleB,
                  __nv_bfloat16 *__restrict__ C, int M, int N, int K)
{
	alignas(128) __shared__ __half sa[BM * LDS];
	alignas(128) __shared__ __half sb[BN * LDS];
	alignas(128) __shared__ float scratch[THREADS / 32][16 * 16];

	int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
	int wm = (warp / (BN / WN)) * WM, wn = (warp % (BN / WN)) * WN;
	int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;

	wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[FM][FN];
#pragma unroll
	for (int i = 0; i < FM; i++)
#pragma unroll
		for (int j = 0; j < FN; j++)
			wmma::fill_fragment(acc[i][j], 0.0f);

	uint4 ra[PER_A], rb[PER_B];
	int nk = (K + BK - 1) / BK;
	fetch_tile(ra, rb, A, B, M, N, K, m0, n0, 0);
	for (int kt = 0; kt < nk; kt++) {
		store_tile(sa, sb, ra, rb);
		__syncthreads();
		if (kt + 1 < nk) /* the next tile's loads in flight under the mma */
			fetch_tile(ra, rb, A, B, M, N, K, m0, n0, (kt + 1) * BK);
#pragma unroll
		for (int kk = 0; kk < BK; kk += 16) {
			wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa[FM];
			wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> fb[FN];
#pragma unroll
			for (int i = 0; i < FM; i++)
				wmma::load_matrix_sync(fa[i], sa + (wm + i * 16) * LDS + kk, LDS);
#pragma unroll
			for (int j = 0; j < FN; j++)
				wmma::load_matrix_sync(fb[j], sb + (wn + j * 16) * LDS + kk, LDS);
#pragma unroll
			for (int i = 0; i < FM; i++)
#pragma unroll
				for (int j = 0; j < FN; j++)
					wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
		}
		__syncthreads(); /* the tile is free for the next one */
	}

	/* epilogue: each fragment through this warp's scratch, scaled, 8
	 * outputs a lane */
	float scale = *scaleA * *scaleB;
	float *s = scratch[warp];
	int r = lane >> 1, c8 = (lane & 1) * 8;
#pragma unroll
	for (int i = 0; i < FM; i++)
#pragma unroll
		for (int j = 0; j < FN; j++) {
			wmma::store_matrix_sync(s, acc[i][j], 16, wmma::mem_row_major);
			__syncwarp();
			int gr = m0 + wm + i * 16 + r, gc = n0 + wn + j * 16 + c8;
			if (gr < M && gc < N) {
				const float *v = s + r * 16 + c8;
				union {
					uint4 u;
					__nv_bfloat162 h[4];
				} o;
#pragma unroll
				for (int e = 0; e < 4; e++)
					o.h[e] = __floats2bfloat162_rn(v[2 * e] * scale,
					                               v[2 * e + 1] * scale);
				*(uint4 *)(C + (size_t)gr * N + gc) = o.u;
			}
			__syncwarp();
		}
}

extern "C" int kl_run(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *stream)
{
	if (n_in != 4 || n_out != 1)
		return 1;
	if (in[0].dtype != KL_E4M3 || in[1].dtype != KL_E4M3 || in[2].dtype != KL_F32 ||
	    in[3].dtype != KL_F32 || out[0].dtype != KL_BF16)
		return 2;
	if (in[0].ndim != 2 || in[1].ndim != 2 || out[0].ndim != 2 || kl_numel(&in[2]) != 1 ||
	    kl_numel(&in[3]) != 1)
		return 3;
	int64_t M = in[0].shape[0], K = in[0].shape[1], N = in[1].shape[0];
	if (in[1].shape[1] != K || out[0].shape[0] != M || out[0].shape[1] != N)
		return 3;
	if (M == 0 || N == 0)
		return 0;
	if (M > INT32_MAX || N > INT32_MAX || K > INT32_MAX)
		return 4;
	/* 16-byte loads and stores: rows of A, B and C must start 16-byte aligned */
	if (K % 16 || N % 8 ||
	    ((uintptr_t)in[0].data | (uintptr_t)in[1].data | (uintptr_t)out[0].data) % 16)
		return 5;
	dim3 grid((unsigned)((N + BN - 1) / BN), (unsigned)((M + BM - 1) / BM));
	gemm_fp8_wmma<<<grid, THREADS, 0, (cudaStream_t)stream>>>(
	    (const uint8_t *)in[0].data, (const uint8_t *)in[1].data, (const float *)in[2].data,
	    (const float *)in[3].data, (__nv_bfloat16 *)out[0].data, (int)M, (int)N, (int)K);
	return cudaGetLastError() != cudaSuccess;
}
