/*
 * driver.h - a running session: the session (a journal, or none), the task
 * it is about, the queue of evaluations and the worker(s) that serve it,
 * and the LLM pipeline, all on the caller's event loop.  Every front end
 * (`kloop eval`, `ideas`, `implement`, the line REPL, the TUI, and the
 * search) runs a session through this module and nothing else: every
 * change is an event (event.h) through session_emit(), the front ends read
 * the folded state (driver_state()) to draw, and the driver tells them what
 * happened with notes that carry ids, never prose to be parsed.
 *
 * Evaluations: driver_bench() journals eval_started and submits the
 * candidate to the driver's worker pool (pool.h: one queue, each job given
 * to an idle worker; local GPUs, CPU workers, ssh, Slurm, as the
 * configuration's `workers` says); eval_finished is journaled when a worker
 * answers, always later, from the loop, with the speedup against the
 * baseline measured on the same GPU model.
 */
#ifndef KL_DRIVER_H
#define KL_DRIVER_H

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

struct driver_opts {
	const char *zTask;      /* task name, directory or KernelBench .py; NULL: the
	                         * session's own task, else the bundled default */
	const char *zSession;   /* journal path (NULL: a fresh driver_default_path(),
	                         * or none with bMemory) */
	const char *zShapes;    /* shape set, or NULL */
	const char *zReference; /* "host", "cuda", "torch" or NULL */
	int bNoSeeds;           /* do not add the task's seeds to a new session */
	int bMemory;            /* a one-shot command: without zSession no journal
	                         * (session_memory()), with it no directory made */
	int bNoResume;          /* do not evaluate again what an earlier run cut short */
	int bNoEvalParents;     /* the LLM prompts without evaluating a parent first */
	int bTorchWarning;      /* a problem file or --reference torch without PyTorch for
	                         * the configured Python: a DRIVER_MESSAGE at once (the TUI, REPL) */
	int bDeferCompile;      /* a search: torch.compile's baseline compiles in the
	                         * background while candidates run on the GPU; the results
	                         * before it get it with a compile_baseline event */
	double warmS;           /* kloop eval, the workbench: its worker waits this long
	                         * for the next of the task, warm (worker.h; 0: none) */
};

/* one evaluation, queued in the pool or running on one of its workers */
struct driver_job {
	int cand;        /* the candidate's id */
	int job;         /* the pool's job id */
	char zStage[16]; /* queued, compiling, compiled, loading, checking, timing */
	int k;           /* the stage's counter (trial or run), or -1 */
	double tStart;   /* monotonic time it was submitted */
	int bRunning;    /* its eval_running is journaled */
};

/* an LLM request whose reply is streaming in */
struct driver_stream {
	int request;   /* the session's request id */
	long nChars;   /* characters received so far */
	double tStart; /* monotonic time of its first text */
	double tLast;  /* and of its last */
};

/* what a note is about */
enum driver_note_kind {
	DRIVER_CHANGED,   /* progress or a state change: redraw (cand: which, or 0) */
	DRIVER_FINISHED,  /* candidate cand's evaluation ended: its verdict is in the state */
	DRIVER_MESSAGE,   /* zText: something the user should read (journal warnings, a
	                   * journal that refused an event) */
	DRIVER_IDEAS,     /* an ideas request ended: aIdea[nIdea] (in the state), or none
	                   * and zText says why */
	DRIVER_CANDIDATE, /* the LLM made candidate cand (idea, branch, attempt) */
	DRIVER_BRANCH,    /* an implementation branch of idea ended with an error (zText);
	                   * cand: its last candidate, 0 when none */
	DRIVER_LOG,       /* zText: a line about the LLM work (a retry, a fix sent) */
};

struct driver_note {
	enum driver_note_kind kind;
	int cand;          /* a candidate id (0: none) */
	int idea;          /* an idea id (0: none) */
	int request;       /* an LLM request id (0: none) */
	int branch;        /* DRIVER_CANDIDATE, DRIVER_BRANCH: the branch */
	int attempt;       /* DRIVER_CANDIDATE: fixes before it */
	const int *aIdea;  /* DRIVER_IDEAS: the ideas proposed */
	int nIdea;         /* how many */
	const char *zText; /* the text, where the kind has one, else NULL */
};

/* how a driver tells its front end (from the loop, or from inside a driver
 * call that changed the session) */
typedef void (*driver_notify_fn)(void *arg, const struct driver_note *n);

/* a running session: its fields are private to sessions/ (driver_priv.h);
 * front ends ask through the functions below */
struct driver;

/*
 * Open a running session on loop l: open the task (taskopen.h), make the
 * worker pool (cfg->zWorkers; cfg->zWorker alone: one worker started by
 * that command; no worker starts yet), open the journal (creating it and its directory if needed;
 * none with bMemory); for a new journal emit session_started, add the task's seeds as candidates
 * and evaluate them; for an existing one, evaluate again the candidates whose evaluation was cut
 * short.  cfg must outlive the driver. Returns the driver (free with driver_close()) or NULL with
 * err naming the task, the file or the field that was wrong.
 */
