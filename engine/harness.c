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
	void ***aaIn;       /* [set][input] pristine inputs, in device memory */
	void ***aaExp;      /* [set][output] expected outputs, in device memory */
	struct gbuf aIn[TASK_MAX_TENSORS], aOut[TASK_MAX_TENSORS];
	kl_tensor atIn[TASK_MAX_TENSORS], atOut[TASK_MAX_TENSORS];
	int bGenerated;     /* inputs drawn by harness_generate_inputs (not given) */
	uint64_t nRuns;     /* timed runs so far: seeds their fresh inputs */
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
			g->base = b->alloc(b, g->n + 2 * GUARD, err);
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
	free(h->pGuard);
	free(h->pGuardRead);
	free(h);
}

int harness_generate_inputs(struct harness *h, char *err)
{
	h->bGenerated = 1;
	for (int s = 0; s < h->nSets; s++)
		for (int i = 0; i < h->t->nIn; i++) {
			uint64_t seed = h->o.seed * 1000003ull + (uint64_t)s * 7919ull + (uint64_t)i;
			if (h->b->random(h->b, h->aaIn[s][i], &h->t->aIn[i], seed, err) < 0)
				return -1;
		}
	return h->b->sync(h->b, err);
}

int harness_set_input(struct harness *h, int s, int i, const void *p, char *err)
{
	return h->b->upload(h->b, h->aaIn[s][i], p, tensor_bytes(&h->t->aIn[i]), err);
}

