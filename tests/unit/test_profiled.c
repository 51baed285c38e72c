/*
 * test_profiled.c - the profiled runs after a timing (issue 39,
 * KLOOP_CUPTI=range: harness_time.c's timing_profiled), with in-process
 * candidates on the host backend, whose "profiler" is the test's
 * (fcand.h: profMs, profSkip): when their median stands for the timing's,
 * when the events' stands and why, and that every profiled run is checked;
 * each kernel's median in launch order (profN, profKms), and a timing
 * whose probes caught a passing stall (strictLagMs) against one whose work
 * is off its stream in every run.
 * The Range Profiler itself needs a GPU (bench/gpu/rangeprof.sh,
 * bench/gpu/usec.sh).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "check.h"
#include "describe.h"
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

/* a timing gone device-wide (its strict probes slower than its fast runs)
 * keeps its device-wide time unless the probes' excess is what launching
 * its kernels on an idle device adds: an H200's 94_MSELoss, two kernels */
static void test_strict_ok(void)
{
	char why[300];
	static const struct {
		double probe, fast;
		int kernels, ok;
		const char *what;
	} c[] = {
	    {0.01558, 0.0091, 2, 1, "two microsecond kernels: 15.6 us probes beside 9.1 us events"},
	    {0.01558, 0.0091, 1, 0, "one kernel so: the excess is work off its stream"},
	    {0.01558, 0.0091, 0, 0, "kernels unknown: counted as one"},
	    {0.30, 0.012, 1, 0, "KernelBench's own stream: 0.3 ms of probes, 12 us of events"},
	    {1.0, 0.1, 10, 0, "ten launches excuse no 0.9 ms"},
	};
	for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
		int ok = harness_profiled_strict_ok(c[i].probe, c[i].fast, c[i].kernels, why,
		                                    sizeof why);
		CHECK(ok == c[i].ok &&
		          (ok ? !why[0] : strstr(why, "not all on its stream") != NULL),
		      "%s: %s (%s)", c[i].what,
		      c[i].ok ? "its kernels' durations may stand" : "device-wide", why);
	}
}

/* the strict probes against the fast runs, an H200's figures (2026-11-30):
 * a kernel on a stream of its own is caught at any size on the GPU; honest
 * kernels, one or two, keep their stream's time */
static void test_probes(void)
{
	static const struct {
		double probe, fast;
		int gpu, strict;
		const char *what;
	} c[] = {
	    {0.004096, 0.001248, 1, 1, "own_stream.cu at the host shapes: 4.1 us beside 1.25 us"},
	    {0.30, 0.012, 1, 1, "own_stream.cu at the full shapes: 0.3 ms beside 12 us"},
	    {0.006016, 0.00664, 1, 0, "the softmax seed: 6.0 us beside 6.64 us"},
	    {0.00453, 0.00406, 1, 0, "GELU: 4.5 us beside 4.1 us"},
	    {0.01357, 0.00915, 1, 0, "94_MSELoss, two kernels: 13.6 us beside 9.15 us"},
	    {0.4, 0.3, 1, 1, "0.1 ms more in 0.3 ms"},
	    {0.008, 0.004, 0, 0, "the host: 8 us beside 4 us is a loaded VM's noise"},
	    {0.008, 0.004, 1, 1, "the GPU: 8 us beside 4 us is not"},
	};
	for (size_t i = 0; i < sizeof c / sizeof *c; i++)
		CHECK(harness_probes_disagree(c[i].probe, c[i].fast, c[i].gpu) == c[i].strict,
		      "%s: %s", c[i].what, c[i].strict ? "timed device-wide" : "its stream's time");
}

/* a verdict's line as `kloop eval` prints it, into sb */
static void said_line(void *arg, const char *zLabel, const char *zText, int alarm)
{
	(void)alarm;
	sb_addf((strbuf *)arg, "%-9s %s\n", zLabel, zText);
}

/* slow_double's evaluation (about 2 ms a run) by a runner whose profiled
 * runs read profMs: the result, its timing and profiled objects */
static cJSON *eval_prof(struct harness *h, struct backend *b, struct fcand *fc, double profMs,
                        cJSON **pTm, cJSON **pP)
{
	fcand(fc, h, b, slow_double);
	fc->profMs = profMs;
	cJSON *r = harness_eval(h, &fc->hc, 1, NULL, NULL);
	*pTm = cJSON_GetObjectItem(r, "timing");
	*pP = cJSON_GetObjectItem(*pTm, "profiled");
	return r;
}

