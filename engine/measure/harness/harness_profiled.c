/*
 * harness_profiled.c - the profiled runs after a short timing (issue 39;
 * KLOOP_CUPTI=range: after every one): runs timed by their kernels' own durations, every one
 * checked, and whether their median may stand for the timing's.
 */
#include "harness_timing.h"

#include <stdio.h>
#include <stdlib.h>

/* the most a launch adds to a run's events over its kernels' durations: on
 * an H200 1.4 to 2.9 us (bench/gpu/rangeprof.sh), for an empty kernel too */
#define PROF_LAUNCH_MS 0.004
/* what a launch on an idle device may add to a strict run over a fast one,
 * a kernel (harness_time.c's harness_probes_disagree allows one, where the
 * fast runs take 11 us or more) */
#define PROF_GAP_MS 0.005

/*
 * The profiled runs (issue 39; the worker sets h->o.profiledRuns):
 * after a fast timing that kloop's clock bounded, that many more runs on
 * fresh inputs, as the timed ones (a checking set's at random, the others
 * kept for a check after their call alike), each timed by its kernels' own
 * durations, gpu__time_duration (Nsight Compute's metric, through CUPTI's
 * Range Profiler, cupti_range.cu).  Their median is the timing's where it
 * agrees with the bounded one, the events': not longer (a kernel's duration
 * is inside the events around it), and not shorter by more than a launch's
 * time and a tenth (a run whose time lies outside its kernels, a host's
 * work before or between them, keeps its events').  Otherwise, or where the
 * runner has no profiler, the events' median stands and tg->profWhy says
 * why.  A profiled run that is wrong is the verdict, as a timed run's.
 *
 * A timing gone device-wide (its strict probes slower than its fast runs:
 * work off its stream, harness_time.c) is profiled too: the profiler sees
 * every kernel of the context, whatever its stream.  Its durations stand
 * where its device-wide runs (the timing's, after the probes) were slower
 * by no more than launching the run's kernels on an idle device adds (a
 * run of two microsecond kernels: an H200's strict probes read 94_MSELoss
 * 15.6 us against 9.2 us of events) and they agree with the fast runs'
 * events (no kernel outside the stream's window,
 * harness_profiled_strict_ok); otherwise the device-wide time stands.
 *
 * Durations longer than the events of a timing that did not go device-wide
 * stand for it (tg->profLonger, profWhy saying why): a kernel on a stream
 * of its own that finishes within the strict probes' allowance (a few
 * microseconds) is outside the events on kloop's stream but not outside
 * the profiler's view, and the events' shorter time would be a false win.
 */
/* from the counted profiled runs' kernels (tg->profKv): how many a run
 * launches (their median, tg->profKernels), and each kernel's median
 * duration over the runs that launched that many, the first
 * HARNESS_PROF_KERNELS in launch order: where a run's time goes, kernel by
 * kernel (a kernel whose duration the runner did not give has none) */
static void kernel_medians(struct timing *tg)
{
	const size_t w = 1 + HARNESS_PROF_KERNELS;
	struct samples one = {0};
	for (size_t r = 0; r + w <= tg->profKv.n; r += w)
		harness_push(&one, tg->profKv.a[r]);
	tg->profKernels = one.n ? (int)harness_median(&one) : 0;
	int nk = tg->profKernels < HARNESS_PROF_KERNELS ? tg->profKernels : HARNESS_PROF_KERNELS;
	tg->profKernelRuns = 0;
	for (int k = 0; k < HARNESS_PROF_KERNELS; k++)
		tg->profKernelMed[k] = -1;
	for (int k = 0; k < nk; k++) {
		one.n = 0;
		for (size_t r = 0; r + w <= tg->profKv.n; r += w)
			if ((int)tg->profKv.a[r] == tg->profKernels && tg->profKv.a[r + 1 + k] >= 0)
				harness_push(&one, tg->profKv.a[r + 1 + k]);
		if (one.n)
			tg->profKernelMed[k] = harness_median(&one);
		if (k == 0)
			tg->profKernelRuns = (int)one.n;
	}
	free(one.a);
}

