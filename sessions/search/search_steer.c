/*
 * search_steer.c - a person steering the search (pin, ban, prefer, clear,
 * idea, gate, set), and the search's status and lineage for front ends.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search_priv.h"
#include "ideas.h"
#include "policy.h"

/* key = val checked into o (bNamed: an error names the key, else only what
 * was wrong with the value: the command was the key): 0, or -1 + err */
static int setting_into(cJSON *o, const char *key, const char *val, int bNamed, char *err)
{
	return bNamed ? search_setting_parse(o, key, val, err)
	              : search_setting_parse_value(o, key, val, err);
}

/* a setting given before the search started: checked now, kept for its
 * search_started (search_start) */
static int preset(struct search *s, const char *key, const char *val, int bNamed, char *err)
{
	char line[400];
	if (!s->preset)
		s->preset = cJSON_CreateObject();
	cJSON_DeleteItemFromObjectCaseSensitive(s->preset, key);
	if (setting_into(s->preset, key, val, bNamed, err) < 0)
		return -1;
	snprintf(line, sizeof line,
	         "search setting %s = %s: from the first round of the search "
	         "started next",
	         key, val);
	note(s, line, NULL);
	return 0;
}

const char *search_category_named(const char *z, char *err)
{
	const char *zCat = ideas_category_named(z);
	if (zCat)
		return zCat;
	char *zc = term_clean(z, 0);
	const char *near = ideas_category_nearest(z);
	/* the suggestion first: a narrow message line shows it */
	if (near)
		kl_err(err,
		       "'%.80s': did you mean '%s'? (it is neither a candidate id nor an idea "
		       "category, which are: %s; a prefix of just one will do)",
		       zc, near, ideas_category_list());
	else
		kl_err(err,
		       "'%.80s' is neither a candidate id nor an idea category (one of: %s; a "
		       "prefix of just one will do)",
		       zc, ideas_category_list());
	free(zc);
	return NULL;
}

/* an event journaled and said (rc: its ev_*'s), then the search goes on */
static int steered(struct search *s, int rc, const char *zLine, char *err)
{
	if (search_emitted(s, rc, zLine, err) < 0)
		return -1;
	search_tick(s);
	return 0;
}

/* candidate id of a search's session, or NULL + err */
static const struct cand *steered_cand(struct search *s, int id, char *err)
{
	if (search_need(s, SEARCH_NONE, err) < 0)
		return NULL;
	const struct cand *c = state_cand(ST(s), id);
	if (!c)
		kl_err(err, "there is no candidate '%d'", id);
	return c;
}

int search_pin(struct search *s, int id, char *err)
{
	char line[400];
	const struct cand *c = steered_cand(s, id, err);
	if (!c)
		return -1;
	if (!policy_eligible(ST(s), c))
		return kl_err(err,
		              "candidate %d is %s: only a correct, timed candidate "
		              "can be a parent",
		              id, c->zStatus);
	snprintf(line, sizeof line, "pin #%d %s", id, c->zName);
	return steered(s, ev_pin(SES(s), id, EL(s), ERR(s, err)), line, err);
}

int search_ban(struct search *s, int id, char *err)
{
	char line[400];
	const struct cand *c = steered_cand(s, id, err);
	if (!c)
		return -1;
	snprintf(line, sizeof line, "ban #%d %s", id, c->zName);
	/* a ban of the best hands it over at the tick (search_judge.c) */
	return steered(s, ev_ban(SES(s), id, EL(s), ERR(s, err)), line, err);
}

int search_unban(struct search *s, int id, char *err)
{
	char line[400];
	const struct cand *c = steered_cand(s, id, err);
	if (!c)
		return -1;
	snprintf(line, sizeof line, "unban #%d %s", id, c->zName);
	if (search_emitted(s, ev_unban(SES(s), id, EL(s), ERR(s, err)), line, err) < 0)
		return -1;
	if ((size_t)id < s->nJudged)
		s->judged[id] = 0; /* judged again: it may challenge the best */
	search_tick(s);
	return 0;
}

