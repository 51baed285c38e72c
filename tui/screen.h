/*
 * screen.h - the terminal for the TUI: curses set-up and teardown, the
 * signal handlers (SIGWINCH and SIGINT only set flags and wake the loop;
 * SIGTERM and the fatal signals restore the terminal with async-safe
 * writes and re-raise), colours (none under NO_COLOR), the layout of the
 * panes, and drawing helpers that clip UTF-8 text to a width.
 */
#ifndef KL_SCREEN_H
#define KL_SCREEN_H

#include "ui.h"

/* what a piece of text is, for its colour and attributes */
enum screen_role {
	SR_NORMAL,
	SR_TITLE,    /* the top bar */
	SR_BORDER,   /* a pane's frame */
	SR_FOCUS,    /* the focused pane's frame and title */
	SR_HEADER,   /* column headers */
	SR_SELECTED, /* the selected row */
	SR_GOOD,     /* correct, a speedup */
	SR_BAD,      /* failed verdicts, errors */
	SR_BUSY,     /* evaluating, streaming */
	SR_DIM,      /* secondary text */
	SR_KEYWORD,  /* code: keywords */
	SR_TYPE,     /* code: types */
	SR_STRING,   /* code: strings and characters */
	SR_COMMENT,  /* code: comments */
	SR_NUMBER,   /* code: numbers and constants */
	SR_FUNCTION, /* code: function names */
	SR_PREPROC,  /* code: preprocessor */
	SR_CUDA,     /* code: CUDA qualifiers and launches */
	SR_ADDED,    /* diff: added lines */
	SR_REMOVED,  /* diff: removed lines */
	SR_HUNK,     /* diff: hunk headers */
	SR_CHART,    /* the speedup chart */
	SR_MATCH,    /* a text view: what `/` searched for */
	SR_NROLES
};

/*
 * Take over the terminal: curses in cbreak mode without echo, keypad and
 * mouse, stdin non-blocking for the loop, colours unless bNoColor, and the
 * signal handlers.  Returns 0, or -1 + err when the terminal cannot be
 * used (not a terminal, unknown TERM, smaller than 80x24 is allowed but
 * drawn clipped).
 */
int screen_init(int bNoColor, char *err);
/* give the terminal back as it was (idempotent) */
void screen_end(void);
/* leave curses for a child that uses the terminal ($EDITOR), and come back */
void screen_suspend(void);
void screen_resume(void);

/* the read end of the pipe the signal handlers write to: register it in the
 * loop so that a signal wakes poll(); screen_drain() empties it */
int screen_wakeup_fd(void);
void screen_drain(void);
/* make screen_wakeup_fd() readable: safe from another thread or a signal handler */
void screen_wake(void);
/* 1 (once) if the terminal was resized since the last call; then the
 * curses screen has the new size */
int screen_take_resize(void);
/* 1 (once) if SIGINT or SIGHUP arrived since the last call */
int screen_take_interrupt(void);

/* the curses attributes for a role */
int screen_attr(enum screen_role r);
/* the role of a highlight capture name ("keyword", "function.kernel") */
enum screen_role screen_role_of_capture(const char *zCapture);

/*
 * Lay the panes out on a w x h screen (row 0 is the title bar, row h-1
 * the command line): out[UI_NRECTS].  Population gets the width its
 * columns need and Code the rest; when that leaves Code narrower than
 * SCREEN_CODE_MIN the panes stack, Code across the whole width (the chart
 * is left out below 96 columns).  With zoom >= 0 that pane takes the
 * whole body and the others get 0 x 0.  Pure, for the tests.
 */
void screen_layout(int w, int h, int zoom, struct ui_rect *out);
/* the narrowest Code pane beside Population; below it the panes stack */
#define SCREEN_CODE_MIN 60
/* the Population pane's width on a w-column screen: what its columns need,
 * plus room for the idea column when the screen can spare it */
int screen_population_width(int w);

/*
 * Draw s (UTF-8; control characters shown as '?') at y, x, clipped to w
 * columns, in attribute attr.  Returns the columns used.
 */
int screen_put(int y, int x, int w, const char *s, int attr);
/* the same for n bytes of s */
int screen_putn(int y, int x, int w, const char *s, size_t n, int attr);
/* fill w columns at y, x with blanks in attr */
void screen_fill(int y, int x, int w, int attr);
/* a frame around r with the title in it (focused: highlighted) */
void screen_frame(const struct ui_rect *r, const char *zTitle, int focused);
/* display columns of the UTF-8 string s (at most n bytes) */
int screen_width(const char *s, size_t n);
/*
 * Join the n fields az (NULL or "" are skipped) with " | " into out, leaving
 * out the fields of the largest priority number first (aPrio: 0 is kept
 * always) until the line fits in cols columns: a narrow screen drops what
 * matters least, never cuts what matters most.  Returns the largest
 * priority kept.  Pure, for the tests.
 */
int screen_fit_fields(const char *const *az, const int *aPrio, int n, int cols, char *out,
                      size_t size);
/* 1 if the terminal's locale is UTF-8 (block characters for the chart) */
int screen_utf8(void);

#endif
