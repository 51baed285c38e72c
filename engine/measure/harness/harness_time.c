/*
 * harness_time.c - timing: each timed run on fresh inputs, a random few of
 * them checked; the warm-up, the method (stream or device-wide), the runs
 * until the median is stable, the clock bound on them, and the run after
 * timing (time_runs), for harness_eval, harness_time and harness_time_only.
 */
#include "harness_timing.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "util.h"

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

/*
 * Strict probes slower than the fast runs by more than launch noise mean the
 * candidate's work is not all on its stream (or it behaves differently when
 * the stream is busy): its time must be the strict one.  The noise allowed
 * is 15% and 5 us (the launches of a few kernels on an idle device: an
 * H200's 94_MSELoss, two kernels, probed 13.6-14.4 us beside 9.1 us of
 * events), but never more than half the fast runs' time and 1 us: a kernel
 * of a few microseconds on a stream of its own (own_stream.cu at the host
 * shapes: 4.1 us of probes beside 1.25 us of events on an empty stream, a
 * false 5x win over the seed) is within 5 us of anything: on the GPU, where
 * the fast runs take under 11 us.  (A single kernel's probes read within 0.5
 * us of its events on an H200.  The host's probes of a microsecond run
 * vary by more than that on a loaded VM, and its work has no other stream.)
 */
int harness_probes_disagree(double probe, double fast, int onGpu)
{
	double a = 0.15 * fast + 0.005, b = 0.5 * fast + 0.001;
	return probe > fast + (onGpu && b < a ? b : a);
}

/* what the fast runs and the probes read when the probes disagreed (the
 * profiled runs may hold the one against its kernels: harness_profiled.c) */
static void strict_from(struct timing *tg)
{
	tg->fastMed = harness_median(&tg->ms);
	tg->strictProbe = harness_median(&tg->probe);
}

static void timing_free(struct timing *tg)
{
	if (!tg)
		return;
	struct samples *all[] = {&tg->ms,      &tg->probe, &tg->wall,    &tg->busys, &tg->near,
	                         &tg->preps,   &tg->cpus,  &tg->nearCpu, &tg->fOwn,  &tg->fTwin,
	                         &tg->fOwnCpu, &tg->kclk,  &tg->prof,    &tg->profKv};
	for (size_t i = 0; i < sizeof all / sizeof *all; i++)
		free(all[i]->a);
	free(tg);
}

void harness_drop_timing(struct harness *h)
{
	timing_free(h->cont);
	h->cont = NULL;
}

/* the counted runs start (again): none counted, the clock read */
static void timing_restart(struct harness *h, struct timing *tg)
{
	struct samples *counted[] = {&tg->ms,   &tg->wall,  &tg->busys, &tg->near,    &tg->preps,
	                             &tg->fOwn, &tg->fTwin, &tg->cpus,  &tg->nearCpu, &tg->fOwnCpu};
	for (size_t i = 0; i < sizeof counted / sizeof *counted; i++)
		counted[i]->n = 0;
	tg->clk0 = h->b->clock_mhz ? h->b->clock_mhz(h->b) : -1;
	tg->converged = 0;
	tg->sum = tg->sum2 = 0;
	tg->rse = INFINITY;
	tg->start = now_s();
	tg->n = 0;
}

/*
 * A new timing: the empty frames (unless the runner's starter took them
 * before the load: a candidate called in this process, in the unit tests),
 * then the warm-up, with strict probes in between, which decides the
 * method.  0, -1 + err, or HC_* + why.
 */
