/*
 * event_search.c - the search's events (sessions/search/search.h): their checks
 * and their fold into st->search, for event.c's table (their typed
 * emitters are emit.c's).  The journal's format is the one the search has
 * always written (docs/SESSIONS.md).
 */
#include "event_search.h"

#include <stdlib.h>
#include <string.h>

#include "ideas.h"
#include "json.h"
#include "search_settings.h"
#include "util.h"

static void set_str(char **p, const char *z)
{
	free(*p);
	*p = z ? xstrdup(z) : NULL;
}

/* ---- checks ---- */

int ev_check_search(const struct state *st, const cJSON *ev, char *err)
{
	if (!st->search.started)
		return kl_err(err, "%s before search_started", json_str(ev, "type", ""));
	return 0;
}

/* a search's settings as the flags and `set` take them: a journal edited by
 * hand (a policy that does not exist, -5 parents) is not run as given */
int ev_check_search_started(const struct state *st, const cJSON *ev, char *err)
{
	(void)st;
	const cJSON *set = cJSON_GetObjectItem(ev, "settings"), *v;
	if (set && !cJSON_IsObject(set))
		return kl_err(err, "search_started: \"settings\" must be an object");
	cJSON_ArrayForEach(v, set)
	{
		if (search_setting_check(v->string, v, 0, err) < 0)
			return -1;
	}
	return 0;
}

/* a setting `kloop eval` takes too (its precision policy) is the
 * session's before any search: set without one */
int ev_check_search_set(const struct state *st, const cJSON *ev, char *err)
{
	const char *k = json_str(ev, "key", NULL);
	int id = k ? search_setting_find(k) : -1;
	if (!(id >= 0 && (search_setting_info[id].cmds & SS_EVAL)) &&
	    ev_check_search(st, ev, err) < 0)
		return -1;
	const cJSON *v = cJSON_GetObjectItem(ev, "value");
	if (!k || !v)
		return kl_err(err, "search_set needs a \"key\" and a \"value\"");
	return search_setting_check(k, v, 1, err);
}

int ev_check_round_started(const struct state *st, const cJSON *ev, char *err)
{
	if (ev_check_search(st, ev, err) < 0)
		return -1;
	if (!cJSON_IsNumber(cJSON_GetObjectItem(ev, "round")))
		return kl_err(err, "round_started without a \"round\"");
	return 0;
}

int ev_check_parents_chosen(const struct state *st, const cJSON *ev, char *err)
{
	if (ev_check_search(st, ev, err) < 0)
		return -1;
	const cJSON *p, *ps = cJSON_GetObjectItem(ev, "parents");
	if (!cJSON_IsArray(ps))
		return kl_err(err, "parents_chosen without a \"parents\" array");
	cJSON_ArrayForEach(p, ps)
	{
		if (!state_cand(st, json_int(p, "id", 0)))
			return kl_err(err,
			              "parents_chosen names a candidate that does not exist (%d)",
			              json_int(p, "id", 0));
	}
	return 0;
}

int ev_check_search_cand(const struct state *st, const cJSON *ev, char *err)
{
	if (ev_check_search(st, ev, err) < 0)
		return -1;
	int id = json_int(ev, "candidate", 0);
	if (!state_cand(st, id))
		return kl_err(err, "%s for a candidate that does not exist (%d)",
		              json_str(ev, "type", ""), id);
	return 0;
}

int ev_check_ab_compared(const struct state *st, const cJSON *ev, char *err)
{
	int id = json_int(ev, "candidate", 0), inc = json_int(ev, "incumbent", 0);
	if (!state_cand(st, id) || !state_cand(st, inc))
		return kl_err(err, "ab_compared: candidates %d and %d must both exist", id, inc);
	if (!cJSON_IsNumber(cJSON_GetObjectItem(ev, "pairs")))
		return kl_err(err, "ab_compared: \"pairs\" must be a number");
	return 0;
}

