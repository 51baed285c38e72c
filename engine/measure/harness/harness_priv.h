/*
 * harness_priv.h - what the harness's files share, private to them
 * (harness*.c): the harness object, its guarded buffers, the samples its
 * timings keep, and the steps one file makes for another.  The module's
 * interface is harness.h.
 *
 * The files, from the top down: each calls only files below it, and none
 * calls back into its callers (scripts/call_circles.py): a lower one that
 * needs something of a higher one is handed it by its caller.
 *
 *   harness.c          the harness object, its buffers (the ring's too), the trials
 *   harness_ab.c       the interleaved A/B of two candidates
 *   harness_time.c     the timing until stable (time_runs; struct timing: harness_timing.h)
 *   harness_profiled.c the profiled runs after a short one
 *   harness_timing_json.c  its object
 *   harness_timed_run.c  one timed run on fresh inputs
 *   harness_batch.c    the batch bound: N runs in one request beside the twin's
 *   harness_after.c    checks decided after the call: the timing's reservoir, a batch's runs
 *   harness_clock.c    the clock bound: waits, CPU time, empty frames
 *   harness_sets.c     the input sets: drawn or given; the reference's outputs
 *   harness_ring.c     the batch's ring: a slot's places, its inputs' seed, slots made ready
 *   harness_run.c      a run's primitives: random numbers, a run's preparation (inputs
 *                      uploaded or drawn, outputs poisoned, flush, eviction), the call,
 *                      the verdicts of a call
 *   harness_check.c    a run checked: guard bands, inputs unchanged, outputs right
 *   harness_vary.c     how each set's inputs are varied, and its words
 *   harness_samples.c  samples that grow, and their order statistics
 */
#ifndef KL_HARNESS_PRIV_H
#define KL_HARNESS_PRIV_H

#include <string.h>

#include "harness.h"
#include "verdict.h"

#define GUARD (64 * 1024) /* bytes of guard band on each side of a buffer */
#define GUARD_BYTE 0xCB   /* the guard pattern */

struct gbuf {
	char *base;         /* allocation: GUARD + n + GUARD */
	size_t n;           /* payload bytes */
	struct kl_share sh; /* shared with the candidate's process (sh.n 0: not shared) */
};

/* timed runs checked after their call in a full timing, at most */
#define AFTER_RUNS 8

/* one candidate's timed runs on fresh inputs, k of them kept for a check
 * after their call at the end of its timing (harness_after.c) */
struct after_reservoir {
	const struct harness_cand *c;              /* whose (NULL: none offered yet) */
	int k;                                     /* runs it keeps */
	int n;                                     /* of them kept so far */
	uint64_t seen;                             /* runs offered */
	uint64_t aSeed[AFTER_RUNS];                /* each kept run's inputs' seed */
	uint64_t aRun[AFTER_RUNS];                 /* and its number (harness.nTimed) */
	int aBySrc[AFTER_RUNS];                    /* its inputs came from the source */
	void *aaOut[AFTER_RUNS][TASK_MAX_TENSORS]; /* and its outputs (device memory,
	                                              the harness's: harness_free) */
};

