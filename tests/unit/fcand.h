/*
 * fcand.h - a candidate as the harness calls it, in the unit test's own
 * process (the runner's calls of cand_runner.c, without its process), the
 * task the harness tests time (y = 2x on N floats) and the kernels they
 * share: for test_harness.c, test_harness_after.c and test_precision.c.
 */
#ifndef KL_TEST_FCAND_H
#define KL_TEST_FCAND_H

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "backend.h"
#include "harness.h"
#include "util.h"

#ifndef N
#define N 1024 /* the task's floats */
#endif

/* the task: x of N uniform floats in [-1, 1], y = 2x */
static inline void fcand_double_task(struct task *t)
{
	memset(t, 0, sizeof *t);
	t->zName = "double";
	t->nIn = t->nOut = 1;
	t->aIn[0] = (struct task_tensor){
	    .zName = "x", .dtype = KL_F32, .ndim = 2, .shape = {4, N / 4}, .dist = DIST_UNIFORM};
	t->aIn[0].a = -1;
	t->aIn[0].b = 1;
	t->aOut[0] =
	    (struct task_tensor){.zName = "y", .dtype = KL_F32, .ndim = 2, .shape = {4, N / 4}};
	for (int d = 0; d < TASK_NDTYPE; d++)
		t->aTol[d] = task_default_tol((kl_dtype)d);
}

/* its reference */
static inline int ref_double(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *s)
{
	(void)n_in, (void)n_out, (void)s;
	for (int64_t i = 0, n = kl_numel(&in[0]); i < n; i++)
		((float *)out[0].data)[i] = 2 * ((const float *)in[0].data)[i];
	return 0;
}

/* this thread's CPU time, s */
static inline double thread_cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* 2 ms of work on a CPU (however long a busy machine makes that take),
 * then right: as a real kernel's, its work is CPU time, which its CPU time
 * bounds */
static inline int slow_double(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *s)
{
	double t0 = thread_cpu_s();
	while (thread_cpu_s() - t0 < 0.002)
		ref_double(in, n_in, out, n_out, s);
	return 0;
}

/* the CPU time of the candidate's process: here the harness's own thread,
 * which calls kl_run; all of it is that thread too */
