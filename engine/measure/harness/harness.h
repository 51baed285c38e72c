/*
 * harness.h - checking and timing one loaded candidate against a task's
 * reference data on a backend: guard bands around every buffer, outputs
 * poisoned before every run, inputs verified unchanged, several trials with
 * fresh inputs, then timing with the caches flushed between runs until the
 * median is stable.  Every timed run gets fresh inputs; an unpredictable
 * subset of them is checked (inputs from checking sets whose expected
 * outputs the reference computed), and the candidate's reported times are
 * bounded by kloop's own clock around each run.
 */
#ifndef KL_HARNESS_H
#define KL_HARNESS_H

#include <cJSON.h>
#include <stdint.h>

#include "backend.h"
#include "kloop.h"
#include "task.h"

typedef int (*kl_run_fn)(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *stream);

/* empty frames taken for the clock's bound before the candidate is loaded */
#define HARNESS_PRE_FRAMES 9

/* the runs of one batch at most (harness_cand.batch) */
#define HARNESS_BATCH_MAX 1000
/* the kernels of a profiled run whose durations are kept each its own
 * (the verdict's per-kernel medians, in launch order) */
#define HARNESS_PROF_KERNELS 8

/* how a run is timed: not at all, on the candidate's stream, device-wide,
 * or by its kernels' own durations (CUPTI's Range Profiler: the profiled
 * runs after a short timing; no events) */
enum { HC_UNTIMED, HC_FAST, HC_STRICT, HC_PROFILED };

/* what a call of the candidate came to (besides 0, ok, and -1 + err: kloop's
 * own failure) */
enum { HC_CRASHED = 1, HC_MISBEHAVED = 2 };

/*
 * The candidate (or the reference) as the harness calls it: kl_run in its
 * own process on the shared buffers (cand.h), or in a unit test a function.
 * Every call goes through call(), so the candidate cannot tell a trial from
 * a timed run, nor a checked timed run from an unchecked one.
 */
