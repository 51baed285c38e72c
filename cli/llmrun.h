/*
 * llmrun.h - what `kloop ideas` and `kloop implement` share: their flags
 * (flags.h), a driver (sessions/driver/driver.h) on the task with a journal or in
 * memory, the parent candidate(s), progress and log lines on stderr, the
 * run until the driver is idle, and the LLM usage of the run.
 */
#ifndef KL_LLMRUN_H
#define KL_LLMRUN_H

#include "cmd.h"
#include "flags.h"
#include "loop.h"
#include "driver.h"

struct llmrun {
	const struct cmd_entry *self; /* the command, for usage errors */
	unsigned cmd;                 /* its FL_ bit */
	struct flags f;               /* the flags and the configuration */
	struct loop *l;
	struct driver *drv;
	struct state_llm before; /* the session's LLM totals before this run */
	int parent;              /* the parent's candidate id */
	int parent2;             /* --with's candidate id, or 0 */
	int tty;                 /* stderr is a terminal: show streaming progress */
	long streamed;           /* characters streamed (progress) */
	const char *zDoing;      /* what the progress line says is going on */
	/* the command's own handler of the driver's notes (ideas, candidates,
	 * branches), called after llmrun's (progress, verdicts, log lines) */
	driver_notify_fn on;
	void *arg;
};

/*
 * Parse argv for r->self (r->cmd, r->zDoing, r->on and r->arg set by the
 * caller), check that an LLM provider is configured, open the driver (the
 * --session journal, or memory) and add the parent(s): --from / --with, or
 * the task's first seed.  Returns 0, or 2 after saying what was wrong on
 * stderr.
 */
int llmrun_start(struct llmrun *r, int argc, char **argv);

/* print "PROVIDER MODEL: N requests, N input and N output tokens[, $C]" */
void llmrun_print_usage(const struct llmrun *r);

/* run the loop until the driver is idle */
void llmrun_wait(struct llmrun *r);

/* a line on stderr ("kloop: ..."), clearing the progress line first */
void llmrun_log(struct llmrun *r, const char *zLine);

/* this run's LLM traffic as JSON {"provider", "model", "requests",
 * "failed", "input_tokens", "output_tokens", "cost" (null when no price is
 * configured)} (caller frees) */
cJSON *llmrun_usage(const struct llmrun *r);

/* free all; -1 when events were lost (said on stderr: the exit status is 2) */
int llmrun_free(struct llmrun *r);

#endif
