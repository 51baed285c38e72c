/*
 * emu.h - a CPU emulation of the CUDA built-ins the bundled tasks' CUDA
 * seeds use, so that their indexing, tiling, edge handling, masking and
 * reductions can be checked on a machine without a GPU (tests/cuda_emu/run.sh).
 * Every CUDA thread of a block is a std::thread; __syncthreads and __syncwarp
 * are barriers; __shfl_xor_sync exchanges through a per-warp slot array;
 * __shared__ variables are function statics (one block runs at a time);
 * WMMA fragments hold the whole 16x16 tile in every lane (the operations are
 * warp-collective, so each lane computing all of it is the same result);
 * cp.async copies at once (zero-filling past src_bytes). What it cannot
 * check: timing, real asynchrony of cp.async, the hardware's fragment
 * layouts, alignment faults.
 */
#ifndef EMU_H
#define EMU_H

#include <barrier>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <thread>
#include <type_traits>
#include <vector>

#include "kloop.h"

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))
#define __shared__ static

struct dim3 {
	unsigned x, y, z;
	dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c)
	{
	}
};
struct alignas(16) uint4 {
	unsigned x, y, z, w;
};
struct alignas(8) uint2 {
	unsigned x, y;
};
struct alignas(8) float2 {
	float x, y;
};
struct alignas(16) float4 {
	float x, y, z, w;
};
static inline float4 make_float4(float a, float b, float c, float d)
{
	return float4{a, b, c, d};
}
static inline uint4 make_uint4(unsigned a, unsigned b, unsigned c, unsigned d)
{
	return uint4{a, b, c, d};
}
template <typename T> static inline T __ldg(const T *p)
{
	return *p;
}
using std::max;
using std::min;
static inline float rsqrtf(float x)
{
	return 1.0f / std::sqrt(x);
}

struct emu_block;
extern thread_local dim3 threadIdx, blockIdx, blockDim, gridDim;
extern thread_local emu_block *emu_blk;

struct emu_block {
	std::barrier<> all;
	std::vector<std::unique_ptr<std::barrier<>>> warps;
	std::vector<double> slots; /* one per thread, for shuffles */
	explicit emu_block(unsigned n) : all((std::ptrdiff_t)n), slots(n)
	{
		for (unsigned w = 0; w < (n + 31) / 32; w++)
			warps.emplace_back(new std::barrier<>(std::min(32u, n - 32 * w)));
	}
};

static inline unsigned emu_tid()
{
	return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}
static inline void __syncthreads()
{
	emu_blk->all.arrive_and_wait();
}
static inline void __syncwarp(unsigned = 0xffffffffu)
{
	emu_blk->warps[emu_tid() / 32]->arrive_and_wait();
}
template <typename T> static inline T __shfl_xor_sync(unsigned, T v, int m)
{
	unsigned t = emu_tid();
	emu_blk->slots[t] = (double)v;
	__syncwarp();
	T r = (T)emu_blk->slots[(t & ~31u) | ((t & 31u) ^ (unsigned)m)];
	__syncwarp();
	return r;
}

/* run f as every thread of every block of the grid, one block at a time */
static inline void emu_launch(dim3 g, dim3 b, std::function<void()> f)
{
	unsigned n = b.x * b.y * b.z;
	for (unsigned z = 0; z < g.z; z++)
		for (unsigned y = 0; y < g.y; y++)
			for (unsigned x = 0; x < g.x; x++) {
				emu_block blk(n);
				std::vector<std::thread> ts;
				for (unsigned t = 0; t < n; t++)
					ts.emplace_back([&, t] {
						blockIdx = dim3(x, y, z);
						gridDim = g;
						blockDim = b;
						threadIdx =
						    dim3(t % b.x, t / b.x % b.y, t / (b.x * b.y));
						emu_blk = &blk;
						f();
					});
				for (auto &th : ts)
					th.join();
			}
}
#define EMU_DEFINE_GLOBALS                                                                         \
	thread_local dim3 threadIdx, blockIdx, blockDim, gridDim;                                  \
	thread_local emu_block *emu_blk;

/* cuda runtime stand-ins */
typedef void *cudaStream_t;
typedef int cudaError_t;
#define cudaSuccess 0
#define cudaFuncAttributeMaxDynamicSharedMemorySize 0
static inline cudaError_t cudaGetLastError()
{
	return 0;
}
template <typename F> static inline cudaError_t cudaFuncSetAttribute(F, int, int)
{
	return 0;
}

