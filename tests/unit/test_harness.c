/*
 * test_harness.c - the measurement harness on the host backend with
 * in-process candidates (the harness's own checks, without the runner
 * process of cand.c, which tests/e2e/sandbox.sh covers): the verdict for
 * each way of cheating or failing, and a timing report that is internally
 * consistent.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend.h"
#include "check.h"
#include "harness.h"
#include "harness_priv.h" /* the batch bound's arithmetic (harness_batch_inconsistent) */
#include "fcand.h"
#include "util.h"

static int writes_nothing(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *s)
{
	(void)in, (void)n_in, (void)out, (void)n_out, (void)s;
	return 0;
}

static int oob_after(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *s)
{
	ref_double(in, n_in, out, n_out, s);
	((float *)out[0].data)[kl_numel(&out[0]) + 3] = 1;
	return 0;
}

static int oob_before(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *s)
{
	ref_double(in, n_in, out, n_out, s);
	((float *)out[0].data)[-1] = 1;
	return 0;
}

static int modifies_input(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *s)
{
	ref_double(in, n_in, out, n_out, s);
	((float *)in[0].data)[5] += 1;
	return 0;
}

static float cache[N];
static int calls;
static int stateful(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *s)
{
	if (calls++ == 0) {
		ref_double(in, n_in, out, n_out, s);
		memcpy(cache, out[0].data, sizeof cache);
	} else {
		memcpy(out[0].data, cache, sizeof cache);
	}
	return 0;
}

static int half_written(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *s)
{
	(void)n_in, (void)n_out, (void)s;
	const float *x = in[0].data;
	float *y = out[0].data;
	for (int i = 0; i < N / 2; i++)
		y[i] = 2 * x[i];
	return 0;
}

static int fails(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *s)
{
	(void)in, (void)n_in, (void)out, (void)n_out, (void)s;
	return 42;
}

/* remembers its answer for the inputs it saw last (by their first values), and
 * replays it at no cost when they come again */
static float memo_key[4];
static float memo_out[N];
static int memo_hits;
static int memoizing(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *s)
{
	const float *x = in[0].data;
	if (!memcmp(memo_key, x, sizeof memo_key)) {
		memcpy(out[0].data, memo_out, sizeof memo_out);
		memo_hits++;
		return 0;
	}
	ref_double(in, n_in, out, n_out, s);
	memcpy(memo_key, x, sizeof memo_key);
	memcpy(memo_out, out[0].data, sizeof memo_out);
	return 0;
}

static int wrongCalls;
static int timed_run_only_wrong(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *s)
{
	int n = ++wrongCalls;
	ref_double(in, n_in, out, n_out, s);
	if (n > 5) /* right on the five trials, wrong when timed */
		((float *)out[0].data)[7] = 0;
	return 0;
}

/* a runner taken over that does not know the batch request */
static int f_batch_unknown(struct harness_cand *hc, int mode, int n, double *pMs, double *pMd,
                           char *why, size_t nWhy, char *err)
{
	(void)hc, (void)mode, (void)pMs, (void)pMd, (void)err;
	snprintf(why, nWhy,
	         "timing inconsistent: the candidate's runner answered kloop's batch of %d runs "
	         "with a reply for 0",
	         n);
	return HC_MISBEHAVED;
}

/* a process that is runnable whenever kloop looks, and seems to have
 * waited 10 ms for a CPU before each look: its waits cannot be placed */
static double f_restless(struct harness_cand *hc, int *pAsleep)
{
	static double waited;
	(void)hc;
	*pAsleep = 0;
	return waited += 10;
}

/* threads left spinning by the candidate (tests/fixtures/evil/threads.c):
 * all of its CPU time grows at 8 CPUs' rate beside its runs and frames alike */
static int f_cpu_spinners(struct harness_cand *hc, double *pMain, double *pAll)
{
	f_cpu(hc, pMain, pAll);
	*pAll += 8e3 * now_s();
	return 0;
}

static int f_left16(struct harness_cand *hc)
{
	(void)hc;
	return 16;
}

/* an empty frame answered late once the candidate has run: as long as its
 * last run took (the overhead kloop subtracts, made to swallow the run) */
static double lastRunMs;
static int f_call_timed(struct harness_cand *hc, int mode, int *pRc, double *pMs, double *pMd,
                        char *why, size_t nWhy, char *err)
{
	double t0 = now_s();
	int rc = f_call(hc, mode, pRc, pMs, pMd, why, nWhy, err);
	lastRunMs = (now_s() - t0) * 1e3;
	return rc;
}

