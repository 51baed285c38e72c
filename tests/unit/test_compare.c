/*
 * test_compare.c - the tolerance logic: allclose per element, the relative
 * L2 error that catches all-zero and constant outputs where the reference is
 * tiny, NaN handling, and the first mismatch's index.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "compare.h"

int main(void)
{
	enum { N = 4096 };
	float *ref = malloc(N * sizeof *ref), *out = malloc(N * sizeof *out);
	struct task_tol tol = task_default_tol(KL_F32);
	struct compare_report r;
	/* a softmax row: every value about 1/N */
	for (int i = 0; i < N; i++)
		ref[i] = (1.0f + 0.5f * sinf((float)i)) / N;
	memcpy(out, ref, N * sizeof *out);
	compare_buffers(out, ref, KL_F32, N, &tol, &r);
	CHECK(r.pass && r.nMismatch == 0 && r.relL2 == 0 && r.firstBad == -1, "identical outputs pass");

	for (int i = 0; i < N; i++)
		out[i] = ref[i] * (1 + 1e-6f);
	compare_buffers(out, ref, KL_F32, N, &tol, &r);
	CHECK(r.pass && r.relL2 < 2e-6, "rounding-level differences pass (rel L2 %g)", r.relL2);

	/* all zeros where the reference is tiny: within a loose atol, but rel L2 = 1 */
	struct task_tol loose = {1e-3, 1e-3, 1e-4};
	memset(out, 0, N * sizeof *out);
	compare_buffers(out, ref, KL_F32, N, &loose, &r);
	CHECK(!r.pass && r.nMismatch == 0 && fabs(r.relL2 - 1) < 1e-9,
	      "an all-zero output fails on relative L2 even when every element is within atol");
	for (int i = 0; i < N; i++)
		out[i] = 1.0f / N;
	compare_buffers(out, ref, KL_F32, N, &loose, &r);
	CHECK(!r.pass && r.relL2 > 0.1, "a constant (mean) output fails (rel L2 %g)", r.relL2);

	/* NaN never passes, and the first mismatch is named */
	memcpy(out, ref, N * sizeof *out);
	out[100] = NAN;
	out[200] = 5;
	compare_buffers(out, ref, KL_F32, N, &tol, &r);
	CHECK(!r.pass && r.nMismatch == 2 && r.firstBad == 100 && isnan(r.firstActual) &&
		      r.firstExpected == ref[100] && isinf(r.relL2),
	      "NaN is a mismatch and the first mismatch is reported with expected and actual values");

	/* f16: the looser default tolerance */
	uint16_t h[4], hr[4];
	float vals[4] = {1.0f, -2.0f, 0.5f, 3.25f};
	for (int i = 0; i < 4; i++) {
		hr[i] = kl_f32_to_f16(vals[i]);
		h[i] = kl_f32_to_f16(vals[i] * 1.004f);
	}
	struct task_tol t16 = task_default_tol(KL_F16);
	compare_buffers(h, hr, KL_F16, 4, &t16, &r);
	CHECK(r.pass, "f16 within 0.4%% passes the f16 default tolerance");
	compare_buffers(h, hr, KL_F16, 4, &tol, &r);
	CHECK(!r.pass, "the same f16 values fail the f32 tolerance");

	/* integers are exact */
	int32_t a[3] = {1, 2, 3}, b[3] = {1, 2, 4};
	struct task_tol ti = task_default_tol(KL_I32);
	compare_buffers(a, b, KL_I32, 3, &ti, &r);
	CHECK(!r.pass && r.firstBad == 2, "integer outputs must match exactly");

	struct task_tensor tt = {.ndim = 2, .shape = {64, 4096}};
	char idx[64];
	compare_index_str(&tt, 4096 * 3 + 17, idx, sizeof idx);
	CHECK(!strcmp(idx, "[3, 17]"), "flat index 12305 of [64, 4096] is [3, 17] (got %s)", idx);
	free(ref);
	free(out);
	return check_done();
}
