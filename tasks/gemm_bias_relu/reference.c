/*
 * gemm_bias_relu/reference.c - the exact host reference: y = relu(x W^T + b)
 * for x[batch, in], W[out, in] (as nn.Linear stores it) and b[out], in double.
 * With a KL_F64 output it writes the exact result unrounded: the float64
 * reference of the precision verdict (docs/TASKS.md, "Precision").
 */
#include "kloop.h"

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
	if (in[0].ndim != 2 || in[1].ndim != 1 || in[2].ndim != 2 || out[0].ndim != 2)
		return 3;
	int64_t M = in[0].shape[0], K = in[0].shape[1], N = in[2].shape[0];
	if (in[2].shape[1] != K || in[1].shape[0] != N || out[0].shape[0] != M ||
	    out[0].shape[1] != N)
		return 3;

	const float *x = in[0].data, *w = in[2].data, *b = in[1].data;
	float *y = out[0].data;
	double *y64 = out[0].data;
	int exact = out[0].dtype == KL_F64;
	for (int64_t i = 0; i < M; i++)
		for (int64_t j = 0; j < N; j++) {
			double acc = b[j];
			for (int64_t k = 0; k < K; k++)
				acc += (double)x[i * K + k] * w[j * K + k];
			if (exact)
				y64[i * N + j] = acc > 0.0 ? acc : 0.0;
			else
				y[i * N + j] = acc > 0.0 ? (float)acc : 0.0f;
		}
	return 0;
}
