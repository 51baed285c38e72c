/*
 * attention_bf16/seed.c - straightforward host seed: for each batch, head and
 * query row, the scaled scores in float (keys j <= i only when CAUSAL), a
 * max-subtracted softmax, and the weighted sum of the value rows in float,
 * rounded to bf16.
 */
#include <math.h>
#include <stdlib.h>

#include "kloop.h"

#define CAUSAL 0

int kl_run(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *stream)
{
	(void)stream;
	if (n_in != 3 || n_out != 1 || in[0].ndim != 4)
		return 1;
	int64_t bh = in[0].shape[0] * in[0].shape[1], seq = in[0].shape[2], hd = in[0].shape[3];
	const uint16_t *Q = in[0].data, *K = in[1].data, *V = in[2].data;
	uint16_t *O = out[0].data;
	float scale = 1.0f / sqrtf((float)hd);
	float *s = malloc((size_t)(seq + 2 * hd) * sizeof *s);
	if (!s)
		return 4;
	float *o = s + seq, *q = o + hd;
	for (int64_t b = 0; b < bh; b++) {
		const uint16_t *k = K + b * seq * hd, *v = V + b * seq * hd;
		for (int64_t i = 0; i < seq; i++) {
			int64_t n = CAUSAL ? i + 1 : seq;
			for (int64_t c = 0; c < hd; c++)
				q[c] = kl_bf16_to_f32(Q[(b * seq + i) * hd + c]) * scale;
			float m = -INFINITY, l = 0.0f;
			for (int64_t j = 0; j < n; j++) {
				float d = 0.0f;
				for (int64_t c = 0; c < hd; c++)
					d += q[c] * kl_bf16_to_f32(k[j * hd + c]);
				s[j] = d;
				m = d > m ? d : m;
			}
			for (int64_t c = 0; c < hd; c++)
				o[c] = 0.0f;
			for (int64_t j = 0; j < n; j++) {
				float p = expf(s[j] - m);
				l += p;
				for (int64_t c = 0; c < hd; c++)
					o[c] += p * kl_bf16_to_f32(v[j * hd + c]);
			}
			for (int64_t c = 0; c < hd; c++)
				O[(b * seq + i) * hd + c] = kl_f32_to_bf16(o[c] / l);
		}
	}
	free(s);
	return 0;
}
