/*
 * pane_results.c - the Results pane: the selected candidate's compiler
 * diagnostics, resources, correctness report and timing against the
 * baseline (the text of report_results()), scrollable.
 */
#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "panes.h"
#include "report.h"
#include "result.h"
#include "screen.h"

/* a line's colour: the verdict's from c's status (typed, not read from the
 * words), the rest from what the line is */
static int line_role(const char *line, size_t n, const struct cand *c)
{
	if (n >= 9 && !strncmp(line, "verdict", 7))
		return c->status == STATUS_CORRECT ? SR_GOOD : SR_BAD;
	if (n >= 8 && !strncmp(line, "baseline", 8))
		return SR_GOOD;
	if (strstr(line, ": error") || strstr(line, "error:"))
		return SR_BAD;
	if (strstr(line, "warning"))
		return SR_BUSY;
	return SR_NORMAL;
}

static char *results_text(const struct ui *u, const struct cand *c)
{
	strbuf sb = STRBUF_INIT;
	if (c->zIdea && !c->result)
		sb_addf(&sb, "idea      %s\n", c->zIdea); /* else after the verdict */
	const struct driver_job *j = u->lv ? driver_job_of(u->lv, c->id) : NULL;
	if (j) {
		char stage[64], note[96];
		sb_addf(&sb, "now       %s (%.1f s)%s\n",
		        ui_stage_text(j->zStage, j->k, stage, sizeof stage), now_s() - j->tStart,
		        state_compile_note(u->st, c, j->zStage, note, sizeof note));
	}
	report_results(u->st, c, &sb);
	if (c->result && ui_setup_beside(u, c->id)) {
		/* its compile ran while the worker set up: the line after the
		 * compile's says that its time is not the compile's own */
		char note[1200];
		const cJSON *su = c->v.refData.setup;
		if (cJSON_IsObject(su)) {
			/* the worker's own account, as `kloop eval` gives it */
			strbuf ws = STRBUF_INIT;
			result_setup_line(su, &ws);
			snprintf(note, sizeof note,
			         "setup     %s; this compile ran beside it, its time includes the "
			         "wait\n",
			         ws.buf);
			sb_free(&ws);
		} else if (u->setupS > 0)
			snprintf(
			    note, sizeof note,
			    "setup     %.1f s, its own step: the worker's start, the reference's "
			    "compile and timing, the baselines; this compile ran beside it, its "
			    "time includes the wait\n",
			    u->setupS);
		else
			snprintf(note, sizeof note,
			         "setup     this compile ran beside the worker's setup, its time "
			         "includes the wait\n");
		const char *p = sb.buf ? strstr(sb.buf, "\ncompile   ") : NULL;
		if (p) {
			size_t at = (size_t)(strchr(p + 1, '\n') + 1 - sb.buf);
			strbuf t = STRBUF_INIT;
			sb_add(&t, sb.buf, at);
			sb_adds(&t, note);
			sb_adds(&t, sb.buf + at);
			sb_free(&sb);
			sb = t;
		} else {
			sb_adds(&sb, note);
		}
	}
	/* wrapped to the pane: a long reason or mismatch message is read whole */
	int w = u->aRect[UI_RESULTS].w - 2;
	char *wrapped = pane_wrap(sb.buf ? sb.buf : "", w > 0 ? w : 80);
	sb_free(&sb);
	return wrapped;
}

void pane_results_draw(struct ui *u, const struct ui_rect *r, int focused)
{
	if (r->h < 3)
		return;
	const struct cand *c = ui_selected(u);
	int rows = r->h - 2, w = r->w - 2;
	char title[160];
	if (!c) {
		screen_frame(r, "Results", focused);
		return;
	}
	snprintf(title, sizeof title, "Results #%d %s", c->id, report_status_text(c->zStatus));
	screen_frame(r, title, focused);
	char *text = results_text(u, c);
	int n = pane_count_lines(text);
	if (u->resTop > n - rows)
		u->resTop = n - rows;
	if (u->resTop < 0)
		u->resTop = 0;
	const char *zFind = u->findIn == UI_RESULTS ? u->zFind : NULL;
	for (int i = 0; i < rows && u->resTop + i < n; i++) {
		size_t len;
		const char *line = pane_line(text, u->resTop + i, &len);
		screen_putn(r->y + 1 + i, r->x + 1, w, line, len,
		            screen_attr(line_role(line, len, c)));
		struct pane_row row = {line, len, u->resTop + i, 0};
		pane_find_mark(&row, zFind, r->y + 1 + i, r->x + 1, w, screen_attr(SR_MATCH));
	}
	free(text);
}

char *pane_results_text(const struct ui *u)
{
	const struct cand *c = ui_selected(u);
	return c ? results_text(u, c) : NULL;
}

int pane_results_key(struct ui *u, int key)
{
	const struct cand *c = ui_selected(u);
	if (!c)
		return 0;
	char *text = results_text(u, c);
	int n = pane_count_lines(text);
	free(text);
	return pane_scroll_key(key, &u->resTop, n, u->aRect[UI_RESULTS].h - 2);
}
