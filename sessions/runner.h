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
#include <stdio.h>

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

/* a running session: its fields are private to sessions/ (runner_priv.h);
 * front ends ask through the functions below */
struct runner;

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
 * Re-measure the session's baseline (issue 39): the workers start afresh,
 * time the reference, and evaluate the best (its machine code was timed:
 * not timed again); the new time is journaled (a `baseline` event), and
 * every speedup of the session is against it from then on.  The id
 * evaluated, or -1 + err (evaluations in flight, no baseline yet, no
 * correct candidate).
 */
int runner_remeasure(struct runner *rn, char *err);
/* the session's baseline on each device, how it came, and what this run's
 * workers timed the reference at where that differs, in words */
void runner_baseline_text(const struct runner *rn, strbuf *sb);

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

/*
 * Run Nsight Compute once on candidate id's kernels in the background
 * (ncu.h's ncu_run: a worker of its own under ncu); when it
 * ends, journal a profile event (ev_profile: its metrics join the
 * candidate's result, so the Results pane and the prompts show them) and
 * send a RUNNER_MESSAGE with the summary or with why it failed.  0, or
 * -1 + err (no such candidate, a profile of it running, ncu cannot be
 * started).
 */
int runner_profile(struct runner *rn, int id, char *err);

/* evaluations queued or running, and profiles running */
int runner_jobs(const struct runner *rn);
/* the evaluations queued or running, in submission order, into *pa;
 * returns how many (valid until the runner's next turn of the loop) */
int runner_evals(const struct runner *rn, const struct runner_job **pa);
/* the job evaluating candidate id, or NULL */
const struct runner_job *runner_job_of(const struct runner *rn, int id);
/* evaluations finished since the runner opened (what a batch of work came
 * to is counted from it) */
int runner_finished(const struct runner *rn);
/* a task-level failure every worker ran into (it could not load the task), or NULL */
const char *runner_task_error(const struct runner *rn);

/* ---- the workers (the pool, pool.h) ---- */

/* how many workers the pool has */
int runner_workers(const struct runner *rn);
/* worker i's state into *pi (pool_info()); returns the candidate it
 * evaluates, 0 when none (or i is not a worker) */
int runner_worker(const struct runner *rn, int i, struct pool_info *pi);
/* 1 while torch.compile's baseline still compiles in the background and a
 * worker is up (idle or busy) to finish it */
int runner_baselines_pending(const struct runner *rn);

/*
 * The LLM pipeline (made on the first call from the configuration's
 * provider, model, base_url and key, evaluating through this runner): every
 * LLM command is the pipeline's (pipeline.h: pipeline_ideas(),
 * pipeline_idea_accept(), pipeline_implement(), pipeline_translate(), ...)
 * on it.  NULL + err saying what is missing ("no LLM provider is
 * configured").
 */
struct pipeline *runner_llm(struct runner *rn, char *err);
/* the pipeline when an LLM command has made it, else NULL: for the
 * questions about work in flight, which take NULL as none
 * (pipeline_busy(), pipeline_round_busy(), pipeline_usd(),
 * pipeline_requests(), pipeline_cancel()) */
struct pipeline *runner_pipeline(const struct runner *rn);
/* the LLM client's provider and model names (NULL, NULL before
 * runner_llm() made it) */
void runner_llm_model(const struct runner *rn, const char **pzProvider, const char **pzModel);
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

/* ---- what the runner runs ---- */

/* the task (NULL for a KernelBench problem file) */
const struct task *runner_task(const struct runner *rn);
/* its name ("softmax") */
const char *runner_task_name(const struct runner *rn);
/* its directory, task.json or KernelBench .py file, as opened */
const char *runner_task_dir(const struct runner *rn);
/* the backend: "host" or "cuda" */
const char *runner_backend(const struct runner *rn);
/* the task's seeds for the backend (their paths) into *paz; returns how
 * many (0 for a KernelBench problem file) */
int runner_seeds(const struct runner *rn, char *const **paz);
/* the workers' GPU memory bandwidth in GB/s (pool_bandwidth_gbs; 0: unknown) */
double runner_bandwidth_gbs(const struct runner *rn);
/* the loop the session runs on */
struct loop *runner_loop(const struct runner *rn);
/* the session, for emitters outside the runner (emit.h: the search's, an
 * archive entry brought in as an idea) */
struct session *runner_session(struct runner *rn);
/* the journal's path ("(no journal)" for a session in memory) */
const char *runner_path(const struct runner *rn);

/* for a front end about to exit: 0 when every event reached the journal (or
 * there is none), after saying on f (NULL: nowhere) where the session is
 * saved; else -1 after saying on stderr how many were lost and why (the
 * exit status is then 2) */
int runner_saved(const struct runner *rn, FILE *f);
/* events were emitted outside the runner: tell the front end (RUNNER_CHANGED) */
void runner_changed(struct runner *rn);

/* ---- for the search (sessions/search.h) ---- */

/* the pipeline's limit on requests and candidates (pipeline_limit(), now
 * and on the pipeline made later; the search's budgets); fn NULL: none */
void runner_limit(struct runner *rn, pipeline_limit_fn fn, void *arg);
/* 1 when the LLM client would send one more request at once (fewer
 * requests pending than its in-flight limit), or there is no client yet */
int runner_llm_room(const struct runner *rn);

#endif
