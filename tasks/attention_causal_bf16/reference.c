/*
 * attention_causal_bf16/reference.c - the exact host reference: for each batch,
 * head and query row i, the scores s_j = q_i . k_j / sqrt(head_dim) in
 * double (keys j <= i only when CAUSAL), their softmax, and o_i = sum_j p_j
 * v_j, rounded to bf16. With a KL_F64 output it writes the exact result
 * unrounded: the float64 reference of the precision verdict.
 */
#include <math.h>
#include <stdlib.h>

#include "kloop.h"

#define CAUSAL 1

int kl_run(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *stream)
{
	(void)stream;
	if (n_in != 3 || n_out != 1)
		return 1;
	for (int i = 0; i < 3; i++)
		if (in[i].dtype != KL_BF16 || in[i].ndim != 4)
			return 2;
	if ((out[0].dtype != KL_BF16 && out[0].dtype != KL_F64) || out[0].ndim != 4)
		return 2;
	for (int i = 0; i < 4; i++)
		if (in[1].shape[i] != in[0].shape[i] || in[2].shape[i] != in[0].shape[i] ||
		    out[0].shape[i] != in[0].shape[i])
			return 3;
	int64_t bh = in[0].shape[0] * in[0].shape[1], seq = in[0].shape[2], hd = in[0].shape[3];
	const uint16_t *Q = in[0].data, *K = in[1].data, *V = in[2].data;
	uint16_t *O = out[0].data;
	double *O64 = out[0].data;
	int exact = out[0].dtype == KL_F64;
	double scale = 1.0 / sqrt((double)hd);
	double *s = malloc((size_t)(seq + hd) * sizeof *s);
	if (!s)
		return 4;
	double *o = s + seq;
	for (int64_t b = 0; b < bh; b++) {
		const uint16_t *q = Q + b * seq * hd, *k = K + b * seq * hd, *v = V + b * seq * hd;
		for (int64_t i = 0; i < seq; i++) {
			int64_t n = CAUSAL ? i + 1 : seq;
			double m = -INFINITY, l = 0.0;
			for (int64_t j = 0; j < n; j++) {
				double d = 0.0;
				for (int64_t c = 0; c < hd; c++)
					d += (double)kl_bf16_to_f32(q[i * hd + c]) *
					     kl_bf16_to_f32(k[j * hd + c]);
				s[j] = d * scale;
				if (s[j] > m)
					m = s[j];
			}
			for (int64_t c = 0; c < hd; c++)
				o[c] = 0.0;
			for (int64_t j = 0; j < n; j++) {
				double p = exp(s[j] - m);
				l += p;
				for (int64_t c = 0; c < hd; c++)
					o[c] += p * kl_bf16_to_f32(v[j * hd + c]);
			}
			int64_t at = (b * seq + i) * hd;
			for (int64_t c = 0; c < hd; c++) {
				if (exact)
					O64[at + c] = o[c] / l;
				else
					O[at + c] = kl_f32_to_bf16((float)(o[c] / l));
			}
		}
	}
	free(s);
	return 0;
}
