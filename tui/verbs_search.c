/*
 * verbs_search.c - the automatic search (sessions/search/search.h) from the
 * command line: the front's search, `search start|pause|resume|stop|step|
 * status`, and the steering commands (pin, ban, unban, prefer, clear, idea,
 * gate, set).
 */
#include "actions.h"

#include <stdio.h>
#include <stdlib.h>
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
		const struct state_search *ss = &driver_state(f->lv)->search;
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
	const struct state_search *ss = &driver_state(f->lv)->search;
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

/* the search of the session: after the checks every search command makes
 * (a live session), or NULL with the failure said */
static struct search *live_search(struct actions_front *f, const struct commands_line *c)
{
	return actions_need_live(f, c) < 0 ? NULL : actions_search_open(f, 0);
}

/* a command's outcome: its error said, named by the command */
static int said(struct actions_front *f, const struct commands_line *c, int rc, const char *err)
{
	if (rc < 0)
		actions_fail(f, "%s: %s", c->def->name, err);
	return rc;
}

/* `search start` and `step`'s settings: without an LLM provider, a
 * search sweeps and crosses over only */
static cJSON *start_settings(const struct actions_front *f)
{
	cJSON *set = cJSON_CreateObject();
	if (!f->cfg || !f->cfg->zProvider)
		cJSON_AddNumberToObject(set, "sweep_only", 1);
	return set;
}

static int sub_start(struct search *s, const struct actions_front *f, char *err)
{
	cJSON *set = start_settings(f);
	int rc = search_start(s, set, err);
	cJSON_Delete(set);
	return rc;
}

static int sub_step(struct search *s, const struct actions_front *f, char *err)
{
	cJSON *set = start_settings(f);
	int rc = search_step(s, set, err);
	cJSON_Delete(set);
	return rc;
}

static int sub_pause(struct search *s, const struct actions_front *f, char *err)
{
	(void)f;
	return search_pause(s, err);
}

static int sub_resume(struct search *s, const struct actions_front *f, char *err)
{
	(void)f;
	return search_resume(s, err);
}

static int sub_stop(struct search *s, const struct actions_front *f, char *err)
{
	(void)f;
	return search_stop(s, NULL, err);
}

/* search VERB: status, or one of the search's own calls */
int verb_search(struct actions_front *f, const struct commands_line *c)
{
	static const struct {
		const char *zName;
		int (*fn)(struct search *, const struct actions_front *, char *);
	} subs[] = {{"start", sub_start},
	            {"pause", sub_pause},
	            {"resume", sub_resume},
	            {"stop", sub_stop},
	            {"step", sub_step}};
	char err[KL_ERRLEN];
	const char *v = c->azArg[0];
	if (!strcmp(v, "status")) {
		strbuf sb = STRBUF_INIT;
		search_text(actions_state(f), &sb);
		f->h->page(f->arg, "search", sb.buf, 0);
		sb_free(&sb);
		return 0;
	}
	struct search *s = live_search(f, c);
	if (!s)
		return -1;
	for (size_t i = 0; i < sizeof subs / sizeof *subs; i++)
		if (!strcmp(v, subs[i].zName))
			return said(f, c, subs[i].fn(s, f, err), err);
	return said(f, c,
	            kl_err(err, "expected start, pause, resume, stop, step or status, got '%s'", v),
	            err);
}

/* pin, unban, clear: a candidate id (the line's parsed CAND argument) */
int verb_pin(struct actions_front *f, const struct commands_line *c)
{
	char err[KL_ERRLEN];
	struct search *s = live_search(f, c);
	return s ? said(f, c, search_pin(s, (int)c->aNum[0], err), err) : -1;
}

int verb_unban(struct actions_front *f, const struct commands_line *c)
{
	char err[KL_ERRLEN];
	struct search *s = live_search(f, c);
	return s ? said(f, c, search_unban(s, (int)c->aNum[0], err), err) : -1;
}

int verb_clear(struct actions_front *f, const struct commands_line *c)
{
	char err[KL_ERRLEN];
	struct search *s = live_search(f, c);
	return s ? said(f, c, search_clear(s, (int)c->aNum[0], err), err) : -1;
}

/* "12" or "#12": *pId and 1; else 0 (a category, say) */
static int cand_id(const char *z, int *pId)
{
	const char *p = *z == '#' ? z + 1 : z;
	char *end;
	long v = strtol(p, &end, 10);
	if (!*p || *p < '0' || *p > '9' || *end || v < 0 || v > 1 << 30)
		return 0;
	*pId = (int)v;
	return 1;
}

/* ban ID or ban CATEGORY (a typo of a category answered before the
 * search is asked for: search_ban_category) */
int verb_ban(struct actions_front *f, const struct commands_line *c)
{
	char err[KL_ERRLEN];
	struct search *s = live_search(f, c);
	if (!s)
		return -1;
	strbuf arg = STRBUF_INIT;
	commands_text(c, 0, &arg);
	const char *z = arg.buf ? arg.buf : "";
	int id;
	int rc = cand_id(z, &id) ? search_ban(s, id, err) : search_ban_category(s, z, err);
	sb_free(&arg);
	return said(f, c, rc, err);
}

/* a command whose argument is text (c's words from `from` on), given to
 * fn with zKey on the session's search */
typedef int text_fn(struct search *s, const char *zKey, const char *zText, char *err);
static int text_verb(struct actions_front *f, const struct commands_line *c, int from,
                     const char *zKey, text_fn *fn)
{
	char err[KL_ERRLEN];
	struct search *s = live_search(f, c);
	if (!s)
		return -1;
	strbuf text = STRBUF_INIT;
	commands_text(c, from, &text);
	int rc = fn(s, zKey, text.buf ? text.buf : "", err);
	sb_free(&text);
	return said(f, c, rc, err);
}

static int idea_of(struct search *s, const char *zKey, const char *zText, char *err)
{
	(void)zKey;
	return search_idea(s, zText, err);
}

static int gate_of(struct search *s, const char *zKey, const char *zText, char *err)
{
	(void)zKey;
	return search_set_gate(s, zText, err);
}

static int prefer_of(struct search *s, const char *zKey, const char *zText, char *err)
{
	(void)zKey;
	return search_prefer_category(s, zText, err);
}

int verb_prefer(struct actions_front *f, const struct commands_line *c)
{
	return text_verb(f, c, 0, NULL, prefer_of);
}

int verb_idea(struct actions_front *f, const struct commands_line *c)
{
	return text_verb(f, c, 0, NULL, idea_of);
}

int verb_gate(struct actions_front *f, const struct commands_line *c)
{
	return text_verb(f, c, 0, NULL, gate_of);
}

/* set KEY VALUE (the value every word after the key) */
int verb_set(struct actions_front *f, const struct commands_line *c)
{
	return text_verb(f, c, 1, c->azArg[0], search_set);
}
