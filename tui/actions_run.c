/*
 * actions_run.c - running a command line for a front end (the TUI or the
 * REPL): parse it, call its entry's handler (tui/verbs.h); and the words
 * completion offers.  The front ends call it; the handlers it calls do not
 * call back.
 */
#include "actions.h"

#include <stdlib.h>

int actions_run(struct actions_front *f, const struct commands_line *c)
{
	return c->def->run(f, c);
}

int actions_run_line(struct actions_front *f, const char *zLine)
{
	struct commands_line c;
	char err[KL_ERRLEN];
	int rc = commands_parse(zLine, &c, err);
	if (rc < 0)
		return actions_fail(f, "%s", err);
	if (rc == 0)
		return 1;
	rc = actions_run(f, &c);
	commands_line_free(&c);
	return rc;
}

const char *const *actions_words(enum commands_arg kind, void *arg)
{
	struct actions_front *f = arg;
	static char **ids;
	static size_t nAlloc;
	if (kind == ARG_COLUMN)
		return popview_columns;
	if (kind == ARG_COMMAND) {
		static const char *names[64];
		int n = 0;
		for (const struct commands_def *d = commands_table; d->name && n < 63; d++)
			names[n++] = d->name;
		names[n] = NULL;
		return names;
	}
	if (kind != ARG_CAND)
		return NULL;
	const struct state *st = actions_state(f);
	for (size_t i = 0; ids && ids[i]; i++)
		free(ids[i]);
	int n = st ? st->nCand : 0;
	xgrow((void **)&ids, &nAlloc, (size_t)n + 1, sizeof *ids);
	for (int i = 0; i < n; i++)
		ids[i] = xasprintf("%d", st->aCand[i].id);
	ids[n] = NULL;
	return (const char *const *)ids;
}
