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
	/* fp8 e4m3fn: every one of the 254 finite codes converts to float and
	 * back to itself; float rounds to the nearest code (ties to even),
	 * saturates at +-448, and NaN stays NaN */
	int exact = 1, bad = -1;
	for (int c = 0; c < 256; c++) {
		if ((c & 0x7f) == 0x7f)
			continue;
		float f = kl_e4m3_to_f32((uint8_t)c);
		if (kl_f32_to_e4m3(f) != c && !(f == 0 && (c & 0x7f) == 0))
			exact = 0, bad = c;
	}
	CHECK(exact, "every finite e4m3 code round-trips through float (first that did not: %d)",
	      bad);
	CHECK(kl_e4m3_to_f32(0x7e) == 448 && kl_e4m3_to_f32(0x01) == 0x1p-9f &&
	          kl_e4m3_to_f32(0x08) == 0x1p-6f && kl_e4m3_to_f32(0xb8) == -1,
	      "e4m3: 0x7e is 448, 0x01 2^-9, 0x08 2^-6, 0xb8 -1 (got %g %g %g %g)",
	      kl_e4m3_to_f32(0x7e), kl_e4m3_to_f32(0x01), kl_e4m3_to_f32(0x08),
	      kl_e4m3_to_f32(0xb8));
	CHECK(isnan(kl_e4m3_to_f32(0x7f)) && isnan(kl_e4m3_to_f32(0xff)) &&
	          (kl_f32_to_e4m3(NAN) & 0x7f) == 0x7f,
	      "e4m3: 0x7f and 0xff are NaN, and NaN converts to NaN");
	CHECK(kl_f32_to_e4m3(1e6f) == 0x7e && kl_f32_to_e4m3(-500.0f) == 0xfe &&
	          kl_f32_to_e4m3(INFINITY) == 0x7e && kl_f32_to_e4m3(460.0f) == 0x7e,
	      "e4m3 saturates: 1e6, 460 and infinity are 448, -500 is -448");
	/* 1.0625 lies halfway between 1 (0x38, even) and 1.125 (0x39): to 1;
	 * 1.1875 between 1.125 and 1.25 (0x3a, even): to 1.25; among the
	 * subnormals (steps of 2^-9) 1.5 steps to 2, half a step to 0 */
	CHECK(kl_f32_to_e4m3(1.0625f) == 0x38 && kl_f32_to_e4m3(1.1875f) == 0x3a &&
	          kl_f32_to_e4m3(1.07f) == 0x39 && kl_f32_to_e4m3(1.5f * 0x1p-9f) == 0x02 &&
	          kl_f32_to_e4m3(0.5f * 0x1p-9f) == 0x00 &&
	          kl_f32_to_e4m3(-0.75f * 0x1p-9f) == 0x81,
	      "e4m3 rounds to nearest, ties to even, subnormals too (1.0625 -> %#x, 1.1875 -> %#x)",
	      kl_f32_to_e4m3(1.0625f), kl_f32_to_e4m3(1.1875f));
	uint8_t e8[4] = {0x38, 0x40, 0xc0, 0x7f}, r8[4] = {0x38, 0x40, 0xc0, 0x38};
	struct task_tol t8 = task_default_tol(KL_E4M3);
	compare_buffers(e8, r8, KL_E4M3, 3, &t8, &r);
	CHECK(r.pass && r.relL2 == 0, "e4m3 outputs equal to the reference pass");
	compare_buffers(e8, r8, KL_E4M3, 4, &t8, &r);
	CHECK(!r.pass && r.firstBad == 3 && r.nNonFinite == 1,
	      "an e4m3 NaN where the reference is 1 fails, named at [3]");
	free(ref);
	free(out);
	return check_done();
}
