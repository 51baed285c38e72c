/*
 * compare.c - the correctness verdict for one output tensor: elementwise
 * allclose, relative L2 error and mismatch count, computed in double.
 */
#include "compare.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/*
 * The loop, once per element type so that the element read is inlined: the
 * outputs of a GPU task are tens of millions of elements per trial.
 */
#define COMPARE_LOOP(NAME, T, GET)                                                                 \
	static void NAME(const T *out, const T *ref, int64_t n, const struct task_tol *tol,        \
	                 struct compare_report *r, double *pNum, double *pDen, int *pNan)          \
	{                                                                                          \
		double num = 0, den = 0, atol = tol->atol, rtol = tol->rtol;                       \
		double maxAbs = 0, maxRel = 0, frac = 0;                                           \
		for (int64_t i = 0; i < n; i++) {                                                  \
			double a = GET(out[i]), b = GET(ref[i]), diff = fabs(a - b);               \
			double lim = atol + rtol * fabs(b);                                        \
			if (diff <= lim && isfinite(b)) {                                          \
				if (diff > frac * lim)                                             \
					frac = lim > 0 ? diff / lim : frac;                        \
				num += diff * diff;                                                \
				den += b * b;                                                      \
				maxAbs = diff > maxAbs ? diff : maxAbs;                            \
				if (diff > maxRel * fabs(b) && b != 0)                             \
					maxRel = diff / fabs(b);                                   \
				continue;                                                          \
			}                                                                          \
			/* the rare path: a mismatch, a NaN or an infinity */                      \
			int bad;                                                                   \
			if (isnan(b)) {                                                            \
				bad = 1;                                                           \
				r->nRefNaN++;                                                      \
				*pNan = 1;                                                         \
				frac = INFINITY;                                                   \
			} else if (!isfinite(a) || !isfinite(b)) {                                 \
				bad = a != b;                                                      \
				if (bad && isfinite(b))                                            \
					r->nNonFinite++;                                           \
				if (bad)                                                           \
					*pNan = 1;                                                 \
				if (bad)                                                           \
					frac = INFINITY;                                           \
			} else {                                                                   \
				bad = 1;                                                           \
				if (diff > frac * lim)                                             \
					frac = lim > 0 ? diff / lim : INFINITY;                    \
				num += diff * diff;                                                \
				den += b * b;                                                      \
				maxAbs = diff > maxAbs ? diff : maxAbs;                            \
				if (b != 0 && diff / fabs(b) > maxRel)                             \
					maxRel = diff / fabs(b);                                   \
			}                                                                          \
			if (bad) {                                                                 \
				if (r->firstBad < 0) {                                             \
					r->firstBad = i;                                           \
					r->firstExpected = b;                                      \
					r->firstActual = a;                                        \
				}                                                                  \
				r->nMismatch++;                                                    \
			}                                                                          \
		}                                                                                  \
		r->maxAbs = maxAbs;                                                                \
		r->maxRel = maxRel;                                                                \
		r->tolFrac = frac;                                                                 \
		*pNum = num;                                                                       \
		*pDen = den;                                                                       \
	}

#define AS_DOUBLE(x) ((double)(x))
COMPARE_LOOP(cmp_f32, float, AS_DOUBLE)
COMPARE_LOOP(cmp_f64, double, AS_DOUBLE)
COMPARE_LOOP(cmp_f16, uint16_t, (double)kl_f16_to_f32)
COMPARE_LOOP(cmp_bf16, uint16_t, (double)kl_bf16_to_f32)
COMPARE_LOOP(cmp_i32, int32_t, AS_DOUBLE)
COMPARE_LOOP(cmp_i64, int64_t, AS_DOUBLE)
COMPARE_LOOP(cmp_i8, int8_t, AS_DOUBLE)
COMPARE_LOOP(cmp_u8, uint8_t, AS_DOUBLE)
COMPARE_LOOP(cmp_e4m3, uint8_t, (double)kl_e4m3_to_f32)

void compare_buffers(const void *out, const void *ref, kl_dtype d, int64_t n,
                     const struct task_tol *tol, struct compare_report *r)
{
	memset(r, 0, sizeof *r);
	r->n = n;
	r->firstBad = -1;
	double num = 0, den = 0;
	int nanSeen = 0;
	switch (d) {
	case KL_F32:
		cmp_f32(out, ref, n, tol, r, &num, &den, &nanSeen);
		break;
	case KL_F64:
		cmp_f64(out, ref, n, tol, r, &num, &den, &nanSeen);
		break;
	case KL_F16:
		cmp_f16(out, ref, n, tol, r, &num, &den, &nanSeen);
		break;
	case KL_BF16:
		cmp_bf16(out, ref, n, tol, r, &num, &den, &nanSeen);
		break;
	case KL_I32:
		cmp_i32(out, ref, n, tol, r, &num, &den, &nanSeen);
		break;
	case KL_I64:
		cmp_i64(out, ref, n, tol, r, &num, &den, &nanSeen);
		break;
	case KL_I8:
		cmp_i8(out, ref, n, tol, r, &num, &den, &nanSeen);
		break;
	case KL_U8:
		cmp_u8(out, ref, n, tol, r, &num, &den, &nanSeen);
		break;
	case KL_E4M3:
		cmp_e4m3(out, ref, n, tol, r, &num, &den, &nanSeen);
		break;
	}
	if (nanSeen)
		r->relL2 = INFINITY;
	else if (den > 0)
		r->relL2 = sqrt(num / den);
	else
		r->relL2 = num > 0 ? INFINITY : 0;
	r->pass = r->nMismatch == 0 && r->relL2 <= tol->rel_l2;
}

