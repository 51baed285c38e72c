/*
 * state.c - folding session events into the engine's state: the task and
 * the population, with each candidate's latest result.
 */
#include "state.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

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
	return 0;
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
	return 0;
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
	for (int i = 0; i < st->nCand; i++) {
		const struct cand *c = &st->aCand[i];
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
		cJSON_AddItemToArray(arr, x);
	}
	return o;
}
