/*
 * harness_run.c - a run's primitives, the bottom of the harness's files:
 * kloop's secret random numbers; a run's preparation (a set's inputs
 * uploaded, or fresh ones drawn, the guard bands reset, the outputs
 * poisoned, the caches flushed, the buffers evicted); the call; and the
 * verdicts of a call.  The harness's files above call these; these call
 * none of them back, only two files below: the sets' variations
 * (harness_vary.c) and the correctness object (harness_check.c).
 */
#include "harness_priv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "util.h"

uint64_t harness_random64(void)
{
	uint64_t v = 0;
	if (getrandom(&v, sizeof v, 0) != (ssize_t)sizeof v) {
		/* no getrandom: the clock's low bits, mixed */
		v = (uint64_t)(now_s() * 1e9) ^ ((uint64_t)getpid() << 32);
		v ^= v >> 31;
		v *= 0x9e3779b97f4a7c15ull;
	}
	return v;
}

/* upload set s's inputs, reset every guard band and poison the outputs */
int harness_prepare(struct harness *h, int s, char *err)
{
	struct backend *b = h->b;
	for (int i = 0; i < h->t->nIn; i++) {
		struct gbuf *g = &h->aIn[i];
		if (!h->aaIn[s][i])
			return kl_err(
			    err, "set %d's inputs were given back (harness_release_inputs)", s);
		if (b->fill(b, g->base, GUARD_BYTE, GUARD, err) < 0 ||
		    b->fill(b, g->base + GUARD + g->n, GUARD_BYTE, GUARD, err) < 0 ||
		    b->copy(b, payload(g), h->aaIn[s][i], g->n, err) < 0)
			return -1;
	}
	for (int j = 0; j < h->t->nOut; j++) {
		struct gbuf *g = &h->aOut[j];
		int poison = harness_poison_of(h->t->aOut[j].dtype);
		if (b->fill(b, g->base, GUARD_BYTE, GUARD, err) < 0 ||
		    b->fill(b, g->base + GUARD + g->n, GUARD_BYTE, GUARD, err) < 0 ||
		    b->fill(b, payload(g), poison, g->n, err) < 0)
			return -1;
	}
	return b->sync(b, err);
}

int harness_poison_outputs(struct harness *h, char *err)
{
	for (int j = 0; j < h->t->nOut; j++) {
		struct gbuf *g = &h->aOut[j];
		int poison = harness_poison_of(h->t->aOut[j].dtype);
		if (h->b->fill(h->b, payload(g), poison, g->n, err) < 0)
			return -1;
	}
	return 0;
}

/* evict the candidate's own buffers, where the backend can */
void harness_evict(struct harness *h)
{
	if (!h->b->evict)
		return;
	for (int i = 0; i < h->t->nIn; i++)
		h->b->evict(h->b, payload(&h->aIn[i]), h->aIn[i].n);
	for (int j = 0; j < h->t->nOut; j++)
		h->b->evict(h->b, payload(&h->aOut[j]), h->aOut[j].n);
}

/*
 * A run's fresh inputs from seed into aDst[i] (device memory, input i's
 * size each): drawn from the task's distribution; for given inputs
 * (PyTorch's), drawn by their source (harness_set_source: get_inputs()
 * under the seed), or, without one ready, two of their plain sets mixed
 * element by element by a mask drawn for the run (new bytes of the same
 * values, which no check after the call covers).  0 or -1 + err.
 */
int harness_draw_inputs(struct harness *h, void *const *aDst, uint64_t seed, char *err)
{
	struct backend *b = h->b;
	int sa = 0, sb = 0;
	h->lastBySrc = 0;
	if (!h->bGenerated && h->src.draw && (!h->src.ready || h->src.ready(h->src.arg))) {
		h->lastBySrc = 1;
		return h->src.draw(h->src.arg, seed, aDst, err);
	}
	if (!h->bGenerated) {
		/* of the plain sets only: the varied ones (scaled, heavy-tailed,
		 * with outliers) are for checking, and a time taken on them is
		 * not the problem's (on an H200 the softmax seed ran 15% slower
		 * on mixes of them: 0.111 ms against 0.096 with generated inputs) */
		int plain[64], nPlain = 0;
		for (int s = 0; s < h->nSets && nPlain < 64; s++)
			if (!harness_vary_of(h, s))
				plain[nPlain++] = s;
		if (!nPlain)
			plain[nPlain++] = 0;
		uint64_t z = seed * 0x9e3779b97f4a7c15ull;
		int ia = (int)((z >> 33) % (uint64_t)nPlain);
		int ib =
		    nPlain > 1 ? (ia + 1 + (int)((z >> 7) % (uint64_t)(nPlain - 1))) % nPlain : ia;
		sa = plain[ia], sb = plain[ib];
	}
	for (int i = 0; i < h->t->nIn; i++) {
		size_t n = h->aIn[i].n;
		int es = (int)task_dtype_size(h->t->aIn[i].dtype);
		int rc =
		    h->bGenerated
		        ? b->random(b, aDst[i], &h->t->aIn[i], seed ^ (uint64_t)i, err)
		        : b->mix(b, aDst[i], h->aaIn[sa][i], h->aaIn[sb][i],
		                 (int64_t)(n / (size_t)es), es, seed ^ ((uint64_t)i << 48), err);
		if (rc < 0)
			return -1;
	}
	return 0;
}

void *harness_ahead_alloc(struct harness *h, size_t bytes)
{
	char e[KL_ERRLEN];
	return bytes <= h->ringCap ? h->b->alloc(h->b, bytes, e) : NULL;
}

