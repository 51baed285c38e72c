/*
 * pipeline.c - the idea -> code loop as a set of steps that advance on the
 * event loop: an ideas step (parent evaluated, request, ideas recorded) and
 * implementation branches (parent evaluated, request, candidate, verdict,
 * fix), each waiting on an evaluation or an LLM reply, all journaled.
 */
#include "pipeline.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ideas.h"
#include "prompt.h"
#include "reply.h"
#include "result.h"

#define INSPIRATIONS 2
#define INSPIRATION_MAX (16u << 10)

enum step_kind { STEP_IDEAS, STEP_BRANCH };
enum step_state {
	STEP_PARENTS, /* waiting for the parents' results */
	STEP_LLM,     /* waiting for an LLM reply */
	STEP_EVAL,    /* waiting for the candidate's verdict */
	STEP_DONE,
};

struct step {
	enum step_kind kind;
	enum step_state state;
	struct pipeline *p;
	int parent, parent2; /* candidates (parent2: crossover, 0 otherwise) */
	int n;               /* ideas: how many; branch: branches in the round */
	int idea;            /* branch: the idea */
	int branch;          /* branch: its number, from 1 */
	int attempt;         /* branch: fixes sent so far */
	int cand;            /* branch: the latest candidate (0: none) */
	char *zBadReply;     /* branch: a reply without usable code, for the fix */
	char *zBadReason;    /* ... and why */
	int request;         /* the session's id of the pending LLM request */
	int llmId;           /* the client's id of it */
	struct step *next;
};

struct job {
	int job;  /* worker job id */
	int cand; /* candidate id */
};

struct pipeline {
	struct pipeline_config pc;
	struct worker_config wc;
	struct worker *w;
	struct prompt_vars task; /* the task's placeholders */
	strbuf system;           /* the system prompt */
	struct step *steps;
	struct job *aJob;
	int nJob;
	size_t nJobAlloc;
	int submitting; /* the candidate being submitted (a worker may answer at once) */
	int nEvals;     /* evaluations running */
	int depth;      /* advance() calls on the stack */
};

static void advance(struct pipeline *p);

static void say(struct pipeline *p, const char *zFmt, ...) __attribute__((format(printf, 2, 3)));
static void say(struct pipeline *p, const char *zFmt, ...)
{
	if (!p->pc.hooks || !p->pc.hooks->log)
		return;
	strbuf sb = STRBUF_INIT;
	va_list ap;
	va_start(ap, zFmt);
	sb_vaddf(&sb, zFmt, ap);
	va_end(ap);
	p->pc.hooks->log(sb.buf, p->pc.arg);
	sb_free(&sb);
}

#define HOOK(p, name, ...)                                                                         \
	do {                                                                                       \
		if ((p)->pc.hooks && (p)->pc.hooks->name)                                          \
			(p)->pc.hooks->name(__VA_ARGS__, (p)->pc.arg);                             \
	} while (0)

static int emit(struct pipeline *p, cJSON *ev, char *err)
{
	char e2[KL_ERRLEN];
	if (session_emit(p->pc.ses, ev, err ? err : e2) < 0) {
		if (!err)
			say(p, "cannot journal an event: %s", e2);
		return -1;
	}
	return 0;
}

static cJSON *event(const char *zType)
{
	cJSON *e = cJSON_CreateObject();
	cJSON_AddStringToObject(e, "type", zType);
	return e;
}

/* ---- evaluation ---- */

static void on_verdict(int job, cJSON *result, void *arg)
{
	struct pipeline *p = arg;
	int cand = 0;
	/* a job that ends inside worker_submit() has no id yet (-1) */
	for (int i = 0; i < p->nJob && !cand; i++)
		if (p->aJob[i].job == job ||
		    (p->aJob[i].job == -1 && p->aJob[i].cand == p->submitting)) {
			cand = p->aJob[i].cand;
			p->aJob[i] = p->aJob[--p->nJob];
		}
	if (!cand)
		return;
	p->nEvals--;
	struct cand *c = state_cand(&p->pc.ses->st, cand);
	if (!c)
		return;
	cJSON *r = cJSON_Duplicate(result, 1);
	result_complete(r, p->w, p->pc.zTaskName, c->zName, p->pc.zBackend);
	cJSON *e = event("eval_finished");
	cJSON_AddNumberToObject(e, "candidate", cand);
	cJSON_AddItemToObject(e, "result", cJSON_Duplicate(r, 1));
	emit(p, e, NULL);
	HOOK(p, verdict, cand, r);
	cJSON_Delete(r);
	advance(p);
}

