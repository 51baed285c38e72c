/*
 * protocol.h - the one definition of the lines between the engine
 * (worker.c, the client) and a kloop-worker (worker/main.c): one JSON
 * object a line, requests {"op": ...} in, events {"ev": ...} out.  Every
 * message is encoded and decoded here; no other file names a wire key
 * (a result's and the setup's own keys are the result format, result.h).
 * docs/ARCHITECTURE.md, "The worker protocol", has each message's fields.
 */
#ifndef KL_PROTOCOL_H
#define KL_PROTOCOL_H

#include <cJSON.h>
#include <stddef.h>

/* the longest line either side accepts (a request carries a candidate's
 * source, a result its compile log); a longer one is a protocol error,
 * never an unbounded buffer */
#define PROTO_LINE_MAX (64u << 20)

/* ---- requests (engine -> worker) ---- */

enum proto_op {
	PROTO_OP_NONE = -1, /* not a request (no "op" string) */
	PROTO_OP_TASK,      /* load a task */
	PROTO_OP_EVAL,      /* evaluate a candidate */
	PROTO_OP_MEASURED,  /* code with this hash was timed in the session */
	PROTO_OP_CANCEL,    /* drop a job not yet running */
	PROTO_OP_QUIT,      /* exit */
	PROTO_OP_UNKNOWN,   /* an "op" of another name (protocol_op_name() of the message) */
};

/* the incumbent a candidate is timed against in an interleaved A/B */
struct eval_incumbent {
	int id;              /* its candidate id (0: none; decoded: -1 when not said) */
	const char *zName;   /* its file name */
	const char *zSource; /* its source (NULL: no incumbent) */
	double medianMs;     /* its time (0: unknown) */
	const char *zMethod; /* its timing's method ("device-wide", ...), or NULL */
};

/*
 * One evaluation: the candidate and what its cascade does besides the
 * checks.  Built by the search (sessions/search/search.c: the quick stop, the
 * A/B's pairs, the incumbent), completed per candidate by the runner (the
 * incumbent's source and time, the baseline, force), carried by the pool
 * and worker.c, encoded once (protocol_eval()) and decoded once
 * (protocol_eval_decode()) in the worker.
 */
struct eval_request {
	int job;             /* the worker's job id (set by worker.c) */
	const char *zName;   /* the candidate's file name */
	const char *zSource; /* its source */
	size_t nSource;
	int quickRuns;     /* the quick timing's runs (0: PROTO_QUICK_RUNS) */
	double quickStopX; /* stop after the quick timing when this many times the
	                    * baseline (0: never) */
	double baselineMs; /* that baseline: the incumbent's time, else the reference's
	                    * (0: none) */
	int abPairs;       /* the A/B's pairs at most (0: HARNESS_AB_PAIRS) */
	int abForce;       /* run the A/B whatever the timings say */
	struct eval_incumbent inc;
};

#define PROTO_QUICK_RUNS 5 /* the quick timing's runs when a request names none */

/* rq with nothing asked: the defaults (the quick timing's runs, the A/B's
 * pairs) */
void eval_request_defaults(struct eval_request *rq);

/* a deep copy of rq (its strings copied; free with eval_request_free) */
struct eval_request eval_request_copy(const struct eval_request *rq);
void eval_request_free(struct eval_request *rq);

/* the request line of rq (caller frees) */
cJSON *protocol_eval(const struct eval_request *rq);

/* what request line msg asks for */
enum proto_op protocol_op(const cJSON *msg);
/* its "op" as written (for messages), or NULL */
const char *protocol_op_name(const cJSON *msg);

/*
 * An eval request line into *rq (pointers into msg, valid while it is;
 * the defaults where a field is absent).  0, or -1 + err (rq->job the job
 * named, or -1).
 */
int protocol_eval_decode(const cJSON *msg, struct eval_request *rq, char *err);

/* the task to load: what worker_config gives, and the files of a task
 * shipped to a worker on another host (a {name: text} object, or NULL) */
struct proto_task {
	const char *zDir;
	const cJSON *files;
	const char *zShapes, *zReference, *zLibs; /* NULL: none */
	int nTrials;                              /* < 0: the default (sent when > 0) */
	double budgetS;                           /* < 0: the default (sent when > 0) */
	double rse;                               /* < 0: the default (never sent) */
	int bSeed;                                /* seed was given (never sent) */
	unsigned long long seed;
	double runTimeoutS; /* 0: none */
	double atol, rtol;  /* < 0: the task's */
	double size;        /* 0: as written */
	int timeReference;  /* time the reference */
	int deferCompile;   /* torch.compile in the background */
};
/* the request line (files duplicated) */
cJSON *protocol_task(const struct proto_task *t);
/* decode (pointers into msg); 0, or -1 + err */
int protocol_task_decode(const cJSON *msg, struct proto_task *t, char *err);

/* measured: code zCode was timed as zLabel on device zDevice */
cJSON *protocol_measured(const char *zDevice, const char *zCode, const char *zLabel,
                         const cJSON *timing);
