/*
 * emit.c - the typed emitters (emit.h): each builds its event with
 * ev_new() and hands it to session_emit(); the search's carry its elapsed
 * time.
 */
#include "emit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ideas.h"
#include "json.h"
#include "util.h"
#include "verdict.h"

int session_begin(struct session *s, const char *zTask, const char *zTaskDir, const char *zBackend,
                  const char *zShapes, char *err)
{
	if (s->st.zTask && strcmp(s->st.zTask, zTask))
		return kl_err(err, "%s: the session is for task '%s', not '%s'", s->zPath,
		              s->st.zTask, zTask);
	if (s->st.zTask)
		return 0;
	return ev_session_started(s, zTask, zTaskDir, zBackend, zShapes, err);
}

int ev_session_started(struct session *s, const char *zTask, const char *zTaskDir,
                       const char *zBackend, const char *zShapes, char *err)
{
	cJSON *e = ev_new(EV_SESSION_STARTED);
	cJSON_AddStringToObject(e, "task", zTask);
	cJSON_AddStringToObject(e, "task_dir", zTaskDir);
	cJSON_AddStringToObject(e, "backend", zBackend);
	if (zShapes)
		cJSON_AddStringToObject(e, "shapes", zShapes);
	cJSON_AddStringToObject(e, "kloop", "0.1.0");
	return session_emit(s, e, err);
}

int ev_candidate_added(struct session *s, const struct ev_candidate *c, char *err)
{
	int id = state_next_id(&s->st);
	cJSON *e = ev_new(EV_CANDIDATE_ADDED);
	cJSON_AddNumberToObject(e, "id", id);
	cJSON_AddStringToObject(e, "name", c->zName);
	cJSON_AddStringToObject(e, "origin", c->zOrigin);
	cJSON *ps = cJSON_AddArrayToObject(e, "parents");
	for (int i = 0; i < c->nParent; i++)
		cJSON_AddItemToArray(ps, cJSON_CreateNumber(c->aParent[i]));
	cJSON_AddStringToObject(e, "source", c->zSource);
	if (c->ideaId)
		cJSON_AddNumberToObject(e, "idea_id", c->ideaId);
	if (c->zIdea)
		cJSON_AddStringToObject(e, "idea", c->zIdea);
	if (c->request) {
		cJSON_AddNumberToObject(e, "request", c->request);
		cJSON_AddNumberToObject(e, "branch", c->branch);
		cJSON_AddNumberToObject(e, "attempt", c->attempt);
		cJSON_AddStringToObject(e, "changes", c->zChanges ? c->zChanges : "");
	}
	if (c->round > 0)
		cJSON_AddNumberToObject(e, "round", c->round);
	return session_emit(s, e, err) < 0 ? -1 : id;
}

int ev_eval_started(struct session *s, int cand, const char *zBackend, int abWith, char *err)
{
	cJSON *e = ev_new(EV_EVAL_STARTED);
	cJSON_AddNumberToObject(e, "candidate", cand);
	if (abWith)
		cJSON_AddNumberToObject(e, "ab_with", abWith);
	if (zBackend)
		cJSON_AddStringToObject(e, "backend", zBackend);
	return session_emit(s, e, err);
}

int ev_eval_running(struct session *s, int cand, char *err)
{
	cJSON *e = ev_new(EV_EVAL_RUNNING);
	cJSON_AddNumberToObject(e, "candidate", cand);
	return session_emit(s, e, err);
}

int ev_eval_finished(struct session *s, int cand, const cJSON *result, char *err)
{
	cJSON *e = ev_new(EV_EVAL_FINISHED);
	cJSON_AddNumberToObject(e, "candidate", cand);
	cJSON_AddItemToObject(e, "result", cJSON_Duplicate(result, 1));
	return session_emit(s, e, err);
}

int ev_profile(struct session *s, int cand, const cJSON *profile, char *err)
{
	cJSON *e = ev_new(EV_PROFILE);
	cJSON_AddNumberToObject(e, "candidate", cand);
	cJSON_AddItemToObject(e, "profile", cJSON_Duplicate(profile, 1));
	return session_emit(s, e, err);
}