struct harness_cand {
	/* run kl_run once on the shared buffers (mode: HC_*); sets *pRc and, when
	 * timed, the stream and device-wide times in ms (backend.h, timer_stop).
	 * 0, -1 + err, or HC_CRASHED / HC_MISBEHAVED with why */
	int (*call)(struct harness_cand *c, int mode, int *pRc, double *pMs, double *pMd, char *why,
	            size_t nWhy, char *err);
	/* optional: how its fast timed runs so far were timed: by their
	 * kernels' busy time (CUPTI's records, *pKernel), by events (*pEvents),
	 * of which *pGap because the events held more than the kernels allow
	 * (time between or before them) */
	void (*methods)(struct harness_cand *c, int *pKernel, int *pEvents, int *pGap);
	/* a strict timed frame without kl_run (an empty kernel where the backend
	 * has one): *pMd; same returns as call */
	int (*frame)(struct harness_cand *c, double *pMd, char *why, size_t nWhy, char *err);
	/* optional: a batch, n runs of kl_run (1 to the harness's ring slots,
	 * harness_buf.ring) in one request, run k on slot k of the batch's
	 * ring (its own inputs, drawn for it, and its own poisoned outputs),
	 * inside one start and stop of its timer, with no synchronize between
	 * them (mode HC_STRICT: device-wide after each); on the clock's twin n
	 * empty kernels instead.  *pMs, *pMd: the mean stream and device-wide
	 * time of a run, ms.  kl_run's returns are not judged; a few of the
	 * slots' outputs are checked after the batch.  Same returns as call
	 * (HC_MISBEHAVED when the runner did not answer it as a runner does: a
	 * runner taken over) */
	int (*batch)(struct harness_cand *c, int mode, int n, double *pMs, double *pMd, char *why,
	             size_t nWhy, char *err);
	/* optional: before a batch of n, map the ring's first n slots in its
	 * process (its page tables filled), outside any clock, so that no run
	 * of the batch pays the first touch of its slot (on the 2-core VM 30 to
	 * 50 us a page: a 2 MB slot's run took 10 times its timed runs' time).
	 * Same returns as batch */
	int (*touch)(struct harness_cand *c, int n, char *why, size_t nWhy, char *err);
	/* optional: how long its process has waited for a CPU so far, ms (kloop
	 * discounts it from its own clock's round trips); *pAsleep: 1 when the
	 * process is blocked now (its waits so far are all counted), 0 when it
	 * is runnable (a wait under way is counted only when it next runs) */
	double (*sched_delay)(struct harness_cand *c, int *pAsleep);
	/* optional: kloop's own time waiting for a CPU so far, ms, in place of
	 * this process's (/proc/self/schedstat): the unit tests give a machine
	 * that is never busy, so that what they check does not depend on the
	 * load of the machine they run on */
	double (*own_delay)(struct harness_cand *c);
	/* optional: the CPU time its process has spent so far, ms: the thread
	 * that calls kl_run (*pMain) and every process and thread of the
	 * candidate, ended ones too (*pAll); NAN where unknown.  0, or -1 when
	 * neither is known */
	int (*cpu)(struct harness_cand *c, double *pMain, double *pAll);
	/* optional: called once kloop has read its clock after a call or a
	 * frame, before it prepares anything: returns once the candidate's
	 * process is held again (cand.h), so that the hold's wait is in no
	 * round trip kloop times */
	void (*settle)(struct harness_cand *c);
	/* optional: threads of its process beyond those it had when it was
	 * loaded (the candidate left them after kl_run returned) */
	int (*threads_left)(struct harness_cand *c);
	/* filled by harness_preload, before the candidate is loaded: the busy
	 * times (kloop's clock, ms; NAN where the waits could not be told
	 * apart) of empty frames prepared as runs are, which the clock's bound
	 * subtracts, and the calibrated strict frame (the device-wide time of
	 * an empty run, ms) that strict runs subtract */
	double preFrame[HARNESS_PRE_FRAMES];
	double preCpu[HARNESS_PRE_FRAMES]; /* their CPU time (cpu_delta; NAN: unknown) */
	int nPreFrame;
	double preCal;
	double prePrep; /* kloop's preparation of a run then, ms (its median; NAN: none) */
	double preTwin; /* the clock's twin's frames taken beside them, ms (median; NAN) */
	/* optional: the clock's twin (cand.h), a runner that never loads a
	 * candidate: the empty frames of the bound are taken on it, interleaved
	 * with the runs, where the candidate can neither reach them nor
	 * lengthen them, and where they see the machine as the runs do (the
	 * frames before the load alone were taken too long before the runs) */
	struct harness_cand *twin;
	/* the task's own reference: its times are not bounded (the task's code,
	 * whose time is the baseline; a burst of load that made an honest 4 us
	 * reference look like a liar failed the whole task) */
	int trusted;
	/* its runner did not confine itself (a profiler is injected into it):
	 * its times are unverified, whatever the bounds say */
	int unconfined;
	/* set by call: the candidate's words for its last non-zero return
	 * (kl_run_error, kloop.h), "" if it said none */
	char zRunError[KL_RUN_ERROR_MAX];
	/* set by call and batch: the outputs its calls so far filled by
	 * copying a result of their own (kl_run_copied), a bit each */
	unsigned copied;
	/* set by call in HC_PROFILED mode: why the run has no profiled time
	 * (*pMs < 0 then), "" when it has one; and its kernels (ranges), 0
	 * where unknown */
	char zProfNote[240];
	int profKernels;
	/* and the first HARNESS_PROF_KERNELS of them each its own, in launch
	 * order (ms; -1 where unknown) */
	double profKernelMs[HARNESS_PROF_KERNELS];
};

struct harness_opts {
	int nTrials;            /* correctness trials (at least 1; default 5) */
	uint64_t seed;          /* base seed of the trial inputs */
	double budgetS;         /* wall-time budget of one timing phase, seconds */
	double rse;             /* target relative standard error of the mean (0.005) */
	int minRuns;            /* timed runs at least (10) */
	int maxRuns;            /* timed runs at most (10000) */
	double warmupS;         /* warm-up time at least, seconds */
	int profiledRuns;       /* runs after a full timing timed by their kernels' durations
	                           (CUPTI's Range Profiler, harness_profiled.c), 0: none */
	double profiledBelowMs; /* only after a timing whose events' median is under this
	                           (a launch's microseconds a few % of it); 0: after every one */
	int nPool;              /* checking sets for timed runs (-1: as memory allows, up to 8,
	                           each with its float64 outputs for the precision verdict;
	                           0 with given inputs: their own sets are checked) */
	int nRing;              /* slots of the batch's ring, each a run's inputs and outputs
	                           (-1: as memory allows, up to HARNESS_BATCH_MAX; 0: none, a
	                           harness that is never timed) */
};

/* fill o with the defaults for a backend ("host" or "cuda") */
void harness_default_opts(struct harness_opts *o, const char *zBackend);