int pipeline_evaluate(struct pipeline *p, int candId, char *err)
{
	struct cand *c = state_cand(&p->pc.ses->st, candId);
	if (!c)
		return kl_err(err, "no candidate %d in the session", candId);
	if (p->pc.evaluate)
		return p->pc.evaluate(candId, p->pc.arg, err);
	cJSON *e = event("eval_started");
	cJSON_AddNumberToObject(e, "candidate", candId);
	cJSON_AddStringToObject(e, "backend", p->pc.zBackend);
	if (emit(p, e, err) < 0)
		return -1;
	if (!p->w)
		p->w = worker_new(p->pc.l, &p->wc, on_verdict, NULL, p);
	c = state_cand(&p->pc.ses->st, candId);
	p->nEvals++;
	p->submitting = candId;
	xgrow((void **)&p->aJob, &p->nJobAlloc, (size_t)p->nJob + 1, sizeof *p->aJob);
	struct job *j = &p->aJob[p->nJob++];
	j->cand = candId;
	j->job = -1;
	int id = worker_submit(p->w, c->zName, c->zSource, strlen(c->zSource));
	/* the job may have ended inside worker_submit (a worker that cannot start) */
	for (int i = 0; i < p->nJob; i++)
		if (p->aJob[i].cand == candId && p->aJob[i].job == -1)
			p->aJob[i].job = id;
	p->submitting = 0;
	return 0;
}

int pipeline_add_source(struct pipeline *p, const char *zName, const char *zSource,
                        const char *zOrigin, char *err)
{
	const struct state *st = &p->pc.ses->st;
	for (int i = 0; i < st->nCand; i++)
		if (!strcmp(st->aCand[i].zSource, zSource))
			return st->aCand[i].id;
	int id = state_next_id(st);
	cJSON *e = event("candidate_added");
	cJSON_AddNumberToObject(e, "id", id);
	cJSON_AddStringToObject(e, "name", zName);
	cJSON_AddStringToObject(e, "origin", zOrigin);
	cJSON_AddArrayToObject(e, "parents");
	cJSON_AddStringToObject(e, "source", zSource);
	return emit(p, e, err) < 0 ? -1 : id;
}

/* ---- prompts ---- */

static void inspirations(struct pipeline *p, const struct step *s, struct prompt_vars *v)
{
	const struct state *st = &p->pc.ses->st;
	int used[INSPIRATIONS] = {0};
	strbuf sb = STRBUF_INIT;
	for (int k = 0; k < INSPIRATIONS; k++) {
		const struct cand *best = NULL;
		for (int i = 0; i < st->nCand; i++) {
			const struct cand *c = &st->aCand[i];
			int skip = c->id == s->parent || c->id == s->parent2 || c->speedup <= 0 ||
			           strlen(c->zSource) > INSPIRATION_MAX;
			for (int u = 0; u < k; u++)
				skip |= used[u] == c->id;
			if (!skip && (!best || c->speedup > best->speedup))
				best = c;
		}
		if (!best)
			break;
		used[k] = best->id;
		sb_addf(&sb, "%s (correct, %.3gx the baseline%s%s):\n```\n%s%s```\n\n", best->zName,
		        best->speedup, best->zIdea ? "; idea: " : "",
		        best->zIdea ? best->zIdea : "", best->zSource,
		        *best->zSource && best->zSource[strlen(best->zSource) - 1] != '\n' ? "\n"
		                                                                           : "");
	}
	prompt_set(v, "inspirations", sb.buf);
	sb_free(&sb);
}

static void idea_vars(struct pipeline *p, int ideaId, struct prompt_vars *v)
{
	const struct state_idea *d = state_idea(&p->pc.ses->st, ideaId);
	prompt_set(v, "idea.title", d ? d->zTitle : "");
	prompt_set(v, "idea.description", d ? d->zDescription : "");
	prompt_set(v, "idea.category", d ? d->zCategory : "");
}

