/*
 * cmd.h - kloop's subcommands, one file each (cli/cmd_<name>.c), each
 * exporting one cmd_entry made with designated initialisers.  A verb that
 * the workbench has too (archive, export, ideas, implement, profile,
 * search: an entry of the same name in tui/command_table.c) is that one
 * command: its help line is the workbench entry's.  What they share (usage
 * errors, the help line) is in cli/cmd.c; the table of them in cli/main.c.
 */
#ifndef KL_CMD_H
#define KL_CMD_H

#include <stddef.h>
#include <stdio.h>

struct cmd_entry {
	const char *name;  /* the word after `kloop` */
	const char *usage; /* arguments, for `kloop help` and usage errors */
	/* one line saying what it does; for a verb the workbench has too, only
	 * what the command line adds to the workbench entry's help line (its
	 * exit statuses), or NULL */
	const char *help;
	/* run it; argv[0] is the command name.  Returns the exit status. */
	int (*exec)(int argc, char **argv);
	/* `kloop NAME --help` after the usage and help, or NULL: its flags, one a line */
	void (*more_help)(FILE *f);
};

/* print "usage: kloop NAME USAGE" to stderr; returns 2 (the usage exit status) */
int cmd_usage(const struct cmd_entry *e);
/* a subcommand of e (one of azSub, n of them) that is not one, or given the
 * wrong arguments: says which, with the nearest subcommand to a typo, then
 * e's usage; returns 2 */
int cmd_sub_usage(const struct cmd_entry *e, const char *zSub, const char *const *azSub, size_t n);

/* what e does, in one line (a fresh string): the workbench entry's help
 * line for a verb the workbench has too, then e's own */
char *cmd_help(const struct cmd_entry *e);

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
extern const struct cmd_entry cmd_import_entry;
extern const struct cmd_entry cmd_warm_entry;

#endif
