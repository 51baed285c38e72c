/*
 * cand.h - a candidate in its own process.  The trusted side (the worker:
 * protocol, reference data, comparison, timing bounds) never loads candidate
 * code; it starts a runner (kloop-worker --runner) that loads the candidate's
 * shared object, maps the harness's buffers (memfds on the host, inputs
 * read-only; on the GPU, device memory exported as file descriptors, or
 * legacy CUDA IPC handles where the driver cannot) and calls kl_run when
 * told, over a socketpair that is the only descriptor it is given besides
 * its output.  The runner runs inside bubblewrap (no network, a read-only
 * view of the system, a private /tmp, no session dir, cache or $HOME, its
 * own pid and IPC namespaces, an empty environment, the GPU device nodes
 * only for the cuda backend), and is killed with everything it started when
 * the candidate is done, or the worker dies of any signal: by its keeper
 * (proc_keep), the worker's child and bubblewrap's parent.  With legacy
 * CUDA IPC handles (which do not cross pid namespaces) it keeps the pid and
 * IPC namespaces; kloop and the worker are not dumpable, so their /proc
 * entries stay closed to it.  A spare runner may be started ahead for the
 * next candidate (cand_spare_policy).
 */
#ifndef KL_CAND_H
#define KL_CAND_H

#include <stddef.h>

#include "backend.h"
#include "harness.h"

struct cand_opts {
	const char *zBackend;        /* "host" or "cuda" */
	int dev;                     /* CUDA device ordinal */
	int sandbox;                 /* run inside bubblewrap (0: --no-sandbox) */
	int pollFd;                  /* a descriptor whose hang-up means "give up" (the
	                                protocol input), or -1 */
	char *const *azLibDirs;      /* directories of the libraries candidates link (the
	                                task's libs), seen read-only in the sandbox; NULL
	                                or NULL-terminated */
	int reference;               /* it runs the task's reference: messages say so */
	unsigned long long memBytes; /* memory of the whole candidate (its cgroup), 0: none */
	int maxTasks;                /* its processes and threads at most (cgroup), 0: none */
	unsigned long long tmpBytes; /* the size of its private /tmp (sandboxed), 0: unsized */
	struct cand_proc *twin; /* the clock's twin (cand_twin) to take frames beside, or NULL */
};

struct cand_proc;

/* the harnesses one runner serves at most (the cascade's small and full
 * shapes; the reference's full shapes, float64 and small shapes) */
#define CAND_MAX_HARNESSES 3

/*
 * Start a runner for the shared object open at soFd (dup'ed) on the buffers
 * of the nH harnesses ah[] (1 to CAND_MAX_HARNESSES), all mapped at its
 * start: one process (one sandbox, one device context, one load of the
 * object) for every stage of a candidate.  NULL with err on kloop's
 * failure; *pLoadErr is set (and NULL returned) when the object cannot be
 * loaded or has no kl_run: err then says why, as a compile_error.
 */
struct cand_proc *cand_start(const struct cand_opts *o, struct harness *const *ah, int nH, int soFd,
                             int *pLoadErr, char *err);

/*
 * The spare runner: a runner started ahead, which makes its device context
 * (on the GPU, about 0.2 s of cuInit and context creation, which the driver
 * does one process at a time) while the worker does something else, and is
 * handed the next candidate's object and buffers by cand_start when it was
 * started for the same options.  CAND_SPARE_OFF: none (every runner is
 * started for its candidate); CAND_SPARE_AFTER: one is started when a runner
 * is freed; CAND_SPARE_READY: as soon as a runner is ready, so it starts
 * while that candidate is checked and timed.  A spare that died before its
 * turn is replaced by a runner started then.
 */
enum { CAND_SPARE_OFF, CAND_SPARE_AFTER, CAND_SPARE_READY };
void cand_spare_policy(int policy);
/*
 * While defer is set, CAND_SPARE_READY leaves the refill of a runner's
 * start to the end of a runner (as CAND_SPARE_AFTER): the worker sets it
 * when no other candidate waits behind the one it starts, so that no
 * context is made beside a lone candidate's check and timing (on an H200
 * one took 15-25 ms from an edit's check, bench/RESULTS.md), and clears it
 * when candidates queue, whose next runner is then made while this one runs.
 */
void cand_spare_defer(int defer);
/*
 * How many spares are kept started ahead (1 to CAND_MAX_SPARES; 1 by
 * default): each is a runner with its own device context, started in the
 * host's start order (start_order.h), the first of a worker that has none
 * left before the others; a candidate takes one whose context is made, else
 * the oldest.  Where a
 * candidate's check and timing take less than a context's start (several
 * GPUs starting runners at once), more than one keeps a runner ready.
 */
#define CAND_MAX_SPARES 8
void cand_spare_count(int n);
/*
 * Spares started now, before any runner was asked for, for the runners of
 * o on the buffers of ah (nH of them): the first load takes one whose
 * device context was made while the worker drew its inputs (issue 40: a
 * lone evaluation waited for each runner's start in turn).  Nothing where
 * spares are off; where the first load's options differ, its cand_start
 * drops them and starts its own.
 */
