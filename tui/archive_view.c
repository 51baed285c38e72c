/*
 * archive_view.c - `archive QUERY | show ID | idea ID | cand ID` on the
 * command line of the TUI and the REPL (sessions/archive/archive.h underneath).
 */
#include "actions.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verbs.h"
#include "archive.h"
#include "json.h"

static int fail(struct actions_front *f, const char *zWhat, const char *zWhy)
{
	char *m = xasprintf("archive%s%s: %s", *zWhat ? " " : "", zWhat, zWhy);
	f->h->say(f->arg, m, 1);
	free(m);
	return -1;
}

/* the search results as the viewer shows them */
static void results_text(const cJSON *r, const char *zQuery, strbuf *sb)
{
	int n = cJSON_GetArraySize(r);
	sb_addf(sb, "%d entr%s of the archive for \"%s\"%s\n\n", n, n == 1 ? "y" : "ies", zQuery,
	        n ? ", best first" : "");
	const cJSON *e;
	cJSON_ArrayForEach(e, r)
	{
		int win = !strcmp(json_str(e, "kind", ""), "win");
		sb_addf(sb, "%5.0f  %-8s %-16.16s ", json_num(e, "id", -1),
		        win ? "win" : "dead end", json_str(e, "task", ""));
		if (win)
			sb_addf(sb, "%6.2fx  ", json_num(e, "speedup_parent", -1));
		else
			sb_addf(sb, "%-14.14s ", json_str(e, "failure", ""));
		sb_addf(sb, "[%s] %s\n", json_str(e, "category", ""), json_str(e, "idea", ""));
	}
	sb_adds(sb, "\n`archive show ID`: an entry in full (its diff and lineage)\n"
	            "`archive idea ID`: propose it as an idea of this session (then accept, "
	            "implement)\n"
	            "`archive cand ID`: add its code as a candidate and evaluate it\n");
}

int verb_archive(struct actions_front *f, const struct commands_line *c)
{
	char err[KL_ERRLEN];
	strbuf q = STRBUF_INIT;
	commands_text(c, 0, &q);
	char *path = archive_default_path();
	if (!path) {
		sb_free(&q);
		return fail(f, "", "the archive is off ($KLOOP_ARCHIVE)");
	}
	struct archive *a = archive_open(path, 0, 1000, err);
	free(path);
	if (!a) {
		sb_free(&q);
		return fail(f, "", err);
	}
	const char *w0 = c->nArg ? c->azArg[0] : "";
	char *end = NULL;
	long id = c->nArg == 2 ? strtol(c->azArg[1], &end, 10) : 0;
	int verb = c->nArg == 2 && end && !*end && id > 0 &&
	           (!strcmp(w0, "show") || !strcmp(w0, "idea") || !strcmp(w0, "cand"));
	int rc = 0;
	strbuf sb = STRBUF_INIT;
	if (verb) {
		cJSON *e = archive_get(a, id, err);
		if (!e) {
			rc = fail(f, w0, err);
		} else if (!strcmp(w0, "show")) {
			archive_entry_text(e, &sb);
			char title[48];
			snprintf(title, sizeof title, "archive #%ld", id);
			f->h->page(f->arg, title, sb.buf, 0);
		} else if (!f->lv) {
			rc = fail(f, w0, "a replay is read-only; `continue` first");
		} else if (!strcmp(w0, "idea")) {
			int n = archive_idea_event(driver_session(f->lv), e, err);
			if (n < 0)
				rc = fail(f, w0, err);
			else {
				sb_addf(&sb,
				        "idea %d from archive entry %ld: %s (accept it, then "
				        "implement)",
				        n, id, json_str(e, "idea", ""));
				f->h->say(f->arg, sb.buf, 0);
			}
		} else {
			const char *code = json_str(e, "code", "");
			int n = driver_add(
			    f->lv, "human", NULL, 0,
			    *json_str(e, "name", "") ? json_str(e, "name", "") : NULL, code,
			    *json_str(e, "idea", "") ? json_str(e, "idea", "") : NULL, err);
			if (n < 0 || driver_bench(f->lv, n, err) < 0)
				rc = fail(f, w0, err);
			else {
				sb_addf(&sb, "candidate %d from archive entry %ld (%s): evaluating",
				        n, id, json_str(e, "task", ""));
				f->h->say(f->arg, sb.buf, 0);
			}
		}
		cJSON_Delete(e);
	} else {
		struct archive_query aq = {.zText = q.buf, .limit = 30};
		cJSON *r = archive_search(a, &aq, err);
		if (!r) {
			rc = fail(f, "", err);
		} else {
			results_text(r, q.buf ? q.buf : "", &sb);
			char title[96];
			snprintf(title, sizeof title, "archive: %.80s", q.buf ? q.buf : "");
			f->h->page(f->arg, title, sb.buf, 0);
		}
		cJSON_Delete(r);
	}
	sb_free(&sb);
	sb_free(&q);
	archive_close(a);
	return rc;
}
