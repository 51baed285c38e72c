/*
 * viewer.c - a page of text over the panes: the help, `show`, `diff`,
 * `list` and `jobs` answers in the TUI; scrolls like the text panes.
 */
#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "highlight.h"
#include "panes.h"
#include "screen.h"

void viewer_open(struct ui *u, const char *zTitle, const char *zText)
{
	viewer_close(u);
	u->zViewTitle = xstrdup(zTitle);
	u->zViewText = xstrdup(zText);
	u->viewTop = 0;
	/* what it is, from its title: show, diff and compare pages */
	u->viewKind = !strncmp(zTitle, "show #", 6)                               ? VIEW_SHOW
	              : !strcmp(zTitle, "diff") || !strncmp(zTitle, "compare", 7) ? VIEW_DIFF
	                                                                          : VIEW_TEXT;
	if (u->viewKind == VIEW_SHOW) {
		const struct cand *c = state_cand(u->st, atoi(zTitle + 6));
		char err[KL_ERRLEN];
		u->zViewSrc = c ? xstrdup(c->zSource) : NULL;
		u->viewDoc =
		    u->zViewSrc ? syntax_parse(u->zViewSrc, strlen(u->zViewSrc), err) : NULL;
		if (!u->zViewSrc)
			u->viewKind = VIEW_TEXT;
	}
}

void viewer_close(struct ui *u)
{
	free(u->zViewTitle);
	free(u->zViewText);
	free(u->zViewLines);
	free(u->zViewSrc);
	syntax_free(u->viewDoc);
	u->viewDoc = NULL;
	u->zViewTitle = u->zViewText = u->zViewLines = u->zViewSrc = NULL;
	u->viewW = 0;
	if (u->viewRows)
		pane_rows_free(u->viewRows);
	free(u->viewRows);
	u->viewRows = NULL;
	if (u->findIn == UI_VIEWER)
		u->findRow = -1; /* the next page is searched from its top */
}

static void make_text(struct ui *u, int w);

/* the rows to draw for width w: the show page's header wrapped and its
 * source (drawn from zViewSrc, highlighted), a diff with its tabs
 * expanded, any other text wrapped; the source and the diff wrapped too
 * when u->wrap is on.  The top row stays the same text's */
static void make_lines(struct ui *u, int w)
{
	if (u->zViewLines && u->viewW == w && u->viewRows && u->viewRowsWrap == u->wrap)
		return;
	const char *top = NULL;
	if (u->zViewLines && u->viewW == w && u->viewRows && u->viewTop < u->viewRows->n)
		top = u->viewRows->a[u->viewTop].p; /* only the wrapping changes */
	make_text(u, w);
	if (!u->viewRows)
		u->viewRows = xcalloc(1, sizeof *u->viewRows);
	pane_rows_free(u->viewRows);
	u->viewRowsWrap = u->wrap;
	int ww = u->wrap && u->viewKind == VIEW_DIFF ? w : 0;
	pane_rows_add(u->viewRows, u->zViewLines, ww);
	if (u->viewSrcLine >= 0) {
		u->viewSrcLine = u->viewRows->n;
		pane_rows_add(u->viewRows, u->zViewSrc, u->wrap ? w - 7 : 0);
	}
	int at = top ? pane_rows_at(u->viewRows, top) : -1;
	if (at >= 0)
		u->viewTop = at;
}

/* the page's text for width w (zViewLines), unless it is made already */
static void make_text(struct ui *u, int w)
{
	if (u->zViewLines && u->viewW == w)
		return;
	free(u->zViewLines);
	u->viewW = w;
	u->viewSrcLine = -1;
	if (u->viewKind == VIEW_DIFF) {
		/* a compare page: the two side by side as a table (cut, as the
		 * diff), then its verdict and A/B lines wrapped to the width (read
		 * whole at 80 columns), then the diff */
		const char *v = NULL, *p = NULL;
		if (!strncmp(u->zViewTitle, "compare", 7) &&
		    (v = strstr(u->zViewText, "\nverdict ")) && (p = strstr(v, "\n\n")))
			v++, p++;
		else
			v = p = NULL;
		if (!p) {
			u->zViewLines = pane_code_expand_tabs(u->zViewText);
			return;
		}
		char *table = xstrndup(u->zViewText, (size_t)(v - u->zViewText));
		char *prose = xstrndup(v, (size_t)(p - v));
		char *t = pane_code_expand_tabs(table), *wr = pane_wrap(prose, w);
		char *diff = pane_code_expand_tabs(p);
		u->zViewLines = xasprintf("%s%s%s", t, wr, diff);
		free(table);
		free(prose);
		free(t);
		free(wr);
		free(diff);
		return;
	}
	const char *src = NULL;
	if (u->viewKind == VIEW_SHOW) {
		/* report_show() ends with "source\n" and the numbered lines */
		const char *p = strstr(u->zViewText, "\nsource\n");
		src = p ? p + 8 : NULL;
	}
	char *head = src ? xstrndup(u->zViewText, (size_t)(src - u->zViewText)) : NULL;
	u->zViewLines = pane_wrap(head ? head : u->zViewText, w);
	if (src)
		u->viewSrcLine = 0; /* made the first source row by make_lines() */
	free(head);
}

