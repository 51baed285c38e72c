/*
 * matmul/reference.c - the exact host reference: C = A B for row-major
 * A[M,K], B[K,N], C[M,N], each dot product accumulated in double.
 * With a KL_F64 output it writes the exact result unrounded: the float64
 * reference of the precision verdict (docs/TASKS.md, "Precision").
 */
#include "kloop.h"

int kl_run(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *stream)
{
	(void)stream;
	if (n_in != 2 || n_out != 1)
		return 1;
	if (in[0].dtype != KL_F32 || in[1].dtype != KL_F32 ||
	    (out[0].dtype != KL_F32 && out[0].dtype != KL_F64))
		return 2;
	if (in[0].ndim != 2 || in[1].ndim != 2 || out[0].ndim != 2)
		return 3;
	int64_t M = in[0].shape[0], K = in[0].shape[1], N = in[1].shape[1];
	if (in[1].shape[0] != K || out[0].shape[0] != M || out[0].shape[1] != N)
		return 3;

	const float *A = in[0].data, *B = in[1].data;
	float *C = out[0].data;
	double *C64 = out[0].data;
	int exact = out[0].dtype == KL_F64;
	for (int64_t i = 0; i < M; i++)
		for (int64_t j = 0; j < N; j++) {
			double acc = 0.0;
			for (int64_t k = 0; k < K; k++)
				acc += (double)A[i * K + k] * B[k * N + j];
			if (exact)
				C64[i * N + j] = acc;
			else
				C[i * N + j] = (float)acc;
		}
	return 0;
}
