/*
 * opts.h - the flags the session commands share (`kloop [TASK]`, `kloop
 * shell`, `kloop replay`): the configuration keys that flags override, the
 * session file, the shape set and the reference, and positional arguments.
 */
#ifndef KL_OPTS_H
#define KL_OPTS_H

#include "cmd.h"
#include "config.h"
#include "live.h"

#define OPTS_MAX_POS 256

struct opts {
	struct config cfg;               /* the configuration, flags applied */
	struct live_opts lo;             /* session, shapes, reference (pointers into argv) */
	const char *azPos[OPTS_MAX_POS]; /* positional arguments */
	int nPos;
	int at; /* --at K (replay), or -1 */
	int json; /* --json was given (commands that print JSON) */
};

/*
 * Load the configuration, then apply argv[1..argc) for command e:
 * --backend, --session, --shapes, --reference, --trials, --budget,
 * --timeout, --python, --jobs, --worker, --provider, --model, --base-url,
 * and --at when bAt, --json when bJson (OPTS_AT, OPTS_JSON in flags); between nMin
 * and nMax positional arguments.  Returns 0, or the exit status (2) after
 * printing what was wrong (o is freed then).
 */
#define OPTS_AT 1
#define OPTS_JSON 2
int opts_parse(const struct cmd_entry *e, int argc, char **argv, int flags, int nMin, int nMax,
               struct opts *o);
void opts_free(struct opts *o);

#endif
