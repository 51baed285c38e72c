/*
 * compare.c - the correctness verdict for one output tensor: elementwise
 * allclose, relative L2 error and mismatch count, computed in double.
 */
#include "compare.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

double compare_get(const void *p, kl_dtype d, int64_t i)
{
	switch (d) {
	case KL_F32:
		return ((const float *)p)[i];
	case KL_F64:
		return ((const double *)p)[i];
	case KL_F16:
		return kl_f16_to_f32(((const uint16_t *)p)[i]);
	case KL_BF16:
		return kl_bf16_to_f32(((const uint16_t *)p)[i]);
	case KL_I32:
		return ((const int32_t *)p)[i];
	case KL_I64:
		return (double)((const int64_t *)p)[i];
	case KL_I8:
		return ((const int8_t *)p)[i];
	case KL_U8:
		return ((const uint8_t *)p)[i];
	}
	return NAN;
}

void compare_buffers(const void *out, const void *ref, kl_dtype d, int64_t n,
		     const struct task_tol *tol, struct compare_report *r)
{
	memset(r, 0, sizeof *r);
	r->n = n;
	r->firstBad = -1;
	double num = 0, den = 0;
	int nanSeen = 0;
	for (int64_t i = 0; i < n; i++) {
		double a = compare_get(out, d, i), b = compare_get(ref, d, i);
		int bad;
		if (isnan(b)) {
			bad = !isnan(a); /* the reference itself is NaN: require NaN */
		} else if (!isfinite(a) || !isfinite(b)) {
			bad = a != b;
			if (bad && !isfinite(a) && isfinite(b))
				r->nNonFinite++;
			if (bad)
				nanSeen = 1;
		} else {
			double diff = fabs(a - b);
			bad = !(diff <= tol->atol + tol->rtol * fabs(b));
			if (diff > r->maxAbs)
				r->maxAbs = diff;
			if (b != 0 && diff / fabs(b) > r->maxRel)
				r->maxRel = diff / fabs(b);
			num += diff * diff;
			den += b * b;
		}
		if (bad) {
			if (r->firstBad < 0) {
				r->firstBad = i;
				r->firstExpected = b;
				r->firstActual = a;
			}
			r->nMismatch++;
		}
	}
	if (nanSeen)
		r->relL2 = INFINITY;
	else if (den > 0)
		r->relL2 = sqrt(num / den);
	else
		r->relL2 = num > 0 ? INFINITY : 0;
	r->pass = r->nMismatch == 0 && r->relL2 <= tol->rel_l2;
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
		used += (size_t)snprintf(buf + used, n - used, "%s%lld", k ? ", " : "", (long long)idx[k]);
	if (used < n)
		snprintf(buf + used, n - used, "]");
}
