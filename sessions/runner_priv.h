/*
 * runner_priv.h - what the runner's files share (runner.c: the session,
 * its evaluations and opening; runner_llm.c: the LLM pipeline;
 * runner_profile.c: Nsight Compute in the background): struct runner's
 * fields.  Private to them.
 */
#ifndef KL_RUNNER_PRIV_H
#define KL_RUNNER_PRIV_H

#include "runner.h"

/* the fields are the runner's own files' (sessions/ is built with
 * KL_SESSIONS): a front end asks through runner.h's functions */
#ifndef KL_SESSIONS
#error "runner_priv.h is private to sessions/: use runner.h's functions"
#endif

struct profile_run;

struct runner {
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
	struct runner_job *aJob;  /* evaluations queued or running, in submission order */
	int nJob;
	size_t nJobAlloc;
	struct llm *llm;               /* the LLM client, once an LLM command needed it */
	struct pipeline *p;            /* the idea -> code pipeline (pipeline.h), likewise */
	int bNoEvalParents;            /* runner_opts.bNoEvalParents */
	int bSandboxWarned;            /* the pool's sandbox warning was noted */
	struct runner_stream *aStream; /* replies streaming in, oldest first */
	int nStream;
	size_t nStreamAlloc;
	int nFinished;           /* evaluations finished since opening */
	pipeline_limit_fn limit; /* the pipeline's limit (runner_limit), or NULL */
	void *limitArg;
	struct eval_request evalReq;  /* what every eval request carries
	                               * (runner_set_eval_request) */
	struct profile_run *profiles; /* Nsight Compute runs (runner_profile.c) */
	cJSON *remeasure;             /* a re-measure of the baseline asked for: the devices
	                               * it was journaled for so far (NULL: none asked) */
	runner_notify_fn notify;      /* the front end's callback, or NULL */
	void *arg;                    /* its argument */
};

/* tell the front end n */
static inline void note(struct runner *rn, const struct runner_note *n)
{
	if (rn->notify)
		rn->notify(rn->arg, n);
}

static inline void note_simple(struct runner *rn, enum runner_note_kind kind, int cand,
                               const char *zText)
{
	struct runner_note n = {.kind = kind, .cand = cand, .zText = zText};
	note(rn, &n);
}

/* result r of candidate c (NULL: gone), from device zDevice (NULL: none
 * said), completed (result_complete_from()) against the session's baseline
 * there, and a re-measure asked for journaled (runner_baseline.c) */
void runner_result_complete(struct runner *rn, const struct cand *c, cJSON *r, const char *zDevice);

/* profiles of rn running (runner_profile.c) */
int runner_profiles(const struct runner *rn);
/* end them (runner_close()) */
void runner_profiles_end(struct runner *rn);

#endif
