/*
 * torchref_priv.h - what the PyTorch reference's files share, private to
 * them (torchref*.c): the helper's state and its line protocol.  The
 * module's interface is torchref.h.
 *
 *   torchref.c         the helper's process: found, started, its lines, killed, finished
 *   torchref_task.c    the problem: described, made a task, checked, its sets filled
 *   torchref_timing.c  the baselines' timing, cached; torch.compile in the background
 */
#ifndef KL_TORCHREF_PRIV_H
#define KL_TORCHREF_PRIV_H

#include <sys/types.h>

#include "torchref.h"
#include "util.h"

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
};

/* the helper's next protocol line, parsed; NULL + err when it ended or
 * failed (its own {"ev": "error"} message when it sent one), or sent
 * nothing within limitS seconds (> 0: it is killed; zWhat says what it was
 * doing) */
cJSON *torchref_recv_line(struct torchref *r, double limitS, const char *zWhat, char *err);
/* send the request o (taken) as one line: 0, or -1 + err when the helper
 * is gone */
int torchref_send(struct torchref *r, cJSON *o, char *err);
/* the last non-empty line of z (malloc'd) */
char *torchref_last_line(const char *z);

#endif
