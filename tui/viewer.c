/*
 * viewer.c - a page of text over the panes: the help, `show`, `diff`,
 * `list` and `jobs` answers in the TUI; scrolls like the text panes.
 */
#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "panes.h"
#include "screen.h"

void viewer_open(struct ui *u, const char *zTitle, const char *zText)
{
	viewer_close(u);
	u->zViewTitle = xstrdup(zTitle);
	u->zViewText = xstrdup(zText);
	u->viewTop = 0;
}

void viewer_close(struct ui *u)
{
	free(u->zViewTitle);
	free(u->zViewText);
	u->zViewTitle = u->zViewText = NULL;
}

static int text_role(const char *line, size_t n)
{
	if (n && line[0] == '+')
		return SR_ADDED;
	if (n && line[0] == '-')
		return SR_REMOVED;
	if (n > 1 && line[0] == '@' && line[1] == '@')
		return SR_HUNK;
	return SR_NORMAL;
}

void viewer_draw(struct ui *u, int lines, int cols)
{
	struct ui_rect r = {1, 0, lines - 2, cols};
	if (!u->zViewText || r.h < 3)
		return;
	int rows = r.h - 2, n = pane_count_lines(u->zViewText);
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
	const char *p = u->zViewText;
	int i = 0;
	/* walk to the first line shown once, then line by line */
	for (; i < u->viewTop && *p; i++)
		p += strcspn(p, "\n") + (p[strcspn(p, "\n")] == '\n');
	for (int row = 0; row < rows && *p; row++) {
		size_t k = strcspn(p, "\n");
		screen_putn(r.y + 1 + row, 1, cols - 2, p, k, screen_attr(text_role(p, k)));
		p += k + (p[k] == '\n');
	}
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
	pane_scroll_key(key, &u->viewTop, pane_count_lines(u->zViewText), rows);
	return 1;
}
