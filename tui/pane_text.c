/*
 * pane_text.c - what the text panes (code, results, activity, the viewer)
 * share: scrolling keys, finding lines in a text, wrapping, the rows of a
 * text view and searching them.
 */
#include <ctype.h>
#include <curses.h>
#include <stdlib.h>
#include <string.h>

#include "panes.h"
#include "screen.h"

int pane_scroll_key(int key, int *top, int nLines, int rows)
{
	int t = *top, page = rows > 1 ? rows - 1 : 1;
	switch (key) {
	case KEY_UP:
	case 'k':
		t--;
		break;
	case KEY_DOWN:
	case 'j':
		t++;
		break;
	case KEY_PPAGE:
	case 'b':
		t -= page;
		break;
	case KEY_NPAGE:
	case ' ':
		t += page;
		break;
	case KEY_HOME:
	case 'g':
		t = 0;
		break;
	case KEY_END:
	case 'G':
		t = nLines - rows;
		break;
	default:
		return 0;
	}
	if (t > nLines - rows)
		t = nLines - rows;
	if (t < 0)
		t = 0;
	*top = t;
	return 1;
}

int pane_count_lines(const char *text)
{
	if (!text || !*text)
		return 0;
	int n = 0;
	for (const char *p = text; *p; p++)
		n += *p == '\n';
	return n + (text[strlen(text) - 1] != '\n');
}

