/*
 * harness.c - the trustworthy measurement: every run on guarded, poisoned
 * buffers with inputs verified unchanged; correctness over several trials
 * with fresh inputs; timing with flushed caches until the median is stable.
 */
#include "harness.h"

#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/random.h>
#include <unistd.h>

#include "compare.h"
#include "precision.h"
#include "rng.h"
#include "util.h"

#define GUARD (64 * 1024) /* bytes of guard band on each side of a buffer */
#define GUARD_BYTE 0xCB   /* the guard pattern */
#define POISON_FLOAT 0xFF /* all-ones: NaN in f16, bf16, f32 and f64 */
#define POISON_INT 0x5A

#define POOL_MAX 8 /* checking sets at most */
/* a varied set's outputs pass within this relative L2 (or the task's, if
 * tighter) where an element is outside the tolerance: KernelBench's 1e-2,
 * far below what an answer that does not follow the data errs by (0.04 to
 * 0.8 in tests/e2e/stats.sh) */
#define VARIED_REL_L2 1e-2
#define POOL_BYTES (1ull << 30) /* and at most this much memory for them */

struct gbuf {
	char *base;         /* allocation: GUARD + n + GUARD */
	size_t n;           /* payload bytes */
	struct kl_share sh; /* shared with the candidate's process (sh.n 0: not shared) */
};

struct harness {
	const struct task *t;
	struct backend *b;
	struct harness_opts o;
	int nSets;     /* trials + 1 + nPool */
	int nPool;     /* checking sets, after the timing set */
	void ***aaIn;  /* [set][input] pristine inputs, in device memory */
	void ***aaExp; /* [set][output] expected outputs, in device memory */
	struct gbuf aIn[TASK_MAX_TENSORS], aOut[TASK_MAX_TENSORS];
	kl_tensor atIn[TASK_MAX_TENSORS], atOut[TASK_MAX_TENSORS];
	int bGenerated;         /* inputs drawn by harness_generate_inputs (not given) */
	uint64_t poolSeed;      /* the checking sets' seed (unpredictable) */
	int *aVary;             /* [set] how its inputs were varied (rng.h flags) */
	int varyUnsound;        /* the ways the reference's outputs were not finite in: those
	                           sets were drawn again, plain */
	uint64_t nRuns;         /* timed runs so far: seeds their fresh inputs */
	uint64_t runSeed;       /* this evaluation's timed inputs' seed (unpredictable) */
	int poolUsed;           /* checking sets used in this evaluation (all its timing
	                           phases: quick, full, A/B), so none is seen twice */
	int quick;              /* the timing phase is a quick one (harness_time) */
	double pCheck;          /* chance that a timed run is checked */
	int nChecked;           /* timed runs checked in this evaluation */
	struct tcont *cont;     /* where a quick timing stopped: the full timing of the
	                           same candidate goes on from there (its runs count) */
	double lastPrepMs;      /* the wall time of the last prepare_run(), ms */
	struct precision *prec; /* the float64 reference's sums (NULL: none) */
	char *zPrecWhy;         /* why there is none (NULL: not said) */
	unsigned char *pGuard;  /* host copy of the expected guard band */
	unsigned char *pGuardRead;
};

void harness_default_opts(struct harness_opts *o, const char *zBackend)
{
	o->nTrials = 5;
	o->seed = 1234;
	o->budgetS = strcmp(zBackend, "cuda") ? 2.0 : 3.0;
	o->rse = 0.005;
	o->minRuns = 10;
	o->maxRuns = 10000;
	o->warmupS = 0.025;
	o->nPool = -1;
}

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

static int is_float(kl_dtype d)
{
	return d == KL_F32 || d == KL_F16 || d == KL_BF16 || d == KL_F64;
}

int harness_nsets(const struct harness *h)
{
	return h->nSets;
}

