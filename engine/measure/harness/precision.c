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
#include "rng.h"
#include "util.h"

/* a checked timed run's sums */
struct chk_run {
	unsigned long long run; /* its number in the evaluation */
	int q;                  /* on h's checking set q */
	int vary;               /* how its inputs were varied (rng.h flags) */
	double a[CMP_NSUM];
};

struct precision {
	struct harness *h64;        /* the float64 reference's harness (owned) */
	int nTrials;                /* the trials whose float64 outputs it holds */
	double ref[CMP_NSUM];       /* the task's reference against it, over every trial */
	double emu[PRECISION_NEMU]; /* relative L2 of each emulation (-1: not measured) */
	double acc;      /* what summing in the output's type may cost, any order: 2 u sqrt(L),
	                    L the input elements per output element (precision.h); in fp32 where
	                    the task declares fp32 accumulation */
	int accDeclared; /* the task declares fp32 accumulation of f16, bf16 or fp8 inputs */
	task_compute compute;
	double accEmu[PRECISION_NACC][2]; /* each accumulation emulation's relative L2, 16
	                                     products a step and one (-1: not measured) */
	double cand[CMP_NSUM];            /* the candidate's, over the trials added */
	int nAdded;
	double after[CMP_NSUM]; /* ... and in the run after timing (the timing set) */
	int nAfter;
	int hTrials;    /* h's trials: its checking set s is h64's checking set s - hTrials - 1 */
	int nChk;       /* h's checking sets whose float64 outputs h64 holds (its first) */
	double *chkRef; /* [nChk] the reference's own error on each (-1: not its own in
	                   float64, so no checked run on it is judged) */
	struct chk_run *aRun; /* each checked timed run judged, in this evaluation */
	int nRun, nUnjudged;  /* judged; checked but not judged (no float64 outputs) */
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

int precision_source(const struct harness *h64, const struct harness *h, int s64, int *pBits)
{
	int nT = harness_options(h64)->nTrials, hT = harness_options(h)->nTrials;
	*pBits = 0;
	if (s64 < nT)
		return s64;
	if (s64 == nT)
		return hT;
	int k = s64 - nT - 1;
	if (k < PRECISION_NEMU) {
		int tr, bits = precision_emu_bits(k, &tr);
		*pBits = tr ? -bits : bits;
		return 0;
	}
	return hT + 1 + (k - PRECISION_NEMU);
}

struct harness *precision_harness_new(struct harness *h, char *err)
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
	 * set's size), the timing set, the emulations and h's checking sets:
	 * as many as fit, the checking sets first to go, down to one trial and
	 * no emulation */
	o.nTrials = o.nTrials < PRECISION_TRIALS ? o.nTrials : PRECISION_TRIALS;
	o.nPool = PRECISION_NEMU + harness_npool(h);
	o.nRing = 0; /* never timed */
	struct task *t64 = task64(t);
	struct harness *h64 = NULL;
	while (!(h64 = harness_new(t64, b, &o, err)) && o.nTrials > 1)
		o.nTrials--;
	if (!h64)
		free(t64);
	return h64;
}

struct harness *precision_harness(struct harness *h, char *err)
{
	struct harness *h64 = precision_harness_new(h, err);
	if (h64 && precision_harness_fill(h64, h, err) < 0) {
		precision_discard(h64);
		return NULL;
	}
	return h64;
}