struct driver *driver_open(struct loop *l, const struct config *cfg, const struct driver_opts *o,
                           driver_notify_fn notify, void *arg, char *err);

/* stop the workers (killing what runs), drop the LLM work, close the journal */
void driver_close(struct driver *drv);

/* the folded state */
const struct state *driver_state(const struct driver *drv);

/*
 * $XDG_STATE_HOME/kloop/sessions/TASK-YYYYmmdd-HHMMSS.jsonl (or under
 * ~/.local/state), not yet existing; a fresh string the caller frees
 */
char *driver_default_path(const char *zTask);

/* $XDG_STATE_HOME/kloop (or ~/.local/state/kloop): a fresh string */
char *driver_state_dir(void);

/*
 * Add a candidate (emits candidate_added): origin seed|llm|human|sweep|
 * crossover, up to two parents, a file name (its extension picks the
 * language; NULL: named after the first parent or the backend), the source
 * and the idea it implements (or NULL).  Returns the new id, or -1 + err.
 */
int driver_add(struct driver *drv, const char *zOrigin, const int *aParent, int nParent,
               const char *zName, const char *zSource, const char *zIdea, char *err);
/* the same for a candidate of search round c->round (c->zName NULL: named
 * as above) */
int driver_add_cand(struct driver *drv, const struct ev_candidate *c, char *err);

/*
 * The candidate whose source is zSource: one of the session's, or a new one
 * (driver_add() with no parents).  Returns its id, or -1 + err.
 */
int driver_add_source(struct driver *drv, const char *zOrigin, const char *zName,
                      const char *zSource, char *err);

/*
 * Evaluate candidate id (emits eval_started now; eval_finished and a
 * DRIVER_FINISHED note follow, from the loop, when a worker answers).  0,
 * or -1 + err: no such candidate, or it is queued or being evaluated.
 */
int driver_bench(struct driver *drv, int id, char *err);
/* the same, on worker w of the pool (0 to pool_size() - 1) only: -1 + err
 * when there is no such worker */
int driver_bench_on(struct driver *drv, int id, int w, char *err);

/*
 * Re-measure the session's baseline (issue 39): the workers start afresh,
 * time the reference, and evaluate the best (its machine code was timed:
 * not timed again); the new time is journaled (a `baseline` event), and
 * every speedup of the session is against it from then on.  The id
 * evaluated, or -1 + err (evaluations in flight, no baseline yet, no
 * correct candidate).
 */
int driver_remeasure(struct driver *drv, char *err);
/* the session's baseline on each device, how it came, and what this run's
 * workers timed the reference at where that differs, in words */
void driver_baseline_text(const struct driver *drv, strbuf *sb);

/*
 * Evaluate candidate id and then time it against candidate other in an
 * interleaved A/B (harness.h, harness_ab) whatever their times: the
 * result's "ab".  0 or -1 + err.
 */
int driver_bench_ab(struct driver *drv, int id, int other, char *err);

/*
 * What every evaluation's request carries from now on (protocol.h's struct
 * eval_request; the search builds it): the quick timing's runs and stop,
 * the A/B's pairs, and the incumbent (rq->inc.id; 0: none) every
 * evaluation is timed against in an A/B when its full timing's median is
 * below the incumbent's.  The driver completes each request with the
 * candidate, the incumbent's source and time, and the baseline for the
 * quick stop (the incumbent's time, else the reference's).
 */
void driver_set_eval_request(struct driver *drv, const struct eval_request *rq);

/*
 * Cancel the evaluation of candidate id: the pool restarts the worker
 * running it (its other jobs go back on the queue) and eval_finished
 * records the status "cancelled".  0, or -1 + err when id is not being
 * evaluated.
 */
int driver_cancel_eval(struct driver *drv, int id, char *err);

/*
 * Run Nsight Compute once on candidate id's kernels in the background
 * (ncu.h's ncu_run: a worker of its own under ncu); when it
 * ends, journal a profile event (ev_profile: its metrics join the
 * candidate's result, so the Results pane and the prompts show them) and
 * send a DRIVER_MESSAGE with the summary or with why it failed.  0, or
 * -1 + err (no such candidate, a profile of it running, ncu cannot be
 * started).
 */
int driver_profile(struct driver *drv, int id, char *err);

/* evaluations queued or running, and profiles running */
int driver_jobs(const struct driver *drv);
/* the evaluations queued or running, in submission order, into *pa;
 * returns how many (valid until the driver's next turn of the loop) */
int driver_evals(const struct driver *drv, const struct driver_job **pa);
/* the job evaluating candidate id, or NULL */
const struct driver_job *driver_job_of(const struct driver *drv, int id);
/* evaluations finished since the driver opened (what a batch of work came
 * to is counted from it) */
