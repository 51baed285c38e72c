/*
 * cmd.h - kloop's subcommands, one file each (cli/cmd_<name>.c), each
 * exporting one cmd_entry made with designated initialisers.
 */
#ifndef KL_CMD_H
#define KL_CMD_H

#include <stddef.h>

struct cmd_entry {
	const char *name;  /* the word after `kloop` */
	const char *usage; /* arguments, for `kloop help` and usage errors */
	const char *help;  /* one line saying what it does */
	/* run it; argv[0] is the command name.  Returns the exit status. */
	int (*exec)(int argc, char **argv);
};

/* print "usage: kloop NAME USAGE" to stderr; returns 2 (the usage exit status) */
int cmd_usage(const struct cmd_entry *e);
/* a subcommand of e (one of azSub, n of them) that is not one, or given the
 * wrong arguments: says which, with the nearest subcommand to a typo, then
 * e's usage; returns 2 */
int cmd_sub_usage(const struct cmd_entry *e, const char *zSub, const char *const *azSub, size_t n);

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