static void cand_vars(struct pipeline *p, const char *zPrefix, int id, struct prompt_vars *v)
{
	const struct cand *c = state_cand(&p->pc.ses->st, id);
	prompt_candidate_vars(v, zPrefix, c ? c->zName : "", c ? c->zSource : "",
	                      c ? c->result : NULL);
}

/* the prompt for step s's next request: template zName with everything the
 * templates may use */
static int build(struct pipeline *p, struct step *s, const char *zName, strbuf *out, char *err)
{
	struct prompt_vars v = {0};
	for (int i = 0; i < p->task.n; i++)
		prompt_set(&v, p->task.azKey[i], p->task.azVal[i]);
	cand_vars(p, "parent", s->parent, &v);
	cand_vars(p, "parent2", s->parent2, &v);
	cand_vars(p, "failed", s->zBadReply ? 0 : s->cand, &v);
	prompt_set(&v, "failed.reason", s->zBadReason);
	prompt_set(&v, "failed.reply", s->zBadReply);
	idea_vars(p, s->idea, &v);
	prompt_setf(&v, "n", "%d", s->n);
	prompt_setf(&v, "branch", "%d", s->branch);
	prompt_setf(&v, "branches", "%d", s->n);
	strbuf cats = STRBUF_INIT;
	for (int i = 0; ideas_categories[i]; i++)
		sb_addf(&cats, "%s%s", i ? ", " : "", ideas_categories[i]);
	prompt_set(&v, "categories", cats.buf);
	sb_free(&cats);
	inspirations(p, s, &v);
	int rc = prompt_build(zName, &v, out, err);
	prompt_vars_free(&v);
	return rc;
}

/* ---- LLM requests ---- */

static void on_llm_delta(int id, const char *z, size_t n, void *arg)
{
	(void)id;
	struct step *s = arg;
	HOOK(s->p, delta, s->request, z, n);
}

static void on_llm_retry(int id, int attempt, double delay, const char *zWhy, void *arg)
{
	(void)id;
	struct step *s = arg;
	say(s->p, "request %d: %s; attempt %d in %.1f s", s->request, zWhy, attempt, delay);
}

static void on_ideas_reply(struct step *s, const struct llm_reply *r);
static void on_branch_reply(struct step *s, const struct llm_reply *r);

static void on_llm_done(int id, const struct llm_reply *r, void *arg)
{
	(void)id;
	struct step *s = arg;
	struct pipeline *p = s->p;
	cJSON *e = event("llm_response");
	cJSON_AddNumberToObject(e, "request", s->request);
	cJSON_AddStringToObject(e, "status", r->zStatus);
	cJSON_AddStringToObject(e, "text", r->zText);
	if (r->zError)
		cJSON_AddStringToObject(e, "error", r->zError);
	cJSON_AddNumberToObject(e, "http_status", r->httpStatus);
	cJSON_AddNumberToObject(e, "input_tokens", (double)r->inTokens);
	cJSON_AddNumberToObject(e, "output_tokens", (double)r->outTokens);
	if (r->cost >= 0)
		cJSON_AddNumberToObject(e, "cost", r->cost);
	cJSON_AddNumberToObject(e, "latency_s", r->latencyS);
	cJSON_AddNumberToObject(e, "first_token_s", r->firstTokenS);
	cJSON_AddNumberToObject(e, "attempts", r->attempts);
	cJSON_AddStringToObject(e, "stop", r->zStop);
	cJSON_AddStringToObject(e, "provider", llm_provider_name(p->pc.llm));
	cJSON_AddStringToObject(e, "model", llm_model(p->pc.llm));
	emit(p, e, NULL);
	s->llmId = 0;
	if (s->kind == STEP_IDEAS)
		on_ideas_reply(s, r);
	else
		on_branch_reply(s, r);
	advance(p);
}

/* journal and send step s's request (purpose: ideas, implement, fix,
 * crossover); 0 or -1 + err */
