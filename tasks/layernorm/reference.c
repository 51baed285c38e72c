/*
 * layernorm/reference.c - the exact host reference: each batch row of x is
 * normalised over the trailing dimensions that weight and bias span (mean and
 * biased variance in double, eps 1e-5), then scaled by weight and shifted by bias.
 * With a KL_F64 output it writes the exact result unrounded: the float64
 * reference of the precision verdict (docs/TASKS.md, "Precision").
 */
#include <math.h>

#include "kloop.h"

#define EPS 1e-5

int kl_run(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *stream)
{
	(void)stream;
	if (n_in != 3 || n_out != 1)
		return 1;
	for (int i = 0; i < 3; i++)
		if (in[i].dtype != KL_F32)
			return 2;
	if (out[0].dtype != KL_F32 && out[0].dtype != KL_F64)
		return 2;
	int nd = in[1].ndim, lead = in[0].ndim - nd;
	if (lead < 0 || in[2].ndim != nd || kl_numel(&out[0]) != kl_numel(&in[0]))
		return 3;
	for (int i = 0; i < nd; i++)
		if (in[0].shape[lead + i] != in[1].shape[i] || in[2].shape[i] != in[1].shape[i])
			return 3;

	const float *x = in[0].data, *w = in[1].data, *b = in[2].data;
	float *y = out[0].data;
	double *y64 = out[0].data;
	int exact = out[0].dtype == KL_F64;
	int64_t n = kl_numel(&in[1]);
	int64_t rows = n ? kl_numel(&in[0]) / n : 0;

	for (int64_t r = 0; r < rows; r++) {
		const float *xr = x + r * n;
		double mean = 0.0, var = 0.0;
		for (int64_t i = 0; i < n; i++)
			mean += xr[i];
		mean /= (double)n;
		for (int64_t i = 0; i < n; i++)
			var += ((double)xr[i] - mean) * ((double)xr[i] - mean);
		var /= (double)n;
		double rstd = 1.0 / sqrt(var + EPS);
		for (int64_t i = 0; i < n; i++) {
			double v = ((double)xr[i] - mean) * rstd * w[i] + b[i];
			if (exact)
				y64[r * n + i] = v;
			else
				y[r * n + i] = (float)v;
		}
	}
	return 0;
}
