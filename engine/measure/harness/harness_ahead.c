/*
 * harness_ahead.c - the next timing's runs' inputs drawn ahead, while the
 * worker waits for a candidate's compile (harness_runs_ahead), as the
 * batch's ring is (harness_ring.c): into memory of the worker's own that no
 * runner maps, from the seeds the next timing's runs take, and copied into
 * the scratch buffers at each run's preparation (harness_run.c's
 * harness_prepare_run) instead of a draw there.  A timing takes the seed
 * they were drawn for once (harness_runs_take); runs past the draws, and
 * any other timing, draw their own.
 */
#include "harness_priv.h"

#include "util.h"

/* the most drawn ahead: a timing of a short kernel takes about 20 timed
 * runs (the warm-up's, the quick timing's, the full timing's) */
#define RUNS_AHEAD_MAX 48

int harness_runs_ahead(struct harness *h, char *err)
{
	struct backend *b = h->b;
	/* as many slots as the ring's share of the memory holds, within the
	 * most: else each run draws its own */
	uint64_t most = h->ringStrideIn ? h->ringCap / h->ringStrideIn : 0;
	if (most > RUNS_AHEAD_MAX)
		most = RUNS_AHEAD_MAX;
	uint64_t n = h->lastTimedN + (h->lastTimedN + 3) / 4;
	if (n > most)
		n = most;
	/* held and not yet taken; no timing yet to size them by */
	if ((h->nRunsAhead && !harness_runs_taken(h)) || !n || h->runsOff)
		return 0;
	double t0 = now_s();
	if (!h->pRuns && !(h->pRuns = harness_ahead_alloc(h, most * h->ringStrideIn))) {
		h->runsOff = 1;
		return 0;
	}
	/* the next timing's seed, unseen by any runner until its runs */
	uint64_t seed = harness_random64();
	h->nRunsAhead = 0;
	for (int k = 0; k < (int)n; k++) {
		void *in[TASK_MAX_TENSORS];
		harness_ahead_slot(h, h->pRuns, k, in);
		if (harness_draw_inputs(h, in, harness_run_seed(seed, (uint64_t)k + 1), err) < 0) {
			h->runsOff = 1;
			return -1;
		}
		h->runsBySrc = h->lastBySrc;
	}
	if (b->sync(b, err) < 0)
		return -1;
	h->runsSeed = seed;
	h->nRunsAhead = (int)n;
	step_trace("a timing's runs drawn ahead", t0);
	return 1;
}

uint64_t harness_runs_take(struct harness *h)
{
	/* the timing's seed: the one held (then taken: harness_runs_taken) */
	if (h->nRunsAhead && !harness_runs_taken(h))
		return h->timingSeed = h->runsSeed;
	/* drawn for a timing that has been: of no use to this one */
	h->nRunsAhead = 0;
	return h->timingSeed = harness_random64();
}
