/*
 * cmd_open.c - `kloop [TASK]` (also `kloop open [TASK]`): the full-screen
 * TUI on a new session of the task, or, when stdout is not a terminal,
 * the seeds evaluated and the population printed.
 */
#include <stdio.h>
#include <unistd.h>

#include "app.h"
#include "cmd.h"
#include "opts.h"
#include "repl.h"

static int exec_open(int argc, char **argv)
{
	struct opts o;
	int rc = opts_parse(&cmd_open_entry, argc, argv, 0, 0, 1, &o);
	if (rc)
		return rc;
	o.lo.zTask = o.nPos ? o.azPos[0] : NULL;
	if (isatty(STDIN_FILENO) && isatty(STDOUT_FILENO)) {
		struct app_opts ao = {.cfg = &o.cfg, .lo = o.lo, .at = -1};
		rc = app_run(&ao);
	} else {
		rc = repl_run(&o.cfg, &o.lo, 1);
	}
	opts_free(&o);
	return rc;
}

const struct cmd_entry cmd_open_entry = {
    .name = "open",
    .usage = "[TASK] [--session FILE] [--backend host|cuda] [--shapes SET] [--reference "
             "host|cuda|torch] "
             "[--trials N] [--budget SECONDS] [--timeout SECONDS] [--jobs N]",
    .help =
        "the full-screen workbench on a session of TASK (the default when no command is given); "
        "without a terminal, evaluate the seeds and print the population",
    .exec = exec_open,
};
