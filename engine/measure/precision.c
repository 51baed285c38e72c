/*
 * precision.c - the precision verdict (precision.h): sums of squared errors
 * against the float64 reference, on the device where the backend has a
 * kernel for it, and the rule that tells faithful from reduced.
 */
#include "precision.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "util.h"

struct precision {
	struct harness *h64;        /* the float64 reference's harness (owned) */
	int nTrials;                /* the trials whose float64 outputs it holds */
	double ref[CMP_NSUM];       /* the task's reference against it, over every trial */
	double emu[PRECISION_NEMU]; /* relative L2 of each emulation (-1: not measured) */
	double acc; /* what summing in the output's type may cost, any order: 2 u sqrt(L),
	               L the input elements per output element (precision.h) */
	double cand[CMP_NSUM]; /* the candidate's, over the trials added */
	int nAdded;
	double after[CMP_NSUM]; /* ... and in the run after timing (the timing set) */
	int nAfter;
};

/* the harness's task with its float outputs in float64 */
static struct task *task64(const struct task *t)
{
	struct task *t64 = xmalloc(sizeof *t64);
	*t64 = *t;
	for (int j = 0; j < t64->nOut; j++)
		if (task_dtype_is_float(t64->aOut[j].dtype))
			t64->aOut[j].dtype = KL_F64;
	return t64;
}

void precision_discard(struct harness *h64)
{
	if (!h64)
		return;
	struct task *t64 = (struct task *)harness_task(h64);
	harness_free(h64);
	free(t64);
}

int precision_emu_bits(int k, int *pTruncate)
{
	*pTruncate = k == PRECISION_EMU10Z;
	return k == PRECISION_EMU7 ? 7 : 10;
}

struct harness *precision_harness(struct harness *h, char *err)
{
	const struct task *t = harness_task(h);
	int nFloat = 0;
	for (int j = 0; j < t->nOut; j++)
		nFloat += task_dtype_is_float(t->aOut[j].dtype);
	if (!nFloat) {
		kl_err(err, "the task has no floating-point output");
		return NULL;
	}
	struct backend *b = harness_backend(h);
	struct harness_opts o = *harness_options(h);
	/* the first trials only (their float64 outputs are twice a float
	 * set's size): as many as fit, down to one and no emulation */
	o.nTrials = o.nTrials < PRECISION_TRIALS ? o.nTrials : PRECISION_TRIALS;
	o.nPool = PRECISION_NEMU;
	struct task *t64 = task64(t);
	struct harness *h64 = NULL;
	while (!(h64 = harness_new(t64, b, &o, err)) && o.nTrials > 1)
		o.nTrials--;
	if (!h64) {
		free(t64);
		return NULL;
	}
	/* the trials' and the timing set's inputs as h has them (the timing
	 * set's: h's own, the run after timing's); the emulation sets: the
	 * first trial's, rounded */
	int nTrials = o.nTrials, nSets = harness_nsets(h64), hTiming = harness_options(h)->nTrials;
	void *host = NULL;
	for (int i = 0; i < t->nIn; i++) {
		size_t n = task_tensor_bytes(&t->aIn[i]);
		for (int s = 0; s <= nTrials; s++)
			if (b->copy(b, harness_input_buf(h64, s, i),
			            harness_input_buf(h, s < nTrials ? s : hTiming, i), n, err) < 0)
				goto fail;
		free(host);
		host = xmalloc(n ? n : 1);
		for (int k = 0; k < PRECISION_NEMU && nTrials + 1 + k < nSets; k++) {
			if (b->download(b, host, harness_input_buf(h, 0, i), n, err) < 0)
				goto fail;
			int tr, bits = precision_emu_bits(k, &tr);
			compare_round_mantissa(host, t->aIn[i].dtype, task_numel(&t->aIn[i]), bits,
			                       tr);
			if (harness_set_input(h64, nTrials + 1 + k, i, host, err) < 0)
				goto fail;
		}
	}
	free(host);
	if (b->sync(b, err) < 0)
		goto fail_host_freed;
	return h64;
fail:
	free(host);
fail_host_freed:
	precision_discard(h64);
	return NULL;
}

