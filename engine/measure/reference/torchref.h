/*
 * torchref.h - PyTorch references: runs engine/measure/reference/torchref.py --serve
 * (the Python helper) beside the worker; it makes a KernelBench-style
 * problem's inputs (from seeds, on the device), parameters and reference
 * outputs and writes them straight into the harness's buffers, and times the
 * eager and torch.compile baselines (cached by problem, torch, device, seed
 * and sizes).  No reference data goes through disk.
 */
#ifndef KL_TORCHREF_H
#define KL_TORCHREF_H

#include <cJSON.h>
#include <stdint.h>

#include "harness.h"
#include "task.h"

struct torchref;

struct torchref_opts {
	const char *zPython;   /* interpreter (NULL: python3) */
	const char *zCacheDir; /* kloop's cache root (the baselines' timing is cached there) */
	const char *zDevice;   /* "cuda" or "cpu" */
	int cudaIndex;         /* the GPU (the worker's --device) */
	uint64_t seed;         /* base seed: set s is drawn under seed + 1 + s */
	double budgetS;        /* timing budget of each baseline */
	const char *zShapes;   /* "name=value,..." for the problem's constants, or NULL */
	double size;           /* size factor of the problem's dimensions (0: none) */
	double timeoutS;       /* a set's reply within this (--timeout: a forward that hangs),
	                        * the description within it and a minute for the import
	                        * (0: no limit) */
};

/*
 * The helper's steps: its start (its description of the problem), the
 * fills, the baselines' timing and its end each send a request and wait
 * for the reply, which may take minutes (PyTorch's import, a forward,
 * torch.compile).  No call waits for one: torchref_start() and the
 * *_begin() calls send the request and return, and the caller's loop
 * watches torchref_fd() and calls torchref_step() when it is readable or
 * when torchref_deadline() has passed (a timer of the loop).  One step at a
 * time.
 *
 * torchref_step() reads what the helper sent, never waiting, and returns 1
 * once the step is done, 0 while it goes on (a fill asks for its sets one
 * after another: the deadline moves), -1 + err when it failed: the helper
 * ended, sent its own error (naming the problem), or sent nothing within
 * the step's limit (then it is stopped and err says what it was doing).
 * torchref_deadline() is when the step's reply is late, on now_s()'s clock
 * (0: no limit).  torchref_wait() blocks until the step is done (0 or -1 +
 * err).  A *_begin() call returns 1 when its step is done at once (nothing
 * to ask), 0 when it is under way, -1 + err.
 */
int torchref_step(struct torchref *r, char *err);
double torchref_deadline(const struct torchref *r);
int torchref_wait(struct torchref *r, char *err);

/*
 * Start the helper on problem file zProblem; its step is the description
 * of in[] and out[] (it makes the first set meanwhile), in
 * torchref_manifest() once done.  NULL + err when it cannot be started.
 * A failed start's step has ended the helper and says why in one line
 * ("PyTorch is not installed for python3 (...)", the helper's own message
 * naming the problem); free r all the same.
 */
struct torchref *torchref_start(const char *zProblem, const struct torchref_opts *o, char *err);
/* stop the helper (if still running) and free r */
void torchref_free(struct torchref *r);

/* whether the Python zPython has the torch package (not imported): 1, 0,
 * or -1 when it cannot be run */
int torchref_has_torch(const char *zPython);

/* another Python on this machine that has PyTorch (Debian's
 * /usr/bin/python3, where make deps installs python3-torch, or
 * /usr/local/bin/python3), not zPython itself ("python3" when NULL): a
 * static path, or NULL */
const char *torchref_python_with_torch(const char *zPython);

/* whether a helper of this process was ended by SIGTERM from outside
 * (Slurm's scancel signals every process of the step): what failed with
 * it says nothing about the problem, as this process is being stopped too */
int torchref_stopped(void);

/* the helper's description: {"inputs", "outputs", "torch", "device", "sizes", ...} */
const cJSON *torchref_manifest(const struct torchref *r);
/* a task made from the description (for a problem file given as the TASK) */
struct task *torchref_make_task(const struct torchref *r, const char *zProblem, char *err);
/* 0 if task t's tensors match the description's (count, dtype, shape); -1 + err */
int torchref_check_task(const struct torchref *r, const struct task *t, char *err);
/* the step that has the helper write every set's inputs and expected
 * outputs into h's buffers on backend b (cuda: through CUDA IPC handles;
 * host: through the shared memory, then copied in), a set at a time */
int torchref_fill_begin(struct torchref *r, struct harness *h, struct backend *b, char *err);

/*
 * The step that makes the float64 reference of the precision verdict
 * (precision.h) into h64 (precision_harness(h)): each set's outputs of the
 * model run in float64 on the inputs of the set of h it stands for
 * (precision_source(): the trials, the timing set, the checking sets, drawn
 * from the same seeds and varied as h's were), the emulation sets' on the
 * first trial's inputs and the model's parameters rounded to 10 and 7
 * mantissa bits.
 */