int ev_compile_baseline(struct session *s, const char *zDevice, const cJSON *cm, char *err)
{
	cJSON *e = ev_new(EV_COMPILE_BASELINE);
	cJSON_AddStringToObject(e, "device", zDevice ? zDevice : "");
	cJSON_AddItemToObject(e, "compile", cJSON_Duplicate(cm, 1));
	return session_emit(s, e, err);
}

int ev_baseline(struct session *s, const char *zDevice, double ms, double previousMs, char *err)
{
	cJSON *e = ev_new(EV_BASELINE);
	cJSON_AddStringToObject(e, "device", zDevice ? zDevice : "");
	cJSON_AddNumberToObject(e, "median_ms", ms);
	if (previousMs > 0)
		cJSON_AddNumberToObject(e, "previous_ms", previousMs);
	return session_emit(s, e, err);
}

int ev_idea_proposed(struct session *s, const struct ev_idea *d, char *err)
{
	int id = state_next_idea_id(&s->st);
	cJSON *e = ev_new(EV_IDEA_PROPOSED);
	cJSON_AddNumberToObject(e, "id", id);
	cJSON_AddStringToObject(e, "title", d->zTitle);
	cJSON_AddStringToObject(e, "description", d->zDescription ? d->zDescription : "");
	cJSON_AddStringToObject(e, "category", d->zCategory ? d->zCategory : "other");
	cJSON_AddStringToObject(e, "origin", d->zOrigin);
	if (d->request)
		cJSON_AddNumberToObject(e, "request", d->request);
	if (d->parent)
		cJSON_AddNumberToObject(e, "parent", d->parent);
	if (d->round > 0)
		cJSON_AddNumberToObject(e, "round", d->round);
	if (d->archiveEntry > 0)
		cJSON_AddNumberToObject(e, "archive_entry", d->archiveEntry);
	return session_emit(s, e, err) < 0 ? -1 : id;
}

/* an event of type t about idea id, or NULL + err when there is no such idea */
static cJSON *idea_event(struct session *s, enum ev_type t, int id, char *err)
{
	if (!state_idea(&s->st, id))
		return kl_err(err, "no idea %d in the session", id), NULL;
	cJSON *e = ev_new(t);
	cJSON_AddNumberToObject(e, "id", id);
	return e;
}

int ev_idea_accepted(struct session *s, int id, char *err)
{
	cJSON *e = idea_event(s, EV_IDEA_ACCEPTED, id, err);
	return e ? session_emit(s, e, err) : -1;
}

int ev_idea_rejected(struct session *s, int id, const char *zReason, char *err)
{
	cJSON *e = idea_event(s, EV_IDEA_REJECTED, id, err);
	if (e && zReason)
		cJSON_AddStringToObject(e, "reason", zReason);
	return e ? session_emit(s, e, err) : -1;
}

int ev_idea_duplicate(struct session *s, int id, int dupOf, char *err)
{
	const struct state_idea *o = state_idea(&s->st, dupOf);
	if (!o || dupOf == id)
		return kl_err(err, "idea %d cannot repeat idea %d", id, dupOf);
	cJSON *e = idea_event(s, EV_IDEA_REJECTED, id, err);
	if (!e)
		return -1;
	char why[96];
	snprintf(why, sizeof why, "the same as idea %d for #%d (deduplicated)", dupOf, o->parent);
	cJSON_AddStringToObject(e, "reason", why);
	cJSON_AddNumberToObject(e, "duplicate_of", dupOf);
	return session_emit(s, e, err);
}

int ev_idea_edited(struct session *s, int id, const char *zTitle, const char *zDescription,
                   const char *zCategory, char *err)
{
	cJSON *e = idea_event(s, EV_IDEA_EDITED, id, err);
	if (!e)
		return -1;
	if (zTitle)
		cJSON_AddStringToObject(e, "title", zTitle);
	if (zDescription)
		cJSON_AddStringToObject(e, "description", zDescription);
	if (zCategory)
		cJSON_AddStringToObject(e, "category", ideas_category(zCategory, NULL));
	return session_emit(s, e, err);
}

