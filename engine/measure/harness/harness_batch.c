/*
 * harness_batch.c - the batch bound: N runs of the candidate in one
 * request, and N empty ones on the clock's twin, timed by kloop's own
 * clock, bound the times its runner reports where a round trip per run
 * cannot (docs/ARCHITECTURE.md, "Measurement").
 *
 * Why: the clock bound (harness_clock.c) takes each run's round trip less
 * an empty frame.  On the GPU a round trip is 0.26-0.36 ms (an H200: the
 * runner's L2 flush, the synchronizes, the contexts' turns) beside kernels
 * of 0.1 ms, so that bound only calls a runner a liar below half of it: a
 * runner taken over by its candidate (tests/fixtures/evil/forge_reply.c:
 * kl_run never returns and answers kloop's socket itself) reporting 60% of
 * its time passed as verified.  A batch of N runs has one round trip for
 * all of them: its noise is divided by N, and N is chosen so that the
 * batch takes about BATCH_MS_GPU (BATCH_MS_HOST on the host).  The twin's
 * batch, N empty kernels by the same code of the runner (cand_runner.c,
 * run_batch), is the overhead subtracted; the candidate cannot reach it.
 *
 * Every run of a batch is a run of its own (issue 37): run k reads slot k
 * of the batch's ring, inputs drawn for it from the task's distribution
 * before the batch (nothing can write new ones between the runs without a
 * round trip), and writes slot k's outputs, poisoned before the batch; a
 * few slots, chosen once the batch is back, are checked against the
 * reference on their inputs (harness_after.c).  So a candidate that
 * remembers answers (a batch of one input's runs did the work once: its
 * CPU time a run fell far below the timed median, and the bound refuted
 * nothing) remembers none, and one that skips runs it takes for a batch's
 * is caught as often as it skips.  N is at most the ring's slots, which
 * memory bounds (harness.c's ring_new): a batch shorter than 20 ms where
 * a run's data is large, its jitter a larger share of it.
 *
 * What the batch cannot see (the residual gap): a runner taken over that
 * knows the batch request can answer it as it likes: wait as long as its
 * forged times make plausible, or report its batch honestly and forge the
 * timed runs, which the batch bounds only within the flush's allowance
 * below.  What it cannot do is shorten its batch below the work it does
 * in it, nor the twin's.  The batch's runs have no flush and no
 * synchronize between them, so that a taken-over runner skipping those
 * saves at most the events around the whole batch.
 */
#include "harness_priv.h"

#include <math.h>
#include <stdio.h>
#include <unistd.h>

#include "util.h"

/* the batch takes about this long, ms, at most HARNESS_BATCH_MAX runs:
 * on the GPU 20 (its round trip varies by about 0.1 ms: 0.5% of it), on
 * the host 5 (its frames vary by 0.02 to 0.1 ms, and its CPU time bounds
 * the batch too; each run's slot of the ring is memory first touched, 25
 * ms a MB on the 2-core VM: a 20 ms batch of the host's softmax took half a
 * second to prepare) */
#define BATCH_MS_GPU 20.0
#define BATCH_MS_HOST 5.0
/* the time of a run taken to choose N at least, ms */
#define BATCH_RUN_MIN_MS 0.02

int harness_batch_runs(double runMs, int onGpu)
{
	double t = runMs > BATCH_RUN_MIN_MS ? runMs : BATCH_RUN_MIN_MS;
	double n = ceil((onGpu ? BATCH_MS_GPU : BATCH_MS_HOST) / t);
	return n < 1 ? 1 : n > HARNESS_BATCH_MAX ? HARNESS_BATCH_MAX : (int)n;
}

/* one batch of c's (n runs, mode) timed by kloop's clock: its round trip
 * into *pWall, busy time (harness_busy_of) into *pBusy, the mean time of a
 * run the runner reported into *pRep; as harness_cand's batch */
