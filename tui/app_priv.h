/*
 * app_priv.h - what the TUI's files share (private to tui/app*.c): the
 * app's state, and the calls one part makes into another: app.c the
 * loop and the hooks; app_cmd.c the commands and the message line, which
 * the others call; app_keys.c the keys; app_find.c the text views' keys;
 * app_draw.c the screen.
 */
#ifndef KL_APP_PRIV_H
#define KL_APP_PRIV_H

#include <stdio.h>
#include <wchar.h>

#include "actions.h"
#include "app.h"
#include "cmdline.h"
#include "loop.h"
#include "ui.h"

#define FRAME_S (1.0 / 30)

struct app {
	struct ui u;            /* what the panes share */
	struct loop *l;         /* the one event loop */
	struct app_opts o;      /* how we were started */
	struct cmdline cl;      /* the `:` and `/` line */
	struct actions_front f; /* how commands reach us */
	char zMsg[1024];        /* the app_message line, or "" */
	int msgErr;             /* it is an error */
	int askQuit;            /* waiting for y/n to quit with jobs running */
	int searchWas;          /* the search's state at the last look (its end is logged) */
	char zAsk[64];          /* waiting for y/n to run this command (or "") */
	int workBusy;           /* jobs ran at the last look */
	int workFrom;           /* the first candidate id of the work running */
	int workEvals;          /* evaluations finished when it started */
	char zWork[1024];       /* the app_message of the command that started it */
	int askNext;            /* ... and then select this idea (0: none) */
	int quit;               /* leave the loop */
	int dirty;              /* something changed: redraw soon */
	int keyDirty;           /* a key arrived: redraw now */
	int editing;            /* $EDITOR has the terminal: do not app_draw */
	int editBefore;         /* the candidates there were when the command that
	                         * waits for the editor started */
	double lastDraw;        /* monotonic time of the last frame */
	double keyAt;           /* when the first key of this batch was read (0: none) */
	FILE *stats;            /* KLOOP_TUI_STATS: frame times for the benchmark */
};

/* app_cmd.c: the message line; a command line run, or one made from a key;
 * asking to quit (with jobs running or a search at the human gate, the
 * question first) */
void app_message(struct app *a, int bError, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void app_run_line(struct app *a, const char *zLine);
void app_run_fmt(struct app *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void app_request_quit(struct app *a, int bForce);
/* ideas waiting for a person at the human gate, with nothing else running */
int app_gate_waiting(const struct app *a);
/* when the last job of the work a command started ends, say what it came
 * to (in Activity and on the message line) */
void app_work_check(struct app *a);
/* a search that ended since the last look is said in Activity, with why */
void app_search_check(struct app *a);
/* a command has come to its end, at once or when the editor it waited for
 * ended (app.c's on_edited; before: the candidates there were when it
 * started): its work is the work under way, a candidate made by hand is
 * selected */
void app_line_done(struct app *a, int before);

/* app_keys.c: a key or a mouse event from the terminal; the wake-up of the
 * highlighter's thread and of a finished query */
void app_on_stdin(struct loop *l, int fd, int events, void *arg);
void app_on_wake(struct loop *l, int fd, int events, void *arg);
void app_on_query_ready(void *arg);

/* app_find.c: `/`, n, N and w where a text view has the keys (1: used),
 * and the line typed after that `/` */
int app_find_key(struct app *a, int key);
void app_find_line(struct app *a, const char *zLine);

/* app_draw.c: the whole screen */
void app_draw(struct app *a);

#endif
