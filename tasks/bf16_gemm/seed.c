/*
 * bf16_gemm/seed.c - straightforward host seed: the operands converted to
 * float once, then for each row of C the (i, k, j) loop accumulating a float
 * row (fp32 accumulation, as the task declares), rounded to bf16 at the end.
 */
#include <stdlib.h>

#include "kloop.h"

int kl_run(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *stream)
{
	(void)stream;
	if (n_in != 2 || n_out != 1)
		return 1;
	if (in[0].dtype != KL_BF16 || in[1].dtype != KL_BF16 || out[0].dtype != KL_BF16)
		return 2;
	int64_t M = in[0].shape[0], K = in[0].shape[1], N = in[1].shape[1];
	if (in[1].shape[0] != K || out[0].shape[0] != M || out[0].shape[1] != N)
		return 3;

	const uint16_t *A = in[0].data, *B = in[1].data;
	uint16_t *C = out[0].data;
	float *b = malloc((size_t)(K * N + N) * sizeof *b);
	if (!b)
		return 4;
	float *row = b + K * N;
	for (int64_t i = 0; i < K * N; i++)
		b[i] = kl_bf16_to_f32(B[i]);
	for (int64_t i = 0; i < M; i++) {
		for (int64_t j = 0; j < N; j++)
			row[j] = 0.0f;
		for (int64_t k = 0; k < K; k++) {
			float a = kl_bf16_to_f32(A[i * K + k]);
			const float *bk = b + k * N;
			for (int64_t j = 0; j < N; j++)
				row[j] += a * bk[j];
		}
		for (int64_t j = 0; j < N; j++)
			C[i * N + j] = kl_f32_to_bf16(row[j]);
	}
	free(b);
	return 0;
}
