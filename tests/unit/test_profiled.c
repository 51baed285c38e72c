/*
 * test_profiled.c - the profiled runs after a timing (issue 39,
 * KLOOP_CUPTI=range: harness_time.c's timing_profiled), with in-process
 * candidates on the host backend, whose "profiler" is the test's
 * (fcand.h: profMs, profSkip): when their median stands for the timing's,
 * when the events' stands and why, and that every profiled run is checked.
 * The Range Profiler itself needs a GPU (bench/gpu/rangeprof.sh,
 * bench/gpu/usec.sh).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "check.h"
#include "fcand.h"
#include "harness.h"
#include "harness_priv.h"
#include "util.h"

static double num(const cJSON *o, const char *k)
{
	return cJSON_GetNumberValue(cJSON_GetObjectItem(o, k));
}

static const char *str(const cJSON *o, const char *k)
{
	const char *z = cJSON_GetStringValue(cJSON_GetObjectItem(o, k));
	return z ? z : "";
}

/* the H200's figures (bench/RESULTS.md, rangeprof.sh): a kernel's
 * durations stand for its events' where they are as far apart as a
 * launch, and not where the run's time lies elsewhere */
static void test_agrees(void)
{
	char why[300];
	static const struct {
		double pm, em;
		int ok;
		const char *what, *needle;
	} c[] = {
	    {0.00522, 0.00669, 1, "the row softmax: 5.22 us of durations in 6.69 us of events", ""},
	    {0.01795, 0.01968, 1, "the sum over a dimension: 17.95 in 19.68 us", ""},
	    {0.02608, 0.02758, 1, "GELU over 8M floats: 26.08 in 27.58 us", ""},
	    {0.00147, 0.00291, 1, "an empty kernel: 1.47 in 2.91 us", ""},
	    {1.95, 2.0, 1, "a 2 ms kernel 2.5% under its events", ""},
	    {0.0001, 2.0, 0, "0.1 us of kernels in a 2 ms run: the time lies elsewhere",
	     "lies outside its kernels"},
	    {0.005, 0.020, 0, "5 us of kernels in 20 us of events: more than a launch",
	     "lies outside its kernels"},
	    {2.2, 2.0, 0, "kernels longer than the events around them", "longer than"},
	};
	for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
		int ok = harness_profiled_agrees(c[i].pm, c[i].em, why, sizeof why);
		CHECK(ok == c[i].ok && (ok ? !why[0] : strstr(why, c[i].needle) != NULL),
		      "%s: %s (%s)", c[i].what, c[i].ok ? "they stand" : "the events' stand", why);
	}
}

int main(void)
{
	char err[KL_ERRLEN];
	struct task t;
	struct backend *b = backend_host_new(err);
	fcand_double_task(&t);
	test_agrees();

	struct harness_opts o;
	harness_default_opts(&o, "host");
	CHECK(o.profiledRuns == 0, "no run is profiled unless asked (KLOOP_CUPTI=range)");
	o.budgetS = 0.2;
	o.profiledRuns = 12;
	struct harness *h = harness_new(&t, b, &o, err);
	CHECK(h && harness_generate_inputs(h, err) == 0, "a harness with its inputs (%s)",
	      h ? "" : err);
	struct fcand fref, fc;
	CHECK(harness_run_reference(h, fcand(&fref, h, b, ref_double), err) == 0,
	      "reference data computed");
	harness_set_reference(h, &fref.hc);

	/* a runner without the profiler: the events' time, and why */
	cJSON *r = harness_eval(h, fcand(&fc, h, b, slow_double), 1, NULL, NULL);
	cJSON *tm = cJSON_GetObjectItem(r, "timing"), *p = cJSON_GetObjectItem(tm, "profiled");
	CHECK(!strcmp(status(r), "correct") && p && cJSON_IsFalse(cJSON_GetObjectItem(p, "used")) &&
	          strstr(str(p, "why_not"), "no Range Profiler") &&
	          !strcmp(str(tm, "method"), "stream") && num(tm, "median_ms") >= 2,
	      "no profiler in the runner: the timing is the events' (%s, %g ms), and the result "
	      "says why not (%s)",
	      str(tm, "method"), num(tm, "median_ms"), str(p, "why_not"));
	cJSON_Delete(r);

	/* a runner whose kernels take 0.1 us of a 2 ms run: the events' stand */
	fcand(&fc, h, b, slow_double);
	fc.profMs = 0.0001;
	r = harness_eval(h, &fc.hc, 1, NULL, NULL);
	tm = cJSON_GetObjectItem(r, "timing");
	p = cJSON_GetObjectItem(tm, "profiled");
	CHECK(!strcmp(status(r), "correct") && p && cJSON_IsFalse(cJSON_GetObjectItem(p, "used")) &&
	          strstr(str(p, "why_not"), "lies outside its kernels") &&
	          num(tm, "median_ms") >= 2 && num(p, "runs") >= 1,
	      "kernels of 0.1 us in a 2 ms run: the events' %g ms stands (%s)",
	      num(tm, "median_ms"), str(p, "why_not"));
	CHECK(num(p, "checked") == o.profiledRuns,
	      "... and each of its %d profiled runs was checked (%g)", o.profiledRuns,
	      num(p, "checked"));
	cJSON_Delete(r);

	/* a runner that does nothing when it is profiled: caught */
	fcand(&fc, h, b, slow_double);
	fc.profMs = 1.9;
	fc.profSkip = 1;
	r = harness_eval(h, &fc.hc, 1, NULL, NULL);
	CHECK(!strcmp(status(r), "incorrect") && strstr(reason(r), "profiled run"),
	      "a candidate that does no work in its profiled runs is incorrect: %s", reason(r));
	cJSON_Delete(r);

	/* the reference (trusted) is profiled too: both sides of a speedup */
	fcand(&fref, h, b, ref_double);
	fref.hc.trusted = 1;
	char e2[KL_ERRLEN];
	tm = harness_time_only(h, &fref.hc, e2);
	p = cJSON_GetObjectItem(tm, "profiled");
	CHECK(tm && p && num(p, "checked") == 0,
	      "the reference's timing has its profiled runs too, none checked (it is the judge)");
	cJSON_Delete(tm);

	/* a quick timing profiles nothing */
	fcand(&fc, h, b, slow_double);
	fc.profMs = 1.9;
	cJSON *fail = NULL;
	tm = harness_time(h, &fc.hc, 5, NULL, NULL, &fail);
	CHECK(tm && !cJSON_GetObjectItem(tm, "profiled"), "a quick timing has no profiled runs");
	cJSON_Delete(tm);
	cJSON_Delete(fail);
	harness_drop_timing(h);
	harness_free(h);
	b->destroy(b);
	return check_done();
}
