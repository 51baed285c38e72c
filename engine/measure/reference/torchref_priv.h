/*
 * torchref_priv.h - what the PyTorch reference's files share, private to
 * them (torchref*.c): the helper's state and its line protocol.  The
 * module's interface is torchref.h.
 *
 *   torchref.c         the helper's process: found, started, its lines and steps (each
 *                      answered by the reply its file hands torchref_await), killed,
 *                      finished, freed
 *   torchref_task.c    the problem: described, made a task, checked, its sets filled
 *   torchref_timing.c  the baselines' timing, cached; torch.compile in the background
 *   torchref_draw.c    a run's fresh inputs and their reference outputs: the harness's source
 */
#ifndef KL_TORCHREF_PRIV_H
#define KL_TORCHREF_PRIV_H

#include <sys/types.h>

#include "torchref.h"
#include "util.h"

/* what answers the step under way: the line o (taken) answers it; 1 when
 * the step is done, 0 when it sent the next request and awaits its reply
 * (torchref_await), -1 + err */
typedef int (*torchref_reply_fn)(struct torchref *r, cJSON *o, char *err);

struct torchref {
	cJSON *manifest; /* the helper's "describe": inputs, outputs, torch, device */
	pid_t pid;       /* the helper serving the problem, or 0 */
	int to, from;    /* its stdin (our end) and stdout (our end) */
	strbuf in;       /* bytes read from it, not yet a line */
	int memfd;       /* host backend: the shared memory one set is written to, or -1 */
	char *map;       /* that memory, mapped */
	size_t mapLen;
	char *zTimingPath; /* where the baselines' timing is cached */
	cJSON *timing;     /* the baselines' timing, or NULL */
	int timingCached;  /* it was read from the cache */
	/* torch.compile compiling in the background (torchref_timing's defer) */
	enum { COMPILE_NONE, COMPILE_RUNNING, COMPILE_OVER, COMPILE_TIMED } compile;
	int held;    /* stopped (SIGSTOP) by torchref_hold() */
	int nGpu;    /* benchmarks it ran on the GPU handed over */
	double gpuS; /* seconds the GPU was handed over for them */
	struct torchref_opts o;
	char *zProblem;
	/* the step under way (torchref.h): the request sent, the reply awaited */
	enum { STEP_NONE, STEP_DESCRIBE, STEP_FILL, STEP_TIME, STEP_CHECK, STEP_FINISH } step;
	torchref_reply_fn onReply; /* what answers it (the file that sent its request) */
	double deadline;           /* when its reply is late (now_s() clock; 0: never) */
	double limitS;             /* the limit that deadline keeps, for the message */
	char zWhat[64];            /* what the helper is doing meanwhile, for the message */
	/* a fill's progress: the harness filled, h's sets the source of a
	 * "fill64" (NULL: a "fill"), the set asked for and where its tensors
	 * go in the host backend's shared memory */
	struct harness *fillH;
	const struct harness *fill64Of;
	struct backend *fillB;
	int fillSet;
	size_t offIn[TASK_MAX_TENSORS], offOut[TASK_MAX_TENSORS];
	double timeSeed; /* the baselines' step: the timing set's seed */
	/* the harness's source (torchref_draw.c): where the helper writes a
	 * run's set (the shared memory's set layout on the host; buffers of
	 * its own on the GPU, shared once), and their targets */
	struct harness *srcH;
	struct backend *srcB;
	int nFwd;                          /* the forward's inputs (then parameters) */
	void *apDrawIn[TASK_MAX_TENSORS];  /* each input's buffer */
	void *apDrawOut[TASK_MAX_TENSORS]; /* each output's */
	int drawOwned;                     /* those are srcB's allocations */
	cJSON *drawIns, *drawOuts;         /* their targets */
};

/* the host backend's shared memory, sized for one set of every tensor
 * (torchref_task.c) */
int torchref_map_sets(struct torchref *r, const struct task *t, char *err);
/* a target for the helper: the device buffer's IPC handle, or bytes of the
 * shared memory at *pOff (advanced) */
cJSON *torchref_target(struct torchref *r, struct backend *b, void *dev, size_t n, size_t *pOff,
                       char *err);
/* the draw buffers freed (torchref_free; torchref_draw.c's failures) */
void torchref_draw_free(struct torchref *r);

/* the helper's next protocol line, parsed; NULL + err when it ended or
 * failed (its own {"ev": "error"} message when it sent one), or sent
 * nothing within limitS seconds (> 0: it is killed; zWhat says what it was
 * doing) */
cJSON *torchref_recv_line(struct torchref *r, double limitS, const char *zWhat, char *err);
/* send the request o (taken) as one line: 0, or -1 + err when the helper
 * is gone */
int torchref_send(struct torchref *r, cJSON *o, char *err);
/* the step `step` now awaits the helper's next line, which reply answers
 * (torchref_step()), within limitS seconds (0: no limit) while it is doing
 * zWhat: the file that sent the step's request hands its reply down, so
 * that torchref.c calls none of the steps' files */
void torchref_await(struct torchref *r, int step, torchref_reply_fn reply, double limitS,
                    const char *zWhat);
/* the last non-empty line of z (malloc'd) */
char *torchref_last_line(const char *z);

#endif