static int ask(struct pipeline *p, struct step *s, const char *zPurpose, char *err)
{
	strbuf prompt = STRBUF_INIT;
	if (build(p, s, zPurpose, &prompt, err) < 0) {
		sb_free(&prompt);
		return -1;
	}
	s->request = state_next_request_id(&p->pc.ses->st);
	cJSON *e = event("llm_request");
	cJSON_AddNumberToObject(e, "request", s->request);
	cJSON_AddStringToObject(e, "purpose", zPurpose);
	cJSON_AddStringToObject(e, "provider", llm_provider_name(p->pc.llm));
	cJSON_AddStringToObject(e, "model", llm_model(p->pc.llm));
	cJSON_AddStringToObject(e, "base_url", llm_endpoint(p->pc.llm));
	cJSON_AddStringToObject(e, "system", p->system.buf ? p->system.buf : "");
	cJSON_AddStringToObject(e, "prompt", prompt.buf);
	cJSON_AddNumberToObject(e, "parent", s->parent);
	if (s->kind == STEP_BRANCH) {
		cJSON_AddNumberToObject(e, "idea", s->idea);
		cJSON_AddNumberToObject(e, "branch", s->branch);
		cJSON_AddNumberToObject(e, "attempt", s->attempt);
		if (s->attempt && s->cand)
			cJSON_AddNumberToObject(e, "fixes", s->cand);
	}
	if (emit(p, e, err) < 0) {
		sb_free(&prompt);
		return -1;
	}
	static const struct llm_hooks hooks = {on_llm_delta, on_llm_retry, on_llm_done};
	struct llm_request rq = {p->system.buf, prompt.buf, 0};
	s->llmId = llm_submit(p->pc.llm, &rq, &hooks, s, err);
	sb_free(&prompt);
	if (s->llmId < 0) {
		s->llmId = 0;
		return -1;
	}
	s->state = STEP_LLM;
	return 0;
}

/* ---- ideas ---- */

static void on_ideas_reply(struct step *s, const struct llm_reply *r)
{
	struct pipeline *p = s->p;
	s->state = STEP_DONE;
	char err[KL_ERRLEN];
	if (strcmp(r->zStatus, "ok")) {
		HOOK(p, ideas, s->request, NULL, 0, r->zError ? r->zError : r->zStatus);
		return;
	}
	struct idea_list l;
	if (ideas_parse(r->zText, r->nText, &l, err) < 0) {
		HOOK(p, ideas, s->request, NULL, 0, err);
		return;
	}
	int *ids = xcalloc((size_t)l.n, sizeof *ids);
	int n = 0;
	for (int i = 0; i < l.n && i < s->n; i++) {
		int id = state_next_idea_id(&p->pc.ses->st);
		cJSON *e = event("idea_proposed");
		cJSON_AddNumberToObject(e, "id", id);
		cJSON_AddStringToObject(e, "title", l.a[i].zTitle);
		cJSON_AddStringToObject(e, "description", l.a[i].zDescription);
		cJSON_AddStringToObject(e, "category", l.a[i].zCategory);
		cJSON_AddStringToObject(e, "origin", "llm");
		cJSON_AddNumberToObject(e, "request", s->request);
		cJSON_AddNumberToObject(e, "parent", s->parent);
		if (emit(p, e, NULL) == 0)
			ids[n++] = id;
	}
	HOOK(p, ideas, s->request, ids, n, NULL);
	free(ids);
	ideas_free(&l);
}

/* ---- branches ---- */

static const char *extension(struct pipeline *p, int parent)
{
	const struct cand *c = state_cand(&p->pc.ses->st, parent);
	const char *dot = c ? strrchr(c->zName, '.') : NULL;
	if (dot)
		return dot;
	return !strcmp(p->pc.zBackend, "cuda") ? ".cu" : ".c";
}

static void branch_end(struct step *s, const char *zError)
{
	s->state = STEP_DONE;
	HOOK(s->p, branch, s->idea, s->branch, s->cand, zError);
}

