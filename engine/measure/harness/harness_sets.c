/*
 * harness_sets.c - the harness's input sets: the trials', the timing set and
 * the checking sets, drawn from seeds and varied as harness_vary.c plans
 * (or given, and said how), and their expected outputs, computed by the
 * reference (a run's preparation and call: harness_run.c).
 */
#include "harness_priv.h"

#include <math.h>
#include <stdlib.h>

#include "rng.h"
#include "util.h"

int harness_nsets(const struct harness *h)
{
	return h->nSets;
}

int harness_npool(const struct harness *h)
{
	return h->nPool;
}

/* give back set s's inputs (k 0) or expected outputs (k 1) */
static void release_set(struct harness *h, int s, int k)
{
	void **a = k ? h->aaExp[s] : h->aaIn[s];
	for (int i = 0; i < (k ? h->t->nOut : h->t->nIn); i++) {
		if (a[i])
			h->b->release(h->b, a[i]);
		a[i] = NULL;
	}
}

void harness_keep_pool(struct harness *h, int n)
{
	if (n < 0 || n >= h->nPool)
		return;
	int keep = h->o.nTrials + 1 + n;
	for (int s = keep; s < h->nSets; s++) {
		release_set(h, s, 0);
		release_set(h, s, 1);
		free(h->aaIn[s]);
		free(h->aaExp[s]);
	}
	h->nPool = n;
	h->nSets = keep;
	h->poolUsed = h->poolUsed < n ? h->poolUsed : n;
}

void harness_release_inputs(struct harness *h)
{
	for (int s = 0; s < h->nSets; s++)
		release_set(h, s, 0);
}

/* draw set s's input i from its seed, varied as vary says (rng.h): 1 when
 * it was varied, 0 when not (a fixed or an integer input), -1 + err */
static int draw_input(struct harness *h, int s, int i, uint64_t seed, int vary, char *err)
{
	const struct task_tensor *tt = &h->t->aIn[i];
	if (h->b->random(h->b, h->aaIn[s][i], tt, seed, err) < 0)
		return -1;
	if (!vary || tt->fixed || !is_float(tt->dtype))
		return 0;
	/* on the device where the backend can (a GPU's sets never leave it) */
	if (h->b->vary)
		return h->b->vary(h->b, h->aaIn[s][i], tt, vary, seed, err) < 0 ? -1 : 1;
	size_t n = task_tensor_bytes(tt);
	void *p = xmalloc(n ? n : 1);
	int rc = h->b->download(h->b, p, h->aaIn[s][i], n, err);
	if (rc == 0) {
		rng_vary(p, tt->dtype, task_numel(tt), vary, seed);
		rc = h->b->upload(h->b, h->aaIn[s][i], p, n, err);
	}
	free(p);
	return rc < 0 ? -1 : 1;
}

static uint64_t set_seed(const struct harness *h, int s, int i)
{
	return (s > h->o.nTrials ? h->poolSeed : h->o.seed) * 1000003ull + (uint64_t)s * 7919ull +
	       (uint64_t)i;
}

int harness_generate_inputs(struct harness *h, char *err)
{
	h->bGenerated = 1;
	free(h->aVary);
	h->aVary = xcalloc((size_t)h->nSets, sizeof *h->aVary);
	/* the trials' and the timing set's inputs are reproducible; the checking
	 * sets' are unpredictable, so that no candidate can know them; the
	 * later trials and the checking sets varied, so that no statistic of
	 * one known distribution passes for the answer */
	h->poolSeed = harness_random64();
	for (int s = 0; s < h->nSets; s++) {
		int any = 0;
		for (int i = 0; i < h->t->nIn; i++) {
			int rc = draw_input(h, s, i, set_seed(h, s, i), harness_vary_of(h, s), err);
			if (rc < 0)
				return -1;
			any |= rc;
		}
		h->aVary[s] = any ? harness_vary_of(h, s) : 0;
	}
	return h->b->sync(h->b, err);
}