static int timing_warm(struct harness *h, struct timing *tg, char *why, size_t nWhy, char *err)
{
	struct harness_cand *c = tg->c;
	int crc;
	h->runSeed = harness_runs_take(h); /* and h->timingSeed */
	h->nChecked = h->nAfter = 0;
	h->afterS = 0;
	h->nRuns = 0;
	h->pCheck = 0.25;
	if (!c->nPreFrame && (crc = harness_preload(h, c, why, nWhy, err)))
		return crc;
	if (harness_prepare(h, h->o.nTrials, err) < 0)
		return -1;
	tg->cal = isnan(c->preCal) ? 0 : c->preCal;
	tg->start = now_s();
	while (tg->warm < 6 || (now_s() - tg->start < h->o.warmupS && tg->warm < 1000) ||
	       ((!tg->ms.n || !tg->probe.n) && tg->warm < 1000)) {
		int st = tg->warm % 2, rc;
		double t, w;
		if ((crc = harness_timed_run(h, c, st, tg->cal, &t, &w, NULL, NULL, &rc, why, nWhy,
		                             err)))
			return crc;
		if (rc) {
			harness_returned(c, rc, " during warm-up", why, nWhy);
			return HC_MISBEHAVED;
		}
		if (!h->lastVaried)
			harness_push(st ? &tg->probe : &tg->ms, t);
		tg->warm++;
	}
	tg->strict =
	    harness_probes_disagree(harness_median(&tg->probe), harness_median(&tg->ms), gpu(h));
	if (tg->strict)
		strict_from(tg);
	tg->perRun = (now_s() - tg->start) / tg->warm;
	spread_checks(h, tg->perRun);
	return 0;
}

/* count one run (time t, round trip w, busy and CPU time): 1 when the
 * timing stops here (the median stable, or the runs or the budget spent) */
static int timing_add(struct harness *h, struct timing *tg, double t, double w, double busy,
                      double cpu, harness_progress_fn progress, void *arg)
{
	harness_push(&tg->ms, t);
	harness_push(&tg->wall, w);
	harness_push(&tg->busys, busy);
	harness_push(&tg->near, tg->nearFrame);
	harness_push(&tg->cpus, cpu);
	harness_push(&tg->nearCpu, tg->nearCpuFrame);
	harness_push(&tg->preps, h->lastPrepMs);
	tg->sum += t;
	tg->sum2 += t * t;
	int k = (int)tg->ms.n;
	if (k >= 2) {
		double mean = tg->sum / k, var = (tg->sum2 - k * mean * mean) / (k - 1);
		tg->rse = var > 0 && mean > 0 ? sqrt(var / k) / mean : 0;
	}
	if (progress && (k % 16) == 0)
		progress("timing", k, arg);
	if (k >= h->o.minRuns && tg->rse <= h->o.rse) {
		tg->converged = 1;
		return 1;
	}
	return k >= h->o.maxRuns || (k >= 3 && now_s() - tg->start > h->o.budgetS);
}

/* the counted runs, until timing_add() stops them: 0, -1 + err, or HC_* + why */
static int timing_count(struct harness *h, struct timing *tg, harness_progress_fn progress,
                        void *arg, char *why, size_t nWhy, char *err)
{
	struct harness_cand *c = tg->c;
	for (;;) {
		/* every fourth run of the fast method, a strict probe (not counted);
		 * before every fourth from the first, an empty frame for the clock's
		 * bound on the twin (the runs after it are measured against it) */
		if (tg->n % 4 == 0) {
			double twinFrame;
			tg->nearFrame =
			    harness_frame_for(h, c, tg->n, &twinFrame, &tg->nearCpuFrame);
			harness_push(&tg->fOwn, tg->nearFrame);
			harness_push(&tg->fTwin, twinFrame);
			harness_push(&tg->fOwnCpu, tg->nearCpuFrame);
		}
		int probe = !tg->strict && tg->n % 4 == 3, rc, crc;
		double t, w, busy = 0, cpu = NAN;
		if (probe)
			crc = harness_timed_run(h, c, 1, tg->cal, &t, &w, NULL, NULL, &rc, why,
			                        nWhy, err);
		else
			crc = harness_timed_run(h, c, tg->strict, tg->cal, &t, &w, &busy, &cpu, &rc,
			                        why, nWhy, err);
		if (crc)
			return crc;
		if (probe && !rc && !h->lastVaried)
			harness_push(&tg->probe, t);
		if (rc) {
			char at[40];
			snprintf(at, sizeof at, " during timed run %d", tg->n + 1);
			harness_returned(c, rc, at, why, nWhy);
			return HC_MISBEHAVED;
		}
		tg->n++;
		if (!probe && !h->lastVaried && timing_add(h, tg, t, w, busy, cpu, progress, arg))
			return 0;
	}
}

