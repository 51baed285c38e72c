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

#include "loop.h"

struct worker_config {
	char **argvLaunch;    /* launch command (NULL: the kloop-worker next to kloop) */
	const char *zBackend; /* "host" or "cuda" */
	const char *zTaskDir; /* task directory, task.json or KernelBench .py file */
	const char *zShapes;  /* shape set, or NULL */
	const char *zReference; /* "host", "cuda", "torch" or NULL (the backend's default) */
	const char *zPython;  /* interpreter for torch references (NULL: python3) */
	int nTrials;          /* correctness trials (0: default) */
	double budgetS;       /* timing budget per candidate (0: default) */
	double runTimeoutS;   /* wall-clock limit from "running" to the result */
	double setupTimeoutS; /* limit for starting the worker and loading the task */
	int jobs;             /* parallel compiles (0: all cores) */
};

struct worker;

/* a job's end: result is {"status": ..., ...} (owned by the callee's caller:
 * valid only during the call) */
typedef void (*worker_done_fn)(int job, cJSON *result, void *arg);
/* progress: stage is "compiling", "compiled", "running", "checking", "timing" */
typedef void (*worker_progress_fn)(int job, const char *zStage, int k, void *arg);

/* a worker service on loop l (the process starts on the first submit) */
struct worker *worker_new(struct loop *l, const struct worker_config *cfg, worker_done_fn done,
			  worker_progress_fn progress, void *arg);
void worker_free(struct worker *w);

/* queue a candidate (source text, copied) under a file name; returns the job id */
int worker_submit(struct worker *w, const char *zName, const char *zSource, size_t nSource);

/* jobs not yet finished */
int worker_pending(const struct worker *w);

/* the reference's timing ({"median_ms", ...}) once the task is loaded, or NULL */
const cJSON *worker_reference_timing(const struct worker *w);
/* the PyTorch baselines ({"eager": {...}, "compile": {...}}) when the
 * reference is PyTorch, or NULL */
const cJSON *worker_baselines(const struct worker *w);
/* the reference's description ("reference.c", "reference.py (torch)") or NULL */
const char *worker_reference_name(const struct worker *w);
/* the device the worker reported, or NULL before it started */
const char *worker_device(const struct worker *w);
/* a task-level failure (the worker could not load the task), or NULL */
const char *worker_task_error(const struct worker *w);
/* number of worker processes started so far */
int worker_starts(const struct worker *w);

#endif
