/*
 * matmul/reference.c - the exact host reference: C = A B for row-major
 * A[M,K], B[K,N], C[M,N], each dot product accumulated in double.
 */
#include "kloop.h"

int kl_run(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *stream)
{
	(void)stream;
	if (n_in != 2 || n_out != 1)
		return 1;
	if (in[0].dtype != KL_F32 || in[1].dtype != KL_F32 || out[0].dtype != KL_F32)
		return 2;
	if (in[0].ndim != 2 || in[1].ndim != 2 || out[0].ndim != 2)
		return 3;
	int64_t M = in[0].shape[0], K = in[0].shape[1], N = in[1].shape[1];
	if (in[1].shape[0] != K || out[0].shape[0] != M || out[0].shape[1] != N)
		return 3;

	const float *A = in[0].data, *B = in[1].data;
	float *C = out[0].data;
	for (int64_t i = 0; i < M; i++)
		for (int64_t j = 0; j < N; j++) {
			double acc = 0.0;
			for (int64_t k = 0; k < K; k++)
				acc += (double)A[i * K + k] * B[k * N + j];
			C[i * N + j] = (float)acc;
		}
	return 0;
}
