/*
 * event.c - the event table that folds a journal into the state (one
 * check and one apply per event type), and the fold itself
 * (state_check(), state_apply()).  The typed emitters are emit.c's.
 */
#include "event.h"
#include "event_search.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ideas.h"
#include "json.h"
#include "result.h"
#include "status.h"
#include "util.h"

static void set_str(char **p, const char *z)
{
	free(*p);
	*p = z ? xstrdup(z) : NULL;
}

static double dnum(const cJSON *ev, const char *k)
{
	const cJSON *v = cJSON_GetObjectItem(ev, k);
	/* a journal's numbers are checked before a conversion (inf into long is
	 * undefined); absurd counts are ignored */
	return cJSON_IsNumber(v) && v->valuedouble > 0 && v->valuedouble < 1e12 ? v->valuedouble
	                                                                        : 0;
}

/* ---- session ---- */

static void apply_session_started(struct state *st, const cJSON *ev, double ts)
{
	st->tsStarted = ts;
	set_str(&st->zTask, json_str(ev, "task", NULL));
	set_str(&st->zTaskDir, json_str(ev, "task_dir", NULL));
	set_str(&st->zBackend, json_str(ev, "backend", NULL));
	set_str(&st->zShapes, json_str(ev, "shapes", NULL));
}

/* a re-measure of the session's baseline on a device (issue 39; an old
 * journal's, without a device: the session's on every one): every speedup
 * there is against it from here on */
static int check_baseline(const struct state *st, const cJSON *ev, char *err)
{
	(void)st;
	const cJSON *m = cJSON_GetObjectItem(ev, "median_ms");
	if (!cJSON_IsNumber(m) || !(m->valuedouble > 0) || m->valuedouble > 1e12)
		return kl_err(err, "baseline: \"median_ms\" must be a positive number of ms");
	const cJSON *d = cJSON_GetObjectItem(ev, "device");
	if (d && !cJSON_IsString(d))
		return kl_err(err, "baseline: \"device\" must be a string");
	return 0;
}

static void apply_baseline(struct state *st, const cJSON *ev, double ts)
{
	(void)ts;
	state_set_baseline(st, json_str(ev, "device", NULL),
	                   cJSON_GetObjectItem(ev, "median_ms")->valuedouble, 1);
}

/* the branch (idea, branch), made when make; NULL when there is none */
static struct state_branch *branch_of(struct state *st, int idea, int branch, int make)
{
	struct state_branch *found = state_branch_of(st, idea, branch);
	if (found)
		return found;
	if (!make || idea < 1 || branch < 1)
		return NULL;
	xgrow((void **)&st->aBranch, &st->nBranchAlloc, (size_t)st->nBranch + 1,
	      sizeof *st->aBranch);
	struct state_branch *b = &st->aBranch[st->nBranch++];
	memset(b, 0, sizeof *b);
	b->idea = idea;
	b->branch = branch;
	return b;
}

/* ---- candidates ---- */

static int check_candidate_added(const struct state *st, const cJSON *ev, char *err)
{
	const cJSON *id = cJSON_GetObjectItem(ev, "id");
	if (!cJSON_IsNumber(id) || id->valueint < 1)
		return kl_err(err, "candidate_added without a positive \"id\"");
	if (state_cand(st, id->valueint))
		return kl_err(err, "candidate %d is added twice", id->valueint);
	if (cJSON_GetObjectItem(ev, "idea_id") && !state_idea(st, json_int(ev, "idea_id", 0)))
		return kl_err(err, "candidate_added for an idea that does not exist (%d)",
		              json_int(ev, "idea_id", 0));
	return 0;
}