struct harness;

/* a harness for task t on backend b (neither owned); allocates the guarded
 * device buffers.  NULL + err on failure. */
struct harness *harness_new(const struct task *t, struct backend *b, const struct harness_opts *o,
                            char *err);
void harness_free(struct harness *h);

/* the buffers a candidate's process maps: each tensor's (inputs, then
 * outputs; a[k].sh describes the shared memory, the tensor's data is at
 * offset off), then the batch's two rings where the harness has them (ring
 * > 0: the slots, stride bytes apart; the inputs' ring, then the
 * outputs'), in which a tensor's data is at its entry's ringOff within a
 * slot.  Fills a (HARNESS_MAX_BUFS entries) and returns their number */
#define HARNESS_MAX_BUFS (2 * TASK_MAX_TENSORS + 2)
struct harness_buf {
	struct kl_share sh;
	size_t off;
	kl_tensor t;
	int input;
	const char *zName; /* the task's name for it */
	int ring;          /* a ring: its slots (0: a tensor's buffer) */
	size_t stride;     /* a ring: the bytes from one slot to the next */
	size_t ringOff;    /* a tensor: where its data is in a slot of its kind's ring */
};
int harness_buffers(const struct harness *h, struct harness_buf *a);
/* which harness of this process h is, never another's (a harness's buffers
 * are made with it and live as long: a runner that mapped them serves
 * every candidate of the harness of this serial) */
uint64_t harness_serial(const struct harness *h);

/* draw every trial's inputs (and the timing set's) from the seeds, on the
 * device; the checking sets' seeds are unpredictable.  0 or -1 + err */
int harness_generate_inputs(struct harness *h, char *err);

/* set trial s's input i, or expected output j, from host memory (copied to
 * the device); s ranges over 0..nTrials (nTrials is the timing set).
 * 0 or -1 + err */
int harness_set_input(struct harness *h, int s, int i, const void *p, char *err);
int harness_set_expected(struct harness *h, int s, int j, const void *p, char *err);

/* what the harness was made with, and the candidate's output j (its
 * payload in the shared buffers) */
const struct task *harness_task(const struct harness *h);
struct backend *harness_backend(const struct harness *h);
const struct harness_opts *harness_options(const struct harness *h);
void *harness_output_buf(struct harness *h, int j);

/*
 * A judge of each checked trial beside the checks: the precision verdict
 * (precision.h) is kloop's.  The harness owns it from harness_set_judge()
 * on (a judge set before is freed) and knows it only by these calls, each
 * of which may be NULL: every correct verdict carries its json() as
 * "precision".
 */
struct harness_judge_ops {
	void (*reset)(void *j);                                     /* a new evaluation */
	int (*trial)(void *j, struct harness *h, int s, char *err); /* trial set s's outputs */
	int (*after_timing)(void *j, struct harness *h, char *err); /* the run after timing's */
	/* a checked timed run's outputs (checking set s; run: its number in the
	 * evaluation, as the verdicts name it), of the candidate's timings and
	 * of the challenger's runs in an A/B only */
	int (*checked)(void *j, struct harness *h, int s, unsigned long long run, char *err);
	cJSON *(*json)(const void *j); /* the verdict, or NULL (caller frees) */
	void (*free)(void *j);
};
void harness_set_judge(struct harness *h, void *j, const struct harness_judge_ops *ops);
/* h's judge when its calls are ops (a judge of that kind), else NULL */
void *harness_judge(const struct harness *h, const struct harness_judge_ops *ops);
/* the verdict of the candidate evaluated last: its judge's json(); NULL
 * when it has none (caller frees) */
cJSON *harness_precision(const struct harness *h);

/* the first trials, whose inputs are plain (the precision verdict's, which
 * keeps their float64 outputs) */
#define HARNESS_PLAIN_TRIALS 3
/* how set s's inputs are varied (rng.h flags): the first trials (the
 * precision verdict's) and the timing set plain; the later trials each one
 * way, in turn; the checking sets of the timed runs every other one plain
 * (the first of them), the others one way in turn, so that a timed run on
 * the task's own distribution may be checked as much as any (issue 37;
 * docs/TASKS.md, "Inputs a statistic cannot guess").  harness_generate_inputs() varies them so;
 * given inputs (PyTorch's) say what was done with harness_note_vary(): applied, and the ways found
 * unsound for the task (its reference's outputs not finite) */
