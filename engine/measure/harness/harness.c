/*
 * harness.c - the trustworthy measurement: every run on guarded, poisoned
 * buffers with inputs verified unchanged; correctness over several trials
 * with fresh inputs (harness_eval); timing with flushed caches until the
 * median is stable (harness_time.c).  This file, the top of the harness's
 * files (harness_priv.h says which way they call): the harness object,
 * its buffers (the batch's ring among them), its accessors, and the
 * trials; a run's preparation and the verdicts of a call are
 * harness_run.c's.
 */
#include "harness_priv.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "util.h"
#include "verdict.h"

#define POOL_MAX 8              /* checking sets at most */
#define POOL_BYTES (1ull << 30) /* and at most this much memory for them */
/* the batch's ring takes at most this much device memory, or host memory
 * (where a batch of 20 ms reads and writes less than that: its pages are
 * taken only as the batch writes them), and an eighth of what is free */
#define RING_BYTES (8ull << 30)
#define RING_BYTES_HOST (512ull << 20)
#define RING_ALIGN 4096 /* a tensor's place in a slot is aligned so */

void harness_default_opts(struct harness_opts *o, const char *zBackend)
{
	o->nTrials = 5;
	o->seed = 1234;
	o->budgetS = strcmp(zBackend, "cuda") ? 2.0 : 3.0;
	o->rse = 0.005;
	o->minRuns = 10;
	o->maxRuns = 10000;
	o->warmupS = 0.025;
	o->profiledRuns = 0;
	o->profiledBelowMs = 0;
	o->nPool = -1;
	o->nRing = -1;
}

/* memory this process may still take: the kernel's estimate of what can be
 * had without swapping (MemAvailable), or 0 when unknown */
static uint64_t host_available(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	unsigned long long kb = 0;
	char line[256];
	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return (uint64_t)kb * 1024;
}

/* the float64 outputs of one set, where the task's float outputs are kept
 * in float64 too (the precision verdict's reference: precision.h) */
static uint64_t f64_bytes(const struct task *t)
{
	uint64_t n = 0;
	for (int j = 0; j < t->nOut; j++)
		if (is_float(t->aOut[j].dtype) && t->aOut[j].dtype != KL_F64)
			n += (uint64_t)task_numel(&t->aOut[j]) * 8;
	return n;
}

/*
 * Every set (the trials, the timing set, the checking sets) keeps its
 * inputs and expected outputs for the harness's life, on the device for the
 * GPU, and each checking set its float64 outputs beside (the precision
 * verdict's, in a harness of its own): refuse, before allocating any, a
 * number of trials whose sets cannot fit in the memory there is (--trials
 * 1000000 would otherwise run the machine out of memory set by set).
 */
static int check_sets_fit(const struct harness *h, char *err)
{
	uint64_t set = task_set_bytes(h->t);
	size_t devFree = 0, devTotal = 0;
	int dev = h->b->mem_info && h->b->mem_info(h->b, &devFree, &devTotal) == 0;
	uint64_t avail = dev ? devFree : host_available();
	if (!set || !avail)
		return 0;
	long double need = (long double)set * h->nSets + (long double)f64_bytes(h->t) * h->nPool;
	if (need <= 0.8L * avail)
		return 0;
	return kl_err(err,
	              "the task's data does not fit: %d trials, 1 timing set and %d checking "
	              "sets of %.4g MB each (inputs and expected outputs; the checking sets' "
	              "float64 outputs besides) need %.4g GB, more than 80%% of the %.4g GB of "
	              "%s memory free: use fewer --trials",
	              h->o.nTrials, h->nPool, set / 1e6, (double)(need / 1e9), avail / 1e9,
	              dev ? "device" : "host");
}

static size_t ring_round(size_t n)
{
	return (n + RING_ALIGN - 1) / RING_ALIGN * RING_ALIGN;
}

/*
 * The batch's ring (harness_batch.c): slots of a run's inputs and outputs,
 * as many as HARNESS_BATCH_MAX, RING_BYTES (on the host RING_BYTES_HOST) and
 * an eighth of the free memory allow (at least one where a slot is at most
 * a quarter of it), so that each run of a batch has inputs of its own.
 * 0 or -1 + err.
 */
