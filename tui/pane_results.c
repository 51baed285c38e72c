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
#include "screen.h"

static int line_role(const char *line, size_t n)
{
	if (n >= 9 && !strncmp(line, "verdict", 7))
		return strstr(line, "correct") && !strstr(line, "incorrect") ? SR_GOOD : SR_BAD;
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
	if (c->zIdea)
		sb_addf(&sb, "idea      %s\n", c->zIdea);
	const struct runner_job *j = u->lv ? runner_job_of(u->lv, c->id) : NULL;
	if (j) {
		sb_addf(&sb, "now       %s", j->zStage);
		if (j->k > 0)
			sb_addf(&sb, " %d", j->k);
		sb_addf(&sb, " (%.1f s)\n", now_s() - j->tStart);
	}
	report_results(u->st, c, &sb);
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
	for (int i = 0; i < rows && u->resTop + i < n; i++) {
		size_t len;
		const char *line = pane_line(text, u->resTop + i, &len);
		screen_putn(r->y + 1 + i, r->x + 1, w, line, len,
		            screen_attr(line_role(line, len)));
	}
	free(text);
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