int harness_vary_of(const struct harness *h, int s);
void harness_note_vary(struct harness *h, int s, int applied, int unsound);
/* how set s's inputs were varied, as drawn or noted (rng.h flags; 0: plain) */
int harness_vary_applied(const struct harness *h, int s);

/* number of input sets (trials + the timing set + the checking sets) */
int harness_nsets(const struct harness *h);
/* the checking sets (after the timing set) */
int harness_npool(const struct harness *h);
/* keep the first n checking sets only (fewer where they are more), their
 * memory given back: before any evaluation */
void harness_keep_pool(struct harness *h, int n);
/* give back every set's inputs (a float64 harness once its reference ran:
 * only its expected outputs are read again); it can run nothing after */
void harness_release_inputs(struct harness *h);

/* the device buffers holding set s's input i and expected output j (for a
 * reference written straight into them, e.g. by PyTorch through CUDA IPC) */
void *harness_input_buf(struct harness *h, int s, int i);
void *harness_expected_buf(struct harness *h, int s, int j);

/*
 * Time c's empty frames for the clock's bound (preFrame, preCal): called
 * by the runner's starter after its buffers are mapped and before the
 * candidate is loaded, so that nothing the candidate does can lengthen
 * them (a frame answered late would excuse a forged time); the harness
 * takes them itself for a c that has none when it is first timed.  0, -1 +
 * err, or HC_* with why (the runner failed).
 */
int harness_preload(struct harness *h, struct harness_cand *c, char *why, size_t nWhy, char *err);

/* run the reference on every set to produce the expected outputs.
 * 0, or -1 with err saying what went wrong with the reference. */
int harness_run_reference(struct harness *h, struct harness_cand *ref, char *err);

/*
 * The reference as a judge after the call (not owned; NULL: none, e.g.
 * PyTorch-given data): loaded on h's own buffers, it is called on the
 * inputs a timed run or a batch's run had, once kloop has decided, after
 * the candidate's call, to check that run (harness_time.c,
 * harness_batch.c: docs/ARCHITECTURE.md, "Every call is the same call").
 */
void harness_set_reference(struct harness *h, struct harness_cand *ref);

/*
 * Given inputs drawn afresh (issue 37): where the task's inputs are not
 * kloop's to draw (a PyTorch problem's get_inputs()), the source draws each
 * timed run's and each batch run's inputs from the run's seed, in the
 * problem's own distribution and related as get_inputs() relates them
 * (a matrix and its transpose, a symmetric one), and makes the reference's
 * outputs of a seed, so that any such run can be checked after its call as
 * a kernel reference checks generated inputs.  Without a source, or while
 * it is not ready (ready() 0: its helper is busy elsewhere), given inputs
 * are mixes of their plain sets and no run is checked after its call.
 */
struct harness_source {
	/* it can draw now (NULL: always) */
	int (*ready)(void *arg);
	/* the inputs of seed into aDst[i] (device memory, input i's size):
	 * 0 or -1 + err */
	int (*draw)(void *arg, uint64_t seed, void *const *aDst, char *err);
	/* the inputs of seed into aIn[i] and the reference's outputs on them
	 * into aOut[j] (device memory): 0 or -1 + err */
	int (*expect)(void *arg, uint64_t seed, void *const *aIn, void *const *aOut, char *err);
	void *arg;
	/* what one expect costs, ms (0: unknown): checks after the call keep
	 * within their share of the budget by it, as by a reference's time */
	double costMs;
};
/* h's source (copied; NULL: none) */
void harness_set_source(struct harness *h, const struct harness_source *s);
/* the next batch's ring drawn now, while nothing is timed (the worker calls
 * it while a candidate compiles), into memory of the worker's own that no
 * runner maps, where the ring's share of the free memory allows a second
 * copy of its inputs, twice as many slots as the last batch took (64 and
 * the ring's at most; none where it took more):
 * the batch copies them in, so its ring is not drawn on an edit's way to
 * its verdict (a runner maps the ring from its start: drawn there early, a
 * batch's inputs could be read in the runs before it).  1 drawn, 0 not
 * (held already, no batch yet, one too large, no room), -1 + err */
int harness_ring_ahead(struct harness *h, char *err);
/* the next timing's runs' inputs drawn now, as the ring's are (above): as
 * many as the last timing's timed runs and a quarter more (48 at most, and
 * as many as the ring's share of the memory holds), from the seeds the next timing's
 * runs take (it takes the seed they were drawn for): a run's preparation
 * copies its inputs in rather than drawing them (a draw by the PyTorch
 * helper is about 1 ms).  1 drawn, 0 not (held already, no timing yet, no
 * room), -1 + err */