/* the clock bound on the counted runs: tg->inc, and why in tg->bound */
static void timing_bound(struct harness *h, struct timing *tg)
{
	struct harness_cand *c = tg->c;
	tg->bound[0] = 0;
	/* threads that outlive kl_run: their CPU time beside the frames and
	 * the runs is no bound */
	tg->left = c->threads_left && !c->trusted ? c->threads_left(c) : 0;
	tg->byCpu = 0;
	int cpuOk = !gpu(h) && harness_cpu_all_known(h, c) && tg->left == 0;
	tg->inc = c->trusted ? 0
	                     : harness_timing_inconsistent(
	                           &tg->ms, &tg->wall, &tg->busys, &tg->near, &tg->cpus,
	                           &tg->nearCpu, tg->left > 0 ? HARNESS_CPU_NO_BOUND : cpuOk,
	                           &tg->byCpu, &tg->paired, tg->bound, sizeof tg->bound);
	/* frames the candidate lengthened prove nothing (a liar still called
	 * inconsistent with them is one) */
	if (tg->inc != 1 && !c->trusted &&
	    harness_frames_lengthened(c, &tg->fOwn, &tg->fTwin, &tg->fOwnCpu, cpuOk, tg->bound,
	                              sizeof tg->bound))
		tg->inc = 2, tg->byCpu = 0;
	/* a runner a profiler is injected into is not confined: nothing keeps
	 * the candidate from its timer */
	if (tg->inc != 1 && !c->trusted && c->unconfined) {
		tg->inc = 2, tg->byCpu = 0;
		snprintf(
		    tg->bound, sizeof tg->bound,
		    "unverified: the runner was not confined (a profiler is injected into it), "
		    "so nothing kept the candidate from its timer");
	}
}

/*
 * What the clock bound cannot see, once it held or could not be applied:
 * the GPU kept busy between calls, and threads that outlive kl_run, whose
 * time is then kloop's own clock's (tg->byClock: the counted times are
 * tg->kclk, their sums and rse recomputed).
 */
static void timing_unseen(struct harness *h, struct timing *tg)
{
	struct harness_cand *c = tg->c;
	/* the GPU busy while kloop prepared the runs: the candidate's context
	 * kept working between calls (a kernel left running by a runner that
	 * the candidate took over, which did not synchronize), and whatever it
	 * did there is in no round trip kloop times.  Contexts share the GPU by
	 * time slices, so kloop's own copies and flush wait for it */
	if (tg->inc != 2 && !c->trusted &&
	    harness_gpu_busy_between(h, c, &tg->preps, tg->bound, sizeof tg->bound))
		tg->inc = 2;
	free(tg->preps.a);
	tg->preps = (struct samples){0};
	/* threads that outlive kl_run: the time is kloop's clock's */
	int left = tg->left;
	tg->byClock = 0;
	if (left > 0 && tg->inc != 2 && gpu(h)) {
		/* on the GPU kloop's clock is no time to report: its frames are
		 * longer than the runs' own overhead (a 0.095 ms softmax came to
		 * 0.049 ms by it on an H200) */
		snprintf(tg->bound, sizeof tg->bound,
		         "the clock bound was not applied: %d thread%s of the candidate outlived "
		         "kl_run, and on the GPU work such a thread starts between kloop's request "
		         "and the runner's start event is in no time the runner reports",
		         left, left == 1 ? "" : "s");
		tg->inc = 2;
	} else if (left > 0 && tg->inc != 2) {
		harness_clock_times(&tg->busys, &tg->near, &tg->kclk);
		tg->byClock = tg->kclk.n >= 3 && tg->kclk.n * 3 >= tg->ms.n;
		if (!tg->byClock) {
			snprintf(
			    tg->bound, sizeof tg->bound,
			    "the clock bound was not applied: %d thread%s of the candidate "
			    "outlived "
			    "kl_run, so its time is kloop's own clock's, and only %zu of %zu runs "
			    "could be measured by it",
			    left, left == 1 ? "" : "s", tg->kclk.n, tg->ms.n);
			tg->inc = 2;
		}
	}
	if (tg->byClock) {
		const struct samples *S = &tg->kclk;
		int n = (int)S->n;
		tg->sum = tg->sum2 = 0;
		for (int i = 0; i < n; i++)
			tg->sum += S->a[i], tg->sum2 += S->a[i] * S->a[i];
		double mean = tg->sum / n, var = n > 1 ? (tg->sum2 - n * mean * mean) / (n - 1) : 0;
		tg->rse = var > 0 && mean > 0 ? sqrt(var / n) / mean : 0;
	}
}