static int timed_batch(struct harness *h, struct harness_cand *c, int mode, int n, double *pWall,
                       double *pBusy, double *pCpu, double *pRep, char *why, size_t nWhy, char *err)
{
	double ms = 0, md = 0, m0, a0, m1, a1;
	int sure, s1;
	if (h->b->sync(h->b, err) < 0)
		return -1;
	harness_cpu_read(h, c, &m0, &a0);
	double t0 = now_s(), d0 = harness_run_delay(c, &sure);
	int rc = c->batch(c, mode, n, &ms, &md, why, nWhy, err);
	double d1 = harness_run_delay(c, &s1);
	*pWall = (now_s() - t0) * 1e3;
	settle(c);
	harness_cpu_read(h, c, &m1, &a1);
	*pCpu = harness_cpu_delta(m0, a0, m1, a1);
	/* its waits for a CPU taken out, as a run's (harness_busy_of), but
	 * however many: kloop sleeps through the batch, so the waits are the
	 * runner's, counted to the nanosecond (on the loaded 2-core VM they
	 * were half of an honest batch, whose busy time was its runs' time);
	 * waits it missed would only make the estimate larger than the time
	 * the runner's timer saw around the same runs, and those it counts
	 * twice smaller.  Unknown when the runner was runnable at the start
	 * (a wait under way then is counted within) or nearly never ran */
	double waits = d1 - d0;
	*pBusy = sure && waits <= 0.9 * *pWall ? *pWall - waits : NAN;
	/* device-wide in strict mode, its calibrated frame not subtracted: a
	 * time that includes each run's synchronize, as the twin's batch does */
	*pRep = mode == HC_STRICT ? md : ms;
	return rc;
}

int harness_batch_take(struct harness *h, struct harness_cand *c, int strict, int n, double frameMs,
                       double frameCpu, struct batch *bt, char *why, size_t nWhy, char *err)
{
	int mode = strict ? HC_STRICT : HC_FAST, rc;
	double t0 = now_s(), cpu, twCpu;
	bt->n = n;
	bt->twinWall = bt->twinBusy = NAN;
	/* every run its own fresh inputs and poisoned outputs, in the ring:
	 * drawn now, or ahead while the candidate compiled (a seed of its own
	 * as fresh, unseen by any runner until it is copied in) */
	uint64_t seed = h->runSeed ^ 0xba7c4b0d5e11ull ^ ((uint64_t)bt->tries << 40);
	if (n > h->nRing)
		return kl_err(err, "a batch of %d runs in a ring of %d slots", n, h->nRing);
	h->lastBatchN = n;
	if (harness_ring_take_staged(h, n, &seed) ? harness_ring_staged(h, n, err) < 0
	                                          : harness_ring_prepare(h, n, seed, err) < 0)
		return -1;
	step_trace("batch: its ring prepared", t0);
	double ts = now_s();
	if (c->touch) {
		rc = c->touch(c, n, why, nWhy, err);
		settle(c);
		if (rc)
			return rc;
		step_trace("batch: its ring touched", ts);
	}
	bt->tries++;
	ts = now_s();
	if ((rc = timed_batch(h, c, mode, n, &bt->wall, &bt->busy, &cpu, &bt->rep, why, nWhy, err)))
		return rc;
	step_trace("batch: its runs", ts);
	ts = now_s();
	/* on the host, its CPU time less an empty frame's, which no wait for a
	 * CPU lengthens (harness_cpu_delta: the thread that calls kl_run, or
	 * all of the candidate over the CPUs it may use, neither more than the
	 * time the runner's timer saw); NAN on the GPU */
	bt->cpu = (cpu - (isnan(frameCpu) ? 0 : frameCpu)) / n;
	struct harness_cand *tw = c->twin && c->twin->batch ? c->twin : NULL;
	double twRep;
	char tWhy[KL_ERRLEN];
	if (!tw || timed_batch(h, tw, mode, n, &bt->twinWall, &bt->twinBusy, &twCpu, &twRep, tWhy,
	                       sizeof tWhy, err) != 0) {
		/* no twin: one empty frame of the runner's own (a flush and a
		 * synchronize more than the batch's round trip: subtracting it
		 * only lowers the estimate) */
		bt->twinWall = bt->twinBusy = frameMs;
		bt->byFrame = 1;
	} else {
		bt->byFrame = 0;
	}
	step_trace("batch: the twin's", ts);
	ts = now_s();
	/* which runs are checked is decided now, the batch back */
	int nChecked = 0;
	if ((rc = harness_after_batch(h, c, n, seed, &nChecked, why, nWhy, err)))
		return rc;
	step_trace("batch: its runs checked", ts);
	bt->checked += nChecked;
	bt->seconds += now_s() - t0;
	return 0;
}

