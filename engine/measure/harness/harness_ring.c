/*
 * harness_ring.c - the batch's ring (harness_batch.c; allocated with the
 * harness's other buffers, harness.c's ring_new): slot k holds run k's
 * inputs and outputs; here its places, the seed of its inputs in a batch,
 * and the slots made ready for a batch, drawn there or copied in from the
 * draws made ahead (harness_ring_ahead, while a candidate compiles).
 * Called by the batch and by the checks after the call (harness_after.c);
 * it calls only a run's primitives (harness_run.c).
 */
#include "harness_priv.h"

#include "util.h"

void harness_ring_slot(const struct harness *h, int k, void **aIn, void **aOut)
{
	for (int i = 0; i < h->t->nIn; i++)
		aIn[i] = h->ringIn.base + (size_t)k * h->ringStrideIn + h->aRingOffIn[i];
	for (int j = 0; j < h->t->nOut; j++)
		aOut[j] = h->ringOut.base + (size_t)k * h->ringStrideOut + h->aRingOffOut[j];
}

uint64_t harness_ring_seed(uint64_t seed, int k)
{
	return seed ^ ((uint64_t)(k + 1) * 0xd1b54a32d192ed03ull);
}

/* the ring's first n slots ready for a batch drawn from seed: each slot's
 * inputs drawn for it, its outputs poisoned, the caches flushed */
int harness_ring_prepare(struct harness *h, int n, uint64_t seed, char *err)
{
	struct backend *b = h->b;
	for (int k = 0; k < n; k++) {
		void *in[TASK_MAX_TENSORS], *out[TASK_MAX_TENSORS];
		harness_ring_slot(h, k, in, out);
		if (harness_draw_inputs(h, in, harness_ring_seed(seed, k), err) < 0)
			return -1;
		h->ringBySrc = h->lastBySrc;
		for (int j = 0; j < h->t->nOut; j++)
			if (b->fill(b, out[j], harness_poison_of(h->t->aOut[j].dtype), h->aOut[j].n,
			            err) < 0)
				return -1;
	}
	return b->flush(b, err) < 0 ? -1 : b->sync(b, err);
}

/* slot k's inputs in the draws made ahead (laid out as the ring's) */
/* the slots drawn ahead at most: their draws block the worker (a draw by
 * the PyTorch helper is about 1 ms), which should be done with them well
 * before the candidate has compiled (0.4 s and more) */
#define RING_AHEAD_MAX 64

int harness_ring_ahead(struct harness *h, char *err)
{
	struct backend *b = h->b;
	int most = h->nRing < RING_AHEAD_MAX ? h->nRing : RING_AHEAD_MAX, n = 2 * h->lastBatchN;
	size_t bytes = (size_t)most * h->ringStrideIn;
	/* twice as many as the last batch took (a batch's runs follow its
	 * candidate's time), within what may be drawn here: none before a
	 * first batch, nor where the last one took more than that */
	if (h->nStage || n < 2 || h->lastBatchN > most || h->stageOff || !bytes)
		return 0;
	if (n > most)
		n = most;
	double t0 = now_s();
	/* a second copy of the ring's inputs, within the ring's own share of
	 * the memory: else the batch draws its ring itself */
	if (!h->pStage && !(h->pStage = harness_ahead_alloc(h, bytes))) {
		h->stageOff = 1;
		return 0;
	}
	uint64_t seed = harness_random64();
	for (int k = 0; k < n; k++) {
		void *in[TASK_MAX_TENSORS];
		harness_ahead_slot(h, h->pStage, k, in);
		if (harness_draw_inputs(h, in, harness_ring_seed(seed, k), err) < 0) {
			h->stageOff = 1;
			return -1;
		}
		h->stageBySrc = h->lastBySrc;
	}
	if (b->sync(b, err) < 0)
		return -1;
	h->stageSeed = seed;
	h->nStage = n;
	step_trace("batch: its ring drawn ahead", t0);
	return 1;
}

int harness_ring_take_staged(struct harness *h, int n, uint64_t *pSeed)
{
	if (h->nStage < n || n < 1)
		return 0;
	*pSeed = h->stageSeed;
	return 1;
}

int harness_ring_staged(struct harness *h, int n, char *err)
{
	struct backend *b = h->b;
	/* used up: the next batch draws its own, or the next ahead */
	h->nStage = 0;
	for (int k = 0; k < n; k++) {
		void *in[TASK_MAX_TENSORS], *out[TASK_MAX_TENSORS], *st[TASK_MAX_TENSORS];
		harness_ring_slot(h, k, in, out);
		harness_ahead_slot(h, h->pStage, k, st);
		for (int i = 0; i < h->t->nIn; i++)
			if (b->copy(b, in[i], st[i], task_tensor_bytes(&h->t->aIn[i]), err) < 0)
				return -1;
		for (int j = 0; j < h->t->nOut; j++)
			if (b->fill(b, out[j], harness_poison_of(h->t->aOut[j].dtype), h->aOut[j].n,
			            err) < 0)
				return -1;
	}
	h->ringBySrc = h->stageBySrc;
	return b->flush(b, err) < 0 ? -1 : b->sync(b, err);
}
