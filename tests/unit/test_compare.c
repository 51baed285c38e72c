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
	CHECK(r.pass && r.nMismatch == 0 && r.relL2 == 0 && r.firstBad == -1,
	      "identical outputs pass");

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
	CHECK(
	    !r.pass && r.nMismatch == 2 && r.firstBad == 100 && isnan(r.firstActual) &&
	        r.firstExpected == ref[100] && isinf(r.relL2),
	    "NaN is a mismatch and the first mismatch is reported with expected and actual values");

	/* a NaN in the reference never matches, not even the NaN poison a
	 * candidate that writes nothing leaves (torch.allclose: NaN != NaN) */
	memcpy(out, ref, N * sizeof *out);
	float keep = ref[7];
	ref[7] = NAN;
	out[7] = NAN;
	compare_buffers(out, ref, KL_F32, N, &tol, &r);
	CHECK(!r.pass && r.nRefNaN == 1 && r.nMismatch == 1 && r.firstBad == 7 && isinf(r.relL2),
	      "NaN in the reference is a mismatch, counted as the reference's (%lld)",
	      (long long)r.nRefNaN);
	out[7] = ref[6];
	compare_buffers(out, ref, KL_F32, N, &tol, &r);
	CHECK(!r.pass && r.nRefNaN == 1, "... whatever the output holds there");
	ref[7] = keep;

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

	/* how much of its tolerance the worst element uses */
	float kr[4] = {0.0f, 100.0f, -3.0f, 1e-4f}, ko[4];
	struct task_tol kb = task_kernelbench_tol(KL_F32);
	CHECK(kb.atol == 1e-2 && kb.rtol == 1e-2 && isinf(kb.rel_l2),
	      "KernelBench's f32 tolerance: atol = rtol = 1e-2, relative L2 not judged");
	memcpy(ko, kr, sizeof ko);
	ko[0] = 0.005f; /* 0.005 of atol 0.01 + 0: half */
	ko[1] = 100.5f; /* 0.5 of 0.01 + 1.0: about 0.495 */
	compare_buffers(ko, kr, KL_F32, 4, &kb, &r);
	CHECK(r.pass && fabs(r.tolFrac - 0.5) < 1e-3,
	      "an error of half the tolerance near zero: pass, tolFrac 0.5 (got %g)", r.tolFrac);
	ko[3] = 0.03f; /* near zero, 3x atol */
	compare_buffers(ko, kr, KL_F32, 4, &kb, &r);
	CHECK(!r.pass && r.nMismatch == 1 && fabs(r.tolFrac - (0.03 - 1e-4) / (0.01 + 1e-6)) < 1e-3,
	      "3x the tolerance: fail, tolFrac about 3 (got %g)", r.tolFrac);
	ko[3] = NAN;
	compare_buffers(ko, kr, KL_F32, 4, &kb, &r);
	CHECK(!r.pass && isinf(r.tolFrac), "a NaN output: tolFrac is infinite");
	struct task_tol zero = {0, 0, 0};
	memcpy(ko, kr, sizeof ko);
	compare_buffers(ko, kr, KL_F32, 4, &zero, &r);
	CHECK(r.pass && r.tolFrac == 0, "exact output under a zero tolerance: tolFrac 0");

	struct task_tensor tt = {.ndim = 2, .shape = {64, 4096}};
	char idx[64];
	compare_index_str(&tt, 4096 * 3 + 17, idx, sizeof idx);
	CHECK(!strcmp(idx, "[3, 17]"), "flat index 12305 of [64, 4096] is [3, 17] (got %s)", idx);
	struct task_tensor scalar = {.ndim = 0};
	compare_index_str(&scalar, 0, idx, sizeof idx);
	CHECK(task_numel(&scalar) == 1 && !strcmp(idx, "[]"),
	      "a 0-dim tensor has one element, index [] (got %s)", idx);
	free(ref);
	free(out);
	return check_done();
}
