/*
 * task.c - a task's values: the dtypes (names, sizes), the tolerances
 * (defaults, KernelBench's, overrides), tensors' and sets' sizes, the
 * shapes shrunk, the task freed.  Reading task.json: task_load.c.
 */
#include "task.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

static const char *dtype_names[] = {"f32", "f16", "bf16", "f64", "i32", "i64", "i8", "u8", "e4m3"};
static const size_t dtype_sizes[] = {4, 2, 2, 8, 4, 8, 1, 1, 1};
_Static_assert(sizeof dtype_sizes / sizeof *dtype_sizes == TASK_NDTYPE, "a size per kl_dtype");
#define NDTYPE TASK_NDTYPE

size_t task_dtype_size(kl_dtype d)
{
	return (unsigned)d < NDTYPE ? dtype_sizes[d] : 0;
}

double task_dtype_get(const void *p, kl_dtype d, int64_t i)
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
	case KL_E4M3:
		return kl_e4m3_to_f32(((const uint8_t *)p)[i]);
	}
	return NAN;
}

const char *task_dtype_name(kl_dtype d)
{
	return (unsigned)d < NDTYPE ? dtype_names[d] : "?";
}

int task_dtype_parse(const char *z, kl_dtype *pOut)
{
	for (int i = 0; i < NDTYPE; i++)
		if (!strcmp(z, dtype_names[i])) {
			*pOut = (kl_dtype)i;
			return 0;
		}
	return -1;
}

struct task_tol task_default_tol(kl_dtype d)
{
	switch (d) {
	case KL_F64:
		return (struct task_tol){1e-10, 1e-8, 1e-8};
	case KL_F32:
		return (struct task_tol){1e-5, 1e-4, 1e-4};
	case KL_F16:
		return (struct task_tol){1e-3, 1e-2, 5e-3};
	case KL_BF16:
		return (struct task_tol){1e-2, 2e-2, 2e-2};
	case KL_E4M3: /* 3 mantissa bits: half a step is 1/16 */
		return (struct task_tol){1e-1, 7e-2, 7e-2};
	default:
		return (struct task_tol){0, 0, 0};
	}
}

int task_dtype_is_float(kl_dtype d)
{
	return d == KL_F32 || d == KL_F16 || d == KL_BF16 || d == KL_F64 || d == KL_E4M3;
}

struct task_tol task_kernelbench_tol(kl_dtype d)
{
	if (task_dtype_is_float(d))
		return (struct task_tol){1e-2, 1e-2, INFINITY};
	return task_default_tol(d);
}

/* the float tolerances now come from z; the integer ones stay where they
 * came from */
static void float_tol_from(struct task *t, const char *z)
{
	if (!t->zTolFromInt)
		t->zTolFromInt = t->zTolFrom ? t->zTolFrom : "default";
	t->zTolFrom = z;
}

void task_use_kernelbench_tol(struct task *t)
{
	for (int d = 0; d < TASK_NDTYPE; d++)
		t->aTol[d] = task_kernelbench_tol((kl_dtype)d);
	float_tol_from(t, "kernelbench");
}

void task_override_tol(struct task *t, double atol, double rtol, double relL2)
{
	if (atol < 0 && rtol < 0 && relL2 < 0)
		return;
	for (int d = 0; d < TASK_NDTYPE; d++) {
		if (!task_dtype_is_float((kl_dtype)d))
			continue;
		if (atol >= 0)
			t->aTol[d].atol = atol;
		if (rtol >= 0)
			t->aTol[d].rtol = rtol;
		if (relL2 >= 0)
			t->aTol[d].rel_l2 = relL2;
	}
	float_tol_from(t, "flags");
}

int task_numel_checked(const struct task_tensor *t, int64_t *pn)
{
	int64_t n = 1;
	for (int i = 0; i < t->ndim; i++)
		if (t->shape[i] < 0 || __builtin_mul_overflow(n, t->shape[i], &n))
			return -1;
	*pn = n;
	return 0;
}

