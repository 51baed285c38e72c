/*
 * harness.h - checking and timing one loaded candidate against a task's
 * reference data on a backend: guard bands around every buffer, outputs
 * poisoned before every run, inputs verified unchanged, several trials with
 * fresh inputs, then timing with the caches flushed between runs until the
 * median is stable, and the output of a timed run checked too.
 */
#ifndef KL_HARNESS_H
#define KL_HARNESS_H

#include <cJSON.h>
#include <stdint.h>

#include "backend.h"
#include "kloop.h"
#include "task.h"

typedef int (*kl_run_fn)(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *stream);

struct harness_opts {
	int nTrials;       /* correctness trials (at least 1; default 5) */
	uint64_t seed;     /* base seed of the trial inputs */
	double budgetS;    /* wall-time budget of one timing phase, seconds */
	double rse;        /* target relative standard error of the mean (0.005) */
	int minRuns;       /* timed runs at least (10) */
	int maxRuns;       /* timed runs at most (10000) */
	double warmupS;    /* warm-up time at least, seconds */
};

/* fill o with the defaults for a backend ("host" or "cuda") */
void harness_default_opts(struct harness_opts *o, const char *zBackend);

struct harness;

/* a harness for task t on backend b (neither owned); allocates the guarded
 * device buffers.  NULL + err on failure. */
struct harness *harness_new(const struct task *t, struct backend *b, const struct harness_opts *o,
			    char *err);
void harness_free(struct harness *h);

/* draw every trial's inputs (and the timing set's) from the seeds, on the
 * device; 0 or -1 + err */
int harness_generate_inputs(struct harness *h, char *err);

/* set trial s's input i, or expected output j, from host memory (copied to
 * the device); s ranges over 0..nTrials (nTrials is the timing set).
 * 0 or -1 + err */
int harness_set_input(struct harness *h, int s, int i, const void *p, char *err);
int harness_set_expected(struct harness *h, int s, int j, const void *p, char *err);

/* number of input sets (trials + the timing set) */
int harness_nsets(const struct harness *h);

/* run the reference on every set to produce the expected outputs.
 * 0, or -1 with err saying what went wrong with the reference. */
int harness_run_reference(struct harness *h, kl_run_fn fn, char *err);

/* progress callback: stage is "checking" or "timing"; k is the trial or run */
typedef void (*harness_progress_fn)(const char *zStage, int k, void *arg);

/*
 * Check and (when correct and bTime) time fn.  Returns a JSON object the
 * caller owns: {"status": "correct"|"incorrect"|"crashed", "reason": ...,
 * "correctness": {...}, "timing": {...}}.  A sticky device error sets
 * b->fatal: the caller must not run anything else in this process.
 */
cJSON *harness_eval(struct harness *h, kl_run_fn fn, int bTime, harness_progress_fn progress,
		    void *arg);

/* time fn alone on the timing set (for the reference); JSON timing or NULL + err */
cJSON *harness_time_only(struct harness *h, kl_run_fn fn, char *err);

/* 1 while a candidate's kl_run is executing (for exit() diagnosis) */
extern volatile int harness_in_candidate;

#endif