static int ring_new(struct harness *h, char *err)
{
	const struct task *t = h->t;
	struct backend *b = h->b;
	for (int i = 0; i < t->nIn; i++) {
		h->aRingOffIn[i] = h->ringStrideIn;
		h->ringStrideIn += ring_round(task_tensor_bytes(&t->aIn[i]));
	}
	for (int j = 0; j < t->nOut; j++) {
		h->aRingOffOut[j] = h->ringStrideOut;
		h->ringStrideOut += ring_round(task_tensor_bytes(&t->aOut[j]));
	}
	size_t slot = h->ringStrideIn + h->ringStrideOut, devFree = 0, devTotal = 0;
	int dev = h->b->mem_info && h->b->mem_info(h->b, &devFree, &devTotal) == 0;
	uint64_t avail = dev ? devFree : host_available(),
	         most = dev ? RING_BYTES : RING_BYTES_HOST;
	/* on the host the ring's whole mapping counts against an address-space
	 * limit (the worker's, KLOOP_MEM_LIMIT_MB: a ring of 512 MiB left a
	 * worker limited to 600 MiB no room for its own allocations) */
	struct rlimit as;
	if (!dev && getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY &&
	    (uint64_t)as.rlim_cur < avail)
		avail = as.rlim_cur;
	uint64_t cap = !avail ? most / 8 : avail / 8 < most ? avail / 8 : most;
	h->ringCap = cap;
	uint64_t n = slot ? cap / slot : HARNESS_BATCH_MAX;
	if (n < 1 && slot && (!avail || slot <= avail / 4))
		n = 1;
	h->nRing = n > HARNESS_BATCH_MAX ? HARNESS_BATCH_MAX : (int)n;
	if (h->o.nRing >= 0 && h->o.nRing < h->nRing)
		h->nRing = h->o.nRing;
	if (h->nRing < 1) {
		h->nRing = 0;
		return 0;
	}
	for (int k = 0; k < 2; k++) {
		struct gbuf *g = k ? &h->ringOut : &h->ringIn;
		g->n = (size_t)h->nRing * (k ? h->ringStrideOut : h->ringStrideIn);
		g->base = b->alloc_shared ? b->alloc_shared(b, g->n ? g->n : 1, &g->sh, err)
		                          : b->alloc(b, g->n ? g->n : 1, err);
		if (!g->base)
			return -1;
	}
	return 0;
}

struct harness *harness_new(const struct task *t, struct backend *b, const struct harness_opts *o,
                            char *err)
{
	static uint64_t nMade;
	struct harness *h = xcalloc(1, sizeof *h);
	h->serial = ++nMade;
	h->t = t;
	h->b = b;
	h->o = *o;
	if (h->o.nTrials < 1)
		h->o.nTrials = 1;
	h->nPool = h->o.nPool;
	if (h->nPool < 0) {
		uint64_t set = task_set_bytes(t) + f64_bytes(t);
		h->nPool = set ? (int)(POOL_BYTES / set) : POOL_MAX;
		h->nPool = h->nPool > POOL_MAX ? POOL_MAX : h->nPool < 2 ? 2 : h->nPool;
	}
	/* fewer checking sets where memory is short, then none, before saying
	 * the trials do not fit */
	for (;;) {
		h->nSets = h->o.nTrials + 1 + h->nPool;
		if (check_sets_fit(h, err) == 0)
			break;
		if (h->nPool == 0) {
			free(h);
			return NULL;
		}
		h->nPool--;
	}
	h->aaIn = xcalloc((size_t)h->nSets, sizeof(void **));
	h->aaExp = xcalloc((size_t)h->nSets, sizeof(void **));
	for (int s = 0; s < h->nSets; s++) {
		h->aaIn[s] = xcalloc((size_t)t->nIn + 1, sizeof(void *));
		h->aaExp[s] = xcalloc((size_t)t->nOut + 1, sizeof(void *));
	}
	for (int k = 0; k < 2; k++) {
		int n = k ? t->nOut : t->nIn;
		for (int i = 0; i < n; i++) {
			const struct task_tensor *tt = k ? &t->aOut[i] : &t->aIn[i];
			struct gbuf *g = k ? &h->aOut[i] : &h->aIn[i];
			kl_tensor *kt = k ? &h->atOut[i] : &h->atIn[i];
			g->n = task_tensor_bytes(tt);
			g->base = b->alloc_shared
			              ? b->alloc_shared(b, g->n + 2 * GUARD, &g->sh, err)
			              : b->alloc(b, g->n + 2 * GUARD, err);
			if (!g->base) {
				harness_free(h);
				return NULL;
			}
			kt->data = payload(g);
			kt->dtype = tt->dtype;
			kt->ndim = tt->ndim;
			memcpy(kt->shape, tt->shape, sizeof kt->shape);
			for (int s = 0; s < h->nSets; s++) {
				void **pp = k ? &h->aaExp[s][i] : &h->aaIn[s][i];
				if (!(*pp = b->alloc(b, g->n ? g->n : 1, err))) {
					harness_free(h);
					return NULL;
				}
			}
		}
	}
	for (int i = 0; i < t->nIn; i++)
		if (!(h->aScratch[i] = b->alloc(b, h->aIn[i].n ? h->aIn[i].n : 1, err))) {
			harness_free(h);
			return NULL;
		}
	if (h->o.nRing != 0 && ring_new(h, err) < 0) {
		harness_free(h);
		return NULL;
	}
	h->refMs = NAN;
	h->pGuard = xmalloc(GUARD);
	memset(h->pGuard, GUARD_BYTE, GUARD);
	h->pGuardRead = xmalloc(GUARD);
	return h;
}

