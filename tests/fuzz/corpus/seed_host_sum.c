/* Host-backend candidate: row sums in plain C. */
#include <stddef.h>
#include "kloop.h"

#define BLOCK_ROWS 8
enum { UNROLL = 4 };

static float row_sum(const float *x, int cols)
{
	float acc[UNROLL] = {0};
	int c = 0;
	for (; c + UNROLL <= cols; c += UNROLL)
		for (int u = 0; u < UNROLL; u++)
			acc[u] += x[c + u];
	for (; c < cols; c++)
		acc[0] += x[c];
	return acc[0] + acc[1] + acc[2] + acc[3];
}

int kl_run(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *stream)
{
	(void)n_in;
	(void)n_out;
	(void)stream;
	int rows = (int)in[0].shape[0], cols = (int)in[0].shape[1];
	const float *x = in[0].data;
	float *y = out[0].data;
	for (int r0 = 0; r0 < rows; r0 += BLOCK_ROWS)
		for (int r = r0; r < rows && r < r0 + BLOCK_ROWS; r++)
			y[r] = row_sum(x + (size_t)r * cols, cols);
	return 0;
}
