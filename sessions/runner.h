/*
 * runner.h - a running session: the session (a journal, or none), the task
 * it is about, the queue of evaluations and the worker(s) that serve it,
 * and the LLM pipeline, all on the caller's event loop.  Every front end
 * (`kloop eval`, `ideas`, `implement`, the line REPL, the TUI, and the
 * search) runs a session through this module and nothing else: every
 * change is an event (event.h) through session_emit(), the front ends read
 * the folded state (runner_state()) to draw, and the runner tells them what
 * happened with notes that carry ids, never prose to be parsed.
 *
 * Evaluations: runner_bench() journals eval_started and submits the
 * candidate to the runner's worker pool (pool.h: one queue, each job given
 * to an idle worker; local GPUs, CPU workers, ssh, Slurm, as the
 * configuration's `workers` says); eval_finished is journaled when a worker
 * answers, always later, from the loop, with the speedup against the
 * baseline measured on the same GPU model.
 */
#ifndef KL_RUNNER_H
#define KL_RUNNER_H

#include <stddef.h>

#include "config.h"
#include "loop.h"
#include "session.h"
#include "task.h"
#include "taskopen.h"
#include "pipeline.h"
#include "pool.h"
#include "worker.h"

struct llm;
struct pipeline;
struct ev_candidate;

struct runner_opts {
	const char *zTask;      /* task name, directory or KernelBench .py; NULL: the
	                         * session's own task, else the bundled default */
	const char *zSession;   /* journal path (NULL: a fresh runner_default_path(),
	                         * or none with bMemory) */
	const char *zShapes;    /* shape set, or NULL */
	const char *zReference; /* "host", "cuda", "torch" or NULL */
	int bNoSeeds;           /* do not add the task's seeds to a new session */
	int bMemory;            /* a one-shot command: without zSession no journal
	                         * (session_memory()), with it no directory made */
	int bNoResume;          /* do not evaluate again what an earlier run cut short */
	int bNoEvalParents;     /* the LLM prompts without evaluating a parent first */
	int bTorchWarning;      /* a problem file or --reference torch without PyTorch for
	                         * the configured Python: a RUNNER_MESSAGE at once (the TUI, REPL) */
	int bDeferCompile;      /* a search: torch.compile's baseline compiles in the
	                         * background while candidates run on the GPU; the results
	                         * before it get it with a compile_baseline event */
};

/* one evaluation, queued in the pool or running on one of its workers */
struct runner_job {
	int cand;        /* the candidate's id */
	int job;         /* the pool's job id */
	char zStage[16]; /* queued, compiling, compiled, loading, checking, timing */
	int k;           /* the stage's counter (trial or run), or -1 */
	double tStart;   /* monotonic time it was submitted */
	int bRunning;    /* its eval_running is journaled */
};

/* an LLM request whose reply is streaming in */
struct runner_stream {
	int request;   /* the session's request id */
	long nChars;   /* characters received so far */
	double tStart; /* monotonic time of its first text */
	double tLast;  /* and of its last */
};

/* what a note is about */
enum runner_note_kind {
	RUNNER_CHANGED,   /* progress or a state change: redraw (cand: which, or 0) */
	RUNNER_FINISHED,  /* candidate cand's evaluation ended: its verdict is in the state */
	RUNNER_MESSAGE,   /* zText: something the user should read (journal warnings, a
	                   * journal that refused an event) */
	RUNNER_IDEAS,     /* an ideas request ended: aIdea[nIdea] (in the state), or none
	                   * and zText says why */
	RUNNER_CANDIDATE, /* the LLM made candidate cand (idea, branch, attempt) */
	RUNNER_BRANCH,    /* an implementation branch of idea ended with an error (zText);
	                   * cand: its last candidate, 0 when none */
	RUNNER_LOG,       /* zText: a line about the LLM work (a retry, a fix sent) */
};

