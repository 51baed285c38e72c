/*
 * harness.c - the trustworthy measurement: every run on guarded, poisoned
 * buffers with inputs verified unchanged; correctness over several trials
 * with fresh inputs; timing with flushed caches until the median is stable.
 */
#include "harness.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "rng.h"
#include "util.h"

#define GUARD (64 * 1024)  /* bytes of guard band on each side of a buffer */
#define GUARD_BYTE 0xCB    /* the guard pattern */
#define POISON_FLOAT 0xFF  /* all-ones: NaN in f16, bf16, f32 and f64 */
#define POISON_INT 0x5A

volatile int harness_in_candidate;

struct gbuf {
	char *base;  /* allocation: GUARD + n + GUARD */
	size_t n;    /* payload bytes */
};

struct harness {
	const struct task *t;
	struct backend *b;
	struct harness_opts o;
	int nSets;          /* trials + 1 */
	void ***aaIn;       /* [set][input] host copies */
	void ***aaExp;      /* [set][output] expected outputs */
	struct gbuf aIn[TASK_MAX_TENSORS], aOut[TASK_MAX_TENSORS];
	kl_tensor atIn[TASK_MAX_TENSORS], atOut[TASK_MAX_TENSORS];
	void *pScratch;     /* host buffer for downloads (largest tensor) */
	unsigned char *pGuard; /* host copy of the expected guard band */
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
}

static size_t tensor_bytes(const struct task_tensor *t)
{
	return (size_t)task_numel(t) * task_dtype_size(t->dtype);
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

struct harness *harness_new(const struct task *t, struct backend *b, const struct harness_opts *o,
			    char *err)
{
	struct harness *h = xcalloc(1, sizeof *h);
	h->t = t;
	h->b = b;
	h->o = *o;
	if (h->o.nTrials < 1)
		h->o.nTrials = 1;
	h->nSets = h->o.nTrials + 1;
	h->aaIn = xcalloc((size_t)h->nSets, sizeof(void **));
	h->aaExp = xcalloc((size_t)h->nSets, sizeof(void **));
	size_t maxBytes = 0;
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
			g->n = tensor_bytes(tt);
			if (g->n > maxBytes)
				maxBytes = g->n;
			g->base = b->alloc(b, g->n + 2 * GUARD, err);
			if (!g->base) {
				harness_free(h);
				return NULL;
			}
			kt->data = payload(g);
			kt->dtype = tt->dtype;
			kt->ndim = tt->ndim;
			memcpy(kt->shape, tt->shape, sizeof kt->shape);
		}
	}
	h->pScratch = xmalloc(maxBytes ? maxBytes : 1);
	h->pGuard = xmalloc(GUARD);
	memset(h->pGuard, GUARD_BYTE, GUARD);
	h->pGuardRead = xmalloc(GUARD);
	return h;
}

void harness_free(struct harness *h)
{
	if (!h)
		return;
	for (int i = 0; i < h->t->nIn; i++)
		if (h->aIn[i].base)
			h->b->release(h->b, h->aIn[i].base);
	for (int i = 0; i < h->t->nOut; i++)
		if (h->aOut[i].base)
			h->b->release(h->b, h->aOut[i].base);
	for (int s = 0; s < h->nSets; s++) {
		for (int i = 0; i < h->t->nIn; i++)
			free(h->aaIn[s][i]);
		for (int i = 0; i < h->t->nOut; i++)
			free(h->aaExp[s][i]);
		free(h->aaIn[s]);
		free(h->aaExp[s]);
	}
	free(h->aaIn);
	free(h->aaExp);
	free(h->pScratch);
	free(h->pGuard);
	free(h->pGuardRead);
	free(h);
}

void harness_generate_inputs(struct harness *h)
{
	for (int s = 0; s < h->nSets; s++)
		for (int i = 0; i < h->t->nIn; i++) {
			struct rng r;
			rng_seed(&r, h->o.seed * 1000003ull + (uint64_t)s * 7919ull + (uint64_t)i);
			free(h->aaIn[s][i]);
			h->aaIn[s][i] = xmalloc(tensor_bytes(&h->t->aIn[i]));
			rng_fill(&r, &h->t->aIn[i], h->aaIn[s][i]);
		}
}