/* 1 when set s's expected outputs are all finite, 0 when not, -1 + err */
static int expected_finite(struct harness *h, int s, char *err)
{
	for (int j = 0; j < h->t->nOut; j++) {
		const struct task_tensor *tt = &h->t->aOut[j];
		struct gbuf *g = &h->aOut[j];
		struct compare_report r;
		if (!is_float(tt->dtype))
			continue;
		if (h->b->fill(h->b, payload(g), 0, g->n, err) < 0 ||
		    h->b->compare(h->b, h->aaExp[s][j], payload(g), tt->dtype, task_numel(tt),
		                  &h->t->aTol[tt->dtype], &r, err) < 0)
			return -1;
		if (r.nNonFinite > 0)
			return 0;
	}
	return 1;
}

void *harness_input_buf(struct harness *h, int s, int i)
{
	return h->aaIn[s][i];
}

void *harness_expected_buf(struct harness *h, int s, int j)
{
	return h->aaExp[s][j];
}

int harness_set_input(struct harness *h, int s, int i, const void *p, char *err)
{
	return h->b->upload(h->b, h->aaIn[s][i], p, task_tensor_bytes(&h->t->aIn[i]), err);
}

int harness_set_expected(struct harness *h, int s, int j, const void *p, char *err)
{
	return h->b->upload(h->b, h->aaExp[s][j], p, task_tensor_bytes(&h->t->aOut[j]), err);
}

static int run_sets(struct harness *h, struct harness_cand *ref, double *ms, int *pnMs, char *why,
                    size_t nWhy, char *err);

int harness_run_reference(struct harness *h, struct harness_cand *ref, char *err)
{
	char why[KL_ERRLEN];
	/* how long a call of it takes: what a check after the call costs */
	double *ms = xcalloc((size_t)h->nSets + 1, sizeof *ms);
	int nMs = 0, rc = run_sets(h, ref, ms, &nMs, why, sizeof why, err);
	h->refMs = nMs ? harness_median_of(ms, nMs) : NAN;
	free(ms);
	return rc;
}

static int run_sets(struct harness *h, struct harness_cand *ref, double *ms, int *pnMs, char *why,
                    size_t nWhy, char *err)
{
	for (int s = 0; s < h->nSets; s++) {
		if (harness_prepare(h, s, err) < 0)
			return -1;
		double t0 = now_s();
		int rc, crc = harness_call(ref, &rc, why, nWhy, err);
		if (*pnMs < h->nSets)
			ms[(*pnMs)++] = (now_s() - t0) * 1e3;
		if (crc < 0)
			return -1;
		if (crc == HC_CRASHED) /* why names the reference ("the reference was killed by
		                          SIGSEGV", "it did not return within 5 s") */
			return kl_err(err, "%s", why);
		if (crc)
			return kl_err(err, "the reference misbehaved: %s", why);
		if (h->b->sync(h->b, err) < 0)
			return -1;
		if (rc)
			return kl_err(err, "the reference's kl_run returned %d", rc);
		int bad = harness_check_guards(h, why, nWhy, err);
		if (bad == 0)
			bad = harness_check_inputs(h, s, why, nWhy, err);
		if (bad < 0)
			return -1;
		if (bad)
			return kl_err(err, "the reference misbehaved: %s", why);
		for (int j = 0; j < h->t->nOut; j++) {
			struct gbuf *g = &h->aOut[j];
			if (h->b->copy(h->b, h->aaExp[s][j], payload(g), g->n, err) < 0)
				return -1;
		}
		/* varied inputs out of the task's domain (the reference gives NaN
		 * or Inf on them, where it did not on plain ones): not sound for
		 * this task; the set is drawn again, plain, and run again */
		int fin = h->aVary && h->aVary[s] ? expected_finite(h, s, err) : 1;
		if (fin < 0)
			return -1;
		if (!fin) {
			h->varyUnsound |= h->aVary[s];
			h->aVary[s] = 0;
			for (int i = 0; i < h->t->nIn; i++)
				if (draw_input(h, s, i, set_seed(h, s, i), 0, err) < 0)
					return -1;
			s--;
		}
	}
	/* leave nothing of the reference's results in device memory */
	return harness_poison_outputs(h, err) < 0 ? -1 : h->b->sync(h->b, err);
}