struct runner_note {
	enum runner_note_kind kind;
	int cand;          /* a candidate id (0: none) */
	int idea;          /* an idea id (0: none) */
	int request;       /* an LLM request id (0: none) */
	int branch;        /* RUNNER_CANDIDATE, RUNNER_BRANCH: the branch */
	int attempt;       /* RUNNER_CANDIDATE: fixes before it */
	const int *aIdea;  /* RUNNER_IDEAS: the ideas proposed */
	int nIdea;         /* how many */
	const char *zText; /* the text, where the kind has one, else NULL */
};

/* how a runner tells its front end (from the loop, or from inside a runner
 * call that changed the session) */
typedef void (*runner_notify_fn)(void *arg, const struct runner_note *n);

struct runner {
	struct loop *l;           /* the caller's loop */
	struct session *ses;      /* the session (journal open for appending, or memory) */
	const struct config *cfg; /* the caller's configuration */
	struct worker_config wc;  /* the workers' settings (worker_config_from(cfg)) */
	struct pool *pool;        /* the workers and their queue (pool.h) */
	char **argvLaunch;        /* worker launch command, or NULL */
	char *zTaskDir;           /* the task's directory (or .py file) */
	char *zTaskName;          /* its name */
	struct task *task;        /* the task (NULL for a KernelBench problem file) */
	char *zBackend;           /* host or cuda */
	char *zShapes;            /* shape set, or NULL */
	char *zReference;         /* reference kind, or NULL */
	struct runner_job *aJob;  /* evaluations queued or running, in submission order */
	int nJob;
	size_t nJobAlloc;
	struct llm *llm;               /* the LLM client, once an LLM command needed it */
	struct pipeline *p;            /* the idea -> code pipeline (pipeline.h), likewise */
	int bNoEvalParents;            /* runner_opts.bNoEvalParents */
	int bSandboxWarned;            /* the pool's sandbox warning was noted */
	struct runner_stream *aStream; /* replies streaming in, oldest first */
	int nStream;
	size_t nStreamAlloc;
	int nFinished;           /* evaluations finished since opening */
	pipeline_limit_fn limit; /* the pipeline's limit (runner_limit), or NULL */
	void *limitArg;
	struct eval_request evalReq; /* what every eval request carries
	                              * (runner_set_eval_request) */
	runner_notify_fn notify;     /* the front end's callback, or NULL */
	void *arg;                   /* its argument */
};

/*
 * Open a running session on loop l: open the task (taskopen.h), make the
 * worker pool (cfg->zWorkers; cfg->zWorker alone: one worker started by
 * that command; no worker starts yet), open the journal (creating it and its directory if needed;
 * none with bMemory); for a new journal emit session_started, add the task's seeds as candidates
 * and evaluate them; for an existing one, evaluate again the candidates whose evaluation was cut
 * short.  cfg must outlive the runner. Returns the runner (free with runner_close()) or NULL with
 * err naming the task, the file or the field that was wrong.
 */
struct runner *runner_open(struct loop *l, const struct config *cfg, const struct runner_opts *o,
                           runner_notify_fn notify, void *arg, char *err);

/* stop the workers (killing what runs), drop the LLM work, close the journal */
void runner_close(struct runner *rn);

/* the folded state */
const struct state *runner_state(const struct runner *rn);

/*
 * $XDG_STATE_HOME/kloop/sessions/TASK-YYYYmmdd-HHMMSS.jsonl (or under
 * ~/.local/state), not yet existing; a fresh string the caller frees
 */
char *runner_default_path(const char *zTask);

/* $XDG_STATE_HOME/kloop (or ~/.local/state/kloop): a fresh string */
char *runner_state_dir(void);

/*
 * Add a candidate (emits candidate_added): origin seed|llm|human|sweep|
 * crossover, up to two parents, a file name (its extension picks the
 * language; NULL: named after the first parent or the backend), the source
 * and the idea it implements (or NULL).  Returns the new id, or -1 + err.
 */
int runner_add(struct runner *rn, const char *zOrigin, const int *aParent, int nParent,
               const char *zName, const char *zSource, const char *zIdea, char *err);
/* the same for a candidate of search round c->round (c->zName NULL: named
 * as above) */