int protocol_measured_decode(const cJSON *msg, const char **pzDevice, const char **pzCode,
                             const char **pzLabel, const cJSON **pTiming, char *err);

cJSON *protocol_cancel(int job);
/* the job a cancel names, or -1 */
int protocol_cancel_job(const cJSON *msg);

/* ---- events (worker -> engine) ---- */

enum proto_ev {
	PROTO_EV_NONE = -1,   /* not an event */
	PROTO_EV_HELLO,       /* the worker started */
	PROTO_EV_TASK_READY,  /* the task is loaded */
	PROTO_EV_BASELINES,   /* torch.compile's baseline, compiled in the background */
	PROTO_EV_PROGRESS,    /* a job's stage */
	PROTO_EV_RESULT,      /* a job's result */
	PROTO_EV_CAND_SIGNAL, /* the candidate's runner was killed by a signal */
	PROTO_EV_CAND_EXIT,   /* it exited */
	PROTO_EV_ERROR,       /* a request failed (fatal: the worker cannot go on) */
	PROTO_EV_UNKNOWN,     /* another "ev" */
};

/* a new event line of kind e for job (job < 0: none); its fields are added
 * with protocol_put_*() or, for a result's and task_ready's bodies, the
 * result format's own keys (result.h) */
cJSON *protocol_event(enum proto_ev e, int job);
/* the kind of event line msg, and its job (-1: none) in *pJob */
enum proto_ev protocol_event_of(const cJSON *msg, int *pJob);

/* the hello: what the worker is and runs on */
struct proto_hello {
	const char *zBackend, *zDevice, *zArch, *zVersion; /* NULL: not said */
	const char *zUuid, *zHost;                         /* NULL: not said */
	int pid;
	double bandwidthGbs, measuredBandwidthGbs; /* 0: unknown */
	double peakTflops, measuredPeakTflops;     /* 0: unknown */
	const char *zSandboxWarning; /* candidates unsandboxed, and why (NULL: none) */
	const char *zSandbox;        /* "bubblewrap" or "none" */
	const char *zSpareRunner;    /* the spare runner's policy */
	int nSpares;                 /* spares kept ahead (0: none, or not said) */
};
cJSON *protocol_hello(const struct proto_hello *h);
void protocol_hello_decode(const cJSON *msg, struct proto_hello *h);

/* progress: job's stage (k: the trial or run, < 0: none) */
cJSON *protocol_progress(int job, const char *zStage, int k);
/* progress "compiled": ok, from the cache, in seconds */
cJSON *protocol_compiled(int job, int ok, int cached, double seconds);
/* decode: its stage (NULL: none) and k (-1: none) */
const char *protocol_progress_decode(const cJSON *msg, int *pK);

/* error: zMsg about job (< 0: none), fatal for the worker */
cJSON *protocol_error(int job, const char *zMsg, int fatal);
const char *protocol_error_decode(const cJSON *msg, int *pFatal);

/* candidate_signal (sig) or candidate_exit (status) of the candidate zName
 * (no kloop-worker of this version sends them; read where one does) */
void protocol_cand_ended_decode(const cJSON *msg, int *pCode, const char **pzName);

/*
 * task_ready: the reference's timing, the PyTorch baselines, its data's
 * seconds and notes; and baselines: the whole baselines when torch.compile
 * finished in the background, with their seconds.  The bodies are
 * result-format objects (result.h); these name the envelope's fields.
 */
struct proto_ready {
	const cJSON *refTiming;   /* {"median_ms", ...}, or NULL */
	const cJSON *baselines;   /* {"eager", "compile"}, or NULL */
	const cJSON *setup;       /* where the setup's seconds went, or NULL */
	const cJSON *sizes;       /* a PyTorch reference's sizes, or NULL */
	const char *zReference;   /* the reference's name, or NULL */
	const char *zPrecision;   /* a float64 reference's precision, or NULL */
	const char *zTask;        /* the task's name, or NULL */
	const char *zNote;        /* or NULL */
	const char *zSmallShapes; /* the small shapes' set, or NULL */
	const char *zSmallNote;   /* why no small-shapes stage, or NULL */
	int nTrials;              /* -1: not said */
	double refSeconds;        /* the reference data's seconds (< 0: not said) */
};
/* the event line (the objects duplicated) */
cJSON *protocol_ready(const struct proto_ready *r);
void protocol_ready_decode(const cJSON *msg, struct proto_ready *r);

/* baselines: seconds since the task came, timingS the timing's own */
cJSON *protocol_baselines(const cJSON *baselines, double seconds, double timingS);
/* the baselines (NULL: none) and their seconds (< 0: not said) */
const cJSON *protocol_baselines_decode(const cJSON *msg, double *pSeconds);

/* a result line for job: protocol_event(PROTO_EV_RESULT, job) with the
 * result's own keys (result.h) added; the result of such a line (a copy
 * without the envelope; caller frees) */
cJSON *protocol_result_of(const cJSON *msg);

#endif
