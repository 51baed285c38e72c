/*
 * cmd_shell.c - `kloop shell [TASK]`: the line REPL (tui/repl.c) on a new
 * session of the task, or on --session FILE.
 */
#include "cmd.h"
#include "flags.h"
#include "repl.h"

static int exec_shell(int argc, char **argv)
{
	struct flags o;
	int rc = flags_parse(&cmd_shell_entry, FL_OPEN, argc, argv, 0, 1, &o);
	if (rc)
		return rc;
	struct driver_opts lo = {.zTask = o.nPos ? o.azPos[0] : NULL,
	                         .zSession = o.zSession,
	                         .zShapes = o.zShapes,
	                         .zReference = o.zReference,
	                         .bTorchWarning = 1,
	                         .warmS = flags_warm_seconds(&o, NULL)};
	rc = repl_run(&o.cfg, &lo, 0);
	flags_free(&o);
	return rc;
}

const struct cmd_entry cmd_shell_entry = {
    .name = "shell",
    .usage = "[TASK] [--session FILE] [--backend host|cuda] [--budget SECONDS] [...as kloop open]",
    .help = "the workbench's commands at a line prompt (or from a pipe, one per line)",
    .exec = exec_shell,
};
