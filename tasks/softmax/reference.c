/*
 * softmax/reference.c - the exact host reference: y = softmax(x) over the last
 * dimension, with the max, the exponentials and the sum in double.
 * With a KL_F64 output it writes the exact result unrounded: the float64
 * reference of the precision verdict (docs/TASKS.md, "Precision").
 */
#include <math.h>

#include "kloop.h"

int kl_run(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *stream)
{
	(void)stream;
	if (n_in != 1 || n_out != 1)
		return 1;
	if (in[0].dtype != KL_F32 || (out[0].dtype != KL_F32 && out[0].dtype != KL_F64) ||
	    in[0].ndim < 1)
		return 2;
	if (kl_numel(&in[0]) != kl_numel(&out[0]))
		return 3;

	const float *x = in[0].data;
	float *y = out[0].data;
	double *y64 = out[0].data;
	int exact = out[0].dtype == KL_F64;
	int64_t cols = in[0].shape[in[0].ndim - 1];
	int64_t rows = cols ? kl_numel(&in[0]) / cols : 0;

	for (int64_t r = 0; r < rows; r++) {
		const float *xr = x + r * cols;
		double m = -INFINITY, sum = 0.0;
		for (int64_t c = 0; c < cols; c++)
			if (xr[c] > m)
				m = xr[c];
		for (int64_t c = 0; c < cols; c++)
			sum += exp((double)xr[c] - m);
		for (int64_t c = 0; c < cols; c++)
			if (exact)
				y64[r * cols + c] = exp((double)xr[c] - m) / sum;
			else
				y[r * cols + c] = (float)(exp((double)xr[c] - m) / sum);
	}
	return 0;
}
