/*
 * state_json.c - the folded state as JSON (kloop session --json, the
 * search's summaries, the tests): a candidate, the ideas and the LLM's
 * totals, the search, the whole state with its one best.  Reads the state
 * (state.c) and the best (state_best.c); neither calls it.
 */
#include "state.h"

#include <math.h>

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
	/* what its time and its precision are worth (unranked when either is
	 * flagged: state_cand_rankable) */
	if (c->unverified)
		cJSON_AddBoolToObject(x, "unverified", 1);
	const char *pv = c->v.precision.zClass;
	if (pv)
		cJSON_AddStringToObject(x, "precision", pv);
	if (c->zIdea)
		cJSON_AddStringToObject(x, "idea", c->zIdea);
	if (c->ideaId)
		cJSON_AddNumberToObject(x, "idea_id", c->ideaId);
	if (c->round)
		cJSON_AddNumberToObject(x, "round", c->round);
	/* against torch.compile (a search's early results get it later: the
	 * compile_baseline event); the machine code's hash; not timed again
	 * when it was timed before */
	const struct verdict *v = &c->v;
	if (!isnan(v->speedupCompile))
		cJSON_AddNumberToObject(x, "speedup_compile", v->speedupCompile);
	if (!isnan(v->baselineCompileMs))
		cJSON_AddNumberToObject(x, "baseline_compile_ms", v->baselineCompileMs);
	if (v->zCodeHash)
		cJSON_AddStringToObject(x, "code_hash", v->zCodeHash);
	if (v->zNotTimed)
		cJSON_AddStringToObject(x, "not_timed", v->zNotTimed);
	if (v->sameCodeAs)
		cJSON_AddNumberToObject(x, "same_code_as", v->sameCodeAs);
	return x;
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
		cJSON_AddStringToObject(y, "status", idea_status_name(d->status));
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
	/* the session's baseline on each device, every speedup's (issue 39) */
	cJSON *bs = cJSON_AddArrayToObject(o, "baselines");
	for (int i = 0; i < st->nBase; i++) {
		cJSON *y = cJSON_CreateObject();
		cJSON_AddStringToObject(y, "device", st->aBase[i].zDevice);
		cJSON_AddNumberToObject(y, "ms", st->aBase[i].ms);
		cJSON_AddBoolToObject(y, "remeasured", st->aBase[i].remeasured);
		cJSON_AddItemToArray(bs, y);
	}
	/* the one best (state_best_info()), as every front end names it */
	struct state_best_info bi = state_best_info(st);
	if (bi.best) {
		cJSON *b = cJSON_AddObjectToObject(o, "best");
		cJSON_AddNumberToObject(b, "id", bi.best->id);
		cJSON_AddNumberToObject(b, "speedup", bi.best->speedup);
		cJSON_AddBoolToObject(b, "confirmed", bi.confirmed);
		if (bi.tie)
			cJSON_AddNumberToObject(b, "within_noise_no_ab", bi.tie);
		if (bi.abTie)
			cJSON_AddNumberToObject(b, "within_noise_by_ab", bi.abTie);
	} else {
		cJSON_AddNullToObject(o, "best");
	}
	cJSON *arr = cJSON_AddArrayToObject(o, "candidates");
	for (int i = 0; i < st->nCand; i++)
		cJSON_AddItemToArray(arr, state_cand_json(&st->aCand[i]));
	llm_to_json(st, o);
	cJSON *se = state_search_json(st);
	if (se)
		cJSON_AddItemToObject(o, "search", se);
	return o;
}

static cJSON *words_json(char **a, int n)
{
	cJSON *arr = cJSON_CreateArray();
	for (int i = 0; i < n; i++)
		cJSON_AddItemToArray(arr, cJSON_CreateString(a[i]));
	return arr;
}

cJSON *state_search_json(const struct state *st)
{
	const struct state_search *s = &st->search;
	if (!s->started)
		return NULL;
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "state", search_state_name(s->state));
	if (s->zWhy)
		cJSON_AddStringToObject(o, "why", s->zWhy);
	cJSON_AddNumberToObject(o, "round", s->round);
	cJSON_AddItemToObject(o, "settings",
	                      s->settings ? cJSON_Duplicate(s->settings, 1) : cJSON_CreateObject());
	cJSON_AddNumberToObject(o, "best", s->bestId);
	cJSON_AddNumberToObject(o, "best_speedup", s->bestId ? s->bestSpeed : -1);
	cJSON *rs = cJSON_AddArrayToObject(o, "rounds");
	for (int i = 0; i < s->nRound; i++) {
		const struct state_round *r = &s->aRound[i];
		cJSON *y = cJSON_CreateObject();
		cJSON_AddNumberToObject(y, "round", r->round);
		cJSON_AddStringToObject(y, "policy", r->zPolicy ? r->zPolicy : "");
		cJSON *ps = cJSON_AddArrayToObject(y, "parents");
		for (int k = 0; k < r->nParent; k++) {
			cJSON *p = cJSON_CreateObject();
			cJSON_AddNumberToObject(p, "id", r->aParent[k]);
			cJSON_AddStringToObject(p, "reason", r->azReason[k]);
			cJSON_AddItemToArray(ps, p);
		}
		cJSON_AddBoolToObject(y, "finished", r->finished);
		cJSON_AddNumberToObject(y, "best", r->bestId);
		cJSON_AddNumberToObject(y, "best_speedup", r->bestSpeed);
		cJSON_AddItemToArray(rs, y);
	}
	cJSON_AddNumberToObject(o, "pinned", s->pinned);
	cJSON *b = cJSON_AddArrayToObject(o, "banned");
	for (int i = 0; i < s->nBanned; i++)
		cJSON_AddItemToArray(b, cJSON_CreateNumber(s->aBanned[i]));
	cJSON_AddItemToObject(o, "ban_categories", words_json(s->azBanCat, s->nBanCat));
	cJSON_AddItemToObject(o, "prefer_categories", words_json(s->azPreferCat, s->nPreferCat));
	cJSON *su = cJSON_AddArrayToObject(o, "suspects");
	for (int i = 0; i < s->nSuspect; i++) {
		cJSON *y = cJSON_CreateObject();
		cJSON_AddNumberToObject(y, "id", s->aSuspect[i].cand);
		cJSON_AddNumberToObject(y, "speedup", s->aSuspect[i].speedup);
		cJSON_AddStringToObject(y, "why", s->aSuspect[i].zWhy);
		cJSON_AddBoolToObject(y, "cleared", s->aSuspect[i].cleared);
		cJSON_AddItemToArray(su, y);
	}
	cJSON *ab = cJSON_AddArrayToObject(o, "ab");
	for (int i = 0; i < s->nAb; i++) {
		const struct state_ab *a = &s->aAb[i];
		cJSON *y = cJSON_CreateObject();
		cJSON_AddNumberToObject(y, "candidate", a->cand);
		cJSON_AddNumberToObject(y, "incumbent", a->incumbent);
		cJSON_AddNumberToObject(y, "pairs", a->pairs);
		cJSON_AddNumberToObject(y, "wins", a->wins);
		cJSON_AddNumberToObject(y, "ratio", a->ratio);
		cJSON_AddBoolToObject(y, "won", a->won);
		if (a->unverified)
			cJSON_AddBoolToObject(y, "verified", 0);
		cJSON_AddItemToArray(ab, y);
	}
	cJSON_AddNumberToObject(o, "elapsed_s", s->elapsedS);
	return o;
}
