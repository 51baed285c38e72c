/*
 * fp8_gemm/seed.c - straightforward host seed: B converted to float once,
 * then each element of C the dot product of a row of A and a row of B (K
 * contiguous in both), accumulated in float (fp32 accumulation, as the task
 * declares), scaled and rounded to bf16.
 */
#include <stdlib.h>

#include "kloop.h"

int kl_run(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *stream)
{
	(void)stream;
	if (n_in != 4 || n_out != 1)
		return 1;
	if (in[0].dtype != KL_E4M3 || in[1].dtype != KL_E4M3 || in[2].dtype != KL_F32 ||
	    in[3].dtype != KL_F32 || out[0].dtype != KL_BF16)
		return 2;
	int64_t M = in[0].shape[0], K = in[0].shape[1], N = in[1].shape[0];
	if (in[1].shape[1] != K || out[0].shape[0] != M || out[0].shape[1] != N)
		return 3;

	const uint8_t *A = in[0].data, *B = in[1].data;
	float scale = *(const float *)in[2].data * *(const float *)in[3].data;
	uint16_t *C = out[0].data;
	float *b = malloc((size_t)(N * K + K) * sizeof *b);
	if (!b)
		return 4;
	float *a = b + N * K;
	for (int64_t i = 0; i < N * K; i++)
		b[i] = kl_e4m3_to_f32(B[i]);
	for (int64_t i = 0; i < M; i++) {
		for (int64_t k = 0; k < K; k++)
			a[k] = kl_e4m3_to_f32(A[i * K + k]);
		for (int64_t j = 0; j < N; j++) {
			const float *bj = b + j * K;
			float acc = 0.0f;
			for (int64_t k = 0; k < K; k++)
				acc += a[k] * bj[k];
			C[i * N + j] = kl_f32_to_bf16(acc * scale);
		}
	}
	free(b);
	return 0;
}