int search_clear(struct search *s, int id, char *err)
{
	char line[400];
	if (!steered_cand(s, id, err))
		return -1;
	const struct state_suspect *x = state_search_suspect(ST(s), id);
	if (!x || x->cleared)
		return kl_err(err, "candidate %d is not a suspect", id);
	snprintf(line, sizeof line,
	         "suspect #%d cleared by a person: it may be a "
	         "parent and the best",
	         id);
	if (search_emitted(s, ev_suspect_cleared(SES(s), id, EL(s), ERR(s, err)), line, err) < 0)
		return -1;
	if ((size_t)id < s->nJudged)
		s->judged[id] = 0; /* judged again as the best */
	search_tick(s);
	return 0;
}

int search_ban_category(struct search *s, const char *zCat, char *err)
{
	char line[400];
	const char *c = search_category_named(zCat, err);
	if (!c || search_need(s, SEARCH_NONE, err) < 0)
		return -1;
	snprintf(line, sizeof line, "the gate rejects ideas of category '%s'", c);
	return steered(s, ev_ban_category(SES(s), c, EL(s), ERR(s, err)), line, err);
}

int search_prefer_category(struct search *s, const char *zCat, char *err)
{
	char line[400];
	const char *c = search_category_named(zCat, err);
	if (!c || search_need(s, SEARCH_NONE, err) < 0)
		return -1;
	snprintf(line, sizeof line, "the gate prefers ideas of category '%s'", c);
	return steered(s, ev_prefer_category(SES(s), c, EL(s), ERR(s, err)), line, err);
}

int search_idea(struct search *s, const char *zText, char *err)
{
	char line[400];
	int id;
	if (search_need(s, SEARCH_NONE, err) < 0)
		return -1;
	if (!zText || !*zText)
		return kl_err(err, "idea needs some text");
	int pin = ST(s)->search.pinned;
	struct pipeline *p = driver_llm(s->drv, err);
	if (!p || (id = pipeline_idea_new(p, zText, pin, err)) < 0 ||
	    pipeline_idea_accept(p, id, err) < 0)
		return -1;
	snprintf(line, sizeof line, "idea %d injected by a person: implemented in the %s round", id,
	         ST(s)->search.roundOpen ? "current" : "next");
	return steered(s, ev_idea_injected(SES(s), id, EL(s), ERR(s, err)), line, err);
}

/* setting key = val (bNamed: an error names the key) */
static int set_setting(struct search *s, const char *key, const char *val, int bNamed, char *err)
{
	char line[400];
	/* a setting may be given before the search starts, so that its first
	 * round obeys it (the gate above all) */
	if (!ST(s)->search.started)
		return preset(s, key, val, bNamed, err);
	if (search_need(s, SEARCH_NONE, err) < 0)
		return -1;
	cJSON *tmp = cJSON_CreateObject();
	if (setting_into(tmp, key, val, bNamed, err) < 0) {
		cJSON_Delete(tmp);
		return -1;
	}
	/* on a search that has ended nothing runs now: the setting changes
	 * what is shown (precision) or waits for it to go on */
	enum search_state was = ST(s)->search.state;
	snprintf(line, sizeof line, "search setting %s = %s%s", key, val,
	         was == SEARCH_FINISHED
	             ? " (the search has finished: nothing is evaluated now; `search "
	               "start` goes on with it)"
	         : was == SEARCH_STOPPED
	             ? " (the search is stopped: nothing is evaluated now; `search start` "
	               "resumes it with it)"
	             : "");
	int rc = ev_search_set(SES(s), key, cJSON_GetObjectItem(tmp, key), EL(s), ERR(s, err));
	cJSON_Delete(tmp);
	return steered(s, rc, line, err);
}

int search_set(struct search *s, const char *zKey, const char *zVal, char *err)
{
	return set_setting(s, zKey, zVal, 1, err);
}