static void *payload(const struct gbuf *g)
{
	return g->base + GUARD;
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

/*
 * Every set (the trials, the timing set, the checking sets) keeps its
 * inputs and expected outputs for the harness's life, on the device for the
 * GPU: refuse, before allocating any, a number of trials whose sets cannot
 * fit in the memory there is (--trials 1000000 would otherwise run the
 * machine out of memory set by set).
 */
static int check_sets_fit(const struct harness *h, char *err)
{
	uint64_t set = task_set_bytes(h->t);
	size_t devFree = 0, devTotal = 0;
	int dev = h->b->mem_info && h->b->mem_info(h->b, &devFree, &devTotal) == 0;
	uint64_t avail = dev ? devFree : host_available();
	if (!set || !avail)
		return 0;
	long double need = (long double)set * h->nSets;
	if (need <= 0.8L * avail)
		return 0;
	return kl_err(err,
	              "the task's data does not fit: %d trials, 1 timing set and %d checking "
	              "sets of %.4g MB each (inputs and expected outputs) need %.4g GB, more than "
	              "80%% of the %.4g GB of %s memory free: use fewer --trials",
	              h->o.nTrials, h->nPool, set / 1e6, (double)(need / 1e9), avail / 1e9,
	              dev ? "device" : "host");
}

struct harness *harness_new(const struct task *t, struct backend *b, const struct harness_opts *o,
                            char *err)
{
	struct harness *h = xcalloc(1, sizeof *h);
	h->t = t;
	h->b = b;
	h->o = *o;
	if (h->o.nTrials < 1)
		h->o.nTrials = 1;
	h->nPool = h->o.nPool;
	if (h->nPool < 0) {
		uint64_t set = task_set_bytes(t);
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
	h->pGuard = xmalloc(GUARD);
	memset(h->pGuard, GUARD_BYTE, GUARD);
	h->pGuardRead = xmalloc(GUARD);
	return h;
}

static void tcont_drop(struct harness *h);

void harness_free(struct harness *h)
{
	if (!h)
		return;
	tcont_drop(h);
	for (int k = 0; k < 2; k++)
		for (int i = 0; i < (k ? h->t->nOut : h->t->nIn); i++) {
			struct gbuf *g = k ? &h->aOut[i] : &h->aIn[i];
			if (g->base && g->sh.n)
				h->b->release_shared(h->b, g->base, &g->sh);
			else if (g->base)
				h->b->release(h->b, g->base);
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
	precision_free(h->prec);
	free(h->zPrecWhy);
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

void harness_set_precision(struct harness *h, struct precision *p)
{
	precision_free(h->prec);
	h->prec = p;
}

struct precision *precision_of(const struct harness *h)
{
	return h->prec;
}

cJSON *harness_precision(const struct harness *h)
{
	cJSON *pr = precision_json(h->prec);
	return pr ? pr : h->zPrecWhy ? precision_unknown_json(h->zPrecWhy) : NULL;
}

void harness_set_precision_note(struct harness *h, const char *zWhy)
{
	free(h->zPrecWhy);
	h->zPrecWhy = zWhy ? xstrdup(zWhy) : NULL;
}

int harness_buffers(const struct harness *h, struct harness_buf *a)
{
	int n = 0;
	for (int k = 0; k < 2; k++)
		for (int i = 0; i < (k ? h->t->nOut : h->t->nIn); i++) {
			const struct gbuf *g = k ? &h->aOut[i] : &h->aIn[i];
			a[n].sh = g->sh;
			a[n].off = GUARD;
			a[n].t = k ? h->atOut[i] : h->atIn[i];
			a[n].t.data = NULL;
			a[n].input = !k;
			a[n].zName = k ? h->t->aOut[i].zName : h->t->aIn[i].zName;
			n++;
		}
	return n;
}

int harness_vary_of(const struct harness *h, int s)
{
	static const int kinds[] = {RNG_SCALED | RNG_OUTLIERS, RNG_HEAVY, RNG_OUTLIERS, RNG_SCALED};
	int nT = h->o.nTrials;
	if (s < nT)
		return s < PRECISION_TRIALS ? 0 : kinds[(s - PRECISION_TRIALS) % 4];
	return s == nT ? 0 : kinds[(s - nT - 1) % 4];
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

void harness_note_vary(struct harness *h, int s, int applied, int unsound)
{
	if (!h->aVary)
		h->aVary = xcalloc((size_t)h->nSets, sizeof *h->aVary);
	h->aVary[s] = applied;
	h->varyUnsound |= unsound;
}

/* " (scaled+outliers inputs)" for a varied set s, else "" (static) */
static const char *vary_words(const struct harness *h, int s)
{
	static char buf[64];
	if (!h->aVary || s < 0 || s >= h->nSets || !h->aVary[s])
		return "";
	snprintf(buf, sizeof buf, " (%s inputs)", rng_vary_name(h->aVary[s]));
	return buf;
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

/* upload set s's inputs, reset every guard band and poison the outputs */
static int prepare(struct harness *h, int s, char *err)
{
	struct backend *b = h->b;
	for (int i = 0; i < h->t->nIn; i++) {
		struct gbuf *g = &h->aIn[i];
		if (b->fill(b, g->base, GUARD_BYTE, GUARD, err) < 0 ||
		    b->fill(b, g->base + GUARD + g->n, GUARD_BYTE, GUARD, err) < 0 ||
		    b->copy(b, payload(g), h->aaIn[s][i], g->n, err) < 0)
			return -1;
	}
	for (int j = 0; j < h->t->nOut; j++) {
		struct gbuf *g = &h->aOut[j];
		int poison = is_float(h->t->aOut[j].dtype) ? POISON_FLOAT : POISON_INT;
		if (b->fill(b, g->base, GUARD_BYTE, GUARD, err) < 0 ||
		    b->fill(b, g->base + GUARD + g->n, GUARD_BYTE, GUARD, err) < 0 ||
		    b->fill(b, payload(g), poison, g->n, err) < 0)
			return -1;
	}
	return b->sync(b, err);
}

static int poison_outputs(struct harness *h, char *err)
{
	for (int j = 0; j < h->t->nOut; j++) {
		struct gbuf *g = &h->aOut[j];
		int poison = is_float(h->t->aOut[j].dtype) ? POISON_FLOAT : POISON_INT;
		if (h->b->fill(h->b, payload(g), poison, g->n, err) < 0)
			return -1;
	}
	return 0;
}

/* the candidate held again after a call or a frame (harness_cand.settle) */
static void settle(struct harness_cand *c)
{
	if (c->settle)
		c->settle(c);
}

/* call the candidate once, untimed: 0 with *pRc, -1 + err, or HC_* + why */
static int call(struct harness_cand *c, int *pRc, char *why, size_t nWhy, char *err)
{
	double ms, md;
	int rc = c->call(c, HC_UNTIMED, pRc, &ms, &md, why, nWhy, err);
	settle(c);
	return rc;
}

/* check one guard band; on damage describe it into why */
static int check_band(struct harness *h, const char *base, const char *zWhere, const char *zName,
                      int after, char *why, size_t nWhy, char *err)
{
	if (h->b->download(h->b, h->pGuardRead, base, GUARD, err) < 0)
		return -1;
	if (!memcmp(h->pGuardRead, h->pGuard, GUARD))
		return 0;
	size_t first = 0, last = GUARD - 1;
	while (h->pGuardRead[first] == GUARD_BYTE)
		first++;
	while (h->pGuardRead[last] == GUARD_BYTE)
		last--;
	if (after)
		snprintf(why, nWhy,
		         "out-of-bounds write: %zu bytes after the end of %s %s were changed (from "
		         "byte %zu past the end)",
		         last - first + 1, zWhere, zName, first);
	else
		snprintf(why, nWhy,
		         "out-of-bounds write: bytes before the start of %s %s were changed (from "
		         "%zu bytes before it)",
		         zWhere, zName, (size_t)GUARD - first);
	return 1;
}

/* 1 (with why) if any guard band was damaged, 0 if none, -1 on error */
static int check_guards(struct harness *h, char *why, size_t nWhy, char *err)
{
	for (int k = 0; k < 2; k++) {
		int n = k ? h->t->nOut : h->t->nIn;
		for (int i = 0; i < n; i++) {
			struct gbuf *g = k ? &h->aOut[i] : &h->aIn[i];
			const char *zName = k ? h->t->aOut[i].zName : h->t->aIn[i].zName;
			const char *zWhere = k ? "output" : "input";
			int rc = check_band(h, g->base, zWhere, zName, 0, why, nWhy, err);
			if (rc)
				return rc;
			rc =
			    check_band(h, g->base + GUARD + g->n, zWhere, zName, 1, why, nWhy, err);
			if (rc)
				return rc;
		}
	}
	return 0;
}

/* 1 (with why) if an input differs from set s's copy, 0 if none, -1 on error */
static int check_inputs(struct harness *h, int s, char *why, size_t nWhy, char *err)
{
	for (int i = 0; i < h->t->nIn; i++) {
		const struct task_tensor *tt = &h->t->aIn[i];
		struct gbuf *g = &h->aIn[i];
		int es = (int)task_dtype_size(tt->dtype);
		int64_t count, first;
		if (h->b->diff(h->b, payload(g), h->aaIn[s][i], task_numel(tt), es, &count, &first,
		               err) < 0)
			return -1;
		if (!count)
			continue;
		unsigned char now[8], was[8];
		if (h->b->download(h->b, now, (char *)payload(g) + first * es, (size_t)es, err) <
		        0 ||
		    h->b->download(h->b, was, (char *)h->aaIn[s][i] + first * es, (size_t)es, err) <
		        0)
			return -1;
		char idx[128];
		compare_index_str(tt, first, idx, sizeof idx);
		snprintf(
		    why, nWhy,
		    "input modified: %s%s was %g, is now %g after the run (%lld element%s changed)",
		    tt->zName, idx, compare_get(was, tt->dtype, 0), compare_get(now, tt->dtype, 0),
		    (long long)count, count == 1 ? "" : "s");
		return 1;
	}
	return 0;
}

/* compare the outputs with set s's expected values; fills the aggregate */
struct agg {
	double maxAbs, relL2;
	double tolFrac;   /* the worst element's share of its tolerance (compare.h) */
	double relL2Frac; /* relL2 / rel_l2 at worst */
	int tolDtype;     /* the dtype whose tolerance the worst output was judged by, or -1 */
	int64_t mismatches;
	int64_t nonFinite; /* of them, NaN or Inf outputs where the reference is finite */
	int64_t refNaN;    /* NaN in the reference's outputs (never a match) */
	int trials, passed;
};

static int check_outputs(struct harness *h, int s, struct agg *a, char *why, size_t nWhy,
                         const char *zWhen, char *err)
{
	int bad = 0;
	for (int j = 0; j < h->t->nOut; j++) {
		const struct task_tensor *tt = &h->t->aOut[j];
		struct gbuf *g = &h->aOut[j];
		struct compare_report r;
		if (h->b->compare(h->b, payload(g), h->aaExp[s][j], tt->dtype, task_numel(tt),
		                  &h->t->aTol[tt->dtype], &r, err) < 0)
			return -1;
		if (r.maxAbs > a->maxAbs)
			a->maxAbs = r.maxAbs;
		if (r.relL2 > a->relL2 || isnan(r.relL2))
			a->relL2 = r.relL2;
		const struct task_tol *tl = &h->t->aTol[tt->dtype];
		double l2f = tl->rel_l2 > 0 ? r.relL2 / tl->rel_l2 : (r.relL2 > 0 ? INFINITY : 0);
		if (a->tolDtype < 0 || r.tolFrac > a->tolFrac) {
			a->tolFrac = r.tolFrac;
			a->tolDtype = (int)tt->dtype;
		}
		if (l2f > a->relL2Frac)
			a->relL2Frac = l2f;
		/* varied inputs (heavy tails, outliers, a scale: harness_vary_of)
		 * make elements a faithful kernel cannot hold to a tolerance made
		 * for the plain ones (cancellation against an outlier-sized
		 * term); what they are for, an answer that does not follow the
		 * data, errs by far more than this relative L2 bound */
		int pass = r.pass;
		if (!pass && h->aVary && s >= 0 && s < h->nSets && h->aVary[s] && !r.nNonFinite &&
		    !r.nRefNaN &&
		    r.relL2 <= (tl->rel_l2 < VARIED_REL_L2 ? tl->rel_l2 : VARIED_REL_L2))
			pass = 1;
		else
			a->mismatches += r.nMismatch;
		a->nonFinite += r.nNonFinite;
		a->refNaN += r.nRefNaN;
		if (pass || bad)
			continue;
		bad = 1;
		const struct task_tol *tol = &h->t->aTol[tt->dtype];
		if (r.nRefNaN > 0) {
			snprintf(why, nWhy,
			         "%s: the reference's output %s has %lld NaN of %lld elements: NaN "
			         "never passes, so no candidate can match it (the reference or its "
			         "inputs are at fault: fix the reference, or the inputs' init)",
			         zWhen, tt->zName, (long long)r.nRefNaN, (long long)r.n);
		} else if (r.firstBad >= 0) {
			char idx[128];
			compare_index_str(tt, r.firstBad, idx, sizeof idx);
			char got[96];
			if (isnan(r.firstActual))
				snprintf(got, sizeof got,
				         "NaN (left unwritten? outputs are poisoned with NaN "
				         "before each run)");
			/* enough digits to tell the two apart (with --atol 0 --rtol 0
			 * one ulp is a mismatch, and 6 digits print it as no
			 * difference): 6, else as many as a double needs */
			int dig = 6;
			char a1[40], a2[40];
			while (dig < 17 && !isnan(r.firstActual)) {
				snprintf(a1, sizeof a1, "%.*g", dig, r.firstExpected);
				snprintf(a2, sizeof a2, "%.*g", dig, r.firstActual);
				if (strcmp(a1, a2))
					break;
				dig++;
			}
			char exp[40];
			snprintf(exp, sizeof exp, "%.*g", dig, r.firstExpected);
			if (!isnan(r.firstActual))
				snprintf(got, sizeof got, "%.*g", dig, r.firstActual);
			snprintf(
			    why, nWhy,
			    "%s: output %s differs from the reference at %s: expected %s, got %s "
			    "(%lld of %lld elements mismatch; relative L2 error %.3g)",
			    zWhen, tt->zName, idx, exp, got, (long long)r.nMismatch, (long long)r.n,
			    r.relL2);
		} else {
			snprintf(
			    why, nWhy,
			    "%s: output %s has relative L2 error %.3g, over the tolerance %.3g "
			    "(every element is within atol %.3g + rtol %.3g, but not the whole)",
			    zWhen, tt->zName, r.relL2, tol->rel_l2, tol->atol, tol->rtol);
		}
	}
	return bad;
}

static cJSON *verdict(const char *zStatus, const char *zReason)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "status", zStatus);
	cJSON_AddStringToObject(o, "reason", zReason);
	return o;
}

/* evict the candidate's own buffers, where the backend can */
static void evict_buffers(struct harness *h)
{
	if (!h->b->evict)
		return;
	for (int i = 0; i < h->t->nIn; i++)
		h->b->evict(h->b, payload(&h->aIn[i]), h->aIn[i].n);
	for (int j = 0; j < h->t->nOut; j++)
		h->b->evict(h->b, payload(&h->aOut[j]), h->aOut[j].n);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double pct(const double *s, int n, double q)
{
	double pos = q * (n - 1);
	int lo = (int)pos;
	int hi = lo + 1 < n ? lo + 1 : lo;
	return s[lo] + (s[hi] - s[lo]) * (pos - lo);
}

static double median_of(double *a, int n)
{
	qsort(a, (size_t)n, sizeof *a, cmp_double);
	return pct(a, n, 0.5);
}

/*
 * The cost of a strict run's frame: from an idle device, the start event, an
 * empty kernel (where the backend has one), the stream's end event, a
 * device-wide synchronize and the final event.  Subtracted from strict runs.
 */
/* an array of doubles that grows */
struct samples {
	double *a;
	size_t n, alloc;
};

/* a quick timing's state, for the full timing that follows it */
struct tcont {
	struct harness_cand *c; /* whose */
	struct samples ms, probe, wall, busys, near, fOwn, fTwin, cpus, nearCpu, fOwnCpu;
	double cal, nearFrame, nearCpuFrame, sum, sum2, rse, start, perRun;
	int warm, strict, n, clk0, retimed;
};

static void tcont_free(struct tcont *kc)
{
	if (!kc)
		return;
	free(kc->ms.a), free(kc->probe.a), free(kc->wall.a), free(kc->busys.a), free(kc->near.a);
	free(kc->fOwn.a), free(kc->fTwin.a);
	free(kc->cpus.a), free(kc->nearCpu.a), free(kc->fOwnCpu.a);
	free(kc);
}

static void tcont_drop(struct harness *h)
{
	tcont_free(h->cont);
	h->cont = NULL;
}

/* spread the checking sets left over the runs the budget allows, at perRun
 * seconds a run (a quick timing: about one; the full timing needs the rest) */
static void spread_checks(struct harness *h, double perRun)
{
	double expect = perRun > 0 ? h->o.budgetS / perRun : h->o.maxRuns;
	expect = expect > h->o.maxRuns   ? h->o.maxRuns
	         : expect < h->o.minRuns ? h->o.minRuns
	                                 : expect;
	h->pCheck = h->nPool > h->poolUsed ? (h->nPool - h->poolUsed) / expect : 1.0 / 16;
	if (h->quick)
		h->pCheck = 1.0 / expect;
	if (h->pCheck < 1.0 / 256)
		h->pCheck = 1.0 / 256;
}

static void push(struct samples *s, double v)
{
	xgrow((void **)&s->a, &s->alloc, s->n + 1, sizeof *s->a);
	s->a[s->n++] = v;
}

/* this thread's time waiting for a CPU so far, ms (0 where unknown) */
static double own_run_delay(void)
{
	static int fd = -2;
	if (fd == -2)
		fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
	char buf[128];
	ssize_t n = fd >= 0 ? pread(fd, buf, sizeof buf - 1, 0) : -1;
	if (n <= 0)
		return 0;
	buf[n] = 0;
	unsigned long long run = 0, wait = 0;
	return sscanf(buf, "%llu %llu", &run, &wait) == 2 ? (double)wait * 1e-6 : 0;
}

/* both sides' time waiting for a CPU so far, ms; *pSure: 0 when the
 * candidate's process is runnable now, so that a wait of it under way (begun
 * before now) would be counted later, as if it had come after now */
static double run_delay(struct harness_cand *c, int *pSure)
{
	int asleep = 1;
	double d = own_run_delay() + (c->sched_delay ? c->sched_delay(c, &asleep) : 0);
	*pSure = asleep;
	return d;
}

/*
 * The busy time of a round trip of wall ms between the delays d0 and d1, or
 * NAN when it cannot be known: the candidate's process was runnable at the
 * start (its waits counted within may have begun before), or the two
 * processes waited for most of it (the waits are summed, and on a busy
 * machine both wait at once: what is left is noise).
 */
static double busy_of(double wall, double d0, double d1, int sure)
{
	double waits = d1 - d0;
	return sure && waits <= 0.5 * wall ? wall - waits : NAN;
}

/* the CPUs this process, and so a runner it starts, may run on */
static int cpus_usable(void)
{
	static int n;
	if (!n) {
		cpu_set_t set;
		n = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 0;
		if (n < 1) {
			long k = sysconf(_SC_NPROCESSORS_ONLN);
			n = k > 0 ? (int)k : 1;
		}
	}
	return n;
}

/* c's CPU time so far, ms: the thread that calls kl_run, all of it (NAN
 * where unknown).  Not on the GPU: there the time a run reports is the
 * device's, and the CPU time of a launch (cuBLAS's choice of a kernel,
 * tens of microseconds) is in none of it, nor bounds it */
static void cpu_read(const struct harness *h, struct harness_cand *c, double *pMain, double *pAll)
{
	*pMain = *pAll = NAN;
	if (c->cpu && !(h->b->zName && !strcmp(h->b->zName, "cuda")))
		c->cpu(c, pMain, pAll);
}

/*
 * The CPU time a round trip took between two reads (m: the thread that
 * calls kl_run, a: all of the candidate), ms: a lower bound of how long its
 * work takes, however busy the machine (a process waiting for a CPU spends
 * none), so a bound where kloop's clock cannot tell runs from waits.  That
 * thread cannot have run longer than the round trip, nor all of it longer
 * than the round trip on every CPU it may use: the larger of the two, NAN
 * when neither is known.  The reads are taken with the process held
 * (settle), so nothing of it runs unseen between them.
 */
static double cpu_delta(double m0, double a0, double m1, double a1)
{
	double m = m1 - m0, a = (a1 - a0) / cpus_usable();
	return isnan(m) ? a : isnan(a) ? m : fmax(m, a);
}

/* whether c's CPU time covers every thread and process of it */
static int cpu_all_known(const struct harness *h, struct harness_cand *c)
{
	double m, a;
	cpu_read(h, c, &m, &a);
	return !isnan(a);
}

/* one frame, also timed by kloop's clock (round trip in ms into *pW);
 * returns as harness_cand's frame */
static int frame(struct harness *h, struct harness_cand *c, double *pMd, double *pW, char *why,
                 size_t nWhy, char *err)
{
	if (h->b->sync(h->b, err) < 0)
		return -1;
	double t0 = now_s();
	int rc = c->frame(c, pMd, why, nWhy, err);
	*pW = (now_s() - t0) * 1e3;
	settle(c);
	return rc;
}

static int calibrate(struct harness *h, struct harness_cand *c, double *pCal, char *why,
                     size_t nWhy, char *err)
{
	double d[21], w;
	for (int i = 0; i < 21; i++) {
		int rc = frame(h, c, &d[i], &w, why, nWhy, err);
		if (rc)
			return rc;
	}
	*pCal = median_of(d, 21);
	return 0;
}

/*
 * What comes before a timed run, and before an empty frame taken for the
 * clock's bound: the run's inputs (set, or fresh ones from seed when set <
 * 0), the outputs poisoned, the caches flushed, the buffers evicted.
 */
static int prepare_run(struct harness *h, int set, uint64_t seed, char *err)
{
	struct backend *b = h->b;
	double t0 = now_s();
	/* given inputs (PyTorch's) cannot be drawn afresh here: two of their
	 * sets, mixed element by element by a mask drawn for the run, are new
	 * bytes of the same values and structure */
	int sa = 0, sb = 0;
	if (set < 0 && !h->bGenerated) {
		uint64_t z = seed * 0x9e3779b97f4a7c15ull;
		sa = (int)((z >> 33) % (uint64_t)h->nSets);
		sb = h->nSets > 1 ? (sa + 1 + (int)((z >> 7) % (uint64_t)(h->nSets - 1))) % h->nSets
		                  : sa;
	}
	for (int i = 0; i < h->t->nIn; i++) {
		struct gbuf *g = &h->aIn[i];
		int es = (int)task_dtype_size(h->t->aIn[i].dtype);
		int rc =
		    set >= 0 ? b->copy(b, payload(g), h->aaIn[set][i], g->n, err)
		    : h->bGenerated
		        ? b->random(b, payload(g), &h->t->aIn[i], seed ^ (uint64_t)i, err)
		        : b->mix(b, payload(g), h->aaIn[sa][i], h->aaIn[sb][i],
		                 (int64_t)(g->n / (size_t)es), es, seed ^ ((uint64_t)i << 48), err);
		if (rc < 0)
			return -1;
	}
	if (poison_outputs(h, err) < 0 || b->flush(b, err) < 0 || b->sync(b, err) < 0)
		return -1;
	evict_buffers(h);
	h->lastPrepMs = (now_s() - t0) * 1e3;
	return 0;
}

/*
 * An empty frame timed by kloop's clock from the state a timed run starts
 * in: prepared as a run is (fresh inputs, poisoned outputs, the flush and
 * the eviction), both processes idle meanwhile.  Back-to-back frames are
 * faster than that (the processes, and in a VM the virtual CPUs, are still
 * awake), and a bound taken from them flags honest short runs on a busy or
 * virtual machine as lying about their time.
 */
static int cold_frame(struct harness *h, struct harness_cand *c, int k, double *pW, double *pCpu,
                      char *why, size_t nWhy, char *err)
{
	double md, m0, a0, m1, a1;
	if (prepare_run(h, -1, h->runSeed ^ 0xc01df4a3e5ull ^ ((uint64_t)k << 32), err) < 0)
		return -1;
	/* framed as a timed run is, the reads of the waits and CPU included */
	cpu_read(h, c, &m0, &a0);
	int sure, s1;
	double t0 = now_s(), d0 = run_delay(c, &sure);
	int rc = c->frame(c, &md, why, nWhy, err);
	double d1 = run_delay(c, &s1);
	*pW = busy_of((now_s() - t0) * 1e3, d0, d1, sure);
	settle(c);
	cpu_read(h, c, &m1, &a1);
	if (pCpu)
		*pCpu = cpu_delta(m0, a0, m1, a1);
	return rc;
}

int harness_preload(struct harness *h, struct harness_cand *c, char *why, size_t nWhy, char *err)
{
	c->nPreFrame = 0;
	c->preCal = NAN;
	c->prePrep = NAN;
	c->preTwin = NAN;
	if (!c->frame)
		return 0;
	double cal, w, cpu;
	int rc = calibrate(h, c, &cal, why, nWhy, err);
	if (rc)
		return rc;
	c->preCal = cal;
	/* a few first, as the process and the device wake up; each beside one
	 * of the clock's twin, so that how the two compare is known before the
	 * candidate could lengthen its own (frame_for) */
	double prep[HARNESS_PRE_FRAMES], tw[HARNESS_PRE_FRAMES];
	int nTw = 0;
	for (int k = 0; k < 2 + HARNESS_PRE_FRAMES; k++) {
		if ((rc = cold_frame(h, c, k, &w, &cpu, why, nWhy, err)))
			return rc;
		if (k >= 2) {
			prep[c->nPreFrame] = h->lastPrepMs;
			c->preCpu[c->nPreFrame] = cpu;
			c->preFrame[c->nPreFrame++] = w;
			double t = NAN;
			char tWhy[KL_ERRLEN], tErr[KL_ERRLEN];
			if (c->twin &&
			    cold_frame(h, c->twin, k, &t, NULL, tWhy, sizeof tWhy, tErr) == 0 &&
			    !isnan(t))
				tw[nTw++] = t;
		}
	}
	c->prePrep = median_of(prep, c->nPreFrame);
	c->preTwin = nTw ? median_of(tw, nTw) : NAN;
	return 0;
}

/* the median of c's frames before its load (NAN: none known) */
static double pre_median(const struct harness_cand *c)
{
	double v[HARNESS_PRE_FRAMES];
	int n = 0;
	for (int i = 0; i < c->nPreFrame; i++)
		if (!isnan(c->preFrame[i]))
			v[n++] = c->preFrame[i];
	return n ? median_of(v, n) : NAN;
}

static int gpu(const struct harness *h)
{
	return h->b->zName && !strcmp(h->b->zName, "cuda");
}

/*
 * The empty frame the runs after it are bounded with: one of the runner's
 * own, taken now, prepared as a run is (kloop's clock less it is the run's
 * own time; frames of another process, or of another moment, misjudged
 * honest runners by tens of microseconds: the twin, woken on another CPU
 * as often as not, half the runner's on the 2-core VM; on an H200 0.26 to
 * 0.36 ms, longer than the runs' own overhead and than the kernels timed),
 * and beside it one on the clock's twin (*pTwin, NAN without), which the
 * candidate cannot lengthen: frames_lengthened() compares the two with how
 * they compared before the candidate was loaded.  NAN when the runner's
 * own cannot be told from its waits.
 */
static double frame_for(struct harness *h, struct harness_cand *c, int k, double *pTwin,
                        double *pCpu)
{
	char why[KL_ERRLEN], err[KL_ERRLEN];
	double own = NAN, w = NAN;
	if (cold_frame(h, c, k, &own, pCpu, why, sizeof why, err) != 0)
		own = *pCpu = NAN;
	if (c->twin && cold_frame(h, c->twin, k, &w, NULL, why, sizeof why, err) != 0)
		w = NAN;
	*pTwin = w;
	return own;
}

/*
 * One timed run.  Fast: the flush is still running on the stream when the
 * start event is queued behind it, so the kernel starts as the event fires,
 * and the time is the stream's end event.  Strict: the device is idle at the
 * start, and the time runs to a device-wide synchronize, less the calibrated
 * frame: work on any stream counts, and none of it can hide behind ours.
 */
static int timed_run(struct harness *h, struct harness_cand *c, int strict, double cal, double *pT,
                     double *pW, double *pBusy, double *pCpu, int *pRc, char *why, size_t nWhy,
                     char *err)
{
	double ms, md, m0, a0, m1, a1;
	/* fresh inputs for every timed run, so that remembering an earlier
	 * answer does not pay (given inputs, e.g. PyTorch's, are mixed afresh
	 * from two of their sets: no two runs see the same bytes either); by
	 * chance, a checking set's, never seen before in this evaluation,
	 * whose outputs are then checked: the candidate cannot tell which */
	h->nRuns++;
	int chk = -1;
	double u = (double)(harness_random64() >> 11) * 0x1p-53;
	if (h->poolUsed < h->nPool && u < h->pCheck)
		chk = h->o.nTrials + 1 + h->poolUsed++;
	if (prepare_run(h, chk, h->runSeed ^ (h->nRuns * 0x9e3779b97f4a7c15ull), err) < 0)
		return -1;
	/* the waits for a CPU are read inside kloop's clock: a wait just
	 * outside it would count against the run and could make it look
	 * shorter than the candidate's own time */
	cpu_read(h, c, &m0, &a0);
	int sure, s1;
	double t0 = now_s(), d0 = run_delay(c, &sure);
	int rc = c->call(c, strict ? HC_STRICT : HC_FAST, pRc, &ms, &md, why, nWhy, err);
	double d1 = run_delay(c, &s1);
	*pW = (now_s() - t0) * 1e3;
	settle(c);
	if (pBusy)
		*pBusy = busy_of(*pW, d0, d1, sure);
	if (pCpu) {
		cpu_read(h, c, &m1, &a1);
		*pCpu = cpu_delta(m0, a0, m1, a1);
	}
	if (rc)
		return rc;
	*pT = strict ? (md - cal > 0 ? md - cal : 0) : ms;
	if (chk < 0 || *pRc)
		return 0;
	/* a checked run: nothing trampled, the inputs as given, the outputs right */
	char w[900], when[96];
	h->nChecked++;
	snprintf(when, sizeof when, "timed run %llu%s", (unsigned long long)h->nRuns,
	         vary_words(h, chk));
	int bad = check_guards(h, w, sizeof w, err);
	if (bad == 0)
		bad = check_inputs(h, chk, w, sizeof w, err);
	if (bad > 0)
		snprintf(why, nWhy, "%s: %s", when, w);
	if (bad == 0) {
		struct agg a = {.tolDtype = -1};
		bad = check_outputs(h, chk, &a, why, nWhy, when, err);
	}
	return bad < 0 ? -1 : bad ? HC_MISBEHAVED : 0;
}

static double median_copy(const struct samples *s)
{
	if (!s->n)
		return 0;
	double *c = xmalloc(s->n * sizeof *c);
	memcpy(c, s->a, s->n * sizeof *c);
	double m = median_of(c, (int)s->n);
	free(c);
	return m;
}

/*
 * A one-sided 99% lower confidence bound of the median of s: its k-th
 * smallest sample, k from the binomial (normal approximation: the number
 * of samples below the median is Binomial(n, 1/2)); the smallest for fewer
 * than 6 samples.
 */
static double lower_median(const struct samples *s)
{
	if (!s->n)
		return 0;
	double *c = xmalloc(s->n * sizeof *c);
	memcpy(c, s->a, s->n * sizeof *c);
	qsort(c, s->n, sizeof *c, cmp_double);
	double k = floor(0.5 * (double)s->n - 2.326 * 0.5 * sqrt((double)s->n));
	double v = c[k > 0 ? (size_t)k : 0];
	free(c);
	return v;
}

/* the samples of s at the places where key (s itself when NULL) is known
 * (not NAN), into *out */
static void known_of(const struct samples *s, const struct samples *key, struct samples *out)
{
	out->n = 0;
	for (size_t i = 0; i < s->n; i++)
		if (!isnan((key ? key : s)->a[i]))
			push(out, s->a[i]);
}

/*
 * The candidate answers its runner's empty frames later than before it was
 * loaded, measured against the clock's twin (a candidate that answered its
 * frames as late as its last run forged 10x and passed, issue 24; its
 * frames came 12-16 times later than expected here): 1 with why.  Its own
 * frames over the twin's, against the same ratio before the load, more
 * than 3 times and 20 us apart; without a twin, its own frames against
 * those before the load, as far.  The ratio is not steadier than that on
 * the 2-core VM: an honest 8 ms candidate's frames were half the twin's
 * before its load and as long after it (2.7x).  Where the CPU bound covers
 * the candidate (checkCpu), the test is the CPU time of its frames instead,
 * against that before the load, 3 times and 30 us (honest frames: 0.01 to
 * 0.07 ms, at most 3.2 times those before the load, idle or loaded; the
 * forger's spun as long as its runs, 1.1 ms).
 */
#define LENGTHENED_X 3.0
static int frames_lengthened(const struct harness_cand *c, const struct samples *own,
                             const struct samples *twin, const struct samples *ownCpu, int checkCpu,
                             char *why, size_t nWhy)
{
	struct samples o = {0}, t = {0};
	/* the CPU time of its frames too, which no load lengthens (where its
	 * process keeps no threads of its own, which run beside the frames) */
	double pc[HARNESS_PRE_FRAMES];
	int nPc = 0;
	for (int i = 0; i < c->nPreFrame; i++)
		if (!isnan(c->preCpu[i]))
			pc[nPc++] = c->preCpu[i];
	known_of(ownCpu, NULL, &o);
	if (checkCpu && nPc && o.n >= 2) {
		/* then the CPU bound holds too (timing_inconsistent), which frames
		 * lengthened by waiting do not fool: their CPU time is the test,
		 * not their length, which on a loaded machine is not comparable
		 * with that before the load */
		double mo = median_copy(&o), pre = median_of(pc, nPc);
		int rc = mo > LENGTHENED_X * pre + 0.03;
		if (rc)
			snprintf(
			    why, nWhy,
			    "the clock bound was not applied: the candidate's runner spent %.4g ms "
			    "of CPU time on an empty frame (median) against %.4g ms before its "
			    "load: the candidate lengthens them",
			    mo, pre);
		free(o.a);
		return rc;
	}
	o.n = 0;
	for (size_t i = 0; i < own->n && i < twin->n; i++)
		if (!isnan(own->a[i]) && !isnan(twin->a[i]))
			push(&o, own->a[i]), push(&t, twin->a[i]);
	double pre = pre_median(c), rc = 0;
	if (o.n >= 2 && !isnan(c->preTwin) && c->preTwin > 0 && !isnan(pre)) {
		double mo = median_copy(&o), mt = median_copy(&t), expect = pre / c->preTwin * mt;
		if (mo > LENGTHENED_X * expect + 0.02) {
			snprintf(
			    why, nWhy,
			    "the clock bound was not applied: the candidate's runner answered "
			    "empty "
			    "frames in %.4g ms (median), %.3gx what the clock's twin's %.4g ms and "
			    "the two before its load (%.4g against %.4g ms) lead one to expect: "
			    "the "
			    "candidate lengthens them",
			    mo, mo / expect, mt, pre, c->preTwin);
			rc = 1;
		}
	} else {
		known_of(own, NULL, &o);
		double mo = o.n ? median_copy(&o) : NAN;
		if (!isnan(mo) && !isnan(pre) && mo > LENGTHENED_X * pre + 0.02) {
			snprintf(why, nWhy,
			         "the clock bound was not applied: the candidate's runner answered "
			         "empty "
			         "frames in %.4g ms (median) against %.4g ms before its load: the "
			         "candidate lengthens them",
			         mo, pre);
			rc = 1;
		}
	}
	free(o.a), free(t.a);
	return rc > 0;
}

/*
 * Strict probes slower than the fast runs by more than launch noise mean the
 * candidate's work is not all on its stream (or it behaves differently when
 * the stream is busy): its time must be the strict one.
 */
static int probes_disagree(double probe, double fast)
{
	return probe > 1.15 * fast + 0.005;
}

/*
 * Kloop's clock around each run bounds the times the candidate's process
 * reports.  No run may report more than the round trip kloop saw; and the
 * median reported run may not fall below half of a 99% lower bound of the
 * median of each run's running time (the round trip less the time both
 * processes waited for a CPU in it: busy) less that of an empty frame (near:
 * the runner's own, taken before every fourth run from the state a run
 * starts in, so that a frame and its runs see the machine alike;
 * frames_lengthened() checks it against the clock's twin, which the
 * candidate cannot lengthen, as one that answered its own frames late did,
 * excusing a forged time).  Medians, not minima: on a busy machine a run of a
 * candidate that spins on the clock can be descheduled for most of it, and
 * a bound from the one least busy run would let a process that lies about
 * its time through (and the fastest reported run is as noisy); but the
 * lower confidence bound of the median keeps one noisy run in three from
 * making an honest one a liar.  It is the least busy run only below 6 runs
 * (the quick timing's), which a liar cannot rely on: the full timing, tens
 * of runs, bounds it again.  Runs whose busy time or frame cannot be known
 * (NAN: busy_of) are left out.
 * The same test on the CPU time of each run less its frame's (cpus,
 * nearCpu: cpu_delta), which no wait for a CPU lengthens: it finds a liar
 * on a machine too busy for the clock, and where it covers every thread of
 * the candidate (cpuVerifies: the host backend, kloop's cgroup, no threads
 * outliving kl_run) it bounds the time when the clock cannot (*pByCpu).  On
 * a loaded 2-core VM the clock could not bound half of the honest
 * candidates' timings.  0 when consistent, 1 with why, 2 when too few runs
 * could be bounded (why says so: a machine too busy to tell, or a process
 * that never sleeps).
 */
static int timing_inconsistent(const struct samples *rep, const struct samples *wall,
                               const struct samples *busy, const struct samples *near,
                               const struct samples *cpus, const struct samples *nearCpu,
                               int cpuVerifies, int *pByCpu, char *why, size_t nWhy)
{
	*pByCpu = 0;
	if (!rep->n || rep->n != wall->n || rep->n != busy->n || rep->n != near->n ||
	    rep->n != cpus->n || rep->n != nearCpu->n)
		return 0;
	double over = 0;
	size_t iOver = 0;
	for (size_t i = 0; i < rep->n; i++)
		if (rep->a[i] - wall->a[i] > over)
			over = rep->a[i] - wall->a[i], iOver = i;
	if (over > 0.05 + 0.01 * wall->a[iOver]) {
		snprintf(why, nWhy,
		         "timing inconsistent: the candidate's process reported %.4g ms for a run "
		         "that took %.4g ms by kloop's own clock",
		         rep->a[iOver], wall->a[iOver]);
		return 1;
	}
	/* the runs whose busy time and frame are both known */
	struct samples kr = {0}, kb = {0}, kd = {0};
	size_t nFrames = 0;
	for (size_t i = 0; i < rep->n; i++) {
		nFrames += !isnan(near->a[i]);
		if (!isnan(busy->a[i]) && !isnan(near->a[i])) {
			push(&kr, rep->a[i]);
			push(&kb, busy->a[i]);
			push(&kd, busy->a[i] - near->a[i]);
		}
	}
	int rc = 0;
	if (kb.n < 3 || kb.n * 3 < rep->n) {
		snprintf(why, nWhy,
		         "the clock bound was not applied: only %zu of %zu runs (%zu with an empty "
		         "frame) started with the candidate's process asleep and ran mostly on a "
		         "CPU, so its running time could not be told apart from its waits (a "
		         "machine too busy, or a process that never sleeps)",
		         kb.n, rep->n, nFrames);
		rc = 2;
	} else {
		double r = median_copy(&kr), b = median_copy(&kb), d = median_copy(&kd);
		/* the test is on a lower bound of that median, not the median
		 * itself: the quick timing bounds 3 to 5 runs, and a burst of load
		 * that slows 2 of 3 of them moves their median, which called an
		 * honest short candidate a liar; a process that hides its work
		 * does it in every run, and the bound moves with it */
		if (r < 0.5 * lower_median(&kd) - 0.005) {
			snprintf(
			    why, nWhy,
			    "timing inconsistent: the candidate's process reported a median run "
			    "of %.4g ms, but kloop's own clock saw a median of %.4g ms of running "
			    "(%.4g ms more than an empty run beside it)",
			    r, b, d);
			rc = 1;
		}
	}
	/* the runs whose CPU time and frame's are both known */
	kr.n = kd.n = 0;
	for (size_t i = 0; i < rep->n && rc != 1; i++)
		if (!isnan(cpus->a[i]) && !isnan(nearCpu->a[i])) {
			push(&kr, rep->a[i]);
			push(&kd, cpus->a[i] - nearCpu->a[i]);
		}
	if (rc != 1 && kd.n >= 3 && kd.n * 3 >= rep->n) {
		double r = median_copy(&kr), d = median_copy(&kd);
		if (r < 0.5 * lower_median(&kd) - 0.005) {
			snprintf(
			    why, nWhy,
			    "timing inconsistent: the candidate's process reported a median run "
			    "of %.4g ms, but it spent a median of %.4g ms on a CPU in a run more "
			    "than in an empty frame",
			    r, d);
			rc = 1;
		} else if (rc == 2 && cpuVerifies) {
			rc = 0;
			*pByCpu = 1;
		}
	}
	free(kd.a);
	free(kr.a);
	free(kb.a);
	return rc;
}

/*
 * kloop's own clock's time of each run (its busy time less its frame)
 * where both are known, into out.  The time of a candidate whose threads
 * outlive kl_run: held between calls, they run again when a request lets
 * the runner go, beside the runner's own steps before its timer starts
 * (and before a GPU's start event: its L2 flush, a synchronize), so work
 * they do there is in no time the runner reports (on a 2-core machine the
 * runner's main thread, queued behind such a thread, started its timer a
 * scheduler's slice late and found most of the rows done; on an H200 a
 * thread had the softmax ready before kl_run began).  kloop's clock covers
 * the round trip from before the runner is let go.
 */
static void clock_times(const struct samples *busy, const struct samples *near, struct samples *out)
{
	out->n = 0;
	for (size_t i = 0; i < busy->n && i < near->n; i++)
		if (!isnan(busy->a[i]) && !isnan(near->a[i]))
			push(out, busy->a[i] - near->a[i] > 0 ? busy->a[i] - near->a[i] : 0);
}

/* 1 with why when kloop's preparations of c's runs took much longer than
 * before it was loaded, on the GPU (see time_runs) */
static int gpu_busy_between(const struct harness *h, const struct harness_cand *c,
                            const struct samples *preps, char *why, size_t nWhy)
{
	if (!h->b->zName || strcmp(h->b->zName, "cuda") || isnan(c->prePrep) || preps->n < 3)
		return 0;
	double m = median_copy(preps);
	if (!(m > 2 * c->prePrep + 1.0))
		return 0;
	snprintf(why, nWhy,
	         "the clock bound was not applied: kloop's preparation of a run took %.3g ms "
	         "(median) against %.3g ms before the candidate was loaded: the GPU was kept busy "
	         "between calls (its context's work outlived the calls), and work done there is "
	         "in no time kloop reads",
	         m, c->prePrep);
	return 1;
}

static void add_finite(cJSON *o, const char *k, double v)
{
	if (isfinite(v))
		cJSON_AddNumberToObject(o, k, v);
	else
		cJSON_AddNullToObject(o, k);
}

/*
 * Time c on fresh inputs.  Returns the timing object, or NULL with why/err:
 * *pBad = HC_MISBEHAVED or HC_CRASHED when the candidate misbehaved or
 * crashed (why), 0 on kloop's own failure (err).
 */
static cJSON *time_runs(struct harness *h, struct harness_cand *c, harness_progress_fn progress,
                        void *arg, int *pBad, char *why, size_t nWhy, char *err)
{
	struct backend *b = h->b;
	*pBad = 0;
	int T = h->o.nTrials;
	double cal = 0, w, busy = 0, cpu = NAN, perRun, nearFrame = NAN, nearCpuFrame = NAN;
	struct samples ms = {0}, probe = {0}, wall = {0}, busys = {0}, near = {0}, kclk = {0};
	struct samples preps = {0};             /* kloop's preparation of each counted run, ms */
	struct samples fOwn = {0}, fTwin = {0}; /* each frame, the runner's own and the twin's */
	/* each run's CPU time, that of the frame before it, each frame's */
	struct samples cpus = {0}, nearCpu = {0}, fOwnCpu = {0};
	double twinFrame;
	int strict = 0, warm = 0, converged = 0, rc, crc, clk0 = -1, retimed = 0, nr = 0;
	double rse = INFINITY, sum = 0, sum2 = 0, start, t, probeMed = 0, fastMed = 0;
	struct tcont *kc = h->cont;
	h->cont = NULL;
	if (kc && kc->c == c && !h->quick && !kc->strict) {
		/* the full timing goes on from the quick one: warm, calibrated, its
		 * runs counted and its budget begun; the checking sets it did not
		 * use spread over the runs left.  Not from a quick timing that went
		 * device-wide: its few probes came right after the object's load
		 * (lazy module loading, first touches), and the full timing's own
		 * warm-up decides the method again */
		ms = kc->ms, probe = kc->probe, wall = kc->wall, busys = kc->busys;
		near = kc->near, nearFrame = kc->nearFrame;
		fOwn = kc->fOwn, fTwin = kc->fTwin;
		cpus = kc->cpus, nearCpu = kc->nearCpu, fOwnCpu = kc->fOwnCpu;
		nearCpuFrame = kc->nearCpuFrame;
		cal = kc->cal, sum = kc->sum, sum2 = kc->sum2;
		rse = kc->rse, start = kc->start, perRun = kc->perRun;
		warm = kc->warm, strict = kc->strict, nr = kc->n, clk0 = kc->clk0;
		retimed = kc->retimed;
		free(kc);
		spread_checks(h, perRun);
		if (prepare(h, T, err) < 0)
			goto fail;
		goto resume;
	}
	tcont_free(kc);
	h->runSeed = harness_random64();
	h->nChecked = 0;
	h->nRuns = 0;
	h->pCheck = 0.25;
	/* the empty frames, unless the runner's starter took them before the
	 * load (a candidate called in this process, in the unit tests) */
	if (!c->nPreFrame && (crc = harness_preload(h, c, why, nWhy, err)))
		goto called;
	if (prepare(h, T, err) < 0)
		return NULL;
	cal = isnan(c->preCal) ? 0 : c->preCal;
	/* warm-up, with strict probes in between */
	start = now_s();
	while (warm < 6 || (now_s() - start < h->o.warmupS && warm < 1000)) {
		int st = warm % 2;
		if ((crc = timed_run(h, c, st, cal, &t, &w, NULL, NULL, &rc, why, nWhy, err)))
			goto called;
		if (rc) {
			snprintf(why, nWhy, "kl_run returned %d during warm-up", rc);
			*pBad = HC_MISBEHAVED;
			goto fail;
		}
		push(st ? &probe : &ms, t);
		warm++;
	}
	strict = probes_disagree(median_copy(&probe), median_copy(&ms));
	perRun = (now_s() - start) / warm;
	spread_checks(h, perRun);
restart:
	ms.n = wall.n = busys.n = near.n = preps.n = fOwn.n = fTwin.n = 0;
	cpus.n = nearCpu.n = fOwnCpu.n = 0;
	clk0 = b->clock_mhz ? b->clock_mhz(b) : -1;
	converged = 0;
	sum = sum2 = 0;
	rse = INFINITY;
	start = now_s();
	nr = 0;
resume:
	for (;;) {
		/* every fourth run of the fast method, a strict probe (not counted);
		 * before every fourth from the first, an empty frame for the clock's
		 * bound on the twin (the runs after it are measured against it) */
		if (nr % 4 == 0) {
			nearFrame = frame_for(h, c, nr, &twinFrame, &nearCpuFrame);
			push(&fOwn, nearFrame);
			push(&fTwin, twinFrame);
			push(&fOwnCpu, nearCpuFrame);
		}
		if (!strict && nr % 4 == 3) {
			if ((crc =
			         timed_run(h, c, 1, cal, &t, &w, NULL, NULL, &rc, why, nWhy, err)))
				goto called;
			if (!rc)
				push(&probe, t);
		} else {
			if ((crc = timed_run(h, c, strict, cal, &t, &w, &busy, &cpu, &rc, why, nWhy,
			                     err)))
				goto called;
		}
		if (rc) {
			snprintf(why, nWhy, "kl_run returned %d during timed run %d", rc, nr + 1);
			*pBad = HC_MISBEHAVED;
			goto fail;
		}
		if (!strict && nr % 4 == 3) {
			nr++;
			continue;
		}
		push(&ms, t);
		push(&wall, w);
		push(&busys, busy);
		push(&near, nearFrame);
		push(&cpus, cpu);
		push(&nearCpu, nearCpuFrame);
		push(&preps, h->lastPrepMs);
		nr++;
		sum += t;
		sum2 += t * t;
		int k = (int)ms.n;
		if (k >= 2) {
			double mean = sum / k, var = (sum2 - k * mean * mean) / (k - 1);
			rse = var > 0 && mean > 0 ? sqrt(var / k) / mean : 0;
		}
		if (progress && (k % 16) == 0)
			progress("timing", k, arg);
		if (k >= h->o.minRuns && rse <= h->o.rse) {
			converged = 1;
			break;
		}
		if (k >= h->o.maxRuns || (k >= 3 && now_s() - start > h->o.budgetS))
			break;
	}
	probeMed = median_copy(&probe);
	fastMed = median_copy(&ms);
	if (!strict && probes_disagree(probeMed, fastMed)) {
		strict = 1;
		goto restart;
	}
	char bound[300] = "";
	/* threads that outlive kl_run: their CPU time beside the frames and
	 * the runs is no bound */
	int left = c->threads_left && !c->trusted ? c->threads_left(c) : 0;
	int byCpu = 0, cpuOk = !gpu(h) && cpu_all_known(h, c) && left == 0;
	int inc = c->trusted ? 0
	                     : timing_inconsistent(&ms, &wall, &busys, &near, &cpus, &nearCpu,
	                                           cpuOk, &byCpu, bound, sizeof bound);
	/* frames the candidate lengthened prove nothing (a liar still called
	 * inconsistent with them is one) */
	if (inc != 1 && !c->trusted &&
	    frames_lengthened(c, &fOwn, &fTwin, &fOwnCpu, cpuOk, bound, sizeof bound))
		inc = 2, byCpu = 0;
	if (inc) {
		/* a burst of noise on a busy machine can look like this once; a
		 * process that lies about its time does it every time.  A bound
		 * that could not be applied is tried twice more (load comes and
		 * goes), and one that still cannot leaves the time unverified */
		if (retimed++ < (inc == 2 ? 2 : 1))
			goto restart;
		if (inc == 1) {
			snprintf(why, nWhy, "%s", bound);
			*pBad = HC_MISBEHAVED;
			goto fail;
		}
	}
	/* the GPU busy while kloop prepared the runs: the candidate's context
	 * kept working between calls (a kernel left running by a runner that
	 * the candidate took over, which did not synchronize), and whatever it
	 * did there is in no round trip kloop times.  Contexts share the GPU by
	 * time slices, so kloop's own copies and flush wait for it */
	if (inc != 2 && !c->trusted && gpu_busy_between(h, c, &preps, bound, sizeof bound))
		inc = 2;
	free(preps.a);
	preps = (struct samples){0};
	/* threads that outlive kl_run: the time is kloop's clock's */
	int byClock = 0;
	if (left > 0 && inc != 2 && gpu(h)) {
		/* on the GPU kloop's clock is no time to report: its frames are
		 * longer than the runs' own overhead (a 0.095 ms softmax came to
		 * 0.049 ms by it on an H200) */
		snprintf(bound, sizeof bound,
		         "the clock bound was not applied: %d thread%s of the candidate outlived "
		         "kl_run, and on the GPU work such a thread starts between kloop's request "
		         "and the runner's start event is in no time the runner reports",
		         left, left == 1 ? "" : "s");
		inc = 2;
	} else if (left > 0 && inc != 2) {
		clock_times(&busys, &near, &kclk);
		byClock = kclk.n >= 3 && kclk.n * 3 >= ms.n;
		if (!byClock) {
			snprintf(
			    bound, sizeof bound,
			    "the clock bound was not applied: %d thread%s of the candidate "
			    "outlived "
			    "kl_run, so its time is kloop's own clock's, and only %zu of %zu runs "
			    "could be measured by it",
			    left, left == 1 ? "" : "s", kclk.n, ms.n);
			inc = 2;
		}
	}
	struct samples *S = byClock ? &kclk : &ms;
	int n = (int)S->n;
	if (byClock) {
		sum = sum2 = 0;
		for (int i = 0; i < n; i++)
			sum += S->a[i], sum2 += S->a[i] * S->a[i];
		double mean = sum / n, var = n > 1 ? (sum2 - n * mean * mean) / (n - 1) : 0;
		rse = var > 0 && mean > 0 ? sqrt(var / n) / mean : 0;
	}
	int clk1 = b->clock_mhz ? b->clock_mhz(b) : -1;
	char thr[256] = "";
	int throttled = b->throttled ? b->throttled(b, thr, sizeof thr) : -1;
	if (h->quick)
		goto summary; /* the run after timing is the full timing's: its input once */
	/* one more run, as the timed ones but on the timing set, whose output
	 * must be right, with nothing trampled */
	if (prepare(h, T, err) < 0 || b->flush(b, err) < 0)
		goto fail;
	evict_buffers(h);
	if ((crc = call(c, &rc, why, nWhy, err)))
		goto called;
	if (rc) {
		snprintf(why, nWhy, "kl_run returned %d after the timed runs", rc);
		*pBad = HC_MISBEHAVED;
		goto fail;
	}
	int bad = check_guards(h, why, nWhy, err);
	if (bad == 0)
		bad = check_inputs(h, T, why, nWhy, err);
	if (bad == 0) {
		struct agg a = {.tolDtype = -1};
		bad = check_outputs(h, T, &a, why, nWhy, "the run after timing", err);
	}
	if (bad == 0 && precision_add_after_timing(h->prec, h, err) < 0)
		bad = -1;
	if (bad) {
		*pBad = bad > 0 ? HC_MISBEHAVED : 0;
		goto fail;
	}
summary:;
	double *sorted = xmalloc((size_t)n * sizeof *sorted);
	memcpy(sorted, S->a, (size_t)n * sizeof *sorted);
	qsort(sorted, (size_t)n, sizeof *sorted, cmp_double);
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "median_ms", pct(sorted, n, 0.5));
	cJSON_AddNumberToObject(o, "p10_ms", pct(sorted, n, 0.1));
	cJSON_AddNumberToObject(o, "p90_ms", pct(sorted, n, 0.9));
	cJSON_AddNumberToObject(o, "min_ms", sorted[0]);
	cJSON_AddNumberToObject(o, "mean_ms", sum / n);
	cJSON_AddNumberToObject(o, "count", n);
	cJSON_AddNumberToObject(o, "rse", isfinite(rse) ? rse : -1);
	cJSON_AddBoolToObject(o, "converged", converged);
	cJSON_AddNumberToObject(o, "warmup_runs", warm);
	cJSON_AddStringToObject(o, "method", strict ? "device-wide" : "stream");
	cJSON_AddNumberToObject(o, "probe_median_ms", probeMed);
	cJSON_AddNumberToObject(o, "probes", (double)probe.n);
	cJSON_AddNumberToObject(o, "frame_ms", cal);
	cJSON_AddNumberToObject(o, "checked_runs", h->nChecked);
	cJSON_AddNumberToObject(o, "wall_median_ms", median_copy(&wall));
	struct samples kf = {0};
	known_of(&near, NULL, &kf);
	cJSON_AddNumberToObject(o, "frame_wall_median_ms", median_copy(&kf));
	/* the frames the bound was checked against: before the load (the
	 * runner's own and the twin's beside them), and since (both) */
	add_finite(o, "frame_before_load_ms", pre_median(c));
	add_finite(o, "twin_before_load_ms", c->preTwin);
	struct samples kt = {0};
	known_of(&fTwin, NULL, &kt);
	if (kt.n)
		cJSON_AddNumberToObject(o, "twin_frame_median_ms", median_copy(&kt));
	/* the CPU time of a run and of a frame (cpu_delta) */
	known_of(&cpus, NULL, &kt);
	if (kt.n)
		cJSON_AddNumberToObject(o, "cpu_median_ms", median_copy(&kt));
	known_of(&fOwnCpu, NULL, &kt);
	if (kt.n)
		cJSON_AddNumberToObject(o, "frame_cpu_median_ms", median_copy(&kt));
	kt.n = 0;
	for (int i = 0; i < c->nPreFrame; i++)
		if (!isnan(c->preCpu[i]))
			push(&kt, c->preCpu[i]);
	if (kt.n)
		cJSON_AddNumberToObject(o, "frame_cpu_before_load_ms", median_copy(&kt));
	free(kt.a);
	free(kf.a);
	/* verified: kloop's own clock bounded the time; otherwise it is shown
	 * as unverified and never ranked (never the best, a parent, a win) */
	cJSON_AddBoolToObject(o, "verified", inc != 2);
	if (inc == 2)
		cJSON_AddStringToObject(o, "clock_bound", bound);
	else if (!c->trusted)
		cJSON_AddStringToObject(o, "bound", byCpu ? "cpu" : "clock");
	if (left > 0)
		cJSON_AddNumberToObject(o, "threads_left", left);
	if (byClock) {
		cJSON_AddStringToObject(o, "clock", "kloop");
		char note[300];
		snprintf(note, sizeof note,
		         "timed by kloop's own clock (each run's round trip less an empty frame), "
		         "not the runner's: %d thread%s of the candidate outlived kl_run, and what "
		         "such a thread does before the runner starts its timer is in no time the "
		         "runner reports",
		         left, left == 1 ? "" : "s");
		cJSON_AddStringToObject(o, "clock_note", note);
	}
	free(kclk.a);
	kclk = (struct samples){0};
	if (strict)
		cJSON_AddStringToObject(
		    o, "note",
		    "the candidate's work is not all on the stream it was given "
		    "(or it behaves differently when that stream is busy): "
		    "timed from an idle device to a device-wide synchronize");
	if (clk0 >= 0) {
		cJSON_AddNumberToObject(o, "sm_clock_mhz_before", clk0);
		cJSON_AddNumberToObject(o, "sm_clock_mhz_after", clk1);
	}
	if (throttled >= 0) {
		cJSON_AddBoolToObject(o, "throttled", throttled > 0);
		if (throttled > 0)
			cJSON_AddStringToObject(o, "throttle_reason", thr);
	}
	free(sorted);
	if (h->quick) {
		/* kept for the full timing of the same candidate (time_runs) */
		struct tcont *q = xcalloc(1, sizeof *q);
		*q = (struct tcont){.c = c,
		                    .ms = ms,
		                    .probe = probe,
		                    .wall = wall,
		                    .busys = busys,
		                    .near = near,
		                    .nearFrame = nearFrame,
		                    .fOwn = fOwn,
		                    .fTwin = fTwin,
		                    .cpus = cpus,
		                    .nearCpu = nearCpu,
		                    .fOwnCpu = fOwnCpu,
		                    .nearCpuFrame = nearCpuFrame,
		                    .cal = cal,
		                    .sum = sum,
		                    .sum2 = sum2,
		                    .rse = rse,
		                    .start = start,
		                    .perRun = perRun,
		                    .warm = warm,
		                    .strict = strict,
		                    .n = nr,
		                    .clk0 = clk0,
		                    .retimed = retimed};
		h->cont = q;
		return o;
	}
	free(ms.a);
	free(probe.a);
	free(wall.a);
	free(busys.a);
	free(near.a);
	free(fOwn.a);
	free(fTwin.a);
	free(cpus.a);
	free(nearCpu.a);
	free(fOwnCpu.a);
	return o;
called:
	*pBad = crc > 0 ? crc : 0;
fail:
	free(ms.a);
	free(probe.a);
	free(wall.a);
	free(busys.a);
	free(near.a);
	free(kclk.a);
	free(preps.a);
	free(fOwn.a);
	free(fTwin.a);
	free(cpus.a);
	free(nearCpu.a);
	free(fOwnCpu.a);
	return NULL;
}

int harness_run_reference(struct harness *h, struct harness_cand *ref, char *err)
{
	char why[KL_ERRLEN];
	for (int s = 0; s < h->nSets; s++) {
		if (prepare(h, s, err) < 0)
			return -1;
		int rc, crc = call(ref, &rc, why, sizeof why, err);
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
		int bad = check_guards(h, why, sizeof why, err);
		if (bad == 0)
			bad = check_inputs(h, s, why, sizeof why, err);
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
	return poison_outputs(h, err) < 0 ? -1 : h->b->sync(h->b, err);
}

/* a number, or null when it is not finite (JSON has no inf or NaN) */

static cJSON *correctness_json(const struct harness *h, const struct agg *a, int nTrials)
{
	cJSON *c = cJSON_CreateObject();
	cJSON_AddNumberToObject(c, "trials", nTrials);
	cJSON_AddNumberToObject(c, "trials_run", a->trials);
	cJSON_AddNumberToObject(c, "trials_passed", a->passed);
	cJSON_AddNumberToObject(c, "max_abs_error", a->maxAbs);
	add_finite(c, "rel_l2_error", a->relL2);
	cJSON_AddNumberToObject(c, "mismatches", (double)a->mismatches);
	/* max_abs_error is over finite pairs: these are the others */
	cJSON_AddNumberToObject(c, "non_finite", (double)a->nonFinite);
	if (a->refNaN)
		cJSON_AddNumberToObject(c, "reference_nan", (double)a->refNaN);
	if (h->aVary) {
		/* which trials' inputs were varied, and how many checking sets */
		cJSON *v = cJSON_AddObjectToObject(c, "inputs");
		cJSON *tr = cJSON_AddArrayToObject(v, "trials");
		int nPool = 0;
		for (int s = 0; s < h->nSets; s++)
			if (s < h->o.nTrials)
				cJSON_AddItemToArray(
				    tr, cJSON_CreateString(rng_vary_name(h->aVary[s])));
			else
				nPool += s > h->o.nTrials && h->aVary[s];
		cJSON_AddNumberToObject(v, "varied_checking_sets", nPool);
		if (h->varyUnsound)
			cJSON_AddStringToObject(v, "unsound", rng_vary_name(h->varyUnsound));
	}
	if (a->trials && a->tolDtype >= 0) {
		add_finite(c, "tol_fraction", a->tolFrac);
		add_finite(c, "rel_l2_fraction", a->relL2Frac);
		const struct task_tol *tl = &h->t->aTol[a->tolDtype];
		cJSON *t = cJSON_AddObjectToObject(c, "tolerance");
		cJSON_AddStringToObject(t, "dtype", task_dtype_name((kl_dtype)a->tolDtype));
		cJSON_AddNumberToObject(t, "atol", tl->atol);
		cJSON_AddNumberToObject(t, "rtol", tl->rtol);
		add_finite(t, "rel_l2", tl->rel_l2);
		const char *from = h->t->zTolFrom;
		if (!task_dtype_is_float((kl_dtype)a->tolDtype) && h->t->zTolFromInt)
			from = h->t->zTolFromInt; /* flags and KernelBench set floats only */
		cJSON_AddStringToObject(t, "from", from ? from : "default");
	}
	return c;
}

static cJSON *crashed(struct harness *h, const char *zWhen, const char *err)
{
	char *z =
	    xasprintf("%s: %s%s", zWhen, err, h->b->fatal ? " (the device context is lost)" : "");
	cJSON *o = verdict("crashed", z);
	free(z);
	return o;
}

/* the verdict of a call that did not come back normally (crc: HC_*, or -1) */
static cJSON *called_verdict(struct harness *h, int crc, const char *zWhen, const char *why,
                             const char *err, const struct agg *a)
{
	if (crc < 0)
		return crashed(h, zWhen, err);
	char *z = xasprintf("%s: %s", zWhen, why);
	cJSON *o = verdict(crc == HC_CRASHED ? "crashed" : "incorrect", z);
	free(z);
	if (crc == HC_MISBEHAVED)
		cJSON_AddItemToObject(o, "correctness", correctness_json(h, a, h->o.nTrials));
	return o;
}

/*
 * time_runs under the options of one cascade stage: nQuick > 0 runs exactly
 * that many timed runs after a short warm-up (the quick timing), 0 the full
 * timing.  The timing object, or NULL with *pFail the verdict of the
 * failure (crashed, incorrect: a checked run or the run after timing).
 */
static cJSON *timed(struct harness *h, struct harness_cand *c, int nQuick,
                    harness_progress_fn progress, void *arg, cJSON **pFail)
{
	char err[KL_ERRLEN] = "", why[1024] = "";
	struct harness_opts keep = h->o;
	if (nQuick > 0) {
		h->o.minRuns = h->o.maxRuns = nQuick;
		h->o.warmupS = 0;
		h->o.rse = 0;
		h->o.budgetS = 1e30; /* exactly nQuick runs, however slow */
	}
	h->quick = nQuick > 0;
	int isBad;
	cJSON *tm = time_runs(h, c, progress, arg, &isBad, why, sizeof why, err);
	h->o = keep;
	h->quick = 0;
	*pFail = NULL;
	if (tm) {
		if (nQuick > 0)
			cJSON_AddBoolToObject(tm, "quick", 1);
		return tm;
	}
	struct agg a = {.tolDtype = -1};
	if (isBad == HC_CRASHED)
		*pFail = called_verdict(h, isBad, "timing", why, err, &a);
	else if (isBad)
		*pFail = verdict("incorrect", why);
	else
		*pFail = crashed(h, "timing", err);
	return NULL;
}

cJSON *harness_eval(struct harness *h, struct harness_cand *c, int bTime,
                    harness_progress_fn progress, void *arg)
{
	char err[KL_ERRLEN] = "", why[1024] = "";
	struct agg a = {.tolDtype = -1};
	struct backend *b = h->b;
	double t0 = now_s();
	tcont_drop(h);
	h->poolUsed = 0; /* a new evaluation: every checking set unseen */
	precision_reset(h->prec);
	if (b->reset && b->reset(b, err) < 0)
		return crashed(h, "resetting the device before the run", err);
	/* the empty frames before its first call, where its starter did not
	 * take them before the load (a candidate called in this process) */
	if (bTime && !c->nPreFrame) {
		int crc = harness_preload(h, c, why, sizeof why, err);
		if (crc)
			return called_verdict(h, crc, "the empty frames before the trials", why,
			                      err, &a);
	}
	for (int s = 0; s < h->o.nTrials; s++) {
		if (progress)
			progress("checking", s + 1, arg);
		/* flushed as a timed run is: the cache's state tells a trial from
		 * a timed run no more than anything else does */
		if (prepare(h, s, err) < 0 || b->flush(b, err) < 0 || b->sync(b, err) < 0)
			return crashed(h, "preparing the buffers", err);
		evict_buffers(h);
		int rc;
		char when[96];
		snprintf(when, sizeof when, "trial %d of %d%s", s + 1, h->o.nTrials,
		         vary_words(h, s));
		int crc = call(c, &rc, why, sizeof why, err);
		if (crc)
			return called_verdict(h, crc, when, why, err, &a);
		if (b->sync(b, err) < 0)
			return crashed(h, when, err);
		a.trials++;
		int bad = 0;
		if (rc) {
			snprintf(why, sizeof why, "%s: kl_run returned %d", when, rc);
			bad = 1;
		}
		if (!bad) {
			char w[900];
			bad = check_guards(h, w, sizeof w, err);
			if (bad == 0)
				bad = check_inputs(h, s, w, sizeof w, err);
			if (bad > 0)
				snprintf(why, sizeof why, "%s: %s", when, w);
		}
		if (!bad)
			bad = check_outputs(h, s, &a, why, sizeof why, when, err);
		if (!bad && precision_add_trial(h->prec, h, s, err) < 0)
			bad = -1;
		if (bad < 0)
			return crashed(h, when, err);
		if (bad) {
			cJSON *o = verdict("incorrect", why);
			cJSON_AddItemToObject(o, "correctness",
			                      correctness_json(h, &a, h->o.nTrials));
			return o;
		}
		a.passed++;
	}
	cJSON *o = verdict("correct", "");
	cJSON_AddItemToObject(o, "correctness", correctness_json(h, &a, h->o.nTrials));
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
	cJSON *tm = timed(h, c, 0, progress, arg, &fail);
	if (!tm) {
		cJSON_Delete(o);
		if (!strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(fail, "status")), "incorrect"))
			cJSON_AddItemToObject(fail, "correctness",
			                      correctness_json(h, &a, h->o.nTrials));
		return fail;
	}
	cJSON_AddItemToObject(o, "timing", tm);
	cJSON_AddNumberToObject(o, "time_seconds", now_s() - t1);
	/* the precision again, with the run after timing's */
	if ((pr = harness_precision(h)))
		cJSON_ReplaceItemInObject(o, "precision", pr);
	return o;
}

cJSON *harness_time(struct harness *h, struct harness_cand *c, int nQuick,
                    harness_progress_fn progress, void *arg, cJSON **pFail)
{
	return timed(h, c, nQuick, progress, arg, pFail);
}

cJSON *harness_time_only(struct harness *h, struct harness_cand *c, char *err)
{
	char why[1024];
	int bad;
	h->poolUsed = 0;
	cJSON *tm = time_runs(h, c, NULL, NULL, &bad, why, sizeof why, err);
	if (!tm && bad)
		kl_err(err, "the reference misbehaved while timed: %s", why);
	return tm;
}

/* P(X >= k) for X ~ Binomial(n, 1/2): the sign test's one-sided p-value */
static double sign_p(int k, int n)
{
	double p = 0, c = 1; /* C(n, i) / 2^n, built up in logs to stay finite */
	for (int i = 0; i <= n; i++) {
		c = lgamma(n + 1.0) - lgamma(i + 1.0) - lgamma(n - i + 1.0) - n * log(2.0);
		if (i >= k)
			p += exp(c);
	}
	return p > 1 ? 1 : p;
}

static void add_spread(cJSON *o, const char *zWho, struct samples *s)
{
	qsort(s->a, s->n, sizeof *s->a, cmp_double);
	int n = (int)s->n;
	cJSON *t = cJSON_AddObjectToObject(o, zWho);
	if (!n)
		return;
	cJSON_AddNumberToObject(t, "median_ms", pct(s->a, n, 0.5));
	cJSON_AddNumberToObject(t, "p10_ms", pct(s->a, n, 0.1));
	cJSON_AddNumberToObject(t, "p90_ms", pct(s->a, n, 0.9));
}

cJSON *harness_ab(struct harness *h, struct harness_cand *inc, struct harness_cand *cand,
                  const struct harness_ab_opts *ao, harness_progress_fn progress, void *arg,
                  int *pWho, cJSON **pFail)
{
	char err[KL_ERRLEN] = "", why[1024] = "", when[96];
	struct harness_cand *side[2] = {inc, cand};
	struct samples ts[2] = {{0}}, ratio = {0}, wall[2] = {{0}}, busy[2] = {{0}},
	               near[2] = {{0}}, fOwn[2] = {{0}}, fTwin[2] = {{0}}, cpus[2] = {{0}},
	               nearCpu[2] = {{0}}, fOwnCpu[2] = {{0}};
	double cal[2], t, w, bz, cz;
	int rc = 0, crc = 0, who = 0, wins = 0, n = 0;
	*pFail = NULL;
	*pWho = -1;
	tcont_drop(h);
	h->runSeed = harness_random64();
	h->nChecked = 0;
	h->nRuns = 0;
	h->pCheck = h->nPool > h->poolUsed
	                ? (double)(h->nPool - h->poolUsed) / (2.0 * (ao->nPairs + 2))
	                : 0;
	snprintf(when, sizeof when, "the empty frames before the A/B runs");
	for (who = 0; who < 2; who++)
		if (!side[who]->nPreFrame &&
		    (crc = harness_preload(h, side[who], why, sizeof why, err)))
			goto called;
	for (int k = 0; k < 2; k++)
		cal[k] = isnan(side[k]->preCal) ? 0 : side[k]->preCal;
	if (prepare(h, h->o.nTrials, err) < 0)
		goto kloop;
	/* warm both up, alternately */
	for (int i = 0; i < 6; i++) {
		who = i % 2;
		snprintf(when, sizeof when, "warm-up before the A/B runs");
		if ((crc = timed_run(h, side[who], ao->strict, cal[who], &t, &w, NULL, NULL, &rc,
		                     why, sizeof why, err)))
			goto called;
		if (rc)
			goto returned;
	}
	double start = now_s();
	for (n = 0; n < ao->nPairs;) {
		/* each pair on the same inputs, in an unpredictable order */
		int first = (int)(harness_random64() & 1);
		uint64_t runs = h->nRuns;
		double pair[2], nf[2], nc[2];
		for (int k = 0; k < 2; k++) {
			if (n % 2 == 0) {
				double tw;
				nf[k] = frame_for(h, side[k], n, &tw, &nc[k]);
				push(&fOwn[k], nf[k]);
				push(&fTwin[k], tw);
				push(&fOwnCpu[k], nc[k]);
			} else {
				nf[k] = near[k].a[near[k].n - 1];
				nc[k] = nearCpu[k].a[nearCpu[k].n - 1];
			}
		}
		for (int k = 0; k < 2; k++) {
			who = k ? !first : first;
			h->nRuns = runs;
			snprintf(when, sizeof when, "A/B pair %d", n + 1);
			if ((crc = timed_run(h, side[who], ao->strict, cal[who], &pair[who], &w,
			                     &bz, &cz, &rc, why, sizeof why, err)))
				goto called;
			if (rc)
				goto returned;
			push(&wall[who], w);
			push(&busy[who], bz);
			push(&near[who], nf[who]);
			push(&cpus[who], cz);
			push(&nearCpu[who], nc[who]);
		}
		push(&ts[0], pair[0]);
		push(&ts[1], pair[1]);
		push(&ratio, pair[1] > 0 ? pair[0] / pair[1] : INFINITY);
		wins += pair[1] < pair[0];
		n++;
		if (progress)
			progress("a/b", n, arg);
		if (n >= HARNESS_AB_MIN_PAIRS && now_s() - start > ao->budgetS)
			break;
	}
	/* each side's times bounded by kloop's clock, as in its timing: a
	 * challenger that forges its A/B times is a liar, and an A/B whose
	 * times cannot be bounded confirms nothing */
	char bound[2][300] = {"", ""};
	int inc2[2], byCpu[2];
	for (int k = 0; k < 2; k++) {
		int left = side[k]->threads_left ? side[k]->threads_left(side[k]) : 0;
		int cpuOk = !gpu(h) && cpu_all_known(h, side[k]) && left == 0;
		inc2[k] =
		    timing_inconsistent(&ts[k], &wall[k], &busy[k], &near[k], &cpus[k], &nearCpu[k],
		                        cpuOk, &byCpu[k], bound[k], sizeof bound[k]);
		if (inc2[k] != 1 && !side[k]->trusted &&
		    frames_lengthened(side[k], &fOwn[k], &fTwin[k], &fOwnCpu[k], cpuOk, bound[k],
		                      sizeof bound[k]))
			inc2[k] = 2, byCpu[k] = 0;
	}
	for (who = 1; who >= 0; who--)
		if (inc2[who] == 1) {
			snprintf(when, sizeof when, "the A/B timing");
			snprintf(why, sizeof why, "%s", bound[who]);
			crc = HC_MISBEHAVED;
			goto called;
		}
	int verified = inc2[0] != 2 && inc2[1] != 2;
	/* a side whose threads outlive kl_run is timed by kloop's clock
	 * (clock_times): its pair times are its round trips less their frames,
	 * and the pairs are counted again over the pairs both sides have */
	int byClock = 0;
	for (int k = 0; k < 2; k++)
		if (side[k]->threads_left && side[k]->threads_left(side[k]) > 0 && gpu(h)) {
			verified = 0;
			snprintf(
			    bound[k], sizeof bound[k],
			    "the clock bound was not applied: the %s's threads outlived kl_run, "
			    "and on the GPU their work before the start event is in no time",
			    k ? "candidate" : "incumbent");
			inc2[k] = 2;
		} else if (side[k]->threads_left && side[k]->threads_left(side[k]) > 0) {
			byClock |= 1 << k;
			for (size_t i = 0; i < ts[k].n; i++)
				ts[k].a[i] = isnan(busy[k].a[i]) || isnan(near[k].a[i])
				                 ? NAN
				                 : fmax(busy[k].a[i] - near[k].a[i], 0);
		}
	if (byClock) {
		ratio.n = 0;
		wins = 0;
		size_t m = 0;
		for (size_t i = 0; i < ts[0].n && i < ts[1].n; i++) {
			if (isnan(ts[0].a[i]) || isnan(ts[1].a[i]))
				continue;
			push(&ratio, ts[1].a[i] > 0 ? ts[0].a[i] / ts[1].a[i] : INFINITY);
			wins += ts[1].a[i] < ts[0].a[i];
			ts[0].a[m] = ts[0].a[i], ts[1].a[m] = ts[1].a[i], m++;
		}
		ts[0].n = ts[1].n = m;
		n = (int)ratio.n;
		if (n < HARNESS_AB_MIN_PAIRS / 2) {
			verified = 0;
			snprintf(
			    bound[1], sizeof bound[1],
			    "the clock bound was not applied: a side's threads outlived kl_run, so "
			    "its A/B times are kloop's clock's, and only %d pairs could be "
			    "measured "
			    "by it",
			    n);
			inc2[1] = 2;
		}
	}
	double p = sign_p(wins, n);
	qsort(ratio.a, ratio.n, sizeof *ratio.a, cmp_double);
	double med = pct(ratio.a, n, 0.5);
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "pairs", n);
	cJSON_AddNumberToObject(o, "wins", wins);
	cJSON_AddNumberToObject(o, "p_value", p);
	add_finite(o, "ratio", med);
	add_spread(o, "incumbent", &ts[0]);
	add_spread(o, "candidate", &ts[1]);
	cJSON_AddStringToObject(o, "method", ao->strict ? "device-wide" : "stream");
	cJSON_AddNumberToObject(o, "checked_runs", h->nChecked);
	cJSON_AddBoolToObject(o, "won", verified && p < HARNESS_AB_ALPHA && med > 1.0);
	cJSON_AddBoolToObject(o, "verified", verified);
	if (verified)
		cJSON_AddStringToObject(o, "bound", byCpu[0] || byCpu[1] ? "cpu" : "clock");
	if (byClock)
		cJSON_AddStringToObject(o, "clock",
		                        byClock == 3 ? "kloop (both sides: threads outlived kl_run)"
		                        : byClock == 2
		                            ? "kloop for the candidate (its threads outlived "
		                              "kl_run)"
		                            : "kloop for the incumbent (its threads outlived "
		                              "kl_run)");
	if (!verified)
		cJSON_AddStringToObject(o, "clock_bound", bound[inc2[1] == 2 ? 1 : 0]);
	char rule[160];
	snprintf(rule, sizeof rule,
	         "sign test: faster in %d of %d pairs (one-sided p %.3g, needs < %g) and the "
	         "median pair ratio %.3g above 1",
	         wins, n, p, HARNESS_AB_ALPHA, med);
	cJSON_AddStringToObject(o, "rule", rule);
	free(ts[0].a), free(ts[1].a), free(ratio.a);
	for (int k = 0; k < 2; k++)
		free(wall[k].a), free(busy[k].a), free(near[k].a), free(fOwn[k].a),
		    free(fTwin[k].a), free(cpus[k].a), free(nearCpu[k].a), free(fOwnCpu[k].a);
	return o;
returned:
	snprintf(why, sizeof why, "kl_run returned %d", rc);
	crc = HC_MISBEHAVED;
called:
	if (crc > 0) {
		char *z = xasprintf("%s: %s", when, why);
		*pFail = verdict(crc == HC_CRASHED ? "crashed" : "incorrect", z);
		free(z);
		*pWho = who;
	} else {
	kloop:
		*pFail = crashed(h, "the A/B timing", err);
	}
	free(ts[0].a), free(ts[1].a), free(ratio.a);
	for (int k = 0; k < 2; k++)
		free(wall[k].a), free(busy[k].a), free(near[k].a), free(fOwn[k].a),
		    free(fTwin[k].a), free(cpus[k].a), free(nearCpu[k].a), free(fOwnCpu[k].a);
	return NULL;
}
