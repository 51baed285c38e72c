/*
 * verbs_search.c - the automatic search (sessions/search.h) from the
 * command line: the front's search, `search start|pause|resume|stop|step|
 * status`, and the steering commands (pin, ban, unban, prefer, clear, idea,
 * gate, set).
 */
#include "actions.h"

#include <stdio.h>
#include <string.h>

#include "verbs.h"
#include "search.h"

static void on_search(void *arg, const char *zLine, const cJSON *ev)
{
	struct actions_front *f = arg;
	(void)ev;
	if (zLine)
		f->h->say(f->arg, zLine, 0);
}

struct search *actions_search_open(struct actions_front *f, int bResume)
{
	if (!f->lv)
		return NULL;
	if (!f->search) {
		f->search = search_new(f->lv, on_search, f);
		const struct state_search *ss = &runner_state(f->lv)->search;
		char err[KL_ERRLEN];
		if (bResume && ss->started && ss->state == SEARCH_RUNNING &&
		    search_start(f->search, NULL, err) < 0)
			actions_fail(f, "search: %s", err);
	}
	return f->search;
}

void actions_search_close(struct actions_front *f)
{
	search_free(f->search);
	f->search = NULL;
}

int actions_search_busy(const struct actions_front *f)
{
	if (!f->search || !f->lv)
		return 0;
	const struct state_search *ss = &runner_state(f->lv)->search;
	return ss->state == SEARCH_RUNNING && !search_waiting(f->search);
}

/* the search's rounds, each parent and why it was chosen */
static void search_text(const struct state *st, strbuf *sb)
{
	char line[300];
	search_status_state(st, line, sizeof line);
	sb_addf(sb, "%s\n", *line ? line : "no search has run in this session");
	const struct state_search *ss = &st->search;
	if (search_state_ended(ss->state) && ss->zWhy && *ss->zWhy)
		sb_addf(sb, "%s: %s\n", search_state_name(ss->state), ss->zWhy);
	for (int i = 0; i < ss->nRound; i++) {
		const struct state_round *r = &ss->aRound[i];
		const struct cand *b = state_cand(st, r->bestId);
		sb_addf(sb, "round %d%s", r->round, r->round ? "" : " (translation)");
		if (r->finished && b)
			sb_addf(sb, ": best #%d %s %.3gx", b->id, b->zName, b->speedup);
		sb_addf(sb, "%s\n", r->finished ? "" : " (running)");
		for (int k = 0; k < r->nParent; k++) {
			const struct cand *p = state_cand(st, r->aParent[k]);
			sb_addf(sb, "  parent #%d %s: %s\n", r->aParent[k], p ? p->zName : "?",
			        r->azReason[k]);
		}
	}
	for (int i = 0; i < ss->nSuspect; i++)
		sb_addf(sb, "suspect #%d (%.3gx)%s: %s\n", ss->aSuspect[i].cand,
		        ss->aSuspect[i].speedup, ss->aSuspect[i].cleared ? ", cleared" : "",
		        ss->aSuspect[i].zWhy);
}

/* search VERB (bSearch), or a steering command: pin ID, ban ID|CATEGORY, ..., set KEY VALUE */
static int do_search(struct actions_front *f, const struct commands_line *c, int bSearch)
{
	char err[KL_ERRLEN];
	strbuf arg = STRBUF_INIT;
	for (int i = bSearch ? 1 : 0; i < c->nArg; i++)
		sb_addf(&arg, "%s%s", arg.len ? " " : "", c->azArg[i]);
	const char *z = arg.buf ? arg.buf : "";
	int rc = 0;
	if (bSearch && !strcmp(c->azArg[0], "status")) {
		strbuf sb = STRBUF_INIT;
		search_text(actions_state(f), &sb);
		f->h->page(f->arg, "search", sb.buf, 0);
		sb_free(&sb);
	} else if (actions_need_live(f, c) < 0) {
		rc = -1;
	} else {
		struct search *s = actions_search_open(f, 0);
		/* without an LLM provider, a search sweeps and crosses over only */
		cJSON *set = cJSON_CreateObject();
		if (!f->cfg || !f->cfg->zProvider)
			cJSON_AddNumberToObject(set, "sweep_only", 1);
		if (bSearch) {
			const char *v = c->azArg[0];
			rc = !strcmp(v, "start")    ? search_start(s, set, err)
			     : !strcmp(v, "pause")  ? search_pause(s, err)
			     : !strcmp(v, "resume") ? search_resume(s, err)
			     : !strcmp(v, "stop")   ? search_stop(s, NULL, err)
			     : !strcmp(v, "step")   ? search_step(s, set, err)
			                            : kl_err(err,
			                                     "expected start, pause, resume, stop, "
			                                       "step or status, got '%s'",
			                                     v);
		} else {
			rc = search_steer(s, c->def->name, z, err);
		}
		cJSON_Delete(set);
		if (rc < 0)
			actions_fail(f, "%s: %s", c->def->name, err);
	}
	sb_free(&arg);
	return rc;
}

int verb_search(struct actions_front *f, const struct commands_line *c)
{
	return do_search(f, c, 1);
}

int verb_steer(struct actions_front *f, const struct commands_line *c)
{
	return do_search(f, c, 0);
}