/* the p90 - p10 spread of the known samples of s, or NAN below 3 */
static double spread_of(const struct samples *s)
{
	struct samples k = {0};
	harness_known_of(s, NULL, &k);
	double v = NAN;
	if (k.n >= 3) {
		qsort(k.a, k.n, sizeof *k.a, harness_cmp_double);
		v = harness_pct(k.a, (int)k.n, 0.9) - harness_pct(k.a, (int)k.n, 0.1);
	}
	free(k.a);
	return v;
}

/* kloop's own L2 flush on the GPU, ms: the host's launch work that a timed
 * run hides behind the runner's flush (harness_batch_inconsistent's allow);
 * 0 on the host, whose timed runs only start colder than the batch's */
static double flush_ms(struct harness *h)
{
	struct backend *b = h->b;
	double ms = 0, md = 0;
	char err[KL_ERRLEN];
	if (!gpu(h))
		return 0;
	if (b->sync(b, err) < 0 || b->timer_start(b, err) < 0 || b->flush(b, err) < 0 ||
	    b->timer_stop(b, &ms, &md, err) < 0)
		return 0.1; /* unknown: more than an H200's (0.03 ms) */
	return ms;
}

/* one line of JSON on what the bounds saw (step: "bound" or "batch", inc
 * its outcome) appended to the file KLOOP_BOUND_TRACE names, where set:
 * what bench/batch_parts.sh reads to see each part of the bounds' model */
static void trace_samples(FILE *f, const char *k, const struct samples *s)
{
	fprintf(f, ",\"%s\":[", k);
	for (size_t i = 0; i < s->n; i++)
		fprintf(f, "%s%.6g", i ? "," : "", isfinite(s->a[i]) ? s->a[i] : -1.0);
	fputc(']', f);
}

static void timing_trace(const struct harness *h, const struct timing *tg, const char *step,
                         int inc)
{
	const char *z = getenv("KLOOP_BOUND_TRACE");
	FILE *f = z && *z ? fopen(z, "ae") : NULL;
	if (!f)
		return;
	fprintf(f, "{\"step\":\"%s\",\"inc\":%d,\"gpu\":%d,\"strict\":%d,\"paired\":%d", step, inc,
	        gpu(h), tg->strict, tg->paired);
	trace_samples(f, "ms", &tg->ms);
	trace_samples(f, "wall", &tg->wall);
	trace_samples(f, "busy", &tg->busys);
	trace_samples(f, "near", &tg->near);
	trace_samples(f, "cpu", &tg->cpus);
	trace_samples(f, "near_cpu", &tg->nearCpu);
	const struct batch *b = &tg->bt;
	if (b->n > 0)
		fprintf(f,
		        ",\"batch\":{\"n\":%d,\"rep\":%.6g,\"cpu\":%.6g,\"wall\":%.6g,"
		        "\"busy\":%.6g,\"twin_busy\":%.6g,\"tries\":%d}",
		        b->n, b->rep, isfinite(b->cpu) ? b->cpu : -1.0, b->wall,
		        isfinite(b->busy) ? b->busy : -1.0,
		        isfinite(b->twinBusy) ? b->twinBusy : -1.0, b->tries);
	fputs("}\n", f);
	fclose(f);
}

/*
 * The batch bound (harness_batch.c), once the clock bound held: a batch of
 * about 20 ms of runs in one request and the twin's empty ones beside it.
 * A batch that holds decides.  A liar is one at every moment: a report
 * below what kloop measured of the same batch, in each of three batches
 * (the third after a wait for the machine to calm: a burst of load can
 * fill two back to back), is incorrect.  Any other outcome leaves the
 * time unverified: a batch whose waits could not be placed, or a timed
 * median below a batch of another moment, which load can explain (issue
 * 35: an honest host candidate's batch ran at 1.3 to 1.8 times its timed
 * median on the loaded 2-core VM, three batches in a row, and was called
 * a liar).  On the host, where each timed run was bounded by its own CPU
 * time (tg->paired), the timed median is not held to the batch at all.
 * 0, -1 + err, or HC_* + why.
 */
