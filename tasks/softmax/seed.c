/*
 * softmax/seed.c - naive host seed: three passes over each row (max, exp and
 * sum, divide), all in float.
 */
#include <math.h>

#include "kloop.h"

int kl_run(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *stream)
{
	(void)stream;
	if (n_in != 1 || n_out != 1)
		return 1;

	const float *x = in[0].data;
	float *y = out[0].data;
	int64_t cols = in[0].shape[in[0].ndim - 1];
	int64_t rows = kl_numel(&in[0]) / cols;

	for (int64_t r = 0; r < rows; r++) {
		const float *xr = x + r * cols;
		float *yr = y + r * cols;
		float m = xr[0], sum = 0.0f;
		for (int64_t c = 1; c < cols; c++)
			m = fmaxf(m, xr[c]);
		for (int64_t c = 0; c < cols; c++) {
			yr[c] = expf(xr[c] - m);
			sum += yr[c];
		}
		for (int64_t c = 0; c < cols; c++)
			yr[c] /= sum;
	}
	return 0;
}