void harness_free(struct harness *h)
{
	if (!h)
		return;
	harness_drop_timing(h);
	if (h->pStage)
		h->b->release(h->b, h->pStage);
	if (h->pRuns)
		h->b->release(h->b, h->pRuns);
	for (int k = 0; k < 2; k++)
		for (int i = 0; i < (k ? h->t->nOut : h->t->nIn) + 1; i++) {
			int n = k ? h->t->nOut : h->t->nIn;
			struct gbuf *g = i == n ? (k ? &h->ringOut : &h->ringIn)
			                 : k    ? &h->aOut[i]
			                        : &h->aIn[i];
			void **pp = i == n || k ? NULL : &h->aScratch[i];
			if (g->base && g->sh.n)
				h->b->release_shared(h->b, g->base, &g->sh);
			else if (g->base)
				h->b->release(h->b, g->base);
			if (pp && *pp)
				h->b->release(h->b, *pp);
		}
	for (int s = 0; s < h->nSets; s++) {
		for (int i = 0; i < h->t->nIn; i++)
			if (h->aaIn[s][i])
				h->b->release(h->b, h->aaIn[s][i]);
		for (int i = 0; i < h->t->nOut; i++)
			if (h->aaExp[s][i])
				h->b->release(h->b, h->aaExp[s][i]);
		free(h->aaIn[s]);
		free(h->aaExp[s]);
	}
	free(h->aaIn);
	free(h->aaExp);
	for (int s = 0; s < 2; s++)
		for (int m = 0; m < AFTER_RUNS; m++)
			for (int j = 0; j < h->t->nOut; j++)
				if (h->aResv[s].aaOut[m][j])
					h->b->release(h->b, h->aResv[s].aaOut[m][j]);
	harness_set_judge(h, NULL, NULL);
	free(h->aVary);
	free(h->pGuard);
	free(h->pGuardRead);
	free(h);
}

const struct task *harness_task(const struct harness *h)
{
	return h->t;
}

struct backend *harness_backend(const struct harness *h)
{
	return h->b;
}

const struct harness_opts *harness_options(const struct harness *h)
{
	return &h->o;
}

void *harness_output_buf(struct harness *h, int j)
{
	return payload(&h->aOut[j]);
}

void harness_set_judge(struct harness *h, void *j, const struct harness_judge_ops *ops)
{
	if (h->judge && h->judgeOps->free)
		h->judgeOps->free(h->judge);
	h->judge = j;
	h->judgeOps = j ? ops : NULL;
}

void *harness_judge(const struct harness *h, const struct harness_judge_ops *ops)
{
	return h->judgeOps == ops ? h->judge : NULL;
}

cJSON *harness_precision(const struct harness *h)
{
	return h->judge && h->judgeOps->json ? h->judgeOps->json(h->judge) : NULL;
}

void harness_set_reference(struct harness *h, struct harness_cand *ref)
{
	h->ref = ref;
}

void harness_set_source(struct harness *h, const struct harness_source *s)
{
	memset(&h->src, 0, sizeof h->src);
	if (s)
		h->src = *s;
}

uint64_t harness_serial(const struct harness *h)
{
	return h->serial;
}

int harness_buffers(const struct harness *h, struct harness_buf *a)
{
	int n = 0;
	for (int k = 0; k < 2; k++)
		for (int i = 0; i < (k ? h->t->nOut : h->t->nIn); i++) {
			const struct gbuf *g = k ? &h->aOut[i] : &h->aIn[i];
			memset(&a[n], 0, sizeof a[n]);
			a[n].sh = g->sh;
			a[n].off = GUARD;
			a[n].t = k ? h->atOut[i] : h->atIn[i];
			a[n].t.data = NULL;
			a[n].input = !k;
			a[n].zName = k ? h->t->aOut[i].zName : h->t->aIn[i].zName;
			a[n].ringOff = k ? h->aRingOffOut[i] : h->aRingOffIn[i];
			n++;
		}
	for (int k = 0; h->nRing > 0 && k < 2; k++) {
		const struct gbuf *g = k ? &h->ringOut : &h->ringIn;
		memset(&a[n], 0, sizeof a[n]);
		a[n].sh = g->sh;
		a[n].input = !k;
		a[n].zName = k ? "the batch's outputs" : "the batch's inputs";
		a[n].ring = h->nRing;
		a[n].stride = k ? h->ringStrideOut : h->ringStrideIn;
		n++;
	}
	return n;
}