struct harness {
	const struct task *t;
	struct backend *b;
	uint64_t serial; /* this process's count of harnesses at its making (harness_serial) */
	struct harness_opts o;
	int nSets;     /* trials + 1 + nPool */
	int nPool;     /* checking sets, after the timing set */
	void ***aaIn;  /* [set][input] pristine inputs, in device memory */
	void ***aaExp; /* [set][output] expected outputs, in device memory */
	struct gbuf aIn[TASK_MAX_TENSORS], aOut[TASK_MAX_TENSORS];
	kl_tensor atIn[TASK_MAX_TENSORS], atOut[TASK_MAX_TENSORS];
	int bGenerated;      /* inputs drawn by harness_generate_inputs (not given) */
	uint64_t poolSeed;   /* the checking sets' seed (unpredictable) */
	int *aVary;          /* [set] how its inputs were varied (rng.h flags) */
	int varyUnsound;     /* the ways the reference's outputs were not finite in: those
	                        sets were drawn again, plain */
	uint64_t nRuns;      /* timed runs so far: seeds their fresh inputs */
	uint64_t nTimed;     /* timed runs in this evaluation, all its timing phases:
	                        each one's number in the verdicts ("timed run 7") */
	uint64_t runSeed;    /* this evaluation's timed inputs' seed (unpredictable) */
	int poolUsed;        /* checking sets used in this evaluation (all its timing
	                        phases: quick, full, A/B), so none is seen twice */
	int quick;           /* the timing phase is a quick one (harness_time) */
	double pCheck;       /* chance that a timed run is checked */
	int nChecked;        /* timed runs checked in this evaluation */
	struct timing *cont; /* where a quick timing stopped: the full timing of the
	                        same candidate goes on from there (its runs count) */
	double lastPrepMs;   /* the wall time of the last harness_prepare_run(), ms */
	int lastVaried;      /* the last timed run was a checked one on varied inputs: its
	                      * time is not the problem's (harness_timed_run) */
	/* every timed run's inputs are drawn (or mixed) here first, then
	 * copied into the candidate's buffers, a checking set's or these: the
	 * two preparations alike (harness_prepare_run); a check after the call
	 * compares the run's inputs with them */
	void *aScratch[TASK_MAX_TENSORS];
	struct harness_cand *ref;  /* the reference, judge after the call (not owned; NULL) */
	struct harness_source src; /* given inputs' source (harness.h; draw NULL: none) */
	int lastBySrc;             /* the last harness_draw_inputs() drew from src */
	uint64_t lastSeed;         /* the last timed run's inputs' seed (harness_timed_run.c) */
	int lastChk;               /* its checking set, -1: none (then it was drawn) */
	int ringBySrc;             /* the batch's ring was drawn from src */
	double refMs;              /* a call of it, ms (its median on the sets; NAN) */
	/* the timed runs kept for a check after their call, a reservoir for
	 * each candidate timed (two in an A/B; harness_after.c) */
	struct after_reservoir aResv[2];
	int nAfter;    /* timed runs so checked in this timing */
	double afterS; /* what they cost: the runs kept, and their checks, s */
	/* the batch's ring (harness_ring.c): slot k holds run k's inputs
	 * (every input tensor at its ringOff) and outputs */
	struct gbuf ringIn, ringOut;
	int nRing;                          /* slots (0: none) */
	size_t ringStrideIn, ringStrideOut; /* a slot's bytes in each */
	size_t aRingOffIn[TASK_MAX_TENSORS], aRingOffOut[TASK_MAX_TENSORS];
	uint64_t ringCap; /* the bytes the ring could take (its share of the free memory) */
	/* the next batch's inputs drawn ahead (harness_ring_ahead: while a
	 * candidate compiles) into the worker's own memory, which no runner
	 * maps, as the ring lays them out: nStage slots (0: none held) drawn
	 * from stageSeed, from src where stageBySrc; stageOff: not to be made
	 * (no room, or it failed); lastBatchN: the runs of the last batch
	 * taken, which the next is drawn ahead for */
	void *pStage;
	int nStage, stageBySrc, stageOff, lastBatchN;
	uint64_t stageSeed;
	/* the next timing's runs' inputs drawn ahead (harness_runs_ahead: while
	 * a candidate compiles) into the worker's own memory, laid out as the
	 * ring's slots: slot k holds timed run k + 1's of the timing whose
	 * runSeed is runsSeed (the next timing_warm takes it as its timingSeed:
	 * harness_runs_taken), from
	 * src where runsBySrc; nRunsAhead slots (0: none held); runsOff: not to
	 * be made (no room, or it failed); timingSeed: the runSeed the last
	 * timing began with, lastTimedN: the timed runs it took (on to its
	 * full timing), which the next is drawn ahead for */
	void *pRuns;
	int nRunsAhead, runsBySrc, runsOff;
	uint64_t runsSeed, timingSeed, lastTimedN;
	void *judge; /* the judge of each trial (the precision verdict's; NULL: none) */
	const struct harness_cand *judged; /* and of each checked timed run of this
	                        one (the candidate timed, harness_time, or the A/B's
	                        challenger: not the reference, nor the incumbent) */
	const struct harness_judge_ops *judgeOps;
	unsigned char *pGuard; /* host copy of the expected guard band */
	unsigned char *pGuardRead;
};