int harness_timing_profiled(struct harness *h, struct timing *tg, char *why, size_t nWhy, char *err)
{
	tg->prof.n = tg->profKv.n = 0;
	tg->profKernelRuns = 0;
	tg->profUsed = tg->profLonger = 0;
	tg->profChecked = 0;
	tg->profWhy[0] = 0;
	tg->profAsked = h->o.profiledRuns > 0 && !h->quick;
	if (!tg->profAsked)
		return 0;
	/* by default only a short timing's (harness_opts.profiledBelowMs): a
	 * longer one's events are within a few % of its kernels' durations */
	/* the events the profiled runs are held against: the timing's own, or
	 * those it had when it went device-wide */
	double em = tg->strict ? tg->fastMed : harness_median(&tg->ms);
	if (h->o.profiledBelowMs > 0 && em >= h->o.profiledBelowMs) {
		tg->profAsked = 0;
		return 0;
	}
	if (tg->strict && !(tg->fastMed > 0)) {
		snprintf(tg->profWhy, sizeof tg->profWhy,
		         "timed device-wide (its work is not all on its stream): its kernels' "
		         "durations are not its time");
		return 0;
	}
	if (tg->inc || tg->byClock) {
		snprintf(tg->profWhy, sizeof tg->profWhy,
		         "its time was not bounded by kloop's clock: nothing to hold the profiled "
		         "runs against");
		return 0;
	}
	struct harness_cand *c = tg->c;
	for (int i = 0; i < h->o.profiledRuns; i++) {
		double t, w;
		int rc, crc = harness_run_timed(h, c, HC_PROFILED, 0, &t, &w, NULL, NULL, &rc, why,
		                                nWhy, err);
		if (crc)
			return crc;
		if (rc) {
			char at[40];
			snprintf(at, sizeof at, " in profiled run %d", i + 1);
			harness_returned(c, rc, at, why, nWhy);
			return HC_MISBEHAVED;
		}
		/* every one checked: CUPTI's profiler is in the runner's process,
		 * which can tell such a run from the others (a checking set's run
		 * was checked in the call already) */
		if (h->lastChk < 0) {
			char when[64];
			int checked;
			snprintf(when, sizeof when, "profiled run %d (checked after its call)",
			         i + 1);
			if ((crc = harness_check_now(h, c, h->lastSeed, when, &checked, why, nWhy,
			                             err)))
				return crc;
			tg->profChecked += checked;
		} else {
			tg->profChecked++;
		}
		if (!(t >= 0)) {
			snprintf(tg->profWhy, sizeof tg->profWhy, "%s",
			         c->zProfNote[0] ? c->zProfNote
			                         : "the runner gave no profiled time");
			tg->prof.n = 0;
			return 0;
		}
		if (!h->lastVaried) {
			harness_push(&tg->prof, t);
			harness_push(&tg->profKv, c->profKernels);
			for (int k = 0; k < HARNESS_PROF_KERNELS; k++)
				harness_push(&tg->profKv, c->profKernelMs[k]);
		}
	}
	kernel_medians(tg);
	if (!tg->prof.n) {
		snprintf(tg->profWhy, sizeof tg->profWhy, "no profiled run was counted");
		return 0;
	}
	double pm = harness_median(&tg->prof);
	/* held against the fast runs: the device-wide timing's own median, of
	 * all its runs, not the few probes that made it go device-wide (on an
	 * H200 a single 5 us kernel's warm-up probes read 14.9 us once, its 485
	 * device-wide runs then 6.1 us beside 6.7 us of events: the probes had
	 * caught a passing stall, the work was all on its stream).  Work kept
	 * off the stream is in every device-wide run, not in the probes alone */
	if (tg->strict)
		tg->profUsed =
		    harness_profiled_strict_ok(harness_median(&tg->ms), em, tg->profKernels,
		                               tg->profWhy, sizeof tg->profWhy) &&
		    harness_profiled_agrees(pm, em, tg->profWhy, sizeof tg->profWhy);
	else if (!(tg->profUsed =
	               harness_profiled_agrees(pm, em, tg->profWhy, sizeof tg->profWhy)) &&
	         pm > em)
		/* its kernels ran longer than its stream's events: work on a
		 * stream of its own that the probes' allowance hid (a microsecond
		 * kernel), or kernels slower when profiled; the longer time
		 * stands, never the events' */
		tg->profUsed = tg->profLonger = 1;
	return 0;
}

int harness_profiled_strict_ok(double probe, double fast, int kernels, char *why, size_t nWhy)
{
	int k = kernels > 1 ? kernels : 1;
	why[0] = 0;
	if (!(probe <= 1.15 * fast + PROF_GAP_MS * k))
		snprintf(why, nWhy,
		         "timed device-wide: its device-wide runs, %.4g ms, were slower than its "
		         "stream's events, %.4g ms, by more than launching its %d kernel%s on an "
		         "idle device adds (its work is not all on its stream)",
		         probe, fast, k, k == 1 ? "" : "s");
	return !why[0];
}

int harness_profiled_agrees(double pm, double em, char *why, size_t nWhy)
{
	why[0] = 0;
	if (pm > em * 1.02 + 0.0005)
		snprintf(why, nWhy,
		         "the profiled runs' median, %.4g ms, is longer than the timing's %.4g ms: "
		         "kernels longer than the events around them",
		         pm, em);
	else if (em - pm > PROF_LAUNCH_MS + 0.1 * em)
		snprintf(
		    why, nWhy,
		    "the profiled runs' median, %.4g ms, is %.4g ms under the timing's %.4g ms, "
		    "more than a launch's time: the run's time lies outside its kernels",
		    pm, em - pm, em);
	return !why[0];
}
