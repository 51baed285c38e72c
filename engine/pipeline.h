/*
 * pipeline.h - the idea -> code loop, on one event loop: ask an LLM for
 * ideas about a parent candidate (evaluated first, so that the prompt
 * carries its results), record them for a person or the automatic mode to
 * accept, edit or reject, implement an accepted idea in B branches (or cross
 * two parents), turn each reply into a candidate (reply.h), evaluate it
 * through a worker, and send failures back with the fix prompt.  Every
 * request, reply, idea, candidate and verdict goes through the session's
 * journal.  The headless commands and the TUI drive the same pipeline.
 */
#ifndef KL_PIPELINE_H
#define KL_PIPELINE_H

#include <cJSON.h>
#include <stddef.h>

#include "llm.h"
#include "loop.h"
#include "session.h"
#include "task.h"
#include "worker.h"

/* what the pipeline tells its front end (every hook may be NULL); all are
 * called from the loop */
struct pipeline_hooks {
	/* an ideas request ended: the ids of the ideas it proposed (in the
	 * session's state), or zError when none came */
	void (*ideas)(int request, const int *aIdea, int nIdea, const char *zError, void *arg);
	/* candidate id was added to the session by branch `branch` of an
	 * implementation, after `attempt` fixes (it is being evaluated) */
	void (*candidate)(int candId, int branch, int attempt, void *arg);
	/* candidate id was evaluated: its result (completed with speedup) */
	void (*verdict)(int candId, const cJSON *result, void *arg);
	/* a branch of an implementation ended: its last candidate (0: none) and,
	 * when its last step failed, why (the LLM failed, the last reply had no
	 * usable code) */
	void (*branch)(int ideaId, int branch, int candId, const char *zError, void *arg);
	/* text streaming in for session request `request` */
	void (*delta)(int request, const char *z, size_t n, void *arg);
	/* a line for people: retries, replies without code, fixes sent */
	void (*log)(const char *zLine, void *arg);
};

struct pipeline_config {
	struct loop *l;
	struct session *ses; /* where everything is journaled (session_memory() for none) */
	struct llm *llm;     /* the LLM client (not owned) */
	const struct worker_config *wc; /* the worker's settings (its strings must outlive
	                                 * the pipeline); unused with evaluate */
	const struct task *task;        /* the task, or NULL for a KernelBench problem file */
	const char *zProblem;           /* that file, when task is NULL */
	const char *zTaskName;          /* the task's name (for results) */
	const char *zBackend;           /* "host" or "cuda" */
	int fixAttempts;                /* fix prompts per branch (0: none) */
	int evaluateParents;            /* evaluate a parent with no result before prompting */
	/* how candidates are evaluated: NULL, through the pipeline's own worker
	 * (made from wc); else this function, which must journal eval_started /
	 * eval_finished in ses and then call pipeline_update().  0 or -1 + err */
	int (*evaluate)(int candId, void *arg, char *err);
	const struct pipeline_hooks *hooks;
	void *arg; /* passed to the hooks */
};

struct pipeline;

/* a pipeline (the worker starts on the first evaluation); NULL + err when
 * the system prompt template cannot be read */
struct pipeline *pipeline_new(const struct pipeline_config *pc, char *err);
/* drop what is running (no hooks called) and free; not from a hook */
void pipeline_free(struct pipeline *p);

/*
 * The candidate for zSource: one of the session's with the same source, or
 * a new one (candidate_added with zName and zOrigin: seed, human, ...).
 * Returns its id, or -1 + err when the event cannot be journaled.
 */
int pipeline_add_source(struct pipeline *p, const char *zName, const char *zSource,
                        const char *zOrigin, char *err);

/* evaluate candidate candId (eval_started now, eval_finished and the verdict
 * hook when the worker answers); 0 or -1 + err */
int pipeline_evaluate(struct pipeline *p, int candId, char *err);

/* ask for n ideas to improve candidate parent; the ideas hook reports.
 * Returns 0, or -1 + err (no such candidate, a template that fails) */
int pipeline_ideas(struct pipeline *p, int parent, int n, char *err);

/*
 * The idea decisions of a person (or the automatic mode), journaled:
 * pipeline_idea_new() proposes an idea of origin "human" (the title is the
 * text's first line, cut to 80 characters; the category is guessed) and
 * returns its id; the others return 0.  All return -1 + err for an idea
 * that does not exist or an event the journal refuses.
 */
int pipeline_idea_new(struct pipeline *p, const char *zText, int parent, char *err);
int pipeline_idea_accept(struct pipeline *p, int ideaId, char *err);
int pipeline_idea_reject(struct pipeline *p, int ideaId, const char *zReason, char *err);
/* zTitle, zDescription, zCategory: NULL leaves that field as it is */
int pipeline_idea_edit(struct pipeline *p, int ideaId, const char *zTitle, const char *zDescription,
                       const char *zCategory, char *err);

/*
 * Implement idea ideaId (accepted first if it is pending) in nBranches
 * branches, each an LLM request on the parent (parent2 > 0: a crossover of
 * the two, with the crossover prompt).  Each reply becomes a candidate
 * (origin "llm", the idea's id and title) that is evaluated; a reply with
 * no usable code, or a candidate that does not compile, is wrong, crashes
 * or hangs, is sent back with the fix prompt up to fixAttempts times.
 * Returns 0, or -1 + err (no such idea or candidate, a rejected idea).
 */
int pipeline_implement(struct pipeline *p, int ideaId, int parent, int parent2, int nBranches,
                       char *err);

/* the session changed outside the pipeline (an evaluation that
 * pc.evaluate started has ended): move on what waited for it */
void pipeline_update(struct pipeline *p);

/* work not finished (LLM requests, evaluations, branches); 0 when idle */
int pipeline_busy(const struct pipeline *p);

/* the worker (NULL before the first evaluation) */
struct worker *pipeline_worker(const struct pipeline *p);

#endif