/* add the sums of every float output of set s (in h: out(j) or its
 * expected outputs) against h64's set s64 */
static int sums(struct harness *h, struct harness *h64, int s64, const void *const *aOut,
                double *acc, char *err)
{
	const struct task *t = harness_task(h);
	struct backend *b = harness_backend(h);
	for (int j = 0; j < t->nOut; j++) {
		if (!task_dtype_is_float(t->aOut[j].dtype))
			continue;
		double a[CMP_NSUM];
		if (b->error64(b, aOut[j], t->aOut[j].dtype, harness_expected_buf(h64, s64, j),
		               task_numel(&t->aOut[j]), a, err) < 0)
			return -1;
		for (int k = 0; k < CMP_NSUM; k++)
			acc[k] += a[k];
	}
	return 0;
}

static double rel(const double *a, int k)
{
	return a[CMP_REF] > 0 ? sqrt(a[k] / a[CMP_REF]) : a[k] > 0 ? INFINITY : 0;
}

/* the precision state as the harness's judge of each trial (harness.h) */
static void op_reset(void *j)
{
	precision_reset(j);
}

static int op_trial(void *j, struct harness *h, int s, char *err)
{
	return precision_add_trial(j, h, s, err);
}

static int op_after(void *j, struct harness *h, char *err)
{
	return precision_add_after_timing(j, h, err);
}

static cJSON *op_json(const void *j)
{
	return precision_json(j);
}

static void op_free(void *j)
{
	precision_free(j);
}

static const struct harness_judge_ops precision_ops = {.reset = op_reset,
                                                       .trial = op_trial,
                                                       .after_timing = op_after,
                                                       .json = op_json,
                                                       .free = op_free};

/* where there is no verdict, why: a judge that says only that */
static cJSON *note_json(const void *j)
{
	return precision_unknown_json(j);
}

static const struct harness_judge_ops note_ops = {.json = note_json, .free = free};

struct precision *precision_of(const struct harness *h)
{
	return harness_judge(h, &precision_ops);
}

void precision_note(struct harness *h, const char *zWhy)
{
	harness_set_judge(h, zWhy ? xstrdup(zWhy) : NULL, &note_ops);
}

int precision_attach(struct harness *h, struct harness *h64, char *err)
{
	const struct task *t = harness_task(h);
	struct precision *p = xcalloc(1, sizeof *p);
	p->h64 = h64;
	p->nTrials = harness_options(h64)->nTrials;
	const void *aOut[TASK_MAX_TENSORS];
	for (int s = 0; s < p->nTrials; s++) {
		for (int j = 0; j < t->nOut; j++)
			aOut[j] = harness_expected_buf(h, s, j);
		if (sums(h, h64, s, aOut, p->ref, err) < 0)
			goto fail;
	}
	/* the float64 outputs must be the reference's own, in float64: a
	 * reference that wrote floats into them, or computed something else,
	 * gives no verdict rather than a wrong one */
	double r = rel(p->ref, CMP_ERR);
	double bound = 0;
	for (int j = 0; j < t->nOut; j++) {
		const struct task_tol *tl = &t->aTol[t->aOut[j].dtype];
		if (task_dtype_is_float(t->aOut[j].dtype)) {
			double b1 = tl->rel_l2 < INFINITY ? tl->rel_l2 : tl->rtol + tl->atol;
			bound = b1 > bound ? b1 : bound;
		}
	}
	if (p->ref[CMP_NONFINITE] > 0 || !(r <= bound)) {
		kl_err(err,
		       "the reference's float64 outputs are not its own outputs in float64 "
		       "(%s%.3g relative L2 apart): does its kl_run write KL_F64 outputs when "
		       "given them? (docs/TASKS.md, \"Precision\")",
		       p->ref[CMP_NONFINITE] > 0 ? "non-finite values; " : "", r);
		goto fail;
	}
	int nSets = harness_nsets(h64);
	for (int k = 0; k < PRECISION_NEMU; k++) {
		p->emu[k] = -1;
		int s = p->nTrials + 1 + k;
		if (s >= nSets)
			continue;
		double a[CMP_NSUM] = {0};
		for (int j = 0; j < t->nOut; j++)
			aOut[j] = harness_expected_buf(h64, s, j);
		/* the emulation's float64 outputs against the trial's: sums() reads
		 * h64's task, whose float outputs are all float64 */
		if (sums(h64, h64, 0, aOut, a, err) < 0)
			goto fail;
		p->emu[k] = a[CMP_NONFINITE] > 0 ? -1 : rel(a, CMP_ERR);
	}
	/* summing L terms in the output's type, in any order, errs about u
	 * sqrt(L) (a random walk of roundings): an fp32 mean of half a million
	 * elements 1e-5 or more, faithful whatever an exact reference says */
	double nIn = 0, nOut = 0, u = 0;
	for (int i = 0; i < t->nIn; i++)
		nIn += (double)task_numel(&t->aIn[i]);
	for (int j = 0; j < t->nOut; j++) {
		kl_dtype d = t->aOut[j].dtype;
		if (!task_dtype_is_float(d))
			continue;
		nOut += (double)task_numel(&t->aOut[j]);
		double uj = d == KL_F64   ? 0x1p-53
		            : d == KL_F32 ? 0x1p-24
		            : d == KL_F16 ? 0x1p-11
		                          : 0x1p-8;
		u = uj > u ? uj : u;
	}
	double L = nOut > 0 && nIn > nOut ? nIn / nOut : 1;
	p->acc = 2 * u * sqrt(L);
	harness_set_judge(h, p, &precision_ops);
	return 0;
fail:
	p->h64 = NULL;
	precision_free(p);
	precision_discard(h64);
	return -1;
}