/* send the fix prompt, or end the branch when no fix is left */
static void fix_or_end(struct step *s, const char *zWhy)
{
	struct pipeline *p = s->p;
	char err[KL_ERRLEN];
	if (s->attempt >= p->pc.fixAttempts) {
		branch_end(s, s->zBadReply ? zWhy : NULL);
		return;
	}
	s->attempt++;
	say(p, "idea %d branch %d: %s; sending it back (fix %d of %d)", s->idea, s->branch, zWhy,
	    s->attempt, p->pc.fixAttempts);
	if (ask(p, s, "fix", err) < 0)
		branch_end(s, err);
}

static void on_branch_reply(struct step *s, const struct llm_reply *r)
{
	struct pipeline *p = s->p;
	char err[KL_ERRLEN];
	if (strcmp(r->zStatus, "ok")) {
		branch_end(s, r->zError ? r->zError : r->zStatus);
		return;
	}
	/* a fix applies to the failed candidate; the first reply to the parent */
	int base = s->cand ? s->cand : s->parent;
	const struct cand *bc = state_cand(&p->pc.ses->st, base);
	struct reply_code code;
	free(s->zBadReply);
	free(s->zBadReason);
	s->zBadReply = s->zBadReason = NULL;
	int rc = reply_code(bc->zSource, strlen(bc->zSource), r->zText, r->nText, &code, err);
	if (rc == 0 && !strcmp(code.zSource, bc->zSource)) {
		kl_err(err, "the reply's code is %s unchanged", bc->zName);
		reply_code_free(&code);
		rc = -1;
	}
	if (rc < 0) {
		s->zBadReply = xstrndup(r->zText, r->nText);
		s->zBadReason = xstrdup(err);
		say(p, "idea %d branch %d: no usable code in the reply: %s", s->idea, s->branch,
		    err);
		fix_or_end(s, err);
		return;
	}
	const struct state_idea *d = state_idea(&p->pc.ses->st, s->idea);
	int id = state_next_id(&p->pc.ses->st);
	char *name = s->attempt
	                 ? xasprintf("idea%d-b%d-fix%d%s", s->idea, s->branch, s->attempt,
	                             extension(p, s->parent))
	                 : xasprintf("idea%d-b%d%s", s->idea, s->branch, extension(p, s->parent));
	cJSON *e = event("candidate_added");
	cJSON_AddNumberToObject(e, "id", id);
	cJSON_AddStringToObject(e, "name", name);
	cJSON_AddStringToObject(e, "origin", s->parent2 ? "crossover" : "llm");
	cJSON *ps = cJSON_AddArrayToObject(e, "parents");
	cJSON_AddItemToArray(ps, cJSON_CreateNumber(base));
	if (s->parent2 && !s->attempt)
		cJSON_AddItemToArray(ps, cJSON_CreateNumber(s->parent2));
	cJSON_AddStringToObject(e, "source", code.zSource);
	cJSON_AddNumberToObject(e, "idea_id", s->idea);
	cJSON_AddStringToObject(e, "idea", d ? d->zTitle : "");
	cJSON_AddNumberToObject(e, "request", s->request);
	cJSON_AddNumberToObject(e, "branch", s->branch);
	cJSON_AddNumberToObject(e, "attempt", s->attempt);
	cJSON_AddStringToObject(e, "changes", code.zChanges);
	free(name);
	reply_code_free(&code);
	if (emit(p, e, err) < 0) {
		branch_end(s, err);
		return;
	}
	s->cand = id;
	HOOK(p, candidate, id, s->branch, s->attempt);
	s->state = STEP_EVAL;
	if (pipeline_evaluate(p, id, err) < 0)
		branch_end(s, err);
}

/* a branch's candidate has its verdict */
static void on_branch_verdict(struct step *s)
{
	const struct cand *c = state_cand(&s->p->pc.ses->st, s->cand);
	const char *st = c ? c->zStatus : "error";
	if (!strcmp(st, "compile_error") || !strcmp(st, "incorrect") || !strcmp(st, "crashed") ||
	    !strcmp(st, "timeout")) {
		char *why = xasprintf("%s is %s", c->zName, st);
		fix_or_end(s, why);
		free(why);
		return;
	}
	branch_end(s, NULL);
}

/* ---- advancing ---- */

/* 1 when candidate id has a verdict (or does not exist); starts its
 * evaluation when it has none and none runs */
