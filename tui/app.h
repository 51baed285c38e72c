/*
 * app.h - the full-screen TUI: `kloop [TASK]` on a live session and
 * `kloop replay SESSION` on a saved one.  One event loop (engine/loop.c)
 * serves the keyboard (stdin is one more fd), the worker pipes, the
 * signal flags and the timers; nothing in it blocks.
 */
#ifndef KL_APP_H
#define KL_APP_H

#include "config.h"
#include "driver.h"

struct app_opts {
	const struct config *cfg; /* configuration, flags applied */
	struct driver_opts lo;    /* the live session to open (or to continue into) */
	const char *zReplay;      /* a journal to replay instead, or NULL */
	int at;                   /* replay: start after this many events (-1: all) */
};

/*
 * Run the TUI until the user quits.  Returns the exit status: 0, or 2 when
 * the session or the terminal could not be opened (the reason printed to
 * stderr once the terminal is restored).
 */
int app_run(const struct app_opts *o);

#endif