cJSON *harness_eval(struct harness *h, struct harness_cand *c, int bTime,
                    harness_progress_fn progress, void *arg)
{
	char err[KL_ERRLEN] = "", why[1024] = "";
	struct agg a = {.tolDtype = -1};
	struct backend *b = h->b;
	double t0 = now_s();
	harness_drop_timing(h);
	h->poolUsed = 0; /* a new evaluation: every checking set unseen */
	h->nTimed = 0;
	if (h->judge && h->judgeOps->reset)
		h->judgeOps->reset(h->judge);
	if (b->reset && b->reset(b, err) < 0)
		return harness_crashed(h, "resetting the device before the run", err);
	/* the empty frames before its first call, where its starter did not
	 * take them before the load (a candidate called in this process) */
	if (bTime && !c->nPreFrame) {
		int crc = harness_preload(h, c, why, sizeof why, err);
		if (crc)
			return harness_called_verdict(h, crc, "the empty frames before the trials",
			                              why, err, &a);
	}
	for (int s = 0; s < h->o.nTrials; s++) {
		if (progress)
			progress("checking", s + 1, arg);
		/* flushed as a timed run is: the cache's state tells a trial from
		 * a timed run no more than anything else does */
		if (harness_prepare(h, s, err) < 0 || b->flush(b, err) < 0 || b->sync(b, err) < 0)
			return harness_crashed(h, "preparing the buffers", err);
		harness_evict(h);
		int rc;
		char when[96];
		snprintf(when, sizeof when, "trial %d of %d%s", s + 1, h->o.nTrials,
		         harness_vary_words(h, s));
		int crc = harness_call(c, &rc, why, sizeof why, err);
		if (crc)
			return harness_called_verdict(h, crc, when, why, err, &a);
		if (b->sync(b, err) < 0)
			return harness_crashed(h, when, err);
		a.trials++;
		int bad = 0;
		if (rc) {
			char rw[KL_RUN_ERROR_MAX + 64];
			snprintf(why, sizeof why, "%s: %s", when,
			         harness_returned(c, rc, "", rw, sizeof rw));
			bad = 1;
		}
		if (!bad) {
			char w[900];
			bad = harness_check_guards(h, w, sizeof w, err);
			if (bad == 0)
				bad = harness_check_inputs(h, s, w, sizeof w, err);
			if (bad > 0)
				snprintf(why, sizeof why, "%s: %s", when, w);
		}
		if (!bad)
			bad = harness_check_outputs(h, s, &a, why, sizeof why, when, err);
		if (!bad && h->judge && h->judgeOps->trial &&
		    h->judgeOps->trial(h->judge, h, s, err) < 0)
			bad = -1;
		if (bad < 0)
			return harness_crashed(h, when, err);
		if (bad) {
			cJSON *o = verdict_new(STATUS_INCORRECT, why);
			cJSON_AddItemToObject(o, "correctness",
			                      harness_correctness_json(h, &a, h->o.nTrials));
			return o;
		}
		a.passed++;
	}
	cJSON *o = verdict_new(STATUS_CORRECT, "");
	cJSON_AddItemToObject(o, "correctness", harness_correctness_json(h, &a, h->o.nTrials));
	cJSON *pr = harness_precision(h);
	if (pr)
		cJSON_AddItemToObject(o, "precision", pr);
	cJSON_AddNumberToObject(o, "check_seconds", now_s() - t0);
	if (!bTime)
		return o;
	double t1 = now_s();
	if (progress)
		progress("timing", 0, arg);
	cJSON *fail = NULL;
	cJSON *tm = harness_time(h, c, 0, progress, arg, &fail);
	if (!tm) {
		cJSON_Delete(o);
		struct verdict v;
		verdict_decode(fail, &v);
		if (v.status == STATUS_INCORRECT)
			cJSON_AddItemToObject(fail, "correctness",
			                      harness_correctness_json(h, &a, h->o.nTrials));
		return fail;
	}
	verdict_put_timing(o, tm);
	cJSON_AddNumberToObject(o, "time_seconds", now_s() - t1);
	/* the precision again, with the run after timing's */
	if ((pr = harness_precision(h)))
		cJSON_ReplaceItemInObject(o, "precision", pr);
	return o;
}