const char *pane_line(const char *text, int i, size_t *n)
{
	const char *p = text;
	for (; i > 0 && p; i--) {
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	if (!p || !*p) {
		*n = 0;
		return "";
	}
	*n = strcspn(p, "\n");
	return p;
}

/* the byte length of the longest prefix of s[0..n) that fits in w columns
 * (one pass, character by character) */
static size_t fit(const char *s, size_t n, int w)
{
	size_t i = 0;
	int cols = 0;
	while (i < n) {
		size_t k = 1;
		while (i + k < n && ((unsigned char)s[i + k] & 0xC0) == 0x80)
			k++;
		int cw = (unsigned char)s[i] < 0x80 ? 1 : screen_width(s + i, k);
		if (cols + cw > w)
			break;
		cols += cw;
		i += k;
	}
	return i;
}

char *pane_wrap(const char *text, int w)
{
	strbuf sb = STRBUF_INIT;
	if (w < 8)
		w = 8;
	for (const char *p = text; *p;) {
		size_t k = strcspn(p, "\n");
		/* tabs to the next multiple of four columns, as the code pane does */
		strbuf ln = STRBUF_INIT;
		int col = 0;
		for (size_t i = 0; i < k; i++) {
			if (p[i] == '\t') {
				int t = 4 - col % 4;
				for (int j = 0; j < t; j++)
					sb_add(&ln, " ", 1);
				col += t;
			} else {
				sb_add(&ln, p + i, 1);
				col += ((unsigned char)p[i] & 0xC0) != 0x80;
			}
		}
		const char *l = ln.buf ? ln.buf : "";
		size_t n = ln.len;
		size_t ind = 0;
		while (ind < n && l[ind] == ' ')
			ind++;
		if ((int)ind > w / 2)
			ind = (size_t)w / 2;
		int first = 1;
		while (first || n) {
			int room = first ? w : w - (int)ind - 2;
			if (!first)
				sb_addf(&sb, "%*s", (int)ind + 2, "");
			size_t cut = fit(l, n, room);
			if (cut < n) {
				/* break at the last space that leaves something on the line */
				size_t sp = cut;
				while (sp > 0 && l[sp] != ' ')
					sp--;
				if (sp > (first ? ind : 0))
					cut = sp;
				if (cut == 0)
					cut = 1;
			}
			sb_add(&sb, l, cut);
			sb_adds(&sb, "\n");
			l += cut;
			n -= cut;
			while (n && *l == ' ')
				l++, n--;
			first = 0;
		}
		sb_free(&ln);
		p += k + (p[k] == '\n');
	}
	return sb.buf ? sb_detach(&sb) : xstrdup("");
}

/* the columns byte c of a row takes at column col (tabs to 4-column stops
 * from the row's start, as pane_code_line() draws them); *k its bytes */
static int cell(const char *p, size_t n, int col, size_t *k)
{
	*k = 1;
	if (*p == '\t')
		return 4 - col % 4;
	if ((unsigned char)*p < 0x80)
		return 1;
	while (*k < n && ((unsigned char)p[*k] & 0xC0) == 0x80)
		(*k)++;
	return screen_width(p, *k);
}

void pane_rows_add(struct pane_rows *r, const char *text, int w)
{
	int line = 0;
	for (const char *p = text; *p; line++) {
		size_t len = strcspn(p, "\n"), at = 0;
		int cont = 0;
		do {
			/* the bytes of the line that fit in w columns from here */
			size_t end = len;
			if (w > 0) {
				int col = 0;
				size_t i = at, k;
				while (i < len) {
					int cw = cell(p + i, len - i, col, &k);
					if (col + cw > w)
						break;
					col += cw;
					i += k;
				}
				end = i;
				if (end < len) {
					/* after the last space that leaves something before it */
					size_t sp = end;
					while (sp > at && p[sp - 1] != ' ')
						sp--;
					if (sp > at + 1)
						end = sp;
					if (end == at)
						end = at + 1; /* a cell wider than the row */
				}
			}
			xgrow((void **)&r->a, &r->alloc, (size_t)r->n + 1, sizeof *r->a);
			r->a[r->n++] = (struct pane_row){p + at, end - at, line, cont};
			at = end;
			cont = 1;
		} while (at < len);
		p += len + (p[len] == '\n');
	}
}

void pane_rows_free(struct pane_rows *r)
{
	free(r->a);
	memset(r, 0, sizeof *r);
}

int pane_rows_at(const struct pane_rows *r, const char *p)
{
	for (int i = 0; i < r->n; i++)
		if (p >= r->a[i].p && p <= r->a[i].p + r->a[i].n)
			return i;
	return -1;
}

/* zPat at s (n bytes left): case matters only when zPat has a capital */
static int match_at(const char *s, size_t n, const char *zPat, size_t nPat, int fold)
{
	if (nPat > n)
		return 0;
	if (!fold)
		return !memcmp(s, zPat, nPat);
	for (size_t i = 0; i < nPat; i++)
		if (tolower((unsigned char)s[i]) != (unsigned char)zPat[i])
			return 0;
	return 1;
}

static int has_capital(const char *z)
{
	for (; *z; z++)
		if (isupper((unsigned char)*z))
			return 1;
	return 0;
}

/* the first (dir 1) or the last (dir -1) match in row whose first byte is
 * in [lo, hi); -1 when none */
static long find_in_row(const struct pane_row *row, const char *zPat, int fold, size_t lo,
                        size_t hi, int dir)
{
	size_t nPat = strlen(zPat);
	if (nPat > row->n)
		return -1;
	if (hi > row->n - nPat + 1)
		hi = row->n - nPat + 1;
	if (lo >= hi)
		return -1;
	for (size_t k = 0; k < hi - lo; k++) {
		size_t i = dir > 0 ? lo + k : hi - 1 - k;
		if (match_at(row->p + i, row->n - i, zPat, nPat, fold))
			return (long)i;
	}
	return -1;
}

int pane_find(const struct pane_rows *r, const char *zPat, int row, size_t at, int dir, int *pRow,
              size_t *pAt)
{
	if (!zPat || !*zPat || r->n == 0)
		return -1;
	int fold = !has_capital(zPat);
	if (row < 0 || row >= r->n)
		row = 0, at = 0;
	/* the rest of row, the rows after it (before it, going back), then
	 * round from the other end, and row's other part last */
	for (int step = 0; step <= r->n; step++) {
		int i = ((row + dir * step) % r->n + r->n) % r->n;
		size_t lo = 0, hi = (size_t)-1;
		if (step == 0 && dir > 0)
			lo = at;
		else if (step == 0)
			hi = at;
		else if (step == r->n && dir > 0)
			hi = at;
		else if (step == r->n)
			lo = at;
		long m = find_in_row(&r->a[i], zPat, fold, lo, hi, dir);
		if (m >= 0) {
			*pRow = i;
			*pAt = (size_t)m;
			/* wrapped: it went past the last row (the first, going back) */
			return step > 0 && (dir > 0 ? i <= row : i >= row);
		}
	}
	return -1;
}

int pane_find_count(const struct pane_rows *r, const char *zPat, int row, size_t at, int *pNth)
{
	int n = 0, fold = zPat ? !has_capital(zPat) : 0;
	size_t nPat = zPat ? strlen(zPat) : 0;
	*pNth = 0;
	if (!nPat)
		return 0;
	for (int i = 0; i < r->n; i++)
		for (size_t k = 0; k + nPat <= r->a[i].n; k++)
			if (match_at(r->a[i].p + k, r->a[i].n - k, zPat, nPat, fold)) {
				n++;
				if (i == row && k == at)
					*pNth = n;
				k += nPat - 1;
			}
	return n;
}

int pane_row_col(const struct pane_row *row, size_t at)
{
	int col = 0;
	size_t k;
	for (size_t i = 0; i < at && i < row->n; i += k)
		col += cell(row->p + i, row->n - i, col, &k);
	return col;
}

void pane_find_mark(const struct pane_row *row, const char *zPat, int y, int x, int w, int attr)
{
	size_t nPat = zPat ? strlen(zPat) : 0;
	if (!nPat)
		return;
	int fold = !has_capital(zPat), col = 0;
	size_t i = 0, k;
	while (i < row->n && col < w) {
		if (i + nPat <= row->n && match_at(row->p + i, row->n - i, zPat, nPat, fold)) {
			int c0 = col;
			for (size_t e = i + nPat; i < e; i += k)
				col += cell(row->p + i, row->n - i, col, &k);
			int cols = (col < w ? col : w) - c0;
			if (cols > 0)
				mvchgat(y, x + c0, cols, attr & ~A_COLOR, (short)PAIR_NUMBER(attr),
				        NULL);
			continue;
		}
		col += cell(row->p + i, row->n - i, col, &k);
		i += k;
	}
}
