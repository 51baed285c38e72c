/*
 * rmsnorm_bf16/seed.c - straightforward host seed: for each row, the sum of
 * squares in float, then y = x * (1 / sqrtf(mean + 1e-6)) * w in float,
 * rounded to bf16.
 */
#include <math.h>

#include "kloop.h"

int kl_run(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *stream)
{
	(void)stream;
	if (n_in != 2 || n_out != 1)
		return 1;
	if (in[0].dtype != KL_BF16 || in[1].dtype != KL_BF16 || out[0].dtype != KL_BF16)
		return 2;
	int64_t rows = in[0].shape[0], cols = in[0].shape[1];
	const uint16_t *x = in[0].data, *w = in[1].data;
	uint16_t *y = out[0].data;
	for (int64_t r = 0; r < rows; r++) {
		const uint16_t *xr = x + r * cols;
		float ss = 0.0f;
		for (int64_t c = 0; c < cols; c++) {
			float v = kl_bf16_to_f32(xr[c]);
			ss += v * v;
		}
		float inv = 1.0f / sqrtf(ss / (float)cols + 1e-6f);
		for (int64_t c = 0; c < cols; c++)
			y[r * cols + c] =
			    kl_f32_to_bf16(kl_bf16_to_f32(xr[c]) * inv * kl_bf16_to_f32(w[c]));
	}
	return 0;
}
