/*
 * test_harness_after.c - every call is the same call (issue 37), with
 * in-process candidates on the host backend: timed runs checked after
 * their call against the reference on the same inputs, and the runs of a
 * batch each on inputs and outputs of their own, a few of them checked
 * once the batch is back.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "check.h"
#include "fcand.h"
#include "harness.h"
#include "harness_priv.h"
#include "util.h"

/* right only on inputs kloop holds a copy of (a trial's, the timing set's,
 * a checking set's), wrong on every other: it knows, before its call,
 * every run kloop decided before the call to check.  Fresh inputs it
 * answers with zeros */
static struct harness *gH;
static int nKnown, nFresh;
static int knows_sets(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *s)
{
	for (int k = 0; k < harness_nsets(gH); k++)
		if (!memcmp(in[0].data, harness_input_buf(gH, k, 0), N * sizeof(float))) {
			nKnown++;
			return ref_double(in, n_in, out, n_out, s);
		}
	nFresh++;
	memset(out[0].data, 0, N * sizeof(float));
	return 0;
}

/* a hash of all of an input's bytes */
static uint64_t input_hash(const void *x)
{
	uint64_t h = 1469598103934665603ull;
	const unsigned char *p = x;
	for (int i = 0; i < N * 4; i++)
		h = (h ^ p[i]) * 1099511628211ull;
	return h;
}

/* the inputs it saw, by input_hash(): repeats counted */
static uint64_t seen[1 << 16];
static int nSeen, nRepeats;
static int counts_repeats(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *s)
{
	uint64_t h = input_hash(in[0].data);
	for (int i = 0; i < nSeen; i++)
		nRepeats += seen[i] == h;
	if (nSeen < (int)(sizeof seen / sizeof *seen))
		seen[nSeen++] = h;
	return slow_double(in, n_in, out, n_out, s);
}

/* 0.2 ms of work on a CPU, then right: short enough that a batch (5 ms
 * of runs on the host) has several runs however loaded the machine, as
 * slow_double's 2 ms often did not (a batch of one, in which nothing is
 * skipped) */
static int brief_double(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *s)
{
	double t0 = thread_cpu_s();
	while (thread_cpu_s() - t0 < 0.0002)
		ref_double(in, n_in, out, n_out, s);
	return 0;
}

static double num(const cJSON *o, const char *k)
{
	return cJSON_GetNumberValue(cJSON_GetObjectItem(o, k));
}

/* a harness of the test's task on b, a short budget, its inputs drawn */
static struct harness *harness_of(const struct task *t, struct backend *b, char *err)
{
	struct harness_opts o;
	harness_default_opts(&o, "host");
	o.budgetS = 0.2;
	struct harness *h = harness_new(t, b, &o, err);
	if (h && harness_generate_inputs(h, err) < 0) {
		harness_free(h);
		return NULL;
	}
	return h;
}

/* a source of given inputs (harness_set_source), as a PyTorch problem's
 * helper is: x of seed s, N floats in [-1, 1), and the outputs 2x */
static int nDrawn, nExpected;
static uint64_t drawnSeed[4096]; /* the seeds of the first draws since nDrawn was 0 */
static void given_x(uint64_t seed, float *x)
{
	for (int i = 0; i < N; i++)
		x[i] = (float)((seed * 2654435761u + (uint64_t)i * 40503u) % 2000) / 1000.0f - 1.0f;
}
static int src_draw(void *arg, uint64_t seed, void *const *aDst, char *err)
{
	(void)arg, (void)err;
	if (nDrawn < (int)(sizeof drawnSeed / sizeof *drawnSeed))
		drawnSeed[nDrawn] = seed;
	nDrawn++;
	given_x(seed, aDst[0]);
	return 0;
}
static int src_never(void *arg)
{
	(void)arg;
	return 0;
}
static int src_expect(void *arg, uint64_t seed, void *const *aIn, void *const *aOut, char *err)
{
	(void)arg, (void)err;
	nExpected++;
	given_x(seed, aIn[0]);
	float *x = aIn[0], *y = aOut[0];
	for (int i = 0; i < N; i++)
		y[i] = 2 * x[i];
	return 0;
}

