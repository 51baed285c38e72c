/*
 * softmax/reference.c - the exact host reference: y = softmax(x) over the last
 * dimension, with the max, the exponentials and the sum in double.
 */
#include <math.h>

#include "kloop.h"

int kl_run(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *stream)
{
	(void)stream;
	if (n_in != 1 || n_out != 1)
		return 1;
	if (in[0].dtype != KL_F32 || out[0].dtype != KL_F32 || in[0].ndim < 1)
		return 2;
	if (kl_numel(&in[0]) != kl_numel(&out[0]))
		return 3;

	const float *x = in[0].data;
	float *y = out[0].data;
	int64_t cols = in[0].shape[in[0].ndim - 1];
	int64_t rows = cols ? kl_numel(&in[0]) / cols : 0;

	for (int64_t r = 0; r < rows; r++) {
		const float *xr = x + r * cols;
		float *yr = y + r * cols;
		double m = -INFINITY, sum = 0.0;
		for (int64_t c = 0; c < cols; c++)
			if (xr[c] > m)
				m = xr[c];
		for (int64_t c = 0; c < cols; c++)
			sum += exp((double)xr[c] - m);
		for (int64_t c = 0; c < cols; c++)
			yr[c] = (float)(exp((double)xr[c] - m) / sum);
	}
	return 0;
}