void precision_free(struct precision *p)
{
	if (!p)
		return;
	precision_discard(p->h64);
	free(p);
}

void precision_reset(struct precision *p)
{
	if (!p)
		return;
	memset(p->cand, 0, sizeof p->cand);
	p->nAdded = 0;
	memset(p->after, 0, sizeof p->after);
	p->nAfter = 0;
}

int precision_add_after_timing(struct precision *p, struct harness *h, char *err)
{
	if (!p)
		return 0;
	const void *aOut[TASK_MAX_TENSORS];
	for (int j = 0; j < harness_task(h)->nOut; j++)
		aOut[j] = harness_output_buf(h, j);
	if (sums(h, p->h64, p->nTrials, aOut, p->after, err) < 0)
		return -1;
	p->nAfter++;
	return 0;
}

int precision_add_trial(struct precision *p, struct harness *h, int s, char *err)
{
	if (!p || s >= p->nTrials)
		return 0;
	const void *aOut[TASK_MAX_TENSORS];
	for (int j = 0; j < harness_task(h)->nOut; j++)
		aOut[j] = harness_output_buf(h, j);
	if (sums(h, p->h64, s, aOut, p->cand, err) < 0)
		return -1;
	p->nAdded++;
	return 0;
}

static void add_num(cJSON *o, const char *k, double v)
{
	if (isfinite(v) && v >= 0)
		cJSON_AddNumberToObject(o, k, v);
	else
		cJSON_AddNullToObject(o, k);
}

/* the likely causes of an error e, into sb: the (at most two) estimates
 * nearest it within 3x, nearest first; the first two estimates are one
 * cause, TF32 inputs rounded and truncated, a range (tensor cores lie
 * between the two); else where e lies among them */
static void cause_of(double e, const double *est, const char *const *names, int n, strbuf *sb)
{
	double maxEst = 0, d[8];
	int idx[8], m = 0;
	for (int k = 0; k < n && m < 8; k++) {
		if (!(est[k] > 0))
			continue;
		double lo = est[k], hi = est[k];
		if (k == 0 && est[1] > 0) {
			lo = est[0] < est[1] ? est[0] : est[1];
			hi = est[0] + est[1] - lo;
		}
		maxEst = hi > maxEst ? hi : maxEst;
		if (e >= lo / 3 && e <= hi * 3) {
			d[m] = fabs(log(e / sqrt(lo * hi)));
			idx[m++] = k;
		}
		k += k == 0 && est[1] > 0;
	}
	for (int a = 0; a < m; a++) /* nearest first */
		for (int b = a + 1; b < m; b++)
			if (d[b] < d[a]) {
				double t = d[a];
				int x = idx[a];
				d[a] = d[b], idx[a] = idx[b];
				d[b] = t, idx[b] = x;
			}
	for (int a = 0; a < m && a < 2; a++)
		sb_addf(sb, a ? ", or %s" : "as large as %s make", names[idx[a]]);
	if (!m && maxEst > 0 && e > 3 * maxEst)
		sb_adds(sb, "an error beyond bf16's: a coarse approximation, half-precision "
		            "accumulation, or part of the result not computed");
	else if (!m)
		sb_adds(sb, "an approximation or a lower-precision intermediate");
}