const struct pane_rows *viewer_rows(struct ui *u, int *pVisible)
{
	if (!u->zViewText)
		return NULL;
	make_lines(u, COLS - 2);
	*pVisible = LINES - 4;
	return u->viewRows;
}

/* the role of row i of a diff page: its line's (a wrapped line's first row) */
static int diff_role(const struct pane_rows *r, int i)
{
	while (i > 0 && r->a[i].cont)
		i--;
	return pane_code_diff_role(r->a[i].p);
}

void viewer_draw(struct ui *u, int lines, int cols)
{
	struct ui_rect r = {1, 0, lines - 2, cols};
	if (!u->zViewText || r.h < 3)
		return;
	make_lines(u, cols - 2);
	const struct pane_rows *rs = u->viewRows;
	int rows = r.h - 2, n = rs->n;
	if (u->viewTop > n - rows)
		u->viewTop = n - rows;
	if (u->viewTop < 0)
		u->viewTop = 0;
	char title[200];
	snprintf(title, sizeof title, "%s - lines %d-%d of %d%s (q closes)", u->zViewTitle,
	         n ? u->viewTop + 1 : 0, u->viewTop + rows < n ? u->viewTop + rows : n, n,
	         u->wrap && u->viewKind != VIEW_TEXT ? ", wrapped" : "");
	for (int y = r.y; y < r.y + r.h; y++)
		screen_fill(y, 0, cols, 0);
	screen_frame(&r, title, 1);
	int nHead = u->viewSrcLine >= 0 ? u->viewSrcLine : n;
	int last = u->viewTop + rows < n ? u->viewTop + rows : n;
	/* the source rows on screen, highlighted as the code pane does */
	struct hl_span *aSpan = NULL;
	size_t nSpan = 0;
	if (u->viewDoc && last > nHead) {
		int a = u->viewTop > nHead ? u->viewTop : nHead;
		char err[KL_ERRLEN];
		uint32_t from = (uint32_t)(rs->a[a].p - u->zViewSrc);
		uint32_t to = (uint32_t)(rs->a[last - 1].p + rs->a[last - 1].n - u->zViewSrc);
		if (highlight_range(u->viewDoc, from, to, &aSpan, &nSpan, err) < 0)
			aSpan = NULL, nSpan = 0;
	}
	const char *zFind = u->findIn == UI_VIEWER ? u->zFind : NULL;
	for (int i = u->viewTop; i < last; i++) {
		const struct pane_row *row = &rs->a[i];
		int y = r.y + 1 + i - u->viewTop, x = 1, w = cols - 2;
		if (i < nHead) {
			int role = u->viewKind == VIEW_DIFF ? diff_role(rs, i) : SR_NORMAL;
			screen_putn(y, x, w, row->p, row->n, screen_attr(role));
		} else {
			char num[16] = "";
			if (!row->cont)
				snprintf(num, sizeof num, "%5d  ", row->line + 1);
			screen_put(y, 1, 7, num, screen_attr(SR_DIM));
			size_t s = (size_t)(row->p - u->zViewSrc);
			x = 8, w = cols - 9;
			pane_code_line(u->zViewSrc, aSpan, nSpan, s, s + row->n, y, x, w);
		}
		pane_find_mark(row, zFind, y, x, w, screen_attr(SR_MATCH));
	}
	free(aSpan);
}

int viewer_key(struct ui *u, int key)
{
	if (!u->zViewText)
		return 0;
	if (key == 'q' || key == 27 || key == KEY_ENTER || key == '\r' || key == '\n') {
		viewer_close(u);
		return 1;
	}
	int rows;
	const struct pane_rows *rs = viewer_rows(u, &rows);
	pane_scroll_key(key, &u->viewTop, rs->n, rows);
	return 1;
}