/* the pause before the third batch, us, and the longest wait for the
 * machine after it, s */
#define BATCH_PAUSE_US 250000
#define BATCH_CALM_S 2.0
static int timing_batch(struct harness *h, struct timing *tg, char *why, size_t nWhy, char *err)
{
	struct harness_cand *c = tg->c;
	struct samples kc = {0}, kf = {0};
	harness_clock_times(&tg->busys, &tg->near, &kc);
	double timedMed = harness_median(&tg->ms),
	       run = fmax(timedMed, kc.n ? harness_median(&kc) : 0);
	harness_known_of(&tg->fOwn, NULL, &kf);
	double frame = kf.n ? harness_median(&kf) : harness_pre_median(c);
	free(kc.a);
	free(kf.a);
	if (isnan(frame))
		frame = 0;
	/* the jitter of two round trips: twice the spread of the twin's frames
	 * (or the runner's own), at most twice a whole frame (two round trips
	 * differ by less than one takes: on the loaded 2-core VM the frames'
	 * spread was 17 ms, which left no bound, their median 0.04 ms) */
	double sp = spread_of(&tg->fTwin);
	if (isnan(sp))
		sp = spread_of(&tg->fOwn);
	struct samples kt = {0};
	harness_known_of(&tg->fTwin, NULL, &kt);
	double whole = kt.n ? harness_median(&kt) : frame;
	free(kt.a);
	tg->jitter = 2 * (isnan(sp) ? whole : fmin(sp, whole)) + 0.02;
	double allow = flush_ms(h);
	struct samples fc = {0};
	harness_known_of(&tg->fOwnCpu, NULL, &fc);
	double frameCpu = fc.n ? harness_median(&fc) : NAN;
	free(fc.a);
	int n = harness_batch_runs(run, gpu(h)), nLiar = 0, nTry = 0;
	char wLiar[600] = "", wOther[600] = "";
	/* each run of the batch has a slot of the ring: at most so many */
	if (n > h->nRing)
		n = h->nRing;
	if (n < 1) {
		snprintf(tg->bound, sizeof tg->bound,
		         "the batch bound was not applied: no memory for its ring (a run's inputs "
		         "and outputs of its own for each run)");
		tg->inc = 2;
		return 0;
	}
	for (;;) {
		char w[600];
		int rc = harness_batch_take(h, c, tg->strict, n, frame, frameCpu, &tg->bt, why,
		                            nWhy, err);
		if (rc)
			return rc;
		nTry++;
		int inc = harness_batch_inconsistent(
		    &tg->bt, tg->jitter, tg->paired ? NAN : timedMed, allow, w, sizeof w);
		timing_trace(h, tg, "batch", inc);
		if (inc == 0)
			return 0;
		snprintf(inc == 1 ? wLiar : wOther, sizeof wLiar, "%s", w);
		nLiar += inc == 1;
		/* this call's batches decide (tg->bt.tries counts every batch
		 * of the timing, for its JSON and its inputs' seeds) */
		if (nTry < 2)
			continue;
		/* a third, once the machine allows: two batches back to back fall
		 * into one burst of a neighbour's load (on the 2-core VM an honest
		 * 10 ms matmul ran 17.5 ms a run in both, against a median of 10.3
		 * over its timed runs); a liar is one at any moment */
		if (nTry < 3) {
			usleep(BATCH_PAUSE_US);
			harness_wait_calm(BATCH_CALM_S);
			continue;
		}
		if (nLiar == nTry) {
			snprintf(
			    why, nWhy,
			    "%s (so in each of %d batches: a wait or a slower CPU lengthens what "
			    "the runner reports as much as kloop's measure of the same batch, so "
			    "load does not explain it)",
			    wLiar, nTry);
			return HC_MISBEHAVED;
		}
		snprintf(tg->bound, sizeof tg->bound, "%.200s%s", wOther[0] ? wOther : wLiar,
		         gpu(h) ? "; on the GPU the clock bound cannot resolve a run without it"
		                : "");
		tg->inc = 2;
		return 0;
	}
}