static void apply_candidate_added(struct state *st, const cJSON *ev, double ts)
{
	xgrow((void **)&st->aCand, &st->nCandAlloc, (size_t)st->nCand + 1, sizeof *st->aCand);
	struct cand *c = &st->aCand[st->nCand++];
	memset(c, 0, sizeof *c);
	state_cand_decode(c); /* no verdict yet */
	c->id = json_int(ev, "id", 0);
	if (c->id > st->maxId)
		st->maxId = c->id;
	set_str(&c->zName, json_str(ev, "name", NULL) ? json_str(ev, "name", NULL) : "candidate");
	set_str(&c->zOrigin, json_str(ev, "origin", NULL) ? json_str(ev, "origin", NULL) : "human");
	set_str(&c->zSource, json_str(ev, "source", NULL) ? json_str(ev, "source", NULL) : "");
	set_str(&c->zIdea, json_str(ev, "idea", NULL));
	c->status = STATUS_NEW;
	set_str(&c->zStatus, status_name(c->status));
	set_str(&c->zReason, "");
	c->timeMs = c->speedup = -1;
	c->tsAdded = ts;
	const cJSON *p, *ps = cJSON_GetObjectItem(ev, "parents");
	cJSON_ArrayForEach(p, ps) if (cJSON_IsNumber(p) && c->nParent < 2)
	    c->aParent[c->nParent++] = p->valueint;
	c->round = ev_round_of(st, ev);
	c->request = json_int(ev, "request", 0) > 0 ? json_int(ev, "request", 0) : 0;
	const struct state_idea *idea = state_idea(st, json_int(ev, "idea_id", 0));
	if (idea) {
		c->ideaId = idea->id;
		if (!c->zIdea)
			set_str(&c->zIdea, idea->zTitle);
	}
	struct state_branch *b = json_int(ev, "request", 0) > 0
	                             ? branch_of(st, c->ideaId, json_int(ev, "branch", 0), 1)
	                             : NULL;
	if (b) {
		b->lastCand = c->id;
		b->candRequest = json_int(ev, "request", 0);
		b->attempt = json_int(ev, "attempt", 0);
		free(b->zReply); /* a candidate came of it */
		b->zReply = NULL;
	}
}

static int check_eval(const struct state *st, const cJSON *ev, char *err)
{
	const cJSON *id = cJSON_GetObjectItem(ev, "candidate");
	if (!cJSON_IsNumber(id) || !state_cand(st, id->valueint))
		return kl_err(err, "%s for a candidate that does not exist",
		              ev_name(ev_type_of(ev)));
	return 0;
}

static void apply_eval_started(struct state *st, const cJSON *ev, double ts)
{
	(void)ts;
	struct cand *c = state_cand(st, json_int(ev, "candidate", 0));
	c->status = STATUS_EVALUATING;
	set_str(&c->zStatus, status_name(c->status));
	c->nUnfinished++; /* until its eval_finished: a poison pill counts them */
	/* an A/B asked for: one cut short is run again as that A/B */
	int ab = json_int(ev, "ab_with", 0);
	c->abWith = ab > 0 && ab != c->id && state_cand(st, ab) ? ab : 0;
}

/* the worker is about to run its code: an evaluation cut short from here
 * on may be the candidate's doing (a poison pill, issue 14); one cut short
 * while it was queued or compiling is not */
static void apply_eval_running(struct state *st, const cJSON *ev, double ts)
{
	(void)ts;
	struct cand *c = state_cand(st, json_int(ev, "candidate", 0));
	if (c->nUnfinished > c->nRunning)
		c->nRunning++;
}

/* what a JSON value is, for a message about one of the wrong shape */
static const char *json_kind(const cJSON *v)
{
	return !v                  ? "nothing"
	       : cJSON_IsString(v) ? "a string"
	       : cJSON_IsNumber(v) ? "a number"
	       : cJSON_IsBool(v)   ? "a boolean"
	       : cJSON_IsNull(v)   ? "null"
	       : cJSON_IsArray(v)  ? "an array"
	                           : "an object";
}

/* a result of the wrong shape is not folded: the candidate keeps its state
 * before it, and the warning says what was expected */
