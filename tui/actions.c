/*
 * actions.c - the commands' effects, shared by the TUI and the REPL: they
 * read the state, emit events through sessions/live.c, and answer through
 * the front end's hooks.
 */
#include "actions.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "editor.h"
#include "report.h"

const struct state *actions_state(const struct actions_front *f)
{
	return f->lv ? live_state(f->lv) : f->rp ? &f->rp->st : NULL;
}

static int fail(struct actions_front *f, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static int fail(struct actions_front *f, const char *fmt, ...)
{
	strbuf sb = STRBUF_INIT;
	va_list ap;
	va_start(ap, fmt);
	sb_vaddf(&sb, fmt, ap);
	va_end(ap);
	f->h->say(f->arg, sb.buf, 1);
	sb_free(&sb);
	return -1;
}

static void say(struct actions_front *f, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void say(struct actions_front *f, const char *fmt, ...)
{
	strbuf sb = STRBUF_INIT;
	va_list ap;
	va_start(ap, fmt);
	sb_vaddf(&sb, fmt, ap);
	va_end(ap);
	f->h->say(f->arg, sb.buf, 0);
	sb_free(&sb);
}

static const struct cand *cand_arg(struct actions_front *f, const struct commands_line *c, int i)
{
	const struct state *st = actions_state(f);
	const struct cand *cd = st ? state_cand(st, (int)c->aNum[i]) : NULL;
	if (!cd)
		fail(f, "%s: there is no candidate %ld (%d in the session)", c->def->name,
		     c->aNum[i], st ? st->nCand : 0);
	return cd;
}

/* commands that change the session need a live one */
static int need_live(struct actions_front *f, const struct commands_line *c)
{
	if (f->lv)
		return 0;
	return fail(
	    f, "%s: a replay is read-only; `continue` (or c) goes on from here as a new session",
	    c->def->name);
}

/* the LLM pipeline, or the reason there is none, said as the command's error */
static int need_llm(struct actions_front *f, const struct commands_line *c)
{
	char err[KL_ERRLEN];
	if (need_live(f, c) < 0)
		return -1;
	if (!f->cfg || !f->cfg->zProvider)
		return fail(
		    f,
		    "%s: no LLM provider is configured (give --provider openai|anthropic|command "
		    "with --model and --base-url, or set provider, model and base_url in "
		    "$XDG_CONFIG_HOME/kloop/config; `kloop doctor` checks it)",
		    c->def->name);
	if (live_llm(f->lv, err) < 0)
		return fail(f, "%s: %s", c->def->name, err);
	return 0;
}

/* the candidate ideas are about: the TUI's selection, else the fastest
 * correct one, else the first */
static int ideas_parent(const struct actions_front *f)
{
	const struct state *st = actions_state(f);
	if (f->selCand && state_cand(st, f->selCand))
		return f->selCand;
	int best = 0;
	double bs = -1;
	for (int i = 0; i < st->nCand; i++)
		if (!strcmp(st->aCand[i].zStatus, "correct") && st->aCand[i].speedup > bs)
			bs = st->aCand[i].speedup, best = st->aCand[i].id;
	return best ? best : st->nCand ? st->aCand[0].id : 0;
}

static const struct state_idea *idea_arg(struct actions_front *f, const struct commands_line *c)
{
	const struct state *st = actions_state(f);
	const struct state_idea *d = state_idea(st, (int)c->aNum[0]);
	if (!d)
		fail(f, "%s: there is no idea %ld (%d in the session)", c->def->name, c->aNum[0],
		     st->nIdea);
	return d;
}

/* revise: "TITLE\n\nDESCRIPTION" in $EDITOR, or TEXT (its first line the title) */
static int revise(struct actions_front *f, const struct state_idea *d,
                  const struct commands_line *c)
{
	char err[KL_ERRLEN];
	strbuf text = STRBUF_INIT;
	if (c->nArg > 1) {
		for (int i = 1; i < c->nArg; i++)
			sb_addf(&text, "%s%s", i > 1 ? " " : "", c->azArg[i]);
	} else {
		char *orig = xasprintf("%s\n\n%s\n", d->zTitle, d->zDescription);
		char *path = editor_tempfile("idea.txt", orig, err);
		int rc = path ? f->h->edit(f->arg, path, err) : -1;
		if (rc == 0 && read_file(path, &text, 1 << 20, err) < 0)
			rc = -1;
		if (path)
			editor_cleanup(path);
		free(path);
		int same = rc == 0 && text.buf && !strcmp(text.buf, orig);
		free(orig);
		if (rc != 0 || same) {
			sb_free(&text);
			if (rc > 0)
				return fail(f,
				            "revise: the editor exited with status %d; idea %d is "
				            "unchanged",
				            rc, d->id);
			if (rc < 0)
				return fail(f, "revise: %s", err);
			say(f, "idea %d is unchanged", d->id);
			return 0;
		}
	}
	/* the title is the first line, the description the rest (or all of it) */
	char *t = text.buf ? text.buf : "";
	while (*t == '\n' || *t == ' ')
		t++;
	size_t k = strcspn(t, "\n");
	char *title = xstrndup(t, k > 80 ? 80 : k);
	const char *rest = t + k;
	while (*rest == '\n' || *rest == ' ')
		rest++;
	char *desc = xstrdup(*rest ? rest : t);
	size_t n = strlen(desc);
	while (n && (desc[n - 1] == '\n' || desc[n - 1] == ' '))
		desc[--n] = 0;
	int rc = 0;
	if (!*title)
		rc = fail(f, "revise: the text is empty; idea %d is unchanged", d->id);
	else if (live_idea_revise(f->lv, d->id, title, desc, err) < 0)
		rc = fail(f, "revise: %s", err);
	else
		say(f, "idea %d revised: %s", d->id, title);
	free(title);
	free(desc);
	sb_free(&text);
	return rc;
}

/* implement every accepted idea that has no candidate yet, B branches each */
static int implement(struct actions_front *f, const struct commands_line *c)
{
	const struct state *st = actions_state(f);
	int b = c->nArg ? (int)c->aNum[0] : 1, n = 0;
	char err[KL_ERRLEN];
	for (int i = 0; i < st->nIdea; i++) {
		const struct state_idea *d = &st->aIdea[i];
		int done = 0;
		for (int k = 0; k < st->nCand && !done; k++)
			done = st->aCand[k].ideaId == d->id;
		if (strcmp(d->zStatus, "accepted") || done)
			continue;
		int parent = d->parent && state_cand(st, d->parent) ? d->parent : ideas_parent(f);
		if (live_implement(f->lv, d->id, parent, b, err) < 0)
			return fail(f, "implement: idea %d: %s", d->id, err);
		n++;
	}
	if (!n)
		return fail(
		    f, "implement: no accepted idea waits for code (accept one first: accept ID)");
	say(f, "implementing %d idea%s, %d branch%s each", n, n == 1 ? "" : "s", b,
	    b == 1 ? "" : "es");
	return 0;
}

static int do_llm(struct actions_front *f, const struct commands_line *c)
{
	char err[KL_ERRLEN];
	if (need_llm(f, c) < 0)
		return -1;
	const struct state_idea *d = NULL;
	if (c->def->id != CMD_IDEAS && c->def->id != CMD_IMPLEMENT && !(d = idea_arg(f, c)))
		return -1;
	switch (c->def->id) {
	case CMD_IDEAS: {
		int n = c->nArg ? (int)c->aNum[0] : 3, parent = ideas_parent(f);
		if (!parent)
			return fail(f, "ideas: there is no candidate to improve yet");
		if (live_ideas(f->lv, parent, n, err) < 0)
			return fail(f, "ideas: %s", err);
		say(f, "asking the LLM for %d idea%s to improve candidate %d", n, n == 1 ? "" : "s",
		    parent);
		return 0;
	}
	case CMD_ACCEPT:
		if (live_idea_accept(f->lv, d->id, err) < 0)
			return fail(f, "accept: %s", err);
		say(f, "idea %d accepted: %s (implement writes its code)", d->id, d->zTitle);
		return 0;
	case CMD_REJECT:
		if (live_idea_reject(f->lv, d->id, err) < 0)
			return fail(f, "reject: %s", err);
		say(f, "idea %d rejected", d->id);
		return 0;
	case CMD_REVISE:
		return revise(f, d, c);
	default:
		return implement(f, c);
	}
}

void actions_jobs_text(struct live *lv, strbuf *sb)
{
	double now = now_s();
	for (int i = 0; lv && i < lv->nJob; i++) {
		const struct live_job *j = &lv->aJob[i];
		const struct cand *c = state_cand(live_state(lv), j->cand);
		sb_addf(sb, "#%d %s: %s", j->cand, c ? c->zName : "?", j->zStage);
		if (j->k > 0)
			sb_addf(sb, " %d", j->k);
		sb_addf(sb, " (%.1f s)\n", now - j->tStart);
	}
	const struct live_stream *a;
	int n = lv ? live_streams(lv, &a) : 0;
	for (int i = 0; i < n; i++)
		sb_addf(sb, "LLM request %d: streaming, %ld characters (~%ld tokens) (%.1f s)\n",
		        a[i].request, a[i].nChars, (a[i].nChars + 3) / 4, now - a[i].tStart);
	int busy = lv ? live_llm_busy(lv) : 0;
	if (busy && !n)
		sb_addf(sb, "LLM: %d step%s waiting (a request or an evaluation)\n", busy,
		        busy == 1 ? "" : "s");
}

static void table_text(const struct state *st, struct popview *pv, strbuf *sb)
{
	popview_refresh(pv, st);
	report_table_header(sb);
	sb_adds(sb, "\n");
	for (int i = 0; i < pv->nIdx; i++) {
		report_table_row(&st->aCand[pv->aIdx[i]], NULL, sb);
		sb_adds(sb, "\n");
	}
	sb_addf(sb, "%d of %d candidates; ", pv->nIdx, st->nCand);
	popview_describe(pv, sb);
	sb_adds(sb, "\n");
}

int actions_edit(struct actions_front *f, int id, char *err)
{
	const struct cand *c = state_cand(live_state(f->lv), id);
	if (!c)
		return kl_err(err, "there is no candidate %d", id);
	char *orig = xstrdup(c->zSource);
	char *path = editor_tempfile(c->zName, orig, err);
	if (!path) {
		free(orig);
		return -1;
	}
	int rc = f->h->edit(f->arg, path, err);
	strbuf sb = STRBUF_INIT;
	if (rc > 0)
		rc = kl_err(err, "the editor exited with status %d; nothing was added", rc);
	else if (rc == 0 && read_file(path, &sb, 8u << 20, err) < 0)
		rc = -1;
	if (rc == 0 && !sb.len)
		rc = kl_err(err, "the edited copy is empty; nothing was added");
	else if (rc == 0 && !strcmp(sb.buf, orig))
		rc = 0; /* unchanged: nothing to add */
	else if (rc == 0) {
		rc = live_add(f->lv, "human", &id, 1, NULL, sb.buf, NULL, err);
		if (rc > 0 && live_bench(f->lv, rc, err) < 0)
			rc = -1;
	}
	sb_free(&sb);
	editor_cleanup(path);
	free(path);
	free(orig);
	return rc;
}

static int do_replay(struct actions_front *f, const struct commands_line *c)
{
	if (!f->rp)
		return fail(f, "%s: only while replaying a journal (kloop replay SESSION)",
		            c->def->name);
	struct replay *rp = f->rp;
	if (c->def->id == CMD_CONTINUE) {
		char err[KL_ERRLEN];
		if (f->h->cont(f->arg, c->nArg ? c->azArg[0] : NULL, err) < 0)
			return fail(f, "continue: %s", err);
		return 0;
	}
	int k = c->def->id == CMD_GOTO ? (int)c->aNum[0] : rp->k + (c->nArg ? (int)c->aNum[0] : 1);
	replay_seek(rp, k);
	char d[240];
	replay_describe(rp, rp->k - 1, d, sizeof d);
	say(f, "event %d of %d%s%s", rp->k, rp->nEv, rp->k ? ": " : " (the start)", rp->k ? d : "");
	return 0;
}

int actions_run(struct actions_front *f, const struct commands_line *c)
{
	const struct state *st = actions_state(f);
	const struct cand *a, *b;
	char err[KL_ERRLEN];
	strbuf sb = STRBUF_INIT;
	int rc = 0;
	switch (c->def->id) {
	case CMD_IDEAS:
	case CMD_ACCEPT:
	case CMD_REJECT:
	case CMD_REVISE:
	case CMD_IMPLEMENT:
		return do_llm(f, c);
	case CMD_EDIT:
		if (need_live(f, c) < 0 || !(a = cand_arg(f, c, 0)))
			return -1;
		rc = actions_edit(f, a->id, err);
		if (rc < 0)
			return fail(f, "edit: %s", err);
		if (rc == 0)
			say(f, "edit: candidate %d is unchanged; nothing was added", a->id);
		else
			say(f, "candidate %d (human, from #%d) added; evaluating", rc, a->id);
		return 0;
	case CMD_BENCH:
		if (need_live(f, c) < 0 || !(a = cand_arg(f, c, 0)))
			return -1;
		if (live_bench(f->lv, a->id, err) < 0)
			return fail(f, "bench: %s", err);
		say(f, "candidate %d (%s): evaluating", a->id, a->zName);
		return 0;
	case CMD_SHOW:
		if (!(a = cand_arg(f, c, 0)))
			return -1;
		report_show(st, a, &sb);
		{
			char title[64];
			snprintf(title, sizeof title, "show #%d", a->id);
			f->h->page(f->arg, title, sb.buf, a->id);
		}
		break;
	case CMD_DIFF:
		if (!(b = cand_arg(f, c, 0)))
			return -1;
		a = NULL;
		if (c->nArg > 1) {
			/* diff A B: what changed from A to B */
			a = b;
			if (!(b = cand_arg(f, c, 1)))
				return -1;
		}
		if (report_diff(st, a, b, &sb, err) < 0)
			return fail(f, "diff: %s", err);
		f->h->page(f->arg, "diff", sb.buf, b->id);
		break;
	case CMD_EXPORT:
		if (!(a = cand_arg(f, c, 0)))
			return -1;
		if (live_export(st, a->id, c->azArg[1], err) < 0)
			return fail(f, "export: %s", err);
		say(f, "wrote candidate %d to %s (%zu bytes)", a->id, c->azArg[1],
		    strlen(a->zSource));
		return 0;
	case CMD_SORT:
		if (popview_set_sort(f->pv, c->azArg[0], c->nArg > 1 ? c->azArg[1] : NULL, err) < 0)
			return fail(f, "%s", err);
		popview_describe(f->pv, &sb);
		f->h->say(f->arg, sb.buf, 0);
		break;
	case CMD_FILTER:
		if (popview_set_filter(f->pv, c->azArg, c->nArg, err) < 0)
			return fail(f, "%s", err);
		popview_refresh(f->pv, st);
		if (f->pv->nTerm)
			say(f, "filter: %s (%d of %d candidates shown)", f->pv->zFilter,
			    f->pv->nIdx, st->nCand);
		else
			say(f, "no filter (%d candidates shown)", st->nCand);
		return 0;
	case CMD_LIST:
		table_text(st, f->pv, &sb);
		f->h->page(f->arg, "population", sb.buf, 0);
		break;
	case CMD_JOBS:
		actions_jobs_text(f->lv, &sb);
		if (!sb.len)
			say(f, "no jobs are running");
		else
			f->h->page(f->arg, "jobs", sb.buf, 0);
		break;
	case CMD_STEP:
	case CMD_GOTO:
	case CMD_CONTINUE:
		return do_replay(f, c);
	case CMD_HELP:
		if (commands_help(&sb, c->nArg ? c->azArg[0] : NULL, f->rp != NULL) < 0) {
			sb_free(&sb);
			return fail(f, "help: unknown command '%s'", c->azArg[0]);
		}
		f->h->page(f->arg, "help", sb.buf, 0);
		break;
	case CMD_QUIT:
		f->h->quit(f->arg, c->bang);
		break;
	case CMD_COUNT:
		break;
	}
	sb_free(&sb);
	return rc;
}

int actions_run_line(struct actions_front *f, const char *zLine)
{
	struct commands_line c;
	char err[KL_ERRLEN];
	int rc = commands_parse(zLine, &c, err);
	if (rc < 0)
		return fail(f, "%s", err);
	if (rc == 0)
		return 1;
	rc = actions_run(f, &c);
	commands_line_free(&c);
	return rc;
}

const char *const *actions_words(enum commands_arg kind, void *arg)
{
	struct actions_front *f = arg;
	static char **ids;
	static size_t nAlloc;
	if (kind == ARG_COLUMN)
		return popview_columns;
	if (kind == ARG_COMMAND) {
		static const char *names[64];
		int n = 0;
		for (const struct commands_def *d = commands_table; d->name && n < 63; d++)
			names[n++] = d->name;
		names[n] = NULL;
		return names;
	}
	if (kind != ARG_CAND)
		return NULL;
	const struct state *st = actions_state(f);
	for (size_t i = 0; ids && ids[i]; i++)
		free(ids[i]);
	int n = st ? st->nCand : 0;
	xgrow((void **)&ids, &nAlloc, (size_t)n + 1, sizeof *ids);
	for (int i = 0; i < n; i++)
		ids[i] = xasprintf("%d", st->aCand[i].id);
	ids[n] = NULL;
	return (const char *const *)ids;
}
