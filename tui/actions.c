/*
 * actions.c - what the command handlers (tui/verbs.h) share: answers
 * through the front's hooks, argument and session checks, a text handed to
 * the editor and back.  Running a line (which calls the handlers) is
 * actions_run.c's.
 */
#include "actions.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "editor.h"

const struct state *actions_state(const struct actions_front *f)
{
	return f->lv ? driver_state(f->lv) : f->rp ? &f->rp->st : NULL;
}

int actions_fail(struct actions_front *f, const char *fmt, ...)
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

void actions_say(struct actions_front *f, const char *fmt, ...)
{
	strbuf sb = STRBUF_INIT;
	va_list ap;
	va_start(ap, fmt);
	sb_vaddf(&sb, fmt, ap);
	va_end(ap);
	f->h->say(f->arg, sb.buf, 0);
	sb_free(&sb);
}

const struct cand *actions_cand(struct actions_front *f, const struct commands_line *c, int i)
{
	const struct state *st = actions_state(f);
	const struct cand *cd = st ? state_cand(st, (int)c->aNum[i]) : NULL;
	if (!cd)
		actions_fail(f, "%s: there is no candidate %ld (%d in the session)", c->def->name,
		             c->aNum[i], st ? st->nCand : 0);
	return cd;
}

/* commands that change the session need a live one */
int actions_need_live(struct actions_front *f, const struct commands_line *c)
{
	if (f->lv)
		return 0;
	return actions_fail(
	    f, "%s: a replay is read-only; `continue` (or c) goes on from here as a new session",
	    c->def->name);
}

/* the LLM pipeline, or the reason there is none, said as the command's error */
struct pipeline *actions_need_llm(struct actions_front *f, const struct commands_line *c)
{
	char err[KL_ERRLEN];
	if (actions_need_live(f, c) < 0)
		return NULL;
	if (!f->cfg || !f->cfg->zProvider) {
		actions_fail(
		    f,
		    "%s: no LLM provider is configured (give --provider openai|anthropic|command "
		    "with --model and --base-url, or set provider, model and base_url in "
		    "$XDG_CONFIG_HOME/kloop/config; `kloop doctor` checks it)",
		    c->def->name);
		return NULL;
	}
	struct pipeline *p = driver_llm(f->lv, err);
	if (!p)
		actions_fail(f, "%s: %s", c->def->name, err);
	return p;
}

/* a text in the editor: its copy, and the command that waits for it */
struct actions_edit {
	char *zPath;     /* the copy */
	char *zOrig;     /* the text given */
	size_t maxBytes; /* the most of the copy read back */
	actions_edited_fn done;
	void *ctx;
};

static void edit_free(struct actions_edit *e)
{
	if (e->zPath)
		editor_cleanup(e->zPath);
	free(e->zPath);
	free(e->zOrig);
	free(e);
}

int actions_edit_text(struct actions_front *f, const char *zName, const char *zText,
                      size_t maxBytes, actions_edited_fn done, void *ctx, char *err)
{
	struct actions_edit *e = xcalloc(1, sizeof *e);
	*e = (struct actions_edit){NULL, xstrdup(zText), maxBytes, done, ctx};
	if ((e->zPath = editor_tempfile(zName, zText, err))) {
		f->edit = e;
		if (f->h->edit(f->arg, e->zPath, err) == 0)
			return 0;
		f->edit = NULL;
	}
	edit_free(e);
	return -1;
}

int actions_editing(const struct actions_front *f)
{
	return f->edit != NULL;
}

int actions_edited(struct actions_front *f, int rc, const char *zErr)
{
	struct actions_edit *e = f->edit;
	if (!e)
		return 0;
	f->edit = NULL;
	char err[KL_ERRLEN];
	snprintf(err, sizeof err, "%s", zErr);
	strbuf sb = STRBUF_INIT;
	if (rc == 0 && read_file(e->zPath, &sb, e->maxBytes, err) < 0)
		rc = -1;
	int changed = rc == 0 && !(sb.buf && !strcmp(sb.buf, e->zOrig));
	actions_edited_fn done = e->done;
	void *ctx = e->ctx;
	edit_free(e);
	rc = done(f, ctx, rc, rc == 0 ? (sb.buf ? sb.buf : "") : NULL, sb.len, changed, err);
	sb_free(&sb);
	return rc;
}
