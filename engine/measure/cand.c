/*
 * cand.c - the candidate in its own sandboxed process: the trusted side
 * (start, calls, crash diagnosis, kill) and the runner's side (cand_serve).
 * Messages are fixed-size records on a SOCK_SEQPACKET socketpair; every
 * reply carries the request's sequence number, so that anything the
 * candidate writes to the channel itself is noticed.
 */
#include "cand.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <math.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup.h"
#include "confine.h"
#include "mps.h"
#include "proc.h"
#include "sandbox.h"
#include "util.h"

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
};

/* empty frames taken before the candidate is loaded, for the clock's bound
 * (harness_preload), after this many warm-up frames */
#define PRE_WARM 2

struct cm {
	uint32_t op, seq;
	int32_t mode, rc;
	int32_t set; /* CM_RUN, CM_FRAME: which harness's buffers */
	double ms, md;
	char text[400];
};

#define MAX_BUF (2 * TASK_MAX_TENSORS)               /* of one harness */
#define MAX_SETUP_BUF (CAND_MAX_HARNESSES * MAX_BUF) /* of a runner */

struct cm_buf {
	unsigned char handle[64];
	uint64_t n, off;
	int32_t dtype, ndim, input, hasFd, set;
	int64_t shape[8];
	char name[64];
};

struct cm_setup {
	uint32_t op, nBuf, nSet;
	uint32_t twin; /* the clock's twin: no buffers, no object, frames only */
	struct cm_buf buf[MAX_SETUP_BUF];
};

struct cand;

/* the harness's view of a runner: its calls on one harness's buffers */
struct cand_view {
	struct harness_cand hc; /* first: the harness's pointer is the view's */
	struct cand *c;
	int set;
};

struct cand {
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
	int schedFd;        /* the runner's /proc/PID/schedstat, or -1 */
	double timeoutS;    /* a call's limit (cand_set_timeout), 0: none */
	int sandboxed;      /* the runner is bubblewrap's child */
	int noteInput;      /* the note is about a write to an input (or its guard band) */
	int statFd;         /* its /proc/PID/stat (whether it is asleep), or -1 */
	int ahead;          /* it was the spare: started before its candidate was known */
	int reference;      /* it runs the task's reference, not a candidate (messages) */
	struct cgroup *cg;  /* its control group (cgroup.h), or NULL */
	pid_t rpid;         /* the runner's pid (kloop-worker --runner), once ready */
	int stop;           /* how it is held between calls: STOP_* */
	int held;           /* it is frozen or stopped now */
	int nTasks0;        /* its threads when it was ready (the candidate loaded) */
	int twin;           /* the clock's twin (cand_twin): it never loads anything */
	char zConfine[400]; /* what the runner put in place before the load (its word) */
};

/* how a runner is held between calls, so that nothing of the candidate runs
 * while the harness prepares the next one: its cgroup frozen, or SIGSTOP
 * (one process: the seccomp filter refuses it any other) */
enum { STOP_NONE, STOP_CGROUP, STOP_SIGNAL };

/* whom the runner runs, for messages */
static const char *who(const struct cand *c)
{
	return c->reference ? "the reference" : "the candidate";
}

/* the spare runner (cand_spare_policy) */
static struct {
	int policy;         /* CAND_SPARE_* */
	struct cand *c;     /* the spare, started for o and waiting for its setup */
	struct cand_opts o; /* the last runner's options (a deep copy): the next spare's */
	int keepPid;        /* ... and its namespaces */
	char *zKey;         /* runner_key() of them; NULL: none yet */
} Spare;
static void spare_start(void);
void cand_use_twin(struct cand *c, struct cand *twin);

/* ---- sending descriptors ---- */

static int send_with_fds(int sock, const void *p, size_t n, const int *fds, int nFds)
{
	struct iovec iov = {(void *)p, n};
	union {
		char buf[CMSG_SPACE(sizeof(int) * (MAX_SETUP_BUF + 1))];
		struct cmsghdr align;
	} u;
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
	if (nFds > 0) {
		memset(&u, 0, sizeof u);
		m.msg_control = u.buf;
		m.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nFds);
		struct cmsghdr *c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nFds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * (size_t)nFds);
	}
	return sendmsg(sock, &m, MSG_NOSIGNAL) == (ssize_t)n ? 0 : -1;
}

static ssize_t recv_with_fds(int sock, void *p, size_t n, int *fds, int *pnFds)
{
	struct iovec iov = {p, n};
	union {
		char buf[CMSG_SPACE(sizeof(int) * (MAX_SETUP_BUF + 1))];
		struct cmsghdr align;
	} u;
	struct msghdr m = {
	    .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf};
	ssize_t r = recvmsg(sock, &m, MSG_CMSG_CLOEXEC);
	*pnFds = 0;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); r >= 0 && c; c = CMSG_NXTHDR(&m, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
			int k = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
			memcpy(fds + *pnFds, CMSG_DATA(c), sizeof(int) * (size_t)k);
			*pnFds += k;
		}
	return r;
}

/* ---- the sandbox ---- */

static int probed, probeRc;
static char probeErr[KL_ERRLEN];

int cand_sandbox_probe(char *err)
{
	if (!probed) {
		probed = 1;
		char *argv[] = {"bwrap",
		                "--unshare-user",
		                "--unshare-pid",
		                "--unshare-net",
		                "--ro-bind",
		                "/",
		                "/",
		                "--proc",
		                "/proc",
		                "--dev",
		                "/dev",
		                "--die-with-parent",
		                "--clearenv",
		                "true",
		                NULL};
		char *out = NULL;
		int st = proc_capture(argv, &out, 4096);
		if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) == 127) {
			probeRc = kl_err(
			    probeErr, "bubblewrap (bwrap) is not installed: candidates run "
			              "unsandboxed (install the bubblewrap package; --no-sandbox "
			              "accepts this without the warning)");
		} else if (WEXITSTATUS(st) != 0) {
			char *nl = out ? strchr(out, '\n') : NULL;
			if (nl)
				*nl = 0;
			probeRc = kl_err(probeErr,
			                 "bubblewrap cannot create its namespaces here (%s): user "
			                 "namespaces are probably disabled (sysctl "
			                 "kernel.unprivileged_userns_clone or "
			                 "user.max_user_namespaces); candidates run unsandboxed "
			                 "(--no-sandbox accepts this without the warning)",
			                 out && *out ? out : "no message");
		}
		free(out);
	}
	if (probeRc < 0 && err)
		snprintf(err, KL_ERRLEN, "%s", probeErr);
	return probeRc;
}

struct argv {
	char **v;
	size_t n, alloc;
};

static void argv_free(struct argv *a)
{
	for (size_t i = 0; i < a->n; i++)
		free(a->v[i]);
	free(a->v);
}

static void av(struct argv *a, const char *z)
{
	xgrow((void **)&a->v, &a->alloc, a->n + 2, sizeof *a->v);
	a->v[a->n++] = z ? xstrdup(z) : NULL;
	a->v[a->n] = NULL;
}

static void av2(struct argv *a, const char *x, const char *y, const char *z)
{
	av(a, x);
	av(a, y);
	if (z)
		av(a, z);
}

