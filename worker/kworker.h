/*
 * kworker.h - what the files of kloop-worker share, each calling only
 * those below it: main.c (the request loop, limits, main) on top;
 * requests.c (the task, eval and measured requests); cascade.c (compiles,
 * the cascade of checks and timings, the A/B, results); runners.c (the
 * runners, the reference's other runs); helper.c (the PyTorch helper's
 * life, the background compile); out.c (the worker's one state W, the
 * protocol out) at the bottom: the jobs, W, and their functions.
 */
#ifndef KL_KWORKER_H
#define KL_KWORKER_H

#include <cJSON.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "backend.h"
#include "cand.h"
#include "compile.h"
#include "diagfold.h"
#include "harness.h"
#include "json.h"
#include "loop.h"
#include "proc.h"
#include "resources.h"
#include "precision.h"
#include "protocol.h"
#include "roofline.h"
#include "task.h"
#include "taskopen.h"
#include "torchext.h"
#include "torchref.h"
#include "util.h"
#include "verdict.h"
#include "version.h"

struct job {
	int id;                 /* the engine's job id */
	char *zName;            /* file name for diagnostics */
	int ok;                 /* compiled */
	char *zSo;              /* shared object */
	cJSON *compile;         /* the compile report */
	double tCompile;        /* seconds */
	int compiled;           /* its compile has finished (ok or not) */
	struct job *next;       /* run queue link, in submission order */
	int isReference;        /* the task's reference */
	struct eval_request rq; /* its eval request (protocol.h; its strings owned;
	                           the defaults for the reference) */
	struct job *inc;        /* the incumbent to time against (A/B), compiled beside it */
	struct job *owner;      /* for an incumbent: the job it belongs to */
	int cancelled;          /* the engine no longer wants it: dropped unrun once compiled */
	char zCode[65];         /* the hash of its machine code (codehash.h), "" if none */
	/* a PyTorch extension or a ModelNew (torchext.h): its form, entry
	 * point and the outputs its runs copied, for the verdict */
	struct torchext_note ext;
	/* a ModelNew sent before the task was known (a PyTorch problem's is
	 * made while the helper starts): its source, read once the task's
	 * inputs are (kworker_compile_deferred) */
	char *zDeferred;
	size_t nDeferred;
	/* an extension's source as it was compiled on the stand-in, kept
	 * for a second compile against PyTorch's own headers where the
	 * stand-in lacks what it uses (kworker_compiled) */
	char *zExtSrc;
	size_t nExtSrc;
	int extLang;
	char *zExtName;
	char zNoTorch[KL_ERRLEN]; /* why there was no second compile, "" */
	/* while Python is asked where PyTorch's headers are: the failed
	 * compile on the stand-in, and what the stand-in lacked */
	struct compile_result *pTorchWait;
	char zTorchLacks[200];
};

/* machine code timed on this worker's device in the session */
struct timed {
	char zCode[65]; /* its code hash */
	char *zLabel;   /* the name of the candidate timed ("cand3.c") */
	cJSON *timing;  /* its timing */
};

/* warm workers of other tasks left idle on a device when one more starts */
#define KWORKER_WARM_IDLE 2

/* runners ended once their candidate's result is sent, at most */
#define KWORKER_END_LATER 4

/* spare runners kept ahead on the GPU unless --spares says otherwise */
#define KWORKER_GPU_SPARES 2

