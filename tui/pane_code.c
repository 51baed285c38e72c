/*
 * pane_code.c - the Code pane: the selected candidate's source with
 * tree-sitter highlighting (engine/code/highlight.h), or its diff against its
 * parent (by function, then by line); both cached per candidate.
 */
#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "highlight.h"
#include "panes.h"
#include "report.h"
#include "screen.h"

#define TAB 4

struct pane_code_cache {
	const struct state *st; /* the state it was made from */
	int cand;               /* the candidate */
	int diff;               /* diff mode */
	char *text;             /* the source, or the diff */
	int nLine;              /* its lines */
	struct pane_rows rows;  /* its rows as drawn (lines, or wrapped) */
	int rowsW;              /* the width they were wrapped to (0: not wrapped) */
	int rowsMade;           /* rows is made */
	struct syntax_doc *doc; /* the source parsed (not in diff mode), or NULL */
	struct hl_span *aSpan;  /* spans of the lines drawn last (highlight_range) */
	size_t nSpan;
	uint32_t spanFrom, spanTo;  /* the bytes they cover */
	char zNote[KL_ERRLEN + 32]; /* why there is no highlighting, or "" */
};

void pane_code_free(struct ui *u)
{
	struct pane_code_cache *c = u->code;
	if (!c)
		return;
	free(c->text);
	pane_rows_free(&c->rows);
	syntax_free(c->doc);
	free(c->aSpan);
	free(c);
	u->code = NULL;
}

/* the diff with its tabs expanded (after the +/- column of each line) */
static char *expand_tabs(const char *z);
char *pane_code_expand_tabs(const char *z)
{
	return expand_tabs(z);
}

static char *expand_tabs(const char *z)
{
	strbuf sb = STRBUF_INIT;
	int col = 0;
	for (const char *p = z; *p; p++) {
		if (*p == '\t') {
			int k = TAB - (col - 1 + TAB) % TAB;
			for (int i = 0; i < k; i++)
				sb_add(&sb, " ", 1);
			col += k;
		} else {
			sb_add(&sb, p, 1);
			col = *p == '\n' ? 0 : col + 1;
		}
	}
	return sb.buf ? sb_detach(&sb) : xstrdup("");
}

static struct pane_code_cache *cache_for(struct ui *u, const struct cand *cd)
{
	struct pane_code_cache *c = u->code;
	if (c && c->st == u->st && c->cand == cd->id && c->diff == u->codeDiff)
		return c;
	pane_code_free(u);
	c = u->code = xcalloc(1, sizeof *c);
	c->st = u->st;
	c->cand = cd->id;
	c->diff = u->codeDiff;
	if (u->codeDiff) {
		strbuf sb = STRBUF_INIT;
		char err[KL_ERRLEN];
		if (report_diff(u->st, NULL, cd, &sb, err) < 0)
			sb_addf(&sb, "%s\n", err);
		c->text = expand_tabs(sb.buf);
		sb_free(&sb);
	} else {
		c->text = xstrdup(cd->zSource);
		char err[KL_ERRLEN];
		/* parsed once; only the lines on screen are highlighted */
		c->doc = syntax_parse(c->text, strlen(c->text), err);
		if (!c->doc)
			snprintf(c->zNote, sizeof c->zNote, "not highlighted: %s", err);
	}
	c->nLine = pane_count_lines(c->text);
	return c;
}

/* the rows for wrapping at w columns (0: none), the top row kept on the
 * same text when only the wrapping changed */
static void rows_for(struct ui *u, struct pane_code_cache *c, int w)
{
	if (c->rowsMade && c->rowsW == w)
		return;
	const char *top = c->rowsMade && u->codeTop < c->rows.n ? c->rows.a[u->codeTop].p : NULL;
	pane_rows_free(&c->rows);
	pane_rows_add(&c->rows, c->text, w);
	c->rowsW = w;
	c->rowsMade = 1;
	int at = top ? pane_rows_at(&c->rows, top) : -1;
	if (at >= 0)
		u->codeTop = at;
}

/* the gutter of line numbers: the source has one, a diff none */
static int gutter_of(const struct ui *u)
{
	return u->codeDiff ? 0 : 5;
}

const struct pane_rows *pane_code_rows(struct ui *u, int *pVisible)
{
	const struct cand *cd = ui_selected(u);
	const struct ui_rect *r = &u->aRect[UI_CODE];
	if (!cd || r->h < 3)
		return NULL;
	struct pane_code_cache *c = cache_for(u, cd);
	rows_for(u, c, u->wrap ? r->w - 2 - gutter_of(u) : 0);
	*pVisible = r->h - 2;
	return &c->rows;
}

static void draw_source_line(const struct pane_code_cache *c, size_t s, size_t e, int y, int x,
                             int w)
{
	pane_code_line(c->text, c->aSpan, c->nSpan, s, e, y, x, w);
}

void pane_code_line(const char *text, const struct hl_span *aSpan, size_t nSpan, size_t s, size_t e,
                    int y, int x, int w)
{
	struct {
		const char *text;
		const struct hl_span *aSpan;
		size_t nSpan;
	} cc = {text, aSpan, nSpan}, *c = &cc;
	/* the first span that ends after s */
	size_t lo = 0, hi = c->nSpan;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (c->aSpan[mid].end <= s)
			lo = mid + 1;
		else
			hi = mid;
	}
	size_t si = lo;
	int col = 0;
	char run[512];
	size_t nRun = 0;
	int runRole = SR_NORMAL;
	for (size_t p = s; p <= e && col < w; p++) {
		int role = SR_NORMAL;
		if (p < e) {
			while (si < c->nSpan && c->aSpan[si].end <= p)
				si++;
			if (si < c->nSpan && c->aSpan[si].start <= p)
				role = screen_role_of_capture(c->aSpan[si].name);
		}
		if (p == e || role != runRole || nRun + TAB + 1 >= sizeof run) {
			col += screen_putn(y, x + col, w - col, run, nRun, screen_attr(runRole));
			nRun = 0;
			runRole = role;
			if (p == e)
				break;
		}
		if (c->text[p] == '\t') {
			/* columns so far in this line decide the tab stop */
			int at = col + screen_width(run, nRun);
			int k = TAB - at % TAB;
			memset(run + nRun, ' ', (size_t)k);
			nRun += (size_t)k;
		} else {
			run[nRun++] = c->text[p];
		}
	}
}