int ev_llm_request(struct session *s, const struct ev_llm_request *q, char *err)
{
	int id = state_next_request_id(&s->st);
	cJSON *e = ev_new(EV_LLM_REQUEST);
	cJSON_AddNumberToObject(e, "request", id);
	cJSON_AddStringToObject(e, "purpose", q->zPurpose);
	cJSON_AddStringToObject(e, "provider", q->zProvider);
	cJSON_AddStringToObject(e, "model", q->zModel);
	cJSON_AddStringToObject(e, "base_url", q->zBaseUrl);
	cJSON_AddStringToObject(e, "system", q->zSystem ? q->zSystem : "");
	cJSON_AddStringToObject(e, "prompt", q->zPrompt);
	cJSON_AddNumberToObject(e, "parent", q->parent);
	if (q->idea) {
		cJSON_AddNumberToObject(e, "idea", q->idea);
		cJSON_AddNumberToObject(e, "branch", q->branch);
		cJSON_AddNumberToObject(e, "attempt", q->attempt);
		if (q->fixes)
			cJSON_AddNumberToObject(e, "fixes", q->fixes);
	}
	if (q->round > 0)
		cJSON_AddNumberToObject(e, "round", q->round);
	return session_emit(s, e, err) < 0 ? -1 : id;
}

int ev_llm_response(struct session *s, int request, const struct ev_llm_response *r, char *err)
{
	cJSON *e = ev_new(EV_LLM_RESPONSE);
	cJSON_AddNumberToObject(e, "request", request);
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
	cJSON_AddStringToObject(e, "provider", r->zProvider);
	cJSON_AddStringToObject(e, "model", r->zModel);
	if (r->sameAs > 0)
		cJSON_AddNumberToObject(e, "same_as", r->sameAs);
	return session_emit(s, e, err);
}

/* ---- the search's (sessions/search/search.h) ---- */

/* a new event t carrying the search's elapsed time */
static cJSON *search_event(enum ev_type t, double elapsedS)
{
	cJSON *e = ev_new(t);
	cJSON_AddNumberToObject(e, "elapsed_s", elapsedS);
	return e;
}

static cJSON *cand_event(enum ev_type t, int cand, double elapsedS)
{
	cJSON *e = ev_new(t);
	cJSON_AddNumberToObject(e, "candidate", cand);
	cJSON_AddNumberToObject(e, "elapsed_s", elapsedS);
	return e;
}

static void budget_fields(cJSON *e, const struct ev_search_budget *b)
{
	cJSON_AddNumberToObject(e, "rounds", b->rounds);
	cJSON_AddNumberToObject(e, "candidates", b->candidates);
	cJSON_AddNumberToObject(e, "usd", b->usd);
	cJSON_AddNumberToObject(e, "llm_requests", b->llmRequests);
}

int ev_search_started(struct session *s, const cJSON *settings, double elapsedS, char *err)
{
	cJSON *e = ev_new(EV_SEARCH_STARTED);
	cJSON_AddItemToObject(e, "settings", cJSON_Duplicate(settings, 1));
	cJSON_AddNumberToObject(e, "elapsed_s", elapsedS);
	return session_emit(s, e, err);
}

int ev_search_paused(struct session *s, double elapsedS, char *err)
{
	return session_emit(s, search_event(EV_SEARCH_PAUSED, elapsedS), err);
}

int ev_search_resumed(struct session *s, double elapsedS, int bContinued, char *err)
{
	cJSON *e = search_event(EV_SEARCH_RESUMED, elapsedS);
	if (bContinued)
		cJSON_AddBoolToObject(e, "continued", 1);
	return session_emit(s, e, err);
}

int ev_search_stopped(struct session *s, const char *zReason, double elapsedS, char *err)
{
	cJSON *e = ev_new(EV_SEARCH_STOPPED);
	cJSON_AddStringToObject(e, "reason", zReason);
	cJSON_AddNumberToObject(e, "elapsed_s", elapsedS);
	return session_emit(s, e, err);
}