/*
 * A full timing checks at least two checking sets where it has them (issue
 * 37): the first is a plain draw, the second varied (harness_vary_of), so
 * that a candidate that does its work only on inputs of one kind is checked
 * on the other too.  Where the counted runs drew fewer (each is checked at
 * random, and at a long run's few a timing can draw one), more timed runs
 * follow, to the candidate like any other, their times not counted.
 * 0, -1 + err, or HC_* + why.
 */
#define TIMING_MIN_CHECKED 2
static int timing_checks(struct harness *h, struct timing *tg, char *why, size_t nWhy, char *err)
{
	int want = h->nPool < TIMING_MIN_CHECKED ? h->nPool : TIMING_MIN_CHECKED;
	while (!h->quick && h->poolUsed < want) {
		double keep = h->pCheck, t, w;
		int rc;
		h->pCheck = 1;
		int crc = harness_timed_run(h, tg->c, tg->strict, tg->cal, &t, &w, NULL, NULL, &rc,
		                            why, nWhy, err);
		h->pCheck = keep;
		if (crc)
			return crc;
		if (rc) {
			harness_returned(tg->c, rc, " during a timed run", why, nWhy);
			return HC_MISBEHAVED;
		}
	}
	return 0;
}

/* one more run, as the timed ones but on the timing set, whose output must
 * be right, with nothing trampled: 0, -1 + err, or HC_* + why */
