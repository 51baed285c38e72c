/*
 * pane_text.c - what the text panes (code, results, activity, the viewer)
 * share: scrolling keys and finding lines in a text.
 */
#include <curses.h>
#include <string.h>

#include "panes.h"

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