/* directory zDir, read-only (sandbox.h) */
static void bind_ro_dir(struct argv *a, const char *zDir)
{
	char *v[6];
	int n = sandbox_dir_args(zDir, sandbox_system, sandbox_nSystem, v);
	for (int i = 0; i < n; i++) {
		av(a, v[i]);
		free(v[i]);
	}
}

/* the directory holding the CUDA runtime this process loaded, if any */
static void bind_cudart_dir(struct argv *a)
{
	void *h = dlopen("libcudart.so.13", RTLD_NOLOAD | RTLD_NOW);
	if (!h)
		h = dlopen("libcudart.so.12", RTLD_NOLOAD | RTLD_NOW);
	void *sym = h ? dlsym(h, "cudaMalloc") : NULL;
	Dl_info info;
	if (sym && dladdr(sym, &info) && info.dli_fname) {
		char *d = xstrdup(info.dli_fname), *slash = strrchr(d, '/');
		if (slash) {
			*slash = 0;
			bind_ro_dir(a, d);
		}
		free(d);
	}
}

/* keepPid: a buffer is shared with a legacy CUDA IPC handle, which names the
 * worker's pid and so cannot cross pid namespaces */
static void build_argv(const struct cand_opts *o, const char *zExe, int keepPid,
                       unsigned long long asMb, int twin, struct argv *a)
{
	char dev[16];
	snprintf(dev, sizeof dev, "%d", o->dev);
	int cuda = !strcmp(o->zBackend, "cuda");
	char *mps[16];
	int nMps = 0, mpsNs = 0;
	if (o->sandbox)
		nMps = mps_runner_args(cuda, mps, 16, &mpsNs);
	keepPid = keepPid || mpsNs; /* KLOOP_MPS_NAMESPACES=share (mps.h) */
	if (o->sandbox) {
		av(a, "bwrap");
		av2(a, "--unshare-user", "--unshare-net", "--unshare-uts");
		av(a, "--unshare-cgroup-try");
		/* GPU buffers come as file descriptors (backend_cuda.c) and need
		 * neither; legacy CUDA IPC needs both the pid and the IPC namespace */
		if (!keepPid)
			av2(a, "--unshare-pid", "--unshare-ipc", NULL);
		av2(a, "--die-with-parent", "--new-session", "--clearenv");
		av2(a, "--setenv", "PATH", "/usr/bin:/bin");
		av2(a, "--setenv", "HOME", "/tmp");
		av2(a, "--setenv", "TMPDIR", "/tmp");
		for (size_t i = 0; i < sandbox_nSystem; i++)
			av2(a, "--ro-bind-try", sandbox_system[i], sandbox_system[i]);
		/* a fresh /proc needs a pid namespace of its own; without one, the
		 * host's, read-only (kloop and the worker are not dumpable, so their
		 * fds and environment stay closed to the candidate) */
		if (keepPid)
			av2(a, "--ro-bind", "/proc", "/proc");
		else
			av2(a, "--proc", "/proc", NULL);
		av2(a, "--dev", "/dev", NULL);
		/* a sized /tmp: its files are the candidate's memory too (and
		 * counted in its cgroup's) */
		if (o->tmpBytes) {
			char size[32];
			snprintf(size, sizeof size, "%llu", o->tmpBytes);
			av2(a, "--size", size, NULL);
		}
		av2(a, "--tmpfs", "/tmp", NULL);
		/* the libraries the runner itself was found with (cJSON outside
		 * the system's directories; the CUDA toolkit's): without them it
		 * cannot start, on any backend */
		const char *ld = getenv("LD_LIBRARY_PATH");
		if (ld && *ld) {
			av2(a, "--setenv", "LD_LIBRARY_PATH", ld);
			char *dup = xstrdup(ld), *save = NULL;
			for (char *d = strtok_r(dup, ":", &save); d; d = strtok_r(NULL, ":", &save))
				if (d[0] == '/')
					bind_ro_dir(a, d);
			free(dup);
		}
		if (cuda) {
			const char *vis = getenv("CUDA_VISIBLE_DEVICES");
			if (vis)
				av2(a, "--setenv", "CUDA_VISIBLE_DEVICES", vis);
			bind_cudart_dir(a);
			av2(a, "--ro-bind-try", "/sys", "/sys");
			glob_t g;
			if (glob("/dev/nvidia*", 0, NULL, &g) == 0) {
				for (size_t i = 0; i < g.gl_pathc; i++)
					av2(a, "--dev-bind-try", g.gl_pathv[i], g.gl_pathv[i]);
				globfree(&g);
			}
			av2(a, "--dev-bind-try", "/dev/dri", "/dev/dri");
		}
		/* the libraries the task or --libs gave, found through their rpath */
		for (int i = 0; o->azLibDirs && o->azLibDirs[i]; i++)
			bind_ro_dir(a, o->azLibDirs[i]);
		/* MPS's pipe directory over the private /tmp, after the rest */
		for (int i = 0; i < nMps; i++)
			av(a, mps[i]), free(mps[i]);
		av2(a, "--ro-bind", zExe, "/run/kloop/kloop-worker");
		if (cuda) {
			/* kloop's own kernels, which the runner finds beside its
			 * program: without them its cache flush writes the buffer
			 * instead of reading it, and the L2 left dirty made every
			 * memory-bound candidate slower (softmax 9% on an H100) */
			const char *slash = strrchr(zExe, '/');
			char *lib = xasprintf("%.*s/libkloop-cuda.so",
			                      slash ? (int)(slash - zExe) : 1, slash ? zExe : ".");
			if (access(lib, R_OK) == 0)
				av2(a, "--ro-bind", lib, "/run/kloop/libkloop-cuda.so");
			free(lib);
		}
		av2(a, "--chdir", "/tmp", NULL);
		av(a, "--");
		av(a, "/run/kloop/kloop-worker");
	} else {
		av(a, zExe);
	}
	av2(a, "--runner", "--backend", o->zBackend);
	av2(a, "--device", dev, NULL);
	/* the clock's twin says so in its command line (ps, the tests) */
	if (twin)
		av(a, "--twin");
	/* no cgroup limits it as a whole: its one process is limited (host) */
	if (asMb) {
		char mb[32];
		snprintf(mb, sizeof mb, "%llu", asMb);
		av2(a, "--as-limit-mb", mb, NULL);
	}
}

char **cand_runner_argv(const struct cand_opts *o, const char *zExe, int keepPid)
{
	struct argv a = {0};
	build_argv(o, zExe, keepPid, 0, 0, &a);
	return a.v;
}

/* ---- the trusted side ---- */

/* tell the keeper to kill the runner with everything below it (it exits
 * once all of it is gone, as bubblewrap did) */
static void end_keeper(struct cand *c)
{
	if (c->lifeFd >= 0)
		close(c->lifeFd);
	c->lifeFd = -1;
}

/* the runner and this worker are being stopped together (Slurm's scancel
 * signals every process of the step, in an order of its own): no verdict,
 * this worker ends as if the signal had reached it first, and kloop runs
 * the job elsewhere */
static _Noreturn void stopped_together(void)
{
	proc_die_of(SIGTERM);
}

/*
 * A message of the runner's own about its end (the signal it died of, an
 * exit(), a write to an input, SIGTERM from outside) into c's note; 1 if m
 * was one.  CM_TERM does not return: the worker is being stopped with it.
 */