void compare_diff(const void *x, const void *y, int64_t n, int es, int64_t *pCount, int64_t *pFirst)
{
	const char *p = x, *q = y;
	*pCount = 0;
	*pFirst = -1;
	if (!memcmp(p, q, (size_t)n * (size_t)es))
		return;
	for (int64_t i = 0; i < n; i++)
		if (memcmp(p + i * es, q + i * es, (size_t)es)) {
			if (*pFirst < 0)
				*pFirst = i;
			(*pCount)++;
		}
}

static double round_to(double v, kl_dtype d)
{
	switch (d) {
	case KL_F32:
		return (float)v;
	case KL_F16:
		return kl_f16_to_f32(kl_f32_to_f16((float)v));
	case KL_BF16:
		return kl_bf16_to_f32(kl_f32_to_bf16((float)v));
	case KL_E4M3:
		return kl_e4m3_to_f32(kl_f32_to_e4m3((float)v));
	default:
		return v;
	}
}

void compare_error64(const void *out, kl_dtype d, const double *ref, int64_t n, double a[CMP_NSUM])
{
	memset(a, 0, CMP_NSUM * sizeof *a);
	for (int64_t i = 0; i < n; i++) {
		double o = task_dtype_get(out, d, i), r = ref[i];
		if (!isfinite(o) || !isfinite(r)) {
			a[CMP_NONFINITE]++;
			continue;
		}
		double e = o - r, e1 = round_to(r, d) - r, e2 = round_to(r, KL_BF16) - r,
		       e3 = round_to(r, KL_F16) - r;
		a[CMP_ERR] += e * e;
		a[CMP_REF] += r * r;
		a[CMP_ROUND] += e1 * e1;
		a[CMP_BF16] += e2 * e2;
		a[CMP_F16] += isfinite(e3) ? e3 * e3 : r * r; /* beyond f16's range: all of it */
	}
}

/* round the low `drop` bits of the integer u away, to nearest even (or,
 * with tr, toward zero: the sign and magnitude are apart in a float) */
#define ROUND_BITS(u, drop, one, tr)                                                               \
	((u) + ((tr) ? 0 : (((one) << ((drop)-1)) - 1) + (((u) >> (drop)) & 1))) &                 \
	    ~(((one) << (drop)) - 1)

void compare_round_mantissa(void *p, kl_dtype d, int64_t n, int bits, int tr)
{
	for (int64_t i = 0; i < n; i++) {
		if (d == KL_F32 && bits < 23) {
			uint32_t u;
			memcpy(&u, (char *)p + i * 4, 4);
			if ((u & 0x7f800000u) == 0x7f800000u)
				continue;
			u = ROUND_BITS(u, 23 - bits, 1u, tr);
			memcpy((char *)p + i * 4, &u, 4);
		} else if (d == KL_F64 && bits < 52) {
			uint64_t u;
			memcpy(&u, (char *)p + i * 8, 8);
			if ((u & 0x7ff0000000000000ull) == 0x7ff0000000000000ull)
				continue;
			u = ROUND_BITS(u, 52 - bits, 1ull, tr);
			memcpy((char *)p + i * 8, &u, 8);
		} else if (d == KL_F16 && bits < 10) {
			uint16_t u;
			memcpy(&u, (char *)p + i * 2, 2);
			if ((u & 0x7c00) == 0x7c00)
				continue;
			u = (uint16_t)(ROUND_BITS((uint32_t)u, 10 - bits, 1u, tr));
			memcpy((char *)p + i * 2, &u, 2);
		}
	}
}

void compare_index_str(const struct task_tensor *t, int64_t flat, char *buf, size_t n)
{
	int64_t idx[8];
	for (int k = t->ndim - 1; k >= 0; k--) {
		idx[k] = flat % t->shape[k];
		flat /= t->shape[k];
	}
	size_t used = 0;
	used += (size_t)snprintf(buf + used, n - used, "[");
	for (int k = 0; k < t->ndim && used < n; k++)
		used += (size_t)snprintf(buf + used, n - used, "%s%lld", k ? ", " : "",
		                         (long long)idx[k]);
	if (used < n)
		snprintf(buf + used, n - used, "]");
}