int ev_check_search_category(const struct state *st, const cJSON *ev, char *err)
{
	if (ev_check_search(st, ev, err) < 0)
		return -1;
	if (!json_str(ev, "category", NULL))
		return kl_err(err, "%s without a \"category\"", json_str(ev, "type", ""));
	const char *c = json_str(ev, "category", NULL);
	if (!ideas_category_named(c) || strcmp(ideas_category_named(c), c))
		return kl_err(err, "%s: unknown idea category (one of: %s)",
		              json_str(ev, "type", ""), ideas_category_list());
	return 0;
}

/* ---- the fold ---- */

void ev_apply_search_elapsed(struct state *st, const cJSON *ev, double ts)
{
	const cJSON *el = cJSON_GetObjectItem(ev, "elapsed_s");
	if (cJSON_IsNumber(el) && el->valuedouble >= 0) {
		st->search.elapsedS = el->valuedouble;
		st->search.tsElapsed = ts;
	}
}

void ev_apply_search_started(struct state *st, const cJSON *ev, double ts)
{
	struct state_search *s = &st->search;
	ev_apply_search_elapsed(st, ev, ts);
	if (!s->started) {
		s->nCandStart = st->nCand;
		s->costStart = st->llm.cost;
	}
	s->started = 1;
	s->state = SEARCH_RUNNING;
	s->setSinceEnd = 0;
	set_str(&s->zWhy, NULL);
	const cJSON *set = cJSON_GetObjectItem(ev, "settings");
	if (cJSON_IsObject(set)) {
		cJSON_Delete(s->settings);
		s->settings = cJSON_Duplicate(set, 1);
	}
	search_settings_from_json(&s->set, s->settings);
}

void ev_apply_search_paused(struct state *st, const cJSON *ev, double ts)
{
	ev_apply_search_elapsed(st, ev, ts);
	st->search.state = SEARCH_PAUSED;
}

void ev_apply_search_resumed(struct state *st, const cJSON *ev, double ts)
{
	struct state_search *s = &st->search;
	ev_apply_search_elapsed(st, ev, ts);
	if (cJSON_IsTrue(cJSON_GetObjectItem(ev, "continued"))) {
		/* a finished search went on: the rounds before no longer
		 * stop it for what they came to */
		s->continued = 1;
		s->contRound = s->round;
	}
	s->state = SEARCH_RUNNING;
	s->setSinceEnd = 0;
}

void ev_apply_search_stopped(struct state *st, const cJSON *ev, double ts)
{
	ev_apply_search_elapsed(st, ev, ts);
	st->search.state = SEARCH_STOPPED;
	set_str(&st->search.zWhy, json_str(ev, "reason", NULL));
}

void ev_apply_search_finished(struct state *st, const cJSON *ev, double ts)
{
	ev_apply_search_elapsed(st, ev, ts);
	st->search.state = SEARCH_FINISHED;
	set_str(&st->search.zWhy, json_str(ev, "reason", NULL));
}

void ev_apply_search_set(struct state *st, const cJSON *ev, double ts)
{
	struct state_search *s = &st->search;
	ev_apply_search_elapsed(st, ev, ts);
	const char *k = json_str(ev, "key", NULL);
	const cJSON *v = cJSON_GetObjectItem(ev, "value");
	if (!k || !v)
		return;
	if (!s->settings)
		s->settings = cJSON_CreateObject();
	cJSON_DeleteItemFromObjectCaseSensitive(s->settings, k);
	cJSON_AddItemToObject(s->settings, k, cJSON_Duplicate(v, 1));
	search_settings_from_json(&s->set, s->settings);
	s->setSinceEnd |= search_state_ended(s->state);
}

static struct state_round *round_of(const struct state *st, int r)
{
	for (int i = 0; i < st->search.nRound; i++)
		if (st->search.aRound[i].round == r)
			return &st->search.aRound[i];
	return NULL;
}