int runner_add_cand(struct runner *rn, const struct ev_candidate *c, char *err);

/*
 * The candidate whose source is zSource: one of the session's, or a new one
 * (runner_add() with no parents).  Returns its id, or -1 + err.
 */
int runner_add_source(struct runner *rn, const char *zOrigin, const char *zName,
                      const char *zSource, char *err);

/*
 * Evaluate candidate id (emits eval_started now; eval_finished and a
 * RUNNER_FINISHED note follow, from the loop, when a worker answers).  0,
 * or -1 + err: no such candidate, or it is queued or being evaluated.
 */
int runner_bench(struct runner *rn, int id, char *err);
/* the same, on worker w of the pool (0 to pool_size() - 1) only: -1 + err
 * when there is no such worker */
int runner_bench_on(struct runner *rn, int id, int w, char *err);

/*
 * Evaluate candidate id and then time it against candidate other in an
 * interleaved A/B (harness.h, harness_ab) whatever their times: the
 * result's "ab".  0 or -1 + err.
 */
int runner_bench_ab(struct runner *rn, int id, int other, char *err);

/*
 * What every evaluation's request carries from now on (protocol.h's struct
 * eval_request; the search builds it): the quick timing's runs and stop,
 * the A/B's pairs, and the incumbent (rq->inc.id; 0: none) every
 * evaluation is timed against in an A/B when its full timing's median is
 * below the incumbent's.  The runner completes each request with the
 * candidate, the incumbent's source and time, and the baseline for the
 * quick stop (the incumbent's time, else the reference's).
 */
void runner_set_eval_request(struct runner *rn, const struct eval_request *rq);

/*
 * Cancel the evaluation of candidate id: the pool restarts the worker
 * running it (its other jobs go back on the queue) and eval_finished
 * records the status "cancelled".  0, or -1 + err when id is not being
 * evaluated.
 */
int runner_cancel_eval(struct runner *rn, int id, char *err);
/* cancel LLM request `request` (its llm_response says "cancelled");
 * 0 or -1 + err when it is not in flight */
int runner_cancel_request(struct runner *rn, int request, char *err);
/* the LLM requests not ended (sessions/pipeline.h), at most max into a */
struct pipeline_request;
int runner_requests(const struct runner *rn, struct pipeline_request *a, int max);

/*
 * Run Nsight Compute once on candidate id's kernels in the background
 * (`kloop profile TASK FILE --json`: a fresh worker under ncu); when it
 * ends, journal a profile event (ev_profile: its metrics join the
 * candidate's result, so the Results pane and the prompts show them) and
 * send a RUNNER_MESSAGE with the summary or with why it failed.  0, or
 * -1 + err (no such candidate, a profile of it running, ncu cannot be
 * started).
 */
int runner_profile(struct runner *rn, int id, char *err);

/* evaluations queued or running, and profiles running */
int runner_jobs(const struct runner *rn);
/* the job evaluating candidate id, or NULL */
const struct runner_job *runner_job_of(const struct runner *rn, int id);
/* a task-level failure every worker ran into (it could not load the task), or NULL */
const char *runner_task_error(const struct runner *rn);

/*
 * The LLM pipeline (made on the first call from the configuration's
 * provider, model, base_url and key, evaluating through this runner).
 * 0, or -1 + err saying what is missing ("no LLM provider is configured").
 */
int runner_llm(struct runner *rn, char *err);

/* ask the LLM for n ideas to improve candidate parent (RUNNER_IDEAS
 * reports), for search round `round` (0: none; pipeline_ideas()); 0 or -1
 * + err */
int runner_ideas(struct runner *rn, int parent, int n, int round, char *err);
/* decide on idea id: accept, reject, or revise (title and/or description;
 * NULL keeps it).  Each is an event (idea_accepted, idea_rejected,
 * idea_edited).  0 or -1 + err */
int runner_idea_accept(struct runner *rn, int id, char *err);
int runner_idea_reject(struct runner *rn, int id, char *err);
int runner_idea_revise(struct runner *rn, int id, const char *zTitle, const char *zDescription,
                       char *err);