int ev_search_finished(struct session *s, const char *zReason, const struct ev_search_budget *b,
                       double elapsedS, char *err)
{
	cJSON *e = ev_new(EV_SEARCH_FINISHED);
	cJSON_AddStringToObject(e, "reason", zReason);
	budget_fields(e, b);
	cJSON_AddNumberToObject(e, "elapsed_s", elapsedS);
	return session_emit(s, e, err);
}

int ev_search_set(struct session *s, const char *zKey, const cJSON *value, double elapsedS,
                  char *err)
{
	cJSON *e = ev_new(EV_SEARCH_SET);
	cJSON_AddStringToObject(e, "key", zKey);
	cJSON_AddItemToObject(e, "value", cJSON_Duplicate(value, 1));
	if (elapsedS >= 0)
		cJSON_AddNumberToObject(e, "elapsed_s", elapsedS);
	return session_emit(s, e, err);
}

int ev_round_started(struct session *s, int round, int best, double elapsedS, char *err)
{
	cJSON *e = ev_new(EV_ROUND_STARTED);
	cJSON_AddNumberToObject(e, "round", round);
	cJSON_AddNumberToObject(e, "best", best);
	cJSON_AddNumberToObject(e, "elapsed_s", elapsedS);
	return session_emit(s, e, err);
}

int ev_parents_chosen(struct session *s, int round, const char *zPolicy, double seed,
                      const struct ev_parent *a, int n, const cJSON *snapshot, double elapsedS,
                      char *err)
{
	cJSON *e = ev_new(EV_PARENTS_CHOSEN);
	cJSON_AddNumberToObject(e, "round", round);
	cJSON_AddStringToObject(e, "policy", zPolicy);
	cJSON_AddNumberToObject(e, "seed", seed);
	cJSON *ps = cJSON_AddArrayToObject(e, "parents");
	for (int i = 0; i < n; i++) {
		cJSON *p = cJSON_CreateObject();
		cJSON_AddNumberToObject(p, "id", a[i].id);
		cJSON_AddStringToObject(p, "name", a[i].zName);
		cJSON_AddNumberToObject(p, "speedup", a[i].speedup);
		cJSON_AddStringToObject(p, "source_sha256", a[i].zSha256);
		cJSON_AddStringToObject(p, "reason", a[i].zReason);
		cJSON_AddItemToArray(ps, p);
	}
	if (snapshot)
		cJSON_AddItemToObject(e, "snapshot", cJSON_Duplicate(snapshot, 1));
	cJSON_AddNumberToObject(e, "elapsed_s", elapsedS);
	return session_emit(s, e, err);
}

int ev_round_finished(struct session *s, int round, int best, double bestSpeedup, int made,
                      double elapsedS, char *err)
{
	cJSON *e = ev_new(EV_ROUND_FINISHED);
	cJSON_AddNumberToObject(e, "round", round);
	cJSON_AddNumberToObject(e, "best", best);
	cJSON_AddNumberToObject(e, "best_speedup", bestSpeedup);
	cJSON_AddNumberToObject(e, "made", made);
	cJSON_AddNumberToObject(e, "elapsed_s", elapsedS);
	return session_emit(s, e, err);
}

int ev_pin(struct session *s, int cand, double elapsedS, char *err)
{
	return session_emit(s, cand_event(EV_PIN, cand, elapsedS), err);
}

int ev_ban(struct session *s, int cand, double elapsedS, char *err)
{
	return session_emit(s, cand_event(EV_BAN, cand, elapsedS), err);
}

int ev_unban(struct session *s, int cand, double elapsedS, char *err)
{
	return session_emit(s, cand_event(EV_UNBAN, cand, elapsedS), err);
}

static int category_event(struct session *s, enum ev_type t, const char *zCategory, double elapsedS,
                          char *err)
{
	cJSON *e = ev_new(t);
	cJSON_AddStringToObject(e, "category", zCategory);
	cJSON_AddNumberToObject(e, "elapsed_s", elapsedS);
	return session_emit(s, e, err);
}

int ev_ban_category(struct session *s, const char *zCategory, double elapsedS, char *err)
{
	return category_event(s, EV_BAN_CATEGORY, zCategory, elapsedS, err);
}

