/*
 * cand_priv.h - what the candidate runner's files share, private to them
 * (cand*.c): the messages on the socketpair, the trusted side's struct
 * cand, and the steps one file takes from another.  The module's
 * interface is cand.h.
 *
 *   cand.c          the trusted side's calls: hold, round trip, crash
 *                   diagnosis, the harness's view, the runner's end
 *   cand_start.c    a runner started: the keeper's fork, the setup, the
 *                   load; the spare; cand_free; the clock's twin
 *   cand_sandbox.c  bubblewrap: the probe, the runner's command line
 *   cand_runner.c   the runner's side (cand_serve): the buffers mapped,
 *                   confined, loaded, each call answered
 */
#ifndef KL_CAND_PRIV_H
#define KL_CAND_PRIV_H

#include <stdint.h>
#include <sys/types.h>

#include "cand.h"
#include "cgroup.h"
#include "harness.h"

enum {
	CM_SETUP = 1, /* trusted -> runner: the buffers (and the fds) */
	CM_READY,     /* runner: loaded */
	CM_LOADERR,   /* runner: the object cannot be loaded (text) */
	CM_RUN,       /* trusted: call kl_run (mode) */
	CM_FRAME,     /* trusted: an empty timed frame */
	CM_REPLY,     /* runner: rc, ms, md */
	CM_FAIL,      /* runner: the run left a device error (text) */
	CM_SIGNAL,    /* runner: the candidate died of a signal (rc, text) */
	CM_EXIT,      /* runner: the candidate called exit (rc) */
	CM_INPUT,     /* runner: the candidate wrote to a read-only input (text) */
	CM_TERM,      /* runner: SIGTERM from another process (the job is being stopped) */
	CM_MAPPED,    /* runner: the buffers are mapped; frames may come, then CM_LOAD */
	CM_LOAD,      /* trusted: confine yourself and load the candidate */
	CM_BATCH,     /* trusted: rc runs of kl_run in one request, timed as one (mode), run k
	                 on slot k of the batch's ring; on the clock's twin, rc empty ones.
	                 The reply's set is the runs done */
	CM_STARTED,   /* runner, before its setup: its context is made (or failed: the
	                 setup's answer says why); a spare that said so is taken first */
	CM_TOUCH,     /* trusted: map the first rc slots of the batch's ring (page tables
	                 filled), outside any clock.  The reply's set is rc */
};

/* what a runner that did not confine itself says in CM_READY: a tool (a
 * profiler: ncu, for `kloop profile`) is injected into it (its environment
 * names one, which no candidate could have set), whose hooks patch code the
 * confinement keeps unchangeable (they died of SIGSEGV at the load); its
 * times are unverified (timing_bound) */
#define CAND_UNCONFINED "none: a tool is injected into the runner"

/* a message on a runner's socket, either way (the hostile fixtures that
 * forge replies, tests/fixtures/evil/forge_reply.c and
 * exploits/fd_forge.cpp, copy its layout: a change here is one there) */
struct cm {
	uint32_t op, seq;
	int32_t mode, rc;
	int32_t set; /* CM_RUN, CM_FRAME: which harness's buffers */
	double ms, md;
	/* CM_RUN on a GPU whose runner has CUPTI (backend.kernels_end): kn > 0
	 * records made ms their busy time; me the events' stream time beside */
	int32_t kn;
	double me;
	/* CM_RUN, HC_PROFILED, kn > 0: the first of its kernels' durations
	 * each its own, in launch order (ms; -1 past kn) */
	double kms[HARNESS_PROF_KERNELS];
	/* CM_REPLY: the outputs the candidate's call(s) filled by copying a
	 * result of their own (kl_run_copied, kloop.h), a bit each */
	uint32_t copied;
	/* CM_REPLY with rc: the candidate's words for it (kl_run_error) */
	char text[400];
};

#define MAX_BUF HARNESS_MAX_BUFS                     /* of one harness */
#define MAX_SETUP_BUF (CAND_MAX_HARNESSES * MAX_BUF) /* of a runner */

/* a buffer of the setup: a tensor's (its data at off), or a batch's ring
 * of the inputs or the outputs (ring > 0: its slots, stride bytes apart,
 * a tensor's data at the tensor's ringOff in each) */
struct cm_buf {
	unsigned char handle[64];
	uint64_t n, off;
	int32_t dtype, ndim, input, hasFd, set;
	int32_t ring;
	uint64_t stride, ringOff;
	int64_t shape[8];
	char name[64];
};

struct cm_setup {
	uint32_t op, nBuf, nSet;
	uint32_t twin; /* the clock's twin: no buffers, no object, frames only */
	struct cm_buf buf[MAX_SETUP_BUF];
};