/* a person's idea (zText: its first line is the title) for candidate parent
 * (0: none); returns its id or -1 + err */
int runner_idea_new(struct runner *rn, const char *zText, int parent, char *err);
/* implement idea id on candidate parent in nBranches LLM requests, for
 * search round `round` (0: none); every reply becomes an llm candidate and
 * is evaluated.  0 or -1 + err */
int runner_implement(struct runner *rn, int id, int parent, int nBranches, int round, char *err);
/* likewise, crossing parent with parent2 (the crossover prompt) */
int runner_crossover(struct runner *rn, int id, int parent, int parent2, int nBranches, int round,
                     char *err);
/* go on with an implementation branch cut short (pipeline_branch_resume) */
int runner_branch_resume(struct runner *rn, const struct state_branch *b, int nBranches, int round,
                         char *err);
/* LLM requests and pipeline steps not finished (0 when idle or never used) */
int runner_llm_busy(const struct runner *rn);
/* the streams of the requests in flight (pruned as requests end) */
int runner_streams(struct runner *rn, const struct runner_stream **pa);
/* 1 while anything runs: an evaluation, a profile, an LLM request or a pipeline step */
int runner_busy(const struct runner *rn);

/* a one-line summary of a candidate's verdict ("correct, 1.02 ms, 2.55x"),
 * written into buf of n bytes */
void runner_verdict(const struct cand *c, char *buf, size_t n);

/*
 * The line a front end prints for note n (read from the state: "candidate
 * 3 (cand3.c): correct, 1.02 ms, 2.55x"; for RUNNER_IDEAS a first line
 * saying how many, then one line per idea "  idea 4 [memory] title").
 * Appends to sb; nothing for RUNNER_CHANGED.
 */
void runner_describe(const struct runner *rn, const struct runner_note *n, strbuf *sb);

/* ---- for the search (sessions/search.h) ---- */

/* the task (NULL for a KernelBench problem file) */
const struct task *runner_task(const struct runner *rn);
/* the workers' GPU memory bandwidth in GB/s (pool_bandwidth_gbs; 0: unknown) */
double runner_bandwidth_gbs(const struct runner *rn);
/* the loop the session runs on */
struct loop *runner_loop(const struct runner *rn);
/* the session, for the search's emitters (event.h) */
struct session *runner_session(struct runner *rn);

/* for a front end about to exit: 0 when every event reached the journal (or
 * there is none), else -1 after saying on stderr how many were lost and why
 * (the exit status is then 2) */
int runner_saved(const struct runner *rn);
/* events were emitted outside the runner: tell the front end (RUNNER_CHANGED) */
void runner_changed(struct runner *rn);
/* translate the task's reference into n candidates (pipeline_translate());
 * 0 or -1 + err (no LLM provider, n out of range) */
int runner_translate(struct runner *rn, int n, char *err);
/* replies whose code the session has make no new candidate (the search:
 * identical code is not evaluated again); 0 or -1 + err (no LLM) */
int runner_no_repeats(struct runner *rn, char *err);
/* LLM steps of round `round` not finished; *pUnsent (may be NULL): those
 * whose requests have not all gone out (pipeline_round_busy()) */
int runner_round_busy(const struct runner *rn, int round, int *pUnsent);
/* the pipeline's limit on requests and candidates (pipeline_limit(); the
 * search's budgets); fn NULL: none */
void runner_limit(struct runner *rn, pipeline_limit_fn fn, void *arg);
/* 1 when the LLM client would send one more request at once (fewer
 * requests pending than its in-flight limit), or there is no client yet */
int runner_llm_room(const struct runner *rn);

/* pipeline_usd(): what the requests in flight may cost, and the latest
 * request's estimate (0, 0 before the pipeline exists) */
void runner_usd(const struct runner *rn, double *pHeld, double *pNext);
/* reject idea id saying why (zReason may be NULL); 0 or -1 + err */
int runner_idea_reject_why(struct runner *rn, int id, const char *zReason, char *err);

#endif
