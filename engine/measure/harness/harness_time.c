/*
 * harness_time.c - timing: each timed run on fresh inputs, a random few of
 * them checked; the warm-up, the method (stream or device-wide), the runs
 * until the median is stable, the clock bound on them, and the run after
 * timing (time_runs), for harness_eval, harness_time and harness_time_only.
 */
#include "harness_priv.h"

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
 * One timed run.  Fast: the flush is still running on the stream when the
 * start event is queued behind it, so the kernel starts as the event fires,
 * and the time is the stream's end event.  Strict: the device is idle at the
 * start, and the time runs to a device-wide synchronize, less the calibrated
 * frame: work on any stream counts, and none of it can hide behind ours.
 */
static int timed_run(struct harness *h, struct harness_cand *c, int mode, double cal, double *pT,
                     double *pW, double *pBusy, double *pCpu, int *pRc, char *why, size_t nWhy,
                     char *err)
{
	int strict = mode == HC_STRICT;
	double ms, md, m0, a0, m1, a1;
	/* fresh inputs for every timed run, so that remembering an earlier
	 * answer does not pay (given inputs, e.g. PyTorch's, are mixed afresh
	 * from two of their sets: no two runs see the same bytes either); by
	 * chance, a checking set's, never seen before in this evaluation,
	 * whose outputs are then checked: the candidate cannot tell which */
	h->nRuns++;
	h->nTimed++;
	int chk = -1;
	uint64_t seed = h->runSeed ^ (h->nRuns * 0x9e3779b97f4a7c15ull);
	if (h->poolUsed < h->nPool && harness_uniform() < h->pCheck)
		chk = h->o.nTrials + 1 + h->poolUsed++;
	h->lastSeed = seed;
	h->lastChk = chk;
	if (harness_prepare_run(h, chk, seed, err) < 0)
		return -1;
	/* a checking set's inputs are varied: the run is checked, but its
	 * time is not counted (the softmax seed ran 15% slower on them) */
	h->lastVaried = chk >= 0 && harness_vary_of(h, chk) != 0;
	/* the waits for a CPU are read inside kloop's clock: a wait just
	 * outside it would count against the run and could make it look
	 * shorter than the candidate's own time */
	harness_cpu_read(h, c, &m0, &a0);
	int sure, s1;
	double t0 = now_s(), d0 = harness_run_delay(c, &sure);
	int rc = c->call(c, mode, pRc, &ms, &md, why, nWhy, err);
	double d1 = harness_run_delay(c, &s1);
	*pW = (now_s() - t0) * 1e3;
	settle(c);
	if (pBusy)
		*pBusy = harness_busy_of(*pW, d0, d1, sure);
	if (pCpu) {
		harness_cpu_read(h, c, &m1, &a1);
		*pCpu = harness_cpu_delta(m0, a0, m1, a1);
	}
	if (rc)
		return rc;
	*pT = strict ? (md - cal > 0 ? md - cal : 0) : ms;
	if (*pRc)
		return 0;
	/* fresh inputs: kept for a check or not as kloop decides now, after
	 * the call */
	if (chk < 0)
		return harness_after_run(h, c, seed, why, nWhy, err);
	/* a checked run: nothing trampled, the inputs as given, the outputs right */
	char w[900], when[96];
	h->nChecked++;
	snprintf(when, sizeof when, "timed run %llu%s", (unsigned long long)h->nTimed,
	         harness_vary_words(h, chk));
	int bad = harness_check_guards(h, w, sizeof w, err);
	if (bad == 0)
		bad = harness_check_inputs(h, chk, w, sizeof w, err);
	if (bad > 0)
		snprintf(why, nWhy, "%s: %s", when, w);
	if (bad == 0) {
		struct agg a = {.tolDtype = -1};
		bad = harness_check_outputs(h, chk, &a, why, nWhy, when, err);
	}
	/* and its precision, as the trials' (the checking sets have float64
	 * outputs too): reduced precision in the timed runs alone is seen */
	if (bad == 0 && h->judged == c && h->judge && h->judgeOps->checked &&
	    h->judgeOps->checked(h->judge, h, chk, (unsigned long long)h->nTimed, err) < 0)
		bad = -1;
	return bad < 0 ? -1 : bad ? HC_MISBEHAVED : 0;
}

