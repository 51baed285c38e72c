/*
 * test_roofline.c - the distance to the device's limit (roofline.h) and what
 * a verdict's flags do to its rank (state.h): a time below the floor of
 * moving the task's bytes is a suspect, ranked only once a person cleared
 * it; reduced precision ranks only under `precision any`; the FLOPs of a
 * task shaped as a matrix product are found from its shapes.  (One best
 * and one baseline: test_state_best.c.)
 */
#include <math.h>
#include <string.h>

#include "check.h"
#include "fverdict.h"
#include "event.h"
#include "fold.h"
#include "report.h"
#include "roofline.h"
#include "state.h"
#include "util.h"

/* candidate id's verdict r (consumed) with its precision and roofline
 * objects (JSON text, NULL: none) set through the encoder, folded into st */
static void fold_verdict(struct state *st, int id, cJSON *r, const char *zPrecision,
                         const char *zRoofline)
{
	if (zPrecision)
		fv_detail(r, "precision", zPrecision);
	if (zRoofline)
		fv_detail(r, "roofline", zRoofline);
	char *e = fv_event(id, 2, r);
	fold_check(st, e);
	free(e);
}

static struct task_tensor tensor(char *zName, int ndim, int64_t a, int64_t b)
{
	struct task_tensor t = {.zName = zName, .dtype = KL_F32, .ndim = ndim, .shape = {a, b}};
	return t;
}

