/*
 * bf16_gemm/reference.c - the exact host reference: C = A B for bf16 A[M,K] and
 * B[K,N], each dot product accumulated in double, then rounded to bf16.
 * With a KL_F64 output it writes the exact result unrounded: the float64
 * reference of the precision verdict (docs/TASKS.md, "Precision").
 */
#include <stdlib.h>

#include "kloop.h"

int kl_run(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *stream)
{
	(void)stream;
	if (n_in != 2 || n_out != 1)
		return 1;
	if (in[0].dtype != KL_BF16 || in[1].dtype != KL_BF16 ||
	    (out[0].dtype != KL_BF16 && out[0].dtype != KL_F64))
		return 2;
	if (in[0].ndim != 2 || in[1].ndim != 2 || out[0].ndim != 2)
		return 3;
	int64_t M = in[0].shape[0], K = in[0].shape[1], N = in[1].shape[1];
	if (in[1].shape[0] != K || out[0].shape[0] != M || out[0].shape[1] != N)
		return 3;

	const uint16_t *A = in[0].data, *B = in[1].data;
	uint16_t *C = out[0].data;
	double *C64 = out[0].data;
	int exact = out[0].dtype == KL_F64;
	float *a = malloc((size_t)(M * K + K * N) * sizeof *a);
	if (!a)
		return 4;
	float *b = a + M * K;
	for (int64_t i = 0; i < M * K; i++)
		a[i] = kl_bf16_to_f32(A[i]);
	for (int64_t i = 0; i < K * N; i++)
		b[i] = kl_bf16_to_f32(B[i]);
	for (int64_t i = 0; i < M; i++)
		for (int64_t j = 0; j < N; j++) {
			double acc = 0.0;
			for (int64_t k = 0; k < K; k++)
				acc += (double)a[i * K + k] * b[k * N + j];
			if (exact)
				C64[i * N + j] = acc;
			else
				C[i * N + j] = kl_f32_to_bf16((float)acc);
		}
	free(a);
	return 0;
}
