/*
 * hgemm/seed.c - naive host seed: the triple loop (i, j, k), converting each
 * f16 operand as it is read and accumulating in float.
 */
#include "kloop.h"

int kl_run(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *stream)
{
	(void)stream;
	if (n_in != 2 || n_out != 1)
		return 1;

	int64_t M = in[0].shape[0], K = in[0].shape[1], N = in[1].shape[1];
	const uint16_t *A = in[0].data, *B = in[1].data;
	uint16_t *C = out[0].data;
	for (int64_t i = 0; i < M; i++)
		for (int64_t j = 0; j < N; j++) {
			float acc = 0.0f;
			for (int64_t k = 0; k < K; k++)
				acc += kl_f16_to_f32(A[i * K + k]) * kl_f16_to_f32(B[k * N + j]);
			C[i * N + j] = kl_f32_to_f16(acc);
		}
	return 0;
}