int main(void)
{
	char err[KL_ERRLEN];
	struct task t;
	struct backend *b = backend_host_new(err);
	fcand_double_task(&t);
	test_agrees();
	test_strict_ok();
	test_probes();

	struct harness_opts o;
	harness_default_opts(&o, "host");
	CHECK(o.profiledRuns == 0 && o.profiledBelowMs == 0,
	      "no run is profiled unless the worker asks (on the GPU: after a short timing)");
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
	r = eval_prof(h, b, &fc, 0.0001, &tm, &p);
	CHECK(!strcmp(status(r), "correct") && p && cJSON_IsFalse(cJSON_GetObjectItem(p, "used")) &&
	          strstr(str(p, "why_not"), "lies outside its kernels") &&
	          num(tm, "median_ms") >= 2 && num(p, "runs") >= 1,
	      "kernels of 0.1 us in a 2 ms run: the events' %g ms stands (%s)",
	      num(tm, "median_ms"), str(p, "why_not"));
	CHECK(num(p, "checked") == o.profiledRuns,
	      "... and each of its %d profiled runs was checked (%g)", o.profiledRuns,
	      num(p, "checked"));
	cJSON_Delete(r);

	/* kernels a little under the events: their durations stand */
	r = eval_prof(h, b, &fc, 1.95, &tm, &p);
	CHECK(!strcmp(status(r), "correct") && p && cJSON_IsTrue(cJSON_GetObjectItem(p, "used")) &&
	          !strcmp(str(tm, "method"), "kernel durations") && num(tm, "median_ms") == 1.95 &&
	          num(p, "events_median_ms") >= 1.95,
	      "kernels of 1.95 ms in a run of about 2: the timing is theirs (%s, %g ms; events %g)",
	      str(tm, "method"), num(tm, "median_ms"), num(p, "events_median_ms"));
	cJSON_Delete(r);

	/* kernels longer than the events (work on a stream of its own that the
	 * probes' allowance hid): the longer time stands, never the events' */
	r = eval_prof(h, b, &fc, 5.0, &tm, &p);
	CHECK(!strcmp(status(r), "correct") && p && cJSON_IsTrue(cJSON_GetObjectItem(p, "used")) &&
	          !strcmp(str(tm, "method"), "kernel durations") && num(tm, "median_ms") == 5.0 &&
	          strstr(str(p, "why"), "longer than") &&
	          strstr(str(tm, "note"), "the longer time stands"),
	      "kernels of 5 ms in a 2 ms run: the 5 ms stands, and says why (%s, %g ms: %s; %s)",
	      str(tm, "method"), num(tm, "median_ms"), str(p, "why"), str(tm, "note"));
	cJSON_Delete(r);

	/* two kernels a run (1.25 and 0.70 ms; every fourth run a third):
	 * each kernel's median in launch order, over the runs of two */
	fcand(&fc, h, b, slow_double);
	fc.profN = 2;
	fc.profKms[0] = 1.25, fc.profKms[1] = 0.70;
	fc.profOddEvery = 4;
	fc.profMs = 1.95;
	r = harness_eval(h, &fc.hc, 1, NULL, NULL);
	tm = cJSON_GetObjectItem(r, "timing");
	p = cJSON_GetObjectItem(tm, "profiled");
	const cJSON *pk = cJSON_GetObjectItem(p, "per_kernel");
	const cJSON *pa = cJSON_GetObjectItem(pk, "median_ms");
	double k0 = cJSON_GetArraySize(pa) > 0 ? cJSON_GetArrayItem(pa, 0)->valuedouble : -1;
	double k1 = cJSON_GetArraySize(pa) > 1 ? cJSON_GetArrayItem(pa, 1)->valuedouble : -1;
	CHECK(!strcmp(status(r), "correct") && cJSON_IsTrue(cJSON_GetObjectItem(p, "used")) &&
	          num(p, "kernels") == 2 && cJSON_GetArraySize(pa) == 2 &&
	          fabs(k0 / 1.25 - 1) <= 0.011 && fabs(k1 / 0.70 - 1) <= 0.011 &&
	          !strcmp(str(pk, "order"), "launch") && num(pk, "runs") >= 1 &&
	          num(pk, "runs") < num(p, "runs") &&
	          fabs(num(tm, "median_ms") / 1.95 - 1) <= 0.011,
	      "two kernels a run: the verdict has each one's median in launch order (%g and %g ms "
	      "of %g, over %g of %g runs: those of three left out; kernels %g)",
	      k0, k1, num(tm, "median_ms"), num(pk, "runs"), num(p, "runs"), num(p, "kernels"));
	strbuf said = STRBUF_INIT;
	result_describe(r, RD_TIME, said_line, &said);
	char want[80];
	snprintf(want, sizeof want, "kernel by kernel, in launch order: %.4g ms, %.3g us\n", k0,
	         k1 * 1e3);
	CHECK(strstr(said.buf, "method    its kernels' durations (gpu__time_duration") &&
	          strstr(said.buf, want),
	      "... and the verdict's words say how it was timed and each kernel's time:\n%s",
	      said.buf);
	sb_free(&said);
	cJSON_Delete(r);

	/* a timing whose warm-up probes caught a passing stall (2 ms more in
	 * its first three strict runs, the probes): it goes device-wide, but
	 * its device-wide runs then read its events' time, and its kernels'
	 * durations stand; work off its stream in every run keeps the
	 * device-wide time */
	for (int every = 0; every < 2; every++) {
		harness_drop_timing(h);
		fcand(&fc, h, b, slow_double);
		fc.profMs = 1.95;
		fc.strictLagMs = 2.0;
		fc.strictLagRuns = every ? -1 : 3;
		double keepWarm = h->o.warmupS;
		h->o.warmupS = 0; /* six warm-up runs: three probes */
		cJSON *fl = NULL;
		tm = harness_time(h, &fc.hc, 0, NULL, NULL, &fl);
		h->o.warmupS = keepWarm;
		p = cJSON_GetObjectItem(tm, "profiled");
		if (!every)
			CHECK(tm && p && cJSON_IsTrue(cJSON_GetObjectItem(p, "used")) &&
			          !strcmp(str(tm, "method"), "kernel durations") &&
			          num(tm, "median_ms") == 1.95 &&
			          num(p, "strict_probe_median_ms") >= 3.5 &&
			          num(p, "device_wide_median_ms") < 2.3,
			      "probes slowed by a passing stall (%g ms beside %g ms of events, "
			      "then %g ms "
			      "device-wide): its kernels' durations stand (%s, %g ms; %s)",
			      num(p, "strict_probe_median_ms"), num(p, "events_median_ms"),
			      num(p, "device_wide_median_ms"), str(tm, "method"),
			      num(tm, "median_ms"), str(p, "why_not"));
		else
			CHECK(tm && p && cJSON_IsFalse(cJSON_GetObjectItem(p, "used")) &&
			          !strcmp(str(tm, "method"), "device-wide") &&
			          num(tm, "median_ms") >= 3.5 &&
			          strstr(str(p, "why_not"), "its device-wide runs"),
			      "2 ms off its stream in every device-wide run: the device-wide time "
			      "stands "
			      "(%s, %g ms: %s)",
			      str(tm, "method"), num(tm, "median_ms"), str(p, "why_not"));
		cJSON_Delete(tm);
		cJSON_Delete(fl);
	}
	harness_drop_timing(h);

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

	/* the worker's default on the GPU: profiled runs only after a timing
	 * under profiledBelowMs (a launch a few % of its events); slow_double's
	 * runs take about 2 ms */
	h->o.profiledBelowMs = 1.0;
	r = eval_prof(h, b, &fc, 1.95, &tm, &p);
	CHECK(!strcmp(status(r), "correct") && !p && !strcmp(str(tm, "method"), "stream") &&
	          num(tm, "median_ms") >= 2,
	      "a timing of %g ms with profiled runs only under 1 ms: none, the events' time "
	      "stands (%s)",
	      num(tm, "median_ms"), str(tm, "method"));
	cJSON_Delete(r);
	h->o.profiledBelowMs = 50.0;
	r = eval_prof(h, b, &fc, 1.95, &tm, &p);
	CHECK(!strcmp(status(r), "correct") && p && cJSON_IsTrue(cJSON_GetObjectItem(p, "used")) &&
	          num(tm, "median_ms") == 1.95,
	      "... under 50 ms: profiled, their durations stand (%g ms)", num(tm, "median_ms"));
	cJSON_Delete(r);
	h->o.profiledBelowMs = 0;

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
