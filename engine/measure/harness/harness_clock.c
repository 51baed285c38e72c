/*
 * harness_clock.c - the clock bound: kloop's own clock and the candidate's
 * CPU time around each run, less the waits for a CPU and an empty frame,
 * bound the times its process reports (docs/ARCHITECTURE.md, "Measurement").
 */
#include "harness_priv.h"

#include <fcntl.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "util.h"

/* this thread's time waiting for a CPU so far, ms (0 where unknown) */
static double own_run_delay(void)
{
	static int fd = -2;
	if (fd == -2)
		fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
	char buf[128];
	ssize_t n = fd >= 0 ? pread(fd, buf, sizeof buf - 1, 0) : -1;
	if (n <= 0)
		return 0;
	buf[n] = 0;
	unsigned long long run = 0, wait = 0;
	return sscanf(buf, "%llu %llu", &run, &wait) == 2 ? (double)wait * 1e-6 : 0;
}

/* both sides' time waiting for a CPU so far, ms; *pSure: 0 when the
 * candidate's process is runnable now, so that a wait of it under way (begun
 * before now) would be counted later, as if it had come after now */
double harness_run_delay(struct harness_cand *c, int *pSure)
{
	int asleep = 1;
	double d = (c->own_delay ? c->own_delay(c) : own_run_delay()) +
	           (c->sched_delay ? c->sched_delay(c, &asleep) : 0);
	*pSure = asleep;
	return d;
}

/*
 * The busy time of a round trip of wall ms between the delays d0 and d1, or
 * NAN when it cannot be known: the candidate's process was runnable at the
 * start (its waits counted within may have begun before), or the two
 * processes waited for most of it (the waits are summed, and on a busy
 * machine both wait at once: what is left is noise).
 */
double harness_busy_of(double wall, double d0, double d1, int sure)
{
	double waits = d1 - d0;
	return sure && waits <= 0.5 * wall ? wall - waits : NAN;
}

/* the CPUs this process, and so a runner it starts, may run on */
static int cpus_usable(void)
{
	static int n;
	if (!n) {
		cpu_set_t set;
		n = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 0;
		if (n < 1) {
			long k = sysconf(_SC_NPROCESSORS_ONLN);
			n = k > 0 ? (int)k : 1;
		}
	}
	return n;
}

/* c's CPU time so far, ms: the thread that calls kl_run, all of it (NAN
 * where unknown).  Not on the GPU: there the time a run reports is the
 * device's, and the CPU time of a launch (cuBLAS's choice of a kernel,
 * tens of microseconds) is in none of it, nor bounds it */
void harness_cpu_read(const struct harness *h, struct harness_cand *c, double *pMain, double *pAll)
{
	*pMain = *pAll = NAN;
	if (c->cpu && !(h->b->zName && !strcmp(h->b->zName, "cuda")))
		c->cpu(c, pMain, pAll);
}

/*
 * The CPU time a round trip took between two reads (m: the thread that
 * calls kl_run, a: all of the candidate), ms: a lower bound of how long its
 * work takes, however busy the machine (a process waiting for a CPU spends
 * none), so a bound where kloop's clock cannot tell runs from waits.  That
 * thread cannot have run longer than the round trip, nor all of it longer
 * than the round trip on every CPU it may use: the larger of the two, NAN
 * when neither is known.  The reads are taken with the process held
 * (settle), so nothing of it runs unseen between them.
 */
double harness_cpu_delta(double m0, double a0, double m1, double a1)
{
	double m = m1 - m0, a = (a1 - a0) / cpus_usable();
	return isnan(m) ? a : isnan(a) ? m : fmax(m, a);
}

/* whether c's CPU time covers every thread and process of it */
int harness_cpu_all_known(const struct harness *h, struct harness_cand *c)
{
	double m, a;
	harness_cpu_read(h, c, &m, &a);
	return !isnan(a);
}

/*
 * The cost of a strict run's frame: from an idle device, the start event, an
 * empty kernel (where the backend has one), the stream's end event, a
 * device-wide synchronize and the final event.  Subtracted from strict runs.
 */

/* one frame, also timed by kloop's clock (round trip in ms into *pW);
 * returns as harness_cand's frame */
static int frame(struct harness *h, struct harness_cand *c, double *pMd, double *pW, char *why,
                 size_t nWhy, char *err)
{
	if (h->b->sync(h->b, err) < 0)
		return -1;
	double t0 = now_s();
	int rc = c->frame(c, pMd, why, nWhy, err);
	*pW = (now_s() - t0) * 1e3;
	settle(c);
	return rc;
}

