/*
 * repl.h - `kloop shell [TASK]`: the TUI's command language at a line
 * prompt, printing its answers as text.  On a terminal, libedit edits the
 * line (history shared with the TUI, completion of commands and ids) while
 * the event loop keeps running underneath it, so results are printed as
 * they come.  With stdin not a terminal, lines are read as they are and
 * each command's jobs are waited for before the next line is read, so a
 * piped script gives the same output every time.
 */
#ifndef KL_REPL_H
#define KL_REPL_H

#include "config.h"
#include "driver.h"

/*
 * Open the live session lo (its seeds are evaluated first) and run the
 * REPL until `quit` or the end of input.  bBatch: read no commands, wait
 * for the seeds and print the population (the fallback of `kloop [TASK]`
 * when stdout is not a terminal).  Returns the exit status: 0, 1 when a
 * command failed (batch: when a seed is not correct), 2 when the session
 * cannot be opened.
 */
int repl_run(const struct config *cfg, const struct driver_opts *lo, int bBatch);

#endif
