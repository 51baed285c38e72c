/*
 * pane_population.c - the Population pane: the candidates as a table
 * (filtered and sorted by tui/popview.c), the selection, sorting keys.
 */
#include <curses.h>
#include <stdio.h>
#include <string.h>

#include "panes.h"
#include "report.h"
#include "screen.h"

/* the status a row shows: the job's stage while one runs */
static const char *row_status(const struct ui *u, const struct cand *c, char *buf, size_t n)
{
	const struct driver_job *j = u->lv ? driver_job_of(u->lv, c->id) : NULL;
	if (!j)
		return NULL;
	if (j->k > 0)
		snprintf(buf, n, "%s %d", j->zStage, j->k);
	else
		snprintf(buf, n, "%s", j->zStage);
	return buf;
}

static int status_role(enum status s)
{
	return s == STATUS_CORRECT   ? SR_GOOD
	       : s == STATUS_NEW     ? SR_DIM
	       : !status_finished(s) ? SR_BUSY
	                             : SR_BAD;
}

/* keep the selection on a shown row and visible */
static void fix_selection(struct ui *u, int rows)
{
	popview_refresh(&u->pv, u->st);
	int row = popview_row(&u->pv, u->st, u->selCand);
	if (row < 0 && u->pv.nIdx)
		u->selCand = u->st->aCand[u->pv.aIdx[0]].id, row = 0;
	if (!u->pv.nIdx)
		u->selCand = 0;
	if (row >= 0 && row < u->popTop)
		u->popTop = row;
	if (rows > 0 && row >= u->popTop + rows)
		u->popTop = row - rows + 1;
	if (u->popTop > u->pv.nIdx - rows)
		u->popTop = u->pv.nIdx - rows;
	if (u->popTop < 0)
		u->popTop = 0;
}

void pane_population_draw(struct ui *u, const struct ui_rect *r, int focused)
{
	if (r->h < 3)
		return;
	int rows = r->h - 3, w = r->w - 2;
	fix_selection(u, rows);
	char title[200];
	strbuf d = STRBUF_INIT;
	popview_describe(&u->pv, &d);
	/* the follow mode before the order: a narrow pane cuts the end */
	snprintf(title, sizeof title, "Population %d/%d%s - %s", u->pv.nIdx, u->st->nCand,
	         ui_following(u)
	             ? (u->follow == UI_FOLLOW_BEST ? " [follow best]" : " [follow new]")
	             : "",
	         d.buf);
	sb_free(&d);
	screen_frame(r, title, focused);
	strbuf sb = STRBUF_INIT;
	/* a roof column of "-" only (the host's) gives its room to the idea */
	int roof = report_table_has_roof(u->st, u->pv.aIdx, u->pv.nIdx);
	report_table_header_cols(&sb, roof);
	screen_fill(r->y + 1, r->x + 1, w, screen_attr(SR_HEADER));
	screen_put(r->y + 1, r->x + 1, w, sb.buf, screen_attr(SR_HEADER));
	if (!u->pv.nIdx)
		screen_put(r->y + 2, r->x + 2, w - 1,
		           u->st->nCand ? "no candidate matches the filter (/ changes it)"
		                        : "no candidates yet",
		           screen_attr(SR_DIM));
	const struct cand *best = state_best(u->st, NULL, NULL);
	for (int i = 0; i < rows && u->popTop + i < u->pv.nIdx; i++) {
		const struct cand *c = &u->st->aCand[u->pv.aIdx[u->popTop + i]];
		char stage[32];
		const char *st = row_status(u, c, stage, sizeof stage);
		sb_reset(&sb);
		report_table_row_cols(c, st, report_mark(u->st, c, best), roof, &sb);
		int y = r->y + 2 + i, sel = c->id == u->selCand;
		int base = sel ? screen_attr(SR_SELECTED) | (focused ? A_BOLD : 0) : 0;
		screen_fill(y, r->x + 1, w, base);
		/* the status column in its colour: "  id  par origin " is 17 columns, the
		 * status 14 */
		int used = screen_putn(y, r->x + 1, w, sb.buf, 17, base);
		int role = st ? SR_BUSY : status_role(c->status);
		used += screen_putn(y, r->x + 1 + used, w - used, sb.buf + 17, 14,
		                    base | screen_attr(role));
		screen_put(y, r->x + 1 + used, w - used, sb.buf + 31, base);
	}
	sb_free(&sb);
}

int pane_population_key(struct ui *u, int key)
{
	int rows = u->aRect[UI_POPULATION].h - 3;
	if (rows < 1)
		rows = 1;
	popview_refresh(&u->pv, u->st);
	int row = popview_row(&u->pv, u->st, u->selCand), n = u->pv.nIdx;
	switch (key) {
	case 's': /* next sort column */
		popview_cycle_sort(&u->pv, (u->pv.col + 1) % POP_NCOL);
		return 1;
	case 'S':
		popview_cycle_sort(&u->pv, u->pv.col);
		return 1;
	}
	int top = row < 0 ? 0 : row;
	/* move the selection like a scroll position of one row */
	if (!pane_scroll_key(key, &top, n + rows - 1, rows)) {
		return 0;
	}
	if (key == KEY_NPAGE || key == ' ')
		top = row + rows - 1;
	if (key == KEY_PPAGE || key == 'b')
		top = row - (rows - 1);
	if (key == KEY_END || key == 'G')
		top = n - 1;
	if (top >= n)
		top = n - 1;
	if (top < 0)
		top = 0;
	if (n)
		ui_select(u, u->st->aCand[u->pv.aIdx[top]].id);
	u->follow = UI_FOLLOW_OFF; /* moved by hand: the selection stays where it was put */
	return 1;
}

void pane_population_click(struct ui *u, int row)
{
	int i = u->popTop + row - 1; /* row 0 is the header */
	popview_refresh(&u->pv, u->st);
	if (row >= 1 && i < u->pv.nIdx) {
		ui_select(u, u->st->aCand[u->pv.aIdx[i]].id);
		u->follow = UI_FOLLOW_OFF;
	}
}