/* the worker's one state */
struct kworker_state {
	int in, out; /* protocol descriptors */
	struct loop *l;
	struct backend *b;
	struct compiler *comp;
	struct task *t;
	struct harness *h;
	struct harness_opts opts;
	struct task *tSmall;          /* the task at its small shapes (task_shrink), or NULL */
	struct harness *hSmall;       /* its harness, the reference's outputs in it */
	char zSmall[KL_ERRLEN + 256]; /* "rows=64 cols=512", or why there is no such stage */
	/* what the precision verdicts are measured against, or why none is */
	char zPrec[KL_ERRLEN + 256];
	struct roofline_dev roof; /* what the device does (hello): every result's roofline */
	double tolA, tolR;        /* --atol / --rtol (< 0: the task's) */
	double loadS;             /* seconds spent starting runners in the job that runs */
	double refTimeoutS;       /* a reference run's limit (the engine's run timeout) */
	int nRunners;             /* runners started for it */
	char zConfine[600];       /* how its last runner was confined (cand_describe) */
	int nAhead;               /* of them, spares started ahead (cand_spare_policy) */
	int nFramed;              /* of those, spares readied ahead (kworker_frame_ahead) */
	double endS;              /* seconds spent ending them (before its result) */
	struct cand_proc *aEndLater[KWORKER_END_LATER]; /* its runners ended after it */
	int nEndLater;
	double spare0;        /* cand_spare_seconds() when the job began to run */
	int ready;            /* task loaded and reference data in place */
	int timeReference;    /* time the reference when it is ready */
	double tMain, tHello; /* when main() began, when the hello was sent */
	double tTask;         /* when the task request came */
	double inputsS;       /* a kernel reference's: its inputs drawn and varied, s */
	double tRefCompile;   /* and when its compile was asked for */
	struct job *runq;     /* candidates in submission order; the head runs once compiled */
	struct linebuf inbuf; /* request lines from the engine */
	const char *zBackend;
	char *zPython; /* interpreter for torch references */
	char *zCacheDir;
	int dev;
	int sandbox;               /* candidates run inside bubblewrap */
	struct cand_proc *refCand; /* the reference's runner, kept for the worker's life */
	struct cand_proc *twin;    /* the clock's twin (cand_twin), started with the first runner */
	struct cand_proc *twinStarting; /* the twin started before the inputs (kworker_prestart),
	                                 * not yet waited for */
	struct timed *aTimed;           /* code timed on this device (dedupe below) */
	int nTimed;
	size_t nTimedAlloc;
	struct torchref *bg; /* the PyTorch helper compiling torch.compile's baseline in
	                        the background while candidates run (its output
	                        watched by the loop), or NULL */
	struct torchref *tr; /* the PyTorch helper kept for the session: the harness's
	                        source of each run's inputs (torchref_source), or NULL */
	/* kept warm (--warm PATH --linger S, kloop eval: warm.c): the socket
	 * listened on between two engines, or -1; the first task request's
	 * text, the hello and task_ready sent for it (sent again to the next
	 * engine that asks for the same task) */
	int warmFd;
	char *zWarmPath;
	double lingerS;
	long long lingerTimer;
	char *zTaskReq;
	cJSON *hello, *readyMsg;
	int warmEvals; /* engines served, the first included */
	double tReady; /* when the task was first ready */
	/* the relay of a warm worker: its stdout and stderr, and every child's
	 * (runners, the PyTorch helper), are a pipe it reads (relayFd, or -1)
	 * and passes on to its engine's stderr (errOut; -1 between engines):
	 * a runner started for one engine writes to the next one's */
	int relayFd, errOut;
};
extern struct kworker_state kworker_w;
/* the worker's code names it W */
#define W kworker_w

/* the worker's pid (a forked child's exit() leaves the helper alone) */
extern pid_t kworker_pid;

/* ---- warm.c: kept warm between engines (below main.c, above the rest) ---- */
/* listen on zPath (its directory this user's alone, 0700) and wait there
 * lingerS s for the next engine once this one is gone; onInput reads W.in,
 * addLines takes bytes read from it; 0, or -1 + err (not kept warm) */
int kworker_warm_listen(const char *zPath, double lingerS, loop_fd_fn onInput,
                        void (*addLines)(const char *, size_t), char *err);
/* task request zLine: 1 when answered as kept warm (the first's text), 0
 * to load it (the first is remembered) */
int kworker_warm_task(const char *zLine);
/* the engine closed the channel: 1 when the worker now waits for the next
 * (kept warm, the task ready, nothing queued or running), 0 to exit */
int kworker_warm_idle(void);

/* ---- out.c: the state, the protocol out, limits (calls no other file) ---- */
/* send event o to the engine (consumed); a gone engine ends the worker */
void kworker_send_json(cJSON *o);
/* send task_ready o (consumed), kept for the next engine of a warm worker */
void kworker_send_ready(cJSON *o);
/* what the relay holds now, passed on to the engine's stderr (warm.c) */
void kworker_relay_drain(void);
/* an error event about job (< 0: none); fatal: the worker cannot go on */
void kworker_send_error(int job, const char *zMsg, int fatal);
/* job's stage (k: the trial or run, < 0: none) */
void kworker_send_progress(int job, const char *zStage, int k);
/* the device's peaks per compute type into W.roof.pk (peaks.h: measured
 * once per device, a few hundred ms, then cached), once: while the task's
 * reference compiles or its PyTorch helper starts, else before the first
 * result */
