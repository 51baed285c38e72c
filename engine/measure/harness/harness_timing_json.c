/*
 * harness_timing_json.c - a timing's object (harness_eval's "timing"): the
 * typed facts through verdict.h's encoder, then the rest, the profiled
 * runs' part among them.
 */
#include "harness_timing.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* the profiled runs' part of the timing object o ("profiled"): their
 * figures and whether they stand for the timing (then the events' median
 * beside, from sorted, n, or the fast runs' where the timing went
 * device-wide, and the device-wide one; np: the profiled ones counted), or
 * why not */
static void profiled_json(cJSON *o, const struct timing *tg, const double *sorted, int n, int np)
{
	cJSON *p = cJSON_AddObjectToObject(o, "profiled");
	cJSON_AddStringToObject(p, "metric",
	                        "gpu__time_duration.sum of the run's kernels (CUPTI's Range "
	                        "Profiler: Nsight Compute's metric)");
	cJSON_AddNumberToObject(p, "runs", (double)tg->prof.n);
	cJSON_AddNumberToObject(p, "checked", tg->profChecked);
	cJSON_AddBoolToObject(p, "used", tg->profUsed);
	if (tg->profKernels > 0)
		cJSON_AddNumberToObject(p, "kernels", tg->profKernels);
	/* each kernel's own median, in launch order (the first
	 * HARNESS_PROF_KERNELS), over the runs that launched as many */
	int nk = tg->profKernels < HARNESS_PROF_KERNELS ? tg->profKernels : HARNESS_PROF_KERNELS;
	if (nk > 0 && tg->profKernelRuns > 0) {
		cJSON *k = cJSON_AddObjectToObject(p, "per_kernel");
		cJSON *a = cJSON_AddArrayToObject(k, "median_ms");
		for (int i = 0; i < nk; i++)
			cJSON_AddItemToArray(a, tg->profKernelMed[i] >= 0
			                            ? cJSON_CreateNumber(tg->profKernelMed[i])
			                            : cJSON_CreateNull());
		cJSON_AddStringToObject(k, "order", "launch");
		cJSON_AddNumberToObject(k, "runs", tg->profKernelRuns);
		if (tg->profKernels > nk)
			cJSON_AddNumberToObject(k, "of_kernels", tg->profKernels);
	}
	if (np && tg->strict) {
		cJSON_AddNumberToObject(p, "events_median_ms", tg->fastMed);
		cJSON_AddNumberToObject(p, "strict_probe_median_ms", tg->strictProbe);
		cJSON_AddNumberToObject(p, "device_wide_median_ms", harness_pct(sorted, n, 0.5));
	} else if (np) {
		cJSON_AddNumberToObject(p, "events_median_ms", harness_pct(sorted, n, 0.5));
		cJSON_AddNumberToObject(p, "events_min_ms", n ? sorted[0] : NAN);
	} else if (tg->prof.n) {
		cJSON_AddNumberToObject(p, "median_ms", harness_median(&tg->prof));
	}
	if (tg->profWhy[0])
		cJSON_AddStringToObject(p, tg->profLonger ? "why" : "why_not", tg->profWhy);
}