static inline int f_cpu(struct harness_cand *hc, double *pMain, double *pAll)
{
	struct timespec ts;
	(void)hc;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	*pMain = *pAll = (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
	return 0;
}

/* a candidate as the harness calls it, here in this process: kl_run on the
 * harness's shared buffers, mapped a second time; lie divides the times it
 * reports; wakeMs is what its process spends (on the CPU, outside the time
 * it reports) before answering a call for which the harness prepared a run
 * (new inputs), as a process or virtual CPU asleep meanwhile does */
struct fcand {
	struct harness_cand hc;
	kl_run_fn fn;
	struct backend *b;
	kl_tensor in[4], out[4];
	int nIn, nOut;
	double lie, wakeMs;
	double burstMs;   /* CPU spent before timed calls 2 and 3 of every 3
	                     (not frames), outside the time it reports: a burst
	                     of load that slows most runs */
	double batchSlow; /* CPU spent after each run of a batch, inside its
	                     timer: a machine slower during the batch than in
	                     the timed runs (its host took the virtual CPU) */
	int lieTimedOnly; /* lie divides the timed runs' reports, not the
	                     batch's: a runner that knows the batch request */
	int batchSkip;    /* the batch's runs after its first do nothing */
	double profMs;    /* a profiled run's time (HC_PROFILED: the Range Profiler's
	                     durations); < 0: the runner has no profiler */
	int profSkip;     /* a profiled run does no work (its outputs poisoned):
	                     a runner that tells profiled runs from the others */
	int profN;        /* > 0: a profiled run's kernels, profKms[] each (their sum
	                     its time), 1% over and under in turn */
	double profKms[HARNESS_PROF_KERNELS];
	int profOddEvery; /* > 0: every so many profiled runs launch one kernel more */
	int nProf;
	double strictLagMs; /* CPU spent inside the timer of a strict run (a probe,
	                       a device-wide run) ... */
	int strictLagRuns;  /* ... in the first so many (< 0: in every one) */
	int nStrict;
	int nTimed;
	unsigned char seen[64];
	/* the batch's ring as mapped (the runner's: cand_runner.c) */
	int slots;
	char *ring[2];
	size_t stride[2], ringOff[2][4];
};

/* spend ms of this thread's CPU time */
static inline void spin(double ms)
{
	struct timespec a, b;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
	do
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
	while ((double)(b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) * 1e-6 < ms);
}

static inline void f_wake(struct fcand *c)
{
	size_t n = c->in[0].data ? sizeof c->seen : 0;
	if (c->wakeMs <= 0 || !n || !memcmp(c->seen, c->in[0].data, n))
		return;
	memcpy(c->seen, c->in[0].data, n);
	spin(c->wakeMs);
}

static inline int f_call(struct harness_cand *hc, int mode, int *pRc, double *pMs, double *pMd,
                         char *why, size_t nWhy, char *err)
{
	struct fcand *c = (struct fcand *)hc;
	(void)why, (void)nWhy;
	f_wake(c);
	if (mode == HC_PROFILED) {
		/* as cand_runner.c's: no events, the durations or no time */
		*pRc = c->profSkip ? 0 : c->fn(c->in, c->nIn, c->out, c->nOut, NULL);
		*pMs = c->profMs >= 0 ? c->profMs : -1;
		*pMd = -1;
		hc->profKernels = c->profMs >= 0;
		for (int k = 0; k < HARNESS_PROF_KERNELS; k++)
			hc->profKernelMs[k] = k == 0 && c->profMs >= 0 ? c->profMs : -1;
		if (c->profN > 0) {
			int i = c->nProf++, odd = c->profOddEvery > 0 && i % c->profOddEvery == 0;
			double f = 1 + 0.01 * (i % 3 - 1), sum = 0;
			hc->profKernels = c->profN + odd;
			for (int k = 0; k < hc->profKernels; k++) {
				double d = k < c->profN ? c->profKms[k] * f : c->profKms[0];
				sum += d;
				if (k < HARNESS_PROF_KERNELS)
					hc->profKernelMs[k] = d;
			}
			*pMs = sum;
		}
		snprintf(hc->zProfNote, sizeof hc->zProfNote, "%s",
		         c->profMs >= 0 ? "" : "the runner has no Range Profiler (a test's)");
		return 0;
	}
	if (c->burstMs > 0 && mode != HC_UNTIMED && (c->nTimed++ % 3) != 0)
		spin(c->burstMs);
	if (mode != HC_UNTIMED && c->b->timer_start(c->b, err) < 0)
		return -1;
	if (mode == HC_STRICT && c->strictLagMs > 0 &&
	    (c->strictLagRuns < 0 || c->nStrict++ < c->strictLagRuns))
		spin(c->strictLagMs);
	*pRc = c->fn(c->in, c->nIn, c->out, c->nOut, NULL);
	if (mode != HC_UNTIMED && c->b->timer_stop(c->b, pMs, pMd, err) < 0)
		return -1;
	if (mode != HC_UNTIMED)
		*pMs /= c->lie, *pMd /= c->lie;
	return 0;
}

static inline int f_frame(struct harness_cand *hc, double *pMd, char *why, size_t nWhy, char *err)
{
	struct fcand *c = (struct fcand *)hc;
	double ms;
	(void)why, (void)nWhy;
	f_wake(c);
	return c->b->timer_start(c->b, err) < 0 ? -1 : c->b->timer_stop(c->b, &ms, pMd, err);
}

/* a batch (harness_cand.batch) as the runner's: n runs inside one start
 * and stop of the timer, the mean reported (divided by lie, as a call's) */
static inline int f_batch(struct harness_cand *hc, int mode, int n, double *pMs, double *pMd,
                          char *why, size_t nWhy, char *err)
{
	struct fcand *c = (struct fcand *)hc;
	(void)mode, (void)why, (void)nWhy;
	if (n > c->slots)
		return kl_err(err, "a batch of %d runs in a ring of %d slots", n, c->slots);
	if (c->b->timer_start(c->b, err) < 0)
		return -1;
	for (int i = 0; i < n; i++) {
		kl_tensor in[4], out[4];
		for (int k = 0; k < 2; k++)
			for (int t = 0; t < (k ? c->nOut : c->nIn); t++) {
				kl_tensor *d = k ? &out[t] : &in[t];
				*d = k ? c->out[t] : c->in[t];
				d->data = c->ring[k] + (size_t)i * c->stride[k] + c->ringOff[k][t];
			}
		if (!c->batchSkip || i == 0)
			c->fn(in, c->nIn, out, c->nOut, NULL);
		if (c->batchSlow > 0)
			spin(c->batchSlow);
	}
	if (c->b->timer_stop(c->b, pMs, pMd, err) < 0)
		return -1;
	double lie = c->lieTimedOnly ? 1 : c->lie;
	*pMs /= n * lie, *pMd /= n * lie;
	return 0;
}

/* kloop's own waits for a CPU: none, whatever the load of the machine the
 * test runs on (the candidate here runs in kloop's thread, so its runs'
 * waits would be kloop's) */
static inline double f_never_waits(struct harness_cand *hc)
{
	(void)hc;
	return 0;
}

static inline struct harness_cand *fcand(struct fcand *c, struct harness *h, struct backend *b,
                                         kl_run_fn fn)
{
	char err[KL_ERRLEN];
	struct harness_buf hb[HARNESS_MAX_BUFS];
	int n = harness_buffers(h, hb);
	memset(c, 0, sizeof *c);
	c->hc.call = f_call;
	c->hc.frame = f_frame;
	c->hc.own_delay = f_never_waits;
	c->fn = fn;
	c->b = b;
	c->lie = 1;
	c->profMs = -1;
	for (int i = 0; i < n; i++) {
		char *p = b->open_shared(b, &hb[i].sh, 0, err);
		if (hb[i].ring) {
			c->slots = hb[i].ring;
			c->ring[!hb[i].input] = p;
			c->stride[!hb[i].input] = hb[i].stride;
			continue;
		}
		c->ringOff[!hb[i].input][hb[i].input ? c->nIn : c->nOut] = hb[i].ringOff;
		kl_tensor *t = hb[i].input ? &c->in[c->nIn++] : &c->out[c->nOut++];
		*t = hb[i].t;
		t->data = p + hb[i].off;
	}
	return &c->hc;
}

static inline const char *status(cJSON *r)
{
	return cJSON_GetStringValue(cJSON_GetObjectItem(r, "status"));
}

static inline const char *reason(cJSON *r)
{
	return cJSON_GetStringValue(cJSON_GetObjectItem(r, "reason"));
}

#endif