void kworker_peaks(void);
/* a runner's memory limit, MiB */
long long kworker_mem_limit_mb(void);

/* ---- helper.c: the PyTorch helper's life, the background compile ---- */
/* atexit: end the PyTorch helper of the task that loads */
void kworker_kill_helper(void);
/* start the PyTorch helper on zProblem; zShapes and size scale a problem
 * file's constants (NULL, 0: as written); NULL + err */
struct torchref *kworker_start_helper(const char *zProblem, const char *zShapes, double size,
                                      char *err);
/* torch.compile's baseline is compiled by tr in the background: watch it */
void kworker_background_watch(struct torchref *tr);
/* torch.compile's baseline compiled in the background: go on with it */
void kworker_background_compile(void);

/* ---- cascade.c: compiles, the cascade, the A/B, results ---- */
/* free job j and its incumbent */
void kworker_job_free(struct job *j);
/* run the queue from the loop (not from inside a caller) */
void kworker_pump_later(void);
/* code zCode was timed as zLabel (timing copied) */
void kworker_add_timed(const char *zCode, const char *zLabel, const cJSON *timing);
/* compile j's source (n bytes); 0, or -1 + err */
int kworker_submit_compile(struct job *j, const char *zSrc, size_t n, char *err);
/* the task is known: the ModelNew modules that waited for it compile (a
 * module kloop cannot take is its job's compile error) */
void kworker_compile_deferred(void);
/* a compile finished (the compiler service's callback) */
void kworker_compiled(struct compile_result *r, void *arg);
/* the cancel request: drop a job not yet running */
void kworker_op_cancel(cJSON *req);

/* ---- runners.c: runners, the ones started ahead, the reference's other runs ---- */
/* the runners' spares and the clock's twin started now, on h's buffers,
 * before the task's inputs are drawn (cand_spare_prestart) */
void kworker_prestart(struct harness *h);
/* while the next candidate compiles: a spare given the buffers it will run
 * on and its frames taken (cand_spare_frame), so that its verdict waits
 * for the object's load alone.  KLOOP_FRAME_AHEAD=0: not (to measure it) */
void kworker_frame_ahead(void);
/* while the next candidate compiles: the full harness's next batch's ring
 * (harness_ring_ahead) and its next timing's runs' inputs
 * (harness_runs_ahead) drawn, so that its verdict does not wait for those
 * draws.  KLOOP_RING_AHEAD=0, KLOOP_RUNS_AHEAD=0: not (to measure them) */
void kworker_draw_ahead(void);
/* a runner for j's shared object on the buffers of the nH harnesses ah[]
 * (cand_iface(c, k) runs it on ah[k]'s); NULL + err (*pLoadErr: the object
 * is at fault) */
struct cand_proc *kworker_load_on(struct job *j, struct harness *const *ah, int nH, int *pLoadErr,
                                  char *err);
/* the same on harness h alone */
struct cand_proc *kworker_load(struct job *j, struct harness *h, int *pLoadErr, char *err);
/* end a runner from kworker_load() */
void kworker_unload(struct cand_proc *c);
/* the reference run at the small shapes (in the reference's runner c, on
 * its harness k; NULL: a runner of its own): the cascade's first stage, or
 * why none */
void kworker_small_reference(struct job *j, struct cand_proc *c, int k);
/* the reference compiled: its runs, its timing, the task_ready (runners.c) */
void kworker_finish_reference(struct job *j);
/* the precision the float64 reference (a C or CUDA one, j) gives, or why
 * there is none */
const char *kworker_float64_reference(struct job *j, struct harness *h64, const char *zWhyNot);
/* the float64 reference h64 made by zName (ok), or not (err; torch: by
 * PyTorch's model): the precision it gives, or why there is none */
const char *kworker_float64_end(struct harness *h64, int ok, const char *zName, int torch,
                                char *err);

/* ---- requests.c: the task, eval and measured requests ---- */
/* the task request: load the task and its reference */
void kworker_op_task(cJSON *req);
/* the eval request: compile the candidate (and its incumbent), queue it */
void kworker_op_eval(cJSON *req);
/* the measured request: code timed in the session elsewhere */
void kworker_op_measured(cJSON *req);

#endif