/* the rule (precision.h) for an error e against a base */
static int is_reduced(const struct precision *p, double e, double base)
{
	double ratio = base > 0 ? e / base : e > 0 ? INFINITY : 0, e10 = p->emu[PRECISION_EMU10];
	return ratio > PRECISION_LIMIT && (!(e10 > 0) || e > e10 / PRECISION_EMU_FRAC) &&
	       e > p->acc;
}

cJSON *precision_json(const struct precision *p)
{
	if (!p || !p->nAdded)
		return NULL;
	double e = rel(p->cand, CMP_ERR), eRef = rel(p->ref, CMP_ERR),
	       eRound = rel(p->cand, CMP_ROUND);
	double base = eRef > eRound ? eRef : eRound;
	double ratio = base > 0 ? e / base : e > 0 ? INFINITY : 0;
	double e10 = p->emu[PRECISION_EMU10];
	int reduced = p->cand[CMP_NONFINITE] == 0 && is_reduced(p, e, base);
	/* the run after timing, flushed and called as the timed runs are: one
	 * that computes otherwise once it can tell (by counting its calls) is
	 * reduced there */
	double eA = p->nAfter ? rel(p->after, CMP_ERR) : NAN;
	double baseA = p->nAfter ? fmax(eRef, rel(p->after, CMP_ROUND)) : NAN;
	int reducedAfter =
	    p->nAfter && !reduced && p->after[CMP_NONFINITE] == 0 && is_reduced(p, eA, baseA);
	if (reducedAfter) {
		e = eA;
		ratio = baseA > 0 ? eA / baseA : INFINITY;
		reduced = 1;
	}
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "verdict", reduced ? "reduced" : "faithful");
	add_num(o, "rel_l2", e);
	add_num(o, "reference_rel_l2", eRef);
	add_num(o, "rounding_rel_l2", eRound);
	add_num(o, "ratio", ratio);
	cJSON_AddNumberToObject(o, "limit", PRECISION_LIMIT);
	add_num(o, "accumulation_rel_l2", p->acc);
	cJSON *em = cJSON_AddObjectToObject(o, "emulated");
	double est[5] = {e10, p->emu[PRECISION_EMU10Z], p->emu[PRECISION_EMU7],
	                 rel(p->cand, CMP_BF16), rel(p->cand, CMP_F16)};
	const char *keys[5] = {"tf32_f16_inputs", "tf32_truncated_inputs", "bf16_inputs",
	                       "bf16_outputs", "f16_outputs"};
	for (int k = 0; k < 5; k++)
		add_num(em, keys[k], est[k]);
	if (reduced) {
		const char *names[5] = {
		    "TF32 or f16 inputs (10-bit mantissa)", "TF32 or f16 inputs (10-bit mantissa)",
		    "bf16 inputs (7-bit mantissa)", "bf16 outputs or intermediates",
		    "f16 outputs or intermediates"};
		strbuf sb = STRBUF_INIT;
		if (reducedAfter)
			sb_adds(&sb,
			        "faithful in the trials, not in the run after timing (it computes "
			        "otherwise once timed): ");
		cause_of(e, est, names, 5, &sb);
		cJSON_AddStringToObject(o, "cause", sb.buf);
		sb_free(&sb);
	}
	cJSON_AddNumberToObject(o, "trials", p->nAdded);
	if (p->nAfter)
		add_num(o, "after_timing_rel_l2", eA);
	return o;
}

cJSON *precision_unknown_json(const char *zWhy)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "verdict", "unknown");
	cJSON_AddStringToObject(o, "why", zWhy);
	return o;
}