int harness_timed_run(struct harness *h, struct harness_cand *c, int strict, double cal, double *pT,
                      double *pW, double *pBusy, double *pCpu, int *pRc, char *why, size_t nWhy,
                      char *err)
{
	return timed_run(h, c, strict ? HC_STRICT : HC_FAST, cal, pT, pW, pBusy, pCpu, pRc, why,
	                 nWhy, err);
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
 * One timing of a candidate: time_runs()'s whole state, which its steps
 * work on.  A quick timing leaves it in h->cont, and the full timing of the
 * same candidate goes on from there (warm, calibrated, its runs counted
 * and its budget begun).
 */
struct timing {
	struct harness_cand *c; /* whose */
	struct samples ms;      /* each counted run's time, ms (the candidate's) */
	struct samples probe;   /* each strict probe's (not counted) */
	struct samples wall;    /* each counted run's round trip by kloop's clock, ms */
	struct samples busys;   /* its busy time (harness_busy_of; NAN: unknown) */
	struct samples near;    /* the empty frame before it (harness_frame_for) */
	struct samples preps;   /* kloop's preparation of it, ms */
	struct samples cpus;    /* its CPU time (harness_cpu_delta) */
	struct samples nearCpu; /* that of the frame before it */
	struct samples fOwn;    /* each frame, the runner's own */
	struct samples fTwin;   /* and the clock's twin's beside it */
	struct samples fOwnCpu; /* the CPU time of the runner's own */
	struct samples kclk;    /* kloop's own clock's times (harness_clock_times) */
	double cal;             /* the calibrated strict frame, ms */
	double nearFrame;       /* the last empty frame, ms (NAN: unknown) */
	double nearCpuFrame;    /* its CPU time */
	double sum, sum2, rse;  /* of the counted times; their relative standard error */
	double start;           /* when the warm-up, then the counted runs, began (now_s) */
	double perRun;          /* seconds a warm-up run took */
	double probeMed;        /* the median strict probe, ms */
	int warm;               /* warm-up runs */
	int strict;             /* timed device-wide (the probes disagreed) */
	int n;                  /* runs since the counted runs began, probes included */
	int converged;          /* stopped at the target rse */
	int retimed;            /* times the counted runs were taken again for the bound */
	int clk0, clk1;         /* the SM clock before and after, MHz (-1: unknown) */
	int left;               /* threads of the candidate that outlived kl_run */
	int inc;                /* the clock bound: 0 held, 1 inconsistent, 2 not applied */
	int byCpu;              /* bounded by CPU time rather than the clock */
	int paired;             /* each run bounded by its own CPU time (harness_paired_cpu) */
	int byClock;            /* timed by kloop's own clock (kclk) */
	char bound[300];        /* why the bound failed or was not applied */
	int throttled;          /* the backend's throttling (-1: unknown) */
	char thr[256];          /* and why */
	struct batch bt;        /* the batch bound's batch (harness_batch.c) */
	double jitter;          /* the jitter of two round trips it allowed, ms */
	struct samples prof;    /* the profiled runs' times, ms (timing_profiled) */
	int profAsked;          /* profiled runs were asked for (h->o.profiledRuns) */
	int profUsed;           /* their median is the timing's */
	int profChecked;        /* of them, checked */
	char profWhy[300];      /* why not, where asked */
};

static void timing_free(struct timing *tg)
{
	if (!tg)
		return;
	struct samples *all[] = {&tg->ms,      &tg->probe, &tg->wall,    &tg->busys, &tg->near,
	                         &tg->preps,   &tg->cpus,  &tg->nearCpu, &tg->fOwn,  &tg->fTwin,
	                         &tg->fOwnCpu, &tg->kclk,  &tg->prof};
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
	h->runSeed = harness_random64();
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
	tg->strict = probes_disagree(harness_median(&tg->probe), harness_median(&tg->ms));
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

/* the most a launch adds to a run's events over its kernels' durations: on
 * an H200 1.4 to 2.9 us (bench/gpu/rangeprof.sh), for an empty kernel too */
#define PROF_LAUNCH_MS 0.004

/*
 * The profiled runs (issue 39; KLOOP_CUPTI=range sets h->o.profiledRuns):
 * after a fast timing that kloop's clock bounded, that many more runs on
 * fresh inputs, as the timed ones (a checking set's at random, the others
 * kept for a check after their call alike), each timed by its kernels' own
 * durations, gpu__time_duration (Nsight Compute's metric, through CUPTI's
 * Range Profiler, cupti_range.cu).  Their median is the timing's where it
 * agrees with the bounded one, the events': not longer (a kernel's duration
 * is inside the events around it), and not shorter by more than a launch's
 * time and a tenth (a run whose time lies outside its kernels, a host's
 * work before or between them, keeps its events').  Otherwise, or where the
 * runner has no profiler, the events' median stands and tg->profWhy says
 * why.  A profiled run that is wrong is the verdict, as a timed run's.
 */
static int timing_profiled(struct harness *h, struct timing *tg, char *why, size_t nWhy, char *err)
{
	tg->prof.n = 0;
	tg->profUsed = 0;
	tg->profChecked = 0;
	tg->profWhy[0] = 0;
	tg->profAsked = h->o.profiledRuns > 0 && !h->quick;
	if (!tg->profAsked)
		return 0;
	if (tg->strict) {
		snprintf(tg->profWhy, sizeof tg->profWhy,
		         "timed device-wide (its work is not all on its stream): its kernels' "
		         "durations are not its time");
		return 0;
	}
	if (tg->inc || tg->byClock) {
		snprintf(tg->profWhy, sizeof tg->profWhy,
		         "its time was not bounded by kloop's clock: nothing to hold the profiled "
		         "runs against");
		return 0;
	}
	struct harness_cand *c = tg->c;
	for (int i = 0; i < h->o.profiledRuns; i++) {
		double t, w;
		int rc,
		    crc = timed_run(h, c, HC_PROFILED, 0, &t, &w, NULL, NULL, &rc, why, nWhy, err);
		if (crc)
			return crc;
		if (rc) {
			char at[40];
			snprintf(at, sizeof at, " in profiled run %d", i + 1);
			harness_returned(c, rc, at, why, nWhy);
			return HC_MISBEHAVED;
		}
		/* every one checked: CUPTI's profiler is in the runner's process,
		 * which can tell such a run from the others (a checking set's run
		 * was checked in the call already) */
		if (h->lastChk < 0) {
			char when[64];
			int checked;
			snprintf(when, sizeof when, "profiled run %d (checked after its call)",
			         i + 1);
			if ((crc = harness_check_now(h, c, h->lastSeed, when, &checked, why, nWhy,
			                             err)))
				return crc;
			tg->profChecked += checked;
		} else {
			tg->profChecked++;
		}
		if (!(t >= 0)) {
			snprintf(tg->profWhy, sizeof tg->profWhy, "%s",
			         c->zProfNote[0] ? c->zProfNote
			                         : "the runner gave no profiled time");
			tg->prof.n = 0;
			return 0;
		}
		if (!h->lastVaried)
			harness_push(&tg->prof, t);
	}
	if (!tg->prof.n)
		snprintf(tg->profWhy, sizeof tg->profWhy, "no profiled run was counted");
	else
		tg->profUsed =
		    harness_profiled_agrees(harness_median(&tg->prof), harness_median(&tg->ms),
		                            tg->profWhy, sizeof tg->profWhy);
	return 0;
}

int harness_profiled_agrees(double pm, double em, char *why, size_t nWhy)
{
	why[0] = 0;
	if (pm > em * 1.02 + 0.0005)
		snprintf(why, nWhy,
		         "the profiled runs' median, %.4g ms, is longer than the timing's %.4g ms: "
		         "kernels longer than the events around them",
		         pm, em);
	else if (em - pm > PROF_LAUNCH_MS + 0.1 * em)
		snprintf(
		    why, nWhy,
		    "the profiled runs' median, %.4g ms, is %.4g ms under the timing's %.4g ms, "
		    "more than a launch's time: the run's time lies outside its kernels",
		    pm, em - pm, em);
	return !why[0];
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

/* the profiled runs' part of the timing object o ("profiled"): their
 * figures and whether they stand for the timing (then the events' median
 * beside, from sorted, n; np: the profiled ones counted), or why not */
static void profiled_json(cJSON *o, const struct timing *tg, const double *sorted, int n, int np)
{
	cJSON *p = cJSON_AddObjectToObject(o, "profiled");
	cJSON_AddStringToObject(p, "metric",
	                        "gpu__time_duration.sum of the run's kernels (CUPTI's Range "
	                        "Profiler: Nsight Compute's metric)");
	cJSON_AddNumberToObject(p, "runs", (double)tg->prof.n);
	cJSON_AddNumberToObject(p, "checked", tg->profChecked);
	cJSON_AddBoolToObject(p, "used", tg->profUsed);
	if (np) {
		cJSON_AddNumberToObject(p, "events_median_ms", harness_pct(sorted, n, 0.5));
		cJSON_AddNumberToObject(p, "events_min_ms", n ? sorted[0] : NAN);
	} else if (tg->prof.n) {
		cJSON_AddNumberToObject(p, "median_ms", harness_median(&tg->prof));
	}
	if (tg->profWhy[0])
		cJSON_AddStringToObject(p, "why_not", tg->profWhy);
}

/* the timing object of tg (harness_eval's "timing") */
static cJSON *timing_json(const struct harness *h, const struct timing *tg)
{
	const struct harness_cand *c = tg->c;
	const struct samples *S = tg->byClock ? &tg->kclk : &tg->ms;
	int n = (int)S->n, left = tg->left;
	double *sorted = xmalloc((size_t)n * sizeof *sorted);
	memcpy(sorted, S->a, (size_t)n * sizeof *sorted);
	qsort(sorted, (size_t)n, sizeof *sorted, harness_cmp_double);
	/* the typed facts (verdict.h), written by its encoder; then the rest */
	struct verdict_timing t;
	verdict_timing_decode(NULL, &t);
	t.medianMs = harness_pct(sorted, n, 0.5);
	t.p10Ms = harness_pct(sorted, n, 0.1);
	t.p90Ms = harness_pct(sorted, n, 0.9);
	t.count = n;
	t.rse = isfinite(tg->rse) ? tg->rse : -1;
	t.converged = tg->converged;
	t.zMethod = tg->strict ? "device-wide" : "stream";
	/* the profiled runs' median, where it stands for the timing's */
	double *ps = NULL;
	int np = tg->profUsed ? (int)tg->prof.n : 0;
	if (np) {
		ps = xmalloc((size_t)np * sizeof *ps);
		memcpy(ps, tg->prof.a, (size_t)np * sizeof *ps);
		qsort(ps, (size_t)np, sizeof *ps, harness_cmp_double);
		t.medianMs = harness_pct(ps, np, 0.5);
		t.p10Ms = harness_pct(ps, np, 0.1);
		t.p90Ms = harness_pct(ps, np, 0.9);
		t.zMethod = "kernel durations";
	}
	/* verified: kloop's own clock bounded the time; otherwise it is shown
	 * as unverified and never ranked (never the best, a parent, a win) */
	t.unverified = tg->inc == 2;
	if (tg->inc == 2)
		t.zClockBound = tg->bound;
	else if (!c->trusted)
		t.zBound = tg->byCpu ? "cpu" : "clock";
	char note[300];
	if (tg->byClock) {
		snprintf(note, sizeof note,
		         "timed by kloop's own clock (each run's round trip less an empty frame), "
		         "not the runner's: %d thread%s of the candidate outlived kl_run, and what "
		         "such a thread does before the runner starts its timer is in no time the "
		         "runner reports",
		         left, left == 1 ? "" : "s");
		t.zClockNote = note;
	}
	if (tg->clk0 >= 0)
		t.smClockMhzAfter = tg->clk1;
	if (tg->throttled >= 0) {
		t.throttleRead = 1;
		t.throttled = tg->throttled > 0;
		if (tg->throttled > 0)
			t.zThrottleReason = tg->thr;
	}
	cJSON *o = cJSON_CreateObject();
	verdict_timing_encode(o, &t, VERDICT_COMPLETE);
	/* of the runs whose median it is: the profiled ones where they stand */
	double psum = 0;
	for (int i = 0; i < np; i++)
		psum += ps[i];
	cJSON_AddNumberToObject(o, "min_ms", np ? ps[0] : n ? sorted[0] : NAN);
	cJSON_AddNumberToObject(o, "mean_ms", np ? psum / np : n ? tg->sum / n : NAN);
	cJSON_AddNumberToObject(o, "warmup_runs", tg->warm);
	/* on a GPU whose runner has CUPTI: a fast run's time is its kernels'
	 * busy time (issue 39), the events' where more lay between them */
	int nk = 0, ne = 0, ng = 0;
	if (c->methods)
		c->methods((struct harness_cand *)c, &nk, &ne, &ng);
	if (nk > 0) {
		cJSON_AddStringToObject(
		    o, "kernel_time",
		    "the GPU's busy time with the run's kernels, copies and sets "
		    "(CUPTI's activity records)");
		cJSON_AddNumberToObject(o, "runs_by_kernels", nk);
		cJSON_AddNumberToObject(o, "runs_by_events", ne);
		if (ng)
			cJSON_AddNumberToObject(o, "runs_with_time_between_kernels", ng);
	}
	cJSON_AddNumberToObject(o, "probe_median_ms", tg->probeMed);
	cJSON_AddNumberToObject(o, "probes", (double)tg->probe.n);
	cJSON_AddNumberToObject(o, "frame_ms", tg->cal);
	cJSON_AddNumberToObject(o, "checked_runs", h->nChecked);
	cJSON_AddNumberToObject(o, "checked_after_runs", h->nAfter);
	cJSON_AddNumberToObject(o, "checked_after_seconds", h->afterS);
	cJSON_AddNumberToObject(o, "wall_median_ms", harness_median(&tg->wall));
	struct samples kf = {0};
	harness_known_of(&tg->near, NULL, &kf);
	cJSON_AddNumberToObject(o, "frame_wall_median_ms", harness_median(&kf));
	/* the frames the bound was checked against: before the load (the
	 * runner's own and the twin's beside them), and since (both) */
	harness_add_finite(o, "frame_before_load_ms", harness_pre_median(c));
	harness_add_finite(o, "twin_before_load_ms", c->preTwin);
	struct samples kt = {0};
	harness_known_of(&tg->fTwin, NULL, &kt);
	if (kt.n)
		cJSON_AddNumberToObject(o, "twin_frame_median_ms", harness_median(&kt));
	/* the CPU time of a run and of a frame (harness_cpu_delta) */
	harness_known_of(&tg->cpus, NULL, &kt);
	if (kt.n)
		cJSON_AddNumberToObject(o, "cpu_median_ms", harness_median(&kt));
	harness_known_of(&tg->fOwnCpu, NULL, &kt);
	if (kt.n)
		cJSON_AddNumberToObject(o, "frame_cpu_median_ms", harness_median(&kt));
	kt.n = 0;
	for (int i = 0; i < c->nPreFrame; i++)
		if (!isnan(c->preCpu[i]))
			harness_push(&kt, c->preCpu[i]);
	if (kt.n)
		cJSON_AddNumberToObject(o, "frame_cpu_before_load_ms", harness_median(&kt));
	free(kt.a);
	free(kf.a);
	if (left > 0)
		cJSON_AddNumberToObject(o, "threads_left", left);
	if (tg->byClock)
		cJSON_AddStringToObject(o, "clock", "kloop");
	harness_batch_json(o, &tg->bt, tg->jitter);
	if (tg->strict)
		cJSON_AddStringToObject(
		    o, "note",
		    "the candidate's work is not all on the stream it was given "
		    "(or it behaves differently when that stream is busy): "
		    "timed from an idle device to a device-wide synchronize");
	if (tg->clk0 >= 0)
		cJSON_AddNumberToObject(o, "sm_clock_mhz_before", tg->clk0);
	if (tg->profAsked)
		profiled_json(o, tg, sorted, n, np);
	free(ps);
	free(sorted);
	return o;
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
		tg->nearFrame = tg->nearCpuFrame = NAN;
		crc = timing_warm(h, tg, why, nWhy, err);
		if (!crc)
			timing_restart(h, tg);
	}
	while (!crc) {
		if ((crc = timing_count(h, tg, progress, arg, why, nWhy, err)))
			break;
		tg->probeMed = harness_median(&tg->probe);
		if (!tg->strict && probes_disagree(tg->probeMed, harness_median(&tg->ms))) {
			tg->strict = 1;
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
	if (!crc)
		crc = timing_checks(h, tg, why, nWhy, err);
	if (!crc)
		crc = timing_profiled(h, tg, why, nWhy, err);
	const struct harness_cand *who;
	if (!crc)
		crc = harness_after_end(h, &who, why, nWhy, err);
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
		if (!h->quick)
			crc = run_after_timing(h, c, why, nWhy, err);
	}
	if (crc) {
		*pBad = crc > 0 ? crc : 0;
		timing_free(tg);
		return NULL;
	}
	cJSON *o = timing_json(h, tg);
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