/* given inputs (their sets set, not drawn) and their reference's outputs */
static struct harness *given_harness(const struct task *t, struct backend *b, struct fcand *fr,
                                     char *err)
{
	struct harness_opts o;
	harness_default_opts(&o, "host");
	o.budgetS = 0.2;
	o.nPool = 2;
	struct harness *h = harness_new(t, b, &o, err);
	float x[N];
	for (int s = 0; h && s < harness_nsets(h); s++) {
		given_x(1000 + (uint64_t)s, x);
		if (harness_set_input(h, s, 0, x, err) < 0)
			return harness_free(h), NULL;
	}
	if (h && harness_run_reference(h, fcand(fr, h, b, ref_double), err) < 0)
		return harness_free(h), NULL;
	return h;
}

/* c's evaluation with batches (counts_repeats): NULL where its timing took
 * no batch (a loaded machine may not) */
static cJSON *eval_batched(struct harness *h, struct backend *b, cJSON **pR)
{
	struct fcand fc;
	struct harness_cand *c = fcand(&fc, h, b, counts_repeats);
	c->batch = f_batch;
	c->cpu = f_cpu;
	nSeen = nRepeats = 0;
	*pR = harness_eval(h, c, 1, NULL, NULL);
	cJSON *tm = cJSON_GetObjectItem(*pR, "timing");
	return cJSON_GetObjectItem(tm, "batch_runs") ? tm : NULL;
}

/*
 * The next batch's ring drawn ahead by h's source (as the worker does
 * while a candidate compiles), as many slots as the last batch took: into
 * memory of kloop's own, not the ring a runner maps; the batch copies the
 * draws in, its runs each on inputs of their own, checked after it; once
 * used, they are drawn again.
 */
static void check_ring_ahead(struct harness *h, struct backend *b)
{
	char err[KL_ERRLEN] = "";
	nDrawn = 0;
	CHECK(harness_ring_ahead(h, err) == 0 && nDrawn == 0,
	      "no ring is drawn ahead before a first batch (%d draws)", nDrawn);
	cJSON *r;
	cJSON *tm = eval_batched(h, b, &r);
	cJSON_Delete(r);
	if (!tm) {
		/* every check below needs a batch: say so, as a check */
		printf("skip - the ring drawn ahead: this loaded machine allowed no batch\n");
		return;
	}
	nDrawn = 0;
	int ahead = harness_ring_ahead(h, err), nAhead = nDrawn;
	int want = 2 * h->lastBatchN < h->nRing ? 2 * h->lastBatchN : h->nRing;
	CHECK(ahead == 1 && nAhead == want && nAhead >= 2,
	      "the next batch's ring is drawn ahead by the source, two draws for each run of the "
	      "last batch, as the ring holds (%d of %d; %s)",
	      nAhead, want, err);
	CHECK(harness_ring_ahead(h, err) == 0 && nDrawn == nAhead,
	      "... once: the draws are held until a batch uses them (%d draws)", nDrawn);
	uint64_t first = input_hash((char *)h->pStage + h->aRingOffIn[0]);
	void *in0[TASK_MAX_TENSORS], *out0[TASK_MAX_TENSORS];
	harness_ring_slot(h, 0, in0, out0);
	CHECK(input_hash(in0[0]) != first,
	      "... not into the ring, which a runner maps: its first slot does not hold them yet");
	int nStaged = h->nStage;
	tm = eval_batched(h, b, &r);
	int sawFirst = 0;
	for (int i = 0; i < nSeen; i++)
		sawFirst |= seen[i] == first;
	/* a batch of more runs than were drawn ahead draws its own */
	int used = tm && num(tm, "batch_runs") <= nStaged;
	/* (the source's inputs are of 2000 kinds: a repeat among the timed
	 * runs is chance, not a fault; test_harness_after's generated inputs
	 * above are checked for those) */
	CHECK(!strcmp(status(r), "correct") &&
	          (!used || (sawFirst && h->nStage == 0 && num(tm, "batch_checked_runs") >= 1)),
	      "a batch runs on the draws made ahead, copied into its ring: the first slot's "
	      "among its runs' inputs (%d), runs checked after it (%s; a batch of %g, %g checked, "
	      "%d drawn ahead, %d held after)",
	      sawFirst, reason(r), num(tm, "batch_runs"), num(tm, "batch_checked_runs"), nStaged,
	      h->nStage);
	cJSON_Delete(r);
	nDrawn = 0;
	want = 2 * h->lastBatchN < h->nRing ? 2 * h->lastBatchN : h->nRing;
	CHECK(!used || (harness_ring_ahead(h, err) == 1 && nDrawn == want),
	      "... and once used they are drawn again, for the next batch (%d draws)", nDrawn);
}