void cand_spare_prestart(const struct cand_opts *o, struct harness *const *ah, int nH);
/* while a runner's call is waited for, fd (readable) is handed to drain:
 * the pipe the runners write their output to where the worker passes it on
 * (a worker kept warm: worker/warm.c), so that no runner blocks on it while
 * the worker waits for that runner (-1: none) */
void cand_set_relay(int fd, void (*drain)(void));
/* the spares started and not yet taken (a test's, a benchmark's) */
int cand_spares_waiting(void);
/* the seconds this process has spent starting spares, in all: their fork
 * and exec are the worker's own (the context is the spare's), so this much
 * of a candidate's wait was a spare's start (a result's seconds.spares) */
double cand_spare_seconds(void);
/* whether c was a spare (its start was not its candidate's wait) */
int cand_started_ahead(const struct cand_proc *c);
/*
 * Ready a waiting spare for the next candidate before it is known: hand it
 * the buffers of the nH harnesses ah[] and take the empty frames of the
 * clock's bound on it (harness_preload, o->twin beside) now, while the
 * candidate compiles, so that cand_start() on the same harnesses (by their
 * serials) and options only has it load the object.  Its frames are taken
 * before any candidate is in it, as at a start; those older than
 * CAND_FRAMED_FRESH_S when it is taken are taken again.  One such spare at
 * most: 1 when one was readied now, 0 when none was (one is ready for
 * these harnesses already, or no spare has made its context yet; a spare
 * that failed is dropped: the start then does what it would have).
 */
#define CAND_FRAMED_FRESH_S 3.0
int cand_spare_frame(const struct cand_opts *o, struct harness *const *ah, int nH);
/* whether c was readied ahead so (cand_spare_frame) */
int cand_framed_ahead(const struct cand_proc *c);

/* what holds the runner, in words for a result: what it confined itself
 * with (seccomp, landlock), how it is held between calls (its cgroup frozen,
 * or SIGSTOP), whether its cgroup limits it as a whole */
void cand_describe(const struct cand_proc *c, char *buf, size_t n);

/*
 * The clock's twin: a runner started as a candidate's is (the same
 * sandbox, backend and device, held between calls alike) that never loads
 * anything, so that the empty frames the clock's bound subtracts can be
 * taken beside a candidate's runs, where the candidate can neither reach
 * nor lengthen them (harness.h, harness_cand.twin).  NULL with err.
 */
struct cand_proc *cand_twin(const struct cand_opts *o, char *err);
/* the same in two steps: started (its context made meanwhile), then
 * waited for; cand_twin_ready frees t and returns NULL with err where it
 * failed */
struct cand_proc *cand_twin_begin(const struct cand_opts *o, char *err);
struct cand_proc *cand_twin_ready(struct cand_proc *t, char *err);

/* the runner of c is alive (NULL: no) */
int cand_alive(const struct cand_proc *c);

/* take c's empty frames on twin (cand_twin; NULL or dead: on c itself,
 * before its load) */
void cand_use_twin(struct cand_proc *c, struct cand_proc *twin);

/* the view of it that harness ah[k] of cand_start runs it through */
struct harness_cand *cand_iface(struct cand_proc *c, int k);

/* each call of c returns within timeoutS seconds (> 0; 0: no limit), or
 * the runner is killed and the call is HC_CRASHED "did not return within
 * N s": for the reference, which no per-job timer of the engine bounds */
void cand_set_timeout(struct cand_proc *c, double timeoutS);

/* kill the runner with everything it started, wait until it is gone, and
 * free c */
void cand_free(struct cand_proc *c);

/*
 * The time of a fast GPU run whose runner read its kernels' busy time from
 * CUPTI (kernelMs, over nKernels records) beside its events' stream time
 * (eventMs): the kernels' where the events hold no more than a launch's few
 * microseconds a kernel and a tenth more (5 us a record + 10%), else the
 * events' (the candidate spent time between or before its kernels, on the
 * host: that counts), with *pGap set.  Issue 39.
 */
double cand_kernel_time(double kernelMs, double eventMs, int nKernels, int *pGap);

/*
 * Whether bubblewrap can run here: 0, or -1 with err saying why not (not
 * installed; user namespaces not allowed).  Probed once per process.
 */
int cand_sandbox_probe(char *err);

/*
 * The command that starts a runner: bubblewrap's arguments when o->sandbox,
 * then kloop-worker's (zExe).  keepPid: a buffer is shared with a legacy
 * CUDA IPC handle, so the runner keeps kloop's pid namespace.  NULL-
 * terminated; each string and the array are the caller's to free.
 */
char **cand_runner_argv(const struct cand_opts *o, const char *zExe, int keepPid);

/* the runner's side: serve the trusted side on fd until it hangs up; the
 * exit status of kloop-worker --runner.  zOrder: its place in the host's
 * start order ("LEVEL:ID", --start-order), the lock at START_ORDER_FD
 * taken around its context; NULL: none */
int cand_serve(int fd, const char *zBackend, int dev, const char *zOrder);

#endif
