/*
 * pane_ideas.c - the Ideas pane: the ideas in the session's state (from
 * the LLM, or a person's), pending ones first; the app turns a, e and r
 * on the selected idea into accept, revise and reject.
 */
#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "panes.h"
#include "screen.h"

/* pending, then accepted (and implemented, or nothing new), then
 * rejected (and duplicates); in order of id within each */
static int rank(const struct state_idea *d)
{
	return d->status == IDEA_PENDING ? 0 : d->status == IDEA_ACCEPTED ? 1 : 2;
}

const char *pane_ideas_status_short(const char *zStatus)
{
	static const char *const map[][2] = {{"pending", "pend"},     {"implemented", "impl"},
	                                     {"accepted", "acc"},     {"rejected", "rej"},
	                                     {"nothing new", "none"}, {"duplicate", "dup"}};
	for (size_t i = 0; i < sizeof map / sizeof *map; i++)
		if (!strcmp(zStatus, map[i][0]))
			return map[i][1];
	return zStatus;
}

int pane_ideas_next_pending(const struct ui *u, int id)
{
	const struct state *st = u->st;
	int first = 0;
	for (int i = 0; i < st->nIdea; i++) {
		const struct state_idea *d = &st->aIdea[i];
		if (d->status != IDEA_PENDING)
			continue;
		if (d->id > id)
			return d->id;
		if (!first)
			first = d->id;
	}
	return first;
}

/* the ideas in display order (indices into st->aIdea); returns how many */
static int order(const struct state *st, int *out)
{
	int n = 0;
	for (int r = 0; r < 3; r++)
		for (int i = 0; i < st->nIdea; i++)
			if (rank(&st->aIdea[i]) == r)
				out[n++] = i;
	return n;
}

const struct state_idea *pane_ideas_selected(const struct ui *u)
{
	return u->selIdea ? state_idea(u->st, u->selIdea) : NULL;
}

/* keep the selection on an idea and visible; returns the display order */
static int *fix_selection(struct ui *u, int rows, int *pn)
{
	int *ord = xcalloc((size_t)u->st->nIdea + 1, sizeof *ord);
	int n = order(u->st, ord), row = -1;
	for (int i = 0; i < n; i++)
		if (u->st->aIdea[ord[i]].id == u->selIdea)
			row = i;
	if (row < 0)
		u->selIdea = n ? u->st->aIdea[ord[0]].id : 0, row = n ? 0 : -1;
	if (row >= 0 && row < u->ideaTop)
		u->ideaTop = row;
	/* a selection that fits from the top shows the top: the pending ideas
	 * (first) never scroll above the visible ones */
	if (rows > 0 && row < rows)
		u->ideaTop = 0;
	if (rows > 0 && row >= u->ideaTop + rows)
		u->ideaTop = row - rows + 1;
	if (u->ideaTop > n - rows)
		u->ideaTop = n - rows;
	if (u->ideaTop < 0)
		u->ideaTop = 0;
	*pn = n;
	return ord;
}

void pane_ideas_draw(struct ui *u, const struct ui_rect *r, int focused)
{
	if (r->h < 3)
		return;
	int rows = r->h - 2, w = r->w - 2, n, pending = 0;
	int *ord = fix_selection(u, rows, &n);
	for (int i = 0; i < u->st->nIdea; i++)
		pending += u->st->aIdea[i].status == IDEA_PENDING;
	char title[160];
	/* the longest title that fits (the frame takes " ", " *" and " "); a
	 * narrow pane: short statuses (Enter shows the idea) */
	int narrow = w < 34;
	snprintf(title, sizeof title, "Ideas - %d pending of %d%s", pending, n,
	         n ? " (a accept, e revise, r reject)" : "");
	if (screen_width(title, strlen(title)) > w - 4)
		snprintf(title, sizeof title, "Ideas - %d pending of %d%s", pending, n,
		         n ? " (a/e/r)" : "");
	if (screen_width(title, strlen(title)) > w - 4)
		snprintf(title, sizeof title, "Ideas %d/%d pending", pending, n);
	screen_frame(r, title, focused);
	if (!n)
		screen_put(r->y + 1, r->x + 2, w - 1,
		           u->lv ? "no ideas yet: `:ideas 3` asks the LLM for three"
		                 : "no ideas at this point",
		           screen_attr(SR_DIM));
	for (int i = 0; i < rows && u->ideaTop + i < n; i++) {
		const struct state_idea *d = &u->st->aIdea[ord[u->ideaTop + i]];
		int y = r->y + 1 + i, sel = d->id == u->selIdea;
		int base = sel ? screen_attr(SR_SELECTED) | (focused ? A_BOLD : 0) : 0;
		const char *zs = state_idea_word(u->st, d);
		/* an idea that made nothing new is as done as a rejected one */
		int role = rank(d) == 0                                ? SR_BUSY
		           : rank(d) == 1 && strcmp(zs, "nothing new") ? SR_GOOD
		                                                       : SR_DIM;
		char head[64];
		if (narrow)
			snprintf(head, sizeof head, "%3d %-4s ", d->id,
			         pane_ideas_status_short(zs));
		else
			snprintf(head, sizeof head, "%3d %-11s ", d->id, zs);
		screen_fill(y, r->x + 1, w, base);
		int used = screen_put(y, r->x + 1, w, head, base | screen_attr(role));
		char rest[400];
		snprintf(rest, sizeof rest, "%s%s [%s]", d->zTitle, d->edited ? " (revised)" : "",
		         d->zCategory);
		if (d->parent)
			snprintf(rest + strlen(rest), sizeof rest - strlen(rest), " for #%d",
			         d->parent);
		screen_put(y, r->x + 1 + used, w - used, rest, base);
	}
	free(ord);
}

int pane_ideas_key(struct ui *u, int key)
{
	int rows = u->aRect[UI_IDEAS].h - 2, n;
	int *ord = fix_selection(u, rows < 1 ? 1 : rows, &n);
	int row = 0;
	for (int i = 0; i < n; i++)
		if (u->st->aIdea[ord[i]].id == u->selIdea)
			row = i;
	int top = row;
	int used = pane_scroll_key(key, &top, n + (rows < 1 ? 1 : rows) - 1, rows < 1 ? 1 : rows);
	if (used && n) {
		if (key == KEY_END || key == 'G')
			top = n - 1;
		top = top >= n ? n - 1 : top < 0 ? 0 : top;
		u->selIdea = u->st->aIdea[ord[top]].id;
	}
	free(ord);
	return used;
}

void pane_ideas_click(struct ui *u, int row)
{
	int n;
	int *ord = fix_selection(u, u->aRect[UI_IDEAS].h - 2, &n);
	if (row >= 0 && u->ideaTop + row < n)
		u->selIdea = u->st->aIdea[ord[u->ideaTop + row]].id;
	free(ord);
}
