/*
 * pool.h - several kloop-workers behind one queue: one per local GPU (each
 * pinned with CUDA_VISIBLE_DEVICES), CPU workers on the host backend, workers
 * over ssh (one ControlMaster connection per host), Slurm job steps inside
 * one allocation, or any launch command.  The pool gives each job to an idle
 * worker; a worker that dies, a host that drops or a cancelled step puts its
 * job back on the queue (at most twice, then the job fails with the reason)
 * and the worker is started again with backoff while the others go on.
 *
 * The interface is the worker's (worker.h): submit a source, hear about its
 * progress and its result later, never from inside pool_submit().
 */
#ifndef KL_POOL_H
#define KL_POOL_H

#include <cJSON.h>

#include "loop.h"
#include "worker.h"

/* how the workers are described (config key `workers`, flag `--workers`),
 * several specifications separated by ';':
 *   local          one worker per visible GPU (cuda), one CPU worker (host)
 *   local:N        N workers (cuda: the first N GPUs; host: N CPU workers)
 *   ssh:HOST       one worker on HOST (kloop-worker on its PATH)
 *   ssh:HOST:N     N workers on HOST, GPUs 0..N-1; ssh:HOST:0,2 those GPUs
 *   slurm:ARGS     one allocation (salloc ARGS, or $SLURM_JOB_ID when set),
 *                  one persistent job step per task of it (-n/--ntasks)
 *   cmd:TEMPLATE   a launch command of your own ({i}: the worker's index,
 *                  {gpu}: its GPU), e.g. cmd:ssh -p 2222 gpu1 kloop-worker
 * The ssh program is $KLOOP_SSH when set (else ssh). */
#define POOL_SPEC_HELP                                                                             \
	"local, local:N, ssh:HOST[:N|:GPU,GPU...], slurm:SALLOC-ARGS or cmd:COMMAND, separated "   \
	"by ';'"

struct pool;

enum pool_state {
	POOL_W_WAITING,  /* waiting for its Slurm allocation */
	POOL_W_STARTING, /* started, loading the task */
	POOL_W_IDLE,     /* ready, nothing to do */
	POOL_W_BUSY,     /* evaluating */
	POOL_W_BACKOFF,  /* lost; started again after a delay */
	POOL_W_DISABLED, /* will not be used again (version mismatch, no such GPU) */
};

/* what the front ends show about a worker */
struct pool_info {
	const char *zLabel;  /* "local:0", "ssh:gpu1:1", "slurm:1234.2", "cmd:0" */
	const char *zHost;   /* host name the worker reported (or the spec's host) */
	const char *zDevice; /* device it reported, or NULL before it started */
	enum pool_state state;
	int job;           /* the pool job it evaluates (the oldest), or 0 */
	int nDone;         /* jobs it finished */
	int nLost;         /* times it was lost */
	int nOut;          /* jobs given to it and not finished (running, compiling, waiting) */
	double busyS;      /* seconds it had work, so far */
	double upS;        /* seconds since it was first started */
	const char *zNote; /* why it is in backoff or disabled, or NULL */
	int pid;           /* its launch process (kloop-worker, ssh or srun), or 0 */
	int setup;         /* its setup runs: started, its task not loaded yet (the
	                    * reference's data and timing, the baselines) */
	double setupS;     /* how long its latest setup took, as it said ("the worker
	                    * was ready after"), or -1 before it said */
};

/*
 * A pool on loop l for the workers zSpec describes (NULL or "": "local"),
 * each started with wc's settings (its argvLaunch, when set, is the launch
 * command of one worker: the old `--worker CMD`).  done and progress are
 * called with the pool's job ids.  Returns NULL with err naming the part of
 * zSpec that is wrong.  Nothing starts before the first submit.
 */
struct pool *pool_new(struct loop *l, const struct worker_config *wc, const char *zSpec,
                      worker_done_fn done, worker_progress_fn progress, void *arg, char *err);
/* stop every worker (killing what runs), release a Slurm allocation the pool
 * made; no callback follows */
void pool_free(struct pool *p);

/*
 * Queue a candidate (copied) under a file name; returns the job id.  The
 * result comes through done, later.  The result gets a "worker" object
 * (label, host, device) naming where it ran.
 */
int pool_submit(struct pool *p, const char *zName, const char *zSource, size_t nSource);
/* the same, to run on worker index w only (re-benching pinned to a device);
 * -1 + err when there is no such worker */
int pool_submit_on(struct pool *p, int w, const char *zName, const char *zSource, size_t nSource,
                   char *err);
/* either, for a whole eval request (worker_submit_req; copied; w < 0: any
 * worker) */
int pool_submit_req(struct pool *p, int w, const struct eval_request *rq, char *err);
/* stop job id (queued or running; a running one's worker is restarted);
 * done is called with status "cancelled".  0, or -1 when there is no such job */
int pool_cancel(struct pool *p, int id);

/* code with hash zCode was timed for candidate zLabel on a device named zDevice: every
 * worker of the pool, those started later included, checks a candidate of
 * that code without timing it again (worker_code_measured) */
void pool_code_measured(struct pool *p, const char *zDevice, const char *zCode, const char *zLabel,
                        const cJSON *timing);

/* jobs not yet finished */
int pool_pending(const struct pool *p);
/* number of workers, and what to show about worker i */
int pool_size(const struct pool *p);
void pool_info(const struct pool *p, int i, struct pool_info *pi);
/* jobs that were put back on the queue after a lost worker, so far */
int pool_requeued(const struct pool *p);

/* time the reference again (a re-measure of the session's baseline): every
 * worker is stopped and starts afresh with the next job, timing the
 * reference as it starts; the timings known so far are forgotten until
 * then.  0, or -1 while jobs are queued or running (nothing is done) */
int pool_retime(struct pool *p);
/* the reference's timing measured on a device of this name (the baseline for
 * a speedup on that GPU model), or any worker's when zDevice is NULL; NULL
 * before one is known */
const cJSON *pool_reference_timing(const struct pool *p, const char *zDevice);
/* likewise the PyTorch baselines and the reference's name */
const cJSON *pool_baselines(const struct pool *p, const char *zDevice);
/* a device's torch.compile baseline still compiles in the background
 * (worker_config.deferCompile; its owner's onBaselines hears when it is in) */
int pool_baselines_pending(const struct pool *p);
/* likewise how a problem file's reference data was made there (worker_reference_data) */
const cJSON *pool_reference_data(const struct pool *p, const char *zDevice);
const char *pool_reference_name(const struct pool *p);
/* the lowest GPU memory bandwidth the workers reported, GB/s (0: none did) */
double pool_bandwidth_gbs(const struct pool *p);
/* a task-level failure every worker ran into, or NULL */
const char *pool_task_error(const struct pool *p);
/* the first worker's word that its candidates run unsandboxed although the
 * sandbox was asked for (bubblewrap cannot run there), or NULL */
const char *pool_sandbox_warning(const struct pool *p);

/* the number of GPUs visible to this process (CUDA_VISIBLE_DEVICES, else
 * the driver's list), 0 when none */
int pool_local_gpus(void);

#endif