static int check_eval_finished(const struct state *st, const cJSON *ev, char *err)
{
	if (check_eval(st, ev, err) < 0)
		return -1;
	const cJSON *r = cJSON_GetObjectItem(ev, "result");
	if (!cJSON_IsObject(r))
		return kl_err(err, "eval_finished's \"result\" must be an object, not %s",
		              json_kind(r));
	const cJSON *stv = cJSON_GetObjectItem(r, "status");
	if (!cJSON_IsString(stv))
		return kl_err(err,
		              "eval_finished's \"result\".\"status\" must be a string (a status "
		              "such as \"correct\"), not %s",
		              json_kind(stv));
	return 0;
}

static void apply_eval_finished(struct state *st, const cJSON *ev, double ts)
{
	struct cand *c = state_cand(st, json_int(ev, "candidate", 0));
	const cJSON *r = cJSON_GetObjectItem(ev, "result");
	c->nUnfinished = 0;
	c->nRunning = 0;
	c->nEvals++;
	if (!c->firstEval)
		c->firstEval = st->nEvents;
	c->lastEval = st->nEvents;
	c->abWith = 0;
	c->tsEval = ts;
	cJSON_Delete(c->result);
	c->result = r ? cJSON_Duplicate(r, 1) : NULL;
	state_cand_decode(c);
	const struct verdict *v = &c->v;
	/* the status as written (a newer kloop's may be unknown here: an error) */
	set_str(&c->zStatus, *v->zStatus ? v->zStatus : "error");
	c->status = v->status;
	set_str(&c->zReason, v->zReason);
	c->timeMs = isnan(v->timing.medianMs) ? -1 : v->timing.medianMs;
	/* a time kloop's clock could not bound: never ranked (issue 24);
	 * results from before the flag are taken as they were */
	c->unverified = v->timing.unverified;
	c->reduced = v->precision.reduced;
	c->belowFloor = v->roofline.zSuspect != NULL;
	/* the first result from a device says the baseline the session began
	 * with there; every speedup is against it (issue 39) */
	if (!isnan(v->baselineMs) && v->baselineMs < 1e12)
		state_set_baseline(st, v->zDevice ? v->zDevice : "", v->baselineMs, 0);
	state_cand_speedup(st, c);
}

static int check_profile(const struct state *st, const cJSON *ev, char *err)
{
	if (check_eval(st, ev, err) < 0)
		return -1;
	if (!cJSON_IsObject(cJSON_GetObjectItem(ev, "profile")))
		return kl_err(err, "profile without a \"profile\" object");
	return 0;
}

/* Nsight Compute's facts join the candidate's result (until its next one) */
static void apply_profile(struct state *st, const cJSON *ev, double ts)
{
	(void)ts;
	struct cand *c = state_cand(st, json_int(ev, "candidate", 0));
	if (!c->result)
		c->result = cJSON_CreateObject();
	cJSON_DeleteItemFromObject(c->result, "profile");
	cJSON_AddItemToObject(c->result, "profile",
	                      cJSON_Duplicate(cJSON_GetObjectItem(ev, "profile"), 1));
	state_cand_decode(c);
}

static int check_compile_baseline(const struct state *st, const cJSON *ev, char *err)
{
	(void)st;
	if (!json_str(ev, "device", NULL) || !cJSON_IsObject(cJSON_GetObjectItem(ev, "compile")))
		return kl_err(err, "compile_baseline without \"device\" and a \"compile\" object");
	return 0;
}

static void apply_compile_baseline(struct state *st, const cJSON *ev, double ts)
{
	(void)ts;
	const cJSON *cm = cJSON_GetObjectItem(ev, "compile");
	for (int i = 0; i < st->nCand; i++)
		if (st->aCand[i].result &&
		    result_add_compile(st->aCand[i].result, cm, json_str(ev, "device", NULL)) == 0)
			state_cand_decode(&st->aCand[i]);
}

/* ---- ideas ---- */

static int check_idea_proposed(const struct state *st, const cJSON *ev, char *err)
{
	int id = json_int(ev, "id", 0);
	if (id < 1)
		return kl_err(err, "idea_proposed without a positive \"id\"");
	if (state_idea(st, id))
		return kl_err(err, "idea %d is proposed twice", id);
	const char *t = json_str(ev, "title", NULL);
	if (!t || !*t)
		return kl_err(err, "idea_proposed without a \"title\"");
	return 0;
}