static int calibrate(struct harness *h, struct harness_cand *c, double *pCal, char *why,
                     size_t nWhy, char *err)
{
	double d[21], w, t0 = now_s();
	for (int i = 0; i < 21; i++) {
		int rc = frame(h, c, &d[i], &w, why, nWhy, err);
		if (rc)
			return rc;
	}
	*pCal = harness_median_of(d, 21);
	step_trace("frames: 21 calibrating", t0);
	return 0;
}

/*
 * An empty frame timed by kloop's clock from the state a timed run starts
 * in: prepared as a run is (fresh inputs, poisoned outputs, the flush and
 * the eviction), both processes idle meanwhile.  Back-to-back frames are
 * faster than that (the processes, and in a VM the virtual CPUs, are still
 * awake), and a bound taken from them flags honest short runs on a busy or
 * virtual machine as lying about their time.
 */
static int cold_frame(struct harness *h, struct harness_cand *c, int k, double *pW, double *pCpu,
                      char *why, size_t nWhy, char *err)
{
	double md, m0, a0, m1, a1;
	if (harness_prepare_run(h, -1, h->runSeed ^ 0xc01df4a3e5ull ^ ((uint64_t)k << 32), err) < 0)
		return -1;
	/* framed as a timed run is, the reads of the waits and CPU included */
	harness_cpu_read(h, c, &m0, &a0);
	int sure, s1;
	double t0 = now_s(), d0 = harness_run_delay(c, &sure);
	int rc = c->frame(c, &md, why, nWhy, err);
	double d1 = harness_run_delay(c, &s1);
	*pW = harness_busy_of((now_s() - t0) * 1e3, d0, d1, sure);
	settle(c);
	harness_cpu_read(h, c, &m1, &a1);
	if (pCpu)
		*pCpu = harness_cpu_delta(m0, a0, m1, a1);
	return rc;
}

int harness_preload(struct harness *h, struct harness_cand *c, char *why, size_t nWhy, char *err)
{
	c->nPreFrame = 0;
	c->preCal = NAN;
	c->prePrep = NAN;
	c->preTwin = NAN;
	if (!c->frame)
		return 0;
	double cal, w, cpu;
	int rc = calibrate(h, c, &cal, why, nWhy, err);
	if (rc)
		return rc;
	c->preCal = cal;
	/* a few first, as the process and the device wake up; each beside one
	 * of the clock's twin, so that how the two compare is known before the
	 * candidate could lengthen its own (harness_frame_for) */
	double prep[HARNESS_PRE_FRAMES], tw[HARNESS_PRE_FRAMES];
	int nTw = 0;
	for (int k = 0; k < 2 + HARNESS_PRE_FRAMES; k++) {
		if ((rc = cold_frame(h, c, k, &w, &cpu, why, nWhy, err)))
			return rc;
		if (k >= 2) {
			prep[c->nPreFrame] = h->lastPrepMs;
			c->preCpu[c->nPreFrame] = cpu;
			c->preFrame[c->nPreFrame++] = w;
			double t = NAN;
			char tWhy[KL_ERRLEN], tErr[KL_ERRLEN];
			if (c->twin &&
			    cold_frame(h, c->twin, k, &t, NULL, tWhy, sizeof tWhy, tErr) == 0 &&
			    !isnan(t))
				tw[nTw++] = t;
		}
	}
	c->prePrep = harness_median_of(prep, c->nPreFrame);
	c->preTwin = nTw ? harness_median_of(tw, nTw) : NAN;
	return 0;
}

/* the median of c's frames before its load (NAN: none known) */
double harness_pre_median(const struct harness_cand *c)
{
	double v[HARNESS_PRE_FRAMES];
	int n = 0;
	for (int i = 0; i < c->nPreFrame; i++)
		if (!isnan(c->preFrame[i]))
			v[n++] = c->preFrame[i];
	return n ? harness_median_of(v, n) : NAN;
}

/*
 * The empty frame the runs after it are bounded with: one of the runner's
 * own, taken now, prepared as a run is (kloop's clock less it is the run's
 * own time; frames of another process, or of another moment, misjudged
 * honest runners by tens of microseconds: the twin, woken on another CPU
 * as often as not, half the runner's on the 2-core VM; on an H200 0.26 to
 * 0.36 ms, longer than the runs' own overhead and than the kernels timed),
 * and beside it one on the clock's twin (*pTwin, NAN without), which the
 * candidate cannot lengthen: harness_frames_lengthened() compares the two with how
 * they compared before the candidate was loaded.  NAN when the runner's
 * own cannot be told from its waits.
 */