/* an array of doubles that grows */
struct samples {
	double *a;
	size_t n, alloc;
};

/* the outputs' comparisons with the expected values, over the trials */
struct agg {
	double maxAbs, relL2;
	double tolFrac;   /* the worst element's share of its tolerance (compare.h) */
	double relL2Frac; /* relL2 / rel_l2 at worst */
	int tolDtype;     /* the dtype whose tolerance the worst output was judged by, or -1 */
	int64_t mismatches;
	int64_t nonFinite; /* of them, NaN or Inf outputs where the reference is finite */
	int64_t refNaN;    /* NaN in the reference's outputs (never a match) */
	int trials, passed;
};

static inline int is_float(kl_dtype d)
{
	return task_dtype_is_float(d);
}

/* the byte outputs are poisoned with before a run: all-ones (NaN in f16,
 * bf16, f32 and f64) for floats, 0x5A for integers */
static inline int harness_poison_of(kl_dtype d)
{
	return is_float(d) ? 0xFF : 0x5A;
}

/* a guarded buffer's payload, past its front guard band */
static inline void *payload(const struct gbuf *g)
{
	return g->base + GUARD;
}

/* the candidate held again after a call or a frame (harness_cand.settle) */
static inline void settle(struct harness_cand *c)
{
	if (c->settle)
		c->settle(c);
}

/* whether h runs on the GPU */
static inline int gpu(const struct harness *h)
{
	return h->b->zName && !strcmp(h->b->zName, "cuda");
}

/* harness_run.c: set s's inputs uploaded, every guard band reset, the outputs
 * poisoned (0 or -1 + err); the outputs poisoned alone; the candidate's
 * buffers evicted where the backend can; a timed run's (or a frame's)
 * preparation: inputs from set, or fresh from seed when set < 0, poisoned
 * outputs, the flush, the eviction (its wall time in h->lastPrepMs) */
int harness_prepare(struct harness *h, int s, char *err);
int harness_poison_outputs(struct harness *h, char *err);
void harness_evict(struct harness *h);
int harness_prepare_run(struct harness *h, int set, uint64_t seed, char *err);
/* a run's fresh inputs from seed (drawn, or mixed from given sets) into
 * aDst[i], device memory of input i's size: 0 or -1 + err */
int harness_draw_inputs(struct harness *h, void *const *aDst, uint64_t seed, char *err);
/* memory of the worker's own (no runner maps it) for draws made ahead
 * (harness_ring_ahead, harness_runs_ahead), bytes within the ring's share
 * of the memory (h->ringCap): NULL where it is not; timed run k's inputs'
 * seed in a timing whose runSeed is runSeed; slot k's inputs of draws
 * made ahead at base (h->pRuns, the next timing's runs; h->pStage, the
 * next batch's ring), laid out as the ring's slots */
void *harness_ahead_alloc(struct harness *h, size_t bytes);
uint64_t harness_run_seed(uint64_t runSeed, uint64_t k);
void harness_ahead_slot(const struct harness *h, void *base, int k, void **aIn);
/* the runs drawn ahead were taken by the timing that began last */
static inline int harness_runs_taken(const struct harness *h)
{
	return h->nRunsAhead && h->timingSeed == h->runsSeed;
}
/* call the candidate once, untimed: 0 with *pRc, -1 + err, or HC_* + why */
int harness_call(struct harness_cand *c, int *pRc, char *why, size_t nWhy, char *err);
/* why a call that returned rc fails, into buf (n bytes): "kl_run returned
 * RC" and zWhen (" during warm-up", may be ""), then the candidate's own
 * words for it where it gave some (kl_run_error); buf */
