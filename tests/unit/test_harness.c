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

#include "backend.h"
#include "check.h"
#include "harness.h"
#include "util.h"

#define N 1024

static int ref_double(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *s)
{
	(void)n_in, (void)n_out, (void)s;
	const float *x = in[0].data;
	float *y = out[0].data;
	for (int64_t i = 0; i < kl_numel(&in[0]); i++)
		y[i] = 2 * x[i];
	return 0;
}

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

static int timed_run_only_wrong(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *s)
{
	static int n;
	ref_double(in, n_in, out, n_out, s);
	if (++n > 5) /* right on the five trials, wrong when timed */
		((float *)out[0].data)[7] = 0;
	return 0;
}

/* busy for about 2 ms, then right */
static int slow_double(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *s)
{
	double t0 = now_s();
	while (now_s() - t0 < 0.002)
		ref_double(in, n_in, out, n_out, s);
	return 0;
}

/* a candidate as the harness calls it, here in this process: kl_run on the
 * harness's shared buffers, mapped a second time; lie divides the times it
 * reports */
struct fcand {
	struct harness_cand hc;
	kl_run_fn fn;
	struct backend *b;
	kl_tensor in[4], out[4];
	int nIn, nOut;
	double lie;
	double outsideS; /* spun in each timed call outside the candidate's timer */
	double waitMs;   /* what sched_delay says of it: all but 0.05 ms a call */
};

/* this thread's time waiting for a CPU so far, ms */
static double thread_wait_ms(void)
{
	unsigned long long run = 0, wait = 0;
	FILE *f = fopen("/proc/thread-self/schedstat", "r");
	if (f && fscanf(f, "%llu %llu", &run, &wait) != 2)
		wait = 0;
	if (f)
		fclose(f);
	return (double)wait * 1e-6;
}

static int f_call(struct harness_cand *hc, int mode, int *pRc, double *pMs, double *pMd, char *why,
                  size_t nWhy, char *err)
{
	struct fcand *c = (struct fcand *)hc;
	(void)why, (void)nWhy;
	if (mode != HC_UNTIMED && c->b->timer_start(c->b, err) < 0)
		return -1;
	*pRc = c->fn(c->in, c->nIn, c->out, c->nOut, NULL);
	if (mode != HC_UNTIMED && c->b->timer_stop(c->b, pMs, pMd, err) < 0)
		return -1;
	if (mode != HC_UNTIMED)
		*pMs /= c->lie, *pMd /= c->lie;
	if (mode != HC_UNTIMED && c->outsideS > 0) {
		double t0 = now_s(), w0 = thread_wait_ms();
		while (now_s() - t0 < c->outsideS)
			;
		/* the spin less 0.05 ms, less what this thread really waited in it
		 * (the harness counts that itself) */
		double w = (now_s() - t0) * 1e3 - 0.05 - (thread_wait_ms() - w0);
		c->waitMs += w > 0 ? w : 0;
	}
	return 0;
}

static double f_sched_delay(struct harness_cand *hc)
{
	return ((struct fcand *)hc)->waitMs;
}

static int f_frame(struct harness_cand *hc, double *pMd, char *why, size_t nWhy, char *err)
{
	struct fcand *c = (struct fcand *)hc;
	double ms;
	(void)why, (void)nWhy;
	return c->b->timer_start(c->b, err) < 0 ? -1 : c->b->timer_stop(c->b, &ms, pMd, err);
}

static struct harness_cand *fcand(struct fcand *c, struct harness *h, struct backend *b,
                                  kl_run_fn fn)
{
	char err[KL_ERRLEN];
	struct harness_buf hb[8];
	int n = harness_buffers(h, hb);
	memset(c, 0, sizeof *c);
	c->hc.call = f_call;
	c->hc.frame = f_frame;
	c->hc.sched_delay = f_sched_delay;
	c->fn = fn;
	c->b = b;
	c->lie = 1;
	for (int i = 0; i < n; i++) {
		char *p = b->open_shared(b, &hb[i].sh, 0, err);
		kl_tensor *t = hb[i].input ? &c->in[c->nIn++] : &c->out[c->nOut++];
		*t = hb[i].t;
		t->data = p + hb[i].off;
	}
	return &c->hc;
}

static const char *status(cJSON *r)
{
	return cJSON_GetStringValue(cJSON_GetObjectItem(r, "status"));
}

static const char *reason(cJSON *r)
{
	return cJSON_GetStringValue(cJSON_GetObjectItem(r, "reason"));
}

int main(void)
{
	char err[KL_ERRLEN];
	struct task t = {0};
	t.zName = "double";
	t.nIn = t.nOut = 1;
	t.aIn[0] = (struct task_tensor){.zName = "x",
	                                .dtype = KL_F32,
	                                .ndim = 2,
	                                .shape = {4, N / 4},
	                                .dist = DIST_UNIFORM,
	                                .a = -1,
	                                .b = 1};
	t.aOut[0] =
	    (struct task_tensor){.zName = "y", .dtype = KL_F32, .ndim = 2, .shape = {4, N / 4}};
	for (int d = 0; d < 8; d++)
		t.aTol[d] = task_default_tol((kl_dtype)d);
	struct backend *b = backend_host_new(err);
	struct harness_opts o;
	harness_default_opts(&o, "host");
	o.budgetS = 0.2;
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
	/* times reported by the candidate's side are bounded by kloop's clock
	 * (a budget for enough runs that some do not wait for a CPU, on a
	 * loaded machine too) */
	o.budgetS = 0.5;
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
	/* a machine so busy that every run waits for a CPU: the waits taken out
	 * of the round trips leave some of the switching in them (here 0.05 ms
	 * a run, more than this candidate's time), which says nothing of what
	 * the candidate ran: no floor from such runs */
	fcand(&fc, h2, b, ref_double);
	fc.outsideS = 0.001;
	r = harness_eval(h2, &fc.hc, 1, NULL, NULL);
	CHECK(!strcmp(status(r), "correct"),
	      "a correct candidate whose every run waited for a CPU is correct, not inconsistent "
	      "(%s)",
	      reason(r));
	cJSON_Delete(r);
	fcand(&fc, h2, b, slow_double)->call = f_call;
	fc.lie = 50;
	r = harness_eval(h2, &fc.hc, 1, NULL, NULL);
	CHECK(!strcmp(status(r), "incorrect") && strstr(reason(r), "timing inconsistent"),
	      "a candidate reporting a fiftieth of its time is incorrect: %s", reason(r));
	cJSON_Delete(r);
	harness_free(h2);
	harness_free(h);
	b->destroy(b);
	return check_done();
}