double harness_frame_for(struct harness *h, struct harness_cand *c, int k, double *pTwin,
                         double *pCpu)
{
	char why[KL_ERRLEN], err[KL_ERRLEN];
	double own = NAN, w = NAN;
	if (cold_frame(h, c, k, &own, pCpu, why, sizeof why, err) != 0)
		own = *pCpu = NAN;
	if (c->twin && cold_frame(h, c->twin, k, &w, NULL, why, sizeof why, err) != 0)
		w = NAN;
	*pTwin = w;
	return own;
}

/*
 * The candidate answers its runner's empty frames later than before it was
 * loaded, measured against the clock's twin (a candidate that answered its
 * frames as late as its last run forged 10x and passed, issue 24; its
 * frames came 12-16 times later than expected here): 1 with why.  Its own
 * frames over the twin's, against the same ratio before the load, more
 * than 3 times and 20 us apart; without a twin, its own frames against
 * those before the load, as far.  The ratio is not steadier than that on
 * the 2-core VM: an honest 8 ms candidate's frames were half the twin's
 * before its load and as long after it (2.7x).  Where the CPU bound covers
 * the candidate (checkCpu), the test is the CPU time of its frames instead,
 * against that before the load, 3 times and 30 us (honest frames: 0.01 to
 * 0.07 ms, at most 3.2 times those before the load, idle or loaded; the
 * forger's spun as long as its runs, 1.1 ms).
 */
#define LENGTHENED_X 3.0
int harness_frames_lengthened(const struct harness_cand *c, const struct samples *own,
                              const struct samples *twin, const struct samples *ownCpu,
                              int checkCpu, char *why, size_t nWhy)
{
	struct samples o = {0}, t = {0};
	/* the CPU time of its frames too, which no load lengthens (where its
	 * process keeps no threads of its own, which run beside the frames) */
	double pc[HARNESS_PRE_FRAMES];
	int nPc = 0;
	for (int i = 0; i < c->nPreFrame; i++)
		if (!isnan(c->preCpu[i]))
			pc[nPc++] = c->preCpu[i];
	harness_known_of(ownCpu, NULL, &o);
	if (checkCpu && nPc && o.n >= 2) {
		/* then the CPU bound holds too (harness_timing_inconsistent), which frames
		 * lengthened by waiting do not fool: their CPU time is the test,
		 * not their length, which on a loaded machine is not comparable
		 * with that before the load */
		double mo = harness_median(&o), pre = harness_median_of(pc, nPc);
		int rc = mo > LENGTHENED_X * pre + 0.03;
		if (rc)
			snprintf(
			    why, nWhy,
			    "the clock bound was not applied: the candidate's runner spent %.4g ms "
			    "of CPU time on an empty frame (median) against %.4g ms before its "
			    "load: the candidate lengthens them",
			    mo, pre);
		free(o.a);
		return rc;
	}
	o.n = 0;
	for (size_t i = 0; i < own->n && i < twin->n; i++)
		if (!isnan(own->a[i]) && !isnan(twin->a[i]))
			harness_push(&o, own->a[i]), harness_push(&t, twin->a[i]);
	double pre = harness_pre_median(c), rc = 0;
	if (o.n >= 2 && !isnan(c->preTwin) && c->preTwin > 0 && !isnan(pre)) {
		double mo = harness_median(&o), mt = harness_median(&t),
		       expect = pre / c->preTwin * mt;
		if (mo > LENGTHENED_X * expect + 0.02) {
			snprintf(
			    why, nWhy,
			    "the clock bound was not applied: the candidate's runner answered "
			    "empty "
			    "frames in %.4g ms (median), %.3gx what the clock's twin's %.4g ms and "
			    "the two before its load (%.4g against %.4g ms) lead one to expect: "
			    "the "
			    "candidate lengthens them",
			    mo, mo / expect, mt, pre, c->preTwin);
			rc = 1;
		}
	} else {
		harness_known_of(own, NULL, &o);
		double mo = o.n ? harness_median(&o) : NAN;
		if (!isnan(mo) && !isnan(pre) && mo > LENGTHENED_X * pre + 0.02) {
			snprintf(why, nWhy,
			         "the clock bound was not applied: the candidate's runner answered "
			         "empty "
			         "frames in %.4g ms (median) against %.4g ms before its load: the "
			         "candidate lengthens them",
			         mo, pre);
			rc = 1;
		}
	}
	free(o.a), free(t.a);
	return rc > 0;
}