const char *harness_returned(const struct harness_cand *c, int rc, const char *zWhen, char *buf,
                             size_t n);
/* verdicts (verdict_new()'s, the caller's): kloop's own failure zWhen
 * (crashed); a call that did not come back normally (crc: HC_* or -1) */
cJSON *harness_crashed(struct harness *h, const char *zWhen, const char *err);
cJSON *harness_called_verdict(struct harness *h, int crc, const char *zWhen, const char *why,
                              const char *err, const struct agg *a);

/* harness_vary.c: " (scaled+outliers inputs)" for a varied set s, else ""
 * (a static buffer) */
const char *harness_vary_words(const struct harness *h, int s);

/* harness_check.c: 1 with why when a guard band was damaged, or an input
 * differs from set s's copy, or an output from set s's expected (which a
 * fills; zWhen names the run), 0 when not, -1 + err; the correctness
 * object of a (the caller's) */
int harness_check_guards(struct harness *h, char *why, size_t nWhy, char *err);
int harness_check_inputs(struct harness *h, int s, char *why, size_t nWhy, char *err);
/* the same of inputs aNow[i] against aWas[i] (device memory) */
int harness_inputs_changed(struct harness *h, void *const *aNow, void *const *aWas, char *why,
                           size_t nWhy, char *err);
int harness_check_outputs(struct harness *h, int s, struct agg *a, char *why, size_t nWhy,
                          const char *zWhen, char *err);
/* the same of outputs aOut[j] against aRef[j] (device memory; varied: the
 * inputs were varied, harness_vary_of) */
int harness_check_against(struct harness *h, void *const *aOut, void *const *aRef, int varied,
                          struct agg *a, char *why, size_t nWhy, const char *zWhen, char *err);
cJSON *harness_correctness_json(const struct harness *h, const struct agg *a, int nTrials);

/* harness_samples.c: qsort's order of doubles; the q-quantile of n sorted
 * values (NAN where n is 0); the median of n values (sorts a); v appended to s; the median of
 * s (0 when empty); a 99% lower confidence bound of it; the samples of s
 * where key (s when NULL) is not NAN, into *out; o[k] = v, or null when v
 * is not finite */
int harness_cmp_double(const void *a, const void *b);
double harness_pct(const double *s, int n, double q);
double harness_median_of(double *a, int n);
void harness_push(struct samples *s, double v);
double harness_median(const struct samples *s);
double harness_lower_median(const struct samples *s);
void harness_known_of(const struct samples *s, const struct samples *key, struct samples *out);
void harness_add_finite(cJSON *o, const char *k, double v);

/* harness_clock.c: both sides' waits for a CPU so far, ms (*pSure: 0 when
 * c is runnable now); the busy time of a round trip between two such
 * reads (NAN: unknown); c's CPU time so far (NAN where unknown); that of a
 * round trip between two reads; whether c's CPU time covers all of it;
 * the median of c's frames before its load; a frame of c's runner (and of
 * its twin, *pTwin) to bound the runs after it */
double harness_run_delay(struct harness_cand *c, int *pSure);
double harness_busy_of(double wall, double d0, double d1, int sure);
void harness_cpu_read(const struct harness *h, struct harness_cand *c, double *pMain, double *pAll);
double harness_cpu_delta(double m0, double a0, double m1, double a1);
int harness_cpu_all_known(const struct harness *h, struct harness_cand *c);
double harness_pre_median(const struct harness_cand *c);
double harness_frame_for(struct harness *h, struct harness_cand *c, int k, double *pTwin,
                         double *pCpu);
/* the clock bound's tests, 1 with why when they fail (2: not applied):
 * frames the candidate lengthened; reported times inconsistent with
 * kloop's clock or CPU time (*pByCpu: bounded by CPU time); kloop's clock's
 * own times of the runs, into out; the GPU kept busy between calls */