int harness_set_expected(struct harness *h, int s, int j, const void *p, char *err)
{
	return h->b->upload(h->b, h->aaExp[s][j], p, tensor_bytes(&h->t->aOut[j]), err);
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
		const struct task_tensor *tt = &h->t->aIn[i];
		struct gbuf *g = &h->aIn[i];
		int es = (int)task_dtype_size(tt->dtype);
		int64_t count, first;
		if (h->b->diff(h->b, payload(g), h->aaIn[s][i], task_numel(tt), es, &count, &first, err) < 0)
			return -1;
		if (!count)
			continue;
		unsigned char now[8], was[8];
		if (h->b->download(h->b, now, (char *)payload(g) + first * es, (size_t)es, err) < 0 ||
		    h->b->download(h->b, was, (char *)h->aaIn[s][i] + first * es, (size_t)es, err) < 0)
			return -1;
		char idx[128];
		compare_index_str(tt, first, idx, sizeof idx);
		snprintf(why, nWhy, "input modified: %s%s was %g, is now %g after the run (%lld element%s changed)",
			 tt->zName, idx, compare_get(was, tt->dtype, 0), compare_get(now, tt->dtype, 0),
			 (long long)count, count == 1 ? "" : "s");
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
		struct compare_report r;
		if (h->b->compare(h->b, payload(g), h->aaExp[s][j], tt->dtype, task_numel(tt),
				  &h->t->aTol[tt->dtype], &r, err) < 0)
			return -1;
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
static int calibrate(struct harness *h, double *pCal, char *err)
{
	struct backend *b = h->b;
	double d[21], s;
	for (int i = 0; i < 21; i++)
		if (b->sync(b, err) < 0 || b->timer_start(b, err) < 0 ||
		    (b->launch_empty && b->launch_empty(b, err) < 0) || b->timer_stop(b, &s, &d[i], err) < 0)
			return -1;
	*pCal = median_of(d, 21);
	return 0;
}

/*
 * One timed run.  Fast: the flush is still running on the stream when the
 * start event is queued behind it, so the kernel starts as the event fires,
 * and the time is the stream's end event.  Strict: the device is idle at the
 * start, and the time runs to a device-wide synchronize, less the calibrated
 * frame: work on any stream counts, and none of it can hide behind ours.
 */
static int timed_run(struct harness *h, kl_run_fn fn, int strict, double cal, double *pT, int *pRc,
		     char *err)
{
	struct backend *b = h->b;
	double ms, md;
	/* fresh inputs for every timed run, so that remembering an earlier
	 * answer does not pay (given inputs, e.g. PyTorch's, rotate instead) */
	h->nRuns++;
	for (int i = 0; i < h->t->nIn; i++) {
		struct gbuf *g = &h->aIn[i];
		int rc = h->bGenerated
				 ? b->random(b, payload(g), &h->t->aIn[i], ~h->o.seed ^ (h->nRuns * 0x9e3779b97f4a7c15ull) ^ (uint64_t)i, err)
				 : b->copy(b, payload(g), h->aaIn[h->nRuns % (uint64_t)h->nSets][i], g->n, err);
		if (rc < 0)
			return -1;
	}
	if (poison_outputs(h, err) < 0 || b->flush(b, err) < 0)
		return -1;
	evict_buffers(h);
	if (strict && b->sync(b, err) < 0)
		return -1;
	if (b->timer_start(b, err) < 0)
		return -1;
	*pRc = call(h, fn);
	if (b->timer_stop(b, &ms, &md, err) < 0 || b->sync(b, err) < 0)
		return -1;
	*pT = strict ? (md - cal > 0 ? md - cal : 0) : ms;
	return 0;
}

/* an array of doubles that grows */
struct samples {
	double *a;
	size_t n, alloc;
};

static void push(struct samples *s, double v)
{
	xgrow((void **)&s->a, &s->alloc, s->n + 1, sizeof *s->a);
	s->a[s->n++] = v;
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
 * Strict probes slower than the fast runs by more than launch noise mean the
 * candidate's work is not all on its stream (or it behaves differently when
 * the stream is busy): its time must be the strict one.
 */
static int probes_disagree(double probe, double fast)
{
	return probe > 1.15 * fast + 0.005;
}

/*
 * Time fn on the timing set.  Returns the timing object, or NULL with
 * why/err: *pBad = 1 when the candidate misbehaved (why), 0 on a backend
 * error (err).
 */
static cJSON *time_runs(struct harness *h, kl_run_fn fn, harness_progress_fn progress, void *arg,
			int *pBad, char *why, size_t nWhy, char *err)
{
	struct backend *b = h->b;
	*pBad = 0;
	int T = h->o.nTrials;
	double cal = 0;
	if (prepare(h, T, err) < 0 || calibrate(h, &cal, err) < 0)
		return NULL;
	struct samples ms = {0}, probe = {0};
	int strict = 0, warm = 0, converged = 0, rc, clk0 = -1;
	double rse = INFINITY, sum = 0, sum2 = 0, start, t, probeMed = 0, fastMed = 0;
	/* warm-up, with strict probes in between */
	start = now_s();
	while (warm < 6 || (now_s() - start < h->o.warmupS && warm < 1000)) {
		int st = warm % 2;
		if (timed_run(h, fn, st, cal, &t, &rc, err) < 0)
			goto fail;
		if (rc) {
			snprintf(why, nWhy, "kl_run returned %d during warm-up", rc);
			*pBad = 1;
			goto fail;
		}
		push(st ? &probe : &ms, t);
		warm++;
	}
	strict = probes_disagree(median_copy(&probe), median_copy(&ms));
restart:
	ms.n = 0;
	clk0 = b->clock_mhz ? b->clock_mhz(b) : -1;
	converged = 0;
	sum = sum2 = 0;
	rse = INFINITY;
	start = now_s();
	for (int n = 0;;) {
		/* every fourth run of the fast method, a strict probe (not counted) */
		if (!strict && n % 4 == 3) {
			if (timed_run(h, fn, 1, cal, &t, &rc, err) < 0)
				goto fail;
			if (!rc)
				push(&probe, t);
		} else {
			if (timed_run(h, fn, strict, cal, &t, &rc, err) < 0)
				goto fail;
		}
		if (rc) {
			snprintf(why, nWhy, "kl_run returned %d during timed run %d", rc, n + 1);
			*pBad = 1;
			goto fail;
		}
		if (!strict && n % 4 == 3) {
			n++;
			continue;
		}
		push(&ms, t);
		n++;
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
	int n = (int)ms.n;
	int clk1 = b->clock_mhz ? b->clock_mhz(b) : -1;
	char thr[256] = "";
	int throttled = b->throttled ? b->throttled(b, thr, sizeof thr) : -1;
	/* one more run, as the timed ones but on the timing set, whose output
	 * must be right, with nothing trampled */
	if (prepare(h, T, err) < 0 || b->flush(b, err) < 0)
		goto fail;
	evict_buffers(h);
	rc = call(h, fn);
	if (b->sync(b, err) < 0)
		goto fail;
	if (rc) {
		snprintf(why, nWhy, "kl_run returned %d after the timed runs", rc);
		*pBad = 1;
		goto fail;
	}
	int bad = check_guards(h, why, nWhy, err);
	if (bad == 0)
		bad = check_inputs(h, T, why, nWhy, err);
	if (bad == 0) {
		struct agg a = {0};
		bad = check_outputs(h, T, &a, why, nWhy, "the run after timing", err);
	}
	if (bad) {
		*pBad = bad > 0;
		goto fail;
	}
	double *sorted = xmalloc((size_t)n * sizeof *sorted);
	memcpy(sorted, ms.a, (size_t)n * sizeof *sorted);
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
	if (strict)
		cJSON_AddStringToObject(o, "note", "the candidate's work is not all on the stream it was given "
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
	free(ms.a);
	free(probe.a);
	return o;
fail:
	free(ms.a);
	free(probe.a);
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
			if (h->b->copy(h->b, h->aaExp[s][j], payload(g), g->n, err) < 0)
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
