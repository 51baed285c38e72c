/*
 * state.c - folding session events into the engine's state: the task and
 * the population, with each candidate's latest result.
 */
#include "state.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

/* the idea and LLM events (defined at the end) */
static int check_llm(const struct state *st, const char *type, const cJSON *ev, char *err);
static void apply_llm(struct state *st, const char *type, const cJSON *ev);
static void free_ideas(struct state *st);
static void llm_to_json(const struct state *st, cJSON *o);

void state_init(struct state *st)
{
	memset(st, 0, sizeof *st);
	st->baselineMs = -1;
}

static void cand_free(struct cand *c)
{
	free(c->zName);
	free(c->zOrigin);
	free(c->zSource);
	free(c->zIdea);
	free(c->zStatus);
	free(c->zReason);
	cJSON_Delete(c->result);
}

void state_free(struct state *st)
{
	free(st->zTask);
	free(st->zTaskDir);
	free(st->zBackend);
	free(st->zShapes);
	for (int i = 0; i < st->nCand; i++)
		cand_free(&st->aCand[i]);
	free(st->aCand);
	free_ideas(st);
	state_init(st);
}

struct cand *state_cand(const struct state *st, int id)
{
	/* no candidate has an id above the largest; ids are usually 1..n in
	 * order, so try that slot first */
	if (id < 1 || id > st->maxId)
		return NULL;
	if (id <= st->nCand && st->aCand[id - 1].id == id)
		return &st->aCand[id - 1];
	for (int i = 0; i < st->nCand; i++)
		if (st->aCand[i].id == id)
			return &st->aCand[i];
	return NULL;
}

int state_next_id(const struct state *st)
{
	return st->maxId + 1;
}

static const char *str(const cJSON *o, const char *k)
{
	return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, k));
}

static void set_str(char **p, const char *z)
{
	free(*p);
	*p = z ? xstrdup(z) : NULL;
}

int state_check(const struct state *st, const cJSON *ev, char *err)
{
	const char *type = str(ev, "type");
	if (!type)
		return kl_err(err, "event without a \"type\"");
	if (!strcmp(type, "candidate_added")) {
		const cJSON *id = cJSON_GetObjectItem(ev, "id");
		if (!cJSON_IsNumber(id) || id->valueint < 1)
			return kl_err(err, "candidate_added without a positive \"id\"");
		if (state_cand(st, id->valueint))
			return kl_err(err, "candidate %d is added twice", id->valueint);
	} else if (!strcmp(type, "eval_started") || !strcmp(type, "eval_finished")) {
		const cJSON *id = cJSON_GetObjectItem(ev, "candidate");
		if (!cJSON_IsNumber(id) || !state_cand(st, id->valueint))
			return kl_err(err, "%s for a candidate that does not exist", type);
	}
	return check_llm(st, type, ev, err);
}

