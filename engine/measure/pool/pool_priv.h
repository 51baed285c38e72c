/*
 * pool_priv.h - what the pool's files share (pool.c: the queue, the
 * workers' slots, dispatch and results; pool_spec.c: the workers spec, the
 * launch commands and the Slurm allocation).  Private to them.
 */
#ifndef KL_POOL_PRIV_H
#define KL_POOL_PRIV_H

#include <sys/types.h>

#include "pool.h"
#include "util.h"

#define MAX_REQUEUE 2     /* a job goes back on the queue at most this often */
#define BACKOFF_MIN_S 0.5 /* first restart delay of a lost worker */
#define BACKOFF_MAX_S 30.0

enum slot_kind { SLOT_LOCAL, SLOT_SSH, SLOT_SLURM, SLOT_CMD, SLOT_ARGV };

struct pjob {
	int id;
	struct eval_request rq; /* its request (owned) */
	int onSlot;             /* the worker it must run on, or -1 */
	int slot;               /* the worker it was given to, or -1 while queued */
	int wjob;               /* that worker's job id, or 0 */
	int attempts;           /* times its worker was lost under it */
	char *zLost;            /* the last loss, for the final reason */
	struct pjob *next;
};

struct slot {
	struct pool *p;
	int idx;
	enum slot_kind kind;
	char *zLabel;
	char *zSpecHost; /* ssh host, or NULL */
	int gpu;         /* GPU index to pin, or -1 */
	char **argvCmd;  /* cmd: template words / the configured launch command */
	char **argvRun;  /* the running worker's launch command (it keeps a pointer) */
	struct worker *w;
	enum pool_state state;
	int nOut;            /* jobs given to it and not finished */
	int nCompile;        /* its compiles at once (0: not known; set as it starts) */
	int nDone, nLost;    /* finished jobs, losses */
	double tBusy, busyS; /* since when it has work; seconds with work */
	double tUp;          /* first start, or 0 */
	double backoffS;     /* next restart delay */
	long long tmRestart; /* the restart timer */
	char *zNote;         /* why it is in backoff or disabled */
};

struct refent {
	char *zDevice;
	cJSON *timing;
	cJSON *baselines;
	cJSON *refData; /* how the reference data was made (a problem file), or NULL */
};

struct pool {
	struct loop *l;
	struct worker_config wc;
	worker_done_fn done;
	worker_progress_fn progress;
	void *arg;
	struct slot *aSlot;
	int nSlot;
	struct pjob *jobs; /* queued and running, in submission order */
	int nextId;
	int nRequeued;
	int capacity;         /* jobs given to one worker at once (0: slot_capacity()) */
	long long tmDispatch; /* the pending dispatch, or 0 */
	struct refent *aRef;  /* reference timing per device model */
	int nRef;
	char *zRefName;
	char *zTaskError;
	char *zSandboxWarning; /* a worker's: candidates run unsandboxed, and why */
	/* Slurm */
	char **argvSalloc; /* salloc's arguments from the spec, or NULL */
	int nSlurmTasks;   /* job steps to run */
	char *zSlurmJob;   /* the allocation, once known */
	int ownAlloc;      /* 1 when this pool made it (and cancels it) */
	pid_t sallocPid;
	int sallocErr;
	strbuf sallocOut;
	long long tmSalloc;
	void (*sallocAnswered)(struct pool *p); /* told when salloc answered (pool.c's dispatch) */
	char *zCtlDir;                          /* ssh ControlPath directory, or NULL */
	char *zRunDir;  /* the run directory of the local workers (their runners' start
	                   order, start_order.h), or NULL */
	char *zRunLock; /* the lock file they are given: in it, or $KLOOP_RUNNER_LOCK */
	int started;
	cJSON *measured; /* code timed in the session: [device, code, label, timing] */
};

/* free a NULL-ended array of words */
void pool_free_words(char **v);
/* words in it */
int pool_nwords(char **v);
/* a new worker slot of kind labelled zLabel */
struct slot *pool_add_slot(struct pool *p, enum slot_kind kind, const char *zLabel);
/* the worker spec z (n bytes): its slots; 0, or -1 + err */
int pool_parse_one(struct pool *p, const char *z, size_t n, char *err);
/* the command that starts slot s's worker */
char **pool_slot_argv(struct pool *p, struct slot *s);
/* ask Slurm for the allocation (salloc); its answer comes from the loop,
 * the Slurm slots made ready (or disabled, saying why) and then answered(p)
 * called */
void pool_slurm_allocate(struct pool *p, void (*answered)(struct pool *p));
/* the local workers' run directory and their runners' start lock in it
 * (start_order.h), unless $KLOOP_RUNNER_LOCK names a lock of the user's or
 * no worker is local; removed by pool_run_dir_remove */
void pool_run_dir_make(struct pool *p);
void pool_run_dir_remove(struct pool *p);

#endif