static int take_note(struct cand *c, const struct cm *m)
{
	if (m->op == CM_TERM)
		stopped_together();
	if (m->op != CM_SIGNAL && m->op != CM_EXIT && m->op != CM_INPUT)
		return 0;
	if (c->noteInput)
		return 1; /* the write to an input explains the signal */
	c->noteInput = m->op == CM_INPUT;
	/* a write into an input's guard band is an out-of-bounds write (a
	 * crash), not a change of the input */
	c->noteKind = m->op == CM_INPUT && m->rc == 0 ? HC_MISBEHAVED : HC_CRASHED;
	if (m->op == CM_SIGNAL)
		snprintf(c->note, sizeof c->note, "%s was killed by %s", who(c), m->text);
	else if (m->op == CM_EXIT)
		snprintf(c->note, sizeof c->note, "%s called exit(%d)", who(c), (int)m->rc);
	else if (m->rc != 0)
		snprintf(
		    c->note, sizeof c->note,
		    "out-of-bounds write: %s wrote into the guard band %s read-only input %.100s "
		    "(64 KiB around each buffer: an index past the end of a buffer lands "
		    "there); killed by SIGSEGV",
		    who(c), m->rc == 1 ? "before" : "after", m->text);
	else
		snprintf(c->note, sizeof c->note,
		         "input modified: %s wrote to its read-only input %s", who(c), m->text);
	return 1;
}

/* what the runner said before it hung up and nobody read (it died between
 * two calls: a request could not even be sent) */
static void drain_notes(struct cand *c)
{
	struct cm m;
	while (c->fd >= 0 && recv(c->fd, &m, sizeof m, MSG_DONTWAIT) == (ssize_t)sizeof m) {
		m.text[sizeof m.text - 1] = 0;
		take_note(c, &m);
	}
}

/* the runner is gone: reap it and say why into why; HC_CRASHED or
 * HC_MISBEHAVED.  A runner ended by SIGTERM without a word of its own was
 * stopped from outside: by SIGTERM to bubblewrap, which a candidate cannot
 * reach, or to the runner before it could say so (one that signals itself
 * says so first, CM_SIGNAL): the worker is being stopped with it */
static int runner_died(struct cand *c, char *why, size_t nWhy)
{
	if (!c->dead) {
		drain_notes(c);
		c->dead = 1;
		int st = 0;
		if (c->pid > 0) {
			/* a runner that hung up is usually ending by itself: its own
			 * status (passed on by the keeper) says why, as bubblewrap's exit
			 * 1 after its message; ours would only say SIGKILL.  A short
			 * grace, then the keeper is told to kill it all */
			pid_t r = 0;
			for (int i = 0; i < 50 && (r = waitpid(c->pid, &st, WNOHANG)) == 0; i++)
				usleep(2000);
			end_keeper(c);
			if (r != c->pid)
				r = waitpid(c->pid, &st, 0);
			if (r == c->pid && c->sandboxed && WIFEXITED(st) && WEXITSTATUS(st) > 128 &&
			    WEXITSTATUS(st) < 128 + NSIG) {
				/* bubblewrap, the sandbox's init, passes on a death by signal
				 * as exit status 128 + N (an exit() would have said so itself:
				 * CM_EXIT) */
				int sig = WEXITSTATUS(st) - 128;
				const char *ab = sigabbrev_np(sig);
				snprintf(c->zStatus, sizeof c->zStatus,
				         "killed by signal %d (SIG%s)", sig, ab ? ab : "?");
			} else if (r == c->pid) {
				proc_describe_status(st, c->zStatus, sizeof c->zStatus);
			}
			c->pid = 0;
			if (r > 0 && !c->noteKind && WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM)
				stopped_together();
		}
	}
	/* what the limits of its group did to it, if anything */
	struct cgroup_usage u;
	char lim[600];
	cgroup_usage(c->cg, &u);
	cgroup_usage_note(&u, lim, sizeof lim);
	if (c->noteKind) {
		snprintf(why, nWhy, "%s%s%s", c->note, lim[0] ? "; " : "", lim);
		return c->noteKind;
	}
	snprintf(why, nWhy, "%s's process ended while running it (%s)%s%s", who(c),
	         c->zStatus[0] ? c->zStatus : "no status", lim[0] ? "; " : "", lim);
	return HC_CRASHED;
}

/* every thread of process pid is stopped (or gone); 0, or -1 after a second */
static int wait_stopped(pid_t pid)
{
	char dir[64];
	snprintf(dir, sizeof dir, "/proc/%d/task", (int)pid);
	double t0 = now_s();
	for (int i = 0;; i++) {
		DIR *d = opendir(dir);
		if (!d)
			return 0; /* gone */
		int running = 0;
		struct dirent *e;
		while ((e = readdir(d)) && !running) {
			if (e->d_name[0] == '.')
				continue;
			char p[400], buf[512];
			snprintf(p, sizeof p, "%s/%s/stat", dir, e->d_name);
			int fd = open(p, O_RDONLY | O_CLOEXEC);
			ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
			if (fd >= 0)
				close(fd);
			if (n <= 0)
				continue;
			buf[n] = 0;
			const char *rp = strrchr(buf, ')');
			running = rp && rp[1] == ' ' && !strchr("TtZX", rp[2]);
		}
		closedir(d);
		if (!running)
			return 0;
		if (now_s() - t0 > 1)
			return -1;
		if (i > 16)
			usleep(100);
	}
}

/*
 * Hold the runner or let it go: nothing of the candidate runs while it is
 * held, its threads and any process of it.  The hold is asked for as soon
 * as a reply has come (hold_start: a write, or a signal) and waited for
 * once kloop has read its clock (hold_wait: harness_cand.settle), so that
 * the wait is in no round trip kloop times; every request waits for it
 * first too, so nothing is prepared while the runner may still run.  0, or
 * -1 with err.
 */
static int hold_start(struct cand *c, char *err)
{
	if (c->dead || c->held || c->stop == STOP_NONE)
		return 0;
	if (c->stop == STOP_CGROUP) {
		if (cgroup_freeze_start(c->cg, err) < 0)
			return -1;
	} else if (c->rpid > 0 && kill(c->rpid, SIGSTOP) < 0) {
		return 0; /* gone: the next call says so */
	}
	c->held = 1;
	return 0;
}

static int hold_wait(struct cand *c, char *err)
{
	if (c->dead || c->held == 2 || c->stop == STOP_NONE)
		return 0;
	if (!c->held && hold_start(c, err) < 0)
		return -1;
	if (c->stop == STOP_CGROUP) {
		if (cgroup_freeze_wait(c->cg, err) < 0)
			return -1;
	} else if (c->rpid > 0 && wait_stopped(c->rpid) < 0) {
		return kl_err(err, "the runner did not stop within a second of SIGSTOP");
	}
	c->held = 2;
	return 0;
}

static int let_go(struct cand *c, char *err)
{
	if (c->dead || !c->held || c->stop == STOP_NONE)
		return 0;
	if (c->stop == STOP_CGROUP) {
		if (cgroup_freeze(c->cg, 0, err) < 0)
			return -1;
	} else if (c->rpid > 0) {
		kill(c->rpid, SIGCONT);
	}
	c->held = 0;
	return 0;
}

