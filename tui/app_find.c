/*
 * app_find.c - the text views' keys, as vim and less have them: `/` finds
 * a text in the Code pane (source or diff), Results or the page over the
 * panes, n and N go to the next and the previous match (round the end,
 * said), and w wraps long lines; `/` elsewhere filters the population.
 */
#include "app_priv.h"

#include <curses.h>
#include <stdlib.h>
#include <string.h>

#include "panes.h"

/* the text view that has the keys: its rows, its top row, how many rows
 * show at once; Results' rows are made for the call (own, zOwned) */
struct view {
	int where;                  /* UI_CODE, UI_RESULTS or UI_VIEWER */
	const char *zName;          /* for the messages */
	const struct pane_rows *rs; /* NULL: nothing to search (no candidate) */
	int *pTop;
	int visible;
	int width; /* the columns a row has (the show page's source: fewer) */
	struct pane_rows own;
	char *zOwned;
};

/* 1 when the page or the focused pane is a text view (v filled; free it
 * with view_free()), 0 when it is a list (Population, Ideas, Activity) */
static int view_of(struct app *a, struct view *v)
{
	struct ui *u = &a->u;
	memset(v, 0, sizeof *v);
	if (u->zViewText) {
		v->where = UI_VIEWER;
		v->zName = "the page";
		v->rs = viewer_rows(u, &v->visible);
		v->pTop = &u->viewTop;
		v->width = COLS - 9; /* the narrower of its two (a source's) */
	} else if (u->focus == UI_CODE) {
		v->where = UI_CODE;
		v->zName = "the Code pane";
		v->rs = pane_code_rows(u, &v->visible);
		v->pTop = &u->codeTop;
		v->width = u->aRect[UI_CODE].w - 2 - (u->codeDiff ? 0 : 5);
	} else if (u->focus == UI_RESULTS) {
		v->where = UI_RESULTS;
		v->zName = "Results";
		v->zOwned = pane_results_text(u);
		if (v->zOwned) {
			pane_rows_add(&v->own, v->zOwned, 0);
			v->rs = &v->own;
		}
		v->pTop = &u->resTop;
		v->visible = u->aRect[UI_RESULTS].h - 2;
		v->width = u->aRect[UI_RESULTS].w - 2;
	} else {
		return 0;
	}
	return 1;
}

static void view_free(struct view *v)
{
	pane_rows_free(&v->own);
	free(v->zOwned);
}

/* go to the next (dir 1) or previous (dir -1) match of u->zFind in v: from
 * the match before when it is on screen, else from the top row shown */
static void find_step(struct app *a, struct view *v, int dir, int fresh)
{
	struct ui *u = &a->u;
	const char *zPat = u->zFind;
	if (!v->rs || !v->rs->n) {
		app_message(a, 1, "%s shows no text to search", v->zName);
		return;
	}
	int row = *v->pTop;
	size_t at = 0;
	if (!fresh && u->findIn == v->where && u->findRow >= *v->pTop &&
	    u->findRow < *v->pTop + v->visible && u->findRow < v->rs->n) {
		row = u->findRow;
		at = u->findAt + (dir > 0);
	}
	int mRow;
	size_t mAt;
	u->findIn = v->where;
	int rc = pane_find(v->rs, zPat, row, at, dir, &mRow, &mAt);
	if (rc < 0) {
		u->findRow = -1;
		app_message(a, 1, "pattern not found: %s", zPat);
		return;
	}
	u->findRow = mRow;
	u->findAt = mAt;
	if (mRow < *v->pTop || mRow >= *v->pTop + v->visible) {
		/* in view with some lines above it, as less does */
		int top = mRow - v->visible / 3;
		*v->pTop = top < 0 ? 0 : top;
	}
	int nth, n = pane_find_count(v->rs, zPat, mRow, mAt, &nth);
	/* a long line cut at the edge may hide it */
	int past = pane_row_col(&v->rs->a[mRow], mAt + strlen(zPat)) > v->width;
	app_message(a, 0, "/%s: match %d of %d, line %d%s%s", zPat, nth, n, v->rs->a[mRow].line + 1,
	            past ? ", past the right edge (w wraps long lines)" : "",
	            !rc       ? ""
	            : dir > 0 ? " (search hit BOTTOM, continuing at TOP)"
	                      : " (search hit TOP, continuing at BOTTOM)");
}

void app_find_line(struct app *a, const char *zLine)
{
	struct ui *u = &a->u;
	struct view v;
	if (!view_of(a, &v)) /* the focus moved while the line was typed */
		return;
	free(u->zFind);
	u->zFind = NULL;
	if (!*zLine) {
		app_message(a, 0, "no search: nothing is marked (/ finds a text again)");
	} else {
		u->zFind = xstrdup(zLine);
		find_step(a, &v, 1, 1);
	}
	view_free(&v);
}

int app_find_key(struct app *a, int key)
{
	struct ui *u = &a->u;
	if (key == 'w') {
		/* anywhere: the Code pane shows it, and the pages */
		u->wrap = !u->wrap;
		app_message(a, 0, "%s",
		            u->wrap ? "long lines wrap in the Code pane and the pages (w: cut them)"
		                    : "long lines are cut at the edge (w: wrap them)");
		return 1;
	}
	if (key != '/' && key != 'n' && key != 'N')
		return 0;
	struct view v;
	if (!view_of(a, &v))
		return 0;
	if (key == '/') {
		char hint[96];
		snprintf(hint, sizeof hint, "find a text in %s (n/N: next/previous)", v.zName);
		cmdline_open(&a->cl, CMDLINE_SEARCH, NULL, hint);
	} else if (!u->zFind) {
		app_message(a, 0, "no search yet: / finds a text in %s", v.zName);
	} else {
		find_step(a, &v, key == 'n' ? 1 : -1, 0);
	}
	view_free(&v);
	return 1;
}
