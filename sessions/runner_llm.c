/*
 * runner_llm.c - the runner's LLM client and idea -> code pipeline
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
#include "runner_priv.h"
#include "util.h"

/* ---- the LLM pipeline ---- */

static int eval_hook(int candId, void *arg, char *err)
{
	return runner_bench(arg, candId, err);
}

static void on_ideas(int request, const int *aIdea, int nIdea, const char *zError, void *arg)
{
	struct runner *rn = arg;
	struct runner_note n = {
	    .kind = RUNNER_IDEAS,
	    .request = request,
	    .aIdea = aIdea,
	    .nIdea = nIdea,
	    .zText = nIdea    ? NULL
	             : zError ? zError
	                      : "the reply held none",
	};
	note(rn, &n);
	note_simple(rn, RUNNER_CHANGED, 0, NULL);
}

static void on_candidate(int candId, int branch, int attempt, void *arg)
{
	struct runner *rn = arg;
	const struct cand *c = state_cand(&rn->ses->st, candId);
	struct runner_note n = {
	    .kind = RUNNER_CANDIDATE,
	    .cand = candId,
	    .idea = c ? c->ideaId : 0,
	    .branch = branch,
	    .attempt = attempt,
	};
	note(rn, &n);
}

static void on_branch(int ideaId, int branch, int candId, const char *zError, void *arg)
{
	struct runner *rn = arg;
	if (!zError)
		return;
	struct runner_note n = {
	    .kind = RUNNER_BRANCH,
	    .cand = candId,
	    .idea = ideaId,
	    .branch = branch,
	    .zText = zError,
	};
	note(rn, &n);
}

static void on_delta(int request, const char *z, size_t n, void *arg)
{
	struct runner *rn = arg;
	(void)z;
	struct runner_stream *st = NULL;
	for (int i = 0; i < rn->nStream; i++)
		if (rn->aStream[i].request == request)
			st = &rn->aStream[i];
	if (!st) {
		xgrow((void **)&rn->aStream, &rn->nStreamAlloc, (size_t)rn->nStream + 1,
		      sizeof *rn->aStream);
		st = &rn->aStream[rn->nStream++];
		*st = (struct runner_stream){.request = request, .tStart = now_s()};
	}
	st->nChars += (long)n;
	st->tLast = now_s();
	struct runner_note nt = {.kind = RUNNER_CHANGED, .request = request};
	note(rn, &nt);
}

static void on_log(const char *zLine, void *arg)
{
	note_simple(arg, RUNNER_LOG, 0, zLine);
}

struct pipeline *runner_llm(struct runner *rn, char *err)
{
	if (rn->p)
		return rn->p;
	struct llm_config lc;
	if (llm_config_from(&lc, rn->cfg, err) < 0)
		return NULL;
	if (!rn->llm && !(rn->llm = llm_new(rn->l, &lc, err)))
		return NULL;
	static const struct pipeline_hooks hooks = {
	    .ideas = on_ideas,
	    .candidate = on_candidate,
	    .branch = on_branch,
	    .delta = on_delta,
	    .log = on_log,
	};
	struct pipeline_config pc = {
	    .l = rn->l,
	    .ses = rn->ses,
	    .llm = rn->llm,
	    .task = rn->task,
	    .zProblem = rn->task ? NULL : rn->zTaskDir,
	    .zTaskName = rn->zTaskName,
	    .zBackend = rn->zBackend,
	    .fixAttempts = rn->cfg->fixAttempts,
	    .evaluateParents = !rn->bNoEvalParents,
	    .zPython = rn->cfg->zPython,
	    .zShapes = rn->zShapes,
	    .size = rn->cfg->size,
	    .evaluate = eval_hook,
	    .hooks = &hooks,
	    .arg = rn,
	};
	rn->p = pipeline_new(&pc, err);
	if (rn->p)
		pipeline_limit(rn->p, rn->limit, rn->limitArg);
	return rn->p;
}

struct pipeline *runner_pipeline(const struct runner *rn)
{
	return rn->p;
}

void runner_llm_model(const struct runner *rn, const char **pzProvider, const char **pzModel)
{
	*pzProvider = rn->llm ? llm_provider_name(rn->llm) : NULL;
	*pzModel = rn->llm ? llm_model(rn->llm) : NULL;
}

int runner_busy(const struct runner *rn)
{
	return runner_jobs(rn) > 0 || pipeline_busy(rn->p) > 0;
}

int runner_streams(struct runner *rn, const struct runner_stream **pa)
{
	/* a finished request stops streaming: keep as many of the most
	 * recently active streams as the client has requests pending */
	int pending = rn->llm ? llm_pending(rn->llm) : 0;
	while (rn->nStream > pending) {
		int old = 0;
		for (int i = 1; i < rn->nStream; i++)
			if (rn->aStream[i].tLast < rn->aStream[old].tLast)
				old = i;
		memmove(&rn->aStream[old], &rn->aStream[old + 1],
		        (size_t)(rn->nStream - old - 1) * sizeof *rn->aStream);
		rn->nStream--;
	}
	*pa = rn->aStream;
	return rn->nStream;
}

/* ---- for the search (sessions/search.h) ---- */

void runner_limit(struct runner *rn, pipeline_limit_fn fn, void *arg)
{
	rn->limit = fn;
	rn->limitArg = arg;
	if (rn->p)
		pipeline_limit(rn->p, fn, arg);
}

int runner_llm_room(const struct runner *rn)
{
	return !rn->llm || llm_pending(rn->llm) < llm_max_in_flight(rn->llm);
}
