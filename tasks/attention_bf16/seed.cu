/*
 * attention_bf16/seed.cu - FlashAttention-style cuda seed, on the CUDA cores
 * (no tensor cores: fp32 FMAs throughout; moving Q K^T and P V onto WMMA or
 * mma.sync is the search's work).
 *
 * Each block of 256 threads takes 64 query rows of one (batch, head); 4
 * threads share a query row, each holding a quarter of its head dimension
 * (q, pre-scaled by log2(e)/sqrt(head_dim), and the output accumulator o, in
 * float registers). The keys and values go through shared memory 32 rows at
 * a time (converted to float); for each tile a thread computes its partial
 * dot products, two shuffles complete the 32 scores of its row, and the
 * online softmax (running max m and sum l, exp2) rescales o and adds the
 * tile's p_j v_j. So the seq x seq score matrix never exists in memory. When
 * CAUSAL, keys after the row are masked and tiles past the block's last row
 * skipped. head_dim 64 or 128 and seq a multiple of 64 (else kl_run returns 5).
 *
 * Not done yet: tensor cores, K/V in bf16 with cp.async double buffering,
 * larger query tiles per thread, skipping masked work inside a causal tile.
 */
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "kloop.h"

#define CAUSAL 0
#define BQ 64              /* query rows per block */
#define BKV 32             /* key/value rows per shared tile */
#define TPR 4              /* threads per query row */
#define THREADS (BQ * TPR) /* 256 */

/* what the code needs of the constants above (a sweep may change them) */
static_assert(TPR == 4, "a row's threads: the two shuffles and the 16 g + 4 t dimensions");
static_assert(BQ % BKV == 0, "a causal block's last key tile ends at its last row");

union bf16x4 {
	uint2 u;
	__nv_bfloat162 h[2];
};

union bf16x8 {
	uint4 u;
	__nv_bfloat162 h[4];
};

/* thread t of a row holds dimensions 16 g + 4 t + {0,1,2,3}, g < HD / 16 */
template <int HD>
__global__ void __launch_bounds__(THREADS)
    flash_fwd(const __nv_bfloat16 *__restrict__ Q, const __nv_bfloat16 *__restrict__ K,
              const __nv_bfloat16 *__restrict__ V, __nv_bfloat16 *__restrict__ O, int seq,
              float scale_log2)
{
	constexpr int G = HD / 16;
	alignas(16) __shared__ float ks[BKV][HD];
	alignas(16) __shared__ float vs[BKV][HD];
	int r = threadIdx.x / TPR, t = threadIdx.x % TPR;
	size_t base = ((size_t)blockIdx.z * gridDim.y + blockIdx.y) * (size_t)seq * HD;
	int q0 = blockIdx.x * BQ, i = q0 + r;

	float4 q[G], o[G];
	const __nv_bfloat16 *qp = Q + base + (size_t)i * HD + 4 * t;
#pragma unroll
	for (int g = 0; g < G; g++) {
		union bf16x4 v;
		v.u = *(const uint2 *)(qp + 16 * g);
		float2 a = __bfloat1622float2(v.h[0]), b = __bfloat1622float2(v.h[1]);
		q[g] = make_float4(a.x * scale_log2, a.y * scale_log2, b.x * scale_log2,
		                   b.y * scale_log2);
		o[g] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
	}
	float m = -INFINITY, l = 0.0f;

	int kv_end = CAUSAL ? min(seq, q0 + BQ) : seq;
	for (int j0 = 0; j0 < kv_end; j0 += BKV) {
		__syncthreads(); /* the previous tile is consumed */
		for (int c = threadIdx.x; c < BKV * HD / 8; c += THREADS) {
			int j = c / (HD / 8), d8 = (c % (HD / 8)) * 8;
			size_t at = base + (size_t)(j0 + j) * HD + d8;
			union bf16x8 kr, vr;
			kr.u = *(const uint4 *)(K + at);
			vr.u = *(const uint4 *)(V + at);
#pragma unroll
			for (int e = 0; e < 4; e++) {
				float2 kf = __bfloat1622float2(kr.h[e]),
				       vf = __bfloat1622float2(vr.h[e]);
				ks[j][d8 + 2 * e] = kf.x;
				ks[j][d8 + 2 * e + 1] = kf.y;
				vs[j][d8 + 2 * e] = vf.x;
				vs[j][d8 + 2 * e + 1] = vf.y;
			}
		}
		__syncthreads();

		float s[BKV], mt = -INFINITY;
#pragma unroll
		for (int j = 0; j < BKV; j++) {
			float d = 0.0f;
#pragma unroll
			for (int g = 0; g < G; g++) {
				float4 k = *(const float4 *)&ks[j][16 * g + 4 * t];
				d += q[g].x * k.x + q[g].y * k.y + q[g].z * k.z + q[g].w * k.w;
			}
			/* the row's 4 threads are adjacent lanes: complete the dot */
			d += __shfl_xor_sync(0xffffffffu, d, 1);
			d += __shfl_xor_sync(0xffffffffu, d, 2);
			if (CAUSAL && j0 + j > i)
				d = -INFINITY;
			s[j] = d;
			mt = fmaxf(mt, d);
		}
		/* the first tile holds key 0 <= i, so mn is finite from then on */
		float mn = fmaxf(m, mt), alpha = exp2f(m - mn);
		l *= alpha;
#pragma unroll
		for (int g = 0; g < G; g++) {
			o[g].x *= alpha;
			o[g].y *= alpha;
			o[g].z *= alpha;
			o[g].w *= alpha;
		}
#pragma unroll
		for (int j = 0; j < BKV; j++) {
			float p = exp2f(s[j] - mn);
			l += p;
#pragma unroll
			for (int g = 0; g < G; g++) {
				float4 v = *(const float4 *)&vs[j][16 * g + 4 * t];
				o[g].x += p * v.x;
				o[g].y += p * v.y;
				o[g].z += p * v.z;
				o[g].w += p * v.w;
			}
		}
		m = mn;
	}

	float inv = 1.0f / l;
	__nv_bfloat16 *op = O + base + (size_t)i * HD + 4 * t;
#pragma unroll
	for (int g = 0; g < G; g++) {
		union bf16x4 v;
		v.h[0] = __floats2bfloat162_rn(o[g].x * inv, o[g].y * inv);
		v.h[1] = __floats2bfloat162_rn(o[g].z * inv, o[g].w * inv);
		*(uint2 *)(op + 16 * g) = v.u;
	}
}

