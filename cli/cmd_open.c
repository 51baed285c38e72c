/*
 * cmd_open.c - `kloop [TASK]` (also `kloop open [TASK]`): the full-screen
 * TUI on a new session of the task, or, when stdout is not a terminal,
 * the seeds evaluated and the population printed.
 */
#include <stdio.h>
#include <unistd.h>

#include "app.h"
#include "cmd.h"
#include "flags.h"
#include "repl.h"

static int exec_open(int argc, char **argv)
{
	struct flags o;
	int rc = flags_parse(&cmd_open_entry, FL_OPEN, argc, argv, 0, 1, &o);
	if (rc)
		return rc;
	struct driver_opts lo = {.zTask = o.nPos ? o.azPos[0] : NULL,
	                         .zSession = o.zSession,
	                         .zShapes = o.zShapes,
	                         .zReference = o.zReference,
	                         .bTorchWarning = 1,
	                         .warmS = flags_warm_seconds(&o, NULL)};
	if (isatty(STDIN_FILENO) && isatty(STDOUT_FILENO)) {
		struct app_opts ao = {.cfg = &o.cfg, .lo = lo, .at = -1};
		rc = app_run(&ao);
	} else {
		rc = repl_run(&o.cfg, &lo, 1);
	}
	flags_free(&o);
	return rc;
}

const struct cmd_entry cmd_open_entry = {
    .name = "open",
    .usage = "[TASK] [--session FILE] [--backend host|cuda] [--shapes SET] [--reference "
             "host|cuda|torch] "
             "[--trials N] [--budget SECONDS] [--timeout SECONDS] [--jobs N] [--workers SPEC] "
             "[--provider openai|anthropic|command] [--model NAME] [--base-url URL] "
             "[--command CMD]",
    .help =
        "the full-screen workbench on a session of TASK (the default when no command is given); "
        "without a terminal, evaluate the seeds and print the population",
    .exec = exec_open,
};
