/*
 * driver_llm.c - the driver's LLM client and idea -> code pipeline
 * (pipeline.h), made on first use: asking for ideas, implementations,
 * translations and fixes, the replies streaming in, and what the search
 * asks of them (its round, its limit, its spending).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emit.h"
#include "llm.h"
#include "llm_config.h"
#include "pipeline.h"
#include "driver_priv.h"
#include "util.h"

/* ---- the LLM pipeline ---- */

static int eval_hook(int candId, void *arg, char *err)
{
	return driver_bench(arg, candId, err);
}

static void on_ideas(int request, const int *aIdea, int nIdea, const char *zError, void *arg)
{
	struct driver *drv = arg;
	struct driver_note n = {
	    .kind = DRIVER_IDEAS,
	    .request = request,
	    .aIdea = aIdea,
	    .nIdea = nIdea,
	    .zText = nIdea    ? NULL
	             : zError ? zError
	                      : "the reply held none",
	};
	note(drv, &n);
	note_simple(drv, DRIVER_CHANGED, 0, NULL);
}

static void on_candidate(int candId, int branch, int attempt, void *arg)
{
	struct driver *drv = arg;
	const struct cand *c = state_cand(&drv->ses->st, candId);
	struct driver_note n = {
	    .kind = DRIVER_CANDIDATE,
	    .cand = candId,
	    .idea = c ? c->ideaId : 0,
	    .branch = branch,
	    .attempt = attempt,
	};
	note(drv, &n);
}

static void on_branch(int ideaId, int branch, int candId, const char *zError, void *arg)
{
	struct driver *drv = arg;
	if (!zError)
		return;
	struct driver_note n = {
	    .kind = DRIVER_BRANCH,
	    .cand = candId,
	    .idea = ideaId,
	    .branch = branch,
	    .zText = zError,
	};
	note(drv, &n);
}

static void on_delta(int request, const char *z, size_t n, void *arg)
{
	struct driver *drv = arg;
	(void)z;
	struct driver_stream *st = NULL;
	for (int i = 0; i < drv->nStream; i++)
		if (drv->aStream[i].request == request)
			st = &drv->aStream[i];
	if (!st) {
		xgrow((void **)&drv->aStream, &drv->nStreamAlloc, (size_t)drv->nStream + 1,
		      sizeof *drv->aStream);
		st = &drv->aStream[drv->nStream++];
		*st = (struct driver_stream){.request = request, .tStart = now_s()};
	}
	st->nChars += (long)n;
	st->tLast = now_s();
	struct driver_note nt = {.kind = DRIVER_CHANGED, .request = request};
	note(drv, &nt);
}

static void on_log(const char *zLine, void *arg)
{
	note_simple(arg, DRIVER_LOG, 0, zLine);
}

struct pipeline *driver_llm(struct driver *drv, char *err)
{
	if (drv->p)
		return drv->p;
	struct llm_config lc;
	if (llm_config_from(&lc, drv->cfg, err) < 0)
		return NULL;
	if (!drv->llm && !(drv->llm = llm_new(drv->l, &lc, err)))
		return NULL;
	static const struct pipeline_hooks hooks = {
	    .ideas = on_ideas,
	    .candidate = on_candidate,
	    .branch = on_branch,
	    .delta = on_delta,
	    .log = on_log,
	};
	struct pipeline_config pc = {
	    .l = drv->l,
	    .ses = drv->ses,
	    .llm = drv->llm,
	    .task = drv->task,
	    .zProblem = drv->task ? NULL : drv->zTaskDir,
	    .zTaskName = drv->zTaskName,
	    .zBackend = drv->zBackend,
	    .fixAttempts = drv->cfg->fixAttempts,
	    .evaluateParents = !drv->bNoEvalParents,
	    .zPython = drv->cfg->zPython,
	    .zShapes = drv->zShapes,
	    .size = drv->cfg->size,
	    .evaluate = eval_hook,
	    .hooks = &hooks,
	    .arg = drv,
	};
	drv->p = pipeline_new(&pc, err);
	if (drv->p)
		pipeline_limit(drv->p, drv->limit, drv->limitArg);
	return drv->p;
}

struct pipeline *driver_pipeline(const struct driver *drv)
{
	return drv->p;
}

void driver_llm_model(const struct driver *drv, const char **pzProvider, const char **pzModel)
{
	*pzProvider = drv->llm ? llm_provider_name(drv->llm) : NULL;
	*pzModel = drv->llm ? llm_model(drv->llm) : NULL;
}

int driver_busy(const struct driver *drv)
{
	return driver_jobs(drv) > 0 || pipeline_busy(drv->p) > 0;
}

int driver_streams(struct driver *drv, const struct driver_stream **pa)
{
	/* a finished request stops streaming: keep as many of the most
	 * recently active streams as the client has requests pending */
	int pending = drv->llm ? llm_pending(drv->llm) : 0;
	while (drv->nStream > pending) {
		int old = 0;
		for (int i = 1; i < drv->nStream; i++)
			if (drv->aStream[i].tLast < drv->aStream[old].tLast)
				old = i;
		memmove(&drv->aStream[old], &drv->aStream[old + 1],
		        (size_t)(drv->nStream - old - 1) * sizeof *drv->aStream);
		drv->nStream--;
	}
	*pa = drv->aStream;
	return drv->nStream;
}

/* ---- for the search (sessions/search/search.h) ---- */

void driver_limit(struct driver *drv, pipeline_limit_fn fn, void *arg)
{
	drv->limit = fn;
	drv->limitArg = arg;
	if (drv->p)
		pipeline_limit(drv->p, fn, arg);
}

int driver_llm_room(const struct driver *drv)
{
	return !drv->llm || llm_pending(drv->llm) < llm_max_in_flight(drv->llm);
}