int task_bytes_checked(const struct task_tensor *t, int64_t *pn)
{
	int64_t n;
	if (task_numel_checked(t, &n) < 0 ||
	    __builtin_mul_overflow(n, (int64_t)task_dtype_size(t->dtype), pn))
		return -1;
	return 0;
}

int64_t task_numel(const struct task_tensor *t)
{
	int64_t n;
	return task_numel_checked(t, &n) < 0 ? INT64_MAX : n;
}

size_t task_tensor_bytes(const struct task_tensor *t)
{
	return (size_t)task_numel(t) * task_dtype_size(t->dtype);
}

size_t task_set_bytes(const struct task *t)
{
	size_t n = 0;
	for (int i = 0; i < t->nIn; i++)
		n += task_tensor_bytes(&t->aIn[i]);
	for (int j = 0; j < t->nOut; j++)
		n += task_tensor_bytes(&t->aOut[j]);
	return n;
}

char *task_shape_str(const struct task_tensor *t)
{
	strbuf sb = STRBUF_INIT;
	sb_adds(&sb, "[");
	for (int i = 0; i < t->ndim; i++)
		sb_addf(&sb, "%s%lld", i ? ", " : "", (long long)t->shape[i]);
	sb_adds(&sb, "]");
	return sb_detach(&sb);
}

/* a named dimension's extent at the small shapes (task_shrink) */
static int64_t shrink_dim(int64_t d)
{
	if (d <= 64)
		return d;
	int64_t p = 1; /* the largest power of two dividing d, at most 128 */
	while (p < 128 && d % (p * 2) == 0)
		p *= 2;
	int64_t r = (d + 7) / 8;
	r = (r + p - 1) / p * p;
	if (r < 64)
		r = (64 + p - 1) / p * p;
	return r < d ? r : d;
}

int task_shrink(struct task *t, char *zDesc, size_t nDesc)
{
	int changed = 0;
	strbuf sb = STRBUF_INIT;
	for (int k = 0; k < 2; k++)
		for (int i = 0; i < (k ? t->nOut : t->nIn); i++) {
			struct task_tensor *tt = k ? &t->aOut[i] : &t->aIn[i];
			for (int d = 0; d < tt->ndim; d++) {
				if (!tt->azDim[d])
					continue;
				int64_t v = shrink_dim(tt->shape[d]);
				char word[96];
				snprintf(word, sizeof word, "%s=%lld", tt->azDim[d], (long long)v);
				/* each name once in the description */
				const char *at = sb.buf ? strstr(sb.buf, word) : NULL;
				size_t wl = strlen(word);
				if (!(at && (at == sb.buf || at[-1] == ' ') &&
				      (at[wl] == ' ' || !at[wl])))
					sb_addf(&sb, "%s%s", sb.len ? " " : "", word);
				changed += v != tt->shape[d];
				tt->shape[d] = v;
			}
		}
	snprintf(zDesc, nDesc, "%s", sb.len ? sb.buf : "");
	sb_free(&sb);
	return changed;
}

static void free_tensors(struct task_tensor *a, int n)
{
	for (int i = 0; i < n; i++) {
		free(a[i].zName);
		for (int k = 0; k < 8; k++)
			free(a[i].azDim[k]);
	}
}

void task_free(struct task *t)
{
	if (!t)
		return;
	free(t->zDir);
	free(t->zName);
	free(t->zDescription);
	free(t->zShapeSet);
	free(t->zDims);
	for (int i = 0; i < t->nShapeSets; i++)
		free(t->azShapeSets[i]);
	free(t->azShapeSets);
	free_tensors(t->aIn, t->nIn);
	free_tensors(t->aOut, t->nOut);
	free(t->ref.zHost);
	free(t->ref.zCuda);
	free(t->ref.zTorch);
	free(t->zLibs);
	for (int i = 0; i < t->nInit; i++)
		free(t->aInit[i].zName);
	for (int i = 0; i < t->seeds.nHost; i++) {
		free(t->seeds.azHost[i]);
		free(t->seeds.azHostNeeds ? t->seeds.azHostNeeds[i] : NULL);
	}
	free(t->seeds.azHost);
	free(t->seeds.azHostNeeds);
	for (int i = 0; i < t->seeds.nCuda; i++) {
		free(t->seeds.azCuda[i]);
		free(t->seeds.azCudaNeeds ? t->seeds.azCudaNeeds[i] : NULL);
	}
	free(t->seeds.azCuda);
	free(t->seeds.azCudaNeeds);
	free(t);
}

