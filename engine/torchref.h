/*
 * torchref.h - PyTorch references: runs engine/torchref.py (the Python
 * helper) to turn a KernelBench-style problem into reference data (inputs,
 * parameters and buffers, outputs per trial; eager and torch.compile
 * timings), cached under the cache directory by problem, torch version and
 * device, and hands that data to the harness.
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
	const char *zCacheDir; /* kloop's cache root */
	const char *zDevice;   /* "cuda" or "cpu" */
	int nTrials;           /* correctness trials (the helper writes one more: timing) */
	uint64_t seed;         /* base seed */
	int bTime;             /* time eager and torch.compile */
	double budgetS;        /* timing budget */
};

/*
 * Produce (or find in the cache) the reference data of problem file zProblem.
 * Blocks while the helper runs.  NULL + err on failure; err is one line
 * ("PyTorch is not installed for python3 (...)", the helper's own message).
 */
struct torchref *torchref_prepare(const char *zProblem, const struct torchref_opts *o, char *err);
void torchref_free(struct torchref *r);

/* a task made from the manifest (for a problem file given as the TASK) */
struct task *torchref_make_task(const struct torchref *r, const char *zProblem, char *err);
/* 0 if task t's tensors match the manifest's (count, dtype, shape); -1 + err */
int torchref_check_task(const struct torchref *r, const struct task *t, char *err);
/* load every trial's inputs and expected outputs into h; 0 or -1 + err */
int torchref_fill(const struct torchref *r, struct harness *h, const struct task *t, char *err);
/* the manifest's "timing" object ({"eager": ..., "compile": ...}) or NULL */
const cJSON *torchref_timing(const struct torchref *r);

/* locate torchref.py (static string) */
const char *torchref_script(void);

#endif