/*
 * The batch's bound.  est: kloop's clock's time of a run, the candidate's
 * batch less the twin's (busy times: the waits for a CPU taken out), over
 * n; low: less the jitter of two round trips (jitter: from the spread of
 * the twin's frames, harness_time.c).  The runner's timer encloses its
 * whole batch, so an honest runner reports at least est (the twin's empty
 * kernels subtracted make est smaller still): a report below BATCH_X of
 * low is a liar's.  On an H200 (0.095 ms softmax, frames 0.26-0.36 ms)
 * that is 200 runs, 20 ms, a jitter of 0.22 ms: low is 0.99 of est, and a
 * runner reporting 60% of its time is at 0.61 of it; on the 2-core VM a
 * jitter of at most two frames (0.04-0.1 ms each) beside 20 ms.  On the
 * host the batch's CPU time (bt->cpu) bounds it too.  Both are of the
 * same moment as the report, which load lengthens as much as either (a
 * wait for a CPU lengthens the report alone): 1, a liar.
 *
 * The timed runs' median (timedMed; NAN: not tested) is held to the same,
 * less allow (ms: on the GPU kloop's flush, behind which a timed run hides
 * the host's launch work that the batch's runs do in the open); the
 * batch's runs are warm, the timed runs cold.  But those are of other
 * moments than the batch: on the 2-core VM an honest candidate's batch
 * spent 1.3 to 1.8 times its timed median of CPU a run (the virtual CPU
 * taken by its host, unreported; a neighbour on the core), and on a GPU a
 * batch of back-to-back runs can meet a lower clock than runs with gaps.
 * So a timed median below BATCH_X of the batch is 3: a contradiction that
 * load can explain, which leaves the time unverified, never a liar.  The
 * host bounds its timed runs each by its own CPU time instead
 * (harness_paired_cpu), and passes NAN where that resolves them.
 * 0 when consistent, 1 with why (a liar), 2 when it could not be told (the
 * waits for a CPU could not be placed, and no CPU time is known), 3 with
 * why (the timed runs below the batch of another moment).
 */
#define BATCH_X 0.8
/* what a batch's own request costs beside its runs (the runner's receive,
 * its timer's start and stop, its reply; the CPU time's reads), ms in all:
 * in kloop's clock and the CPU time, not in the runner's timer.  A batch of
 * 1000 runs of a 13 ns kernel (a 16-element PyTorch problem on the host)
 * spent 18 us of CPU against the 13 us its timer saw, and was called a
 * liar: below this much in all, a batch refutes nothing */