int main(void)
{
	/* a matrix product: 2 M N K from the shapes, either way round */
	struct task t = {.nIn = 2, .nOut = 1};
	t.aIn[0] = tensor("A", 2, 1024, 4096);
	t.aIn[1] = tensor("B", 2, 4096, 2048);
	t.aOut[0] = tensor("C", 2, 1024, 2048);
	CHECK(roofline_flops(&t) == 2.0 * 1024 * 2048 * 4096, "A[M,K] B[K,N]: 2 M N K FLOPs");
	struct task lin = {.nIn = 3, .nOut = 1};
	lin.aIn[0] = tensor("x", 2, 1024, 8192);
	lin.aIn[1] = tensor("bias", 1, 4096, 0);
	lin.aIn[2] = tensor("gemm.weight", 2, 4096, 8192);
	lin.aOut[0] = tensor("y", 2, 1024, 4096);
	CHECK(roofline_flops(&lin) == 2.0 * 1024 * 4096 * 8192,
	      "x[M,K], bias[N], W[N,K] as nn.Linear holds it: 2 M N K");
	struct task sm = {.nIn = 1, .nOut = 1};
	sm.aIn[0] = tensor("x", 2, 4096, 8192);
	sm.aOut[0] = tensor("y", 2, 4096, 8192);
	CHECK(roofline_flops(&sm) == 0, "a softmax's FLOPs are not guessed");
	sm.flops = 1e9;
	CHECK(roofline_flops(&sm) == 1e9, "a task's own \"flops\" is taken as it is");
	sm.flops = 0;

	/* the memory floor of softmax 4096x8192 fp32 on an H200 (4.8 TB/s) */
	struct roofline_dev d = {.bwGbs = 4800, .bwMeasuredGbs = 4100, .tflops = 66.9};
	cJSON *r = roofline_json(&sm, &d, 0.0975);
	double fl = cJSON_GetNumberValue(cJSON_GetObjectItem(r, "floor_ms"));
	double fr = cJSON_GetNumberValue(cJSON_GetObjectItem(r, "fraction"));
	CHECK(fabs(fl - 268435456.0 / 4.8e12 * 1e3) < 1e-9 && fabs(fr - fl / 0.0975) < 1e-12 &&
	          !cJSON_GetObjectItem(r, "suspect"),
	      "softmax at 0.0975 ms: floor %.4g ms, %.0f%% of the memory roofline, no suspect", fl,
	      fr * 100);
	char line[300];
	roofline_line(r, line, sizeof line);
	CHECK(strstr(line, "57% of the memory roofline (268 MB at 4800 GB/s"), "in words: %s",
	      line);
	cJSON_Delete(r);
	r = roofline_json(&sm, &d, 0.0184);
	const char *why = cJSON_GetStringValue(cJSON_GetObjectItem(r, "suspect"));
	CHECK(why && strstr(why, "0.0184 ms is below the 0.05592 ms"),
	      "the forged 0.0184 ms of issue 25 is a suspect: %s", why ? why : "(none)");
	cJSON_Delete(r);
	/* the compute floor of the matmul at the fp32 peak */
	r = roofline_json(&t, &d, 0.2);
	why = cJSON_GetStringValue(cJSON_GetObjectItem(r, "suspect"));
	const char *bound = cJSON_GetStringValue(cJSON_GetObjectItem(r, "bound"));
	CHECK(bound && !strcmp(bound, "compute") && why && strstr(why, "fp32 peak"),
	      "a 1024x4096x2048 fp32 matmul in 0.2 ms beats the fp32 peak: compute-bound, a "
	      "suspect (%s)",
	      why ? why : "(none)");
	cJSON_Delete(r);
	struct task h16 = t;
	h16.aIn[0].dtype = h16.aIn[1].dtype = h16.aOut[0].dtype = KL_F16;
	r = roofline_json(&h16, &d, 0.2);
	bound = cJSON_GetStringValue(cJSON_GetObjectItem(r, "bound"));
	CHECK(bound && !strcmp(bound, "memory") && !cJSON_GetObjectItem(r, "suspect"),
	      "the same matmul in f16 (tensor cores, rightly): no compute floor, no suspect");
	cJSON_Delete(r);
	struct roofline_dev none = {0};
	CHECK(!roofline_json(&sm, &none, 1.0),
	      "no bandwidth nor peak known (the host): no roofline");

	/* what the flags do to the rank */
	struct state st;
	state_init(&st);
	fold_check(&st, "{\"type\":\"session_started\",\"task\":\"t\",\"ts\":1}");
	for (int i = 1; i <= 3; i++) {
		char e[160];
		snprintf(e, sizeof e,
		         "{\"type\":\"candidate_added\",\"id\":%d,\"source\":\"x\",\"ts\":1}", i);
		fold_check(&st, e);
	}
	/* as the worker makes them (fverdict.h): the reference at 2 ms; #2's
	 * precision and #3's roofline are what its harness found */
	fold_verdict(&st, 1, fv_make(&(struct fv){.median = 1, .base = 2}), NULL, NULL);
	fold_verdict(&st, 2, fv_make(&(struct fv){.median = 0.4, .base = 2}),
	             "{\"verdict\":\"reduced\",\"rel_l2\":2.8e-5,\"reference_rel_l2\":1.7e-7,"
	             "\"rounding_rel_l2\":2.7e-8,\"ratio\":164,\"limit\":8,\"cause\":\"as large "
	             "as TF32 or f16 inputs (10-bit mantissa) make\"}",
	             NULL);
	fold_verdict(&st, 3, fv_make(&(struct fv){.median = 0.04, .base = 2}), NULL,
	             "{\"fraction\":1.4,\"suspect\":\"below the floor\"}");
	CHECK(state_cand_rankable(&st, state_cand(&st, 1)), "a faithful, verified time ranks");
	CHECK(!state_cand_rankable(&st, state_cand(&st, 2)) && state_cand(&st, 2)->reduced,
	      "reduced precision does not rank without a search's `precision any`");
	CHECK(!state_cand_rankable(&st, state_cand(&st, 3)) && state_cand(&st, 3)->belowFloor,
	      "a time below the device's floor does not rank");
	/* what a person sees: the Results pane and the Population row */
	strbuf rs = STRBUF_INIT;
	report_results(&st, state_cand(&st, 2), &rs);
	CHECK(strstr(rs.buf, "PRECISION reduced precision: relative L2 error 2.8e-05 against "
	                     "float64, 1.6e+02x the reference's own error (1.7e-07; the limit is "
	                     "8x): as large as TF32 or f16 inputs") &&
	          strstr(rs.buf, "never a parent, the best or a win"),
	      "the Results pane names the reduced precision and what it costs: %s", rs.buf);
	sb_reset(&rs);
	report_results(&st, state_cand(&st, 3), &rs);
	CHECK(strstr(rs.buf, "SUSPECT   below the floor"), "... and a time below the floor");
	sb_reset(&rs);
	report_table_row(state_cand(&st, 2), NULL, &rs);
	CHECK(strstr(rs.buf, "5x~"), "Population marks reduced precision with ~: %s", rs.buf);
	sb_reset(&rs);
	report_table_row(state_cand(&st, 3), NULL, &rs);
	CHECK(strstr(rs.buf, "50x!") && strstr(rs.buf, "140%"),
	      "... a suspect with !, and its share of the roofline: %s", rs.buf);
	sb_free(&rs);
	fold_check(&st,
	           "{\"type\":\"search_started\",\"settings\":{\"precision\":\"any\"},\"ts\":3}");
	CHECK(state_cand_rankable(&st, state_cand(&st, 2)), "... reduced precision ranks under "
	                                                    "`precision any`");
	fold_check(&st,
	           "{\"type\":\"suspect_flagged\",\"candidate\":3,\"speedup\":50,\"why\":\"w\","
	           "\"ts\":4}");
	CHECK(!state_cand_rankable(&st, state_cand(&st, 3)), "a flagged suspect does not rank");
	fold_check(&st, "{\"type\":\"suspect_cleared\",\"candidate\":3,\"ts\":5}");
	CHECK(state_cand_rankable(&st, state_cand(&st, 3)),
	      "... until a person cleared it: then it ranks");
	fold_check(
	    &st, "{\"type\":\"search_set\",\"key\":\"precision\",\"value\":\"faithful\",\"ts\":6}");
	CHECK(!state_cand_rankable(&st, state_cand(&st, 2)),
	      "`set precision faithful` takes reduced precision out of the ranking again");
	state_free(&st);
	return check_done();
}
