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
}

/* the lines to draw for width w: the show page's header wrapped and its
 * source as it is (the source is drawn from zViewSrc, highlighted), a diff
 * with its tabs expanded, any other text wrapped */
static void make_lines(struct ui *u, int w)
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
		u->viewSrcLine = pane_count_lines(u->zViewLines);
	free(head);
}

/* the number of lines the viewer shows */
static int view_lines(struct ui *u)
{
	int n = pane_count_lines(u->zViewLines);
	if (u->viewSrcLine >= 0)
		n += pane_count_lines(u->zViewSrc);
	return n;
}

void viewer_draw(struct ui *u, int lines, int cols)
{
	struct ui_rect r = {1, 0, lines - 2, cols};
	if (!u->zViewText || r.h < 3)
		return;
	make_lines(u, cols - 2);
	int rows = r.h - 2, n = view_lines(u);
	if (u->viewTop > n - rows)
		u->viewTop = n - rows;
	if (u->viewTop < 0)
		u->viewTop = 0;
	char title[200];
	snprintf(title, sizeof title, "%s - lines %d-%d of %d (q closes)", u->zViewTitle,
	         n ? u->viewTop + 1 : 0, u->viewTop + rows < n ? u->viewTop + rows : n, n);
	for (int y = r.y; y < r.y + r.h; y++)
		screen_fill(y, 0, cols, 0);
	screen_frame(&r, title, 1);
	int nHead = pane_count_lines(u->zViewLines);
	/* the source lines on screen, highlighted as the code pane does */
	struct hl_span *aSpan = NULL;
	size_t nSpan = 0, *aOff = NULL, nOff = 0, alloc = 0;
	if (u->viewSrcLine >= 0) {
		for (const char *p = u->zViewSrc; *p;) {
			xgrow((void **)&aOff, &alloc, nOff + 2, sizeof *aOff);
			aOff[nOff++] = (size_t)(p - u->zViewSrc);
			p += strcspn(p, "\n");
			p += *p == '\n';
		}
		xgrow((void **)&aOff, &alloc, nOff + 1, sizeof *aOff);
		aOff[nOff] = strlen(u->zViewSrc);
		int a = u->viewTop - nHead, b = u->viewTop + rows - nHead;
		a = a < 0 ? 0 : a > (int)nOff ? (int)nOff : a;
		b = b < 0 ? 0 : b > (int)nOff ? (int)nOff : b;
		char err[KL_ERRLEN];
		if (u->viewDoc && b > a &&
		    highlight_range(u->viewDoc, (uint32_t)aOff[a], (uint32_t)aOff[b], &aSpan,
		                    &nSpan, err) < 0)
			aSpan = NULL, nSpan = 0;
	}
	for (int row = 0; row < rows && u->viewTop + row < n; row++) {
		int i = u->viewTop + row, y = r.y + 1 + row;
		if (i < nHead) {
			size_t k;
			const char *p = pane_line(u->zViewLines, i, &k);
			int role = u->viewKind == VIEW_DIFF ? pane_code_diff_role(p) : SR_NORMAL;
			screen_putn(y, 1, cols - 2, p, k, screen_attr(role));
			continue;
		}
		int ln = i - nHead;
		char num[16];
		snprintf(num, sizeof num, "%5d  ", ln + 1);
		screen_put(y, 1, 7, num, screen_attr(SR_DIM));
		size_t s = aOff[ln], e = aOff[ln + 1];
		if (e > s && u->zViewSrc[e - 1] == '\n')
			e--;
		pane_code_line(u->zViewSrc, aSpan, nSpan, s, e, y, 8, cols - 9);
	}
	free(aSpan);
	free(aOff);
}

int viewer_key(struct ui *u, int key)
{
	if (!u->zViewText)
		return 0;
	if (key == 'q' || key == 27 || key == KEY_ENTER || key == '\r' || key == '\n') {
		viewer_close(u);
		return 1;
	}
	int rows = LINES - 4;
	make_lines(u, COLS - 2);
	pane_scroll_key(key, &u->viewTop, view_lines(u), rows);
	return 1;
}