/*
 * What a run's overhead may differ from the empty frame it is measured
 * against, ms: the frame's own length (its median over frames), at least 5
 * us.  The frame is of another moment (before every fourth run), and on a
 * loaded virtual machine a run's round trip outside the runner's timer
 * (its wake after the thaw, its reply) ran 30-40 us longer than a frame of
 * 40 us: an honest 5 us kernel (tests/e2e/shell.sh's seed_unrolled.c) was
 * called a liar at its quick timing, "0.0053 ms reported, 0.036 ms more
 * than an empty run" (issue 35).
 */
static double frame_slack(const struct samples *near)
{
	struct samples k = {0};
	harness_known_of(near, NULL, &k);
	double m = k.n ? harness_median(&k) : 0;
	free(k.a);
	return m > 0.005 ? m : 0.005;
}

/*
 * Kloop's clock around each run bounds the times the candidate's process
 * reports.  No run may report more than the round trip kloop saw; and the
 * median reported run may not fall below half of a 99% lower bound of the
 * median of each run's running time (the round trip less the time both
 * processes waited for a CPU in it: busy) less that of an empty frame (near:
 * the runner's own, taken before every fourth run from the state a run
 * starts in, so that a frame and its runs see the machine alike;
 * harness_frames_lengthened() checks it against the clock's twin, which the
 * candidate cannot lengthen, as one that answered its own frames late did,
 * excusing a forged time).  Medians, not minima: on a busy machine a run of a
 * candidate that spins on the clock can be descheduled for most of it, and
 * a bound from the one least busy run would let a process that lies about
 * its time through (and the fastest reported run is as noisy); but the
 * lower confidence bound of the median keeps one noisy run in three from
 * making an honest one a liar.  It is the least busy run only below 6 runs
 * (the quick timing's), which a liar cannot rely on: the full timing, tens
 * of runs, bounds it again.  Runs whose busy time or frame cannot be known
 * (NAN: harness_busy_of) are left out.
 * The same test on the CPU time of each run less its frame's (cpus,
 * nearCpu: harness_cpu_delta), which no wait for a CPU lengthens: it finds a liar
 * on a machine too busy for the clock, and where it covers every thread of
 * the candidate (cpuVerifies: the host backend, kloop's cgroup, no threads
 * outliving kl_run) it bounds the time when the clock cannot (*pByCpu).  On
 * a loaded 2-core VM the clock could not bound half of the honest
 * candidates' timings.  cpuVerifies HARNESS_CPU_NO_BOUND: threads outlive
 * kl_run, their CPU time in the runs and frames alike, and the difference
 * of the two is noise, no bound (16 spinning threads were called liars
 * one evaluation in six on the loaded 2-core VM: 21.9 ms of CPU a run
 * against a reported 1.1 ms).  0 when consistent, 1 with why, 2 when too few runs
 * could be bounded (why says so: a machine too busy to tell, or a process
 * that never sleeps).
 */
