/*
 * harness_after.c - checks decided after the call (issue 37): once a timed
 * run on fresh inputs, or a batch, has come back, kloop decides from its
 * own secret source whether to check it, and checks it against the task's
 * reference run on the same inputs.  Nothing in a call says whether it
 * will be checked, as nothing was decided when it was made.
 *
 * A timing's runs are a reservoir sample: the i-th run on fresh inputs is
 * kept with chance k/i, in the place of one kept before, drawn at random,
 * so that when the timing ends the k runs kept are any k of all its runs,
 * each alike, and all k are checked.  A timing checks k runs however many
 * it made, and which ones was settled only after each one's call.
 */
#include "harness_priv.h"

#include <math.h>
#include <stdio.h>

#include "util.h"

/* runs so checked in a full timing (the checking sets are checked
 * besides): AFTER_RUNS (harness_priv.h) unless the reference is too slow
 * for it: its calls take at most AFTER_SHARE of the timing's budget,
 * AFTER_MIN at least.  A quick timing checks one, an A/B half as many of
 * each side, AFTER_MIN at least */
#define AFTER_SHARE 0.05
#define AFTER_MIN 2
/* the outputs kept of one candidate's runs take at most this much memory,
 * unless AFTER_MIN runs' outputs need more */
#define AFTER_KEEP_BYTES (256ull << 20)

double harness_uniform(void)
{
	return (double)(harness_random64() >> 11) * 0x1p-53;
}

/* whether c's runs can be checked after the call: by a reference that is
 * not c itself, or by the given inputs' source (harness_set_source) */
static int can_check(const struct harness *h, const struct harness_cand *c)
{
	return ((h->ref && h->ref != c) || h->src.expect) && !c->trusted;
}

/* a run whose inputs came (bySrc) or did not come from the source: one the
 * reference can judge */
static int run_checkable(const struct harness *h, int bySrc)
{
	return bySrc ? h->src.expect != NULL : h->ref != NULL;
}

int harness_after_runs(const struct harness *h)
{
	double k = AFTER_RUNS;
	/* a check's cost: the reference's call, or the source's outputs of a
	 * seed (a PyTorch helper's draw and forward: 1 s a set at 8M floats on
	 * the 2-core host) */
	double ms = !h->ref && h->src.expect && h->src.costMs > 0 ? h->src.costMs : h->refMs;
	if (ms > 0 && AFTER_SHARE * h->o.budgetS * 1e3 / ms < k)
		k = floor(AFTER_SHARE * h->o.budgetS * 1e3 / ms);
	return k < AFTER_MIN ? AFTER_MIN : (int)k;
}

void harness_after_begin(struct harness *h, int nSides)
{
	int k = h->quick ? 1 : harness_after_runs(h) / nSides;
	uint64_t out = 0;
	for (int j = 0; j < h->t->nOut; j++)
		out += h->aOut[j].n;
	if (out && (uint64_t)k * out > AFTER_KEEP_BYTES)
		k = (int)(AFTER_KEEP_BYTES / out);
	if (!h->quick && k < AFTER_MIN)
		k = AFTER_MIN;
	for (int s = 0; s < 2; s++) {
		struct after_reservoir *r = &h->aResv[s];
		r->c = NULL;
		r->k = k < 1 ? 1 : k > AFTER_RUNS ? AFTER_RUNS : k;
		r->n = 0;
		r->seen = 0;
	}
}

/* the reservoir of c's runs (a free one when c has none yet), or NULL
 * when they are not checked after the call */
static struct after_reservoir *reservoir_of(struct harness *h, const struct harness_cand *c)
{
	if (!can_check(h, c))
		return NULL;
	for (int s = 0; s < 2; s++) {
		struct after_reservoir *r = &h->aResv[s];
		if (!r->c)
			r->c = c;
		if (r->c == c)
			return r;
	}
	return NULL;
}

int harness_check_after(struct harness *h, void *const *aIn, void *const *aOut, uint64_t seed,
                        int bySrc, const char *zWhen, char *why, size_t nWhy, char *err)
{
	struct backend *b = h->b;
	void *ref[TASK_MAX_TENSORS], *in[TASK_MAX_TENSORS];
	/* the run's inputs where the reference reads them, its outputs where
	 * it writes its own */
	for (int j = 0; j < h->t->nOut; j++)
		ref[j] = payload(&h->aOut[j]);
	for (int i = 0; i < h->t->nIn; i++)
		in[i] = payload(&h->aIn[i]);
	if (bySrc) {
		/* the source draws the run's inputs again from its seed and runs
		 * the problem's own forward on them */
		if (harness_poison_outputs(h, err) < 0 || b->sync(b, err) < 0 ||
		    h->src.expect(h->src.arg, seed, in, ref, err) < 0 || b->sync(b, err) < 0)
			return -1;
	} else {
		for (int i = 0; i < h->t->nIn; i++)
			if (aIn[i] != in[i] && b->copy(b, in[i], aIn[i], h->aIn[i].n, err) < 0)
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
			return kl_err(err, "the reference's kl_run returned %d on the inputs of %s",
			              rc, zWhen);
	}
	struct agg a = {.tolDtype = -1};
	int bad = harness_check_against(h, aOut, ref, 0, &a, why, nWhy, zWhen, err);
	/* nothing of the reference's results left where the candidate looks */
	if (bad >= 0 && (harness_poison_outputs(h, err) < 0 || b->sync(b, err) < 0))
		return -1;
	return bad;
}

