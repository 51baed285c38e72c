/*
 * panes.h - the TUI's panes, one module each, in the manner of ncdu's
 * browser.c: pane_<name>_draw(u, r, focused) draws the pane into the
 * rectangle r (frame included); pane_<name>_key(u, key) handles a key
 * while the pane has the focus and returns 1 if it used it, 0 if the app
 * should;  pane_<name>_click(u, row) handles a mouse click on inner row
 * `row` (0 = first row inside the frame).  Panes read u->st and u's view
 * state; they never change the engine's state.
 */
#ifndef KL_PANES_H
#define KL_PANES_H

#include "ui.h"

/* Population: the candidates table (tui/pane_population.c) */
void pane_population_draw(struct ui *u, const struct ui_rect *r, int focused);
int pane_population_key(struct ui *u, int key);
void pane_population_click(struct ui *u, int row);

/* Ideas: the LLM's ideas, pending first (tui/pane_ideas.c) */
void pane_ideas_draw(struct ui *u, const struct ui_rect *r, int focused);
int pane_ideas_key(struct ui *u, int key);
void pane_ideas_click(struct ui *u, int row);
/* the selected idea, or NULL */
const struct state_idea *pane_ideas_selected(const struct ui *u);
/* the short form of an idea's state (state_idea_word()) for a narrow pane,
 * one for one: pending pend, implemented impl, accepted acc, rejected rej,
 * nothing new none, duplicate dup */
const char *pane_ideas_status_short(const char *zStatus);
/* the first pending idea after id (in id order, wrapping round), or 0 */
int pane_ideas_next_pending(const struct ui *u, int id);

/* Code: the selected candidate's source, highlighted, or its diff against
 * its parent (d toggles) (tui/pane_code.c) */
void pane_code_draw(struct ui *u, const struct ui_rect *r, int focused);
int pane_code_key(struct ui *u, int key);
/* free the highlighting cache */
void pane_code_free(struct ui *u);
struct hl_span;
/* draw bytes [s, e) of text at row y, column x, w columns, coloured by the
 * highlight spans (sorted, as highlight_range() gives them), tabs as 4
 * columns (shared by the code pane and the `show` viewer) */
void pane_code_line(const char *text, const struct hl_span *aSpan, size_t nSpan, size_t s, size_t e,
                    int y, int x, int w);
/* a diff's text with its tabs expanded after the +/- column (fresh string) */
char *pane_code_expand_tabs(const char *z);
/* the role of a line of a diff: added, removed, hunk, header, changed */
int pane_code_diff_role(const char *line);

/* Results: the selected candidate's report (tui/pane_results.c) */
void pane_results_draw(struct ui *u, const struct ui_rect *r, int focused);
int pane_results_key(struct ui *u, int key);

/* Activity: jobs in flight with their progress, then the log
 * (tui/pane_activity.c) */
void pane_activity_draw(struct ui *u, const struct ui_rect *r, int focused);
int pane_activity_key(struct ui *u, int key);

/* the viewer: a page of text over the panes (help, show, diff, list) that
 * q or Escape closes (tui/viewer.c) */
void viewer_open(struct ui *u, const char *zTitle, const char *zText);
void viewer_close(struct ui *u);
void viewer_draw(struct ui *u, int lines, int cols);
/* 1 if the key was used; closes the viewer on q and Escape */
int viewer_key(struct ui *u, int key);

/* the speedups by candidate, the best's lineage marked (tui/chart.c) */
void chart_draw(struct ui *u, const struct ui_rect *r);
/* candidate best's lineage: its id, its first parent's, ... back to a seed,
 * into aId (at most max); returns how many */
int chart_lineage(const struct state *st, int best, int *aId, int max);
/*
 * The chart's series, pure: for each of n columns spanning the time from
 * the session's start to tEnd, the best speedup of a correct candidate
 * evaluated by then (0 where none was).  Returns the best overall.
 */
double chart_series(const struct state *st, double tEnd, int n, double *out);

/*
 * Scroll helper shared by the text panes: apply key (arrows, j/k, page
 * up/down, g/G, Home/End) to *top for a text of nLines shown in `rows`
 * rows.  Returns 1 if key was a scrolling key.
 */
int pane_scroll_key(int key, int *top, int nLines, int rows);

/*
 * text with its tabs expanded (4 columns) and every line wider than w
 * columns wrapped at spaces (a word wider than the line is cut); the
 * continuation lines are indented two more than the line.  A fresh string.
 */
char *pane_wrap(const char *text, int w);

/* the number of lines in text, and a pointer to line i (its length in *n) */
int pane_count_lines(const char *text);
const char *pane_line(const char *text, int i, size_t *n);

#endif