int state_apply(struct state *st, const cJSON *ev, char *err)
{
	if (state_check(st, ev, err) < 0)
		return -1;
	const char *type = str(ev, "type");
	const cJSON *ts = cJSON_GetObjectItem(ev, "ts");
	double when = cJSON_IsNumber(ts) ? ts->valuedouble : 0;
	st->nEvents++;
	if (!strcmp(type, "session_started")) {
		st->tsStarted = when;
		set_str(&st->zTask, str(ev, "task"));
		set_str(&st->zTaskDir, str(ev, "task_dir"));
		set_str(&st->zBackend, str(ev, "backend"));
		set_str(&st->zShapes, str(ev, "shapes"));
	} else if (!strcmp(type, "baseline")) {
		const cJSON *m = cJSON_GetObjectItem(ev, "median_ms");
		if (cJSON_IsNumber(m))
			st->baselineMs = m->valuedouble;
	} else if (!strcmp(type, "candidate_added")) {
		const cJSON *id = cJSON_GetObjectItem(ev, "id");
		xgrow((void **)&st->aCand, &st->nCandAlloc, (size_t)st->nCand + 1,
		      sizeof *st->aCand);
		struct cand *c = &st->aCand[st->nCand++];
		memset(c, 0, sizeof *c);
		c->id = id->valueint;
		if (c->id > st->maxId)
			st->maxId = c->id;
		set_str(&c->zName, str(ev, "name") ? str(ev, "name") : "candidate");
		set_str(&c->zOrigin, str(ev, "origin") ? str(ev, "origin") : "human");
		set_str(&c->zSource, str(ev, "source") ? str(ev, "source") : "");
		set_str(&c->zIdea, str(ev, "idea"));
		set_str(&c->zStatus, "new");
		set_str(&c->zReason, "");
		c->timeMs = c->speedup = -1;
		c->tsAdded = when;
		const cJSON *p, *ps = cJSON_GetObjectItem(ev, "parents");
		cJSON_ArrayForEach(p, ps) if (cJSON_IsNumber(p) && c->nParent < 2) c->aParent[c->nParent++] =
			p->valueint;
	} else if (!strcmp(type, "eval_started") || !strcmp(type, "eval_finished")) {
		const cJSON *id = cJSON_GetObjectItem(ev, "candidate");
		struct cand *c = state_cand(st, id->valueint);
		if (!strcmp(type, "eval_started")) {
			set_str(&c->zStatus, "evaluating");
			return 0;
		}
		const cJSON *r = cJSON_GetObjectItem(ev, "result");
		set_str(&c->zStatus, str(r, "status") ? str(r, "status") : "error");
		set_str(&c->zReason, str(r, "reason") ? str(r, "reason") : "");
		c->tsEval = when;
		cJSON_Delete(c->result);
		c->result = r ? cJSON_Duplicate(r, 1) : NULL;
		const cJSON *tm = cJSON_GetObjectItem(cJSON_GetObjectItem(r, "timing"), "median_ms");
		c->timeMs = cJSON_IsNumber(tm) ? tm->valuedouble : -1;
		const cJSON *sp = cJSON_GetObjectItem(r, "speedup");
		c->speedup = cJSON_IsNumber(sp) ? sp->valuedouble : -1;
		const cJSON *bl = cJSON_GetObjectItem(r, "baseline_ms");
		if (cJSON_IsNumber(bl))
			st->baselineMs = bl->valuedouble;
	}
	apply_llm(st, type, ev);
	return 0;
}

cJSON *state_cand_json(const struct cand *c)
{
	cJSON *x = cJSON_CreateObject();
	cJSON_AddNumberToObject(x, "id", c->id);
	cJSON_AddStringToObject(x, "name", c->zName);
	cJSON_AddStringToObject(x, "origin", c->zOrigin);
	cJSON *ps = cJSON_AddArrayToObject(x, "parents");
	for (int k = 0; k < c->nParent; k++)
		cJSON_AddItemToArray(ps, cJSON_CreateNumber(c->aParent[k]));
	cJSON_AddStringToObject(x, "status", c->zStatus);
	cJSON_AddStringToObject(x, "reason", c->zReason);
	if (c->timeMs >= 0)
		cJSON_AddNumberToObject(x, "time_ms", c->timeMs);
	else
		cJSON_AddNullToObject(x, "time_ms");
	if (c->speedup >= 0)
		cJSON_AddNumberToObject(x, "speedup", c->speedup);
	else
		cJSON_AddNullToObject(x, "speedup");
	if (c->zIdea)
		cJSON_AddStringToObject(x, "idea", c->zIdea);
	if (c->ideaId)
		cJSON_AddNumberToObject(x, "idea_id", c->ideaId);
	return x;
}

