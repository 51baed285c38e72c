/*
 * harness_timed_run.c - one timed run on fresh inputs, a random few of them
 * checked (in the call, or kept for a check after it): what a timing
 * (harness_time.c), an A/B (harness_ab.c) and the profiled runs
 * (harness_profiled.c) each make many of.
 */
#include "harness_timing.h"

#include <stdio.h>

#include "util.h"

/*
 * One timed run.  Fast: the flush is still running on the stream when the
 * start event is queued behind it, so the kernel starts as the event fires,
 * and the time is the stream's end event.  Strict: the device is idle at the
 * start, and the time runs to a device-wide synchronize, less the calibrated
 * frame: work on any stream counts, and none of it can hide behind ours.
 */
int harness_run_timed(struct harness *h, struct harness_cand *c, int mode, double cal, double *pT,
                      double *pW, double *pBusy, double *pCpu, int *pRc, char *why, size_t nWhy,
                      char *err)
{
	int strict = mode == HC_STRICT;
	double ms, md, m0, a0, m1, a1;
	/* fresh inputs for every timed run, so that remembering an earlier
	 * answer does not pay (given inputs, e.g. PyTorch's, are mixed afresh
	 * from two of their sets: no two runs see the same bytes either); by
	 * chance, a checking set's, never seen before in this evaluation,
	 * whose outputs are then checked: the candidate cannot tell which */
	h->nRuns++;
	h->nTimed++;
	int chk = -1;
	uint64_t seed = harness_run_seed(h->runSeed, h->nRuns);
	/* the runs of the timing begun with this seed so far (the next
	 * evaluation's are drawn ahead for as many: harness_ahead.c) */
	if (h->runSeed == h->timingSeed)
		h->lastTimedN = h->nRuns;
	if (h->poolUsed < h->nPool && harness_uniform() < h->pCheck)
		chk = h->o.nTrials + 1 + h->poolUsed++;
	h->lastSeed = seed;
	h->lastChk = chk;
	if (harness_prepare_run(h, chk, seed, err) < 0)
		return -1;
	/* a checking set's inputs are varied: the run is checked, but its
	 * time is not counted (the softmax seed ran 15% slower on them) */
	h->lastVaried = chk >= 0 && harness_vary_of(h, chk) != 0;
	double tRun = now_s();
	/* the waits for a CPU are read inside kloop's clock: a wait just
	 * outside it would count against the run and could make it look
	 * shorter than the candidate's own time */
	harness_cpu_read(h, c, &m0, &a0);
	int sure, s1;
	double t0 = now_s(), d0 = harness_run_delay(c, &sure);
	int rc = c->call(c, mode, pRc, &ms, &md, why, nWhy, err);
	double d1 = harness_run_delay(c, &s1);
	*pW = (now_s() - t0) * 1e3;
	settle(c);
	if (pBusy)
		*pBusy = harness_busy_of(*pW, d0, d1, sure);
	if (pCpu) {
		harness_cpu_read(h, c, &m1, &a1);
		*pCpu = harness_cpu_delta(m0, a0, m1, a1);
	}
	if (rc)
		return rc;
	*pT = strict ? (md - cal > 0 ? md - cal : 0) : ms;
	step_trace("a timed run, its call and clock reads", tRun);
	if (*pRc)
		return 0;
	/* fresh inputs: kept for a check or not as kloop decides now, after
	 * the call */
	if (chk < 0)
		return harness_after_run(h, c, seed, why, nWhy, err);
	/* a checked run: nothing trampled, the inputs as given, the outputs right */
	char w[900], when[96];
	h->nChecked++;
	snprintf(when, sizeof when,
	         mode == HC_PROFILED ? "profiled run (timed run %llu)%s" : "timed run %llu%s",
	         (unsigned long long)h->nTimed, harness_vary_words(h, chk));
	int bad = harness_check_guards(h, w, sizeof w, err);
	if (bad == 0)
		bad = harness_check_inputs(h, chk, w, sizeof w, err);
	if (bad > 0)
		snprintf(why, nWhy, "%s: %s", when, w);
	if (bad == 0) {
		struct agg a = {.tolDtype = -1};
		bad = harness_check_outputs(h, chk, &a, why, nWhy, when, err);
	}
	/* and its precision, as the trials' (the checking sets have float64
	 * outputs too): reduced precision in the timed runs alone is seen */
	if (bad == 0 && h->judged == c && h->judge && h->judgeOps->checked &&
	    h->judgeOps->checked(h->judge, h, chk, (unsigned long long)h->nTimed, err) < 0)
		bad = -1;
	return bad < 0 ? -1 : bad ? HC_MISBEHAVED : 0;
}

int harness_timed_run(struct harness *h, struct harness_cand *c, int strict, double cal, double *pT,
                      double *pW, double *pBusy, double *pCpu, int *pRc, char *why, size_t nWhy,
                      char *err)
{
	return harness_run_timed(h, c, strict ? HC_STRICT : HC_FAST, cal, pT, pW, pBusy, pCpu, pRc,
	                         why, nWhy, err);
}
