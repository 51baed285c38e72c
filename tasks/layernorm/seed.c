/*
 * layernorm/seed.c - naive host seed: per batch row, a float pass for the mean,
 * one for the variance and one to normalise, scale and shift.
 */
#include <math.h>

#include "kloop.h"

int kl_run(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *stream)
{
	(void)stream;
	if (n_in != 3 || n_out != 1)
		return 1;

	const float *x = in[0].data, *w = in[1].data, *b = in[2].data;
	float *y = out[0].data;
	int64_t n = kl_numel(&in[1]);
	int64_t rows = kl_numel(&in[0]) / n;

	for (int64_t r = 0; r < rows; r++) {
		const float *xr = x + r * n;
		float *yr = y + r * n;
		float mean = 0.0f, var = 0.0f;
		for (int64_t i = 0; i < n; i++)
			mean += xr[i];
		mean /= (float)n;
		for (int64_t i = 0; i < n; i++)
			var += (xr[i] - mean) * (xr[i] - mean);
		var /= (float)n;
		float rstd = 1.0f / sqrtf(var + 1e-5f);
		for (int64_t i = 0; i < n; i++)
			yr[i] = (xr[i] - mean) * rstd * w[i] + b[i];
	}
	return 0;
}