static int f_frame_late(struct harness_cand *hc, double *pMd, char *why, size_t nWhy, char *err)
{
	if (lastRunMs > 0) {
		double t0 = now_s();
		while ((now_s() - t0) * 1e3 < lastRunMs)
			;
	}
	return f_frame(hc, pMd, why, nWhy, err);
}

/* the inputs a candidate saw, by a hash of all of their bytes */
static uint64_t seenHash[4096];
static int nSeen, nRepeats, nMixedVaried;
static int remembers_inputs(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *s)
{
	uint64_t hsh = 1469598103934665603ull;
	const unsigned char *p = in[0].data;
	for (int i = 0; i < N * 4; i++)
		hsh = (hsh ^ p[i]) * 1099511628211ull;
	/* the test's varied sets hold values above 5, its plain ones below 1:
	 * a call on some of each ran on a mix with a varied set */
	int nBig = 0;
	for (int i = 0; i < N; i++)
		nBig += ((const float *)in[0].data)[i] > 5.0f;
	nMixedVaried += nBig > 0 && nBig < N;
	for (int i = 0; i < nSeen; i++)
		nRepeats += seenHash[i] == hsh;
	if (nSeen < 4096)
		seenHash[nSeen++] = hsh;
	return ref_double(in, n_in, out, n_out, s);
}