int harness_runs_ahead(struct harness *h, char *err);

/* progress callback: stage is "checking" or "timing"; k is the trial or run */
typedef void (*harness_progress_fn)(const char *zStage, int k, void *arg);

/*
 * Check and (when correct and bTime) time fn.  Returns a JSON object the
 * caller owns: {"status": "correct"|"incorrect"|"crashed", "reason": ...,
 * "correctness": {...}, "timing": {...}}.  A sticky device error sets
 * b->fatal: the caller must not run anything else in this process.
 */
cJSON *harness_eval(struct harness *h, struct harness_cand *c, int bTime,
                    harness_progress_fn progress, void *arg);

/* time fn alone on the timing set (for the reference); JSON timing or NULL + err */
cJSON *harness_time_only(struct harness *h, struct harness_cand *c, char *err);

/*
 * One cascade stage's timing of c: nQuick > 0 exactly that many timed runs
 * after a short warm-up (the quick timing, "quick": true in the object),
 * 0 the full timing (until the median is stable or the budget is spent).
 * The timing object (as harness_eval's "timing"), or NULL with *pFail the
 * verdict of the failure ({"status": "crashed"|"incorrect", "reason"}),
 * both the caller's.
 */
cJSON *harness_time(struct harness *h, struct harness_cand *c, int nQuick,
                    harness_progress_fn progress, void *arg, cJSON **pFail);

/* the sign test's level for an A/B win */
#define HARNESS_AB_ALPHA 0.05
/* pairs an A/B runs at least, whatever its budget (a win then needs 10 of
 * 12: a noisy machine rarely turns a real speedup into a loss, nor chance
 * into a win) */
#define HARNESS_AB_MIN_PAIRS 12

/* an A/B's pairs at most, unless asked for more or fewer (the search's
 * setting ab_pairs defaults to it) */
#define HARNESS_AB_PAIRS 20

struct harness_ab_opts {
	int nPairs;     /* pairs at most (HARNESS_AB_PAIRS) */
	double budgetS; /* after HARNESS_AB_MIN_PAIRS pairs, stop when this much time
	                   has passed */
	int strict;     /* time device-wide (either side's timing needed it) */
};

/*
 * Interleaved A/B timing of the incumbent inc and the challenger cand, both
 * loaded on h's buffers: a short warm-up of each, then pairs, each pair's
 * two runs on the same fresh inputs in an unpredictable order (a random
 * subset checked, as every timed run).  The challenger wins when it is
 * faster in more pairs than chance explains (the one-sided sign test's p
 * below HARNESS_AB_ALPHA) and the median of the per-pair ratios
 * incumbent/challenger is above 1.  Returns {"pairs", "wins", "p_value",
 * "ratio" (that median), "incumbent" and "candidate" ({median_ms, p10_ms,
 * p90_ms}), "method", "checked_runs", "won", "rule" (the rule in words)},
 * or NULL with *pFail a verdict and *pWho the side that failed (0 the
 * incumbent, 1 the challenger, -1 kloop itself).
 */
cJSON *harness_ab(struct harness *h, struct harness_cand *inc, struct harness_cand *cand,
                  const struct harness_ab_opts *ao, harness_progress_fn progress, void *arg,
                  int *pWho, cJSON **pFail);

/* an A/B's decision from its pairs' times, whoever measured them */
struct harness_ab_decision {
	int pairs;    /* pairs counted */
	int wins;     /* pairs the challenger was faster in (a tie is no win) */
	double p;     /* the one-sided sign test's p-value of wins in pairs: the chance
	               * of as many wins or more if both were as fast (1: no pairs) */
	double ratio; /* the median per-pair ratio incumbent/challenger (INFINITY for
	               * a challenger's time of 0; NAN: no pairs) */
	int won;      /* verified, p below HARNESS_AB_ALPHA and ratio above 1 */
};
/*
 * The decision of harness_ab() from the pair times alone, a pure function:
 * pair i is the incumbent's aInc[i] and the challenger's aCand[i] (ms), n
 * pairs; verified: kloop's clock bounded both sides' times (an A/B whose
 * times cannot be bounded never wins).
 */
struct harness_ab_decision harness_ab_decide(const double *aInc, const double *aCand, int n,
                                             int verified);

/* 64 unpredictable bits (getrandom) */
uint64_t harness_random64(void);

#endif