/* rounds started and not finished */
static int count_open(const struct state *st)
{
	int n = 0;
	for (int i = 0; i < st->search.nRound; i++)
		n += !st->search.aRound[i].finished;
	return n;
}

int ev_round_of(const struct state *st, const cJSON *ev)
{
	int r = json_int(ev, "round", 0);
	if (r > 0)
		return r;
	return st->search.roundOpen ? st->search.round : 0;
}

void ev_apply_round_started(struct state *st, const cJSON *ev, double ts)
{
	struct state_search *s = &st->search;
	ev_apply_search_elapsed(st, ev, ts);
	s->round = json_int(ev, "round", 0);
	if (!round_of(st, s->round)) {
		xgrow((void **)&s->aRound, &s->nRoundAlloc, (size_t)s->nRound + 1,
		      sizeof *s->aRound);
		struct state_round *r = &s->aRound[s->nRound++];
		memset(r, 0, sizeof *r);
		r->round = s->round;
		r->bestSpeed = -1;
		r->bestStart = json_int(ev, "best", 0);
	}
	s->roundOpen = count_open(st);
}

void ev_apply_parents_chosen(struct state *st, const cJSON *ev, double ts)
{
	ev_apply_search_elapsed(st, ev, ts);
	struct state_round *r = round_of(st, json_int(ev, "round", 0));
	if (r) {
		for (int i = 0; i < r->nParent; i++)
			free(r->azReason[i]);
		r->nParent = 0;
		set_str(&r->zPolicy, json_str(ev, "policy", NULL));
		const cJSON *th =
		    cJSON_GetObjectItem(cJSON_GetObjectItem(ev, "snapshot"), "through");
		r->lagged = cJSON_IsNumber(th) && th->valuedouble >= 0;
		const cJSON *p;
		cJSON_ArrayForEach(p, cJSON_GetObjectItem(ev, "parents"))
		{
			if (r->nParent == STATE_MAX_PARENTS)
				break;
			r->aParent[r->nParent] = json_int(p, "id", 0);
			r->azReason[r->nParent++] =
			    xstrdup(json_str(p, "reason", NULL) ? json_str(p, "reason", NULL) : "");
		}
	}
	st->search.pinned = 0;
}

void ev_apply_round_finished(struct state *st, const cJSON *ev, double ts)
{
	ev_apply_search_elapsed(st, ev, ts);
	struct state_round *r = round_of(st, json_int(ev, "round", 0));
	if (r) {
		r->finished = 1;
		r->bestId = json_int(ev, "best", 0);
		r->nMade = json_int(ev, "made", 0);
		const cJSON *b = cJSON_GetObjectItem(ev, "best_speedup");
		r->bestSpeed = cJSON_IsNumber(b) ? b->valuedouble : -1;
	}
	st->search.roundOpen = count_open(st);
}

void ev_apply_pin(struct state *st, const cJSON *ev, double ts)
{
	ev_apply_search_elapsed(st, ev, ts);
	st->search.pinned = json_int(ev, "candidate", 0);
}

void ev_apply_ban(struct state *st, const cJSON *ev, double ts)
{
	struct state_search *s = &st->search;
	ev_apply_search_elapsed(st, ev, ts);
	int id = json_int(ev, "candidate", 0), seen = 0;
	for (int i = 0; i < s->nBanned; i++)
		seen |= s->aBanned[i] == id;
	if (!seen) {
		xgrow((void **)&s->aBanned, &s->nBannedAlloc, (size_t)s->nBanned + 1,
		      sizeof *s->aBanned);
		s->aBanned[s->nBanned++] = id;
	}
	if (s->pinned == id)
		s->pinned = 0;
}

void ev_apply_unban(struct state *st, const cJSON *ev, double ts)
{
	struct state_search *s = &st->search;
	ev_apply_search_elapsed(st, ev, ts);
	int id = json_int(ev, "candidate", 0);
	for (int i = 0; i < s->nBanned; i++)
		if (s->aBanned[i] == id)
			s->aBanned[i--] = s->aBanned[--s->nBanned];
}

