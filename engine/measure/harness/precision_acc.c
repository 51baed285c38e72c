/*
 * precision_acc.c - what accumulating a matrix product in f16 or bf16 costs
 * on the task's own data (precision.h, issue 36): the product recomputed on
 * the host over a sample of its output elements, its accumulator rounded
 * to the type after every step.
 */
#include "precision.h"

#include <math.h>
#include <stdlib.h>

#include "util.h"

/* x rounded to dtype d (f16, bf16, f32; f64 and the rest: as it is) */
static double round_to(double x, kl_dtype d)
{
	switch (d) {
	case KL_F16:
		return kl_f16_to_f32(kl_f32_to_f16((float)x));
	case KL_BF16:
		return kl_bf16_to_f32(kl_f32_to_bf16((float)x));
	case KL_E4M3:
		return kl_e4m3_to_f32(kl_f32_to_e4m3((float)x));
	case KL_F32:
		return (float)x;
	default:
		return x;
	}
}

double precision_acc_error(const struct task *t, const struct task_matmul *mm, const void *aRows,
                           const void *b, const void *bias, double scale, const double *ref, int R,
                           int64_t colStep, kl_dtype acc, int chunk)
{
	int64_t K = mm->K, N = mm->N;
	kl_dtype da = t->aIn[mm->a].dtype, db = t->aIn[mm->b].dtype, dout = t->aOut[0].dtype;
	int64_t C = colStep > 0 ? (N + colStep - 1) / colStep : 0;
	double *a = xmalloc((size_t)(R * K) * sizeof *a), *col = xmalloc((size_t)K * sizeof *col);
	double num = 0, den = 0;
	int finite = 1;
	chunk = chunk < 1 ? 1 : chunk;
	for (int64_t i = 0; i < R * K; i++)
		a[i] = task_dtype_get(aRows, da, i);
	for (int64_t c = 0; c < C && finite; c++) {
		int64_t n = c * colStep;
		for (int64_t k = 0; k < K; k++)
			col[k] = task_dtype_get(b, db, mm->bNK ? n * K + k : k * N + n);
		for (int r = 0; r < R && finite; r++) {
			const double *ar = a + (int64_t)r * K;
			double s = 0;
			for (int64_t k0 = 0; k0 < K; k0 += chunk) {
				double step = 0;
				for (int64_t k = k0; k < k0 + chunk && k < K; k++)
					step += ar[k] * col[k];
				s = acc == KL_F64 ? s + step : round_to(s + step, acc);
			}
			s *= scale;
			if (bias)
				s += task_dtype_get(bias, t->aIn[mm->bias].dtype, n);
			if (acc != KL_F64)
				s = round_to(s, dout);
			double want = ref[(int64_t)r * N + n];
			finite = isfinite(s);
			num += (s - want) * (s - want);
			den += want * want;
		}
	}
	free(a);
	free(col);
	if (!finite)
		return -1;
	return den > 0 ? sqrt(num / den) : num > 0 ? INFINITY : 0;
}
