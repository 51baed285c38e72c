/*
 * fp8_gemm/reference.c - the exact host reference: C = scale_a scale_b A B^T
 * for e4m3 A[M,K] and B[N,K], each dot product accumulated in double (the
 * products of e4m3 values are exact), scaled, then rounded to bf16.  With a
 * KL_F64 output it writes the exact result unrounded: the float64 reference
 * of the precision verdict (docs/TASKS.md, "Precision").
 */
#include <stdlib.h>

#include "kloop.h"

int kl_run(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *stream)
{
	(void)stream;
	if (n_in != 4 || n_out != 1)
		return 1;
	if (in[0].dtype != KL_E4M3 || in[1].dtype != KL_E4M3 || in[2].dtype != KL_F32 ||
	    in[3].dtype != KL_F32 || (out[0].dtype != KL_BF16 && out[0].dtype != KL_F64))
		return 2;
	if (in[0].ndim != 2 || in[1].ndim != 2 || out[0].ndim != 2 || kl_numel(&in[2]) != 1 ||
	    kl_numel(&in[3]) != 1)
		return 3;
	int64_t M = in[0].shape[0], K = in[0].shape[1], N = in[1].shape[0];
	if (in[1].shape[1] != K || out[0].shape[0] != M || out[0].shape[1] != N)
		return 3;

	const uint8_t *A = in[0].data, *B = in[1].data;
	double scale = (double)*(const float *)in[2].data * *(const float *)in[3].data;
	uint16_t *C = out[0].data;
	double *C64 = out[0].data;
	int exact = out[0].dtype == KL_F64;
	double *a = malloc((size_t)(M * K + N * K) * sizeof *a);
	if (!a)
		return 4;
	double *b = a + M * K;
	for (int64_t i = 0; i < M * K; i++)
		a[i] = kl_e4m3_to_f32(A[i]);
	for (int64_t i = 0; i < N * K; i++)
		b[i] = kl_e4m3_to_f32(B[i]);
	for (int64_t i = 0; i < M; i++)
		for (int64_t j = 0; j < N; j++) {
			double acc = 0.0;
			for (int64_t k = 0; k < K; k++)
				acc += a[i * K + k] * b[j * K + k];
			if (exact)
				C64[i * N + j] = acc * scale;
			else
				C[i * N + j] = kl_f32_to_bf16((float)(acc * scale));
		}
	free(a);
	return 0;
}