int harness_frames_lengthened(const struct harness_cand *c, const struct samples *own,
                              const struct samples *twin, const struct samples *ownCpu,
                              int checkCpu, char *why, size_t nWhy);
/* harness_timing_inconsistent's cpuVerifies: the CPU time is no bound at all */
#define HARNESS_CPU_NO_BOUND (-1)
int harness_timing_inconsistent(const struct samples *rep, const struct samples *wall,
                                const struct samples *busy, const struct samples *near,
                                const struct samples *cpus, const struct samples *nearCpu,
                                int cpuVerifies, int *pByCpu, int *pPaired, char *why, size_t nWhy);
/* each run's report against its own CPU time less its frame's (the same
 * moment's): 1 with why when most runs report below 0.8 of it; *pPaired: 1
 * when the runs resolve that much (long enough, enough of them) */
int harness_paired_cpu(const struct samples *rep, const struct samples *cpus,
                       const struct samples *nearCpu, int *pPaired, char *why, size_t nWhy);
void harness_clock_times(const struct samples *busy, const struct samples *near,
                         struct samples *out);
int harness_gpu_busy_between(const struct harness *h, const struct harness_cand *c,
                             const struct samples *preps, char *why, size_t nWhy);

/* harness_batch.c: a batch of n runs in one request (harness_cand.batch)
 * and the clock's twin's n empty ones beside it, by kloop's clock */
struct batch {
	int n;           /* runs (0: no batch taken) */
	double wall;     /* kloop's clock around the candidate's batch, ms */
	double busy;     /* its busy time (harness_busy_of; NAN: unknown) */
	double twinWall; /* the twin's batch (or the runner's own empty frame) */
	double twinBusy;
	double rep;     /* the time of a run the runner reported in it, ms */
	double cpu;     /* the CPU time of a run in it less an empty frame's (NAN: unknown) */
	int byFrame;    /* no twin: an empty frame of the runner's own subtracted */
	int tries;      /* batches taken */
	int checked;    /* runs of them checked after their batch */
	double seconds; /* what they cost */
};
/* the runs of a batch for runs of runMs (on the GPU, or the host); one batch of c (n runs, strict:
 * device-wide; frameMs: the empty frame subtracted when there is no twin,
 * frameCpu its CPU time) into bt, 0, -1 + err or HC_* + why; its bound (0,
 * 1 inconsistent, 2 not applied, 3 the timed runs below the batch of
 * another moment, with why); its fields of a timing object; a wait of at
 * most maxS seconds for the machine's CPUs to be free enough to time */
int harness_batch_runs(double runMs, int onGpu);
int harness_batch_take(struct harness *h, struct harness_cand *c, int strict, int n, double frameMs,
                       double frameCpu, struct batch *bt, char *why, size_t nWhy, char *err);
int harness_batch_inconsistent(const struct batch *bt, double jitter, double timedMed, double allow,
                               char *why, size_t nWhy);
void harness_batch_json(cJSON *o, const struct batch *bt, double jitter);
double harness_wait_calm(double maxS);

/* harness_after.c: checks decided after the call.  A uniform number in
 * [0, 1) from getrandom; the runs a full timing (or a batch) checks so, as
 * the reference's speed allows; the reservoirs emptied for a timing of
 * nSides candidates (1, or 2 in an A/B), each to keep as many runs as it
 * checks (harness_after_runs, over nSides; one in a quick timing); run's
 * outputs aOut (device memory, never the candidate's buffers) against the
 * reference's on inputs aIn, or, bySrc, against the source's outputs of
 * seed (1 with why, zWhen naming the run; 0; -1 + err); the timed run of c just called, on fresh
 * inputs drawn from seed, kept or not for a check, decided now (its guard bands and inputs checked
 * when it is: 0, -1 + err, HC_* + why); every run kept checked (0, -1 + err, or HC_* + why with
 * *pWho the candidate, the reservoirs emptied); a few runs of c's batch of n (its ring's seed) so
 * checked (their number into *pChecked; 0, -1 + err or HC_* + why) */