int torchref_fill64_begin(struct torchref *r, struct harness *h64, const struct harness *h,
                          struct backend *b, char *err);
/* the step that times the eager and torch.compile baselines on h's timing
 * set, unless they are cached (done at once).  With defer (a search on
 * the GPU), when they are not cached, only the eager model is timed now:
 * "compile" is {"pending": true} while torch.compile compiles in the
 * helper, in the background (below); a torch whose benchmarks cannot be
 * handed over times both now.  Measured baselines are cached. */
int torchref_timing_begin(struct torchref *r, struct harness *h, int defer, char *err);
/* the baselines once that step is done ({"eager": ..., "compile": ...}),
 * NULL before */
const cJSON *torchref_baselines(const struct torchref *r);
/*
 * The harness's source of given inputs (harness.h, harness_set_source;
 * issue 37): each run's fresh inputs drawn by the helper, get_inputs()
 * under the run's seed (the parameters copied from h's first set), and a
 * seed's reference outputs made by the problem's own forward, so that every
 * timed and batch run has inputs of the problem's distribution, related as
 * get_inputs() relates them, and any of them can be checked after its call.
 * The helper must live as long as h draws (torchref_finish() at the end);
 * while its torch.compile compiles in the background the source is not
 * ready (the harness mixes sets then, unchecked).  costMs: what making
 * one set cost the helper (src->costMs).  0 or -1 + err.
 */
int torchref_source(struct torchref *r, struct harness *h, struct backend *b,
                    struct harness_source *src, double costMs, char *err);
/* the step that tells the helper, kept for a session's draws, to check
 * that forward() left the parameters alone (what its end does, which a
 * kept helper never reaches): 1 done, 0 under way (torchref_step), -1 +
 * err; torchref_check_params() waits for it */
int torchref_check_begin(struct torchref *r, char *err);
int torchref_check_params(struct torchref *r, char *err);

/*
 * The background compile.  While it runs, the helper asks for the GPU
 * before each benchmark inductor runs to choose a kernel's configuration;
 * torchref_service(), called when no candidate runs (the helper's fd,
 * torchref_fd(), is readable, and between candidates), reads what it said,
 * hands the GPU over and blocks until that benchmark is done.  It returns 1
 * once the compile is over (torchref_time_compile() next), 0 while it goes
 * on, -1 + err when the helper failed (the baselines' "compile" then says
 * so; the helper is ended).  torchref_hold() stops the helper (SIGSTOP, its
 * own process: torch.compile's compile workers go on) while a candidate is
 * timed, and lets it go on.  torchref_time_compile() times the compiled
 * model (blocks: the GPU is the helper's) and returns the whole baselines,
 * cached; "compile" carries "background": true, "benchmarks" and
 * "benchmark_seconds" (the hand-overs).  These are no steps: the
 * caller's loop calls them between its own work.
 */
int torchref_compile_pending(const struct torchref *r);
int torchref_fd(const struct torchref *r);
int torchref_service(struct torchref *r, char *err);
void torchref_hold(struct torchref *r, int hold);
const cJSON *torchref_time_compile(struct torchref *r, char *err);
/* 1 when the baselines were read from the cache (nothing was timed) */
int torchref_timing_cached(const struct torchref *r);
/* kill the helper and what it started (its process group) at once, when
 * the worker ends before torchref_finish() (a task error, a quit) */
void torchref_kill(struct torchref *r);
/* the step that tells the helper to finish (it checks that forward() left
 * the parameters alone) and waits for it to end */
int torchref_finish_begin(struct torchref *r, char *err);
/* the same, blocking until it ended: 0 or -1 + err */
int torchref_finish(struct torchref *r, char *err);

/*
 * Describe problem file zProblem without a worker (torchref.py --describe:
 * shapes on PyTorch 2's meta device, else by running the first set on the
 * CPU): {"inputs", "outputs", "torch", "device", "sizes", ...} as in
 * torchref_manifest(), or NULL + err (the helper's own one-line message).
 * zShapes / zSize as --shapes / --size (NULL: none).  Blocks, at most
 * timeoutS seconds (0: TORCHREF_DESCRIBE_S): a problem whose code never
 * returns is stopped and said to be so; one whose code crashes is said to
 * have.
 */
#define TORCHREF_DESCRIBE_S 300
cJSON *torchref_describe(const char *zPython, const char *zProblem, const char *zShapes,
                         const char *zSize, double timeoutS, char *err);
/* in[] and out[] of a description as lines "in[0] x: f32 [8, 32] (forward()
 * input)" (a fresh string) */
char *torchref_tensors_text(const cJSON *desc);

/* locate torchref.py (static string) */
const char *torchref_script(void);

/* kloop's Python file zFile installed beside torchref.py (kbexport.py,
 * modelnew.py), or the path in the environment variable zEnv when it is set:
 * a fresh string */
char *torchref_sibling(const char *zFile, const char *zEnv);

#endif