static int evaluated(struct pipeline *p, int id)
{
	const struct cand *c = state_cand(&p->pc.ses->st, id);
	if (!c || !p->pc.evaluateParents)
		return 1;
	if (!strcmp(c->zStatus, "new")) {
		char err[KL_ERRLEN];
		if (pipeline_evaluate(p, id, err) < 0)
			say(p, "cannot evaluate %s: %s", c->zName, err);
		c = state_cand(&p->pc.ses->st, id);
	}
	return strcmp(c->zStatus, "new") && strcmp(c->zStatus, "evaluating");
}

static void step_advance(struct pipeline *p, struct step *s)
{
	char err[KL_ERRLEN];
	if (s->state == STEP_PARENTS) {
		int a = evaluated(p, s->parent), b = !s->parent2 || evaluated(p, s->parent2);
		if (!a || !b)
			return;
		const char *purpose = s->kind == STEP_IDEAS ? "ideas"
		                      : s->parent2          ? "crossover"
		                                            : "implement";
		if (ask(p, s, purpose, err) == 0)
			return;
		if (s->kind == STEP_IDEAS) {
			s->state = STEP_DONE;
			HOOK(p, ideas, 0, NULL, 0, err);
		} else {
			branch_end(s, err);
		}
	} else if (s->state == STEP_EVAL) {
		const struct cand *c = state_cand(&p->pc.ses->st, s->cand);
		if (!c || (strcmp(c->zStatus, "new") && strcmp(c->zStatus, "evaluating")))
			on_branch_verdict(s);
	}
}

/* move every step on as far as it goes (re-entrant calls are folded into
 * the outermost one) */
static void advance(struct pipeline *p)
{
	if (p->depth++) {
		p->depth = 2;
		return;
	}
	do {
		p->depth = 1;
		for (struct step *s = p->steps; s; s = s->next)
			if (s->state == STEP_PARENTS || s->state == STEP_EVAL)
				step_advance(p, s);
	} while (p->depth > 1);
	p->depth = 0;
}

static struct step *add_step(struct pipeline *p, enum step_kind kind, int parent)
{
	struct step *s = xcalloc(1, sizeof *s);
	s->kind = kind;
	s->p = p;
	s->parent = parent;
	struct step **pp = &p->steps;
	while (*pp)
		pp = &(*pp)->next;
	*pp = s;
	return s;
}

int pipeline_ideas(struct pipeline *p, int parent, int n, char *err)
{
	if (!state_cand(&p->pc.ses->st, parent))
		return kl_err(err, "no candidate %d in the session", parent);
	if (n < 1 || n > IDEAS_MAX)
		return kl_err(err, "the number of ideas must be 1 to %d, not %d", IDEAS_MAX, n);
	struct step *s = add_step(p, STEP_IDEAS, parent);
	s->n = n;
	advance(p);
	return 0;
}

int pipeline_implement(struct pipeline *p, int ideaId, int parent, int parent2, int nBranches,
                       char *err)
{
	const struct state *st = &p->pc.ses->st;
	const struct state_idea *d = state_idea(st, ideaId);
	if (!d)
		return kl_err(err, "no idea %d in the session", ideaId);
	if (!strcmp(d->zStatus, "rejected"))
		return kl_err(err, "idea %d (%s) was rejected", ideaId, d->zTitle);
	if (!state_cand(st, parent) || (parent2 && !state_cand(st, parent2)))
		return kl_err(err, "no candidate %d in the session",
		              state_cand(st, parent) ? parent2 : parent);
	if (nBranches < 1 || nBranches > 64)
		return kl_err(err, "the number of branches must be 1 to 64, not %d", nBranches);
	if (!strcmp(d->zStatus, "pending") && pipeline_idea_accept(p, ideaId, err) < 0)
		return -1;
	for (int b = 1; b <= nBranches; b++) {
		struct step *s = add_step(p, STEP_BRANCH, parent);
		s->parent2 = parent2;
		s->idea = ideaId;
		s->branch = b;
		s->n = nBranches;
	}
	advance(p);
	return 0;
}

/* ---- ideas decided by people ---- */

