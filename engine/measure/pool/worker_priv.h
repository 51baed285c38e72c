/*
 * worker_priv.h - what worker.c and worker_get.c share: a worker's state
 * and its unfinished jobs (worker.h is the interface).
 */
#ifndef KL_WORKER_PRIV_H
#define KL_WORKER_PRIV_H

#include <sys/types.h>

#include "loop.h"
#include "util.h"
#include "worker.h"

struct wjob {
	int id;
	struct eval_request rq; /* its request (owned; rq.job is id) */
	int sent;               /* sent to the current worker process */
	int running;            /* the worker said "running" */
	const char *zStage;
	int k;
	struct wjob *next;
};

struct worker {
	struct loop *l;
	struct worker_config cfg;
	worker_end_fn done;
	worker_progress_fn progress;
	void *arg;
	pid_t pid;             /* current process, 0 if none */
	int in, out, err;      /* its stdin (we write), stdout (protocol), stderr */
	struct linebuf outbuf; /* protocol lines received, up to PROTO_LINE_MAX each */
	strbuf tail;           /* last bytes of its stderr (and the candidate's output) */
	int ready;             /* task loaded */
	int helloed;           /* the current process said hello */
	char *zLaunch;         /* its launch command, for messages */
	cJSON *refTiming;      /* from the first task_ready */
	cJSON *baselines;      /* PyTorch eager and torch.compile timings, or NULL */
	cJSON *refData; /* a PyTorch reference's data: {seconds, trials, note, sizes, setup}; a
	                 * kernel reference's {setup}; or NULL */
	char *zRefName;
	char *zDevice;
	char *zHost;         /* the host the worker said it runs on */
	char *zUuid;         /* its GPU's UUID, or NULL */
	double bandwidthGbs; /* its GPU memory's peak bandwidth (hello), 0: unknown */
	char *zTaskError;    /* task-level failure */
	int taskErrorOwn;    /* zTaskError came from the worker itself (a bad task), not its loss */
	int disabled;        /* refused for good (another version) */
	struct wjob *jobs;   /* unfinished jobs, in order */
	int nextId;
	long long timer;     /* the running job's or the setup's deadline */
	long long reapTimer; /* polling for a dying worker's exit */
	struct reap *reap;   /* that poll's state, or NULL */
	int starts;
	char *zSignal;         /* crash note from the worker (candidate_signal/exit) */
	long long kick;        /* the timer that fails jobs of a worker that cannot start */
	char *zSandboxWarning; /* the worker's hello: no sandbox, and why */
	cJSON *measured;       /* the "measured" requests, sent again on a restart */
	/* kept warm (cfg.warmS): the process was started to wait for the next
	 * engine, or is one such that this engine attached to (pid 0: not our
	 * child; warmPid its pid); warmOff after a loss: a plain one next */
	int warm, attached, warmOff;
	pid_t warmPid;
};

#endif
