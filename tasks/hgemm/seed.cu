/*
 * hgemm/seed.cu - tensor-core seed: C = A B with f16 operands, fp32
 * accumulation and f16 output, on the tensor cores through WMMA
 * (nvcuda::wmma, 16x16x16 f16 fragments with float accumulators; sm_80+).
 *
 * Each block of 256 threads (8 warps, 2 x 4) computes a 128 x 128 tile of C;
 * each warp a 64 x 32 part of it (4 x 2 accumulator fragments); the tile
 * sizes are #defines a sweep may change, held together by static_asserts. The K loop
 * goes 32 at a time through two shared-memory stages filled with cp.async
 * (16-byte copies), so that the next tile of A and B is loaded while the
 * tensor cores work on the current one. Shared rows are padded by 8 elements
 * against bank conflicts. Edges: rows of A past M and columns of B past N, or
 * K past its end, are zero-filled (cp.async with a source size of 0) and the
 * stores are guarded, so any M works, and N and K need only be multiples of 8
 * (16-byte rows); other shapes are refused with kl_run's return value 5.
 * The epilogue stages each accumulator fragment through a per-warp float
 * scratch in shared memory and writes 8 f16 (16 bytes) per lane.
 *
 * Not done yet (the search's work): ldmatrix / mma.sync instead of WMMA, more
 * stages, swizzled instead of padded shared memory, a tile order for L2
 * reuse, split-K for skinny shapes, wgmma/TMA on sm_90a.
 */
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <mma.h>
#include <stdint.h>

#include "kloop.h"

using namespace nvcuda;

typedef __half elem;

#define BM 128       /* block tile rows (M) */
#define BN 128       /* block tile columns (N) */
#define BK 32        /* K per pipeline stage */
#define LDA (BK + 8) /* padded shared row of A: 80 bytes */
#define LDB (BN + 8) /* padded shared row of B: 272 bytes */
#define WM 64        /* warp tile rows */
#define WN 32        /* warp tile columns */
#define FM (WM / 16) /* accumulator fragments down */
#define FN (WN / 16) /* accumulator fragments across */
#define THREADS 256  /* 8 warps: 2 down x 4 across */

/* what the tiling needs of the constants above (a sweep may change them) */
static_assert((BM / WM) * (BN / WN) == THREADS / 32, "the warp tiles cover the block tile");
static_assert(BM % WM == 0 && BN % WN == 0 && WM % 16 == 0 && WN % 16 == 0 && BK % 16 == 0,
              "warp tiles of whole 16x16 fragments, K tiles of whole 16-deep steps");

__device__ __forceinline__ void cp_async16(void *dst, const void *src, int src_bytes)
{
	unsigned s = (unsigned)__cvta_generic_to_shared(dst);
	asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(src),
	             "r"(src_bytes));
}

__device__ __forceinline__ void cp_async_commit(void)
{
	asm volatile("cp.async.commit_group;\n" ::);
}

/* wait until at most one committed group is still in flight */
__device__ __forceinline__ void cp_async_wait1(void)
{
	asm volatile("cp.async.wait_group 1;\n" ::);
}

/* start copying the K tile at k0 into stage st: A[m0.., k0..] (BM x BK) and
 * B[k0.., n0..] (BK x BN), in 16-byte chunks spread over the threads */
__device__ __forceinline__ void load_tile(elem *sa, elem *sb, const elem *A, const elem *B, int M,
                                          int N, int K, int m0, int n0, int k0)
{
#pragma unroll
	for (int i = 0; i < (BM * BK / 8 + THREADS - 1) / THREADS; i++) {
		int c = threadIdx.x + i * THREADS;
		if (BM * BK / 8 % THREADS && c >= BM * BK / 8)
			break;
		int r = c / (BK / 8), k8 = (c % (BK / 8)) * 8;
		int gr = m0 + r, gk = k0 + k8;
		bool ok = gr < M && gk < K;
		cp_async16(sa + r * LDA + k8, ok ? A + (size_t)gr * K + gk : A, ok ? 16 : 0);
	}
#pragma unroll
	for (int i = 0; i < (BK * BN / 8 + THREADS - 1) / THREADS; i++) {
		int c = threadIdx.x + i * THREADS;
		if (BK * BN / 8 % THREADS && c >= BK * BN / 8)
			break;
		int r = c / (BN / 8), n8 = (c % (BN / 8)) * 8;
		int gk = k0 + r, gn = n0 + n8;
		bool ok = gk < K && gn < N;
		cp_async16(sb + r * LDB + n8, ok ? B + (size_t)gk * N + gn : B, ok ? 16 : 0);
	}
}

