/*
 * cmd.c - what kloop's subcommands share (cli/cmd.h): their usage errors
 * and their help line, the workbench entry's for a verb it has too.
 */
#include "cmd.h"

#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "suggest.h"
#include "util.h"

int cmd_usage(const struct cmd_entry *e)
{
	fprintf(stderr, "usage: kloop %s %s\n", e->name, e->usage);
	return 2;
}

int cmd_sub_usage(const struct cmd_entry *e, const char *zSub, const char *const *azSub, size_t n)
{
	int known = 0;
	for (size_t i = 0; i < n; i++)
		known |= !strcmp(zSub, azSub[i]);
	const char *near = known ? NULL : suggest_nearest(zSub, azSub, n);
	if (!*zSub)
		fprintf(stderr, "kloop: %s: which one? a subcommand is expected\n", e->name);
	else if (known)
		fprintf(stderr, "kloop: %s %s: wrong arguments\n", e->name, zSub);
	else if (near)
		fprintf(stderr, "kloop: %s: unknown subcommand '%s': did you mean '%s'?\n", e->name,
		        zSub, near);
	else
		fprintf(stderr, "kloop: %s: unknown subcommand '%s'\n", e->name, zSub);
	return cmd_usage(e);
}

char *cmd_help(const struct cmd_entry *e)
{
	const struct commands_def *d = commands_find(e->name);
	if (!d)
		return xstrdup(e->help);
	return e->help ? xasprintf("%s; %s", d->help, e->help) : xstrdup(d->help);
}
