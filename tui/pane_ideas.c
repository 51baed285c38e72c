/*
 * pane_ideas.c - the Ideas pane: the LLM's ideas for improving a
 * candidate; a accepts, e revises, r rejects the selected one.
 */
#include <curses.h>
#include <stdio.h>
#include <string.h>

#include "panes.h"
#include "screen.h"

void pane_ideas_draw(struct ui *u, const struct ui_rect *r, int focused)
{
	if (r->h < 3)
		return;
	(void)u;
	int w = r->w - 2;
	screen_frame(r, "Ideas - 0 pending", focused);
	screen_put(r->y + 1, r->x + 2, w - 1, "no ideas yet: `:ideas 3` asks the LLM for three",
	           screen_attr(SR_DIM));
}

int pane_ideas_key(struct ui *u, int key)
{
	(void)u, (void)key;
	return 0;
}

void pane_ideas_click(struct ui *u, int row)
{
	(void)u, (void)row;
}