__global__ void __launch_bounds__(THREADS)
    gemm_wmma(const elem *__restrict__ A, const elem *__restrict__ B, elem *__restrict__ C, int M,
              int N, int K)
{
	alignas(128) __shared__ elem sa[2][BM * LDA];
	alignas(128) __shared__ elem sb[2][BK * LDB];
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

	int nk = (K + BK - 1) / BK;
	load_tile(sa[0], sb[0], A, B, M, N, K, m0, n0, 0);
	cp_async_commit();
	for (int kt = 0; kt < nk; kt++) {
		int st = kt & 1;
		if (kt + 1 < nk)
			load_tile(sa[st ^ 1], sb[st ^ 1], A, B, M, N, K, m0, n0, (kt + 1) * BK);
		cp_async_commit(); /* possibly empty: keeps the wait's count right */
		cp_async_wait1();  /* this thread's copies of tile kt landed */
		__syncthreads();   /* and everyone else's */
#pragma unroll
		for (int kk = 0; kk < BK; kk += 16) {
			wmma::fragment<wmma::matrix_a, 16, 16, 16, elem, wmma::row_major> fa[FM];
			wmma::fragment<wmma::matrix_b, 16, 16, 16, elem, wmma::row_major> fb[FN];
#pragma unroll
			for (int i = 0; i < FM; i++)
				wmma::load_matrix_sync(fa[i], sa[st] + (wm + i * 16) * LDA + kk,
				                       LDA);
#pragma unroll
			for (int j = 0; j < FN; j++)
				wmma::load_matrix_sync(fb[j], sb[st] + kk * LDB + wn + j * 16, LDB);
#pragma unroll
			for (int i = 0; i < FM; i++)
#pragma unroll
				for (int j = 0; j < FN; j++)
					wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
		}
		__syncthreads(); /* stage st is free for tile kt + 2 */
	}

	/* epilogue: each fragment through this warp's scratch, 8 outputs a lane */
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
					__half2 h[4];
				} o;
#pragma unroll
				for (int e = 0; e < 4; e++)
					o.h[e] = __floats2half2_rn(v[2 * e], v[2 * e + 1]);
				*(uint4 *)(C + (size_t)gr * N + gc) = o.u;
			}
			__syncwarp();
		}
}

extern "C" int kl_run(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *stream)
{
	if (n_in != 2 || n_out != 1)
		return 1;
	if (in[0].dtype != KL_F16 || in[1].dtype != KL_F16 || out[0].dtype != KL_F16)
		return 2;
	if (in[0].ndim != 2 || in[1].ndim != 2 || out[0].ndim != 2)
		return 3;
	int64_t M = in[0].shape[0], K = in[0].shape[1], N = in[1].shape[1];
	if (in[1].shape[0] != K || out[0].shape[0] != M || out[0].shape[1] != N)
		return 3;
	if (M == 0 || N == 0)
		return 0;
	if (M > INT32_MAX || N > INT32_MAX || K > INT32_MAX)
		return 4;
	/* 16-byte copies and stores: rows of A, B and C must start 16-byte aligned */
	if (N % 8 || K % 8 ||
	    ((uintptr_t)in[0].data | (uintptr_t)in[1].data | (uintptr_t)out[0].data) % 16)
		return 5;
	dim3 grid((unsigned)((N + BN - 1) / BN), (unsigned)((M + BM - 1) / BM));
	gemm_wmma<<<grid, THREADS, 0, (cudaStream_t)stream>>>(
	    (const elem *)in[0].data, (const elem *)in[1].data, (elem *)out[0].data, (int)M, (int)N,
	    (int)K);
	return cudaGetLastError() != cudaSuccess;
}