static void apply_idea_proposed(struct state *st, const cJSON *ev, double ts)
{
	(void)ts;
	xgrow((void **)&st->aIdea, &st->nIdeaAlloc, (size_t)st->nIdea + 1, sizeof *st->aIdea);
	struct state_idea *d = &st->aIdea[st->nIdea++];
	memset(d, 0, sizeof *d);
	d->id = json_int(ev, "id", 0);
	set_str(&d->zTitle, json_str(ev, "title", NULL));
	set_str(&d->zDescription,
	        json_str(ev, "description", NULL) ? json_str(ev, "description", NULL) : "");
	set_str(&d->zCategory,
	        json_str(ev, "category", NULL) ? json_str(ev, "category", NULL) : "other");
	d->status = IDEA_PENDING;
	set_str(&d->zOrigin, json_str(ev, "origin", NULL) ? json_str(ev, "origin", NULL) : "llm");
	d->parent = json_int(ev, "parent", 0);
	d->request = json_int(ev, "request", 0);
	d->round = ev_round_of(st, ev);
}

static int check_idea(const struct state *st, const cJSON *ev, char *err)
{
	if (!state_idea(st, json_int(ev, "id", 0)))
		return kl_err(err, "%s for an idea that does not exist (%d)",
		              ev_name(ev_type_of(ev)), json_int(ev, "id", 0));
	return 0;
}

static int check_idea_edited(const struct state *st, const cJSON *ev, char *err)
{
	if (check_idea(st, ev, err) < 0)
		return -1;
	const char *t = json_str(ev, "title", NULL);
	if (t && !*t)
		return kl_err(err, "idea_edited with an empty \"title\"");
	return 0;
}

static void apply_idea_accepted(struct state *st, const cJSON *ev, double ts)
{
	(void)ts;
	struct state_idea *d = state_idea(st, json_int(ev, "id", 0));
	d->status = IDEA_ACCEPTED;
	d->duplicateOf = 0;
}

static void apply_idea_rejected(struct state *st, const cJSON *ev, double ts)
{
	(void)ts;
	struct state_idea *d = state_idea(st, json_int(ev, "id", 0));
	d->status = IDEA_REJECTED;
	/* proposed again for its parent (deduplicated) */
	int dup = json_int(ev, "duplicate_of", 0);
	d->duplicateOf = dup != d->id && state_idea(st, dup) ? dup : 0;
}

static void apply_idea_edited(struct state *st, const cJSON *ev, double ts)
{
	(void)ts;
	struct state_idea *d = state_idea(st, json_int(ev, "id", 0));
	if (json_str(ev, "title", NULL))
		set_str(&d->zTitle, json_str(ev, "title", NULL));
	if (json_str(ev, "description", NULL))
		set_str(&d->zDescription, json_str(ev, "description", NULL));
	if (json_str(ev, "category", NULL))
		set_str(&d->zCategory, json_str(ev, "category", NULL));
	d->edited = 1;
}

/* ---- LLM traffic ---- */

static int check_llm(const struct state *st, const cJSON *ev, char *err)
{
	(void)st;
	if (json_int(ev, "request", 0) < 1)
		return kl_err(err, "%s without a positive \"request\"", ev_name(ev_type_of(ev)));
	return 0;
}