int driver_finished(const struct driver *drv);
/* a task-level failure every worker ran into (it could not load the task), or NULL */
const char *driver_task_error(const struct driver *drv);

/* ---- the workers (the pool, pool.h) ---- */

/* how many workers the pool has */
int driver_workers(const struct driver *drv);
/* worker i's state into *pi (pool_info()); returns the candidate it
 * evaluates, 0 when none (or i is not a worker) */
int driver_worker(const struct driver *drv, int i, struct pool_info *pi);
/* 1 while torch.compile's baseline still compiles in the background and a
 * worker is up (idle or busy) to finish it */
int driver_baselines_pending(const struct driver *drv);

/*
 * The LLM pipeline (made on the first call from the configuration's
 * provider, model, base_url and key, evaluating through this driver): every
 * LLM command is the pipeline's (pipeline.h: pipeline_ideas(),
 * pipeline_idea_accept(), pipeline_implement(), pipeline_translate(), ...)
 * on it.  NULL + err saying what is missing ("no LLM provider is
 * configured").
 */
struct pipeline *driver_llm(struct driver *drv, char *err);
/* the pipeline when an LLM command has made it, else NULL: for the
 * questions about work in flight, which take NULL as none
 * (pipeline_busy(), pipeline_round_busy(), pipeline_usd(),
 * pipeline_requests(), pipeline_cancel()) */
struct pipeline *driver_pipeline(const struct driver *drv);
/* the LLM client's provider and model names (NULL, NULL before
 * driver_llm() made it) */
void driver_llm_model(const struct driver *drv, const char **pzProvider, const char **pzModel);
/* the streams of the requests in flight (pruned as requests end) */
int driver_streams(struct driver *drv, const struct driver_stream **pa);
/* 1 while anything runs: an evaluation, a profile, an LLM request or a pipeline step */
int driver_busy(const struct driver *drv);

/* a one-line summary of a candidate's verdict ("correct, 1.02 ms, 2.55x"),
 * written into buf of n bytes */
void driver_verdict(const struct cand *c, char *buf, size_t n);

/*
 * The line a front end prints for note n (read from the state: "candidate
 * 3 (cand3.c): correct, 1.02 ms, 2.55x"; for DRIVER_IDEAS a first line
 * saying how many, then one line per idea "  idea 4 [memory] title").
 * Appends to sb; nothing for DRIVER_CHANGED.
 */
void driver_describe(const struct driver *drv, const struct driver_note *n, strbuf *sb);

/* ---- what the driver runs ---- */

/* the task (NULL for a KernelBench problem file) */
const struct task *driver_task(const struct driver *drv);
/* its name ("softmax") */
const char *driver_task_name(const struct driver *drv);
/* its directory, task.json or KernelBench .py file, as opened */
const char *driver_task_dir(const struct driver *drv);
/* the backend: "host" or "cuda" */
const char *driver_backend(const struct driver *drv);
/* the task's seeds for the backend (their paths) into *paz; returns how
 * many (0 for a KernelBench problem file) */
int driver_seeds(const struct driver *drv, char *const **paz);
/* 1 when seed i of driver_seeds() can run here: it needs nothing, or kloop
 * finds what it needs (a CUTLASS seed: CUTLASS's headers, as --libs cutlass
 * would); else 0 and zWhy (NULL: not wanted) says why it is left out */
int driver_seed_usable(const struct driver *drv, int i, char *zWhy, size_t nWhy);
/* the workers' GPU memory bandwidth in GB/s (pool_bandwidth_gbs; 0: unknown) */
double driver_bandwidth_gbs(const struct driver *drv);
/* the loop the session runs on */
struct loop *driver_loop(const struct driver *drv);
/* the session, for emitters outside the driver (emit.h: the search's, an
 * archive entry brought in as an idea) */
struct session *driver_session(struct driver *drv);
/* the journal's path ("(no journal)" for a session in memory) */
const char *driver_path(const struct driver *drv);

/* for a front end about to exit: 0 when every event reached the journal (or
 * there is none), after saying on f (NULL: nowhere) where the session is
 * saved; else -1 after saying on stderr how many were lost and why (the
 * exit status is then 2) */
int driver_saved(const struct driver *drv, FILE *f);
/* events were emitted outside the driver: tell the front end (DRIVER_CHANGED) */
void driver_changed(struct driver *drv);

/* ---- for the search (sessions/search/search.h) ---- */

/* the pipeline's limit on requests and candidates (pipeline_limit(), now
 * and on the pipeline made later; the search's budgets); fn NULL: none */
void driver_limit(struct driver *drv, pipeline_limit_fn fn, void *arg);
/* 1 when the LLM client would send one more request at once (fewer
 * requests pending than its in-flight limit), or there is no client yet */
int driver_llm_room(const struct driver *drv);

#endif
