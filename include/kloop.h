/*
 * kloop.h - the candidate ABI.  Every candidate kernel (and every reference
 * written as a kernel) includes this header and defines kl_run() with C
 * linkage.  Tensors are contiguous and row-major; inputs are read-only,
 * outputs are preallocated by kloop; `stream` is the cudaStream_t to launch
 * on for the cuda backend and NULL for the host backend.  kl_run returns 0
 * on success or a non-zero error code of the candidate's choosing.
 */
#ifndef KLOOP_H
#define KLOOP_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* KL_E4M3: fp8 e4m3fn (PyTorch's float8_e4m3fn, CUDA's __nv_fp8_e4m3): one
 * byte, 4 exponent bits (bias 7), 3 mantissa bits, finite to +-448, NaN
 * 0x7f/0xff, no infinity */
typedef enum { KL_F32, KL_F16, KL_BF16, KL_F64, KL_I32, KL_I64, KL_I8, KL_U8, KL_E4M3 } kl_dtype;

typedef struct {
	void *data;       /* first element; host or device memory per backend */
	kl_dtype dtype;   /* element type */
	int ndim;         /* number of used entries in shape[] (0..8) */
	int64_t shape[8]; /* extents, outermost first */
} kl_tensor;

/* defined by every candidate, with C linkage */
int kl_run(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *stream);

/*
 * Optional, read by kloop's runner after each call where the candidate
 * defines them (kloop_torch.h's kl_run does): kl_run_error, the candidate's
 * words for a non-zero return (NUL-terminated, KL_RUN_ERROR_MAX bytes),
 * which the verdict quotes; kl_run_copied, a bit per output (1u << k) that
 * the last call filled by copying a result of its own into kloop's buffer,
 * which the verdict names.
 */
#define KL_RUN_ERROR_MAX 320
extern char kl_run_error[KL_RUN_ERROR_MAX];
extern uint32_t kl_run_copied;

/* number of elements of a tensor */
static inline int64_t kl_numel(const kl_tensor *t)
{
	int64_t n = 1;
	for (int i = 0; i < t->ndim; i++)
		n *= t->shape[i];
	return n;
}

/* IEEE half and bfloat16 conversions for host code (round to nearest even) */
static inline float kl_f16_to_f32(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
	if (exp == 0x1f) {
		bits = sign | 0x7f800000u | (man << 13);
	} else if (exp == 0) {
		if (man == 0) {
			bits = sign;
		} else {
			int e = -1;
			do {
				e++;
				man <<= 1;
			} while (!(man & 0x400));
			bits = sign | ((uint32_t)(127 - 15 - e) << 23) | ((man & 0x3ff) << 13);
		}
	} else {
		bits = sign | ((exp + 112) << 23) | (man << 13);
	}
	union {
		uint32_t u;
		float f;
	} v;
	v.u = bits;
	return v.f;
}

static inline uint16_t kl_f32_to_f16(float f)
{
	union {
		float f;
		uint32_t u;
	} v;
	v.f = f;
	uint32_t x = v.u, sign = (x >> 16) & 0x8000;
	int32_t exp = (int32_t)((x >> 23) & 0xff) - 127 + 15;
	uint32_t man = x & 0x7fffff;
	if (((x >> 23) & 0xff) == 0xff)
		return (uint16_t)(sign | 0x7c00 | (man ? 0x200 : 0));
	if (exp >= 0x1f)
		return (uint16_t)(sign | 0x7c00);
	if (exp <= 0) {
		if (exp < -10)
			return (uint16_t)sign;
		man |= 0x800000;
		uint32_t shift = (uint32_t)(14 - exp);
		uint32_t half = man >> shift, rem = man & ((1u << shift) - 1),
		         mid = 1u << (shift - 1);
		if (rem > mid || (rem == mid && (half & 1)))
			half++;
		return (uint16_t)(sign | half);
	}
	uint32_t half = sign | ((uint32_t)exp << 10) | (man >> 13), rem = man & 0x1fff;
	if (rem > 0x1000 || (rem == 0x1000 && (half & 1)))
		half++;
	return (uint16_t)half;
}

static inline float kl_bf16_to_f32(uint16_t b)
{
	union {
		uint32_t u;
		float f;
	} v;
	v.u = (uint32_t)b << 16;
	return v.f;
}

static inline uint16_t kl_f32_to_bf16(float f)
{
	union {
		float f;
		uint32_t u;
	} v;
	v.f = f;
	if ((v.u & 0x7fffffffu) > 0x7f800000u)
		return (uint16_t)((v.u >> 16) | 0x40);
	return (uint16_t)((v.u + 0x7fffu + ((v.u >> 16) & 1)) >> 16);
}

/* fp8 e4m3fn conversions for host code: exact to float; from float to
 * nearest even, saturating to +-448 (as CUDA's __NV_SATFINITE does), NaN to
 * NaN */
static inline float kl_e4m3_to_f32(uint8_t b)
{
	uint32_t sign = (uint32_t)(b & 0x80) << 24, e = (b >> 3) & 0xf, m = b & 7;
	union {
		uint32_t u;
		float f;
	} v;
	if (e == 0xf && m == 7) {
		v.u = sign | 0x7fc00000u;
	} else if (e == 0) {
		v.f = (float)m * (1.0f / 512);
		v.u |= sign;
	} else {
		v.u = sign | ((e - 7 + 127) << 23) | (m << 20);
	}
	return v.f;
}

static inline uint8_t kl_f32_to_e4m3(float f)
{
	union {
		float f;
		uint32_t u;
	} v;
	v.f = f;
	uint8_t sign = (uint8_t)((v.u >> 24) & 0x80);
	uint32_t a = v.u & 0x7fffffffu;
	if (a > 0x7f800000u)
		return (uint8_t)(sign | 0x7f);
	if (a >= 0x43e00000u) /* 448 and beyond, infinity too */
		return (uint8_t)(sign | 0x7e);
	int32_t exp = (int32_t)(a >> 23) - 127;
	if (exp < -6) { /* a subnormal of 2^-9 steps (8 of them: the least normal) */
		v.u = a;
		float q = v.f * 512;
		uint32_t i = (uint32_t)q;
		float r = q - (float)i;
		if (r > 0.5f || (r == 0.5f && (i & 1)))
			i++;
		return (uint8_t)(sign | i);
	}
	uint32_t man = a & 0x7fffff, q = ((uint32_t)(exp + 7) << 3) | (man >> 20),
	         rem = man & 0xfffff;
	if (rem > 0x80000 || (rem == 0x80000 && (q & 1)))
		q++;
	return (uint8_t)(sign | (q > 0x7e ? 0x7e : q));
}

#ifdef __cplusplus
}
#endif

#endif
