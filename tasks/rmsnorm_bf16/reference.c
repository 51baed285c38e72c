/*
 * rmsnorm_bf16/reference.c - the exact host reference: for each row of the
 * bf16 x[rows, cols], y = x / sqrt(mean(x^2) + 1e-6) * w in double, rounded
 * to bf16. With a KL_F64 output it writes the exact result unrounded: the
 * float64 reference of the precision verdict (docs/TASKS.md, "Precision").
 */
#include <math.h>

#include "kloop.h"

#define EPS 1e-6

int kl_run(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *stream)
{
	(void)stream;
	if (n_in != 2 || n_out != 1)
		return 1;
	if (in[0].dtype != KL_BF16 || in[1].dtype != KL_BF16 ||
	    (out[0].dtype != KL_BF16 && out[0].dtype != KL_F64))
		return 2;
	if (in[0].ndim != 2 || in[1].ndim != 1 || out[0].ndim != 2)
		return 3;
	int64_t rows = in[0].shape[0], cols = in[0].shape[1];
	if (in[1].shape[0] != cols || out[0].shape[0] != rows || out[0].shape[1] != cols)
		return 3;

	const uint16_t *x = in[0].data, *w = in[1].data;
	uint16_t *y = out[0].data;
	double *y64 = out[0].data;
	int exact = out[0].dtype == KL_F64;
	for (int64_t r = 0; r < rows; r++) {
		const uint16_t *xr = x + r * cols;
		double ss = 0.0;
		for (int64_t c = 0; c < cols; c++) {
			double v = kl_bf16_to_f32(xr[c]);
			ss += v * v;
		}
		double inv = 1.0 / sqrt(ss / (double)cols + EPS);
		for (int64_t c = 0; c < cols; c++) {
			double v = kl_bf16_to_f32(xr[c]) * inv * kl_bf16_to_f32(w[c]);
			if (exact)
				y64[r * cols + c] = v;
			else
				y[r * cols + c] = kl_f32_to_bf16((float)v);
		}
	}
	return 0;
}
