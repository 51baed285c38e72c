/*
 * llmrun.h - what `kloop ideas` and `kloop implement` share: their flags
 * (the LLM provider's, the evaluation's, the session's), the task and the
 * parent candidate, the session (a journal, or none), the LLM client and
 * the pipeline on one event loop, and the run until the pipeline is idle.
 */
#ifndef KL_LLMRUN_H
#define KL_LLMRUN_H

#include "cmd.h"
#include "config.h"
#include "llm.h"
#include "loop.h"
#include "pipeline.h"
#include "session.h"
#include "task.h"
#include "worker.h"

struct llmrun {
	const struct cmd_entry *self; /* the command, for usage errors */
	struct config cfg;            /* the configuration, flags applied */
	const char *zTask;            /* TASK as given */
	const char *zFrom;            /* --from SOURCE, or NULL (the task's seed) */
	const char *zWith;            /* --with SOURCE (a second parent), or NULL */
	const char *zIdea;            /* --idea TEXT, or NULL */
	const char *zSession;         /* --session FILE, or NULL (no journal) */
	const char *zShapes;          /* --shapes SET */
	const char *zRef;             /* --reference host|cuda|torch */
	int json;                     /* --json */
	int n;                        /* -n N ideas (default 5) */
	int b;                        /* -b B branches (default 2) */
	int noEval;                   /* --no-eval: do not evaluate the parent first */
	const char *zBackend;         /* host or cuda */
	char *zTaskDir;               /* the task's directory, or the .py problem file */
	char *zTaskName;              /* its name */
	struct task *task;            /* NULL for a .py problem file */
	char **argvLaunch;            /* the worker launch command from the config, or NULL */
	struct worker_config wc;
	struct loop *l;
	struct session *ses;
	struct state_llm before; /* the session's LLM totals before this run */
	struct llm *llm;
	struct pipeline *p;
	int parent;         /* the parent's candidate id */
	int parent2;        /* --with's candidate id, or 0 */
	int tty;            /* stderr is a terminal: show streaming progress */
	long streamed;      /* bytes streamed (progress) */
	const char *zDoing; /* what the progress line says is going on */
};

/*
 * Parse argv (argv[0] is the command) for r->self: TASK, then --from,
 * --session, --json, -n (nIdeas allowed), -b, --idea and --with (implement
 * allowed), --no-eval, --provider, --model, --base-url, --backend,
 * --shapes, --reference, --trials, --budget, --timeout, --jobs, --worker,
 * --python, --llm-timeout, --fix.  Returns 0, or the exit status (2) after
 * saying what was wrong on stderr.
 */
int llmrun_args(struct llmrun *r, int argc, char **argv, int bIdeas);

/*
 * Load the task and the parent(s), open the session (checking that it is
 * the task's), make the loop, the LLM client and the pipeline with hooks.
 * Returns 0, or 2 after saying what was wrong on stderr.
 */
int llmrun_start(struct llmrun *r, const struct pipeline_hooks *hooks, void *arg);

/* fill h's delta, verdict and log hooks with llmrun's: progress and
 * verdicts on a terminal's stderr, log lines on stderr.  The hooks' arg
 * must point to the struct llmrun (or to a struct that begins with one);
 * zDoing names the progress ("writing code") */
void llmrun_hooks(struct llmrun *r, struct pipeline_hooks *h, const char *zDoing);

/* print "PROVIDER MODEL: N requests, N input and N output tokens[, $C]" */
void llmrun_print_usage(const struct llmrun *r);

/* run the loop until the pipeline is idle */
void llmrun_wait(struct llmrun *r);

/* a line on stderr for the pipeline's log hook ("kloop: ..."), clearing
 * the progress line first */
void llmrun_log(struct llmrun *r, const char *zLine);

/* this run's LLM traffic as JSON {"provider", "model", "requests",
 * "failed", "input_tokens", "output_tokens", "cost" (null when no price is
 * configured)} (caller frees) */
cJSON *llmrun_usage(const struct llmrun *r);

void llmrun_free(struct llmrun *r);

#endif