double harness_uniform(void);
int harness_after_runs(const struct harness *h);
void harness_after_begin(struct harness *h, int nSides);
int harness_check_after(struct harness *h, void *const *aIn, void *const *aOut, uint64_t seed,
                        int bySrc, const char *zWhen, char *why, size_t nWhy, char *err);
int harness_after_run(struct harness *h, struct harness_cand *c, uint64_t seed, char *why,
                      size_t nWhy, char *err);
int harness_after_end(struct harness *h, const struct harness_cand **pWho, char *why, size_t nWhy,
                      char *err);
int harness_after_batch(struct harness *h, struct harness_cand *c, int n, uint64_t seed,
                        int *pChecked, char *why, size_t nWhy, char *err);
/* harness_time.c: whether the strict probes' median probe (ms) exceeds the
 * fast runs' fast by more than launch noise (onGpu: the GPU's, tighter for
 * microsecond runs): the work is not all on the candidate's stream, and its
 * time is the strict one */
int harness_probes_disagree(double probe, double fast, int onGpu);
/* harness_profiled.c: whether the profiled runs' median pm (ms) may stand for a
 * bounded fast timing's median em: 1, or 0 with why (timing_profiled) */
int harness_profiled_agrees(double pm, double em, char *why, size_t nWhy);
/* and, for a timing gone device-wide, whether its device-wide runs'
 * median probe (ms) exceeded its fast runs' fast by no more than launching
 * its kernels on an idle device adds: 1, or 0 with why */
int harness_profiled_strict_ok(double probe, double fast, int kernels, char *why, size_t nWhy);

/* the run of c just called on fresh inputs drawn from seed, checked now,
 * whatever chance says (a profiled run, which a runner can tell from
 * others): *pChecked 1 where it could be (c is not the reference, the run's
 * inputs can be judged); 0, -1 + err, or HC_MISBEHAVED + why naming zWhen */
int harness_check_now(struct harness *h, const struct harness_cand *c, uint64_t seed,
                      const char *zWhen, int *pChecked, char *why, size_t nWhy, char *err);

/* harness_ring.c: the ring's slot k (its inputs aIn[i] and outputs
 * aOut[j], device memory); the seed slot k's inputs are drawn from in a
 * batch drawn from seed; the ring's first n slots ready for a batch drawn
 * from seed (each slot's inputs drawn, h->ringBySrc set as they were,
 * its outputs poisoned, the caches flushed: 0 or -1 + err) */
void harness_ring_slot(const struct harness *h, int k, void **aIn, void **aOut);
uint64_t harness_ring_seed(uint64_t seed, int k);
int harness_ring_prepare(struct harness *h, int n, uint64_t seed, char *err);
/* the seed of a batch of n runs whose ring harness_ring_ahead() drew (the
 * draws then used up: harness_ring_staged() copies them in), or 0 with
 * none held for so many */
int harness_ring_take_staged(struct harness *h, int n, uint64_t *pSeed);
/* the ring's first n slots ready for a batch from the draws made ahead
 * (copied in, h->ringBySrc as they were drawn, outputs poisoned, caches
 * flushed): 0 or -1 + err */
int harness_ring_staged(struct harness *h, int n, char *err);
/* harness_ahead.c: the seed a new timing takes (its runSeed, kept as
 * h->timingSeed: the one the next timing's runs were drawn ahead for,
 * once, else a fresh one) */
uint64_t harness_runs_take(struct harness *h);

/* harness_timed_run.c: one timed run of c on fresh inputs (a random few of them
 * checked): its time *pT, round trip *pW, busy and CPU time (where asked),
 * kl_run's *pRc; 0, -1 + err, or HC_* + why.  harness_time.c: the quick
 * timing's state dropped (a new evaluation) */
int harness_timed_run(struct harness *h, struct harness_cand *c, int strict, double cal, double *pT,
                      double *pW, double *pBusy, double *pCpu, int *pRc, char *why, size_t nWhy,
                      char *err);
void harness_drop_timing(struct harness *h);

#endif
