/*
 * flags.h - one table of every flag a kloop command takes: each declared
 * once with its type (a switch, a string, one of some words, a whole
 * number or a number, with its range), the commands that take it, and
 * where its value goes (a member of struct flags); the flags of the
 * configuration's keys and of the search settings are made from their own
 * tables (config.h's CONFIG_KEYS, search_settings.h's SEARCH_SETTINGS).
 * Numbers are checked before anything runs: NaN, infinities, negative,
 * fractional where a count is meant, out-of-range and overflowing values
 * are refused with a message naming the flag and the value (exit 2).
 */
#ifndef KL_FLAGS_H
#define KL_FLAGS_H

#include <stdio.h>

#include <cJSON.h>

#include "cmd.h"
#include "config.h"

#define FLAGS_MAX_POS 4096 /* archive add takes many sessions */

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
#define FL_DOCTOR (1u << 9)    /* doctor (reads the configuration itself, to report on it) */
#define FL_EXPORT (1u << 10)   /* export (no configuration) */
#define FL_PROFILE (1u << 11)  /* profile (no configuration; kloop eval's flags passed on) */
#define FL_OUTLINE (1u << 12)  /* outline (no configuration) */
#define FL_ARCHIVE (1u << 13)  /* archive (no configuration) */
#define FL_REPORT (1u << 14)   /* report (no configuration) */
#define FL_IMPORT (1u << 15)   /* import */

#define FLAGS_MAX_PASS 64

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
	int commandFlag;        /* --command was given */
	/* profile */
	const char *zParse;                 /* --parse CSV */
	const char *zNcu;                   /* --ncu PATH */
	const char *azPass[FLAGS_MAX_PASS]; /* kloop eval's flags given, checked, to pass on
	                                     * (flag, then its value if it takes one) */
	int nPass;
	/* export */
	const char *zKernelbench; /* --kernelbench OUT.py */
	const char *zProblem;     /* --problem PROBLEM.py (export, import) */
	const char *zCuda;        /* --cuda OUT.cu */
	const char *zSource;      /* --source OUT */
	/* report */
	const char *zOutput; /* -o, --output FILE */
	/* archive */
	const char *zDb;   /* --db FILE */
	const char *zTask; /* --task T (archive; import: the task the files are for) */
	const char *zGpu;  /* --gpu G */
	const char *zKind; /* --kind win|dead_end */
	int limit;         /* -n N (0: the archive's default) */
	/* doctor */
	const char *zWorkers;  /* --workers[=SPEC]: "" for the bare flag, NULL when not given */
	const char *zProvider; /* --provider P (doctor checks it itself) */
	const char *zModel;    /* --model M */
	const char *zBaseUrl;  /* --base-url URL */
	double timeoutS;       /* --timeout S (0: not given) */
	int peaks;             /* --peaks: measure the GPU's peaks again (peaks.h) */
};

/*
 * Load the configuration (only for the commands that run a session: open, replay, eval, import,
 * ideas, implement, search, translate), then parse argv[1..argc) for command e (cmd: its FL_ bit):
 * the flags the table gives cmd, and between nMin and nMax positional arguments.  Returns 0, or the
 * exit status (2) after printing what was wrong on stderr (f is freed then).
 */
int flags_parse(const struct cmd_entry *e, unsigned cmd, int argc, char **argv, int nMin, int nMax,
                struct flags *f);
void flags_free(struct flags *f);

/* `kloop CMD --help`'s flags of command cmd (FL_ bits) other than the
 * search settings (search_settings_help), grouped, one a line */
void flags_help(FILE *f, unsigned cmd);
/* the FL_ bit of the command named zCommand (0: none) */
unsigned flags_cmd_of(const char *zCommand);

/*
 * How long the worker of kloop eval or of the workbench (open, shell) waits,
 * warm, for the next of the same task on backend zBackend ("cuda", "host",
 * NULL: the GPU where there is one): --warm, the configuration's warm,
 * KLOOP_WARM_S, else 300 s on the GPU (where a worker's start, its device
 * contexts, the reference's runs and PyTorch's baselines are most of a lone
 * eval and of the workbench's first verdict) and none on the CPU; none
 * under a profiler (proc_profiler_injected: Nsight Compute waits for every
 * process it follows, and a warm worker would keep it waiting).
 */
double flags_warm_seconds(const struct flags *f, const char *zBackend);

/*
 * Read the number z for flag zFlag: a finite decimal in [lo, hi], whole
 * when bInt; zWhat names what it counts or is ("seconds", "size factor").
 * 0 with *pOut, or -1 + err ("--budget: expected a number (seconds) from
 * 0.01 to 86400, got 'nan'").
 */
int flags_number(const char *zFlag, const char *z, double lo, double hi, int bInt,
                 const char *zWhat, double *pOut, char *err);

#endif