/*
 * The next timing's runs' inputs drawn ahead by h's source (as the worker
 * does while a candidate compiles): as many as the last timing's timed
 * runs and a quarter more, into memory of kloop's own; the next timing
 * takes their seed, its runs copy them in rather than draw (the source
 * asked less), each run's inputs still its own and checked after its call
 * by the source's outputs of its seed; taken once, then drawn again.
 */
static void check_runs_ahead(struct harness *h, struct backend *b)
{
	char err[KL_ERRLEN] = "";
	uint64_t last = h->lastTimedN, want = last + (last + 3) / 4,
	         fit = h->ringCap / h->ringStrideIn;
	if (want > 48)
		want = 48;
	if (want > fit)
		want = fit;
	nDrawn = 0;
	int ahead = harness_runs_ahead(h, err), nAhead = nDrawn;
	CHECK(ahead == 1 && last >= 6 && (uint64_t)nAhead == want && h->nRunsAhead == nAhead,
	      "the next timing's runs are drawn ahead by the source, as many as the last "
	      "timing's %llu timed runs and a quarter more, as memory allows (%d of %llu; %s)",
	      (unsigned long long)last, nAhead, (unsigned long long)want, err);
	CHECK(harness_runs_ahead(h, err) == 0 && nDrawn == nAhead,
	      "... once: the draws are held until a timing takes them (%d draws)", nDrawn);
	/* the candidate's and the scratch buffers do not hold them yet */
	uint64_t first = input_hash((char *)h->pRuns + h->aRingOffIn[0]);
	CHECK(input_hash(payload(&h->aIn[0])) != first && input_hash(h->aScratch[0]) != first,
	      "... not into the buffers a runner maps, nor the scratch ones");
	uint64_t ahash[48];
	for (int k = 0; k < nAhead && k < 48; k++)
		ahash[k] =
		    input_hash((char *)h->pRuns + (size_t)k * h->ringStrideIn + h->aRingOffIn[0]);
	cJSON *r;
	nDrawn = 0;
	eval_batched(h, b, &r);
	cJSON *tm = cJSON_GetObjectItem(r, "timing");
	uint64_t runs = h->lastTimedN,
	         fromAhead = runs < (uint64_t)nAhead ? runs : (uint64_t)nAhead;
	/* every timed run the candidate saw on them but the checked ones (a
	 * checking set's inputs in its buffers: as many as the harness's
	 * checking sets at most) */
	int nSaw = 0;
	for (uint64_t k = 0; k < fromAhead && k < 48; k++) {
		int saw = 0;
		for (int i = 0; i < nSeen; i++)
			saw |= seen[i] == ahash[k];
		nSaw += saw;
	}
	CHECK(!strcmp(status(r), "correct") && harness_runs_taken(h) && h->runSeed == h->runsSeed &&
	          fromAhead >= 6 && nSaw >= (int)fromAhead - h->nPool &&
	          num(tm, "checked_after_runs") >= 2,
	      "the next timing takes their seed and its runs run on them, copied in (%d of the "
	      "%llu drawn ahead that it ran seen by the candidate, %d checking sets), checked "
	      "after their call by the source's outputs of their seeds (%s; %g checked after)",
	      nSaw, (unsigned long long)fromAhead, h->nPool, reason(r),
	      num(tm, "checked_after_runs"));
	/* the source was not asked again for a timed run's inputs drawn
	 * ahead: none of their seeds among its draws in the evaluation */
	int again = 0;
	for (uint64_t k = 1; k <= fromAhead; k++)
		for (int i = 0; i < nDrawn && i < (int)(sizeof drawnSeed / sizeof *drawnSeed); i++)
			again += drawnSeed[i] == harness_run_seed(h->runsSeed, k);
	CHECK(fromAhead >= 6 && again == 0 && nDrawn < (int)(sizeof drawnSeed / sizeof *drawnSeed),
	      "%llu of the timing's %llu timed runs took the draws made ahead, none drawn again "
	      "(%d of their seeds among the evaluation's %d draws)",
	      (unsigned long long)fromAhead, (unsigned long long)runs, again, nDrawn);
	cJSON_Delete(r);
	nDrawn = 0;
	CHECK(harness_runs_ahead(h, err) == 1 && nDrawn == h->nRunsAhead &&
	          h->runsSeed != h->runSeed,
	      "... and once taken they are drawn again, from a new seed (%d draws)", nDrawn);
	/* a timing that finds them taken draws its own, from a seed of its own */
	uint64_t s1 = harness_runs_take(h), s2 = harness_runs_take(h);
	CHECK(s1 == h->runsSeed && s2 != s1 && h->nRunsAhead == 0,
	      "a held set serves one timing: the next one after it has a seed of its own");
	/* where the ring's share of the memory holds fewer slots, as many as
	 * it holds; where it holds none, none (each run draws its own) */
	uint64_t cap = h->ringCap;
	b->release(b, h->pRuns);
	h->pRuns = NULL;
	h->ringCap = 5 * h->ringStrideIn;
	nDrawn = 0;
	CHECK(h->lastTimedN >= 5 && harness_runs_ahead(h, err) == 1 && nDrawn == 5 &&
	          h->nRunsAhead == 5,
	      "a share of the memory that holds 5 slots: 5 drawn ahead (%d)", nDrawn);
	harness_runs_take(h);
	harness_runs_take(h);
	b->release(b, h->pRuns);
	h->pRuns = NULL;
	h->ringCap = h->ringStrideIn / 2;
	nDrawn = 0;
	CHECK(harness_runs_ahead(h, err) == 0 && nDrawn == 0 && !h->pRuns && h->nRunsAhead == 0,
	      "... one that holds none: none drawn, nothing allocated (%d)", nDrawn);
	h->ringCap = cap;
}

