/*
 * worker.h - the engine's side of a kloop-worker: start it from a launch
 * command, load the task into it, send it candidates, follow their progress,
 * enforce wall-clock timeouts, and when a candidate crashes or hangs report
 * `crashed` or `timeout` (signal or reason, the last lines of its output) and
 * start a fresh worker for the next job.
 */
#ifndef KL_WORKER_H
#define KL_WORKER_H

#include <cJSON.h>
#include <stddef.h>

#include "config.h"
#include "loop.h"
#include "protocol.h"

/* the seconds a worker has from its start to its hello (it says hello before
 * loading anything: its backend and compiler made, the GPU's bandwidth
 * measured); one that says nothing by then is not a kloop-worker, or hangs,
 * and its jobs fail with an error naming its launch command.  The setup
 * limit (setupTimeoutS) bounds the task's loading after the hello. */
#define WORKER_HELLO_S 25.0

struct worker_config {
	char **argvLaunch;      /* launch command (NULL: the kloop-worker next to kloop) */
	const char *zBackend;   /* "host" or "cuda" */
	const char *zTaskDir;   /* task directory, task.json or KernelBench .py file */
	const char *zShapes;    /* shape set, or NULL */
	const char *zReference; /* "host", "cuda", "torch" or NULL (the backend's default) */
	const char *zPython;    /* interpreter for torch references (NULL: python3) */
	int nTrials;            /* correctness trials (0: default) */
	double budgetS;         /* timing budget per candidate (0: default) */
	double runTimeoutS;     /* wall-clock limit from "running" to the result */
	double setupTimeoutS;   /* limit for starting the worker and loading the task */
	double helloTimeoutS;   /* limit for its first word, the hello (0: WORKER_HELLO_S) */
	int jobs;               /* parallel compiles (0: all cores) */
	int spares;             /* spare runners kept ahead (0 to 8), where bSpares */
	int bSpares;            /* spares was given (else: the worker's default) */
	int shipTask;           /* send the task's files with it (a worker on another host) */
	int noSandbox;          /* candidates run without bubblewrap (--no-sandbox) */
	int bTol;               /* atol / rtol below were given (a zeroed config has none) */
	double atol, rtol;      /* tolerance overrides for float outputs (< 0: the task's) */
	double size;            /* size factor of a KernelBench problem (0: as written) */
	const char *zLibs;      /* libraries candidates link ("cublas cudnn"), or NULL */
	/* a search on the GPU: torch.compile's baseline of a PyTorch reference
	 * compiles in the background while candidates run (its "compile" is
	 * {"pending": true} until then); onBaselines hears the whole baselines
	 * when they come (NULL: not told) */
	int deferCompile;
	/* kloop eval: a worker kept warm for the next eval of the same task,
	 * warmS seconds at most (worker/warm.c, worker_warm.h): one waiting is
	 * attached to, else the one started waits when this engine is done
	 * (0: none; only where the pool is one local worker) */
	double warmS;
	void (*onBaselines)(const char *zDevice, const cJSON *baselines, void *arg);
	void *baselinesArg;
};

struct worker;

/* a job's end: result is {"status": ..., ...} (owned by the callee's caller:
 * valid only during the call) */
typedef void (*worker_done_fn)(int job, cJSON *result, void *arg);

/* how a worker's job ended: its result, and whether the worker itself was
 * lost meanwhile (it died with no crash note from the candidate, could not
 * start, or was refused), so that a pool can run the job elsewhere; job
 * control, not verdict: the result never carries it */
struct worker_end {
	cJSON *result; /* owned by the caller, valid only during the call */
	int lost;      /* the worker was lost, not the candidate's fault */
	int disabled;  /* ... refused for good (it is another kloop's version) */
};
typedef void (*worker_end_fn)(int job, const struct worker_end *e, void *arg);
/* progress: stage is "compiling", "compiled", "running", "checking", "timing" */
typedef void (*worker_progress_fn)(int job, const char *zStage, int k, void *arg);

/* a worker service on loop l (the process starts on the first submit); SIGPIPE is
 * ignored from then on (unless the caller handles it), so that a request to a worker
 * that just died fails instead of ending kloop */
struct worker *worker_new(struct loop *l, const struct worker_config *cfg, worker_end_fn done,
                          worker_progress_fn progress, void *arg);
void worker_free(struct worker *w);

/* queue a candidate (source text, copied) under a file name; returns the job
 * id.  The worker answers later, from the loop, never from inside this call
 * (even a worker that cannot start fails the job on the next turn). */