int ev_prefer_category(struct session *s, const char *zCategory, double elapsedS, char *err)
{
	return category_event(s, EV_PREFER_CATEGORY, zCategory, elapsedS, err);
}

int ev_idea_injected(struct session *s, int idea, double elapsedS, char *err)
{
	cJSON *e = ev_new(EV_IDEA_INJECTED);
	cJSON_AddNumberToObject(e, "idea", idea);
	cJSON_AddNumberToObject(e, "elapsed_s", elapsedS);
	return session_emit(s, e, err);
}

int ev_suspect_flagged(struct session *s, int cand, double speedup, const char *zWhy,
                       double elapsedS, char *err)
{
	cJSON *e = ev_new(EV_SUSPECT_FLAGGED);
	cJSON_AddNumberToObject(e, "candidate", cand);
	cJSON_AddNumberToObject(e, "speedup", speedup);
	cJSON_AddStringToObject(e, "why", zWhy);
	cJSON_AddNumberToObject(e, "elapsed_s", elapsedS);
	return session_emit(s, e, err);
}

int ev_suspect_cleared(struct session *s, int cand, double elapsedS, char *err)
{
	return session_emit(s, cand_event(EV_SUSPECT_CLEARED, cand, elapsedS), err);
}

int ev_new_best(struct session *s, int cand, double speedup, double timeMs, int previous,
                double previousSpeedup, double elapsedS, char *err)
{
	cJSON *e = ev_new(EV_NEW_BEST);
	cJSON_AddNumberToObject(e, "candidate", cand);
	cJSON_AddNumberToObject(e, "speedup", speedup);
	cJSON_AddNumberToObject(e, "time_ms", timeMs);
	if (previous) {
		cJSON_AddNumberToObject(e, "previous", previous);
		cJSON_AddNumberToObject(e, "previous_speedup", previousSpeedup);
	}
	cJSON_AddNumberToObject(e, "elapsed_s", elapsedS);
	return session_emit(s, e, err);
}

int ev_ab_compared(struct session *s, int cand, int incumbent, const cJSON *ab, char *err)
{
	cJSON *e = ev_new(EV_AB_COMPARED);
	cJSON_AddNumberToObject(e, "candidate", cand);
	cJSON_AddNumberToObject(e, "incumbent", incumbent);
	struct verdict_ab a;
	verdict_ab_decode(ab, &a);
	const cJSON *pv = cJSON_GetObjectItem(ab, "p_value"); /* untyped: the A/B's own */
	cJSON_AddNumberToObject(e, "pairs", a.pairs > 0 ? a.pairs : 0);
	cJSON_AddNumberToObject(e, "wins", a.wins > 0 ? a.wins : 0);
	cJSON_AddNumberToObject(e, "p_value", cJSON_IsNumber(pv) ? pv->valuedouble : 0);
	cJSON_AddNumberToObject(e, "ratio", isnan(a.ratio) ? 0 : a.ratio);
	cJSON_AddBoolToObject(e, "won", a.won);
	if (a.unverified)
		cJSON_AddBoolToObject(e, "verified", 0);
	const char *side[][2] = {{"candidate", "candidate_ms"}, {"incumbent", "incumbent_ms"}};
	for (size_t i = 0; i < 2; i++) {
		const cJSON *m =
		    cJSON_GetObjectItem(cJSON_GetObjectItem(ab, side[i][0]), "median_ms");
		if (cJSON_IsNumber(m))
			cJSON_AddNumberToObject(e, side[i][1], m->valuedouble);
	}
	const char *str[] = {"rule", "method", "error", "clock_bound"};
	for (size_t i = 0; i < sizeof str / sizeof *str; i++) {
		const char *z = cJSON_GetStringValue(cJSON_GetObjectItem(ab, str[i]));
		if (z)
			cJSON_AddStringToObject(e, str[i], z);
	}
	return session_emit(s, e, err);
}

int ev_search_budget(struct session *s, const struct ev_search_budget *b, double elapsedS,
                     char *err)
{
	cJSON *e = ev_new(EV_SEARCH_BUDGET);
	budget_fields(e, b);
	cJSON_AddNumberToObject(e, "elapsed_s", elapsedS);
	return session_emit(s, e, err);
}
