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

#include "archive.h"
#include "ideas.h"
#include "prompt.h"
#include "reply.h"
#include "emit.h"
#include "status.h"
#include "result.h"
#include "torchext.h"
#include "torchref.h"

#include "pipeline_priv.h"

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

/* an emitter's failure that no caller can take: said on the log */
static int said(struct pipeline *p, int rc, const char *zErr)
{
	if (rc < 0)
		say(p, "cannot journal an event: %s", zErr);
	return rc;
}

/* ---- evaluation ---- */

int pipeline_evaluate(struct pipeline *p, int candId, char *err)
{
	if (!state_cand(&p->pc.ses->st, candId))
		return kl_err(err, "no candidate %d in the session", candId);
	return p->pc.evaluate(candId, p->pc.arg, err);
}

int pipeline_add_source(struct pipeline *p, const char *zName, const char *zSource,
                        const char *zOrigin, char *err)
{
	const struct cand *same = state_cand_by_source(&p->pc.ses->st, zSource);
	if (same)
		return same->id;
	struct ev_candidate c = {.zName = zName, .zOrigin = zOrigin, .zSource = zSource};
	return ev_candidate_added(p->pc.ses, &c, err);
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
static int reply_same_as(struct step *s, const struct llm_reply *r);

static void on_llm_done(int id, const struct llm_reply *r, void *arg)
{
	(void)id;
	struct step *s = arg;
	struct pipeline *p = s->p;
	struct ev_llm_response ev = {
	    .zStatus = r->zStatus,
	    .zText = r->zText,
	    .zError = r->zError,
	    .zStop = r->zStop,
	    .httpStatus = r->httpStatus,
	    .attempts = r->attempts,
	    .inTokens = r->inTokens,
	    .outTokens = r->outTokens,
	    .cost = r->cost,
	    .latencyS = r->latencyS,
	    .firstTokenS = r->firstTokenS,
	    .zProvider = llm_provider_name(p->pc.llm),
	    .zModel = llm_model(p->pc.llm),
	    .sameAs = reply_same_as(s, r),
	};
	char err[KL_ERRLEN];
	said(p, ev_llm_response(p->pc.ses, s->request, &ev, err), err);
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
	if (pipeline_build(p, s, zPurpose, &prompt, err) < 0) {
		sb_free(&prompt);
		return -1;
	}
	/* what it may cost, with what is in flight, before it goes out: its
	 * reply at most twice the longest yet (4096 tokens at least), or the
	 * configured max_tokens.  Under a dollar budget the request carries
	 * that cap (a longer reply would pass the budget: a search spent
	 * $0.020667 of $0.02 when a reply outgrew the longest before it),
	 * halved down to 512 tokens where the budget cannot pay for more */
	size_t nIn = p->system.len + prompt.len;
	long out =
	    2 * p->pc.ses->st.llm.maxOutTokens > 4096 ? 2 * p->pc.ses->st.llm.maxOutTokens : 4096;
	double est = llm_cost_estimate(p->pc.llm, nIn, out), held;
	est = est > 0 ? est : 0;
	pipeline_usd(p, &held, NULL);
	const char *stop = p->limit ? p->limit(p->limitArg, 0, held + est) : NULL;
	int budget = est > 0 && p->limit && !p->limit(p->limitArg, 0, 0) &&
	             p->limit(p->limitArg, 0, 1e300) && !llm_max_tokens(p->pc.llm);
	while (stop && budget && out > 512) {
		out /= 2;
		est = llm_cost_estimate(p->pc.llm, nIn, out);
		stop = p->limit(p->limitArg, 0, held + est);
	}
	p->usdNext = est;
	if (stop) {
		sb_free(&prompt);
		return kl_err(err, "%s: no %s request sent", stop, zPurpose);
	}
	int branch = s->kind == STEP_BRANCH;
	s->zPurpose = zPurpose;
	s->tAsked = now_s();
	struct ev_llm_request q = {
	    .zPurpose = zPurpose,
	    .zProvider = llm_provider_name(p->pc.llm),
	    .zModel = llm_model(p->pc.llm),
	    .zBaseUrl = llm_endpoint(p->pc.llm),
	    .zSystem = p->system.buf,
	    .zPrompt = prompt.buf,
	    .parent = s->parent,
	    .idea = branch ? s->idea : 0,
	    .branch = s->branch,
	    .attempt = s->attempt,
	    .fixes = s->attempt ? s->cand : 0,
	    .round = s->round,
	};
	if ((s->request = ev_llm_request(p->pc.ses, &q, err)) < 0) {
		s->request = 0;
		sb_free(&prompt);
		return -1;
	}
	static const struct llm_hooks hooks = {on_llm_delta, on_llm_retry, on_llm_done};
	struct llm_request rq = {p->system.buf, prompt.buf, budget ? (int)out : 0};
	s->llmId = llm_submit(p->pc.llm, &rq, &hooks, s, err);
	sb_free(&prompt);
	if (s->llmId < 0) {
		s->llmId = 0;
		return -1;
	}
	s->state = STEP_LLM;
	s->usdHold = est;
	return 0;
}

/* ---- ideas ---- */

static void on_ideas_reply(struct step *s, const struct llm_reply *r)
{
	struct pipeline *p = s->p;
	s->state = STEP_DONE;
	char err[KL_ERRLEN];
	if (!r->ok) {
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
		/* one proposed for this parent before (or earlier in this reply)
		 * is journaled as the duplicate it is: never asked again */
		const struct state_idea *o =
		    state_idea_same(&p->pc.ses->st, s->parent, l.a[i].zTitle, l.a[i].zDescription);
		int dupOf = o ? o->id : 0;
		struct ev_idea d = {
		    .zTitle = l.a[i].zTitle,
		    .zDescription = l.a[i].zDescription,
		    .zCategory = l.a[i].zCategory,
		    .zOrigin = "llm",
		    .request = s->request,
		    .parent = s->parent,
		    .round = s->round,
		};
		int id = said(p, ev_idea_proposed(p->pc.ses, &d, err), err);
		if (id > 0 && dupOf)
			said(p, ev_idea_duplicate(p->pc.ses, id, dupOf, err), err);
		if (id > 0)
			ids[n++] = id;
	}
	HOOK(p, ideas, s->request, ids, n, NULL);
	free(ids);
	ideas_free(&l);
}

/* ---- branches ---- */

/* the file extension of a reply's candidate of form (torchext.h): a
 * ModelNew's .py; an extension's its parent's where that is C++ or CUDA, else
 * the backend's; a kernel its parent's, else the backend's */
static const char *extension(struct pipeline *p, int parent, int form)
{
	const struct cand *c = state_cand(&p->pc.ses->st, parent);
	const char *dot = c ? strrchr(c->zName, '.') : NULL;
	int cuda = !strcmp(p->pc.zBackend, "cuda");
	if (form == TORCHEXT_MODELNEW)
		return ".py";
	if (form == TORCHEXT_EXTENSION)
		return dot && (!strcmp(dot, ".cu") || !strcmp(dot, ".cpp") || !strcmp(dot, ".cc"))
		           ? dot
		       : cuda ? ".cu"
		              : ".cpp";
	if (dot && strcmp(dot, ".py"))
		return dot;
	return cuda ? ".cu" : ".c";
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

/* the code of branch s's reply zText: 0 and *code, or -1 and err saying
 * why it has none that can be used (a fix applies to the failed candidate,
 * the first reply to the parent; the same code unchanged is none) */
static int branch_code(struct step *s, const char *zText, size_t nText, struct reply_code *code,
                       char *err)
{
	int base = s->cand ? s->cand : s->parent;
	const struct cand *bc = state_cand(&s->p->pc.ses->st, base);
	const char *zBase = bc ? bc->zSource : ""; /* a translation has no parent */
	int rc = reply_code(zBase, strlen(zBase), zText, nText, code, err);
	if (rc == 0 && bc && !strcmp(code->zSource, bc->zSource)) {
		kl_err(err, "the reply's code is %s unchanged", bc->zName);
		reply_code_free(code);
		rc = -1;
	}
	return rc;
}

/* the candidate whose code branch s's reply r repeats, where the session
 * takes no repeats (on_branch_reply ends the branch there), for the
 * journal; else 0 */
static int reply_same_as(struct step *s, const struct llm_reply *r)
{
	struct reply_code code;
	char err[KL_ERRLEN];
	if (s->kind != STEP_BRANCH || !r->ok || !s->p->noRepeats ||
	    branch_code(s, r->zText, r->nText, &code, err) < 0)
		return 0;
	const struct cand *same = state_cand_by_source(&s->p->pc.ses->st, code.zSource);
	reply_code_free(&code);
	return same ? same->id : 0;
}

static void on_branch_reply(struct step *s, const struct llm_reply *r)
{
	struct pipeline *p = s->p;
	char err[KL_ERRLEN];
	if (!r->ok) {
		branch_end(s, r->zError ? r->zError : r->zStatus);
		return;
	}
	/* a fix applies to the failed candidate; the first reply to the parent */
	int base = s->cand ? s->cand : s->parent;
	struct reply_code code;
	free(s->zBadReply);
	free(s->zBadReason);
	s->zBadReply = s->zBadReason = NULL;
	int rc = branch_code(s, r->zText, r->nText, &code, err);
	if (rc < 0) {
		s->zBadReply = xstrndup(r->zText, r->nText);
		s->zBadReason = xstrdup(err);
		/* said once: in the fix's line, or in the branch's end (a line of
		 * its own before either said it twice, a second apart) */
		char *why = xasprintf("no usable code in the reply: %s", err);
		fix_or_end(s, why);
		free(why);
		return;
	}
	/* code the session has already is not evaluated (or timed) again */
	const struct cand *same =
	    p->noRepeats ? state_cand_by_source(&p->pc.ses->st, code.zSource) : NULL;
	if (same) {
		say(p,
		    "idea %d branch %d: the reply's code is the same as #%d (%s): not "
		    "evaluated again",
		    s->idea, s->branch, same->id, same->zName);
		reply_code_free(&code);
		branch_end(s, NULL);
		return;
	}
	const char *stop = p->limit ? p->limit(p->limitArg, 1, 0) : NULL;
	if (stop) {
		reply_code_free(&code);
		char *why = xasprintf("%s: the reply makes no candidate", stop);
		branch_end(s, why);
		free(why);
		return;
	}
	const struct state_idea *d = state_idea(&p->pc.ses->st, s->idea);
	const char *ext = extension(p, s->parent, code.form);
	char *name = !s->idea && s->attempt
	                 ? xasprintf("translation-b%d-fix%d%s", s->branch, s->attempt, ext)
	             : !s->idea ? xasprintf("translation-b%d%s", s->branch, ext)
	             : s->attempt
	                 ? xasprintf("idea%d-b%d-fix%d%s", s->idea, s->branch, s->attempt, ext)
	                 : xasprintf("idea%d-b%d%s", s->idea, s->branch, ext);
	int aParent[2] = {base, s->parent2}, nParent = 0;
	if (base)
		aParent[nParent++] = base;
	if (s->parent2 && !s->attempt)
		aParent[nParent++] = s->parent2;
	struct ev_candidate ec = {
	    .zName = name,
	    .zOrigin = s->parent2 ? "crossover"
	               : s->idea  ? "llm"
	                          : "translation",
	    .aParent = aParent,
	    .nParent = nParent,
	    .zSource = code.zSource,
	    .zIdea = s->idea ? (d ? d->zTitle : "") : NULL,
	    .ideaId = s->idea,
	    .request = s->request,
	    .branch = s->branch,
	    .attempt = s->attempt,
	    .zChanges = code.zChanges,
	    .round = s->round,
	};
	int id = ev_candidate_added(p->pc.ses, &ec, err);
	free(name);
	reply_code_free(&code);
	if (id < 0) {
		branch_end(s, err);
		return;
	}
	s->cand = id;
	HOOK(p, candidate, id, s->branch, s->attempt);
	s->state = STEP_EVAL;
	if (pipeline_evaluate(p, id, err) < 0)
		branch_end(s, err);
}

/* c's verdict asks for a fix: it failed, or it is correct but of reduced
 * precision where the policy ranks only faithful ones */
static int needs_fix(const struct state *st, const struct cand *c)
{
	return status_fixable(c->status) || state_cand_rank(st, c) == STATE_RANK_REDUCED;
}

/* a branch's candidate has its verdict */
static void on_branch_verdict(struct step *s)
{
	const struct state *st = &s->p->pc.ses->st;
	const struct cand *c = state_cand(st, s->cand);
	if (c && needs_fix(st, c)) {
		char *why = c->status == STATUS_CORRECT
		                ? xasprintf("%s is correct but of reduced precision", c->zName)
		                : xasprintf("%s is %s", c->zName, c->zStatus);
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
	if (c->status == STATUS_NEW) {
		char err[KL_ERRLEN];
		if (pipeline_evaluate(p, id, err) < 0)
			say(p, "cannot evaluate %s: %s", c->zName, err);
		c = state_cand(&p->pc.ses->st, id);
	}
	return status_finished(c->status);
}

static void step_advance(struct pipeline *p, struct step *s)
{
	char err[KL_ERRLEN];
	if (s->state == STEP_PARENTS) {
		int a = evaluated(p, s->parent), b = !s->parent2 || evaluated(p, s->parent2);
		if (!a || !b)
			return;
		/* a parent whose evaluation was cancelled: the work on it is
		 * stopped too, no request goes out */
		int stop = 0;
		for (int k = 0; k < 2; k++) {
			const struct cand *c =
			    state_cand(&p->pc.ses->st, k ? s->parent2 : s->parent);
			if (c && c->status == STATUS_CANCELLED)
				stop = c->id;
		}
		if (stop) {
			char *why = xasprintf("cancelled with candidate %d's evaluation", stop);
			if (s->kind == STEP_IDEAS) {
				s->state = STEP_DONE;
				HOOK(p, ideas, 0, NULL, 0, why);
			} else {
				branch_end(s, why);
			}
			free(why);
			return;
		}
		const char *purpose = s->kind == STEP_IDEAS ? "ideas"
		                      : !s->parent          ? "translate"
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
		if (!c || status_finished(c->status))
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

static struct step *add_step(struct pipeline *p, enum step_kind kind, int parent, int round)
{
	struct step *s = xcalloc(1, sizeof *s);
	s->kind = kind;
	s->p = p;
	s->parent = parent;
	s->round = round > 0 ? round : 0;
	struct step **pp = &p->steps;
	while (*pp)
		pp = &(*pp)->next;
	*pp = s;
	return s;
}

int pipeline_ideas(struct pipeline *p, int parent, int n, int round, char *err)
{
	if (!state_cand(&p->pc.ses->st, parent))
		return kl_err(err, "no candidate %d in the session", parent);
	if (n < 1 || n > IDEAS_MAX)
		return kl_err(err, "the number of ideas must be 1 to %d, not %d", IDEAS_MAX, n);
	struct step *s = add_step(p, STEP_IDEAS, parent, round);
	s->n = n;
	advance(p);
	return 0;
}

int pipeline_implement(struct pipeline *p, int ideaId, int parent, int parent2, int nBranches,
                       int round, char *err)
{
	const struct state *st = &p->pc.ses->st;
	const struct state_idea *d = state_idea(st, ideaId);
	if (!d)
		return kl_err(err, "no idea %d in the session", ideaId);
	if (d->status == IDEA_REJECTED)
		return kl_err(err, "idea %d (%s) was rejected", ideaId, d->zTitle);
	if (!state_cand(st, parent) || (parent2 && !state_cand(st, parent2)))
		return kl_err(err, "no candidate %d in the session",
		              state_cand(st, parent) ? parent2 : parent);
	if (nBranches < 1 || nBranches > 64)
		return kl_err(err, "the number of branches must be 1 to 64, not %d", nBranches);
	if (d->status == IDEA_PENDING && pipeline_idea_accept(p, ideaId, err) < 0)
		return -1;
	for (int b = 1; b <= nBranches; b++) {
		struct step *s = add_step(p, STEP_BRANCH, parent, round);
		s->parent2 = parent2;
		s->idea = ideaId;
		s->branch = b;
		s->n = nBranches;
	}
	advance(p);
	return 0;
}

int pipeline_branch_resume(struct pipeline *p, const struct state_branch *b, int nBranches,
                           int round, char *err)
{
	const struct state *st = &p->pc.ses->st;
	const struct state_idea *d = state_idea(st, b->idea);
	if (!d || d->status == IDEA_REJECTED || !state_cand(st, b->parent))
		return kl_err(err, "idea %d's branch %d cannot go on: its idea or parent is gone",
		              b->idea, b->branch);
	for (struct step *s = p->steps; s; s = s->next)
		if (s->kind == STEP_BRANCH && s->state != STEP_DONE && s->idea == b->idea &&
		    s->branch == b->branch)
			return 0; /* at work in this process */
	const struct cand *c = state_cand(st, b->lastCand);
	/* a reply that made no candidate (after its fixes) ended the branch;
	 * so did a verdict that needs no fix, or the last fix */
	if (b->answered && (!c || b->candRequest != b->lastRequest))
		return 0;
	if (b->answered && status_finished(c->status) &&
	    (!needs_fix(st, c) || b->attempt >= p->pc.fixAttempts))
		return 0;
	struct step *s = add_step(p, STEP_BRANCH, b->parent, round);
	s->idea = b->idea;
	s->branch = b->branch;
	s->n = nBranches;
	if (!b->answered && b->prevNoCand && b->lastAttempt > 0 && b->zReply) {
		/* the fix of a reply with no usable code: sent again, with that
		 * reply (kept in the state) and why it had none */
		s->cand = b->lastFixes;
		s->attempt = b->lastAttempt - 1;
		char why[KL_ERRLEN];
		struct reply_code code;
		if (branch_code(s, b->zReply, strlen(b->zReply), &code, why) == 0) {
			reply_code_free(&code); /* none seen before: as before, no code */
			snprintf(why, sizeof why, "the reply had no usable code");
		}
		s->zBadReply = xstrdup(b->zReply);
		s->zBadReason = xstrdup(why);
		say(p, "idea %d branch %d: cut short before, sending its fix again", b->idea,
		    b->branch);
		fix_or_end(s, why);
		advance(p);
		return 1;
	}
	if (c) {
		/* its fix is asked for (again) once the verdict is in */
		s->cand = c->id;
		s->attempt = b->attempt;
		s->state = STEP_EVAL;
	}
	say(p, "idea %d branch %d: cut short before, %s", b->idea, b->branch,
	    !c                           ? "asking for its implementation again"
	    : status_finished(c->status) ? "sending its fix"
	                                 : "its fix follows the verdict if needed");
	advance(p);
	return 1;
}

int pipeline_translate(struct pipeline *p, int n, char *err)
{
	if (n < 1 || n > 64)
		return kl_err(err, "the number of translations must be 1 to 64, not %d", n);
	for (int b = 1; b <= n; b++) {
		struct step *s = add_step(p, STEP_BRANCH, 0, 0);
		s->branch = b;
		s->n = n;
	}
	advance(p);
	return 0;
}

/* ---- ideas decided by people ---- */

int pipeline_idea_accept(struct pipeline *p, int ideaId, char *err)
{
	return ev_idea_accepted(p->pc.ses, ideaId, err);
}

int pipeline_idea_reject(struct pipeline *p, int ideaId, const char *zReason, char *err)
{
	return ev_idea_rejected(p->pc.ses, ideaId, zReason, err);
}

int pipeline_idea_edit(struct pipeline *p, int ideaId, const char *zTitle, const char *zDescription,
                       const char *zCategory, char *err)
{
	return ev_idea_edited(p->pc.ses, ideaId, zTitle, zDescription, zCategory, err);
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
	if (l.n == 0) /* blanks only: ideas_add keeps no idea without a title */
		return kl_err(err, "an idea needs some text");
	struct ev_idea d = {
	    .zTitle = l.a[0].zTitle,
	    .zDescription = l.a[0].zDescription,
	    .zCategory = l.a[0].zCategory,
	    .zOrigin = "human",
	    .parent = parent,
	};
	int id = ev_idea_proposed(p->pc.ses, &d, err);
	ideas_free(&l);
	return id;
}

/* ---- the pipeline ---- */

/*
 * A KernelBench problem's in[] and out[] by name and shape for the prompts'
 * {{task.tensors}}, as the PyTorch helper describes them (with the worker's
 * --shapes / --size); the generic words stay when it cannot.
 */
static void problem_tensors(struct pipeline *p)
{
	char err[KL_ERRLEN], size[40] = "";
	if (p->pc.size > 0)
		snprintf(size, sizeof size, "%.17g", p->pc.size);
	cJSON *d = torchref_describe(p->pc.zPython, p->pc.zProblem, p->pc.zShapes, size, 0, err);
	if (!d) {
		say(p, "the prompts name no tensors: %s", err);
		return;
	}
	char *z = torchref_tensors_text(d);
	strbuf sb = STRBUF_INIT;
	sb_adds(&sb, z);
	sb_adds(&sb, "in[] is forward()'s inputs in order, then the module's parameters as "
	             "named_parameters() gives them (a module's own before its submodules', "
	             "whatever order __init__ assigns them), then its buffers; out[] is what "
	             "forward() returns. Tensors are contiguous, row-major.\n");
	prompt_set(&p->task, "task.tensors", sb.buf);
	sb_free(&sb);
	free(z);
	cJSON_Delete(d);
}

struct pipeline *pipeline_new(const struct pipeline_config *pc, char *err)
{
	struct pipeline *p = xcalloc(1, sizeof *p);
	if (!pc->evaluate) {
		free(p);
		kl_err(err, "a pipeline needs an evaluate function");
		return NULL;
	}
	p->pc = *pc;
	prompt_task_vars(&p->task, pc->task, pc->zProblem, pc->zBackend);
	if (!pc->task && pc->zProblem)
		problem_tensors(p);
	/* the caller's strings, perhaps on its stack: only pipeline_new reads them */
	p->pc.zPython = p->pc.zShapes = NULL;
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
		if (s->llmId) {
			/* the journal says how the request ended: no request is
			 * left without its response */
			struct ev_llm_response ev = {
			    .zStatus = "cancelled",
			    .zText = "",
			    .zError = "kloop stopped before the reply came",
			    .zStop = "",
			    .cost = -1,
			    .zProvider = llm_provider_name(p->pc.llm),
			    .zModel = llm_model(p->pc.llm),
			};
			char err[KL_ERRLEN];
			ev_llm_response(p->pc.ses, s->request, &ev, err);
			llm_drop(p->pc.llm, s->llmId);
		}
		free(s->zBadReply);
		free(s->zBadReason);
		free(s);
	}
	prompt_vars_free(&p->task);
	sb_free(&p->system);
	free(p);
}

void pipeline_update(struct pipeline *p)
{
	advance(p);
}

int pipeline_busy(const struct pipeline *p)
{
	int n = 0;
	for (const struct step *s = p ? p->steps : NULL; s; s = s->next)
		n += s->state != STEP_DONE;
	return n;
}

int pipeline_round_busy(const struct pipeline *p, int round, int *pUnsent)
{
	int n = 0, unsent = 0;
	for (const struct step *s = p ? p->steps : NULL; s; s = s->next) {
		if (s->round != round || s->state == STEP_DONE)
			continue;
		n++;
		/* an ideas step's implementations go out after its reply */
		unsent += s->kind == STEP_IDEAS || s->state == STEP_PARENTS;
	}
	if (pUnsent)
		*pUnsent = unsent;
	return n;
}

void pipeline_usd(const struct pipeline *p, double *pHeld, double *pNext)
{
	double held = 0;
	for (const struct step *s = p ? p->steps : NULL; s; s = s->next)
		if (s->llmId)
			held += s->usdHold;
	if (pHeld)
		*pHeld = held;
	if (pNext)
		*pNext = p ? p->usdNext : 0;
}

void pipeline_limit(struct pipeline *p, pipeline_limit_fn fn, void *arg)
{
	p->limit = fn;
	p->limitArg = arg;
}

void pipeline_no_repeats(struct pipeline *p, int on)
{
	p->noRepeats = on;
}

int pipeline_requests(const struct pipeline *p, struct pipeline_request *a, int max)
{
	int n = 0;
	for (const struct step *s = p ? p->steps : NULL; s && n < max; s = s->next) {
		if (s->state != STEP_LLM && s->state != STEP_PARENTS)
			continue;
		a[n++] = (struct pipeline_request){
		    .request = s->state == STEP_LLM ? s->request : 0,
		    .zPurpose = s->state == STEP_LLM    ? s->zPurpose
		                : s->kind == STEP_IDEAS ? "ideas"
		                                        : "implement",
		    .idea = s->idea,
		    .branch = s->branch,
		    .parent = s->parent,
		    .tAsked = s->state == STEP_LLM ? s->tAsked : 0,
		};
	}
	return n;
}

int pipeline_cancel(struct pipeline *p, int request, char *err)
{
	for (struct step *s = p ? p->steps : NULL; s; s = s->next) {
		if (s->state != STEP_LLM || s->request != request || !s->llmId)
			continue;
		/* its done hook journals the response as "cancelled" and ends the
		 * step (a cancelled branch is not sent back for a fix) */
		if (llm_cancel(p->pc.llm, s->llmId) < 0)
			return kl_err(err, "LLM request %d is not pending", request);
		return 0;
	}
	return kl_err(err, "LLM request %d is not running", request);
}
