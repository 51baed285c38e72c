/*
 * cmd.h - kloop's subcommands, one file each (cli/cmd_<name>.c), each
 * exporting one cmd_entry made with designated initialisers.
 */
#ifndef KL_CMD_H
#define KL_CMD_H

#include <stdio.h>

struct cmd_entry {
	const char *name;  /* the word after `kloop` */
	const char *usage; /* arguments, for `kloop help` and usage errors */
	const char *help;  /* one line saying what it does */
	/* run it; argv[0] is the command name.  Returns the exit status. */
	int (*exec)(int argc, char **argv);
	/* `kloop NAME --help` after the usage and help, or NULL: its flags, one a line */
	void (*more_help)(FILE *f);
};

/* print "usage: kloop NAME USAGE" to stderr; returns 2 (the usage exit status) */
int cmd_usage(const struct cmd_entry *e);

extern const struct cmd_entry cmd_eval_entry;
extern const struct cmd_entry cmd_ideas_entry;
extern const struct cmd_entry cmd_implement_entry;
extern const struct cmd_entry cmd_tasks_entry;
extern const struct cmd_entry cmd_session_entry;
extern const struct cmd_entry cmd_doctor_entry;
extern const struct cmd_entry cmd_outline_entry;
extern const struct cmd_entry cmd_open_entry;
extern const struct cmd_entry cmd_shell_entry;
extern const struct cmd_entry cmd_replay_entry;
extern const struct cmd_entry cmd_archive_entry;
extern const struct cmd_entry cmd_report_entry;
extern const struct cmd_entry cmd_export_entry;
extern const struct cmd_entry cmd_profile_entry;
extern const struct cmd_entry cmd_search_entry;
extern const struct cmd_entry cmd_translate_entry;

#endif