int pane_code_diff_role(const char *line)
{
	char c0 = *line;
	if (c0 == '+')
		return SR_ADDED;
	if (c0 == '-')
		return SR_REMOVED;
	if (c0 == '@')
		return SR_HUNK;
	if (!strncmp(line, "diff ", 5) || !strncmp(line, "functions", 9))
		return SR_HEADER;
	if (!strncmp(line, "  changed", 9) || !strncmp(line, "  added", 7))
		return SR_BUSY;
	if (!strncmp(line, "  removed", 9))
		return SR_BAD;
	return SR_NORMAL;
}

void pane_code_draw(struct ui *u, const struct ui_rect *r, int focused)
{
	if (r->h < 3)
		return;
	const struct cand *cd = ui_selected(u);
	int rows = r->h - 2, w = r->w - 2;
	char title[200];
	if (!cd) {
		screen_frame(r, "Code", focused);
		screen_put(r->y + 1, r->x + 2, w - 1, "no candidate selected", screen_attr(SR_DIM));
		return;
	}
	struct pane_code_cache *c = cache_for(u, cd);
	int gutter = gutter_of(u);
	rows_for(u, c, u->wrap ? w - gutter : 0);
	const struct pane_rows *rs = &c->rows;
	if (u->codeTop > rs->n - rows)
		u->codeTop = rs->n - rows;
	if (u->codeTop < 0)
		u->codeTop = 0;
	const char *wr = u->wrap ? ", wrapped" : "";
	if (u->codeDiff && cd->nParent)
		snprintf(title, sizeof title, "Code #%d %s - diff against #%d%s (d: source)",
		         cd->id, cd->zName, cd->aParent[0], wr);
	else if (u->codeDiff)
		snprintf(title, sizeof title,
		         "Code #%d %s - a %s has no parent to diff against (d: source)", cd->id,
		         cd->zName, cd->zOrigin);
	else
		snprintf(title, sizeof title, "Code #%d %s - %d lines%s%s", cd->id, cd->zName,
		         c->nLine, wr, cd->nParent ? " (d: diff)" : "");
	screen_frame(r, title, focused);
	int last = u->codeTop + rows < rs->n ? u->codeTop + rows : rs->n;
	if (c->doc && last > u->codeTop) {
		uint32_t from = (uint32_t)(rs->a[u->codeTop].p - c->text);
		uint32_t to = (uint32_t)(rs->a[last - 1].p + rs->a[last - 1].n - c->text);
		/* while the query compiles (the TUI's first frame, on a session that
		 * opened quickly) the code is drawn plain, and highlighted in the
		 * frame drawn when it is ready (app.c: syntax_query_warm()) */
		if ((!c->aSpan || from != c->spanFrom || to != c->spanTo) && highlight_ready()) {
			char err[KL_ERRLEN];
			free(c->aSpan);
			c->aSpan = NULL;
			c->nSpan = 0;
			if (highlight_range(c->doc, from, to, &c->aSpan, &c->nSpan, err) < 0)
				snprintf(c->zNote, sizeof c->zNote, "not highlighted: %s", err);
			c->spanFrom = from;
			c->spanTo = to;
		}
	}
	const char *zFind = u->findIn == UI_CODE ? u->zFind : NULL;
	for (int i = u->codeTop; i < last; i++) {
		const struct pane_row *row = &rs->a[i];
		int y = r->y + 1 + i - u->codeTop, x = r->x + 1 + gutter;
		size_t s = (size_t)(row->p - c->text);
		if (gutter) {
			char num[16] = "";
			if (!row->cont)
				snprintf(num, sizeof num, "%4d ", row->line + 1);
			screen_put(y, r->x + 1, gutter, num, screen_attr(SR_DIM));
			draw_source_line(c, s, s + row->n, y, x, w - gutter);
		} else {
			/* a wrapped line's rows have its colour */
			int k = i;
			while (k > 0 && rs->a[k].cont)
				k--;
			screen_putn(y, x, w, row->p, row->n,
			            screen_attr(pane_code_diff_role(rs->a[k].p)));
		}
		pane_find_mark(row, zFind, y, x, w - gutter, screen_attr(SR_MATCH));
	}
	if (*c->zNote && rows > 1)
		screen_put(r->y + r->h - 1, r->x + 2, w - 2, c->zNote, screen_attr(SR_DIM));
}

int pane_code_key(struct ui *u, int key)
{
	if (key == 'd') {
		const struct cand *cd = ui_selected(u);
		if (cd && (cd->nParent || u->codeDiff)) {
			u->codeDiff = !u->codeDiff;
			u->codeTop = 0;
		}
		return 1;
	}
	int rows = 0;
	const struct pane_rows *rs = pane_code_rows(u, &rows);
	return pane_scroll_key(key, &u->codeTop, rs ? rs->n : 0, u->aRect[UI_CODE].h - 2);
}