#define BATCH_SLACK_MS 0.05
int harness_batch_inconsistent(const struct batch *bt, double jitter, double timedMed, double allow,
                               char *why, size_t nWhy)
{
	if (bt->n < 1)
		return 0;
	if (bt->rep * bt->n > 1.01 * bt->wall + 0.05) {
		snprintf(why, nWhy,
		         "timing inconsistent: in kloop's batch of %d runs the candidate's process "
		         "reported %.4g ms a run, more than the %.4g ms the whole batch took by "
		         "kloop's own clock",
		         bt->n, bt->rep, bt->wall);
		return 1;
	}
	int clock = !isnan(bt->busy) && !isnan(bt->twinBusy);
	if (!clock && isnan(bt->cpu)) {
		snprintf(
		    why, nWhy,
		    "the batch bound was not applied: in kloop's batch of %d runs (or the clock's "
		    "twin's) the runner waited for a CPU for nearly all of it, or was runnable at "
		    "its start",
		    bt->n);
		return 2;
	}
	double est = clock ? (bt->busy - bt->twinBusy) / bt->n : NAN,
	       low = clock ? (bt->busy - bt->twinBusy - jitter) / bt->n : NAN;
	char byClock[200], byCpu[120];
	snprintf(byClock, sizeof byClock,
	         "kloop's own clock saw %.4g ms a run (at least %.4g) more than %s", est, low,
	         bt->byFrame ? "an empty frame" : "the clock's twin's batch of empty runs");
	snprintf(byCpu, sizeof byCpu, "it spent %.4g ms a run on a CPU (less an empty frame's)",
	         bt->cpu);
	/* its own report against the larger of the two lower bounds, the
	 * clock's and (on the host) the CPU time's, both of the batch itself */
	int cpuHigher = !isnan(bt->cpu) && !(bt->cpu <= low);
	double lowA = cpuHigher ? bt->cpu : low;
	if (lowA > 0 && bt->rep * bt->n < BATCH_X * lowA * bt->n - BATCH_SLACK_MS) {
		snprintf(why, nWhy,
		         "timing inconsistent: in kloop's batch of %d runs the candidate's process "
		         "reported %.4g ms a run, but in the same batch %s",
		         bt->n, bt->rep, cpuHigher ? byCpu : byClock);
		return 1;
	}
	/* the timed runs' median, of other moments */
	double lowB = !isnan(bt->cpu) ? bt->cpu : low - allow;
	if (!isnan(timedMed) && lowB > 0 && timedMed < BATCH_X * lowB - BATCH_SLACK_MS / bt->n) {
		snprintf(
		    why, nWhy,
		    "unverified: the candidate's process reported a median run of %.4g ms, but "
		    "in kloop's batch of %d runs, at another moment, %s; the load of the "
		    "machine (or the device's clock) can differ that much between moments, so "
		    "this proves no forgery, and no time of it is trusted",
		    timedMed, bt->n, !isnan(bt->cpu) ? byCpu : byClock);
		return 3;
	}
	return 0;
}

/*
 * Wait, up to maxS seconds, for the machine to allow a timing: until a
 * tenth of a second in which no task waited for a CPU more than a fifth
 * of the time (/proc/pressure/cpu, "some"), or at once where the kernel
 * does not say.  Returns the seconds waited.
 */
double harness_wait_calm(double maxS)
{
	double t0 = now_s();
	for (;;) {
		unsigned long long a = 0, b = 0;
		FILE *f = fopen("/proc/pressure/cpu", "re");
		int ok = f && fscanf(f, "some avg10=%*f avg60=%*f avg300=%*f total=%llu", &a) == 1;
		if (f)
			fclose(f);
		if (!ok)
			break;
		usleep(100000);
		f = fopen("/proc/pressure/cpu", "re");
		ok = f && fscanf(f, "some avg10=%*f avg60=%*f avg300=%*f total=%llu", &b) == 1;
		if (f)
			fclose(f);
		/* total: microseconds in which some task waited */
		if (!ok || (double)(b - a) < 0.2 * 100000 || now_s() - t0 >= maxS)
			break;
	}
	return now_s() - t0;
}

/* the batch's fields of a timing object */
void harness_batch_json(cJSON *o, const struct batch *bt, double jitter)
{
	if (bt->n < 1)
		return;
	cJSON_AddNumberToObject(o, "batch_runs", bt->n);
	harness_add_finite(o, "batch_wall_ms", bt->wall);
	harness_add_finite(o, "batch_twin_wall_ms", bt->twinWall);
	harness_add_finite(o, "batch_reported_ms", bt->rep);
	if (!isnan(bt->busy) && !isnan(bt->twinBusy)) {
		cJSON_AddNumberToObject(o, "batch_clock_ms", (bt->busy - bt->twinBusy) / bt->n);
		cJSON_AddNumberToObject(o, "batch_low_ms",
		                        (bt->busy - bt->twinBusy - jitter) / bt->n);
	}
	harness_add_finite(o, "batch_cpu_ms", bt->cpu);
	cJSON_AddStringToObject(o, "batch_less", bt->byFrame ? "frame" : "twin");
	cJSON_AddNumberToObject(o, "batch_tries", bt->tries);
	cJSON_AddNumberToObject(o, "batch_checked_runs", bt->checked);
	cJSON_AddNumberToObject(o, "batch_seconds", bt->seconds);
}