/* a new event zType for idea ideaId, or NULL + err when there is no such idea */
static cJSON *idea_event(struct pipeline *p, const char *zType, int ideaId, char *err)
{
	if (!state_idea(&p->pc.ses->st, ideaId))
		return kl_err(err, "no idea %d in the session", ideaId), NULL;
	cJSON *e = event(zType);
	cJSON_AddNumberToObject(e, "id", ideaId);
	return e;
}

int pipeline_idea_accept(struct pipeline *p, int ideaId, char *err)
{
	cJSON *e = idea_event(p, "idea_accepted", ideaId, err);
	return e ? emit(p, e, err) : -1;
}

int pipeline_idea_reject(struct pipeline *p, int ideaId, const char *zReason, char *err)
{
	cJSON *e = idea_event(p, "idea_rejected", ideaId, err);
	if (e && zReason)
		cJSON_AddStringToObject(e, "reason", zReason);
	return e ? emit(p, e, err) : -1;
}

int pipeline_idea_edit(struct pipeline *p, int ideaId, const char *zTitle, const char *zDescription,
                       const char *zCategory, char *err)
{
	cJSON *e = idea_event(p, "idea_edited", ideaId, err);
	if (!e)
		return -1;
	if (zTitle)
		cJSON_AddStringToObject(e, "title", zTitle);
	if (zDescription)
		cJSON_AddStringToObject(e, "description", zDescription);
	if (zCategory)
		cJSON_AddStringToObject(e, "category", ideas_category(zCategory, NULL));
	return emit(p, e, err);
}

int pipeline_idea_new(struct pipeline *p, const char *zText, int parent, char *err)
{
	size_t k = strcspn(zText, "\n");
	if (!k)
		return kl_err(err, "an idea needs some text");
	struct idea_list l = {0};
	char *first = xstrndup(zText, k);
	if (k > 80) {
		/* cut at the last space before 80 characters */
		size_t cut = 80;
		while (cut > 40 && first[cut] != ' ')
			cut--;
		strcpy(first + cut, "...");
	}
	ideas_add(&l, first, zText, NULL);
	free(first);
	int id = state_next_idea_id(&p->pc.ses->st);
	cJSON *e = event("idea_proposed");
	cJSON_AddNumberToObject(e, "id", id);
	cJSON_AddStringToObject(e, "title", l.a[0].zTitle);
	cJSON_AddStringToObject(e, "description", l.a[0].zDescription);
	cJSON_AddStringToObject(e, "category", l.a[0].zCategory);
	cJSON_AddStringToObject(e, "origin", "human");
	if (parent)
		cJSON_AddNumberToObject(e, "parent", parent);
	ideas_free(&l);
	return emit(p, e, err) < 0 ? -1 : id;
}

/* ---- the pipeline ---- */

struct pipeline *pipeline_new(const struct pipeline_config *pc, char *err)
{
	struct pipeline *p = xcalloc(1, sizeof *p);
	p->pc = *pc;
	if (pc->wc)
		p->wc = *pc->wc;
	else if (!pc->evaluate) {
		free(p);
		kl_err(err, "a pipeline needs a worker configuration or an evaluate function");
		return NULL;
	}
	prompt_task_vars(&p->task, pc->task, pc->zProblem, pc->zBackend);
	if (prompt_build("system", &p->task, &p->system, err) < 0) {
		pipeline_free(p);
		return NULL;
	}
	return p;
}

void pipeline_free(struct pipeline *p)
{
	if (!p)
		return;
	while (p->steps) {
		struct step *s = p->steps;
		p->steps = s->next;
		if (s->llmId)
			llm_drop(p->pc.llm, s->llmId);
		free(s->zBadReply);
		free(s->zBadReason);
		free(s);
	}
	worker_free(p->w);
	prompt_vars_free(&p->task);
	sb_free(&p->system);
	free(p->aJob);
	free(p);
}

void pipeline_update(struct pipeline *p)
{
	advance(p);
}

int pipeline_busy(const struct pipeline *p)
{
	int n = p->nEvals;
	for (const struct step *s = p->steps; s; s = s->next)
		n += s->state != STEP_DONE;
	return n;
}

struct worker *pipeline_worker(const struct pipeline *p)
{
	return p->w;
}
