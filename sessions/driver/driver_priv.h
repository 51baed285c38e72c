/*
 * driver_priv.h - what the driver's files share (driver.c: the session,
 * its evaluations and opening; driver_llm.c: the LLM pipeline;
 * driver_profile.c: Nsight Compute in the background): struct driver's
 * fields.  Private to them.
 */
#ifndef KL_DRIVER_PRIV_H
#define KL_DRIVER_PRIV_H

#include "driver.h"

/* the fields are the driver's own files' (sessions/ is built with
 * KL_SESSIONS): a front end asks through driver.h's functions */
#ifndef KL_SESSIONS
#error "driver_priv.h is private to sessions/: use driver.h's functions"
#endif

struct profile_run;

struct driver {
	struct loop *l;           /* the caller's loop */
	struct session *ses;      /* the session (journal open for appending, or memory) */
	const struct config *cfg; /* the caller's configuration */
	struct worker_config wc;  /* the workers' settings (worker_config_from(cfg)) */
	struct pool *pool;        /* the workers and their queue (pool.h) */
	char **argvLaunch;        /* worker launch command, or NULL */
	char *zTaskDir;           /* the task's directory (or .py file) */
	char *zTaskName;          /* its name */
	struct task *task;        /* the task (NULL for a KernelBench problem file) */
	char *zBackend;           /* host or cuda */
	char *zShapes;            /* shape set, or NULL */
	char *zReference;         /* reference kind, or NULL */
	struct driver_job *aJob;  /* evaluations queued or running, in submission order */
	int nJob;
	size_t nJobAlloc;
	struct llm *llm;               /* the LLM client, once an LLM command needed it */
	struct pipeline *p;            /* the idea -> code pipeline (pipeline.h), likewise */
	int bNoEvalParents;            /* driver_opts.bNoEvalParents */
	int bSandboxWarned;            /* the pool's sandbox warning was noted */
	struct driver_stream *aStream; /* replies streaming in, oldest first */
	int nStream;
	size_t nStreamAlloc;
	int nFinished;           /* evaluations finished since opening */
	pipeline_limit_fn limit; /* the pipeline's limit (driver_limit), or NULL */
	void *limitArg;
	struct eval_request evalReq;  /* what every eval request carries
	                               * (driver_set_eval_request) */
	struct profile_run *profiles; /* Nsight Compute runs (driver_profile.c) */
	cJSON *remeasure;             /* a re-measure of the baseline asked for: the devices
	                               * it was journaled for so far (NULL: none asked) */
	driver_notify_fn notify;      /* the front end's callback, or NULL */
	void *arg;                    /* its argument */
};

/* tell the front end n */
static inline void note(struct driver *drv, const struct driver_note *n)
{
	if (drv->notify)
		drv->notify(drv->arg, n);
}

static inline void note_simple(struct driver *drv, enum driver_note_kind kind, int cand,
                               const char *zText)
{
	struct driver_note n = {.kind = kind, .cand = cand, .zText = zText};
	note(drv, &n);
}

/* result r of candidate c (NULL: gone), from device zDevice (NULL: none
 * said), completed (result_complete_from()) against the session's baseline
 * there, and a re-measure asked for journaled (driver_baseline.c) */
void driver_result_complete(struct driver *drv, const struct cand *c, cJSON *r,
                            const char *zDevice);

/* profiles of drv running (driver_profile.c) */
int driver_profiles(const struct driver *drv);
/* end them (driver_close()) */
void driver_profiles_end(struct driver *drv);

#endif