static void add_word(char ***pa, int *pn, size_t *pAlloc, const char *z)
{
	for (int i = 0; i < *pn; i++)
		if (!strcmp((*pa)[i], z))
			return;
	xgrow((void **)pa, pAlloc, (size_t)*pn + 1, sizeof **pa);
	(*pa)[(*pn)++] = xstrdup(z);
}

void ev_apply_ban_category(struct state *st, const cJSON *ev, double ts)
{
	struct state_search *s = &st->search;
	ev_apply_search_elapsed(st, ev, ts);
	add_word(&s->azBanCat, &s->nBanCat, &s->nBanCatAlloc, json_str(ev, "category", NULL));
}

void ev_apply_prefer_category(struct state *st, const cJSON *ev, double ts)
{
	struct state_search *s = &st->search;
	ev_apply_search_elapsed(st, ev, ts);
	add_word(&s->azPreferCat, &s->nPreferCat, &s->nPreferCatAlloc,
	         json_str(ev, "category", NULL));
}

void ev_apply_suspect_flagged(struct state *st, const cJSON *ev, double ts)
{
	struct state_search *s = &st->search;
	ev_apply_search_elapsed(st, ev, ts);
	int id = json_int(ev, "candidate", 0);
	if (state_search_suspect(st, id))
		return;
	xgrow((void **)&s->aSuspect, &s->nSuspectAlloc, (size_t)s->nSuspect + 1,
	      sizeof *s->aSuspect);
	struct state_suspect *x = &s->aSuspect[s->nSuspect++];
	const cJSON *sp = cJSON_GetObjectItem(ev, "speedup");
	x->cand = id;
	x->speedup = cJSON_IsNumber(sp) ? sp->valuedouble : -1;
	x->zWhy = xstrdup(json_str(ev, "why", NULL) ? json_str(ev, "why", NULL) : "");
	x->cleared = 0;
}

void ev_apply_suspect_cleared(struct state *st, const cJSON *ev, double ts)
{
	struct state_search *s = &st->search;
	ev_apply_search_elapsed(st, ev, ts);
	for (int i = 0; i < s->nSuspect; i++)
		if (s->aSuspect[i].cand == json_int(ev, "candidate", 0))
			s->aSuspect[i].cleared = 1;
}

void ev_apply_new_best(struct state *st, const cJSON *ev, double ts)
{
	ev_apply_search_elapsed(st, ev, ts);
	const cJSON *sp = cJSON_GetObjectItem(ev, "speedup");
	st->search.bestId = json_int(ev, "candidate", 0);
	st->search.bestSpeed = cJSON_IsNumber(sp) ? sp->valuedouble : -1;
	/* the round that made it improved (rounds overlap: not the one open) */
	const struct cand *c = state_cand(st, st->search.bestId);
	struct state_round *r = c && c->round ? round_of(st, c->round) : NULL;
	if (r)
		r->improved = 1;
}

void ev_apply_ab_compared(struct state *st, const cJSON *ev, double ts)
{
	(void)ts;
	struct state_search *s = &st->search;
	xgrow((void **)&s->aAb, &s->nAbAlloc, (size_t)s->nAb + 1, sizeof *s->aAb);
	struct state_ab *a = &s->aAb[s->nAb++];
	const cJSON *r = cJSON_GetObjectItem(ev, "ratio");
	a->cand = json_int(ev, "candidate", 0);
	a->incumbent = json_int(ev, "incumbent", 0);
	a->pairs = json_int(ev, "pairs", 0);
	a->wins = json_int(ev, "wins", 0);
	a->ratio = cJSON_IsNumber(r) ? r->valuedouble : -1;
	a->won = cJSON_IsTrue(cJSON_GetObjectItem(ev, "won"));
	a->failed = cJSON_GetObjectItem(ev, "error") != NULL;
	a->unverified = cJSON_IsFalse(cJSON_GetObjectItem(ev, "verified"));
}
