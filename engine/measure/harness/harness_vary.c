/*
 * harness_vary.c - how each set's inputs are varied (rng.h: scaled,
 * heavy-tailed, with outliers): the plan by the set's place (the trials',
 * the timing set, the checking sets), what was applied to each, and its
 * words in a verdict.  Below the rest of the harness's files: a run's
 * preparation (harness_run.c) mixes given inputs from the plain sets
 * alone; it calls none of them.
 */
#include "harness_priv.h"

#include <stdio.h>

#include "rng.h"
#include "util.h"

int harness_vary_of(const struct harness *h, int s)
{
	static const int kinds[] = {RNG_SCALED | RNG_OUTLIERS, RNG_HEAVY, RNG_OUTLIERS, RNG_SCALED};
	int nT = h->o.nTrials;
	if (s < nT)
		return s < HARNESS_PLAIN_TRIALS ? 0 : kinds[(s - HARNESS_PLAIN_TRIALS) % 4];
	/* the checking sets of the timed runs: every other one plain, the
	 * first among them (issue 37: with every checked timed run on a varied
	 * set, a candidate skipped its work on inputs of the task's own
	 * distribution, which were never checked) */
	if (s == nT)
		return 0;
	/* the varied ones heavy-tailed first: the widest range of magnitudes,
	 * where reduced precision and overflow show most, is among the two
	 * that every full timing checks (timing_checks) */
	static const int checks[] = {RNG_HEAVY, RNG_SCALED | RNG_OUTLIERS, RNG_OUTLIERS,
	                             RNG_SCALED};
	int k = s - nT - 1;
	return k % 2 == 0 ? 0 : checks[(k / 2) % 4];
}

void harness_note_vary(struct harness *h, int s, int applied, int unsound)
{
	if (!h->aVary)
		h->aVary = xcalloc((size_t)h->nSets, sizeof *h->aVary);
	h->aVary[s] = applied;
	h->varyUnsound |= unsound;
}

int harness_vary_applied(const struct harness *h, int s)
{
	return h->aVary && s >= 0 && s < h->nSets ? h->aVary[s] : 0;
}

/* " (scaled+outliers inputs)" for a varied set s, else "" (static) */
const char *harness_vary_words(const struct harness *h, int s)
{
	static char buf[64];
	if (!h->aVary || s < 0 || s >= h->nSets || !h->aVary[s])
		return "";
	snprintf(buf, sizeof buf, " (%s inputs)", rng_vary_name(h->aVary[s]));
	return buf;
}