/* hold (on: until it is held) or let go */
static int hold(struct cand *c, int on, char *err)
{
	return on ? hold_wait(c, err) : let_go(c, err);
}

/* the threads of the runner's process now */
static int runner_threads(const struct cand *c)
{
	char dir[64];
	snprintf(dir, sizeof dir, "/proc/%d/task", (int)c->rpid);
	DIR *d = c->rpid > 0 ? opendir(dir) : NULL;
	int n = 0;
	struct dirent *e;
	while (d && (e = readdir(d)))
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

/* send req, wait for its reply: 0, or HC_* with why.  The runner is let go
 * once the request is on its socket and held again once it has answered */
static int roundtrip(struct cand *c, struct cm *req, struct cm *rep, char *why, size_t nWhy)
{
	if (c->dead)
		return runner_died(c, why, nWhy);
	char herr[KL_ERRLEN];
	if (hold_wait(c, herr) < 0) {
		snprintf(why, nWhy, "kloop could not hold the runner between calls: %s", herr);
		return HC_CRASHED;
	}
	/* the request first, then let go: the runner wakes once, to a request
	 * already there (thawed first, it woke twice, and on a virtual machine
	 * the waits of the first wake-up, overlapping the worker's own send,
	 * were taken from honest short runs: 0 of 15 bounded).  The runner is
	 * SCHED_BATCH (cand_serve), so its wake-up does not preempt the worker
	 * before it sleeps in poll(), which would wait the whole run */
	req->seq = ++c->seq;
	if (send(c->fd, req, sizeof *req, MSG_NOSIGNAL) != (ssize_t)sizeof *req)
		return runner_died(c, why, nWhy);
	if (let_go(c, herr) < 0) {
		snprintf(why, nWhy, "kloop could not let the runner go: %s", herr);
		return HC_CRASHED;
	}
	double deadline = c->timeoutS > 0 ? now_s() + c->timeoutS : 0;
	for (;;) {
		struct pollfd p[2] = {{.fd = c->fd, .events = POLLIN}, {.fd = c->pollFd}};
		int ms = -1;
		if (deadline > 0) {
			double left = deadline - now_s();
			ms = left > 0 ? (int)(left * 1000) + 1 : 0;
		}
		int n = poll(p, c->pollFd >= 0 ? 2 : 1, ms);
		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0 && deadline > 0) {
			/* it never returned: killed with everything it started */
			end_keeper(c);
			if (c->pid > 0)
				waitpid(c->pid, NULL, 0);
			c->pid = 0;
			c->dead = 1;
			c->noteKind = HC_CRASHED;
			snprintf(c->note, sizeof c->note,
			         "it did not return within %g s (the --timeout limit); stopped",
			         c->timeoutS);
			return runner_died(c, why, nWhy);
		}
		if (c->pollFd >= 0 && (p[1].revents & (POLLHUP | POLLERR | POLLNVAL))) {
			/* whoever we work for is gone: so are we, and the candidate
			 * (its keeper sees our end of its life line close) */
			_exit(0);
		}
		if (!(p[0].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		struct cm m;
		ssize_t r = recv(c->fd, &m, sizeof m, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return runner_died(c, why, nWhy);
		if (r != (ssize_t)sizeof m) {
			snprintf(why, nWhy,
			         "%s wrote to kloop's control channel (a %zd-byte message)", who(c),
			         r);
			return HC_MISBEHAVED;
		}
		m.text[sizeof m.text - 1] = 0;
		if (m.op == CM_TERM) {
			/* the runner got SIGTERM from another process (a candidate
			 * that fakes this gets its job requeued, at most twice) */
			stopped_together();
		}
		if (take_note(c, &m))
			continue;
		if (m.seq != req->seq || (m.op != CM_REPLY && m.op != CM_FAIL)) {
			snprintf(why, nWhy,
			         "%s wrote to kloop's control channel (a message out of turn)",
			         who(c));
			return HC_MISBEHAVED;
		}
		if (m.op == CM_FAIL) {
			snprintf(why, nWhy, "%s", m.text);
			return HC_CRASHED;
		}
		if (hold_start(c, herr) < 0) {
			snprintf(why, nWhy, "kloop could not hold the runner between calls: %s",
			         herr);
			return HC_CRASHED;
		}
		*rep = m;
		return 0;
	}
}

static int c_call(struct harness_cand *hc, int mode, int *pRc, double *pMs, double *pMd, char *why,
                  size_t nWhy, char *err)
{
	struct cand_view *v = (struct cand_view *)hc;
	struct cand *c = v->c;
	struct cm req = {.op = CM_RUN, .mode = mode, .set = v->set}, rep;
	(void)err;
	int rc = roundtrip(c, &req, &rep, why, nWhy);
	if (rc)
		return rc;
	*pRc = rep.rc;
	*pMs = rep.ms;
	*pMd = rep.md;
	return 0;
}

static int c_frame(struct harness_cand *hc, double *pMd, char *why, size_t nWhy, char *err)
{
	struct cand_view *v = (struct cand_view *)hc;
	struct cand *c = v->c;
	struct cm req = {.op = CM_FRAME, .set = v->set}, rep;
	(void)err;
	int rc = roundtrip(c, &req, &rep, why, nWhy);
	if (!rc)
		*pMd = rep.md;
	return rc;
}

/* the deepest descendant of pid (through the keeper and bubblewrap: the
 * runner itself), or pid */
static pid_t runner_pid(pid_t pid)
{
	for (int depth = 0; depth < 5; depth++) {
		pid_t child;
		if (proc_children(pid, &child, 1) < 1)
			break;
		pid = child;
	}
	return pid;
}

static double c_sched_delay(struct harness_cand *hc, int *pAsleep)
{
	struct cand *c = ((struct cand_view *)hc)->c;
	char buf[512];
	ssize_t n = c->statFd >= 0 ? pread(c->statFd, buf, sizeof buf - 1, 0) : -1;
	*pAsleep = 0;
	if (n > 0) {
		buf[n] = 0;
		const char *rp = strrchr(buf, ')');
		*pAsleep = rp && rp[1] == ' ' && strchr("SDITt", rp[2]) && rp[2];
	}
	n = c->schedFd >= 0 ? pread(c->schedFd, buf, sizeof buf - 1, 0) : -1;
	if (n <= 0)
		return 0;
	buf[n] = 0;
	unsigned long long run = 0, wait = 0;
	return sscanf(buf, "%llu %llu", &run, &wait) == 2 ? (double)wait * 1e-6 : 0;
}

/* the runner's pid, and its /proc files that the harness reads around
 * each call (its waits and CPU time, whether it is asleep) */
static void watch_runner(struct cand *c)
{
	char p[64];
	c->rpid = runner_pid(c->pid);
	snprintf(p, sizeof p, "/proc/%d/schedstat", (int)c->rpid);
	c->schedFd = open(p, O_RDONLY | O_CLOEXEC);
	snprintf(p, sizeof p, "/proc/%d/stat", (int)c->rpid);
	c->statFd = open(p, O_RDONLY | O_CLOEXEC);
}

static int c_cpu(struct harness_cand *hc, double *pMain, double *pAll)
{
	struct cand *c = ((struct cand_view *)hc)->c;
	char buf[512];
	ssize_t n = c->schedFd >= 0 ? pread(c->schedFd, buf, sizeof buf - 1, 0) : -1;
	unsigned long long run = 0;
	*pMain = *pAll = NAN;
	if (n > 0) {
		buf[n] = 0;
		if (sscanf(buf, "%llu", &run) == 1)
			*pMain = (double)run * 1e-6;
	}
	long long us = cgroup_cpu_usec(c->cg);
	if (us >= 0)
		*pAll = (double)us * 1e-3;
	return isnan(*pMain) && isnan(*pAll) ? -1 : 0;
}

int cand_started_ahead(const struct cand *c)
{
	return c->ahead;
}

static void c_settle(struct harness_cand *hc)
{
	struct cand *c = ((struct cand_view *)hc)->c;
	char err[KL_ERRLEN];
	if (hold_wait(c, err) < 0)
		fprintf(stderr, "kloop-worker: %s\n", err);
}

static int c_threads_left(struct harness_cand *hc)
{
	struct cand *c = ((struct cand_view *)hc)->c;
	int n = runner_threads(c);
	return c->nTasks0 > 0 && n > c->nTasks0 ? n - c->nTasks0 : 0;
}

void cand_describe(const struct cand *c, char *buf, size_t n)
{
	static const char *stop[] = {[STOP_NONE] = "nothing",
	                             [STOP_CGROUP] = "its cgroup frozen",
	                             [STOP_SIGNAL] = "SIGSTOP"};
	snprintf(buf, n, "%s; held between calls by %s%s", c->zConfine[0] ? c->zConfine : "?",
	         stop[c->stop],
	         cgroup_has_memory(c->cg) ? "; memory and task limits of its cgroup" : "");
}

void cand_set_timeout(struct cand *c, double timeoutS)
{
	c->timeoutS = timeoutS > 0 ? timeoutS : 0;
}

struct harness_cand *cand_iface(struct cand *c, int k)
{
	return k >= 0 && k < c->nSet ? &c->views[k].hc : NULL;
}

void cand_free(struct cand *c)
{
	if (!c)
		return;
	if (c->pid > 0) {
		/* the keeper kills bubblewrap, its pid namespace's init (and so
		 * everything in it) and whatever else is left below, then exits.
		 * Waited for: on the GPU the runner's end is its device context's
		 * (60 to 100 ms), and a kernel still running there (a candidate
		 * that timed out) would share the device with the next one's
		 * timed runs; nor would ending it later make the next context
		 * start sooner, the driver makes and ends them one at a time */
		end_keeper(c);
		waitpid(c->pid, NULL, 0);
	}
	end_keeper(c);
	cgroup_free(c->cg);
	if (c->fd >= 0)
		close(c->fd);
	if (c->schedFd >= 0)
		close(c->schedFd);
	if (c->statFd >= 0)
		close(c->statFd);
	int twin = c->twin;
	free(c);
	if (Spare.policy == CAND_SPARE_AFTER && !twin)
		spare_start();
}

/*
 * Start a runner that makes its device context and then waits for its setup
 * (attach): NULL with err.  The keeper's fork and bubblewrap's (or the
 * runner's) exec, as cand_start does them.
 */
static struct cand *spawn(const struct cand_opts *o, int keepPid, int twin, char *err)
{
	char exe[4096];
	ssize_t ne = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (ne <= 0)
		return kl_err(err, "cannot find kloop-worker's own executable: %s",
		              strerror(errno)),
		       NULL;
	exe[ne] = 0;
	/* a control group for all of it: one memory and task limit, and frozen
	 * between calls (without one: per-process limits and SIGSTOP) */
	struct cgroup_limits lim = {o->memBytes, o->maxTasks};
	char cgErr[KL_ERRLEN];
	struct cgroup *cg = cgroup_new("runner", &lim, cgErr);
	unsigned long long asMb =
	    !cgroup_has_memory(cg) && !strcmp(o->zBackend, "host") ? o->memBytes >> 20 : 0;
	struct argv a = {0};
	build_argv(o, exe, keepPid, asMb, twin, &a);
	int sv[2], life[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		argv_free(&a);
		cgroup_free(cg);
		return kl_err(err, "socketpair: %s", strerror(errno)), NULL;
	}
	if (pipe2(life, O_CLOEXEC) < 0) {
		argv_free(&a);
		cgroup_free(cg);
		close(sv[0]), close(sv[1]);
		return kl_err(err, "pipe: %s", strerror(errno)), NULL;
	}
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid > 0)
		setpgid(pid, pid);
	if (pid == 0) {
		/* a keeper in its own process group (what kills this worker's group
		 * does not reach it), without PR_SET_PDEATHSIG: it outlives this
		 * worker to kill what it kept.  bubblewrap alone cannot promise
		 * that: its pid namespace's init is tied to it by PR_SET_PDEATHSIG
		 * only after the sandbox's setup, and before that it even waits
		 * for bubblewrap's go-ahead, forever if bubblewrap was killed */
		setpgid(0, 0);
		if (getppid() != parent)
			_exit(127);
		close(life[1]);
		proc_keep(life[0]); /* returns in bubblewrap's (or the runner's) process */
		/* into the group (the keeper stays out: it kills what is in it) */
		if (cg && cgroup_enter(cg) < 0) {
			dprintf(2, "kloop-worker: cannot enter the runner's cgroup: %s\n",
			        strerror(errno));
			_exit(127);
		}
		/* an environment of what the runner needs alone: bubblewrap is the
		 * sandbox's pid 1, and its environment is readable there */
		proc_env_clean();
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		for (int s = 1; s < NSIG; s++)
			signal(s, SIG_DFL);
		int nul = open("/dev/null", O_RDONLY);
		if (nul < 0 || dup2(nul, 0) < 0 || dup2(2, 1) < 0 || dup2(sv[1], 3) < 0)
			_exit(127);
		/* nothing else: not the protocol, not the session, not the cache */
		if (close_range(4, ~0u, 0) < 0)
			for (int fd = 4; fd < 65536; fd++)
				if (fcntl(fd, F_GETFD) >= 0)
					close(fd);
		execvp(a.v[0], a.v);
		dprintf(2, "kloop-worker: cannot run %s: %s\n", a.v[0], strerror(errno));
		_exit(127);
	}
	argv_free(&a);
	close(sv[1]);
	close(life[0]);
	if (pid < 0) {
		close(sv[0]);
		close(life[1]);
		cgroup_free(cg);
		return kl_err(err, "cannot fork: %s", strerror(errno)), NULL;
	}
	struct cand *c = xcalloc(1, sizeof *c);
	c->cg = cg;
	c->stop = cgroup_has_freeze(cg) ? STOP_CGROUP : STOP_SIGNAL;
	c->fd = sv[0];
	c->pid = pid;
	c->lifeFd = life[1];
	c->pollFd = o->pollFd;
	c->schedFd = c->statFd = -1;
	c->sandboxed = o->sandbox;
	for (int k = 0; k < CAND_MAX_HARNESSES; k++) {
		struct cand_view *v = &c->views[k];
		v->c = c;
		v->set = k;
		v->hc.call = c_call;
		v->hc.frame = c_frame;
		v->hc.sched_delay = c_sched_delay;
		v->hc.cpu = c_cpu;
		v->hc.threads_left = c_threads_left;
		v->hc.settle = c_settle;
	}
	return c;
}

/* the runner's next message, whatever it is: 1, or 0 when it hung up */
static int next_msg(struct cand *c, struct cm *rep)
{
	for (;;) {
		struct pollfd p = {.fd = c->fd, .events = POLLIN};
		if (poll(&p, 1, -1) < 0 && errno == EINTR)
			continue;
		ssize_t r = recv(c->fd, rep, sizeof *rep, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r == (ssize_t)sizeof *rep) {
			rep->text[sizeof rep->text - 1] = 0;
			if (rep->op == CM_TERM)
				stopped_together(); /* as in a call (roundtrip) */
		}
		return r == (ssize_t)sizeof *rep;
	}
}

/* why the runner did not come to be ready (rep: its last message, when
 * got), into err; *pLoadErr when the object is at fault */
static void not_ready(struct cand *c, const struct cm *rep, int got, int *pLoadErr, char *err)
{
	if (got && rep->op == CM_LOADERR) {
		*pLoadErr = rep->rc == 0;
		kl_err(err, "%s", rep->text);
	} else if (got && (rep->op == CM_SIGNAL || rep->op == CM_EXIT || rep->op == CM_INPUT)) {
		/* its constructors died: a crash while loading */
		if (rep->op == CM_EXIT)
			kl_err(err, "%s called exit(%d) while being loaded", who(c), (int)rep->rc);
		else
			kl_err(err, "%s was killed by %s while being loaded", who(c), rep->text);
	} else {
		char why[KL_ERRLEN];
		runner_died(c, why, sizeof why);
		kl_err(err, "%s's process did not start: %s%s", who(c), why,
		       strstr(c->zStatus, "status 127")
		           ? "; status 127 is the loader's or exec's: the runner program or "
		             "a library it needs (LD_LIBRARY_PATH) was not found, see the "
		             "worker's messages"
		           : "");
	}
}

/*
 * Hand the started runner c its setup (the object and the buffers); once
 * it has mapped them, take the empty frames of the clock's bound on each
 * harness of ah[] (harness_preload: before the candidate is loaded, so it
 * cannot lengthen them), then have it confine itself and load the object.
 * c, ready and held; or NULL (c freed) with err, *pLoadErr set when the
 * object is at fault.  *pStarted: the runner had started (it said anything
 * at all), so a failure is not the start's.
 */
static struct cand *attach(struct cand *c, const struct cm_setup *su, const int *fds, int nFds,
                           struct harness *const *ah, int *pLoadErr, int *pStarted, char *err)
{
	*pStarted = 0;
	c->nSet = (int)su->nSet;
	if (send_with_fds(c->fd, su, sizeof *su, fds, nFds) < 0) {
		char why[KL_ERRLEN];
		runner_died(c, why, sizeof why);
		kl_err(err, "%s's process did not start: %s", who(c), why);
		cand_free(c);
		return NULL;
	}
	struct cm rep;
	int got = next_msg(c, &rep);
	*pStarted = got;
	if (!got || rep.op != CM_MAPPED) {
		not_ready(c, &rep, got, pLoadErr, err);
		cand_free(c);
		return NULL;
	}
	watch_runner(c);
	char why[KL_ERRLEN];
	if (hold(c, 1, err) < 0) {
		cand_free(c);
		return NULL;
	}
	/* the frames the clock's bound subtracts, from a runner that holds
	 * nothing of the candidate yet */
	for (int k = 0; k < c->nSet; k++) {
		int rc = harness_preload(ah[k], &c->views[k].hc, why, sizeof why, err);
		if (rc > 0)
			kl_err(err, "%s's process failed before the load: %s", who(c), why);
		if (rc) {
			cand_free(c);
			return NULL;
		}
	}
	struct cm load = {.op = CM_LOAD, .seq = ++c->seq};
	if (send(c->fd, &load, sizeof load, MSG_NOSIGNAL) != (ssize_t)sizeof load ||
	    hold(c, 0, err) < 0) {
		not_ready(c, &rep, 0, pLoadErr, err);
		cand_free(c);
		return NULL;
	}
	got = next_msg(c, &rep);
	if (!got || rep.op != CM_READY) {
		not_ready(c, &rep, got, pLoadErr, err);
		cand_free(c);
		return NULL;
	}
	snprintf(c->zConfine, sizeof c->zConfine, "%s", rep.text);
	if (hold(c, 1, err) < 0) {
		cand_free(c);
		return NULL;
	}
	c->nTasks0 = runner_threads(c);
	return c;
}

/* ---- the spare runner ---- */

/* what a runner was started for: a spare serves a candidate of the same */
static char *runner_key(const struct cand_opts *o, int keepPid)
{
	strbuf b = STRBUF_INIT;
	sb_addf(&b, "%s|%d|%d|%d", o->zBackend, o->dev, o->sandbox, keepPid);
	for (char *const *d = o->azLibDirs; d && *d; d++)
		sb_addf(&b, "|%s", *d);
	return sb_detach(&b);
}

/* kill the spare, if any */
static void spare_drop(void)
{
	cand_free(Spare.c);
	Spare.c = NULL;
}

void cand_spare_policy(int policy)
{
	Spare.policy = policy;
	if (policy == CAND_SPARE_OFF)
		spare_drop();
}

/* the options of the runner being started, zKey theirs (taken): the next
 * spare's */
static void keep_opts(const struct cand_opts *o, int keepPid, char *zKey)
{
	if (Spare.zKey) {
		free((char *)Spare.o.zBackend);
		for (char *const *d = Spare.o.azLibDirs; d && *d; d++)
			free(*d);
		free((void *)Spare.o.azLibDirs);
		free(Spare.zKey);
	}
	Spare.o = *o;
	Spare.o.zBackend = xstrdup(o->zBackend);
	size_t n = 0;
	while (o->azLibDirs && o->azLibDirs[n])
		n++;
	char **v = xcalloc(n + 1, sizeof *v);
	for (size_t i = 0; i < n; i++)
		v[i] = xstrdup(o->azLibDirs[i]);
	Spare.o.azLibDirs = v;
	Spare.keepPid = keepPid;
	Spare.zKey = zKey;
}

/* start a spare for the options of the last runner, unless one is there */
static void spare_start(void)
{
	char err[KL_ERRLEN];
	if (Spare.policy != CAND_SPARE_OFF && !Spare.c && Spare.zKey)
		Spare.c = spawn(&Spare.o, Spare.keepPid, 0, err);
}

struct cand *cand_start(const struct cand_opts *o, struct harness *const *ah, int nH, int soFd,
                        int *pLoadErr, char *err)
{
	*pLoadErr = 0;
	if (nH < 1 || nH > CAND_MAX_HARNESSES)
		return kl_err(err, "a runner serves 1 to %d harnesses, not %d", CAND_MAX_HARNESSES,
		              nH),
		       NULL;
	struct harness_buf hb[MAX_SETUP_BUF];
	int set[MAX_SETUP_BUF], nBuf = 0;
	for (int k = 0; k < nH; k++) {
		int n = harness_buffers(ah[k], hb + nBuf);
		for (int i = 0; i < n; i++)
			set[nBuf + i] = k;
		nBuf += n;
	}
	struct cm_setup *su = xcalloc(1, sizeof *su);
	int fds[MAX_SETUP_BUF + 1], nFds = 0;
	fds[nFds++] = soFd;
	su->op = CM_SETUP;
	su->nBuf = (uint32_t)nBuf;
	su->nSet = (uint32_t)nH;
	for (int i = 0; i < nBuf; i++) {
		struct cm_buf *cb = &su->buf[i];
		cb->set = set[i];
		memcpy(cb->handle, hb[i].sh.handle, sizeof cb->handle);
		cb->n = hb[i].sh.n;
		cb->off = hb[i].off;
		cb->dtype = (int32_t)hb[i].t.dtype;
		cb->ndim = hb[i].t.ndim;
		cb->input = hb[i].input;
		memcpy(cb->shape, hb[i].t.shape, sizeof cb->shape);
		snprintf(cb->name, sizeof cb->name, "%s", hb[i].zName ? hb[i].zName : "?");
		if (hb[i].sh.fd >= 0 && hb[i].sh.n) {
			cb->hasFd = 1;
			fds[nFds++] = hb[i].sh.fd;
		}
	}
	int keepPid = 0;
	for (int i = 0; i < nBuf; i++)
		if (hb[i].sh.n && hb[i].sh.fd < 0 && !strcmp(o->zBackend, "cuda"))
			keepPid = 1;
	/* the spare, when it was started for the same options; else a runner
	 * now (and the options kept for the next spare) */
	char *zKey = runner_key(o, keepPid);
	if (Spare.zKey && !strcmp(Spare.zKey, zKey)) {
		free(zKey);
	} else {
		spare_drop();
		keep_opts(o, keepPid, zKey);
	}
	struct cand *c = Spare.c;
	int spare = c != NULL;
	Spare.c = NULL;
	for (;;) {
		int started = 0;
		if (!c && !(c = spawn(o, keepPid, 0, err)))
			break;
		c->pollFd = o->pollFd;
		c->reference = o->reference;
		cand_use_twin(c, o->twin);
		for (int k = 0; k < CAND_MAX_HARNESSES; k++)
			c->views[k].hc.trusted = o->reference;
		c->ahead = spare;
		c = attach(c, su, fds, nFds, ah, pLoadErr, &started, err);
		if (c || !spare || started)
			break;
		/* the spare had died before its turn (its start failed, or it was
		 * killed): a runner of its own, whose failure is the answer */
		*pLoadErr = 0;
		spare = 0;
	}
	free(su);
	if (c && Spare.policy == CAND_SPARE_READY)
		spare_start();
	return c;
}

struct cand *cand_twin(const struct cand_opts *o, char *err)
{
	struct cand_opts to = *o;
	to.azLibDirs = NULL;
	to.reference = 0;
	struct cand *c = spawn(&to, 0, 1, err);
	if (!c)
		return NULL;
	c->twin = 1;
	c->nSet = CAND_MAX_HARNESSES;
	struct cm_setup *su = xcalloc(1, sizeof *su);
	*su = (struct cm_setup){.op = CM_SETUP, .nSet = CAND_MAX_HARNESSES, .twin = 1};
	int sent = send_with_fds(c->fd, su, sizeof *su, NULL, 0) == 0;
	free(su);
	struct cm rep;
	int pl = 0;
	if (!sent || !next_msg(c, &rep) || rep.op != CM_MAPPED) {
		not_ready(c, &rep, 0, &pl, err);
		cand_free(c);
		return NULL;
	}
	watch_runner(c);
	if (hold(c, 1, err) < 0) {
		cand_free(c);
		return NULL;
	}
	return c;
}

int cand_alive(const struct cand *c)
{
	return c && !c->dead;
}

void cand_use_twin(struct cand *c, struct cand *twin)
{
	for (int k = 0; k < CAND_MAX_HARNESSES; k++)
		c->views[k].hc.twin = cand_alive(twin) ? &twin->views[k].hc : NULL;
}

/* ---- the runner's side ---- */

static struct {
	int fd;
	volatile int inCand;
	int nBuf;
	struct cm_buf buf[MAX_SETUP_BUF];
	void *base[MAX_SETUP_BUF];
} S;

static void say(int op, int rc, const char *text)
{
	struct cm m = {.op = (uint32_t)op, .rc = rc};
	if (text) {
		size_t n = strlen(text);
		n = n < sizeof m.text - 1 ? n : sizeof m.text - 1;
		memcpy(m.text, text, n);
	}
	(void)!send(S.fd, &m, sizeof m, MSG_NOSIGNAL);
}

static void on_fatal(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if (sig == SIGTERM && si->si_code == SI_USER && si->si_pid != getpid()) {
		/* sent by another process: the job is being stopped, not a crash */
		say(CM_TERM, sig, NULL);
		signal(sig, SIG_DFL);
		raise(sig);
	}
	if (sig == SIGSEGV || sig == SIGBUS) {
		char *a = si->si_addr;
		for (int i = 0; i < S.nBuf; i++)
			if (S.buf[i].input && S.base[i] && a >= (char *)S.base[i] &&
			    a < (char *)S.base[i] + S.buf[i].n) {
				/* the tensor itself, or the guard band around it (its
				 * mapping is guard, tensor, guard: an index past another
				 * buffer's end lands there) */
				char *p0 = (char *)S.base[i] + S.buf[i].off;
				char *p1 = (char *)S.base[i] + S.buf[i].n - S.buf[i].off;
				say(CM_INPUT, a < p0 ? 1 : a >= p1 ? 2 : 0, S.buf[i].name);
				break;
			}
	}
	char name[32];
	const char *ab = sigabbrev_np(sig);
	snprintf(name, sizeof name, "SIG%s", ab ? ab : "?");
	say(CM_SIGNAL, sig, name);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void on_exit_hook(int status, void *arg)
{
	(void)arg;
	if (S.inCand)
		say(CM_EXIT, status, NULL);
}

/* confine this process (confine.h), then load the candidate from soFd:
 * its kl_run, after CM_READY with what was confined; NULL after CM_LOADERR */
static kl_run_fn load_candidate(int soFd)
{
	char err[KL_ERRLEN], path[64];
	struct confine_report cr;
	if (confine_runner(&cr, err) < 0) {
		char msg[KL_ERRLEN + 64];
		snprintf(msg, sizeof msg, "kloop could not confine the runner: %s", err);
		say(CM_LOADERR, 1, msg);
		return NULL;
	}
	snprintf(path, sizeof path, "/proc/self/fd/%d", soFd);
	S.inCand = 1; /* its constructors are the candidate's code */
	void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	S.inCand = 0;
	if (!dl) {
		snprintf(err, KL_ERRLEN, "the shared object could not be loaded: %s", dlerror());
		say(CM_LOADERR, 0, err);
		return NULL;
	}
	kl_run_fn fn = (kl_run_fn)(uintptr_t)dlsym(dl, "kl_run");
	if (!fn) {
		say(CM_LOADERR, 0,
		    "the candidate does not define kl_run (it must have C linkage: extern \"C\" in "
		    "C++ and CUDA)");
		return NULL;
	}
	char what[400];
	if (cr.landlock)
		snprintf(what, sizeof what, "seccomp filter (%d ranges kept), landlock (ABI %d)",
		         cr.nRanges, cr.landlockAbi);
	else
		snprintf(what, sizeof what, "%s (%d ranges kept); %s",
		         cr.seccomp ? "seccomp filter" : "no seccomp filter", cr.nRanges, cr.zNote);
	say(CM_READY, 0, what);
	return fn;
}

int cand_serve(int fd, const char *zBackend, int dev)
{
	char err[KL_ERRLEN];
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	S.fd = fd;
	static char stack[1 << 16];
	stack_t ss = {.ss_sp = stack, .ss_size = sizeof stack};
	sigaltstack(&ss, NULL);
	int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGSYS, SIGTERM, SIGXCPU, SIGXFSZ};
	for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) {
		struct sigaction sa = {0};
		sa.sa_sigaction = on_fatal;
		sa.sa_flags = SA_ONSTACK | SA_RESETHAND | SA_SIGINFO;
		sigaction(sigs[i], &sa, NULL);
	}
	on_exit(on_exit_hook, NULL);
	/* woken by kloop's hold being let go, the runner must not preempt the
	 * worker before that sleeps in poll(): the worker's wait would overlap
	 * the whole run and be taken from it (batch tasks do not preempt on
	 * wake-up); its threads inherit this, and on an idle core nothing else
	 * changes */
	struct sched_param sp = {0};
	sched_setscheduler(0, SCHED_BATCH, &sp);
	/* the device context first: a spare runner makes it before its
	 * candidate is known (cand_spare_policy), and says why it failed once
	 * the setup comes */
	int cuda = !strcmp(zBackend, "cuda");
	char beErr[KL_ERRLEN];
	if (cuda)
		backend_cuda_for_runner();
	struct backend *b = cuda ? backend_cuda_new(dev, beErr) : backend_host_new(beErr);
	struct cm_setup *su = xcalloc(1, sizeof *su);
	int fds[MAX_SETUP_BUF + 1], nFds;
	ssize_t got = recv_with_fds(fd, su, sizeof *su, fds, &nFds);
	int twin = got == (ssize_t)sizeof *su && su->twin && su->nBuf == 0;
	if (got != (ssize_t)sizeof *su || su->op != CM_SETUP || (nFds < 1 && !twin) ||
	    su->nBuf > MAX_SETUP_BUF || su->nSet < 1 || su->nSet > CAND_MAX_HARNESSES) {
		snprintf(err, KL_ERRLEN,
		         "the runner's setup message was malformed (%zd bytes of %zu, %d file "
		         "descriptors%s)",
		         got, sizeof *su, nFds, got < 0 ? ", receive failed" : "");
		say(CM_LOADERR, 1, err);
		return 3;
	}
	if (!b) {
		say(CM_LOADERR, 1, beErr);
		return 3;
	}
	/* each harness's tensors, kl_run's arguments when a run names it */
	static kl_tensor in[CAND_MAX_HARNESSES][TASK_MAX_TENSORS],
	    out[CAND_MAX_HARNESSES][TASK_MAX_TENSORS];
	int nIn[CAND_MAX_HARNESSES] = {0}, nOut[CAND_MAX_HARNESSES] = {0}, k = 1;
	int nSet = (int)su->nSet;
	S.nBuf = (int)su->nBuf;
	for (int i = 0; i < S.nBuf; i++) {
		struct cm_buf *cb = &su->buf[i];
		int q = cb->set;
		if (q < 0 || q >= nSet || (cb->input ? nIn[q] : nOut[q]) >= TASK_MAX_TENSORS) {
			say(CM_LOADERR, 1,
			    "the runner's setup message was malformed (a buffer's set)");
			return 3;
		}
		struct kl_share sh = {.fd = cb->hasFd && k < nFds ? fds[k++] : -1, .n = cb->n};
		memcpy(sh.handle, cb->handle, sizeof sh.handle);
		void *p = b->open_shared(b, &sh, cb->input, err);
		if (!p) {
			say(CM_LOADERR, 1, err);
			return 3;
		}
		if (sh.fd >= 0)
			close(sh.fd);
		S.buf[i] = *cb;
		S.base[i] = p;
		kl_tensor *t = cb->input ? &in[q][nIn[q]++] : &out[q][nOut[q]++];
		t->data = (char *)p + cb->off;
		t->dtype = (kl_dtype)cb->dtype;
		t->ndim = cb->ndim;
		memcpy(t->shape, cb->shape, sizeof t->shape);
	}
	free(su);
	/* mapped: the trusted side takes its empty frames now, then asks for
	 * the load */
	say(CM_MAPPED, 0, NULL);
	kl_run_fn fn = NULL;
	for (;;) {
		struct cm m;
		ssize_t r = recv(fd, &m, sizeof m, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r != (ssize_t)sizeof m)
			_exit(0); /* the trusted side hung up */
		if (twin && m.op != CM_FRAME)
			_exit(3); /* the clock's twin never loads anything */
		if (m.op == CM_LOAD && !fn) {
			if (!(fn = load_candidate(fds[0])))
				return 3;
			continue;
		}
		struct cm rep = {.op = CM_REPLY, .seq = m.seq};
		int bad = 0, q = m.set;
		if (q < 0 || q >= nSet || (m.op == CM_RUN && !fn))
			_exit(3);
		if (m.op == CM_FRAME) {
			double ms;
			/* a run without kl_run: the same flush, start and stop */
			bad = (cuda && b->flush(b, err) < 0) || b->sync(b, err) < 0 ||
			      b->timer_start(b, err) < 0 ||
			      (b->launch_empty && b->launch_empty(b, err) < 0) ||
			      b->timer_stop(b, &ms, &rep.md, err) < 0;
		} else if (m.op == CM_RUN) {
			/* on the GPU, the caches are flushed in this context too (its
			 * persisting L2 lines are its own), right before the start event */
			if (m.mode != HC_UNTIMED && cuda && b->flush(b, err) < 0)
				bad = 1;
			if (!bad && m.mode == HC_STRICT && b->sync(b, err) < 0)
				bad = 1;
			if (!bad && m.mode != HC_UNTIMED && b->timer_start(b, err) < 0)
				bad = 1;
			if (!bad) {
				S.inCand = 1;
				rep.rc = fn(in[q], nIn[q], out[q], nOut[q], b->stream);
				S.inCand = 0;
			}
			if (!bad && m.mode != HC_UNTIMED &&
			    b->timer_stop(b, &rep.ms, &rep.md, err) < 0)
				bad = 1;
			if (!bad && b->sync(b, err) < 0)
				bad = 1;
		} else {
			_exit(3);
		}
		if (bad) {
			rep.op = CM_FAIL;
			snprintf(rep.text, sizeof rep.text, "%.300s%s", err,
			         b->fatal ? " (the device context is lost)" : "");
		}
		if (send(fd, &rep, sizeof rep, MSG_NOSIGNAL) != (ssize_t)sizeof rep)
			_exit(0);
		if (b->fatal)
			_exit(3);
	}
}
