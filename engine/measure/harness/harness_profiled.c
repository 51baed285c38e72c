/*
 * harness_profiled.c - the profiled runs after a timing (issue 39,
 * KLOOP_CUPTI=range): runs timed by their kernels' own durations, every one
 * checked, and whether their median may stand for the timing's.
 */
#include "harness_timing.h"

#include <stdio.h>

/* the most a launch adds to a run's events over its kernels' durations: on
 * an H200 1.4 to 2.9 us (bench/gpu/rangeprof.sh), for an empty kernel too */
#define PROF_LAUNCH_MS 0.004

/*
 * The profiled runs (issue 39; KLOOP_CUPTI=range sets h->o.profiledRuns):
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
 */
int harness_timing_profiled(struct harness *h, struct timing *tg, char *why, size_t nWhy, char *err)
{
	tg->prof.n = 0;
	tg->profUsed = 0;
	tg->profChecked = 0;
	tg->profWhy[0] = 0;
	tg->profAsked = h->o.profiledRuns > 0 && !h->quick;
	if (!tg->profAsked)
		return 0;
	if (tg->strict) {
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
		if (!h->lastVaried)
			harness_push(&tg->prof, t);
	}
	if (!tg->prof.n)
		snprintf(tg->profWhy, sizeof tg->profWhy, "no profiled run was counted");
	else
		tg->profUsed =
		    harness_profiled_agrees(harness_median(&tg->prof), harness_median(&tg->ms),
		                            tg->profWhy, sizeof tg->profWhy);
	return 0;
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