static void apply_llm_request(struct state *st, const cJSON *ev, double ts)
{
	(void)ts;
	st->llm.nRequests++;
	if (json_int(ev, "request", 0) > st->llm.lastRequest)
		st->llm.lastRequest = json_int(ev, "request", 0);
	xgrow((void **)&st->aReq, &st->nReqAlloc, (size_t)st->nReq + 1, sizeof *st->aReq);
	struct state_request *q = &st->aReq[st->nReq++];
	q->request = json_int(ev, "request", 0);
	q->zProvider = xstrdup(json_str(ev, "provider", ""));
	q->zModel = json_str(ev, "model", NULL) ? xstrdup(json_str(ev, "model", NULL)) : NULL;
	struct state_branch *b =
	    branch_of(st, json_int(ev, "idea", 0), json_int(ev, "branch", 0), 1);
	if (b) {
		if (!b->lastRequest) {
			b->parent = json_int(ev, "parent", 0);
			b->round = json_int(ev, "round", 0);
		}
		b->prevNoCand = b->lastRequest && b->answered && b->candRequest != b->lastRequest;
		b->lastRequest = json_int(ev, "request", 0);
		b->lastAttempt = json_int(ev, "attempt", 0);
		b->lastFixes = json_int(ev, "fixes", 0);
		b->answered = 0;
		b->sameAs = b->failed = 0;
	}
}

static void apply_llm_response(struct state *st, const cJSON *ev, double ts)
{
	(void)ts;
	st->llm.nResponses++;
	const char *status = json_str(ev, "status", NULL);
	st->llm.nFailed += !status || strcmp(status, "ok");
	if (json_int(ev, "request", 0) > st->llm.lastRequest)
		st->llm.lastRequest = json_int(ev, "request", 0);
	/* -1: not reported */
	long in = (long)dnum(ev, "input_tokens"), out = (long)dnum(ev, "output_tokens");
	const cJSON *ti = cJSON_GetObjectItem(ev, "input_tokens");
	st->llm.nCounted += cJSON_IsNumber(ti) && ti->valuedouble >= 0;
	st->llm.inTokens += in > 0 ? in : 0;
	st->llm.outTokens += out > 0 ? out : 0;
	if (out > st->llm.maxOutTokens)
		st->llm.maxOutTokens = out;
	st->llm.cost += dnum(ev, "cost") > 0 ? dnum(ev, "cost") : 0;
	for (int i = st->nBranch - 1; i >= 0; i--)
		if (st->aBranch[i].lastRequest == json_int(ev, "request", 0)) {
			st->aBranch[i].answered = 1;
			st->aBranch[i].failed = !status || strcmp(status, "ok");
			st->aBranch[i].sameAs = json_int(ev, "same_as", 0);
			set_str(&st->aBranch[i].zReply, json_str(ev, "text", NULL));
			break;
		}
}