int harness_timing_inconsistent(const struct samples *rep, const struct samples *wall,
                                const struct samples *busy, const struct samples *near,
                                const struct samples *cpus, const struct samples *nearCpu,
                                int cpuVerifies, int *pByCpu, int *pPaired, char *why, size_t nWhy)
{
	*pByCpu = 0;
	*pPaired = 0;
	if (!rep->n || rep->n != wall->n || rep->n != busy->n || rep->n != near->n ||
	    rep->n != cpus->n || rep->n != nearCpu->n)
		return 0;
	double over = 0;
	size_t iOver = 0;
	for (size_t i = 0; i < rep->n; i++)
		if (rep->a[i] - wall->a[i] > over)
			over = rep->a[i] - wall->a[i], iOver = i;
	if (over > 0.05 + 0.01 * wall->a[iOver]) {
		snprintf(why, nWhy,
		         "timing inconsistent: the candidate's process reported %.4g ms for a run "
		         "that took %.4g ms by kloop's own clock",
		         rep->a[iOver], wall->a[iOver]);
		return 1;
	}
	/* the runs whose busy time and frame are both known */
	struct samples kr = {0}, kb = {0}, kd = {0};
	size_t nFrames = 0;
	for (size_t i = 0; i < rep->n; i++) {
		nFrames += !isnan(near->a[i]);
		if (!isnan(busy->a[i]) && !isnan(near->a[i])) {
			harness_push(&kr, rep->a[i]);
			harness_push(&kb, busy->a[i]);
			harness_push(&kd, busy->a[i] - near->a[i]);
		}
	}
	int rc = 0;
	if (kb.n < 3 || kb.n * 3 < rep->n) {
		snprintf(why, nWhy,
		         "the clock bound was not applied: only %zu of %zu runs (%zu with an empty "
		         "frame) started with the candidate's process asleep and ran mostly on a "
		         "CPU, so its running time could not be told apart from its waits (a "
		         "machine too busy, or a process that never sleeps)",
		         kb.n, rep->n, nFrames);
		rc = 2;
	} else {
		double r = harness_median(&kr), b = harness_median(&kb), d = harness_median(&kd);
		/* the test is on a lower bound of that median, not the median
		 * itself: the quick timing bounds 3 to 5 runs, and a burst of load
		 * that slows 2 of 3 of them moves their median, which called an
		 * honest short candidate a liar; a process that hides its work
		 * does it in every run, and the bound moves with it */
		if (r < 0.5 * harness_lower_median(&kd) - frame_slack(near)) {
			snprintf(
			    why, nWhy,
			    "timing inconsistent: the candidate's process reported a median run "
			    "of %.4g ms, but kloop's own clock saw a median of %.4g ms of running "
			    "(%.4g ms more than an empty run beside it)",
			    r, b, d);
			rc = 1;
		}
	}
	/* the runs whose CPU time and frame's are both known */
	kr.n = kd.n = 0;
	for (size_t i = 0; i < rep->n && rc != 1 && cpuVerifies != HARNESS_CPU_NO_BOUND; i++)
		if (!isnan(cpus->a[i]) && !isnan(nearCpu->a[i])) {
			harness_push(&kr, rep->a[i]);
			harness_push(&kd, cpus->a[i] - nearCpu->a[i]);
		}
	if (rc != 1 && kd.n >= 3 && kd.n * 3 >= rep->n) {
		double r = harness_median(&kr), d = harness_median(&kd);
		if (r < 0.5 * harness_lower_median(&kd) - frame_slack(nearCpu)) {
			snprintf(
			    why, nWhy,
			    "timing inconsistent: the candidate's process reported a median run "
			    "of %.4g ms, but it spent a median of %.4g ms on a CPU in a run more "
			    "than in an empty frame",
			    r, d);
			rc = 1;
		} else if (rc == 2 && cpuVerifies > 0) {
			rc = 0;
			*pByCpu = 1;
		}
	}
	if (rc != 1 && cpuVerifies != HARNESS_CPU_NO_BOUND &&
	    harness_paired_cpu(rep, cpus, nearCpu, pPaired, why, nWhy))
		rc = 1;
	free(kd.a);
	free(kr.a);
	free(kb.a);
	return rc;
}

/*
 * Each run's report against its own CPU time, less its frame's: the two of
 * the same moment.  The runner's timer is a wall clock around kl_run, and
 * no thread spends more CPU time than the wall clock around it, whatever
 * the load: a wait for a CPU lengthens the report and not the CPU time, and
 * what lengthens the CPU time (a virtual CPU's time taken by the host,
 * which this kind of machine does not report as stolen; a neighbour on the
 * same core; a lower frequency) lengthens the wall clock around it as much.
 * Times of different moments are not comparable so: on the 2-core VM an
 * honest candidate's batch spent 1.3 to 1.8 times its timed runs' median
 * of CPU a run, in three batches in a row (issue 35).  So each run i gives
 * d = rep - PAIRED_X (cpu - frame's cpu), and a runner whose d is below
 * -PAIRED_SLACK_MS (and the frames' CPU time) in most runs (d's median,
 * of PAIRED_MIN_RUNS runs or more) reports less than it works: 1
 * with why.  The CPU time a run spends outside the runner's timer (its
 * request, its reply) is the frame's, less than 0.1 ms, and only the
 * host's taking the virtual CPU inside that window of tens of microseconds,
 * in most runs, would make an honest run's d negative (on the loaded
 * 2-core VM: one run in 60 or fewer).  Not a confidence bound of the
 * median: a wait inside the timer lengthens a forged report too, and two
 * such runs of twelve let a forgery at 60% through it.  *pPaired: 1 when this resolves a report at
 * PAIRED_X of the truth (runs long enough beside the slack, and enough of
 * them), so that nothing of another moment need bound it (the batch's
 * timed-median test, harness_batch_inconsistent).
 */
