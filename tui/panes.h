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
/* the rows the pane draws (the source or the diff, wrapped when u->wrap),
 * and in *pVisible how many show at once; NULL when no candidate is
 * selected.  They live until the pane's text changes */
const struct pane_rows *pane_code_rows(struct ui *u, int *pVisible);
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
/* the pane's text as drawn (wrapped to it), a fresh string; NULL when no
 * candidate is selected */
char *pane_results_text(const struct ui *u);

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
/* the page's rows as drawn (for a search), and in *pVisible how many
 * show at once; NULL when no page is open */
const struct pane_rows *viewer_rows(struct ui *u, int *pVisible);

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

/* a row of a text view as drawn: a line of its text, or with wrapping a
 * piece of one */
struct pane_row {
	const char *p; /* its first byte, in the text it was made from */
	size_t n;      /* its bytes (no newline) */
	int line;      /* the line of that text it is (a part of), from 0 */
	int cont;      /* 1: it continues that line (wrapped) */
};
/* the rows of one or more texts, in order */
struct pane_rows {
	struct pane_row *a;
	int n;
	size_t alloc;
};
/*
 * Add text's rows to r: a row per line or, with w > 0, each line wider
 * than w columns (tabs to 4-column stops from the row's start, as
 * pane_code_line() draws them) broken after its last space that fits (a
 * word wider than the row is cut).  Every byte of a line is in one of its
 * rows.  The rows point into text, which must outlive them.
 */
void pane_rows_add(struct pane_rows *r, const char *text, int w);
void pane_rows_free(struct pane_rows *r);
/* the row that holds byte p of its text (its end included), or -1 */
int pane_rows_at(const struct pane_rows *r, const char *p);

/*
 * Search the rows for zPat, plain text (case ignored unless zPat has a
 * capital, as vim's smartcase): dir 1, the first match at byte `at` of row
 * `row` or after; dir -1, the last one before it; round the end of the
 * rows and back to the start (the start and back to the end) when none is
 * there.  A row out of range starts at the first.  Returns 0 with its row
 * and byte in *pRow, *pAt, 1 when it went round the end to find it, -1
 * when the rows hold no match (or zPat is empty).  Pure, for the tests.
 */
int pane_find(const struct pane_rows *r, const char *zPat, int row, size_t at, int dir, int *pRow,
              size_t *pAt);
/* the matches of zPat in the rows (none overlapping), and in *pNth which of
 * them starts at byte at of row (from 1; 0: none does) */
int pane_find_count(const struct pane_rows *r, const char *zPat, int row, size_t at, int *pNth);
/* the column of row (from its start) at which its byte at is drawn */
int pane_row_col(const struct pane_row *row, size_t at);
/* mark the matches of zPat in row, drawn at y, x in w columns (as
 * pane_code_line() or screen_putn() put it), with attr */
void pane_find_mark(const struct pane_row *row, const char *zPat, int y, int x, int w, int attr);

#endif