cJSON *state_to_json(const struct state *st)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "task", st->zTask ? st->zTask : "");
	cJSON_AddStringToObject(o, "backend", st->zBackend ? st->zBackend : "");
	cJSON_AddNumberToObject(o, "events", st->nEvents);
	if (st->baselineMs >= 0)
		cJSON_AddNumberToObject(o, "baseline_ms", st->baselineMs);
	else
		cJSON_AddNullToObject(o, "baseline_ms");
	cJSON *arr = cJSON_AddArrayToObject(o, "candidates");
	for (int i = 0; i < st->nCand; i++)
		cJSON_AddItemToArray(arr, state_cand_json(&st->aCand[i]));
	llm_to_json(st, o);
	return o;
}

/* ---- ideas and LLM traffic ---- */

static void free_ideas(struct state *st)
{
	for (int i = 0; i < st->nIdea; i++) {
		struct state_idea *d = &st->aIdea[i];
		free(d->zTitle);
		free(d->zDescription);
		free(d->zCategory);
		free(d->zStatus);
		free(d->zOrigin);
	}
	free(st->aIdea);
}

struct state_idea *state_idea(const struct state *st, int id)
{
	for (int i = 0; i < st->nIdea; i++)
		if (st->aIdea[i].id == id)
			return &st->aIdea[i];
	return NULL;
}

int state_next_idea_id(const struct state *st)
{
	int m = 0;
	for (int i = 0; i < st->nIdea; i++)
		if (st->aIdea[i].id > m)
			m = st->aIdea[i].id;
	return m + 1;
}

int state_next_request_id(const struct state *st)
{
	return st->llm.lastRequest + 1;
}

static int num_field(const cJSON *ev, const char *k)
{
	const cJSON *v = cJSON_GetObjectItem(ev, k);
	return cJSON_IsNumber(v) ? v->valueint : 0;
}

static int check_llm(const struct state *st, const char *type, const cJSON *ev, char *err)
{
	int id = num_field(ev, "id");
	if (!strcmp(type, "idea_proposed")) {
		if (id < 1)
			return kl_err(err, "idea_proposed without a positive \"id\"");
		if (state_idea(st, id))
			return kl_err(err, "idea %d is proposed twice", id);
		const char *t = str(ev, "title");
		if (!t || !*t)
			return kl_err(err, "idea_proposed without a \"title\"");
	} else if (!strcmp(type, "idea_accepted") || !strcmp(type, "idea_rejected") ||
	           !strcmp(type, "idea_edited")) {
		if (!state_idea(st, id))
			return kl_err(err, "%s for an idea that does not exist (%d)", type, id);
		const char *t = str(ev, "title");
		if (!strcmp(type, "idea_edited") && t && !*t)
			return kl_err(err, "idea_edited with an empty \"title\"");
	} else if (!strcmp(type, "llm_request") || !strcmp(type, "llm_response")) {
		if (num_field(ev, "request") < 1)
			return kl_err(err, "%s without a positive \"request\"", type);
	} else if (!strcmp(type, "candidate_added") && cJSON_GetObjectItem(ev, "idea_id")) {
		if (!state_idea(st, num_field(ev, "idea_id")))
			return kl_err(err, "candidate_added for an idea that does not exist (%d)",
			              num_field(ev, "idea_id"));
	}
	return 0;
}

