/*
 * harness_after.c - checks decided after the call (issue 37): once a timed
 * run on fresh inputs, or a batch, has come back, kloop draws from its own
 * secret source whether to check it, and checks it against the task's
 * reference run on the same inputs.  Nothing in a call says whether it
 * will be checked, as nothing was decided when it was made.
 */
#include "harness_priv.h"

#include <math.h>
#include <stdio.h>

#include "util.h"

/* runs so checked in a full timing, as expected (the checking sets are
 * checked besides), unless the reference is too slow for it: its calls
 * take at most AFTER_SHARE of the timing's budget, two at least (the
 * budget is the timing's wall time, so they cost timed runs, not time) */
#define AFTER_RUNS 8
#define AFTER_SHARE 0.05

double harness_uniform(void)
{
	return (double)(harness_random64() >> 11) * 0x1p-53;
}

/* whether c's runs can be checked after the call: by a reference that is
 * not c itself */
static int can_check(const struct harness *h, const struct harness_cand *c)
{
	return h->ref && h->ref != c && !c->trusted;
}

int harness_after_runs(const struct harness *h)
{
	double k = AFTER_RUNS;
	if (h->refMs > 0 && AFTER_SHARE * h->o.budgetS * 1e3 / h->refMs < k)
		k = floor(AFTER_SHARE * h->o.budgetS * 1e3 / h->refMs);
	return k < 2 ? 2 : (int)k;
}

void harness_after_spread(struct harness *h, double expectRuns, int nRuns)
{
	if (expectRuns < 1)
		expectRuns = 1;
	h->pAfter = nRuns / expectRuns;
	if (h->pAfter > 1)
		h->pAfter = 1;
}

int harness_check_after(struct harness *h, void *const *aIn, void *const *aOut, const char *zWhen,
                        char *why, size_t nWhy, char *err)
{
	struct backend *b = h->b;
	void *cand[TASK_MAX_TENSORS], *ref[TASK_MAX_TENSORS];
	/* the candidate's outputs kept where the reference's would overwrite
	 * them; the run's inputs where the reference reads them */
	for (int j = 0; j < h->t->nOut; j++) {
		ref[j] = payload(&h->aOut[j]);
		cand[j] = aOut[j];
		if (aOut[j] == ref[j]) {
			if (b->copy(b, h->aKeep[j], aOut[j], h->aOut[j].n, err) < 0)
				return -1;
			cand[j] = h->aKeep[j];
		}
	}
	for (int i = 0; i < h->t->nIn; i++)
		if (aIn[i] != payload(&h->aIn[i]) &&
		    b->copy(b, payload(&h->aIn[i]), aIn[i], h->aIn[i].n, err) < 0)
			return -1;
	if (harness_poison_outputs(h, err) < 0 || b->sync(b, err) < 0)
		return -1;
	int rc;
	char w[KL_ERRLEN];
	int crc = harness_call(h->ref, &rc, w, sizeof w, err);
	if (crc > 0)
		return kl_err(err, "the reference, on the inputs of %s: %s", zWhen, w);
	if (crc < 0 || b->sync(b, err) < 0)
		return -1;
	if (rc)
		return kl_err(err, "the reference's kl_run returned %d on the inputs of %s", rc,
		              zWhen);
	struct agg a = {.tolDtype = -1};
	int bad = harness_check_against(h, cand, ref, 0, &a, why, nWhy, zWhen, err);
	/* nothing of the reference's results left where the candidate looks */
	if (bad >= 0 && (harness_poison_outputs(h, err) < 0 || b->sync(b, err) < 0))
		return -1;
	return bad;
}

int harness_after_run(struct harness *h, struct harness_cand *c, char *why, size_t nWhy, char *err)
{
	/* decided now, the call over: the candidate's outputs are fixed and its
	 * process held */
	if (!can_check(h, c) || harness_uniform() >= h->pAfter)
		return 0;
	h->nAfter++;
	void *in[TASK_MAX_TENSORS], *out[TASK_MAX_TENSORS];
	for (int i = 0; i < h->t->nIn; i++)
		in[i] = payload(&h->aIn[i]);
	for (int j = 0; j < h->t->nOut; j++)
		out[j] = payload(&h->aOut[j]);
	char w[900], when[96];
	snprintf(when, sizeof when, "timed run %llu (checked after its call)",
	         (unsigned long long)h->nTimed);
	/* nothing trampled, its inputs as drawn (still in the scratch
	 * buffers, harness_prepare_run), its outputs the reference's */
	int bad = harness_check_guards(h, w, sizeof w, err);
	if (bad == 0)
		bad = harness_inputs_changed(h, in, h->aScratch, w, sizeof w, err);
	if (bad > 0)
		snprintf(why, nWhy, "%s: %s", when, w);
	if (bad == 0)
		bad = harness_check_after(h, in, out, when, why, nWhy, err);
	return bad < 0 ? -1 : bad ? HC_MISBEHAVED : 0;
}

int harness_after_batch(struct harness *h, struct harness_cand *c, int n, uint64_t seed,
                        int *pChecked, char *why, size_t nWhy, char *err)
{
	*pChecked = 0;
	if (!can_check(h, c) || n < 1)
		return 0;
	/* as many runs as a full timing checks after their call, n at most
	 * (harness_after_runs: fewer where the reference is slow) */
	int k = harness_after_runs(h);
	if (k > n)
		k = n;
	int pick[AFTER_RUNS];
	for (int m = 0; m < k; m++) {
		int j, dup;
		do {
			j = (int)(harness_random64() % (uint64_t)n);
			dup = 0;
			for (int q = 0; q < m; q++)
				dup |= pick[q] == j;
		} while (dup);
		pick[m] = j;
	}
	for (int m = 0; m < k; m++) {
		int j = pick[m];
		void *in[TASK_MAX_TENSORS], *out[TASK_MAX_TENSORS];
		harness_ring_slot(h, j, in, out);
		char w[900], when[128];
		snprintf(when, sizeof when, "run %d of kloop's batch of %d (checked after it)",
		         j + 1, n);
		/* its inputs as drawn: where the candidate's process could write
		 * them (the GPU's), drawn again into the scratch buffers and
		 * compared; on the host it maps them read-only */
		int bad = 0;
		if (!h->b->roShared) {
			bad =
			    harness_draw_inputs(h, h->aScratch, harness_ring_seed(seed, j), err) < 0
			        ? -1
			        : harness_inputs_changed(h, in, h->aScratch, w, sizeof w, err);
			if (bad > 0)
				snprintf(why, nWhy, "%s: %s", when, w);
		}
		if (bad == 0)
			bad = harness_check_after(h, in, out, when, why, nWhy, err);
		if (bad)
			return bad < 0 ? -1 : HC_MISBEHAVED;
		++*pChecked;
	}
	return 0;
}
