/*
 * pane_text.c - what the text panes (code, results, activity, the viewer)
 * share: scrolling keys and finding lines in a text.
 */
#include <curses.h>
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