int search_set_gate(struct search *s, const char *zVal, char *err)
{
	return set_setting(s, "gate", zVal, 0, err);
}

int search_waiting(const struct search *s)
{
	const struct state *st = ST(s);
	if (!st->search.roundOpen || strcmp(OPT(s)->gate, "human") || driver_jobs(s->drv) ||
	    pipeline_busy(driver_pipeline(s->drv)))
		return 0;
	for (int i = 0; i < st->search.nRound; i++)
		if (!st->search.aRound[i].finished &&
		    search_pending_ideas(st, st->search.aRound[i].round))
			return 1;
	return 0;
}

int search_done(const struct search *s)
{
	const struct state_search *ss = &ST(s)->search;
	if (!ss->started || ss->state == SEARCH_NONE)
		return 1;
	if (search_state_live(ss->state))
		return 0;
	return !driver_jobs(s->drv) && !pipeline_busy(driver_pipeline(s->drv));
}

void search_status_state(const struct state *st, char *buf, size_t n)
{
	const struct state_search *ss = &st->search;
	if (!ss->started) {
		snprintf(buf, n, "%s", "");
		return;
	}
	double usd = ss->set.budget_usd, rounds = ss->set.rounds, maxc = ss->set.max_candidates;
	char r[32] = "", c[32] = "", u[32] = "", b[64] = "none";
	if (rounds > 0)
		snprintf(r, sizeof r, "/%g", rounds);
	if (maxc > 0)
		snprintf(c, sizeof c, "/%g", maxc);
	if (usd > 0)
		snprintf(u, sizeof u, "/$%g", usd);
	/* the session's best, as every front end names it (state_best()) */
	const struct cand *best = state_best(st, NULL, NULL);
	if (best)
		snprintf(b, sizeof b, "#%d %.3gx", best->id, best->speedup);
	int nSus = 0, nSame = 0;
	for (int i = 0; i < ss->nSuspect; i++)
		nSus += !ss->aSuspect[i].cleared;
	/* candidates of the same machine code as one timed before: not timed */
	char same[48] = "", open[24] = "";
	for (int i = ss->nCandStart; i < st->nCand; i++)
		nSame += st->aCand[i].v.zNotTimed != NULL;
	if (nSame)
		snprintf(same, sizeof same, ", %d same code", nSame);
	if (ss->roundOpen > 1)
		snprintf(open, sizeof open, " (%d open)", ss->roundOpen);
	snprintf(buf, n, "search %s, round %d%s%s, %d%s cands%s, $%.2f%s, best %s%s%s",
	         search_state_name(ss->state), ss->round, r, open, st->nCand - ss->nCandStart, c,
	         same, st->llm.cost - ss->costStart, u, b, nSus ? ", suspects " : "",
	         nSus ? "!" : "");
}

void search_status(const struct search *s, char *buf, size_t n)
{
	search_status_state(ST(s), buf, n);
	size_t k = strlen(buf);
	if (k && k + 16 < n)
		snprintf(buf + k, n - k, ", %.0f s", search_elapsed(s));
}

void search_lineage(const struct state *st, int id, strbuf *sb)
{
	int chain[256], n = 0;
	for (const struct cand *c = state_cand(st, id); c && n < 256;
	     c = c->nParent ? state_cand(st, c->aParent[0]) : NULL)
		chain[n++] = c->id;
	for (int i = n - 1; i >= 0; i--) {
		const struct cand *c = state_cand(st, chain[i]);
		sb_addf(sb, "%s#%d %s (%s", i == n - 1 ? "" : " -> ", c->id, c->zName, c->zOrigin);
		if (c->round)
			sb_addf(sb, ", round %d", c->round);
		if (c->zIdea)
			sb_addf(sb, ": %s", c->zIdea);
		if (c->speedup > 0)
			sb_addf(sb, "; %.3gx", c->speedup);
		sb_addf(sb, ")");
	}
}