int task_matmul_of(const struct task *t, struct task_matmul *mm)
{
	if (t->nOut != 1 || t->aOut[0].ndim != 2 || t->nIn < 2)
		return 0;
	/* the two 2-D inputs, in either order, at most one 1-D bias and two
	 * scales of one element */
	int a = -1, b = -1, bias = -1, n1 = 0, scale[2] = {-1, -1}, nScale = 0;
	for (int i = 0; i < t->nIn; i++) {
		const struct task_tensor *x = &t->aIn[i];
		if (x->ndim == 2 && a < 0)
			a = i;
		else if (x->ndim == 2 && b < 0)
			b = i;
		else if (x->ndim == 1 && x->shape[0] == 1 && t->aOut[0].shape[1] != 1 && nScale < 2)
			scale[nScale++] = i;
		else if (x->ndim == 1)
			bias = n1++ ? bias : i;
		else
			return 0;
	}
	if (a < 0 || b < 0)
		return 0;
	int64_t M = t->aOut[0].shape[0], N = t->aOut[0].shape[1];
	for (int k = 0; k < 2; k++) {
		const struct task_tensor *x = &t->aIn[k ? b : a], *y = &t->aIn[k ? a : b];
		/* x[M,K] with y[K,N] or y[N,K] */
		if (x->shape[0] != M)
			continue;
		int64_t K = x->shape[1];
		int kn = y->shape[0] == K && y->shape[1] == N,
		    nk = y->shape[1] == K && y->shape[0] == N;
		if (!kn && !nk)
			continue;
		int isBias = n1 == 1 && t->aIn[bias].shape[0] == N;
		*mm = (struct task_matmul){.a = k ? b : a,
		                           .b = k ? a : b,
		                           .bias = isBias ? bias : -1,
		                           .scale = {scale[0], scale[1]},
		                           .nScale = nScale,
		                           .nOther = n1 - isBias,
		                           .bNK = !kn,
		                           .M = M,
		                           .N = N,
		                           .K = K};
		return 1;
	}
	return 0;
}

static const char *compute_names[TASK_NCOMPUTE] = {"fp32", "tf32", "fp16", "bf16", "fp8", "int8"};

const char *task_compute_name(task_compute c)
{
	return (unsigned)c < TASK_NCOMPUTE ? compute_names[c] : "?";
}

int task_compute_parse(const char *z, task_compute *pOut)
{
	for (int i = 0; i < TASK_NCOMPUTE; i++)
		if (z && !strcmp(z, compute_names[i])) {
			*pOut = (task_compute)i;
			return 0;
		}
	return -1;
}

task_compute task_compute_infer(const struct task *t, int kernelbench, const char **pzFrom)
{
	struct task_matmul mm;
	int f16 = 0, bf16 = 0, f8 = 0, i8 = 0, flt = 0;
	/* the tensors of two or more dimensions: a bias or a scale is no operand */
	if (kernelbench || task_matmul_of(t, &mm))
		for (int i = 0; i < t->nIn; i++) {
			kl_dtype d = t->aIn[i].dtype;
			if (t->aIn[i].ndim < 2)
				continue;
			f16 += d == KL_F16;
			bf16 += d == KL_BF16;
			f8 += d == KL_E4M3;
			i8 += d == KL_I8;
			flt += task_dtype_is_float(d);
		}
	/* the narrowest type among the operands: an fp8 product with a bf16
	 * operand runs in bf16 */
	task_compute c = f16          ? TASK_FP16
	                 : bf16       ? TASK_BF16
	                 : f8         ? TASK_FP8
	                 : i8 && !flt ? TASK_INT8
	                              : TASK_FP32;
	if (pzFrom)
		*pzFrom = c != TASK_FP32 ? "the inputs' dtypes" : "the default";
	return c;
}
