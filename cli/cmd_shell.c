/*
 * cmd_shell.c - `kloop shell [TASK]`: the line REPL (tui/repl.c) on a new
 * session of the task, or on --session FILE.
 */
#include "cmd.h"
#include "opts.h"
#include "repl.h"

static int exec_shell(int argc, char **argv)
{
	struct opts o;
	int rc = opts_parse(&cmd_shell_entry, argc, argv, 0, 0, 1, &o);
	if (rc)
		return rc;
	o.lo.zTask = o.nPos ? o.azPos[0] : NULL;
	rc = repl_run(&o.cfg, &o.lo, 0);
	opts_free(&o);
	return rc;
}

const struct cmd_entry cmd_shell_entry = {
    .name = "shell",
    .usage = "[TASK] [--session FILE] [--backend host|cuda] [--budget SECONDS] [...as kloop open]",
    .help = "the workbench's commands at a line prompt (or from a pipe, one per line)",
    .exec = exec_shell,
};