static void apply_llm(struct state *st, const char *type, const cJSON *ev)
{
	struct state_idea *d = state_idea(st, num_field(ev, "id"));
	if (!strcmp(type, "idea_proposed")) {
		xgrow((void **)&st->aIdea, &st->nIdeaAlloc, (size_t)st->nIdea + 1,
		      sizeof *st->aIdea);
		d = &st->aIdea[st->nIdea++];
		memset(d, 0, sizeof *d);
		d->id = num_field(ev, "id");
		set_str(&d->zTitle, str(ev, "title"));
		set_str(&d->zDescription, str(ev, "description") ? str(ev, "description") : "");
		set_str(&d->zCategory, str(ev, "category") ? str(ev, "category") : "other");
		set_str(&d->zStatus, "pending");
		set_str(&d->zOrigin, str(ev, "origin") ? str(ev, "origin") : "llm");
		d->parent = num_field(ev, "parent");
		d->request = num_field(ev, "request");
	} else if (!strcmp(type, "idea_accepted")) {
		set_str(&d->zStatus, "accepted");
	} else if (!strcmp(type, "idea_rejected")) {
		set_str(&d->zStatus, "rejected");
	} else if (!strcmp(type, "idea_edited")) {
		if (str(ev, "title"))
			set_str(&d->zTitle, str(ev, "title"));
		if (str(ev, "description"))
			set_str(&d->zDescription, str(ev, "description"));
		if (str(ev, "category"))
			set_str(&d->zCategory, str(ev, "category"));
		d->edited = 1;
	} else if (!strcmp(type, "llm_request")) {
		st->llm.nRequests++;
		if (num_field(ev, "request") > st->llm.lastRequest)
			st->llm.lastRequest = num_field(ev, "request");
	} else if (!strcmp(type, "llm_response")) {
		st->llm.nResponses++;
		const char *status = str(ev, "status");
		st->llm.nFailed += !status || strcmp(status, "ok");
		if (num_field(ev, "request") > st->llm.lastRequest)
			st->llm.lastRequest = num_field(ev, "request");
		const cJSON *v = cJSON_GetObjectItem(ev, "input_tokens");
		st->llm.inTokens +=
		    cJSON_IsNumber(v) && v->valuedouble > 0 ? (long)v->valuedouble : 0;
		v = cJSON_GetObjectItem(ev, "output_tokens");
		st->llm.outTokens +=
		    cJSON_IsNumber(v) && v->valuedouble > 0 ? (long)v->valuedouble : 0;
		v = cJSON_GetObjectItem(ev, "cost");
		st->llm.cost += cJSON_IsNumber(v) && v->valuedouble > 0 ? v->valuedouble : 0;
	} else if (!strcmp(type, "candidate_added")) {
		struct cand *c = state_cand(st, num_field(ev, "id"));
		struct state_idea *idea = state_idea(st, num_field(ev, "idea_id"));
		if (c && idea) {
			c->ideaId = idea->id;
			if (!c->zIdea)
				set_str(&c->zIdea, idea->zTitle);
		}
	}
}

static void llm_to_json(const struct state *st, cJSON *o)
{
	cJSON *arr = cJSON_AddArrayToObject(o, "ideas");
	for (int i = 0; i < st->nIdea; i++) {
		const struct state_idea *d = &st->aIdea[i];
		cJSON *y = cJSON_CreateObject();
		cJSON_AddNumberToObject(y, "id", d->id);
		cJSON_AddStringToObject(y, "title", d->zTitle);
		cJSON_AddStringToObject(y, "description", d->zDescription);
		cJSON_AddStringToObject(y, "category", d->zCategory);
		cJSON_AddStringToObject(y, "status", d->zStatus);
		cJSON_AddStringToObject(y, "origin", d->zOrigin);
		if (d->parent)
			cJSON_AddNumberToObject(y, "parent", d->parent);
		else
			cJSON_AddNullToObject(y, "parent");
		cJSON_AddBoolToObject(y, "edited", d->edited);
		cJSON_AddItemToArray(arr, y);
	}
	cJSON *l = cJSON_AddObjectToObject(o, "llm");
	cJSON_AddNumberToObject(l, "requests", st->llm.nRequests);
	cJSON_AddNumberToObject(l, "responses", st->llm.nResponses);
	cJSON_AddNumberToObject(l, "failed", st->llm.nFailed);
	cJSON_AddNumberToObject(l, "input_tokens", (double)st->llm.inTokens);
	cJSON_AddNumberToObject(l, "output_tokens", (double)st->llm.outTokens);
	cJSON_AddNumberToObject(l, "cost", st->llm.cost);
}
