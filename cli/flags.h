/*
 * flags.h - one table of every flag a kloop command takes: each declared
 * once with its type (a switch, a string, one of some words, a whole
 * number or a number, with its range), the commands that take it, and
 * where its value goes (a configuration key, or a member of struct flags).
 * Numbers are checked before anything runs: NaN, infinities, negative,
 * fractional where a count is meant, out-of-range and overflowing values
 * are refused with a message naming the flag and the value (exit 2).
 */
#ifndef KL_FLAGS_H
#define KL_FLAGS_H

#include <cJSON.h>

#include "cmd.h"
#include "config.h"

#define FLAGS_MAX_POS 256

/* the commands, for the table's masks */
#define FL_OPEN (1u << 0)      /* kloop [TASK], open, shell */
#define FL_REPLAY (1u << 1)    /* replay */
#define FL_EVAL (1u << 2)      /* eval */
#define FL_IDEAS (1u << 3)     /* ideas */
#define FL_IMPLEMENT (1u << 4) /* implement */
#define FL_SESSION (1u << 5)   /* session (no configuration read) */
#define FL_TASKS (1u << 6)     /* tasks (likewise) */
#define FL_SEARCH (1u << 7)    /* search */
#define FL_TRANSLATE (1u << 8) /* translate */

struct flags {
	struct config cfg;                /* the configuration, flags applied */
	const char *azPos[FLAGS_MAX_POS]; /* positional arguments (pointers into argv) */
	int nPos;
	const char *zSession;   /* --session FILE */
	const char *zShapes;    /* --shapes SET */
	const char *zReference; /* --reference host|cuda|torch */
	const char *zFrom;      /* --from SOURCE */
	const char *zWith;      /* --with SOURCE */
	const char *zIdea;      /* --idea TEXT */
	const char *zSize;      /* --size F of tasks PROBLEM.py (checked, kept as written) */
	int at;                 /* --at K (-1: not given) */
	int json;               /* --json */
	int noEval;             /* --no-eval */
	int n;                  /* -n N (5) */
	int b;                  /* -b B (2) */
	cJSON *settings;        /* search, translate: the search settings the flags gave
	                         * (search.h), checked; NULL when none (freed by flags_free) */
	int sweepOnly;          /* --sweep-only */
	int noCrossover;        /* --no-crossover */
	int providerFlag;       /* --provider was given (--command implies provider command
	                         * only without it) */
};

/*
 * Load the configuration (not for session and tasks, which use none), then parse argv[1..argc) for
 * command e (cmd: its FL_ bit): the flags the table gives cmd, and between nMin and nMax positional
 * arguments.  Returns 0, or the exit status (2) after printing
 * what was wrong on stderr (f is freed then).
 */
int flags_parse(const struct cmd_entry *e, unsigned cmd, int argc, char **argv, int nMin, int nMax,
                struct flags *f);
void flags_free(struct flags *f);

/*
 * Read the number z for flag zFlag: a finite decimal in [lo, hi], whole
 * when bInt.  0 with *pOut, or -1 + err ("--budget: expected a number of
 * seconds from 0.01 to 86400, got 'nan'").
 */
int flags_number(const char *zFlag, const char *z, double lo, double hi, int bInt,
                 const char *zWhat, double *pOut, char *err);

#endif
