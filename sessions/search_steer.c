/*
 * search_steer.c - a person steering the search (pin, ban, prefer, clear,
 * idea, gate, set), and the search's status and lineage for front ends.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search_int.h"
#include "ideas.h"
#include "policy.h"

/* a candidate id from "12" or "#12" */
static int cand_arg(const struct search *s, const char *z, char *err)
{
	if (!z)
		return kl_err(err, "a candidate id is needed");
	if (*z == '#')
		z++;
	char *end;
	long v = strtol(z, &end, 10);
	if (end == z || *end || !state_cand(ST(s), (int)v))
		return kl_err(err, "there is no candidate '%s'", z);
	return (int)v;
}

static int is_number(const char *z)
{
	if (*z == '#')
		z++;
	if (!*z)
		return 0;
	for (; *z; z++)
		if (*z < '0' || *z > '9')
			return 0;
	return 1;
}

/* `gate` and `set KEY VALUE`: the key and the value of zArg into key and
 * *pzVal.  0, or -1 + err */
static int setting_args(const char *zVerb, const char *zArg, char *key, size_t nKey,
                        const char **pzVal, char *err)
{
	const char *val = zArg ? zArg : "";
	if (!strcmp(zVerb, "gate")) {
		snprintf(key, nKey, "gate");
	} else {
		size_t k = strcspn(val, " ");
		if (!k || k >= nKey || !val[k])
			return kl_err(err, "set needs a KEY and a VALUE (keys: %s)",
			              search_setting_keys());
		snprintf(key, nKey, "%.*s", (int)k, val);
		val += k + strspn(val + k, " ");
	}
	*pzVal = val;
	return 0;
}

/* key = val checked into o: 0, or -1 + err; `gate humn`'s error does not
 * say "gate" twice (its front end names the command before it) */
static int setting_parse(cJSON *o, const char *zVerb, const char *key, const char *val, char *err)
{
	if (search_setting_parse(o, key, val, err) == 0)
		return 0;
	size_t k = strlen(zVerb);
	if (!strcmp(zVerb, key) && !strncmp(err, key, k) && !strncmp(err + k, ": ", 2))
		memmove(err, err + k + 2, strlen(err + k + 2) + 1);
	return -1;
}

/* a setting given before the search started: checked now, kept for its
 * search_started (search_start) */
static int preset(struct search *s, const char *zVerb, const char *zArg, char *err)
{
	char key[64], line[400];
	const char *val;
	if (setting_args(zVerb, zArg, key, sizeof key, &val, err) < 0)
		return -1;
	if (!s->preset)
		s->preset = cJSON_CreateObject();
	cJSON_DeleteItemFromObjectCaseSensitive(s->preset, key);
	if (setting_parse(s->preset, zVerb, key, val, err) < 0)
		return -1;
	snprintf(line, sizeof line,
	         "search setting %s = %s: from the first round of the search "
	         "started next",
	         key, val);
	note(s, line, NULL);
	return 0;
}

/* the idea category zArg names, or NULL + err saying what it is not and,
 * for a typo, which category it is near ("did you mean ...?") */
static const char *category_arg(const char *zArg, char *err)
{
	const char *zCat = ideas_category_named(zArg);
	if (zCat)
		return zCat;
	char *z = term_clean(zArg, 0);
	const char *near = ideas_category_nearest(zArg);
	/* the suggestion first: a narrow message line shows it */
	if (near)
		kl_err(err,
		       "'%.80s': did you mean '%s'? (it is neither a candidate id nor an idea "
		       "category, which are: %s; a prefix of just one will do)",
		       z, near, ideas_category_list());
	else
		kl_err(err,
		       "'%.80s' is neither a candidate id nor an idea category (one of: %s; a "
		       "prefix of just one will do)",
		       z, ideas_category_list());
	free(z);
	return NULL;
}