int main(void)
{
	char err[KL_ERRLEN];
	struct task t;
	struct backend *b = backend_host_new(err);
	fcand_double_task(&t);
	struct harness *h = gH = harness_of(&t, b, err);
	CHECK(h != NULL, "a harness with its inputs (%s)", h ? "" : err);
	struct fcand fref, fc;
	CHECK(harness_run_reference(h, fcand(&fref, h, b, ref_double), err) == 0,
	      "reference data computed");

	/* without a judge after the call, a candidate that knows every run
	 * checked before its call is right on each of them */
	cJSON *r = harness_eval(h, fcand(&fc, h, b, knows_sets), 1, NULL, NULL);
	cJSON *tm = cJSON_GetObjectItem(r, "timing");
	CHECK(!strcmp(status(r), "correct") && nFresh > 0 && nKnown > 5,
	      "kloop's checks decided before the call: a candidate right only on the sets kloop "
	      "holds passes them all (%s; %d runs on fresh inputs, %d on held ones)",
	      status(r), nFresh, nKnown);
	cJSON_Delete(r);

	/* with the reference as a judge after the call: which run is checked
	 * is decided once it is back, among them all */
	harness_set_reference(h, &fref.hc);
	r = harness_eval(h, fcand(&fc, h, b, knows_sets), 1, NULL, NULL);
	CHECK(!strcmp(status(r), "incorrect") && strstr(reason(r), "checked after its call") &&
	          strstr(reason(r), "differs from the reference"),
	      "a candidate right only on the runs decided before the call is caught in a run "
	      "checked after it: %s",
	      reason(r));
	cJSON_Delete(r);
	/* and however many runs the timing made, at least two of them are
	 * checked so (a timing that ended early once checked none) */
	for (int i = 0; i < 3; i++) {
		r = harness_eval(h, fcand(&fc, h, b, ref_double), 1, NULL, NULL);
		tm = cJSON_GetObjectItem(r, "timing");
		CHECK(!strcmp(status(r), "correct") && num(tm, "checked_after_runs") >= 2,
		      "an honest candidate is correct, %g of its %g timed runs checked after their "
		      "call (%s)",
		      num(tm, "checked_after_runs"), num(tm, "count"), reason(r));
		cJSON_Delete(r);
	}

	/* the A/B too: each side's runs, decided after the call */
	struct fcand fi;
	struct harness_ab_opts ao = {.nPairs = 12, .budgetS = 100, .strict = 0};
	int who;
	cJSON *fail = NULL;
	cJSON *ab = harness_ab(h, fcand(&fi, h, b, ref_double), fcand(&fc, h, b, ref_double), &ao,
	                       NULL, NULL, &who, &fail);
	CHECK(ab && num(ab, "checked_after_runs") >= 4,
	      "an A/B of two honest candidates checks %g of their runs after the call, two of "
	      "each at least (%s)",
	      num(ab, "checked_after_runs"), fail ? reason(fail) : "");
	cJSON_Delete(ab);
	cJSON_Delete(fail);
	fail = NULL;
	ab = harness_ab(h, fcand(&fi, h, b, ref_double), fcand(&fc, h, b, knows_sets), &ao, NULL,
	                NULL, &who, &fail);
	CHECK(!ab && who == 1 && fail && !strcmp(status(fail), "incorrect") &&
	          strstr(reason(fail), "checked after its call"),
	      "a challenger right only on the runs decided before the call is caught in its A/B "
	      "(%s)",
	      fail ? reason(fail) : "not caught");
	cJSON_Delete(ab);
	cJSON_Delete(fail);

	/* the batch: every run on inputs of its own, none seen before */
	struct harness_cand *c = fcand(&fc, h, b, counts_repeats);
	c->batch = f_batch;
	c->cpu = f_cpu;
	nSeen = nRepeats = 0;
	r = harness_eval(h, c, 1, NULL, NULL);
	tm = cJSON_GetObjectItem(r, "timing");
	double bRuns = num(tm, "batch_runs");
	CHECK(!strcmp(status(r), "correct") && nRepeats == 0 && nSeen > 5,
	      "%d calls, none on bytes seen before, a batch of %g runs among them (%s)", nSeen,
	      bRuns, reason(r));
	CHECK(!cJSON_GetObjectItem(tm, "batch_runs") || num(tm, "batch_checked_runs") >= 1,
	      "a batch's runs are checked after it (%g of %g)", num(tm, "batch_checked_runs"),
	      bRuns);
	cJSON_Delete(r);

	/* a candidate that does the first run of a batch and skips the rest:
	 * their outputs are left poisoned, and the runs checked after the
	 * batch see it (where the machine allowed a batch at all: without
	 * one its time is unverified; and a batch of one run skips nothing) */
	c = fcand(&fc, h, b, brief_double);
	c->batch = f_batch;
	c->cpu = f_cpu;
	fc.batchSkip = 1;
	r = harness_eval(h, c, 1, NULL, NULL);
	tm = cJSON_GetObjectItem(r, "timing");
	CHECK((!strcmp(status(r), "incorrect") && strstr(reason(r), "of kloop's batch of") &&
	       strstr(reason(r), "checked after it")) ||
	          (!strcmp(status(r), "correct") && !cJSON_GetObjectItem(tm, "batch_runs") &&
	           cJSON_IsFalse(cJSON_GetObjectItem(tm, "verified"))) ||
	          (!strcmp(status(r), "correct") && num(tm, "batch_runs") == 1),
	      "a candidate skipping the runs of a batch is caught in a run checked after it: %s "
	      "(a batch of %g)",
	      reason(r), num(tm, "batch_runs"));
	cJSON_Delete(r);

	harness_free(h);

	/* given inputs (a PyTorch problem's): without a source, each timed
	 * run's are two held sets mixed, and none is checked after its call;
	 * with one (the PyTorch helper, torchref_source), each run's are drawn
	 * from its own seed, and any of them is checked by the source's
	 * outputs of that seed */
	struct fcand fg;
	h = gH = given_harness(&t, b, &fg, err);
	CHECK(h != NULL, "a harness of given inputs (%s)", h ? "" : err);
	harness_set_reference(h, NULL);
	nKnown = nFresh = 0;
	r = harness_eval(h, fcand(&fc, h, b, knows_sets), 1, NULL, NULL);
	tm = cJSON_GetObjectItem(r, "timing");
	CHECK(!strcmp(status(r), "correct") && nFresh > 0 && !num(tm, "checked_after_runs"),
	      "given inputs without a source: right only on held sets passes, its %d runs on "
	      "mixes never checked (%s)",
	      nFresh, status(r));
	cJSON_Delete(r);
	struct harness_source src = {.draw = src_draw, .expect = src_expect};
	harness_set_source(h, &src);
	nKnown = nFresh = nDrawn = nExpected = 0;
	r = harness_eval(h, fcand(&fc, h, b, knows_sets), 1, NULL, NULL);
	CHECK(!strcmp(status(r), "incorrect") && strstr(reason(r), "checked after") && nDrawn > 0 &&
	          nExpected >= 1,
	      "given inputs drawn by a source: right only on held sets is caught in a run "
	      "checked after its call (%s; %d drawn, %d made again)",
	      reason(r), nDrawn, nExpected);
	cJSON_Delete(r);
	nDrawn = nExpected = 0;
	r = harness_eval(h, fcand(&fc, h, b, ref_double), 1, NULL, NULL);
	tm = cJSON_GetObjectItem(r, "timing");
	CHECK(!strcmp(status(r), "correct") && num(tm, "checked_after_runs") >= 2 && nExpected >= 2,
	      "given inputs drawn by a source: an honest candidate is correct, %g of its runs "
	      "checked after their call by the source's outputs (%s)",
	      num(tm, "checked_after_runs"), reason(r));
	cJSON_Delete(r);
	check_ring_ahead(h, b);
	check_runs_ahead(h, b);
	/* a source that cannot draw now (its helper compiling in the
	 * background): mixes again, unchecked, and no call of it */
	src.ready = src_never;
	harness_set_source(h, &src);
	nDrawn = nExpected = 0;
	r = harness_eval(h, fcand(&fc, h, b, ref_double), 1, NULL, NULL);
	tm = cJSON_GetObjectItem(r, "timing");
	CHECK(!strcmp(status(r), "correct") && !num(tm, "checked_after_runs") && !nDrawn &&
	          !nExpected,
	      "a source not ready: the runs are mixes, none drawn by it or checked after the "
	      "call (%d drawn, %g checked)",
	      nDrawn, num(tm, "checked_after_runs"));
	cJSON_Delete(r);
	harness_free(h);
	b->destroy(b);
	return check_done();
}
