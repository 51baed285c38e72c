/*
 * pipeline.h - the idea -> code loop, on one event loop: ask an LLM for
 * ideas about a parent candidate (evaluated first, so that the prompt
 * carries its results), record them for a person or the automatic mode to
 * accept, edit or reject, implement an accepted idea in B branches (or cross
 * two parents), turn each reply into a candidate (reply.h), have it
 * evaluated (by the driver, driver.h, which owns the workers), and send
 * failures back with the fix prompt.  Every request, reply, idea and
 * candidate goes through the session's journal (event.h).  The driver
 * makes the one pipeline of a session; every front end drives it there.
 */
#ifndef KL_PIPELINE_H
#define KL_PIPELINE_H

#include <cJSON.h>
#include <stddef.h>

#include "llm.h"
#include "loop.h"
#include "session.h"
#include "task.h"

/* what the pipeline tells its front end (every hook may be NULL); all are
 * called from the loop */
struct pipeline_hooks {
	/* an ideas request ended: the ids of the ideas it proposed (in the
	 * session's state), or zError when none came */
	void (*ideas)(int request, const int *aIdea, int nIdea, const char *zError, void *arg);
	/* candidate id was added to the session by branch `branch` of an
	 * implementation, after `attempt` fixes (it is being evaluated) */
	void (*candidate)(int candId, int branch, int attempt, void *arg);
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
	struct session *ses;     /* where everything is journaled (session_memory() for none) */
	struct llm *llm;         /* the LLM client (not owned) */
	const struct task *task; /* the task, or NULL for a KernelBench problem file */
	const char *zProblem;    /* that file, when task is NULL */
	const char *zTaskName;   /* the task's name (for results) */
	const char *zBackend;    /* "host" or "cuda" */
	int fixAttempts;         /* fix prompts per branch (0: none) */
	int evaluateParents;     /* evaluate a parent with no result before prompting */
	/* how the prompts describe a problem file's tensors (read by pipeline_new
	 * only): the Python with torch, --shapes and --size (NULL, 0: defaults) */
	const char *zPython;
	const char *zShapes;
	double size;
	/* how candidates are evaluated (required): journal eval_started in ses
	 * now, and later, from the loop, eval_finished, then call
	 * pipeline_update().  0 or -1 + err */
	int (*evaluate)(int candId, void *arg, char *err);
	const struct pipeline_hooks *hooks;
	void *arg; /* passed to the hooks */
};

struct pipeline;

/* a pipeline; NULL + err when the system prompt template cannot be read or
 * pc has no evaluate function */
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

/* evaluate candidate candId through pc.evaluate; 0 or -1 + err */
int pipeline_evaluate(struct pipeline *p, int candId, char *err);

/*
 * Ask for n ideas to improve candidate parent; the ideas hook reports.
 * round: the search round (> 0) the work is for (0: none; it then belongs
 * to the latest open round, if any): the steps' llm_request,
 * idea_proposed and candidate_added events carry it as "round", their
 * fixes' too, so that work of overlapping rounds is told apart in the
 * journal.  Returns 0, or -1 + err (no such candidate, a template that
 * fails).
 */
int pipeline_ideas(struct pipeline *p, int parent, int n, int round, char *err);

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
 * round as for pipeline_ideas().  Returns 0, or -1 + err (no such idea or
 * candidate, a rejected idea).
 */
int pipeline_implement(struct pipeline *p, int ideaId, int parent, int parent2, int nBranches,
                       int round, char *err);

/*
 * Go on with implementation branch b of a session reopened after it was cut
 * short (kill -9): its last request unanswered, or its last candidate
 * failed with fixes left (its fix was never sent).  The implementation is
 * asked for again, or the fix is sent (after the verdict when the
 * evaluation is still to run), for round (as for pipeline_ideas()).  1 when
 * a step started, 0 when the branch has ended or is at work in this
 * process, -1 + err when it cannot go on.
 */
int pipeline_branch_resume(struct pipeline *p, const struct state_branch *b, int nBranches,
                           int round, char *err);

/*
 * Translate the task's reference (a KernelBench problem's PyTorch module,
 * or the reference kernel) into n candidates with the translate prompt,
 * each a branch with no parent: a reply becomes a candidate of origin
 * "translation" that is evaluated and, on failure, sent back with the fix
 * prompt like any branch.  0, or -1 + err for n outside 1..64.
 */
int pipeline_translate(struct pipeline *p, int n, char *err);

/* the session changed outside the pipeline (an evaluation that
 * pc.evaluate started has ended): move on what waited for it */
void pipeline_update(struct pipeline *p);

/* steps not finished (ideas requests, branches waiting on the LLM or on an
 * evaluation); 0 when idle.  This and the other questions about work in
 * flight below (pipeline_round_busy, _usd, _requests, _cancel) take p NULL
 * as a pipeline not made yet: nothing in flight (driver_pipeline()) */
int pipeline_busy(const struct pipeline *p);

/* steps of round `round` not finished; *pUnsent (may be NULL): those of them
 * whose LLM requests have not all gone out yet (an ideas step, whose
 * implementations follow its reply, or a step waiting for its parents) */
int pipeline_round_busy(const struct pipeline *p, int round, int *pUnsent);

/*
 * A limit on the work (a search's budgets, which in-flight work would
 * otherwise overrun): fn is asked before every LLM request goes out
 * (bCandidate 0: an ideas, implementation, fix, crossover or translation
 * request; usd: what it may cost plus what the requests in flight may,
 * llm_cost_estimate(), 0 with unknown prices) and before a reply becomes a
 * candidate (1, usd 0); it returns NULL, or why not (static), and then the
 * step ends with that reason.  fn NULL: no limit.
 */
typedef const char *(*pipeline_limit_fn)(void *arg, int bCandidate, double usd);
void pipeline_limit(struct pipeline *p, pipeline_limit_fn fn, void *arg);

/* USD the pipeline's requests in flight may still cost (their estimates),
 * and the estimate of the latest request it asked (0: none yet, or the
 * prices are unknown); pHeld, pNext may be NULL */
void pipeline_usd(const struct pipeline *p, double *pHeld, double *pNext);

/* on: a reply whose code is the source of a candidate the session has
 * already makes no new candidate (it is not evaluated or timed again; the
 * branch ends, said through the log hook) */
void pipeline_no_repeats(struct pipeline *p, int on);

/* an LLM request of the pipeline that has not ended */
struct pipeline_request {
	int request;          /* the session's request id (0: waiting for its parents) */
	const char *zPurpose; /* ideas, implement, fix, crossover (static) */
	int idea, branch;     /* for an implementation: the idea and the branch */
	int parent;           /* the candidate it is about */
	double tAsked;        /* monotonic time it was sent (0: not yet) */
};

/* the requests not ended, oldest first, into a (at most max); returns how many */
int pipeline_requests(const struct pipeline *p, struct pipeline_request *a, int max);

/* cancel LLM request `request` (session id): its llm_response is journaled
 * as "cancelled" and its branch or ideas step ends.  0, or -1 + err when no
 * such request is in flight */
int pipeline_cancel(struct pipeline *p, int request, char *err);

#endif