int worker_submit(struct worker *w, const char *zName, const char *zSource, size_t nSource);
/* the same for a whole eval request (protocol.h: the candidate, the quick
 * timing's stop, the A/B's incumbent and pairs; copied; rq->job is set
 * here) */
int worker_submit_req(struct worker *w, const struct eval_request *rq);
/* drop job id when it has not started running (waiting, or compiling): the
 * worker is told to forget it and no result comes; 0, or -1 when it runs
 * (or is unknown), which only a restart of the worker stops */
int worker_cancel_waiting(struct worker *w, int id);

/*
 * Tell the worker (now, and again whenever it restarts) that machine code
 * with hash zCode (codehash.h) was timed in this session for the candidate
 * named zLabel ("cand4.c") on a device named zDevice, with that timing: a
 * candidate of another name with this code hash, on a device of that name,
 * is checked but not timed, and its result carries that timing and
 * "not_timed": "same machine code as cand4.c, not timed again".  The worker
 * remembers what it timed itself as well.  (A candidate of the same name,
 * benched again, is timed again.)
 */
void worker_code_measured(struct worker *w, const char *zDevice, const char *zCode,
                          const char *zLabel, const cJSON *timing);

/* fill the settings that come from the configuration (python, trials,
 * budget, timeout, jobs, tolerances, size, libs) into wc; the caller sets the launch command, the
 * backend, the task, the shapes and the reference.  wc keeps pointers into
 * cfg, which must outlive it. */
void worker_config_from(struct worker_config *wc, const struct config *cfg);

/* jobs not yet finished */
int worker_pending(const struct worker *w);
/* close the worker's input, its jobs done: it exits by itself, and so does
 * a launch command that waits for it (ncu, which writes its report then);
 * worker_pid() is 0 once it has been reaped.  No job may be submitted
 * after. */
void worker_end(struct worker *w);

/* 1 once the worker's task is loaded (its setup, the reference's data and
 * timing and the baselines, is done), 0 before, and again while a restarted
 * worker sets up */
int worker_ready(const struct worker *w);
/* the reference's timing ({"median_ms", ...}) once the task is loaded, or NULL */
const cJSON *worker_reference_timing(const struct worker *w);
/* the PyTorch baselines ({"eager": {...}, "compile": {...}}) when the
 * reference is PyTorch, or NULL */
const cJSON *worker_baselines(const struct worker *w);
/* a PyTorch reference's data as the worker made it: {"seconds" (to make every
 * set on the device), "trials" (kept), "note" (fewer trials, why), "sizes"
 * (constants --shapes/--size changed)}, or NULL */
const cJSON *worker_reference_data(const struct worker *w);
/* the reference's description ("reference.c", "reference.py (torch)") or NULL */
const char *worker_reference_name(const struct worker *w);
/* the GPU memory's peak bandwidth the worker reported in GB/s (0: unknown,
 * the host backend, or before it started) */
double worker_bandwidth_gbs(const struct worker *w);
/* the device the worker reported, or NULL before it started */
const char *worker_device(const struct worker *w);
/* a task-level failure (the worker could not load the task), or NULL */
const char *worker_task_error(const struct worker *w);
/* why candidates run unsandboxed although the sandbox was asked for
 * (bubblewrap cannot run here), or NULL */
const char *worker_sandbox_warning(const struct worker *w);
/* number of worker processes started so far */
int worker_starts(const struct worker *w);
/* the host the worker said it runs on, or NULL before it started */
const char *worker_host(const struct worker *w);
/* its GPU's UUID, or NULL (host backend, no NVML, before it started) */
const char *worker_uuid(const struct worker *w);
/* the worker process's pid (its process group), or 0 when none runs */
int worker_pid(const struct worker *w);
/* 1 when the worker was refused for good (it is another kloop's version) */
int worker_disabled(const struct worker *w);
/*
 * The command that starts a kloop-worker with c's settings: zProgram (NULL:
 * the kloop-worker beside this kloop) then --backend, --jobs, --python.  A
 * NULL-terminated argv the caller frees (each string, then the array).
 * Jobs the worker could not finish because the worker itself was lost end
 * with struct worker_end's lost (and disabled when it was refused for good),
 * so that a pool can run them elsewhere.
 */
char **worker_launch_argv(const struct worker_config *c, const char *zProgram);
/*
 * Whether candidates run in the bubblewrap sandbox: on every backend unless
 * --no-sandbox / sandbox = off.
 */
int worker_sandboxed(const struct worker_config *c);

/* the task's files (a directory's regular text files up to 4 MiB each, or
 * the one .py problem), for a worker that cannot see this host's files:
 * {name: text} (caller frees) */
cJSON *worker_task_files(const char *zTask);

#endif