void harness_set_input(struct harness *h, int s, int i, const void *p)
{
	size_t n = tensor_bytes(&h->t->aIn[i]);
	free(h->aaIn[s][i]);
	h->aaIn[s][i] = xmalloc(n);
	memcpy(h->aaIn[s][i], p, n);
}

void harness_set_expected(struct harness *h, int s, int j, const void *p)
{
	size_t n = tensor_bytes(&h->t->aOut[j]);
	free(h->aaExp[s][j]);
	h->aaExp[s][j] = xmalloc(n);
	memcpy(h->aaExp[s][j], p, n);
}

/* upload set s's inputs, reset every guard band and poison the outputs */
static int prepare(struct harness *h, int s, char *err)
{
	struct backend *b = h->b;
	for (int i = 0; i < h->t->nIn; i++) {
		struct gbuf *g = &h->aIn[i];
		if (b->fill(b, g->base, GUARD_BYTE, GUARD, err) < 0 ||
		    b->fill(b, g->base + GUARD + g->n, GUARD_BYTE, GUARD, err) < 0 ||
		    b->upload(b, payload(g), h->aaIn[s][i], g->n, err) < 0)
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

/* call the candidate once; returns its return code */
static int call(struct harness *h, kl_run_fn fn)
{
	harness_in_candidate = 1;
	int rc = fn(h->atIn, h->t->nIn, h->atOut, h->t->nOut, h->b->stream);
	harness_in_candidate = 0;
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
		snprintf(why, nWhy, "out-of-bounds write: %zu bytes after the end of %s %s were changed (from byte %zu past the end)",
			 last - first + 1, zWhere, zName, first);
	else
		snprintf(why, nWhy, "out-of-bounds write: bytes before the start of %s %s were changed (from %zu bytes before it)",
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
			rc = check_band(h, g->base + GUARD + g->n, zWhere, zName, 1, why, nWhy, err);
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
		struct gbuf *g = &h->aIn[i];
		if (h->b->download(h->b, h->pScratch, payload(g), g->n, err) < 0)
			return -1;
		if (!memcmp(h->pScratch, h->aaIn[s][i], g->n))
			continue;
		size_t es = task_dtype_size(h->t->aIn[i].dtype);
		const unsigned char *a = h->pScratch, *b = h->aaIn[s][i];
		size_t k = 0, changed = 0;
		while (k < g->n && a[k] == b[k])
			k++;
		for (size_t e = 0; e < g->n / es; e++)
			changed += memcmp(a + e * es, b + e * es, es) != 0;
		char idx[128];
		compare_index_str(&h->t->aIn[i], (int64_t)(k / es), idx, sizeof idx);
		snprintf(why, nWhy, "input modified: %s%s was %g, is now %g after the run (%zu element%s changed)",
			 h->t->aIn[i].zName, idx, compare_get(b, h->t->aIn[i].dtype, (int64_t)(k / es)),
			 compare_get(a, h->t->aIn[i].dtype, (int64_t)(k / es)), changed, changed == 1 ? "" : "s");
		return 1;
	}
	return 0;
}

/* compare the outputs with set s's expected values; fills the aggregate */
struct agg {
	double maxAbs, relL2;
	int64_t mismatches;
	int trials, passed;
};

static int check_outputs(struct harness *h, int s, struct agg *a, char *why, size_t nWhy,
			 const char *zWhen, char *err)
{
	int bad = 0;
	for (int j = 0; j < h->t->nOut; j++) {
		const struct task_tensor *tt = &h->t->aOut[j];
		struct gbuf *g = &h->aOut[j];
		if (h->b->download(h->b, h->pScratch, payload(g), g->n, err) < 0)
			return -1;
		struct compare_report r;
		compare_buffers(h->pScratch, h->aaExp[s][j], tt->dtype, task_numel(tt),
				&h->t->aTol[tt->dtype], &r);
		if (r.maxAbs > a->maxAbs)
			a->maxAbs = r.maxAbs;
		if (r.relL2 > a->relL2 || isnan(r.relL2))
			a->relL2 = r.relL2;
		a->mismatches += r.nMismatch;
		if (r.pass || bad)
			continue;
		bad = 1;
		const struct task_tol *tol = &h->t->aTol[tt->dtype];
		if (r.firstBad >= 0) {
			char idx[128];
			compare_index_str(tt, r.firstBad, idx, sizeof idx);
			char got[96];
			if (isnan(r.firstActual))
				snprintf(got, sizeof got, "NaN (left unwritten? outputs are poisoned with NaN before each run)");
			else
				snprintf(got, sizeof got, "%.6g", r.firstActual);
			snprintf(why, nWhy,
				 "%s: output %s differs from the reference at %s: expected %.6g, got %s "
				 "(%lld of %lld elements mismatch; relative L2 error %.3g)",
				 zWhen, tt->zName, idx, r.firstExpected, got, (long long)r.nMismatch,
				 (long long)r.n, r.relL2);
		} else {
			snprintf(why, nWhy,
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
		h->b->evict(h->b, h->aIn[i].base, h->aIn[i].n + 2 * GUARD);
	for (int j = 0; j < h->t->nOut; j++)
		h->b->evict(h->b, h->aOut[j].base, h->aOut[j].n + 2 * GUARD);
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

/*
 * Time fn on the timing set (inputs already uploaded and checked by the
 * caller's prepare()).  Returns the timing object, or NULL with why/err:
 * *pBad = 1 when the candidate misbehaved (why), -1 on a backend error (err).
 */
static cJSON *time_runs(struct harness *h, kl_run_fn fn, harness_progress_fn progress, void *arg,
			int *pBad, char *why, size_t nWhy, char *err)
{
	struct backend *b = h->b;
	*pBad = 0;
	int T = h->o.nTrials;
	if (prepare(h, T, err) < 0)
		return NULL;
	double t0 = now_s();
	int warm = 0;
	while (warm < 3 || (now_s() - t0 < h->o.warmupS && warm < 1000)) {
		int rc = call(h, fn);
		if (b->sync(b, err) < 0)
			return NULL;
		if (rc) {
			snprintf(why, nWhy, "kl_run returned %d during warm-up", rc);
			*pBad = 1;
			return NULL;
		}
		warm++;
	}
	int clk0 = b->clock_mhz ? b->clock_mhz(b) : -1;
	size_t nAlloc = 256;
	double *ms = xmalloc(nAlloc * sizeof *ms);
	int n = 0, converged = 0;
	double sum = 0, sum2 = 0, rse = INFINITY;
	double start = now_s();
	for (;;) {
		if (poison_outputs(h, err) < 0 || b->flush(b, err) < 0)
			goto fail;
		evict_buffers(h);
		if (b->sync(b, err) < 0 || b->timer_start(b, err) < 0)
			goto fail;
		int rc = call(h, fn);
		double t;
		if (b->timer_stop(b, &t, err) < 0 || b->sync(b, err) < 0)
			goto fail;
		if (rc) {
			snprintf(why, nWhy, "kl_run returned %d during timed run %d", rc, n + 1);
			*pBad = 1;
			goto fail;
		}
		if ((size_t)n == nAlloc) {
			nAlloc *= 2;
			ms = xrealloc(ms, nAlloc * sizeof *ms);
		}
		ms[n++] = t;
		sum += t;
		sum2 += t * t;
		if (n >= 2) {
			double mean = sum / n, var = (sum2 - n * mean * mean) / (n - 1);
			rse = var > 0 && mean > 0 ? sqrt(var / n) / mean : 0;
		}
		if (progress && (n % 16) == 0)
			progress("timing", n, arg);
		if (n >= h->o.minRuns && rse <= h->o.rse) {
			converged = 1;
			break;
		}
		if (n >= h->o.maxRuns || (n >= 3 && now_s() - start > h->o.budgetS))
			break;
	}
	int clk1 = b->clock_mhz ? b->clock_mhz(b) : -1;
	char thr[256] = "";
	int throttled = b->throttled ? b->throttled(b, thr, sizeof thr) : -1;
	/* the output of the last timed run must be right, and nothing trampled */
	int bad = check_guards(h, why, nWhy, err);
	if (bad == 0)
		bad = check_inputs(h, T, why, nWhy, err);
	if (bad == 0) {
		struct agg a = {0};
		bad = check_outputs(h, T, &a, why, nWhy, "the last timed run", err);
	}
	if (bad) {
		*pBad = bad > 0;
		goto fail;
	}
	double *sorted = xmalloc((size_t)n * sizeof *sorted);
	memcpy(sorted, ms, (size_t)n * sizeof *sorted);
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
	free(ms);
	return o;
fail:
	free(ms);
	return NULL;
}

int harness_run_reference(struct harness *h, kl_run_fn fn, char *err)
{
	char why[KL_ERRLEN];
	for (int s = 0; s < h->nSets; s++) {
		if (prepare(h, s, err) < 0)
			return -1;
		int rc = call(h, fn);
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
			free(h->aaExp[s][j]);
			h->aaExp[s][j] = xmalloc(g->n);
			if (h->b->download(h->b, h->aaExp[s][j], payload(g), g->n, err) < 0)
				return -1;
		}
	}
	/* leave nothing of the reference's results in device memory */
	return poison_outputs(h, err) < 0 ? -1 : h->b->sync(h->b, err);
}

static cJSON *correctness_json(const struct agg *a, int nTrials)
{
	cJSON *c = cJSON_CreateObject();
	cJSON_AddNumberToObject(c, "trials", nTrials);
	cJSON_AddNumberToObject(c, "trials_run", a->trials);
	cJSON_AddNumberToObject(c, "trials_passed", a->passed);
	cJSON_AddNumberToObject(c, "max_abs_error", a->maxAbs);
	cJSON_AddNumberToObject(c, "rel_l2_error", isfinite(a->relL2) ? a->relL2 : -1);
	cJSON_AddNumberToObject(c, "mismatches", (double)a->mismatches);
	return c;
}

static cJSON *crashed(struct harness *h, const char *zWhen, const char *err)
{
	char *z = xasprintf("%s: %s%s", zWhen, err, h->b->fatal ? " (the device context is lost)" : "");
	cJSON *o = verdict("crashed", z);
	free(z);
	return o;
}

cJSON *harness_eval(struct harness *h, kl_run_fn fn, int bTime, harness_progress_fn progress,
		    void *arg)
{
	char err[KL_ERRLEN] = "", why[1024] = "";
	struct agg a = {0};
	struct backend *b = h->b;
	double t0 = now_s();
	if (b->reset && b->reset(b, err) < 0)
		return crashed(h, "resetting the device before the run", err);
	for (int s = 0; s < h->o.nTrials; s++) {
		if (progress)
			progress("checking", s + 1, arg);
		if (prepare(h, s, err) < 0)
			return crashed(h, "preparing the buffers", err);
		int rc = call(h, fn);
		char when[64];
		snprintf(when, sizeof when, "trial %d of %d", s + 1, h->o.nTrials);
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
		if (bad < 0)
			return crashed(h, when, err);
		if (bad) {
			cJSON *o = verdict("incorrect", why);
			cJSON_AddItemToObject(o, "correctness", correctness_json(&a, h->o.nTrials));
			return o;
		}
		a.passed++;
	}
	cJSON *o = verdict("correct", "");
	cJSON_AddItemToObject(o, "correctness", correctness_json(&a, h->o.nTrials));
	cJSON_AddNumberToObject(o, "check_seconds", now_s() - t0);
	if (!bTime)
		return o;
	double t1 = now_s();
	if (progress)
		progress("timing", 0, arg);
	int isBad;
	cJSON *tm = time_runs(h, fn, progress, arg, &isBad, why, sizeof why, err);
	if (!tm) {
		cJSON_Delete(o);
		if (isBad) {
			o = verdict("incorrect", why);
			cJSON_AddItemToObject(o, "correctness", correctness_json(&a, h->o.nTrials));
			return o;
		}
		return crashed(h, "timing", err);
	}
	cJSON_AddItemToObject(o, "timing", tm);
	cJSON_AddNumberToObject(o, "time_seconds", now_s() - t1);
	return o;
}

cJSON *harness_time_only(struct harness *h, kl_run_fn fn, char *err)
{
	char why[1024];
	int bad;
	cJSON *tm = time_runs(h, fn, NULL, NULL, &bad, why, sizeof why, err);
	if (!tm && bad)
		kl_err(err, "the reference misbehaved while timed: %s", why);
	return tm;
}
