/*
 * gemm_bias_relu/seed.c - naive host seed: a float dot product of each row of
 * x with each row of W, plus the bias, clamped at zero.
 */
#include "kloop.h"

int kl_run(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *stream)
{
	(void)stream;
	if (n_in != 3 || n_out != 1)
		return 1;

	int64_t M = in[0].shape[0], K = in[0].shape[1], N = in[2].shape[0];
	const float *x = in[0].data, *w = in[2].data, *b = in[1].data;
	float *y = out[0].data;
	for (int64_t i = 0; i < M; i++)
		for (int64_t j = 0; j < N; j++) {
			float acc = 0.0f;
			for (int64_t k = 0; k < K; k++)
				acc += x[i * K + k] * w[j * K + k];
			acc += b[j];
			y[i * N + j] = acc > 0.0f ? acc : 0.0f;
		}
	return 0;
}