#define PAIRED_X 0.8
#define PAIRED_SLACK_MS 0.03
/* the fewest runs it judges: more than the quick timing's 3 to 5, which come right
 * after the load (the runner's own first steps outside its timer) */
#define PAIRED_MIN_RUNS 6
int harness_paired_cpu(const struct samples *rep, const struct samples *cpus,
                       const struct samples *nearCpu, int *pPaired, char *why, size_t nWhy)
{
	struct samples d = {0}, w = {0}, r = {0};
	*pPaired = 0;
	for (size_t i = 0; i < rep->n && i < cpus->n && i < nearCpu->n; i++)
		if (!isnan(cpus->a[i]) && !isnan(nearCpu->a[i])) {
			double work = cpus->a[i] - nearCpu->a[i];
			harness_push(&d, rep->a[i] - PAIRED_X * work);
			harness_push(&w, work);
			harness_push(&r, rep->a[i]);
		}
	int rc = 0;
	if (d.n >= PAIRED_MIN_RUNS && d.n * 3 >= rep->n) {
		/* the slack grows with the frames' own CPU time: a run's overhead
		 * outside the timer is a frame's, and varies as much (the first
		 * runs after the load paid 0.03-0.1 ms more of it than a frame) */
		struct samples kf = {0};
		harness_known_of(nearCpu, NULL, &kf);
		double slack = PAIRED_SLACK_MS + (kf.n ? harness_median(&kf) : 0);
		free(kf.a);
		double md = harness_median(&d), mw = harness_median(&w);
		size_t below = 0;
		for (size_t i = 0; i < d.n; i++)
			below += d.a[i] < -slack;
		if (md < -slack) {
			snprintf(
			    why, nWhy,
			    "timing inconsistent: the candidate's process reported a median run "
			    "of %.4g ms, but in the same runs it spent a median of %.4g ms on a "
			    "CPU (less an empty frame's): %zu of %zu runs reported less than "
			    "%.0f%% of their own CPU time, which no load explains (a wait or a "
			    "slower CPU lengthens the time a run reports as much as its CPU time)",
			    harness_median(&r), mw, below, d.n, PAIRED_X * 100);
			rc = 1;
		}
		*pPaired = (1 - PAIRED_X) * mw > slack;
	}
	free(d.a), free(w.a), free(r.a);
	return rc;
}

/*
 * kloop's own clock's time of each run (its busy time less its frame)
 * where both are known, into out.  The time of a candidate whose threads
 * outlive kl_run: held between calls, they run again when a request lets
 * the runner go, beside the runner's own steps before its timer starts
 * (and before a GPU's start event: its L2 flush, a synchronize), so work
 * they do there is in no time the runner reports (on a 2-core machine the
 * runner's main thread, queued behind such a thread, started its timer a
 * scheduler's slice late and found most of the rows done; on an H200 a
 * thread had the softmax ready before kl_run began).  kloop's clock covers
 * the round trip from before the runner is let go.
 */
void harness_clock_times(const struct samples *busy, const struct samples *near,
                         struct samples *out)
{
	out->n = 0;
	for (size_t i = 0; i < busy->n && i < near->n; i++)
		if (!isnan(busy->a[i]) && !isnan(near->a[i]))
			harness_push(out,
			             busy->a[i] - near->a[i] > 0 ? busy->a[i] - near->a[i] : 0);
}

/* 1 with why when kloop's preparations of c's runs took much longer than
 * before it was loaded, on the GPU (see time_runs) */
int harness_gpu_busy_between(const struct harness *h, const struct harness_cand *c,
                             const struct samples *preps, char *why, size_t nWhy)
{
	if (!h->b->zName || strcmp(h->b->zName, "cuda") || isnan(c->prePrep) || preps->n < 3)
		return 0;
	double m = harness_median(preps);
	if (!(m > 2 * c->prePrep + 1.0))
		return 0;
	snprintf(why, nWhy,
	         "the clock bound was not applied: kloop's preparation of a run took %.3g ms "
	         "(median) against %.3g ms before the candidate was loaded: the GPU was kept busy "
	         "between calls (its context's work outlived the calls), and work done there is "
	         "in no time kloop reads",
	         m, c->prePrep);
	return 1;
}