int precision_harness_fill(struct harness *h64, struct harness *h, char *err)
{
	const struct task *t = harness_task(h);
	struct backend *b = harness_backend(h);
	/* each set's inputs as h has them (precision_source): the trials', the
	 * timing set's (h's own, the run after timing's), the checking sets';
	 * the emulation sets: the first trial's, rounded where they are (on
	 * the GPU by a kernel: a set of 128 MB went down, through the CPU and
	 * up again, twice, in every cold eval's setup) */
	for (int i = 0; i < t->nIn; i++) {
		size_t n = task_tensor_bytes(&t->aIn[i]);
		for (int s = 0; s < harness_nsets(h64); s++) {
			int bits, from = precision_source(h64, h, s, &bits);
			void *to = harness_input_buf(h64, s, i);
			if (b->copy(b, to, harness_input_buf(h, from, i), n, err) < 0 ||
			    (bits && b->round(b, to, t->aIn[i].dtype, task_numel(&t->aIn[i]),
			                      bits < 0 ? -bits : bits, bits < 0, err) < 0))
				return -1;
		}
	}
	return b->sync(b, err);
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

static int op_checked(void *j, struct harness *h, int s, unsigned long long run, char *err)
{
	return precision_add_checked(j, h, s, run, err);
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
                                                       .checked = op_checked,
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

/*
 * The checking sets of h whose float64 outputs h64 holds: the reference's
 * own error on each, where those are its own outputs in float64 (else no
 * checked run on it is judged, as no trial would be); h keeps no checking
 * set that has none, unless none fit (then its checked runs are checked
 * and not judged, and the verdict says so).  0 or -1 + err.
 */
static int check_sets(struct precision *p, struct harness *h, double bound, char *err)
{
	const struct task *t = harness_task(h);
	int first = p->nTrials + 1 + PRECISION_NEMU, hPool = harness_npool(h);
	p->nChk = harness_nsets(p->h64) - first;
	p->nChk = p->nChk < 0 ? 0 : p->nChk > hPool ? hPool : p->nChk;
	if (p->nChk > 0 && p->nChk < hPool)
		harness_keep_pool(h, p->nChk);
	p->chkRef = xcalloc((size_t)p->nChk + 1, sizeof *p->chkRef);
	p->aRun = xcalloc((size_t)p->nChk + 1, sizeof *p->aRun);
	const void *aOut[TASK_MAX_TENSORS];
	for (int q = 0; q < p->nChk; q++) {
		double a[CMP_NSUM] = {0};
		for (int j = 0; j < t->nOut; j++)
			aOut[j] = harness_expected_buf(h, p->hTrials + 1 + q, j);
		if (sums(h, p->h64, first + q, aOut, a, err) < 0)
			return -1;
		double r = rel(a, CMP_ERR);
		p->chkRef[q] = a[CMP_NONFINITE] > 0 || !(r <= bound) ? -1 : r;
	}
	return 0;
}

/* download n bytes at offset off of device buffer src into dst */
static int fetch(struct backend *b, void *dst, const void *src, size_t off, size_t n, char *err)
{
	return b->download(b, dst, (const char *)src + off, n, err);
}

/*
 * The accumulation emulations (precision.h) of a task that declares fp32
 * accumulation and is a plain matrix product: on up to PRECISION_ACC_ROWS
 * rows and PRECISION_ACC_SAMPLE elements of the first trial (h64's set 0,
 * its inputs and float64 outputs), where the product computed exactly is
 * the reference's (a product followed by more, a ReLU, is not emulated)
 */
static void acc_emulations(struct precision *p, struct harness *h64, const struct task *t)
{
	struct task_matmul mm;
	for (int k = 0; k < PRECISION_NACC; k++)
		p->accEmu[k][0] = p->accEmu[k][1] = -1;
	if (!p->accDeclared || !task_matmul_of(t, &mm) || mm.nOther ||
	    !task_dtype_is_float(t->aOut[0].dtype))
		return;
	struct backend *b = harness_backend(h64);
	int R = mm.M < PRECISION_ACC_ROWS ? (int)mm.M : PRECISION_ACC_ROWS;
	int64_t rowStep = mm.M / R, C = PRECISION_ACC_SAMPLE / R;
	C = C < mm.N ? C : mm.N;
	int64_t colStep = mm.N / C;
	size_t ea = task_dtype_size(t->aIn[mm.a].dtype), nB = task_tensor_bytes(&t->aIn[mm.b]);
	size_t rowA = (size_t)mm.K * ea, rowRef = (size_t)mm.N * sizeof(double);
	if (nB > (size_t)1 << 30)
		return;
	char err[KL_ERRLEN];
	char *aRows = xmalloc((size_t)R * rowA), *bAll = xmalloc(nB);
	double *ref = xmalloc((size_t)R * rowRef);
	void *bias = mm.bias >= 0 ? xmalloc(task_tensor_bytes(&t->aIn[mm.bias])) : NULL;
	int ok = fetch(b, bAll, harness_input_buf(h64, 0, mm.b), 0, nB, err) == 0 &&
	         (!bias || fetch(b, bias, harness_input_buf(h64, 0, mm.bias), 0,
	                         task_tensor_bytes(&t->aIn[mm.bias]), err) == 0);
	/* the per-tensor scales' product */
	double scale = 1;
	for (int k = 0; ok && k < mm.nScale; k++) {
		unsigned char v[8];
		kl_dtype d = t->aIn[mm.scale[k]].dtype;
		ok = fetch(b, v, harness_input_buf(h64, 0, mm.scale[k]), 0, task_dtype_size(d),
		           err) == 0;
		scale *= ok ? task_dtype_get(v, d, 0) : 1;
	}
	for (int r = 0; ok && r < R; r++)
		ok = fetch(b, aRows + (size_t)r * rowA, harness_input_buf(h64, 0, mm.a),
		           (size_t)(r * rowStep) * rowA, rowA, err) == 0 &&
		     fetch(b, (char *)ref + (size_t)r * rowRef, harness_expected_buf(h64, 0, 0),
		           (size_t)(r * rowStep) * rowRef, rowRef, err) == 0;
	/* the product computed exactly must be the reference's */
	double exact =
	    ok ? precision_acc_error(t, &mm, aRows, bAll, bias, scale, ref, R, colStep, KL_F64, 1)
	       : -1;
	/* a square B's shape does not say its layout: the other one, where the
	 * first is not the reference's product */
	if (ok && mm.K == mm.N && !(exact >= 0 && exact <= 1e-6)) {
		mm.bNK = !mm.bNK;
		exact = precision_acc_error(t, &mm, aRows, bAll, bias, scale, ref, R, colStep,
		                            KL_F64, 1);
	}
	for (int k = 0; exact >= 0 && exact <= 1e-6 && k < PRECISION_NACC; k++)
		for (int j = 0; j < 2; j++)
			p->accEmu[k][j] = precision_acc_error(
			    t, &mm, aRows, bAll, bias, scale, ref, R, colStep,
			    k == PRECISION_ACC_F16 ? KL_F16 : KL_BF16, j ? 1 : 16);
	free(aRows);
	free(bAll);
	free(ref);
	free(bias);
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
	p->hTrials = harness_options(h)->nTrials;
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
		double uj = d == KL_F64    ? 0x1p-53
		            : d == KL_F32  ? 0x1p-24
		            : d == KL_F16  ? 0x1p-11
		            : d == KL_E4M3 ? 0x1p-4
		                           : 0x1p-8;
		u = uj > u ? uj : u;
	}
	double L = nOut > 0 && nIn > nOut ? nIn / nOut : 1;
	/* a product of f16 or bf16 inputs declared (or inferred, where it is a
	 * matrix product) to accumulate in fp32 may cost what fp32 sums do */
	struct task_matmul mm;
	int isMm = task_matmul_of(t, &mm);
	p->compute = t->compute;
	p->accDeclared =
	    (t->compute == TASK_FP16 || t->compute == TASK_BF16 || t->compute == TASK_FP8) &&
	    (isMm || (t->zComputeFrom && !strcmp(t->zComputeFrom, "task.json")));
	if (p->accDeclared) {
		u = 0x1p-24;
		L = isMm ? (double)mm.K : L;
	}
	p->acc = 2 * u * sqrt(L);
	acc_emulations(p, h64, t);
	if (check_sets(p, h, bound, err) < 0)
		goto fail;
	/* only the float64 outputs are read from here on */
	harness_release_inputs(h64);
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
	free(p->chkRef);
	free(p->aRun);
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
	p->nRun = p->nUnjudged = 0;
}

int precision_add_checked(struct precision *p, struct harness *h, int s, unsigned long long run,
                          char *err)
{
	if (!p)
		return 0;
	int q = s - p->hTrials - 1;
	if (q < 0 || q >= p->nChk || p->chkRef[q] < 0 || p->nRun >= p->nChk) {
		p->nUnjudged++;
		return 0;
	}
	struct chk_run *r = &p->aRun[p->nRun];
	const void *aOut[TASK_MAX_TENSORS];
	for (int j = 0; j < harness_task(h)->nOut; j++)
		aOut[j] = harness_output_buf(h, j);
	memset(r->a, 0, sizeof r->a);
	if (sums(h, p->h64, p->nTrials + 1 + PRECISION_NEMU + q, aOut, r->a, err) < 0)
		return -1;
	r->run = run;
	r->q = q;
	r->vary = harness_vary_applied(h, s);
	p->nRun++;
	return 0;
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
 * nearest it within 3x, nearest first, each the range lo[k]..hi[k] (TF32
 * inputs rounded and truncated: tensor cores lie between the two; an
 * accumulation 16 products a step and one); else where e lies among them.
 * The nearest one's index, or -1 */
static int cause_of(double e, const double *lo, const double *hi, const char *const *names, int n,
                    strbuf *sb)
{
	double maxEst = 0, d[8];
	int idx[8], m = 0;
	for (int k = 0; k < n && m < 8; k++) {
		if (!(lo[k] > 0))
			continue;
		maxEst = hi[k] > maxEst ? hi[k] : maxEst;
		if (e >= lo[k] / 3 && e <= hi[k] * 3) {
			d[m] = fabs(log(e / sqrt(lo[k] * hi[k])));
			idx[m++] = k;
		}
	}
	for (int a = 0; a < m; a++) /* nearest first */
		for (int b = a + 1; b < m; b++)
			if (d[b] < d[a]) {
				double t = d[a];
				int x = idx[a];
				d[a] = d[b], idx[a] = idx[b];
				d[b] = t, idx[b] = x;
			}
	for (int a = 0; a < m && a < 2; a++) {
		int k = idx[a];
		if (strstr(names[k], "accumulation") && lo[k] < hi[k])
			sb_addf(sb, "%s %s (which errs %.2g to %.2g here, 16 sums a step to one)",
			        a ? ", or" : "matches", names[k], lo[k], hi[k]);
		else if (strstr(names[k], "accumulation"))
			sb_addf(sb, "%s %s (which errs %.2g here)", a ? ", or" : "matches",
			        names[k], lo[k]);
		else
			sb_addf(sb, a ? ", or %s" : "as large as %s make", names[k]);
	}
	if (!m && maxEst > 0 && e > 3 * maxEst)
		sb_adds(sb, "an error beyond bf16's: a coarse approximation, half-precision "
		            "accumulation, or part of the result not computed");
	else if (!m)
		sb_adds(sb, "an approximation or a lower-precision intermediate");
	return m ? idx[0] : -1;
}

/* the least accumulation emulation that stands out from base (at least
 * twice it: on a short reduction f16 sums cost no more than the output's
 * rounding), 0 where none does */
static double acc_standout(const struct precision *p, double base)
{
	double least = 0;
	for (int k = 0; k < PRECISION_NACC; k++) {
		double e = p->accEmu[k][0];
		if (e >= 2 * base && (!least || e < least))
			least = e;
	}
	return least;
}

static int is_reduced(const struct precision *p, double e, double base, int vary)
{
	double ratio = base > 0 ? e / base : e > 0 ? INFINITY : 0, e10 = p->emu[PRECISION_EMU10];
	double k = vary ? PRECISION_VARIED_FACTOR : 1;
	/* a task that declares fp32 accumulation: an error nearer an
	 * accumulation emulation's than the base (beyond their geometric
	 * mean) is that accumulation, within the tolerance or not */
	double ea = acc_standout(p, base);
	if (ea > 0 && e > k * sqrt(base * ea))
		return 1;
	return ratio > PRECISION_LIMIT && (!(e10 > 0) || e > k * e10 / PRECISION_EMU_FRAC) &&
	       e > k * p->acc;
}

/* one run's (or the trials') sums a judged by the rule: its error, its
 * ratio to the larger of base (the reference's own error) and its own
 * rounding's, and whether that is reduced */
struct judged {
	const double *a;
	double e, ratio;
	int reduced;
};

static struct judged judge(const struct precision *p, const double *a, double base, int vary)
{
	struct judged j = {.a = a, .e = rel(a, CMP_ERR)};
	base = fmax(base, rel(a, CMP_ROUND));
	/* a task whose compute type is tf32 asks for TF32's inputs: what they
	 * cost is its base (issue 36) */
	if (p->compute == TASK_TF32)
		base = fmax(base, fmax(p->emu[PRECISION_EMU10], p->emu[PRECISION_EMU10Z]));
	j.ratio = base > 0 ? j.e / base : j.e > 0 ? INFINITY : 0;
	j.reduced = a[CMP_NONFINITE] == 0 && is_reduced(p, j.e, base, vary);
	return j;
}

/* where a verdict reduced outside the trials was reduced, into sb: "faithful
 * in the trials, not in the run after timing" and/or "reduced in checked
 * timed run 7 (ratio 3.2e+04), 1 of 5 checked", then why */
static void where_reduced(const struct precision *p, const struct judged *aRun, int nRed, int after,
                          strbuf *sb)
{
	sb_adds(sb, "faithful in the trials, ");
	if (after)
		sb_adds(sb,
		        nRed ? "not in the run after timing nor" : "not in the run after timing");
	else
		sb_adds(sb, "reduced");
	if (nRed)
		sb_addf(sb, " in checked timed run%s ", nRed > 1 ? "s" : "");
	for (int k = 0, n = 0; k < p->nRun; k++)
		if (aRun[k].reduced) {
			n++;
			sb_addf(sb, "%s%llu (ratio %.3g)",
			        n == 1      ? ""
			        : n == nRed ? " and "
			                    : ", ",
			        p->aRun[k].run, aRun[k].ratio);
		}
	if (nRed)
		sb_addf(sb, ", %d of %d checked", nRed, p->nRun);
	sb_adds(sb, " (it computes otherwise once timed): ");
}

cJSON *precision_json(const struct precision *p)
{
	if (!p || !p->nAdded)
		return NULL;
	double eRef = rel(p->ref, CMP_ERR), eRound = rel(p->cand, CMP_ROUND);
	double e10 = p->emu[PRECISION_EMU10];
	struct judged tr = judge(p, p->cand, eRef, 0), worst = tr;
	/* the run after timing, flushed and called as the timed runs are, and
	 * each checked timed run (a checking set's inputs, never seen before,
	 * with float64 outputs of their own): one that computes otherwise once
	 * it can tell (by counting its calls, or by its inputs) is reduced
	 * there.  Each by the same rule as the trials, its base never below the
	 * reference's own error on the trials nor on its inputs */
	struct judged af = p->nAfter ? judge(p, p->after, eRef, 0) : (struct judged){0};
	struct judged *aRun = xcalloc((size_t)p->nRun + 1, sizeof *aRun);
	int nRed = 0, after = !tr.reduced && af.reduced;
	if (after)
		worst = af;
	for (int k = 0; k < p->nRun; k++) {
		aRun[k] =
		    judge(p, p->aRun[k].a, fmax(eRef, p->chkRef[p->aRun[k].q]), p->aRun[k].vary);
		if (tr.reduced || !aRun[k].reduced)
			continue;
		if ((nRed++ == 0 && !after) || aRun[k].ratio > worst.ratio)
			worst = aRun[k];
	}
	int reduced = tr.reduced || after || nRed;
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "verdict", reduced ? "reduced" : "faithful");
	add_num(o, "rel_l2", worst.e);
	add_num(o, "reference_rel_l2", eRef);
	add_num(o, "rounding_rel_l2", eRound);
	add_num(o, "ratio", worst.ratio);
	cJSON_AddNumberToObject(o, "limit", PRECISION_LIMIT);
	add_num(o, "accumulation_rel_l2", p->acc);
	cJSON *em = cJSON_AddObjectToObject(o, "emulated");
	double est[5] = {e10, p->emu[PRECISION_EMU10Z], p->emu[PRECISION_EMU7],
	                 rel(p->cand, CMP_BF16), rel(p->cand, CMP_F16)};
	const char *keys[5] = {"tf32_f16_inputs", "tf32_truncated_inputs", "bf16_inputs",
	                       "bf16_outputs", "f16_outputs"};
	for (int k = 0; k < 5; k++)
		add_num(em, keys[k], est[k]);
	const char *accKeys[PRECISION_NACC] = {"f16_accumulation", "bf16_accumulation"};
	for (int k = 0; k < PRECISION_NACC; k++)
		if (p->accEmu[k][0] >= 0) {
			add_num(em, accKeys[k], p->accEmu[k][0]);
			char *z = xasprintf("%s_sequential", accKeys[k]);
			add_num(em, z, p->accEmu[k][1]);
			free(z);
		}
	if (p->accDeclared)
		cJSON_AddStringToObject(o, "accumulation", "fp32");
	if (reduced) {
		/* each estimate a range: TF32 inputs rounded to truncated; an
		 * accumulation 16 sums a step to one; the output roundings on the
		 * run reduced, its own data */
		double lo[6], hi[6];
		const char *names[6] = {"TF32 or f16 inputs (10-bit mantissa)",
		                        "bf16 inputs (7-bit mantissa)",
		                        "bf16 outputs or intermediates",
		                        "f16 outputs or intermediates",
		                        "f16 accumulation",
		                        "bf16 accumulation"};
		lo[0] = est[1] > 0 ? fmin(est[0], est[1]) : est[0];
		hi[0] = est[1] > 0 ? fmax(est[0], est[1]) : est[0];
		lo[1] = hi[1] = est[2];
		lo[2] = hi[2] = rel(worst.a, CMP_BF16);
		lo[3] = hi[3] = rel(worst.a, CMP_F16);
		for (int k = 0; k < PRECISION_NACC; k++) {
			lo[4 + k] = fmin(p->accEmu[k][0], p->accEmu[k][1]);
			hi[4 + k] = fmax(p->accEmu[k][0], p->accEmu[k][1]);
		}
		strbuf sb = STRBUF_INIT;
		if (!tr.reduced)
			where_reduced(p, aRun, nRed, after, &sb);
		int near = cause_of(worst.e, lo, hi, names, 6, &sb);
		if (near >= 4) {
			sb_addf(&sb, ", where the task's compute type, %s, accumulates in fp32",
			        task_compute_name(p->compute));
			cJSON_AddStringToObject(o, "matches", names[near]);
		}
		cJSON_AddStringToObject(o, "cause", sb.buf);
		sb_free(&sb);
	}
	cJSON_AddNumberToObject(o, "trials", p->nAdded);
	if (p->nAfter)
		add_num(o, "after_timing_rel_l2", af.e);
	if (p->nRun) {
		cJSON *a = cJSON_AddArrayToObject(o, "checked_runs");
		for (int k = 0; k < p->nRun; k++) {
			cJSON *r = cJSON_CreateObject();
			cJSON_AddNumberToObject(r, "run", (double)p->aRun[k].run);
			cJSON_AddStringToObject(r, "verdict",
			                        aRun[k].reduced ? "reduced" : "faithful");
			add_num(r, "rel_l2", aRun[k].e);
			add_num(r, "ratio", aRun[k].ratio);
			cJSON_AddStringToObject(r, "inputs", rng_vary_name(p->aRun[k].vary));
			cJSON_AddItemToArray(a, r);
		}
	}
	if (p->nUnjudged) {
		char *z = xasprintf(
		    "%d checked timed run%s not judged: %s", p->nUnjudged,
		    p->nUnjudged == 1 ? "" : "s",
		    p->nChk ? "the reference's float64 outputs on its inputs are not its own (not "
		              "finite, or beyond the tolerance)"
		            : "no checking set's float64 outputs fit in memory");
		cJSON_AddStringToObject(o, "checked_runs_unjudged", z);
		free(z);
	}
	free(aRun);
	return o;
}

cJSON *precision_unknown_json(const char *zWhy)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "verdict", "unknown");
	cJSON_AddStringToObject(o, "why", zWhy);
	return o;
}