/* the timing object of tg (harness_eval's "timing") */
cJSON *harness_timing_json(const struct harness *h, const struct timing *tg)
{
	const struct harness_cand *c = tg->c;
	const struct samples *S = tg->byClock ? &tg->kclk : &tg->ms;
	int n = (int)S->n, left = tg->left;
	double *sorted = xmalloc((size_t)n * sizeof *sorted);
	memcpy(sorted, S->a, (size_t)n * sizeof *sorted);
	qsort(sorted, (size_t)n, sizeof *sorted, harness_cmp_double);
	/* the typed facts (verdict.h), written by its encoder; then the rest */
	struct verdict_timing t;
	verdict_timing_decode(NULL, &t);
	t.medianMs = harness_pct(sorted, n, 0.5);
	t.p10Ms = harness_pct(sorted, n, 0.1);
	t.p90Ms = harness_pct(sorted, n, 0.9);
	t.count = n;
	t.rse = isfinite(tg->rse) ? tg->rse : -1;
	t.converged = tg->converged;
	t.zMethod = tg->strict ? "device-wide" : "stream";
	/* the profiled runs' median, where it stands for the timing's */
	double *ps = NULL;
	int np = tg->profUsed ? (int)tg->prof.n : 0;
	if (np) {
		ps = xmalloc((size_t)np * sizeof *ps);
		memcpy(ps, tg->prof.a, (size_t)np * sizeof *ps);
		qsort(ps, (size_t)np, sizeof *ps, harness_cmp_double);
		t.medianMs = harness_pct(ps, np, 0.5);
		t.p10Ms = harness_pct(ps, np, 0.1);
		t.p90Ms = harness_pct(ps, np, 0.9);
		t.count = np; /* the runs these figures are of */
		t.zMethod = "kernel durations";
	}
	/* verified: kloop's own clock bounded the time; otherwise it is shown
	 * as unverified and never ranked (never the best, a parent, a win) */
	t.unverified = tg->inc == 2;
	if (tg->inc == 2)
		t.zClockBound = tg->bound;
	else if (!c->trusted)
		t.zBound = tg->byCpu ? "cpu" : "clock";
	char note[300];
	if (tg->byClock) {
		snprintf(note, sizeof note,
		         "timed by kloop's own clock (each run's round trip less an empty frame), "
		         "not the runner's: %d thread%s of the candidate outlived kl_run, and what "
		         "such a thread does before the runner starts its timer is in no time the "
		         "runner reports",
		         left, left == 1 ? "" : "s");
		t.zClockNote = note;
	}
	if (tg->clk0 >= 0)
		t.smClockMhzAfter = tg->clk1;
	if (tg->throttled >= 0) {
		t.throttleRead = 1;
		t.throttled = tg->throttled > 0;
		if (tg->throttled > 0)
			t.zThrottleReason = tg->thr;
	}
	cJSON *o = cJSON_CreateObject();
	verdict_timing_encode(o, &t, VERDICT_COMPLETE);
	/* of the runs whose median it is: the profiled ones where they stand */
	double psum = 0;
	for (int i = 0; i < np; i++)
		psum += ps[i];
	cJSON_AddNumberToObject(o, "min_ms", np ? ps[0] : n ? sorted[0] : NAN);
	cJSON_AddNumberToObject(o, "mean_ms", np ? psum / np : n ? tg->sum / n : NAN);
	cJSON_AddNumberToObject(o, "warmup_runs", tg->warm);
	/* on a GPU whose runner has CUPTI: a fast run's time is its kernels'
	 * busy time (issue 39), the events' where more lay between them */
	int nk = 0, ne = 0, ng = 0;
	if (c->methods)
		c->methods((struct harness_cand *)c, &nk, &ne, &ng);
	if (nk > 0) {
		cJSON_AddStringToObject(
		    o, "kernel_time",
		    "the GPU's busy time with the run's kernels, copies and sets "
		    "(CUPTI's activity records)");
		cJSON_AddNumberToObject(o, "runs_by_kernels", nk);
		cJSON_AddNumberToObject(o, "runs_by_events", ne);
		if (ng)
			cJSON_AddNumberToObject(o, "runs_with_time_between_kernels", ng);
	}
	cJSON_AddNumberToObject(o, "probe_median_ms", tg->probeMed);
	cJSON_AddNumberToObject(o, "probes", (double)tg->probe.n);
	cJSON_AddNumberToObject(o, "frame_ms", tg->cal);
	cJSON_AddNumberToObject(o, "checked_runs", h->nChecked);
	cJSON_AddNumberToObject(o, "checked_after_runs", h->nAfter);
	cJSON_AddNumberToObject(o, "checked_after_seconds", h->afterS);
	cJSON_AddNumberToObject(o, "wall_median_ms", harness_median(&tg->wall));
	struct samples kf = {0};
	harness_known_of(&tg->near, NULL, &kf);
	cJSON_AddNumberToObject(o, "frame_wall_median_ms", harness_median(&kf));
	/* the frames the bound was checked against: before the load (the
	 * runner's own and the twin's beside them), and since (both) */
	harness_add_finite(o, "frame_before_load_ms", harness_pre_median(c));
	harness_add_finite(o, "twin_before_load_ms", c->preTwin);
	struct samples kt = {0};
	harness_known_of(&tg->fTwin, NULL, &kt);
	if (kt.n)
		cJSON_AddNumberToObject(o, "twin_frame_median_ms", harness_median(&kt));
	/* the CPU time of a run and of a frame (harness_cpu_delta) */
	harness_known_of(&tg->cpus, NULL, &kt);
	if (kt.n)
		cJSON_AddNumberToObject(o, "cpu_median_ms", harness_median(&kt));
	harness_known_of(&tg->fOwnCpu, NULL, &kt);
	if (kt.n)
		cJSON_AddNumberToObject(o, "frame_cpu_median_ms", harness_median(&kt));
	kt.n = 0;
	for (int i = 0; i < c->nPreFrame; i++)
		if (!isnan(c->preCpu[i]))
			harness_push(&kt, c->preCpu[i]);
	if (kt.n)
		cJSON_AddNumberToObject(o, "frame_cpu_before_load_ms", harness_median(&kt));
	free(kt.a);
	free(kf.a);
	if (left > 0)
		cJSON_AddNumberToObject(o, "threads_left", left);
	if (tg->byClock)
		cJSON_AddStringToObject(o, "clock", "kloop");
	harness_batch_json(o, &tg->bt, tg->jitter);
	if (tg->profLonger)
		cJSON_AddStringToObject(
		    o, "note",
		    "its kernels' durations are longer than its stream's events (work on a "
		    "stream of its own, or kernels slower when profiled): the longer time stands");
	else if (tg->strict && np)
		cJSON_AddStringToObject(
		    o, "note",
		    "its strict probes were slower than its stream's events by no more than "
		    "launching its kernels on an idle device adds, and its kernels' durations "
		    "agree with the events: timed by its kernels' durations, every kernel of "
		    "the device counted");
	else if (tg->strict)
		cJSON_AddStringToObject(
		    o, "note",
		    "the candidate's work is not all on the stream it was given "
		    "(or it behaves differently when that stream is busy): "
		    "timed from an idle device to a device-wide synchronize");
	if (tg->clk0 >= 0)
		cJSON_AddNumberToObject(o, "sm_clock_mhz_before", tg->clk0);
	if (tg->profAsked)
		profiled_json(o, tg, sorted, n, np);
	free(ps);
	free(sorted);
	return o;
}