uint64_t harness_run_seed(uint64_t runSeed, uint64_t k)
{
	return runSeed ^ (k * 0x9e3779b97f4a7c15ull);
}

void harness_ahead_slot(const struct harness *h, void *base, int k, void **aIn)
{
	for (int i = 0; i < h->t->nIn; i++)
		aIn[i] = (char *)base + (size_t)k * h->ringStrideIn + h->aRingOffIn[i];
}

/* the inputs of a timed run whose seed is seed copied into aDst from the
 * draws made ahead for its timing (harness_ahead.c): 1 (h->lastBySrc as
 * they were drawn), 0 where none was drawn for it, -1 + err */
static int runs_staged(struct harness *h, uint64_t seed, void *const *aDst, char *err)
{
	uint64_t k = h->nRuns;
	if (!harness_runs_taken(h) || h->runSeed != h->runsSeed || k < 1 ||
	    k > (uint64_t)h->nRunsAhead || seed != harness_run_seed(h->runsSeed, k))
		return 0;
	/* drawn by the source, which cannot be asked now (its check after the
	 * call would wait for it): the run's inputs are made as a draw now
	 * would make them */
	if (h->runsBySrc && h->src.ready && !h->src.ready(h->src.arg))
		return 0;
	void *st[TASK_MAX_TENSORS];
	harness_ahead_slot(h, h->pRuns, (int)k - 1, st);
	for (int i = 0; i < h->t->nIn; i++)
		if (h->b->copy(h->b, aDst[i], st[i], task_tensor_bytes(&h->t->aIn[i]), err) < 0)
			return -1;
	h->lastBySrc = h->runsBySrc;
	return 1;
}

/*
 * What comes before a timed run, and before an empty frame taken for the
 * clock's bound: the run's inputs (set, or fresh ones from seed when set <
 * 0), the outputs poisoned, the caches flushed, the buffers evicted.  Fresh
 * inputs are drawn for every run, a checking set's too, into the scratch
 * buffers, and then copied in, from there or from the checking set: the
 * two preparations take as long, so that how long kloop took to prepare a
 * call says nothing of whether it is checked (issue 37: a copy of a
 * checking set took 0.1 ms where a draw took 3 to 5 on the host).
 */
int harness_prepare_run(struct harness *h, int set, uint64_t seed, char *err)
{
	struct backend *b = h->b;
	double t0 = now_s(), t[5];
	/* drawn now, or ahead while the candidate compiled (harness_ahead.c) */
	int ahead = runs_staged(h, seed, h->aScratch, err);
	if (ahead < 0 || (!ahead && harness_draw_inputs(h, h->aScratch, seed, err) < 0))
		return -1;
	t[0] = now_s();
	for (int i = 0; i < h->t->nIn; i++) {
		struct gbuf *g = &h->aIn[i];
		if (b->copy(b, payload(g), set >= 0 ? h->aaIn[set][i] : h->aScratch[i], g->n, err) <
		    0)
			return -1;
	}
	t[1] = now_s();
	if (harness_poison_outputs(h, err) < 0)
		return -1;
	t[2] = now_s();
	if (b->flush(b, err) < 0)
		return -1;
	t[3] = now_s();
	if (b->sync(b, err) < 0)
		return -1;
	t[4] = now_s();
	harness_evict(h);
	h->lastPrepMs = (now_s() - t0) * 1e3;
	step_trace("a run's preparation", t0);
	if (step_tracing()) {
		/* its parts as the host saw them: the queueing of each, then the
		 * wait for the device to do them all */
		static const char *const part[] = {
		    "a run's preparation: the draw queued", "a run's preparation: the copy queued",
		    "a run's preparation: the poison queued",
		    "a run's preparation: the flush queued (the persisting lines reset)",
		    "a run's preparation: the synchronize"};
		for (int i = 0; i < 5; i++)
			step_trace_span(i || !ahead
			                    ? part[i]
			                    : "a run's preparation: the draw made ahead copied",
			                i ? t[i - 1] : t0, t[i]);
	}
	return 0;
}

/* call the candidate once, untimed: 0 with *pRc, -1 + err, or HC_* + why */
int harness_call(struct harness_cand *c, int *pRc, char *why, size_t nWhy, char *err)
{
	double ms, md;
	int rc = c->call(c, HC_UNTIMED, pRc, &ms, &md, why, nWhy, err);
	settle(c);
	return rc;
}

const char *harness_returned(const struct harness_cand *c, int rc, const char *zWhen, char *buf,
                             size_t n)
{
	snprintf(buf, n, "kl_run returned %d%s%s%.*s", rc, zWhen, c->zRunError[0] ? ": " : "",
	         (int)sizeof c->zRunError, c->zRunError);
	return buf;
}

cJSON *harness_crashed(struct harness *h, const char *zWhen, const char *err)
{
	char *z =
	    xasprintf("%s: %s%s", zWhen, err, h->b->fatal ? " (the device context is lost)" : "");
	cJSON *o = verdict_new(STATUS_CRASHED, z);
	free(z);
	return o;
}

/* the verdict of a call that did not come back normally (crc: HC_*, or -1) */
cJSON *harness_called_verdict(struct harness *h, int crc, const char *zWhen, const char *why,
                              const char *err, const struct agg *a)
{
	if (crc < 0)
		return harness_crashed(h, zWhen, err);
	char *z = xasprintf("%s: %s", zWhen, why);
	cJSON *o = verdict_new(crc == HC_CRASHED ? STATUS_CRASHED : STATUS_INCORRECT, z);
	free(z);
	if (crc == HC_MISBEHAVED)
		cJSON_AddItemToObject(o, "correctness",
		                      harness_correctness_json(h, a, h->o.nTrials));
	return o;
}