int main(void)
{
	char err[KL_ERRLEN];
	struct task t;
	fcand_double_task(&t);
	struct backend *b = backend_host_new(err);
	struct harness_opts o;
	harness_default_opts(&o, "host");
	o.budgetS = 0.2;
	/* a timing with no samples (every run failed its check) has no quantile:
	 * not a read before the array */
	double none[1] = {7}, two[2] = {1, 3};
	CHECK(isnan(harness_pct(none, 0, 0.5)) && harness_pct(two, 2, 0.5) == 2,
	      "no samples: no median (NAN), and two samples' median is their mean");
	o.nTrials = 1 << 30;
	CHECK(!harness_new(&t, b, &o, err) && strstr(err, "does not fit") &&
	          strstr(err, "use fewer --trials"),
	      "a billion trials' sets do not fit in memory: refused before any is made (%s)", err);
	o.nTrials = 5;
	struct harness *h = harness_new(&t, b, &o, err);
	CHECK(h != NULL, "harness on the host backend");
	CHECK(harness_generate_inputs(h, err) == 0, "inputs generated");
	struct fcand fc;
	CHECK(harness_run_reference(h, fcand(&fc, h, b, ref_double), err) == 0,
	      "reference data computed");

	cJSON *r = harness_eval(h, fcand(&fc, h, b, ref_double), 1, NULL, NULL);
	cJSON *tm = cJSON_GetObjectItem(r, "timing");
	double med = cJSON_GetNumberValue(cJSON_GetObjectItem(tm, "median_ms"));
	double p10 = cJSON_GetNumberValue(cJSON_GetObjectItem(tm, "p10_ms"));
	double p90 = cJSON_GetNumberValue(cJSON_GetObjectItem(tm, "p90_ms"));
	double cnt = cJSON_GetNumberValue(cJSON_GetObjectItem(tm, "count"));
	CHECK(!strcmp(status(r), "correct"), "the reference itself is correct");
	CHECK(med > 0 && p10 <= med && med <= p90 && cnt >= 3,
	      "timing: 0 < p10 <= median <= p90, %g runs", cnt);
	cJSON *c = cJSON_GetObjectItem(r, "correctness");
	CHECK(cJSON_GetNumberValue(cJSON_GetObjectItem(c, "trials_passed")) == 5,
	      "five trials passed");
	cJSON_Delete(r);

	struct {
		kl_run_fn fn;
		const char *status, *needle, *what;
	} cases[] = {
	    {writes_nothing, "incorrect", "NaN", "a candidate that writes nothing"},
	    {oob_after, "incorrect", "after the end of output y", "a write past the end"},
	    {oob_before, "incorrect", "before the start of output y", "a write before the start"},
	    {modifies_input, "incorrect", "input modified: x[0, 5]",
	     "a candidate modifying its input"},
	    {stateful, "incorrect", "trial 2 of 5", "a candidate replaying its first answer"},
	    {half_written, "incorrect", "512 of 1024 elements", "half the output written"},
	    {fails, "incorrect", "kl_run returned 42", "a non-zero return"},
	    /* some timed runs are checked: caught in one, not only in the run after timing */
	    {timed_run_only_wrong, "incorrect", "timed run ", "wrong only when timed"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		r = harness_eval(h, fcand(&fc, h, b, cases[i].fn), 1, NULL, NULL);
		CHECK(!strcmp(status(r), cases[i].status) && strstr(reason(r), cases[i].needle),
		      "%s is %s (%s)", cases[i].what, cases[i].status, reason(r));
		cJSON_Delete(r);
	}
	/* remembering answers buys nothing while timed: every timed run has new inputs */
	memo_hits = 0;
	r = harness_eval(h, fcand(&fc, h, b, memoizing), 1, NULL, NULL);
	tm = cJSON_GetObjectItem(r, "timing");
	cnt = cJSON_GetNumberValue(cJSON_GetObjectItem(tm, "count"));
	CHECK(!strcmp(status(r), "correct") && memo_hits <= 1,
	      "a memoizing candidate is correct but finds no repeated inputs in %g timed runs (%d "
	      "hits)",
	      cnt, memo_hits);
	cJSON_Delete(r);
	/* after a misbehaving candidate, a correct one is still correct */
	r = harness_eval(h, fcand(&fc, h, b, ref_double), 0, NULL, NULL);
	CHECK(!strcmp(status(r), "correct"), "a correct candidate after the bad ones is correct");
	cJSON_Delete(r);
	/* the cascade's quick timing: exactly the runs asked for */
	cJSON *fail = NULL;
	tm = harness_time(h, fcand(&fc, h, b, ref_double), 4, NULL, NULL, &fail);
	CHECK(tm && !fail && cJSON_GetNumberValue(cJSON_GetObjectItem(tm, "count")) == 4 &&
	          cJSON_IsTrue(cJSON_GetObjectItem(tm, "quick")),
	      "the quick timing: 4 timed runs, marked quick");
	/* the full timing of the same candidate goes on from it: no second
	 * warm-up, the quick runs among its runs (unless the quick timing went
	 * device-wide: then it starts afresh, and its warm-up is its own) */
	double qWarm = cJSON_GetNumberValue(cJSON_GetObjectItem(tm, "warmup_runs"));
	double qChecked = cJSON_GetNumberValue(cJSON_GetObjectItem(tm, "checked_runs"));
	int qStrict =
	    !strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(tm, "method")), "device-wide");
	cJSON_Delete(tm);
	tm = harness_time(h, &fc.hc, 0, NULL, NULL, &fail);
	double fWarm = cJSON_GetNumberValue(cJSON_GetObjectItem(tm, "warmup_runs"));
	CHECK(tm && !fail && cJSON_GetNumberValue(cJSON_GetObjectItem(tm, "count")) >= 10 &&
	          !cJSON_GetObjectItem(tm, "quick") &&
	          (qStrict || (fWarm == qWarm && cJSON_GetNumberValue(cJSON_GetObjectItem(
	                                             tm, "checked_runs")) >= qChecked)),
	      "the full timing after the quick one goes on from it (quick %s, warm-up %g then %g)",
	      qStrict ? "device-wide" : "on the stream", qWarm, fWarm);
	cJSON_Delete(tm);
	tm = harness_time(h, fcand(&fc, h, b, fails), 4, NULL, NULL, &fail);
	CHECK(!tm && fail && !strcmp(status(fail), "incorrect") &&
	          strstr(reason(fail), "kl_run returned 42 during warm-up"),
	      "a candidate failing in the quick timing: its verdict (%s)",
	      fail ? reason(fail) : "");
	cJSON_Delete(fail);
	/* the interleaved A/B: its pairs and its verdict's fields (which side is
	 * faster is not asserted: timing) */
	struct fcand fa, fb;
	struct harness_ab_opts ao = {.nPairs = 10, .budgetS = 100, .strict = 0};
	int who;
	cJSON *ab = harness_ab(h, fcand(&fa, h, b, ref_double), fcand(&fb, h, b, ref_double), &ao,
	                       NULL, NULL, &who, &fail);
	double pairs = cJSON_GetNumberValue(cJSON_GetObjectItem(ab, "pairs"));
	double wins = cJSON_GetNumberValue(cJSON_GetObjectItem(ab, "wins"));
	CHECK(ab && pairs == 10 && wins >= 0 && wins <= 10 &&
	          cJSON_IsBool(cJSON_GetObjectItem(ab, "won")) &&
	          cJSON_GetObjectItem(cJSON_GetObjectItem(ab, "incumbent"), "p10_ms") &&
	          strstr(cJSON_GetStringValue(cJSON_GetObjectItem(ab, "rule")), "of 10 pairs"),
	      "A/B of two honest candidates: 10 pairs, %g wins, a verdict and its rule", wins);
	cJSON_Delete(ab);
	ab = harness_ab(h, fcand(&fa, h, b, ref_double), fcand(&fb, h, b, fails), &ao, NULL, NULL,
	                &who, &fail);
	CHECK(!ab && who == 1 && fail && !strcmp(status(fail), "incorrect") &&
	          strstr(reason(fail), "kl_run returned 42"),
	      "a challenger failing in the A/B is the one blamed (%s)", fail ? reason(fail) : "");
	cJSON_Delete(fail);
	/* times reported by the candidate's side are bounded by kloop's clock */
	o.budgetS = 0.05;
	struct harness *h2 = harness_new(&t, b, &o, err);
	CHECK(h2 && harness_generate_inputs(h2, err) == 0 &&
	          harness_run_reference(h2, fcand(&fc, h2, b, ref_double), err) == 0,
	      "a second harness");
	r = harness_eval(h2, fcand(&fc, h2, b, slow_double), 1, NULL, NULL);
	tm = cJSON_GetObjectItem(r, "timing");
	CHECK(!strcmp(status(r), "correct") &&
	          cJSON_GetNumberValue(cJSON_GetObjectItem(tm, "checked_runs")) >= 1,
	      "an honest 2 ms candidate is correct, with %g timed runs checked (%s)",
	      cJSON_GetNumberValue(cJSON_GetObjectItem(tm, "checked_runs")), reason(r));
	cJSON_Delete(r);
	/* an honest short candidate whose process is slow to wake after the
	 * harness's preparation of each run (a busy or virtual machine) is not
	 * taken for one that lies about its time */
	fcand(&fc, h2, b, ref_double);
	fc.wakeMs = 0.5;
	r = harness_eval(h2, &fc.hc, 1, NULL, NULL);
	CHECK(!strcmp(status(r), "correct"),
	      "an honest short candidate that takes 0.5 ms to wake before each run is correct (%s)",
	      reason(r));
	cJSON_Delete(r);
	/* the quick timing bounds a few runs: a burst of load that slows most of
	 * them, but not the empty frames, does not make an honest short
	 * candidate a liar (its median was once taken as the bound: "timing
	 * inconsistent" for a 0.013 ms kernel on a busy machine) */
	fcand(&fc, h2, b, ref_double);
	fc.burstMs = 0.5;
	tm = harness_time(h2, &fc.hc, 5, NULL, NULL, &fail);
	CHECK(tm && !fail,
	      "an honest short candidate, 2 of every 3 timed runs slowed by 0.5 ms of load, "
	      "passes the quick timing (%s)",
	      fail ? reason(fail) : "");
	cJSON_Delete(tm);
	cJSON_Delete(fail);
	fcand(&fc, h2, b, slow_double)->call = f_call;
	fc.lie = 50;
	r = harness_eval(h2, &fc.hc, 1, NULL, NULL);
	CHECK(!strcmp(status(r), "incorrect") && strstr(reason(r), "timing inconsistent"),
	      "a candidate reporting a fiftieth of its time is incorrect: %s", reason(r));

	cJSON_Delete(r);
	/* a liar whose process is never seen asleep: its busy time cannot be
	 * known, and the verdict says the bound was not applied, never that it
	 * held (before, the misplaced waits made its round trips look empty) */
	fcand(&fc, h2, b, slow_double);
	fc.lie = 50;
	fc.hc.sched_delay = f_restless;
	r = harness_eval(h2, &fc.hc, 1, NULL, NULL);
	tm = cJSON_GetObjectItem(r, "timing");
	const char *cb = cJSON_GetStringValue(cJSON_GetObjectItem(tm, "clock_bound"));
	CHECK(cb && strstr(cb, "not applied") && strstr(cb, "0 of "),
	      "a process never seen asleep: the timing says the clock bound was not applied (%s)",
	      cb ? cb : reason(r));
	CHECK(cJSON_IsFalse(cJSON_GetObjectItem(tm, "verified")),
	      "... and the time is unverified (never ranked)");
	cJSON_Delete(r);
	/* where the CPU time of all of the candidate is known, it bounds the
	 * time when the clock cannot: the same liar is found by it, and an
	 * honest candidate never seen asleep is verified by it */
	fcand(&fc, h2, b, slow_double);
	fc.lie = 50;
	fc.hc.sched_delay = f_restless;
	fc.hc.cpu = f_cpu;
	r = harness_eval(h2, &fc.hc, 1, NULL, NULL);
	/* (on a machine so busy that this process itself waits for a CPU most
	 * of the time, no bound holds, and the time is unverified: either way
	 * the liar's time is never trusted) */
	tm = cJSON_GetObjectItem(r, "timing");
	CHECK((!strcmp(status(r), "incorrect") && strstr(reason(r), "timing inconsistent") &&
	       strstr(reason(r), "on a CPU")) ||
	          cJSON_IsFalse(cJSON_GetObjectItem(tm, "verified")),
	      "a liar never seen asleep is found by its CPU time, or unverified: %s", reason(r));
	cJSON_Delete(r);
	fcand(&fc, h2, b, slow_double);
	fc.hc.sched_delay = f_restless;
	fc.hc.cpu = f_cpu;
	r = harness_eval(h2, &fc.hc, 1, NULL, NULL);
	tm = cJSON_GetObjectItem(r, "timing");
	cb = cJSON_GetStringValue(cJSON_GetObjectItem(tm, "bound"));
	CHECK(!strcmp(status(r), "correct") && cJSON_IsTrue(cJSON_GetObjectItem(tm, "verified")) &&
	          cb && !strcmp(cb, "cpu"),
	      "an honest candidate never seen asleep is verified by its CPU time (%s, bound %s)",
	      status(r), cb ? cb : "none");
	cJSON_Delete(r);
	/* an honest candidate that left threads spinning: their CPU time, in
	 * its runs and frames alike, is no bound, and never makes it a liar
	 * (its time is kloop's clock's, or unverified) */
	fcand(&fc, h2, b, slow_double);
	fc.hc.cpu = f_cpu_spinners;
	fc.hc.threads_left = f_left16;
	r = harness_eval(h2, &fc.hc, 1, NULL, NULL);
	CHECK(!strcmp(status(r), "correct"),
	      "threads left spinning: their CPU time makes no liar of an honest candidate (%s: %s)",
	      status(r), reason(r));
	cJSON_Delete(r);
	/* a liar that answers the empty frames late, once it has run, as long
	 * as its last run: the frames the bound subtracts were taken before
	 * its first call, so the late ones excuse nothing */
	fcand(&fc, h2, b, slow_double);
	fc.hc.call = f_call_timed;
	fc.hc.frame = f_frame_late;
	fc.lie = 30;
	lastRunMs = 0;
	r = harness_eval(h2, &fc.hc, 1, NULL, NULL);
	tm = cJSON_GetObjectItem(r, "timing");
	cb = cJSON_GetStringValue(cJSON_GetObjectItem(tm, "clock_bound"));
	/* caught: incorrect, or unverified because its frames lengthen, or
	 * (where this process itself waits for a CPU most of the time, a
	 * machine too busy for the clock) unverified because no bound holds;
	 * never a verified time */
	CHECK((!strcmp(status(r), "incorrect") && strstr(reason(r), "timing inconsistent")) ||
	          (cJSON_IsFalse(cJSON_GetObjectItem(tm, "verified")) && cb &&
	           (strstr(cb, "lengthens them") || strstr(cb, "not applied"))),
	      "a liar whose later empty frames take as long as its runs is never verified: %s",
	      cb ? cb : reason(r));
	cJSON_Delete(r);
	/* an honest candidate's time is verified */
	r = harness_eval(h2, fcand(&fc, h2, b, slow_double), 1, NULL, NULL);
	tm = cJSON_GetObjectItem(r, "timing");
	CHECK(!strcmp(status(r), "correct") && cJSON_IsTrue(cJSON_GetObjectItem(tm, "verified")),
	      "an honest candidate's time is verified (%s)", reason(r));
	cJSON_Delete(r);
	/* the batch bound (harness_batch.c): an honest candidate's batch is
	 * consistent, and the timing says so (with its CPU time, as the host's
	 * runner has: this candidate's waits are hidden from kloop, and the
	 * runs' times are only comparable with its batch's by CPU time) */
	fcand(&fc, h2, b, slow_double)->batch = f_batch;
	fc.hc.cpu = f_cpu;
	r = harness_eval(h2, &fc.hc, 1, NULL, NULL);
	tm = cJSON_GetObjectItem(r, "timing");
	double bRuns = cJSON_GetNumberValue(cJSON_GetObjectItem(tm, "batch_runs"));
	CHECK(!strcmp(status(r), "correct") && cJSON_IsTrue(cJSON_GetObjectItem(tm, "verified")) &&
	          bRuns >= 1 && bRuns <= HARNESS_BATCH_MAX &&
	          cJSON_GetObjectItem(tm, "batch_reported_ms") &&
	          cJSON_GetObjectItem(tm, "batch_wall_ms"),
	      "an honest 2 ms candidate's batch of %g runs holds (%s)", bRuns, reason(r));
	cJSON_Delete(r);
	/* a liar reporting 60% of its time passes the per-run bound (half of
	 * kloop's clock) but not the batch's */
	fcand(&fc, h2, b, slow_double)->batch = f_batch;
	fc.hc.cpu = f_cpu;
	fc.lie = 1 / 0.6;
	r = harness_eval(h2, &fc.hc, 1, NULL, NULL);
	tm = cJSON_GetObjectItem(r, "timing");
	CHECK((!strcmp(status(r), "incorrect") && strstr(reason(r), "timing inconsistent") &&
	       (strstr(reason(r), "batch") || strstr(reason(r), "in the same runs"))) ||
	          cJSON_IsFalse(cJSON_GetObjectItem(tm, "verified")),
	      "a candidate reporting 60%% of its time is found by the batch or by each run's CPU "
	      "time, or unverified: %s",
	      reason(r));
	cJSON_Delete(r);
	/* issue 35: an honest candidate whose batch meets a slower machine than
	 * its timed runs (each run of the batch 1.76 times as long, on the CPU
	 * too, as a virtual CPU taken by its host makes it: chunked.c reported
	 * 4.781 ms and spent 8.404 ms a run in the batch) is no liar, nor
	 * unverified: its timed runs are bounded by their own CPU time, of the
	 * same moments, and the batch by its own */
	fcand(&fc, h2, b, slow_double)->batch = f_batch;
	fc.hc.cpu = f_cpu;
	fc.batchSlow = 0.76 * 2;
	r = harness_eval(h2, &fc.hc, 1, NULL, NULL);
	tm = cJSON_GetObjectItem(r, "timing");
	CHECK(!strcmp(status(r), "correct") && cJSON_IsTrue(cJSON_GetObjectItem(tm, "verified")),
	      "an honest candidate whose batch ran 1.76x slower than its timed runs is correct "
	      "and verified (%s, verified %d: %s%s)",
	      status(r), cJSON_IsTrue(cJSON_GetObjectItem(tm, "verified")), reason(r),
	      cJSON_GetStringValue(cJSON_GetObjectItem(tm, "clock_bound"))
	          ? cJSON_GetStringValue(cJSON_GetObjectItem(tm, "clock_bound"))
	          : "");
	cJSON_Delete(r);
	/* a runner that answers its batch honestly and forges its timed runs
	 * at 60%: each timed run is held to its own CPU time */
	fcand(&fc, h2, b, slow_double)->batch = f_batch;
	fc.hc.cpu = f_cpu;
	fc.lie = 1 / 0.6;
	fc.lieTimedOnly = 1;
	r = harness_eval(h2, &fc.hc, 1, NULL, NULL);
	tm = cJSON_GetObjectItem(r, "timing");
	/* (on a machine so busy that most of its runs wait for a CPU inside
	 * the runner's timer, its reports are lengthened past its work, and
	 * the forgery gains nothing: a verified time is then no less than 0.8
	 * of its 2 ms) */
	double fMed = cJSON_GetNumberValue(cJSON_GetObjectItem(tm, "median_ms"));
	CHECK((!strcmp(status(r), "incorrect") && strstr(reason(r), "timing inconsistent")) ||
	          cJSON_IsFalse(cJSON_GetObjectItem(tm, "verified")) || fMed >= 0.8 * 2,
	      "timed runs forged at 60%% beside an honest batch: incorrect by their own CPU time, "
	      "or unverified, never a verified time below its work (%s, verified %d, %g ms: %s%s)",
	      status(r), cJSON_IsTrue(cJSON_GetObjectItem(tm, "verified")), fMed, reason(r),
	      cJSON_GetStringValue(cJSON_GetObjectItem(tm, "clock_bound"))
	          ? cJSON_GetStringValue(cJSON_GetObjectItem(tm, "clock_bound"))
	          : "");
	cJSON_Delete(r);
	fcand(&fc, h2, b, slow_double)->batch = f_batch_unknown;
	r = harness_eval(h2, &fc.hc, 1, NULL, NULL);
	CHECK(!strcmp(status(r), "incorrect") && strstr(reason(r), "batch of"),
	      "a runner that does not answer the batch is incorrect, and the reason says so: %s",
	      reason(r));
	cJSON_Delete(r);
	/* the bound's arithmetic: 200 runs of a 0.1 ms kernel beside the twin's
	 * empty ones, a jitter of 0.22 ms (an H200's frames) */
	struct batch bt = {
	    .n = 200, .wall = 21, .busy = 21, .twinWall = 1, .twinBusy = 1, .rep = 0.1, .cpu = NAN};
	char bw[600] = "";
	CHECK(harness_batch_inconsistent(&bt, 0.22, 0.1, 0.03, bw, sizeof bw) == 0,
	      "the batch: a true report is consistent (%s)", bw);
	bt.rep = 0.06;
	CHECK(harness_batch_inconsistent(&bt, 0.22, 0.1, 0.03, bw, sizeof bw) == 1 &&
	          strstr(bw, "batch of 200 runs"),
	      "the batch: 60%% of the time reported is inconsistent (%s)", bw);
	bt.rep = 0.1;
	bw[0] = 0;
	/* the timed runs are of other moments than the batch: below it, the
	 * time is unverified (3), never a liar's (1) */
	CHECK(harness_batch_inconsistent(&bt, 0.22, 0.06, 0, bw, sizeof bw) == 3 &&
	          strstr(bw, "median run of 0.06") && strstr(bw, "another moment"),
	      "the batch: a timed median of 60%% leaves the time unverified (%s)", bw);
	CHECK(harness_batch_inconsistent(&bt, 0.22, 0.04, 0.03, bw, sizeof bw) == 3,
	      "the batch: a timed median of 40%% is below it beside the GPU's flush allowance");
	CHECK(harness_batch_inconsistent(&bt, 0.22, NAN, 0.03, bw, sizeof bw) == 0,
	      "the batch: no timed median to hold (the host's runs bounded each by its CPU time)");
	CHECK(harness_batch_inconsistent(&bt, 0.22, 0.085, 0.03, bw, sizeof bw) == 0,
	      "the batch: a timed median 15%% under the batch's (colder, its launches hidden "
	      "behind the flush) is consistent");
	bt.rep = 0.2;
	CHECK(harness_batch_inconsistent(&bt, 0.22, 0.1, 0.03, bw, sizeof bw) == 1 &&
	          strstr(bw, "more than the"),
	      "the batch: reporting more than the batch took is inconsistent (%s)", bw);
	bt.rep = 0.1;
	bt.busy = NAN;
	CHECK(harness_batch_inconsistent(&bt, 0.22, 0.1, 0.03, bw, sizeof bw) == 2 &&
	          strstr(bw, "not applied"),
	      "the batch: waits that cannot be placed leave it not applied (%s)", bw);
	/* on the host its CPU time bounds it too, whatever the waits */
	bt.cpu = 0.1;
	bt.rep = 0.06;
	CHECK(harness_batch_inconsistent(&bt, 0.22, 0.1, 0, bw, sizeof bw) == 1 &&
	          strstr(bw, "on a CPU"),
	      "the batch: 60%% of its CPU time reported is inconsistent (%s)", bw);
	bt.rep = 0.1;
	CHECK(harness_batch_inconsistent(&bt, 0.22, 0.1, 0, bw, sizeof bw) == 0,
	      "the batch: its CPU time reported is consistent");
	/* each timed run against its own CPU time (harness_paired_cpu): 20 runs
	 * of 2 ms, three of which the host took the virtual CPU outside the
	 * runner's timer (3 ms more of CPU time), are consistent and resolve a
	 * forgery at 0.8; the same reported at 60% is not; runs of 10 us
	 * resolve nothing */
	struct samples pr = {0}, pc = {0}, pf = {0};
	for (int i = 0; i < 20; i++) {
		harness_push(&pr, 2.0);
		harness_push(&pc, 100 + 2.0 + 0.02 + (i % 7 == 0 ? 3 : 0));
		harness_push(&pf, 0.02);
	}
	for (int i = 0; i < 20; i++)
		pc.a[i] -= 100;
	int paired = 0;
	CHECK(harness_paired_cpu(&pr, &pc, &pf, &paired, bw, sizeof bw) == 0 && paired == 1,
	      "each run against its own CPU time: honest runs, three with the CPU taken outside "
	      "the timer, are consistent and resolved (paired %d: %s)",
	      paired, bw);
	for (int i = 0; i < 20; i++)
		pr.a[i] = 1.2;
	CHECK(harness_paired_cpu(&pr, &pc, &pf, &paired, bw, sizeof bw) == 1 &&
	          strstr(bw, "in the same runs") && strstr(bw, "of 20 runs"),
	      "each run against its own CPU time: 60%% reported is inconsistent (%s)", bw);
	for (int i = 0; i < 20; i++)
		pr.a[i] = 0.01, pc.a[i] = 0.03;
	CHECK(harness_paired_cpu(&pr, &pc, &pf, &paired, bw, sizeof bw) == 0 && paired == 0,
	      "each run against its own CPU time: runs of 10 us resolve nothing (paired %d)",
	      paired);
	free(pr.a), free(pc.a), free(pf.a);
	/* issue 35's numbers: chunked.c's timed median 4.781 ms, its batch 8.404
	 * ms a run of CPU and as much reported: unverified, not a liar */
	struct batch b35 = {
	    .n = 5, .wall = 43, .busy = NAN, .twinBusy = NAN, .rep = 8.41, .cpu = 8.404};
	CHECK(harness_batch_inconsistent(&b35, 0.1, 4.781, 0, bw, sizeof bw) == 3,
	      "the batch: an honest timed median 1.76x below a batch of another moment is no "
	      "liar (%s)",
	      bw);
	/* a batch of runs of nanoseconds: its request's own CPU time (receive,
	 * timer, reply) is more than its runs', and refutes nothing (1000 runs
	 * of a 13 ns kernel spent 18 us of CPU against 13 us on its timer, and
	 * were called a liar one time in four) */
	int n0 = bt.n;
	bt.n = 1000;
	bt.cpu = 1.8e-5;
	bt.rep = 1.3e-5;
	CHECK(harness_batch_inconsistent(&bt, 0.22, 1.3e-5, 0, bw, sizeof bw) == 0,
	      "the batch: runs of nanoseconds, their request's own CPU time makes no liar (%s)",
	      bw);
	bt.n = n0;
	bt.cpu = 0.1;
	bt.rep = 0.1;
	CHECK(harness_batch_runs(0.1, 1) == 200 && harness_batch_runs(0, 1) == HARNESS_BATCH_MAX &&
	          harness_batch_runs(50, 1) == 1 && harness_batch_runs(1, 0) == 5,
	      "the batch's runs: 20 ms of them on the GPU, 5 on the host, 1 to %d",
	      HARNESS_BATCH_MAX);
	/* an A/B bounds both sides too: a challenger reporting a fiftieth of
	 * its A/B times is the liar, not the winner */
	struct fcand fl, fh;
	struct harness_ab_opts ao2 = {.nPairs = 12, .budgetS = 100, .strict = 0};
	int who2;
	fcand(&fl, h2, b, slow_double)->call = f_call;
	fl.lie = 50;
	cJSON *ab2 =
	    harness_ab(h2, fcand(&fh, h2, b, slow_double), &fl.hc, &ao2, NULL, NULL, &who2, &fail);
	CHECK(!ab2 && who2 == 1 && fail && strstr(reason(fail), "timing inconsistent"),
	      "a challenger forging its A/B times is incorrect: %s", fail ? reason(fail) : "won?");
	cJSON_Delete(ab2);
	cJSON_Delete(fail);
	fail = NULL;
	harness_free(h2);
	/* given inputs (PyTorch's): no timed run sees bytes seen before, and
	 * checked timed runs use checking sets the reference computed */
	o.nPool = 3;
	o.budgetS = 0.05;
	struct harness *h3 = harness_new(&t, b, &o, err);
	CHECK(h3 != NULL, "a harness for given inputs");
	float *given = xmalloc(N * sizeof *given);
	for (int s3 = 0; h3 && s3 < harness_nsets(h3); s3++) {
		for (int i = 0; i < N; i++)
			given[i] = (float)((i * 7 + s3 * 13) % 101) / 50.0f - 1.0f +
			           (harness_vary_of(h3, s3) ? 8.0f : 0.0f);
		harness_set_input(h3, s3, 0, given, err);
	}
	free(given);
	CHECK(h3 && harness_run_reference(h3, fcand(&fc, h3, b, ref_double), err) == 0,
	      "the reference on the given sets");
	nSeen = nRepeats = nMixedVaried = 0;
	r = h3 ? harness_eval(h3, fcand(&fc, h3, b, remembers_inputs), 1, NULL, NULL) : NULL;
	tm = cJSON_GetObjectItem(r, "timing");
	CHECK(r && !strcmp(status(r), "correct") && nRepeats == 0 && nSeen > 20,
	      "given inputs: %d calls, none on bytes seen before (%d repeats)", nSeen, nRepeats);
	/* timed on the problem's own inputs: the varied sets are for checking
	 * (a time on them is another problem's: 15% slower for the softmax
	 * seed on an H200) */
	CHECK(
	    nMixedVaried == 0,
	    "given inputs: timed runs mix plain sets only, never a varied one (%d of %d calls did)",
	    nMixedVaried, nSeen);
	CHECK(cJSON_GetNumberValue(cJSON_GetObjectItem(tm, "checked_runs")) >= 1,
	      "given inputs: %g timed runs checked on the reference's checking sets",
	      cJSON_GetNumberValue(cJSON_GetObjectItem(tm, "checked_runs")));
	cJSON_Delete(r);
	wrongCalls = 0;
	r = h3 ? harness_eval(h3, fcand(&fc, h3, b, timed_run_only_wrong), 1, NULL, NULL) : NULL;
	CHECK(r && !strcmp(status(r), "incorrect") && strstr(reason(r), "timed run"),
	      "given inputs: wrong only when timed is caught in a checked timed run (%s)",
	      r ? reason(r) : "");
	cJSON_Delete(r);
	harness_free(h3);
	harness_free(h);
	b->destroy(b);
	return check_done();
}