int search_steer(struct search *s, const char *zVerb, const char *zArg, char *err)
{
	/* a setting may be given before the search starts, so that its first
	 * round obeys it (the gate above all) */
	if (!ST(s)->search.started && (!strcmp(zVerb, "gate") || !strcmp(zVerb, "set")))
		return preset(s, zVerb, zArg, err);
	/* a typo is answered before anything else (a search running or not) */
	if ((!strcmp(zVerb, "ban") || !strcmp(zVerb, "prefer")) && zArg && *zArg &&
	    !is_number(zArg) && !category_arg(zArg, err))
		return -1;
	if (search_need(s, SEARCH_NONE, err) < 0)
		return -1;
	char line[400];
	int id;
	if (!strcmp(zVerb, "pin") || !strcmp(zVerb, "clear") || !strcmp(zVerb, "unban") ||
	    (!strcmp(zVerb, "ban") && zArg && is_number(zArg))) {
		if ((id = cand_arg(s, zArg, err)) < 0)
			return -1;
		const struct cand *c = state_cand(ST(s), id);
		if (!strcmp(zVerb, "clear")) {
			const struct state_suspect *x = state_search_suspect(ST(s), id);
			if (!x || x->cleared)
				return kl_err(err, "candidate %d is not a suspect", id);
			snprintf(line, sizeof line,
			         "suspect #%d cleared by a person: it may be a "
			         "parent and the best",
			         id);
			if (search_emitted(s, ev_suspect_cleared(SES(s), id, EL(s), ERR(s, err)),
			                   line, err) < 0)
				return -1;
			if ((size_t)id < s->nJudged)
				s->judged[id] = 0; /* judged again as the best */
		} else {
			if (!strcmp(zVerb, "pin") && !policy_eligible(ST(s), c))
				return kl_err(err,
				              "candidate %d is %s: only a correct, timed candidate "
				              "can be a parent",
				              id, c->zStatus);
			snprintf(line, sizeof line, "%s #%d %s", zVerb, id, c->zName);
			int rc = !strcmp(zVerb, "pin")   ? ev_pin(SES(s), id, EL(s), ERR(s, err))
			         : !strcmp(zVerb, "ban") ? ev_ban(SES(s), id, EL(s), ERR(s, err))
			                                 : ev_unban(SES(s), id, EL(s), ERR(s, err));
			if (search_emitted(s, rc, line, err) < 0)
				return -1;
		}
	} else if (!strcmp(zVerb, "ban") || !strcmp(zVerb, "prefer")) {
		if (!zArg || !*zArg)
			return kl_err(err, "%s needs a candidate id or an idea category", zVerb);
		const char *zCat = category_arg(zArg, err);
		if (!zCat)
			return -1;
		zArg = zCat;
		snprintf(line, sizeof line, "%s ideas of category '%s'",
		         !strcmp(zVerb, "ban") ? "the gate rejects" : "the gate prefers", zArg);
		int rc = !strcmp(zVerb, "ban")
		             ? ev_ban_category(SES(s), zArg, EL(s), ERR(s, err))
		             : ev_prefer_category(SES(s), zArg, EL(s), ERR(s, err));
		if (search_emitted(s, rc, line, err) < 0)
			return -1;
	} else if (!strcmp(zVerb, "idea")) {
		if (!zArg || !*zArg)
			return kl_err(err, "idea needs some text");
		int pin = ST(s)->search.pinned;
		struct pipeline *p = runner_llm(s->rn, err);
		if (!p || (id = pipeline_idea_new(p, zArg, pin, err)) < 0 ||
		    pipeline_idea_accept(p, id, err) < 0)
			return -1;
		snprintf(line, sizeof line,
		         "idea %d injected by a person: implemented in the %s round", id,
		         ST(s)->search.roundOpen ? "current" : "next");
		if (search_emitted(s, ev_idea_injected(SES(s), id, EL(s), ERR(s, err)), line, err) <
		    0)
			return -1;
	} else if (!strcmp(zVerb, "gate") || !strcmp(zVerb, "set")) {
		char key[64];
		const char *val;
		if (setting_args(zVerb, zArg, key, sizeof key, &val, err) < 0)
			return -1;
		cJSON *tmp = cJSON_CreateObject();
		if (setting_parse(tmp, zVerb, key, val, err) < 0) {
			cJSON_Delete(tmp);
			return -1;
		}
		/* on a search that has ended nothing runs now: the setting
		 * changes what is shown (precision) or waits for it to go on */
		enum search_state was = ST(s)->search.state;
		snprintf(line, sizeof line, "search setting %s = %s%s", key, val,
		         was == SEARCH_FINISHED
		             ? " (the search has finished: nothing is evaluated now; `search "
		               "start` goes on with it)"
		         : was == SEARCH_STOPPED
		             ? " (the search is stopped: nothing is evaluated now; `search start` "
		               "resumes it with it)"
		             : "");
		int rc =
		    ev_search_set(SES(s), key, cJSON_GetObjectItem(tmp, key), EL(s), ERR(s, err));
		cJSON_Delete(tmp);
		if (search_emitted(s, rc, line, err) < 0)
			return -1;
	} else {
		return kl_err(err,
		              "unknown search command '%s' (pin, ban, unban, prefer, clear, "
		              "idea, gate, set)",
		              zVerb);
	}
	search_tick(s);
	return 0;
}

int search_waiting(const struct search *s)
{
	const struct state *st = ST(s);
	if (!st->search.roundOpen || strcmp(OPT(s)->gate, "human") || runner_jobs(s->rn) ||
	    pipeline_busy(runner_pipeline(s->rn)))
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
	return !runner_jobs(s->rn) && !pipeline_busy(runner_pipeline(s->rn));
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
		nSame += cJSON_GetObjectItem(st->aCand[i].result, "not_timed") != NULL;
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
