/*
 * describe.h - a verdict's facts in words, once for every front end: the
 * workbench's Results and `show`, `kloop eval`'s lines and the prompt that
 * tells the LLM how its code fared render the same lines, each in its own
 * layout (issue 26: one result_describe(), not three).
 */
#ifndef KL_DESCRIBE_H
#define KL_DESCRIBE_H

#include <cJSON.h>

#include "verdict.h"

/* one fact: a short label ("checked", "time", "precision") and its text,
 * one line without a newline; alarm: a fact that withholds a rank (an
 * unverified time, a suspect one, reduced precision), which a screen shows
 * in capitals */
typedef void (*result_line_fn)(void *arg, const char *zLabel, const char *zText, int alarm);

/* the parts of a description, for a front end that lays them out apart */
enum {
	RD_COMPILE = 1, /* the kernels' resources, the vectoriser's remarks */
	RD_CHECKS = 2,  /* correctness, tolerance, precision, roofline, suspect, profile */
	RD_TIME = 4,    /* the time and how it was taken */
	RD_WARN = 8,    /* warnings: a throttling GPU, state kept between calls */
	RD_ALL = 15,
};

/*
 * The measured facts of result r (the parts in mask: RD_ALL for all), in
 * order, each given to emit: a PyTorch extension's or ModelNew's form (and
 * the outputs it copied), the
 * kernels' resources, the host compiler's vectorisation remarks, the
 * correctness check and its tolerance, the precision verdict, the roofline
 * and a suspect time, Nsight Compute's summary, the time with how it was
 * taken (not timed again, the clock, unverified, bound by CPU time), and
 * warnings (state kept between calls, a throttling GPU).  Text from the
 * result is passed as it is: a terminal front end cleans what it prints.
 * The verdict, the compile, the baselines and what only a front end knows
 * (the session's baseline, the precision policy) are the front end's.
 */
void verdict_describe(const struct verdict *v, unsigned mask, result_line_fn emit, void *arg);
/* the same of a result not decoded yet (r decoded: verdict.h); nothing for NULL */
void result_describe(const cJSON *r, unsigned mask, result_line_fn emit, void *arg);

#endif
