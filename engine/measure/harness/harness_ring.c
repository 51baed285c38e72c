/*
 * harness_ring.c - the batch's ring (harness_batch.c; allocated with the
 * harness's other buffers, harness.c's ring_new): slot k holds run k's
 * inputs and outputs; here its places, the seed of its inputs in a batch,
 * and the slots made ready for a batch.  Called by the batch and by the
 * checks after the call (harness_after.c); it calls only a run's
 * primitives (harness_run.c).
 */
#include "harness_priv.h"

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