const struct ev_entry ev_table[EV_COUNT] = {
    [EV_SESSION_STARTED] = {.name = "session_started", .apply = apply_session_started},
    [EV_BASELINE] = {.name = "baseline", .check = check_baseline, .apply = apply_baseline},
    [EV_CANDIDATE_ADDED] = {.name = "candidate_added",
                            .check = check_candidate_added,
                            .apply = apply_candidate_added},
    [EV_EVAL_STARTED] = {.name = "eval_started", .check = check_eval, .apply = apply_eval_started},
    [EV_EVAL_RUNNING] = {.name = "eval_running", .check = check_eval, .apply = apply_eval_running},
    [EV_EVAL_FINISHED] = {.name = "eval_finished",
                          .check = check_eval_finished,
                          .apply = apply_eval_finished},
    [EV_IDEA_PROPOSED] = {.name = "idea_proposed",
                          .check = check_idea_proposed,
                          .apply = apply_idea_proposed},
    [EV_IDEA_ACCEPTED] = {.name = "idea_accepted",
                          .check = check_idea,
                          .apply = apply_idea_accepted},
    [EV_IDEA_REJECTED] = {.name = "idea_rejected",
                          .check = check_idea,
                          .apply = apply_idea_rejected},
    [EV_IDEA_EDITED] = {.name = "idea_edited",
                        .check = check_idea_edited,
                        .apply = apply_idea_edited},
    [EV_LLM_REQUEST] = {.name = "llm_request", .check = check_llm, .apply = apply_llm_request},
    [EV_LLM_RESPONSE] = {.name = "llm_response", .check = check_llm, .apply = apply_llm_response},
    [EV_PROFILE] = {.name = "profile", .check = check_profile, .apply = apply_profile},
    /* the search's (event_search.c) */
    [EV_SEARCH_STARTED] = {"search_started", ev_check_search_started, ev_apply_search_started},
    [EV_SEARCH_PAUSED] = {"search_paused", ev_check_search, ev_apply_search_paused},
    [EV_SEARCH_RESUMED] = {"search_resumed", ev_check_search, ev_apply_search_resumed},
    [EV_SEARCH_STOPPED] = {"search_stopped", ev_check_search, ev_apply_search_stopped},
    [EV_SEARCH_FINISHED] = {"search_finished", ev_check_search, ev_apply_search_finished},
    [EV_SEARCH_SET] = {"search_set", ev_check_search_set, ev_apply_search_set},
    [EV_ROUND_STARTED] = {"round_started", ev_check_round_started, ev_apply_round_started},
    [EV_PARENTS_CHOSEN] = {"parents_chosen", ev_check_parents_chosen, ev_apply_parents_chosen},
    [EV_ROUND_FINISHED] = {"round_finished", ev_check_search, ev_apply_round_finished},
    [EV_PIN] = {"pin", ev_check_search_cand, ev_apply_pin},
    [EV_BAN] = {"ban", ev_check_search_cand, ev_apply_ban},
    [EV_UNBAN] = {"unban", ev_check_search_cand, ev_apply_unban},
    [EV_BAN_CATEGORY] = {"ban_category", ev_check_search_category, ev_apply_ban_category},
    [EV_PREFER_CATEGORY] = {"prefer_category", ev_check_search_category, ev_apply_prefer_category},
    [EV_IDEA_INJECTED] = {"idea_injected", ev_check_search, ev_apply_search_elapsed},
    [EV_SUSPECT_FLAGGED] = {"suspect_flagged", ev_check_search_cand, ev_apply_suspect_flagged},
    [EV_SUSPECT_CLEARED] = {"suspect_cleared", ev_check_search_cand, ev_apply_suspect_cleared},
    [EV_NEW_BEST] = {"new_best", ev_check_search_cand, ev_apply_new_best},
    [EV_SEARCH_BUDGET] = {"search_budget", ev_check_search, ev_apply_search_elapsed},
    [EV_AB_COMPARED] = {"ab_compared", ev_check_ab_compared, ev_apply_ab_compared},
    [EV_COMPILE_BASELINE] = {"compile_baseline", check_compile_baseline, apply_compile_baseline},
};

enum ev_type ev_type_of(const cJSON *ev)
{
	const char *type = json_str(ev, "type", NULL);
	for (int i = 0; type && i < EV_COUNT; i++)
		if (!strcmp(type, ev_table[i].name))
			return (enum ev_type)i;
	return EV_UNKNOWN;
}

const char *ev_name(enum ev_type t)
{
	return (unsigned)t < EV_COUNT ? ev_table[t].name : "unknown";
}

/* a new event of type t, for an emitter (emit.c) to fill */
cJSON *ev_new(enum ev_type t)
{
	cJSON *e = cJSON_CreateObject();
	cJSON_AddStringToObject(e, "type", ev_table[t].name);
	return e;
}

/* ---- the fold ---- */

int state_check(const struct state *st, const cJSON *ev, char *err)
{
	if (!cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ev, "type")))
		return kl_err(err, "event without a \"type\"");
	enum ev_type t = ev_type_of(ev);
	return t == EV_UNKNOWN || !ev_table[t].check ? 0 : ev_table[t].check(st, ev, err);
}

int state_apply(struct state *st, const cJSON *ev, char *err)
{
	if (state_check(st, ev, err) < 0)
		return -1;
	const cJSON *ts = cJSON_GetObjectItem(ev, "ts");
	st->nEvents++;
	if (cJSON_IsNumber(ts) && ts->valuedouble > st->tsLast)
		st->tsLast = ts->valuedouble;
	enum ev_type t = ev_type_of(ev);
	if (t != EV_UNKNOWN)
		ev_table[t].apply(st, ev, cJSON_IsNumber(ts) ? ts->valuedouble : 0);
	return 0;
}