struct cand_proc;

/* the harness's view of a runner: its calls on one harness's buffers */
struct cand_view {
	struct harness_cand hc; /* first: the harness's pointer is the view's */
	struct cand_proc *c;
	int set;
	int nKernel; /* timed runs whose time is their kernels' (CUPTI) */
	int nEvents; /* timed runs whose time is the events' */
	int nGap;    /* of those, runs whose events held more than their kernels allow */
};

struct cand_proc {
	struct cand_view views[CAND_MAX_HARNESSES];
	int nSet;
	int fd;     /* control socket */
	pid_t pid;  /* its keeper (proc_keep), the parent of bubblewrap or of the runner */
	int lifeFd; /* the keeper's life line: closed, it kills all it kept */
	uint32_t seq;
	int pollFd;
	int dead;       /* the runner is gone */
	int noteKind;   /* HC_CRASHED or HC_MISBEHAVED when the runner said why it died */
	char note[512]; /* what it said */
	char zStatus[160];
	int schedFd;       /* the runner's /proc/PID/schedstat, or -1 */
	double timeoutS;   /* a call's limit (cand_set_timeout), 0: none */
	int sandboxed;     /* the runner is bubblewrap's child */
	int noteInput;     /* the note is about a write to an input (or its guard band) */
	int statFd;        /* its /proc/PID/stat (whether it is asleep), or -1 */
	int ahead;         /* it was the spare: started before its candidate was known */
	int reference;     /* it runs the task's reference, not a candidate (messages) */
	struct cgroup *cg; /* its control group (cgroup.h), or NULL */
	pid_t rpid;        /* the runner's pid (kloop-worker --runner), once ready */
	int stop;          /* how it is held between calls: STOP_* */
	int held;          /* it is frozen or stopped now */
	int nTasks0;       /* its threads when it was ready (the candidate loaded) */
	int twin;          /* the clock's twin (cand_twin): it never loads anything */
	int twinUnsent;    /* its setup could not be sent (cand_twin_begin) */
	/* a spare readied ahead (cand_spare_frame): its buffers mapped for the
	 * harnesses of these serials and its frames taken, at framedAt with
	 * the twin framedTwin beside */
	int framed;
	uint64_t framedOf[CAND_MAX_HARNESSES];
	double framedAt;
	const struct cand_proc *framedTwin;
	pid_t framedTwinPid;
	char zConfine[400]; /* what the runner put in place before the load (its word) */
};

/* how a runner is held between calls, so that nothing of the candidate runs
 * while the harness prepares the next one: its cgroup frozen, or SIGSTOP
 * (one process: the seccomp filter refuses it any other) */
enum { STOP_NONE, STOP_CGROUP, STOP_SIGNAL };

/* whom the runner runs, for messages */
static inline const char *who(const struct cand_proc *c)
{
	return c->reference ? "the reference" : "the candidate";
}

/* a command line being built */
struct argv {
	char **v;
	size_t n, alloc;
};

/* cand.c: the runner is gone: reaped, why into why; HC_CRASHED or
 * HC_MISBEHAVED */
int cand_runner_died(struct cand_proc *c, char *why, size_t nWhy);
/* the relay cand_set_relay() gave (-1: none), and its drain (cand.c) */
int cand_relay_fd(void);
void cand_relay_drain(void);
/* hold the runner (on) or let it go: 0 or -1 + err */
int cand_hold(struct cand_proc *c, int on, char *err);
/* the threads of the runner's process now (0: unknown) */
int cand_runner_threads(const struct cand_proc *c);
/* once it is ready: its pid, schedstat and stat opened */
void cand_watch_runner(struct cand_proc *c);
/* the runner and this worker are stopped together: this worker ends */
_Noreturn void cand_stopped_together(void);
/* c's views of each harness, their harness_cand calls set */
void cand_views_init(struct cand_proc *c);
/* kill the runner with everything it started, wait until it is gone, and
 * free c (NULL: nothing), no spare started after it (cand_free does that) */
void cand_destroy(struct cand_proc *c);

/* cand_sandbox.c: the runner's command line (bubblewrap's, around it when
 * sandboxed) into a; asMb: an address-space limit (0: none); twin: the
 * clock's twin; zOrder: its place in the host's start order ("LEVEL:ID",
 * start_order.h) when it is given the lock, else NULL.  a freed */
void cand_build_argv(const struct cand_opts *o, const char *zExe, int keepPid,
                     unsigned long long asMb, int twin, const char *zOrder, struct argv *a);
void cand_argv_free(struct argv *a);

#endif