static int run_after_timing(struct harness *h, struct harness_cand *c, char *why, size_t nWhy,
                            char *err)
{
	struct backend *b = h->b;
	int T = h->o.nTrials, rc, crc;
	if (harness_prepare(h, T, err) < 0 || b->flush(b, err) < 0)
		return -1;
	harness_evict(h);
	if ((crc = harness_call(c, &rc, why, nWhy, err)))
		return crc;
	if (rc) {
		harness_returned(c, rc, " after the timed runs", why, nWhy);
		return HC_MISBEHAVED;
	}
	int bad = harness_check_guards(h, why, nWhy, err);
	if (bad == 0)
		bad = harness_check_inputs(h, T, why, nWhy, err);
	if (bad == 0) {
		struct agg a = {.tolDtype = -1};
		bad = harness_check_outputs(h, T, &a, why, nWhy, "the run after timing", err);
	}
	if (bad == 0 && h->judge && h->judgeOps->after_timing &&
	    h->judgeOps->after_timing(h->judge, h, err) < 0)
		bad = -1;
	return bad < 0 ? -1 : bad ? HC_MISBEHAVED : 0;
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
	struct timing *tg = h->cont;
	int crc;
	double t0 = now_s();
	const char *q = h->quick ? "quick" : "full";
	char step[64];
#define STEP(w)                                                                                    \
	(snprintf(step, sizeof step, "%s timing: %s", q, (w)), step_trace(step, t0), t0 = now_s())
	*pBad = 0;
	h->cont = NULL;
	/* every run of this timing on fresh inputs may be one checked after
	 * its call, as many checked whatever their number */
	harness_after_begin(h, 1);
	if (tg && tg->c == c && !h->quick && !tg->strict) {
		/* the full timing goes on from the quick one: warm, calibrated, its
		 * runs counted and its budget begun; the checking sets it did not
		 * use spread over the runs left.  Not from a quick timing that went
		 * device-wide: its few probes came right after the object's load
		 * (lazy module loading, first touches), and the full timing's own
		 * warm-up decides the method again */
		tg->converged = 0;
		spread_checks(h, tg->perRun);
		crc = harness_prepare(h, h->o.nTrials, err) < 0 ? -1 : 0;
	} else {
		timing_free(tg);
		tg = xcalloc(1, sizeof *tg);
		tg->c = c;
		tg->nearFrame = tg->nearCpuFrame = tg->fastMed = tg->strictProbe = NAN;
		crc = timing_warm(h, tg, why, nWhy, err);
		if (!crc)
			timing_restart(h, tg);
	}
	STEP("warm-up");
	while (!crc) {
		if ((crc = timing_count(h, tg, progress, arg, why, nWhy, err)))
			break;
		tg->probeMed = harness_median(&tg->probe);
		if (!tg->strict &&
		    harness_probes_disagree(tg->probeMed, harness_median(&tg->ms), gpu(h))) {
			tg->strict = 1;
			strict_from(tg);
			timing_restart(h, tg);
			continue;
		}
		timing_bound(h, tg);
		timing_trace(h, tg, "bound", tg->inc);
		/* a burst of noise on a busy machine can look like this once; a
		 * process that lies about its time does it every time.  A bound
		 * that could not be applied is tried twice more (load comes and
		 * goes), and one that still cannot leaves the time unverified */
		if (tg->inc && tg->retimed++ < (tg->inc == 2 ? 2 : 1)) {
			timing_restart(h, tg);
			continue;
		}
		if (tg->inc == 1) {
			snprintf(why, nWhy, "%s", tg->bound);
			crc = HC_MISBEHAVED;
		}
		break;
	}
	STEP("counted runs");
	if (!crc)
		crc = timing_checks(h, tg, why, nWhy, err);
	STEP("checks");
	if (!crc)
		crc = harness_timing_profiled(h, tg, why, nWhy, err);
	STEP("profiled runs");
	const struct harness_cand *who;
	if (!crc)
		crc = harness_after_end(h, &who, why, nWhy, err);
	STEP("checked after");
	if (!crc) {
		timing_unseen(h, tg);
		/* the batch bound: the full timing's, of a time the clock bound
		 * held and the runner's reports are the time of */
		if (!h->quick && !c->trusted && c->batch && tg->inc == 0 && !tg->byClock)
			crc = timing_batch(h, tg, why, nWhy, err);
	}
	if (!crc) {
		tg->clk1 = b->clock_mhz ? b->clock_mhz(b) : -1;
		tg->thr[0] = 0;
		tg->throttled = b->throttled ? b->throttled(b, tg->thr, sizeof tg->thr) : -1;
		/* the run after timing is the full timing's: its input once */
		STEP("batch");
		if (!h->quick)
			crc = run_after_timing(h, c, why, nWhy, err);
		STEP("run after timing");
	}
#undef STEP
	if (crc) {
		*pBad = crc > 0 ? crc : 0;
		timing_free(tg);
		return NULL;
	}
	cJSON *o = harness_timing_json(h, tg);
	free(tg->kclk.a);
	tg->kclk = (struct samples){0};
	if (h->quick)
		h->cont = tg; /* kept for the full timing of the same candidate */
	else
		timing_free(tg);
	return o;
}

/*
 * time_runs under the options of one cascade stage: nQuick > 0 runs exactly
 * that many timed runs after a short warm-up (the quick timing), 0 the full
 * timing.  The timing object, or NULL with *pFail the verdict of the
 * failure (crashed, incorrect: a checked run or the run after timing).
 */
cJSON *harness_time(struct harness *h, struct harness_cand *c, int nQuick,
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
	h->judged = c;
	int isBad;
	cJSON *tm = time_runs(h, c, progress, arg, &isBad, why, sizeof why, err);
	h->o = keep;
	h->quick = 0;
	h->judged = NULL;
	*pFail = NULL;
	if (tm) {
		if (nQuick > 0)
			cJSON_AddBoolToObject(tm, "quick", 1);
		return tm;
	}
	struct agg a = {.tolDtype = -1};
	if (isBad == HC_CRASHED)
		*pFail = harness_called_verdict(h, isBad, "timing", why, err, &a);
	else if (isBad)
		*pFail = verdict_new(STATUS_INCORRECT, why);
	else
		*pFail = harness_crashed(h, "timing", err);
	return NULL;
}

cJSON *harness_time_only(struct harness *h, struct harness_cand *c, char *err)
{
	char why[1024];
	int bad;
	h->poolUsed = 0;
	h->nTimed = 0;
	cJSON *tm = time_runs(h, c, NULL, NULL, &bad, why, sizeof why, err);
	if (!tm && bad)
		kl_err(err, "the reference misbehaved while timed: %s", why);
	return tm;
}