int harness_after_run(struct harness *h, struct harness_cand *c, uint64_t seed, char *why,
                      size_t nWhy, char *err)
{
	struct after_reservoir *r = reservoir_of(h, c);
	/* its inputs as drawn (harness_prepare_run's last draw) can be judged */
	int bySrc = h->lastBySrc;
	if (!r || !run_checkable(h, bySrc))
		return 0;
	/* decided now, the call over: the candidate's outputs are fixed and its
	 * process held.  Kept with chance k/seen, in a place drawn at random */
	int m;
	r->seen++;
	if (r->n < r->k)
		m = r->n++;
	else if ((m = (int)(harness_random64() % r->seen)) >= r->k)
		return 0;
	double t0 = now_s();
	r->aSeed[m] = seed;
	r->aRun[m] = h->nTimed;
	r->aBySrc[m] = bySrc;
	/* nothing trampled, its inputs as drawn (still in the scratch buffers,
	 * harness_prepare_run): the next run's preparation resets both, so
	 * they are checked now */
	char w[900];
	void *in[TASK_MAX_TENSORS];
	for (int i = 0; i < h->t->nIn; i++)
		in[i] = payload(&h->aIn[i]);
	int bad = harness_check_guards(h, w, sizeof w, err);
	if (bad == 0)
		bad = harness_inputs_changed(h, in, h->aScratch, w, sizeof w, err);
	if (bad > 0)
		snprintf(why, nWhy, "timed run %llu (kept for a check after its call): %s",
		         (unsigned long long)h->nTimed, w);
	if (bad)
		return bad < 0 ? -1 : HC_MISBEHAVED;
	/* and its outputs kept until the end */
	for (int j = 0; j < h->t->nOut; j++) {
		size_t n = h->aOut[j].n;
		if (!r->aaOut[m][j] && !(r->aaOut[m][j] = h->b->alloc(h->b, n ? n : 1, err)))
			return -1;
		if (h->b->copy(h->b, r->aaOut[m][j], payload(&h->aOut[j]), n, err) < 0)
			return -1;
	}
	h->afterS += now_s() - t0;
	step_trace("a run kept for a check after", t0);
	return 0;
}

int harness_check_now(struct harness *h, const struct harness_cand *c, uint64_t seed,
                      const char *zWhen, int *pChecked, char *why, size_t nWhy, char *err)
{
	int bySrc = h->lastBySrc;
	*pChecked = 0;
	if (!can_check(h, c) || !run_checkable(h, bySrc))
		return 0;
	void *out[TASK_MAX_TENSORS] = {0};
	int bad = -1;
	for (int j = 0; j < h->t->nOut; j++) {
		size_t n = h->aOut[j].n;
		if (!(out[j] = h->b->alloc(h->b, n ? n : 1, err)) ||
		    h->b->copy(h->b, out[j], payload(&h->aOut[j]), n, err) < 0)
			goto done;
	}
	/* its inputs drawn again from their seed, as they were */
	if (!bySrc && harness_draw_inputs(h, h->aScratch, seed, err) < 0)
		goto done;
	h->nAfter++;
	*pChecked = 1;
	bad = harness_check_after(h, h->aScratch, out, seed, bySrc, zWhen, why, nWhy, err);
done:
	for (int j = 0; j < h->t->nOut; j++)
		if (out[j])
			h->b->release(h->b, out[j]);
	return bad < 0 ? -1 : bad ? HC_MISBEHAVED : 0;
}

int harness_after_end(struct harness *h, const struct harness_cand **pWho, char *why, size_t nWhy,
                      char *err)
{
	double t0 = now_s();
	for (int s = 0; s < 2; s++) {
		struct after_reservoir *r = &h->aResv[s];
		for (int m = 0; m < r->n; m++) {
			char when[96];
			snprintf(when, sizeof when, "timed run %llu (checked after its call)",
			         (unsigned long long)r->aRun[m]);
			/* its inputs drawn again from their seed, as they were (the
			 * source's, by the source with its outputs) */
			if (!r->aBySrc[m] &&
			    harness_draw_inputs(h, h->aScratch, r->aSeed[m], err) < 0)
				return -1;
			h->nAfter++;
			int bad = harness_check_after(h, h->aScratch, r->aaOut[m], r->aSeed[m],
			                              r->aBySrc[m], when, why, nWhy, err);
			if (bad) {
				*pWho = r->c;
				return bad < 0 ? -1 : HC_MISBEHAVED;
			}
		}
		r->c = NULL;
		r->n = 0;
		r->seen = 0;
	}
	h->afterS += now_s() - t0;
	return 0;
}

int harness_after_batch(struct harness *h, struct harness_cand *c, int n, uint64_t seed,
                        int *pChecked, char *why, size_t nWhy, char *err)
{
	*pChecked = 0;
	/* the batch's inputs as drawn (harness_ring_prepare: from the source or not,
	 * all alike) can be judged */
	int bySrc = h->ringBySrc;
	if (!can_check(h, c) || !run_checkable(h, bySrc) || n < 1)
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
		uint64_t rs = harness_ring_seed(seed, j);
		if (!h->b->roShared) {
			bad = harness_draw_inputs(h, h->aScratch, rs, err) < 0
			          ? -1
			          : harness_inputs_changed(h, in, h->aScratch, w, sizeof w, err);
			if (bad > 0)
				snprintf(why, nWhy, "%s: %s", when, w);
		}
		if (bad == 0)
			bad = harness_check_after(h, in, out, rs, bySrc, when, why, nWhy, err);
		if (bad)
			return bad < 0 ? -1 : HC_MISBEHAVED;
		++*pChecked;
	}
	return 0;
}
