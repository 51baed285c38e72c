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
#include "runner_int.h"
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

int runner_llm(struct runner *rn, char *err)
{
	if (rn->p)
		return 0;
	struct llm_config lc;
	if (llm_config_from(&lc, rn->cfg, err) < 0)
		return -1;
	if (!rn->llm && !(rn->llm = llm_new(rn->l, &lc, err)))
		return -1;
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
	return rn->p ? 0 : -1;
}

int runner_ideas(struct runner *rn, int parent, int n, int round, char *err)
{
	return runner_llm(rn, err) < 0 ? -1 : pipeline_ideas(rn->p, parent, n, round, err);
}

int runner_idea_accept(struct runner *rn, int id, char *err)
{
	return runner_llm(rn, err) < 0 ? -1 : pipeline_idea_accept(rn->p, id, err);
}

int runner_idea_reject(struct runner *rn, int id, char *err)
{
	return runner_llm(rn, err) < 0 ? -1 : pipeline_idea_reject(rn->p, id, NULL, err);
}

int runner_idea_revise(struct runner *rn, int id, const char *zTitle, const char *zDescription,
                       char *err)
{
	if (runner_llm(rn, err) < 0)
		return -1;
	return pipeline_idea_edit(rn->p, id, zTitle, zDescription, NULL, err);
}

int runner_idea_new(struct runner *rn, const char *zText, int parent, char *err)
{
	return runner_llm(rn, err) < 0 ? -1 : pipeline_idea_new(rn->p, zText, parent, err);
}

int runner_implement(struct runner *rn, int id, int parent, int nBranches, int round, char *err)
{
	return runner_crossover(rn, id, parent, 0, nBranches, round, err);
}

int runner_crossover(struct runner *rn, int id, int parent, int parent2, int nBranches, int round,
                     char *err)
{
	return runner_llm(rn, err) < 0
	           ? -1
	           : pipeline_implement(rn->p, id, parent, parent2, nBranches, round, err);
}

int runner_branch_resume(struct runner *rn, const struct state_branch *b, int nBranches, int round,
                         char *err)
{
	return runner_llm(rn, err) < 0 ? -1
	                               : pipeline_branch_resume(rn->p, b, nBranches, round, err);
}

int runner_llm_busy(const struct runner *rn)
{
	return rn->p ? pipeline_busy(rn->p) : 0;
}

int runner_busy(const struct runner *rn)
{
	return runner_jobs(rn) > 0 || runner_llm_busy(rn) > 0;
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

int runner_translate(struct runner *rn, int n, char *err)
{
	return runner_llm(rn, err) < 0 ? -1 : pipeline_translate(rn->p, n, err);
}

int runner_no_repeats(struct runner *rn, char *err)
{
	if (runner_llm(rn, err) < 0)
		return -1;
	pipeline_no_repeats(rn->p, 1);
	return 0;
}

void runner_limit(struct runner *rn, pipeline_limit_fn fn, void *arg)
{
	rn->limit = fn;
	rn->limitArg = arg;
	if (rn->p)
		pipeline_limit(rn->p, fn, arg);
}

int runner_round_busy(const struct runner *rn, int round, int *pUnsent)
{
	if (pUnsent)
		*pUnsent = 0;
	return rn->p ? pipeline_round_busy(rn->p, round, pUnsent) : 0;
}

void runner_usd(const struct runner *rn, double *pHeld, double *pNext)
{
	*pHeld = *pNext = 0;
	if (rn->p)
		pipeline_usd(rn->p, pHeld, pNext);
}

int runner_llm_room(const struct runner *rn)
{
	return !rn->llm || llm_pending(rn->llm) < llm_max_in_flight(rn->llm);
}

int runner_idea_reject_why(struct runner *rn, int id, const char *zReason, char *err)
{
	return runner_llm(rn, err) < 0 ? -1 : pipeline_idea_reject(rn->p, id, zReason, err);
}

int runner_cancel_request(struct runner *rn, int request, char *err)
{
	if (!rn->p)
		return kl_err(err, "LLM request %d is not running", request);
	return pipeline_cancel(rn->p, request, err);
}

int runner_requests(const struct runner *rn, struct pipeline_request *a, int max)
{
	return rn->p ? pipeline_requests(rn->p, a, max) : 0;
}