extern "C" int kl_run(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *stream)
{
	if (n_in != 3 || n_out != 1)
		return 1;
	for (int i = 0; i < 3; i++)
		if (in[i].dtype != KL_BF16 || in[i].ndim != 4)
			return 2;
	if (out[0].dtype != KL_BF16 || out[0].ndim != 4)
		return 2;
	for (int i = 0; i < 4; i++)
		if (in[1].shape[i] != in[0].shape[i] || in[2].shape[i] != in[0].shape[i] ||
		    out[0].shape[i] != in[0].shape[i])
			return 3;
	int64_t batch = in[0].shape[0], heads = in[0].shape[1], seq = in[0].shape[2],
	        hd = in[0].shape[3];
	if (batch == 0 || heads == 0 || seq == 0)
		return 0;
	if ((hd != 64 && hd != 128) || seq % BQ || seq > INT32_MAX || heads > 65535 ||
	    batch > 65535 ||
	    ((uintptr_t)in[0].data | (uintptr_t)in[1].data | (uintptr_t)in[2].data |
	     (uintptr_t)out[0].data) %
	        16)
		return 5;
	dim3 grid((unsigned)(seq / BQ), (unsigned)heads, (unsigned)batch);
	float scale_log2 = 1.4426950408889634f / sqrtf((float)hd);
	const __nv_bfloat16 *q = (const __nv_bfloat16 *)in[0].data,
	                    *k = (const __nv_bfloat16 *)in[1].data,
	                    *v = (const __nv_bfloat16 *)in[2].data;
	__nv_bfloat16 *o = (__nv_bfloat16 *)out[0].data;
	if (hd == 64)
		flash_fwd<64>
		    <<<grid, THREADS, 0, (cudaStream_t)stream>>>(q, k, v, o, (int)seq, scale_log2);
	else
		flash_fwd<128>
		    <<<grid, THREADS, 0, (cudaStream_t)stream>>>(q, k, v, o, (int)seq, scale_log2);
	return cudaGetLastError() != cudaSuccess;
}
