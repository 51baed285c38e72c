/*
 * live.h - a live session: a session journal, the task it is about, and a
 * worker that evaluates its candidates, all on the caller's event loop.
 * The front ends (the TUI and the line REPL) change a session only through
 * this module; every change is an event through session_emit(), and they
 * read the folded state (lv->ses->st) to draw.
 */
#ifndef KL_LIVE_H
#define KL_LIVE_H

#include <stddef.h>

#include "config.h"
#include "loop.h"
#include "session.h"
#include "task.h"
#include "worker.h"

struct llm;
struct pipeline;

struct live_opts {
	const char *zTask;      /* task name, directory or KernelBench .py; NULL: the
	                         * session's own task, else the bundled default */
	const char *zSession;   /* journal path (NULL: a fresh live_default_path()) */
	const char *zShapes;    /* shape set, or NULL */
	const char *zReference; /* "host", "cuda", "torch" or NULL */
	int bNoSeeds;           /* do not add the task's seeds to a new session */
};

/* one evaluation in flight */
struct live_job {
	int cand;        /* the candidate's id */
	int job;         /* the worker's job id */
	char zStage[16]; /* queued, compiling, compiled, loading, checking, timing */
	int k;           /* the stage's counter (trial or run), or -1 */
	double tStart;   /* monotonic time it was submitted */
};

/* an LLM request whose reply is streaming in */
struct live_stream {
	int request;   /* the session's request id */
	long nChars;   /* characters received so far */
	double tStart; /* monotonic time of its first text */
	double tLast;  /* and of its last */
};

enum live_note {
	LIVE_CHANGED,  /* progress or a state change: redraw */
	LIVE_FINISHED, /* an evaluation ended; zText says how */
	LIVE_MESSAGE,  /* something the user should read (zText), e.g. a journal error */
	LIVE_IDEAS,    /* an ideas request ended: zText lists them (lines), or says why none */
	LIVE_LOG,      /* a line about the LLM work (a candidate made, a retry, a fix sent) */
};

/* how a live session tells its front end; cand is 0 where none applies */
typedef void (*live_notify_fn)(void *arg, enum live_note kind, int cand, const char *zText);

struct live {
	struct loop *l;           /* the caller's loop */
	struct session *ses;      /* the session (journal open for appending) */
	const struct config *cfg; /* the caller's configuration */
	struct worker *w;         /* the evaluating worker */
	char **argvLaunch;        /* worker launch command, or NULL */
	char *zTaskDir;           /* the task's directory (or .py file) */
	char *zTaskName;          /* its name */
	char *zBackend;           /* host or cuda */
	char *zShapes;            /* shape set, or NULL */
	char *zReference;         /* reference kind, or NULL */
	struct live_job *aJob;    /* evaluations in flight, in submission order */
	int nJob;
	size_t nJobAlloc;
	int submitting;              /* candidate being submitted (a synchronous result) */
	struct task *task;           /* the task (NULL for a KernelBench problem file) */
	struct llm *llm;             /* the LLM client, once an LLM command needed it */
	struct pipeline *p;          /* the idea -> code pipeline (engine/pipeline.h), likewise */
	struct live_stream *aStream; /* replies streaming in, oldest first */
	int nStream;
	size_t nStreamAlloc;
	int nFinished;         /* evaluations finished since opening */
	live_notify_fn notify; /* the front end's callback, or NULL */
	void *arg;             /* its argument */
};

/*
 * Open a live session on loop l: resolve the task, open the journal
 * (creating it and its directory if needed); for a new journal emit
 * session_started, add the task's seeds as candidates and evaluate them;
 * for an existing one, evaluate again the candidates whose evaluation was
 * cut short.  cfg must outlive the session.  Returns the session (free
 * with live_close()) or NULL with err naming the task, the file or the
 * field that was wrong.
 */
struct live *live_open(struct loop *l, const struct config *cfg, const struct live_opts *o,
                       live_notify_fn notify, void *arg, char *err);

/* stop the worker (killing what runs) and close the journal */
void live_close(struct live *lv);

/* the folded state */
const struct state *live_state(const struct live *lv);

/*
 * $XDG_STATE_HOME/kloop/sessions/TASK-YYYYmmdd-HHMMSS.jsonl (or under
 * ~/.local/state), not yet existing; a fresh string the caller frees
 */
char *live_default_path(const char *zTask);

/* $XDG_STATE_HOME/kloop (or ~/.local/state/kloop): a fresh string */
char *live_state_dir(void);

/*
 * Add a candidate (emits candidate_added): origin seed|llm|human|sweep|
 * crossover, up to two parents, a file name (its extension picks the
 * language; NULL: named after the first parent or the backend), the source
 * and the idea it implements (or NULL).  Returns the new id, or -1 + err.
 */
int live_add(struct live *lv, const char *zOrigin, const int *aParent, int nParent,
             const char *zName, const char *zSource, const char *zIdea, char *err);

/*
 * Evaluate candidate id (emits eval_started; eval_finished follows when
 * the worker answers).  0, or -1 + err: no such candidate, or it is being
 * evaluated already.
 */
int live_bench(struct live *lv, int id, char *err);

/* evaluations in flight */
int live_jobs(const struct live *lv);
/* the job evaluating candidate id, or NULL */
const struct live_job *live_job_of(const struct live *lv, int id);

/*
 * The LLM pipeline (made on the first call from the configuration's
 * provider, model, base_url and key, evaluating through this session).
 * 0, or -1 + err saying what is missing ("no LLM provider is configured").
 */
int live_llm(struct live *lv, char *err);

/* ask the LLM for n ideas to improve candidate parent (LIVE_IDEAS reports);
 * 0 or -1 + err */
int live_ideas(struct live *lv, int parent, int n, char *err);
/* decide on idea id: accept, reject, or revise (title and/or description;
 * NULL keeps it).  Each is an event (idea_accepted, idea_rejected,
 * idea_edited).  0 or -1 + err */
int live_idea_accept(struct live *lv, int id, char *err);
int live_idea_reject(struct live *lv, int id, char *err);
int live_idea_revise(struct live *lv, int id, const char *zTitle, const char *zDescription,
                     char *err);
/* implement idea id on candidate parent in nBranches LLM requests; every
 * reply becomes an llm candidate and is evaluated.  0 or -1 + err */
int live_implement(struct live *lv, int id, int parent, int nBranches, char *err);
/* LLM requests and pipeline steps not finished (0 when idle or never used) */
int live_llm_busy(const struct live *lv);
/* the streams of the requests in flight (pruned as requests end) */
int live_streams(struct live *lv, const struct live_stream **pa);

/*
 * Write candidate id's source to zPath (atomically).  0, or -1 + err
 * naming the candidate or the file.
 */
int live_export(const struct state *st, int id, const char *zPath, char *err);

/* a one-line summary of a candidate's verdict ("correct, 1.02 ms, 2.55x"),
 * written into buf of n bytes */
void live_verdict(const struct cand *c, char *buf, size_t n);

#endif