/* bf16 and f16 as their bits, converted as kloop.h does */
struct __nv_bfloat16 {
	uint16_t x;
};
struct __nv_bfloat162 {
	__nv_bfloat16 x, y;
};
struct __half {
	uint16_t x;
};
struct __half2 {
	__half x, y;
};
static inline float __bfloat162float(__nv_bfloat16 h)
{
	return kl_bf16_to_f32(h.x);
}
static inline __nv_bfloat16 __float2bfloat16_rn(float f)
{
	return __nv_bfloat16{kl_f32_to_bf16(f)};
}
static inline float2 __bfloat1622float2(__nv_bfloat162 h)
{
	return float2{__bfloat162float(h.x), __bfloat162float(h.y)};
}
static inline __nv_bfloat162 __floats2bfloat162_rn(float a, float b)
{
	return __nv_bfloat162{__float2bfloat16_rn(a), __float2bfloat16_rn(b)};
}
static inline float __half2float(__half h)
{
	return kl_f16_to_f32(h.x);
}
static inline __half2 __floats2half2_rn(float a, float b)
{
	return __half2{__half{kl_f32_to_f16(a)}, __half{kl_f32_to_f16(b)}};
}
/* fp8 e4m3 as its bits, converted as kloop.h does */
typedef uint8_t __nv_fp8_storage_t;
typedef uint16_t __nv_fp8x2_storage_t;
struct __half2_raw {
	unsigned short x, y;
};
enum __nv_fp8_interpretation_t { __NV_E4M3, __NV_E5M2 };
static inline __half2_raw __nv_cvt_fp8x2_to_halfraw2(__nv_fp8x2_storage_t v,
                                                     __nv_fp8_interpretation_t)
{
	return __half2_raw{kl_f32_to_f16(kl_e4m3_to_f32((uint8_t)(v & 0xff))),
	                   kl_f32_to_f16(kl_e4m3_to_f32((uint8_t)(v >> 8)))};
}
static inline float emu_float(float v)
{
	return v;
}
static inline float emu_float(__nv_bfloat16 v)
{
	return __bfloat162float(v);
}
static inline float emu_float(__half v)
{
	return __half2float(v);
}

/* cp.async: the copy at once, zero-filled past src_bytes */
static inline void emu_cp_async(void *dst, const void *src, int src_bytes)
{
	memset(dst, 0, 16);
	memcpy(dst, src, (size_t)src_bytes);
}
static inline unsigned __cvta_generic_to_shared(const void *)
{
	return 0;
}

/* WMMA, 16x16x16: row- or column-major operands, row-major memory */
namespace nvcuda
{
namespace wmma
{
struct matrix_a {
};
struct matrix_b {
};
struct accumulator {
};
struct row_major {
};
struct col_major {
};
enum layout_t { mem_row_major };
template <typename Use, int M, int N, int K, typename T, typename L = void> struct fragment {
	float x[16 * 16];
};
template <typename F> static inline void fill_fragment(F &f, float v)
{
	for (float &e : f.x)
		e = v;
}
/* the fragment holds the tile row-major whatever the memory's layout */
template <typename Use, typename T, typename L>
static inline void load_matrix_sync(fragment<Use, 16, 16, 16, T, L> &f, const T *p, unsigned ldm)
{
	for (int r = 0; r < 16; r++)
		for (int c = 0; c < 16; c++)
			f.x[r * 16 + c] = emu_float(
			    std::is_same<L, col_major>::value ? p[c * ldm + r] : p[r * ldm + c]);
}
template <typename T, typename LA, typename LB>
static inline void mma_sync(fragment<accumulator, 16, 16, 16, float> &d,
                            const fragment<matrix_a, 16, 16, 16, T, LA> &a,
                            const fragment<matrix_b, 16, 16, 16, T, LB> &b,
                            const fragment<accumulator, 16, 16, 16, float> &c)
{
	float t[256];
	for (int r = 0; r < 16; r++)
		for (int n = 0; n < 16; n++) {
			float s = c.x[r * 16 + n];
			for (int k = 0; k < 16; k++)
				s += a.x[r * 16 + k] * b.x[k * 16 + n];
			t[r * 16 + n] = s;
		}
	memcpy(d.x, t, sizeof t);
}
static inline void store_matrix_sync(float *p, const fragment<accumulator, 16, 16, 16, float> &f,
                                     unsigned ldm, layout_t)
{
	for (int r = 0; r < 16; r++)
		for (int c = 0; c < 16; c++)
			p[r * ldm + c] = f.x[r * 16 + c];
}
} // namespace wmma
} // namespace nvcuda

#endif
