/*
 * cand.c - the candidate in its own sandboxed process, the trusted side's
 * calls: the runner held between calls, each request's round trip, the
 * diagnosis of a runner that died, the harness's view of it, its end.
 * Messages are fixed-size records on a SOCK_SEQPACKET socketpair; every
 * reply carries the request's sequence number, so that anything the
 * candidate writes to the channel itself is noticed.  Starting a runner
 * (and its end, cand_free, which starts a spare after it): cand_start.c;
 * the runner's side: cand_runner.c (cand_priv.h).
 */
#include "cand_priv.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proc.h"
#include "util.h"

/* empty frames taken before the candidate is loaded, for the clock's bound
 * (harness_preload), after this many warm-up frames */
#define PRE_WARM 2

/* tell the keeper to kill the runner with everything below it (it exits
 * once all of it is gone, as bubblewrap did) */
static void end_keeper(struct cand_proc *c)
{
	if (c->lifeFd >= 0)
		close(c->lifeFd);
	c->lifeFd = -1;
}

/* the runner and this worker are being stopped together (Slurm's scancel
 * signals every process of the step, in an order of its own): no verdict,
 * this worker ends as if the signal had reached it first, and kloop runs
 * the job elsewhere */
_Noreturn void cand_stopped_together(void)
{
	proc_die_of(SIGTERM);
}

/*
 * A message of the runner's own about its end (the signal it died of, an
 * exit(), a write to an input, SIGTERM from outside) into c's note; 1 if m
 * was one.  CM_TERM does not return: the worker is being stopped with it.
 */
static int take_note(struct cand_proc *c, const struct cm *m)
{
	if (m->op == CM_TERM)
		cand_stopped_together();
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
static void drain_notes(struct cand_proc *c)
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
int cand_runner_died(struct cand_proc *c, char *why, size_t nWhy)
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
				cand_stopped_together();
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
static int hold_start(struct cand_proc *c, char *err)
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

static int hold_wait(struct cand_proc *c, char *err)
{
	if (c->dead || c->held == 2 || c->stop == STOP_NONE)
		return 0;
	double t0 = now_s();
	if (!c->held && hold_start(c, err) < 0)
		return -1;
	if (c->stop == STOP_CGROUP) {
		if (cgroup_freeze_wait(c->cg, err) < 0)
			return -1;
	} else if (c->rpid > 0 && wait_stopped(c->rpid) < 0) {
		return kl_err(err, "the runner did not stop within a second of SIGSTOP");
	}
	c->held = 2;
	step_trace(c->stop == STOP_CGROUP ? "runner held (its group frozen)"
	                                  : "runner held (SIGSTOP)",
	           t0);
	return 0;
}

static int let_go(struct cand_proc *c, char *err)
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
int cand_hold(struct cand_proc *c, int on, char *err)
{
	return on ? hold_wait(c, err) : let_go(c, err);
}

/* the threads of the runner's process now */
int cand_runner_threads(const struct cand_proc *c)
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

/* the relay of the runners' output (cand_set_relay), or -1 */
static int relayFd = -1;
static void (*relayDrain)(void);

void cand_set_relay(int fd, void (*drain)(void))
{
	relayFd = fd;
	relayDrain = drain;
}

int cand_relay_fd(void)
{
	return relayFd;
}

void cand_relay_drain(void)
{
	if (relayDrain)
		relayDrain();
}

/* send req, wait for its reply: 0, or HC_* with why.  The runner is let go
 * once the request is on its socket and held again once it has answered */
static int roundtrip(struct cand_proc *c, struct cm *req, struct cm *rep, char *why, size_t nWhy)
{
	if (c->dead)
		return cand_runner_died(c, why, nWhy);
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
	double tTrip = now_s();
	if (send(c->fd, req, sizeof *req, MSG_NOSIGNAL) != (ssize_t)sizeof *req)
		return cand_runner_died(c, why, nWhy);
	if (let_go(c, herr) < 0) {
		snprintf(why, nWhy, "kloop could not let the runner go: %s", herr);
		return HC_CRASHED;
	}
	double deadline = c->timeoutS > 0 ? now_s() + c->timeoutS : 0;
	for (;;) {
		struct pollfd p[3] = {{.fd = c->fd, .events = POLLIN},
		                      {.fd = c->pollFd},
		                      {.fd = relayFd, .events = POLLIN}};
		int ms = -1;
		if (deadline > 0) {
			double left = deadline - now_s();
			ms = left > 0 ? (int)(left * 1000) + 1 : 0;
		}
		int n = poll(p, 3, ms);
		if (n < 0 && errno == EINTR)
			continue;
		if (n > 0 && (p[2].revents & (POLLIN | POLLHUP)))
			relayDrain(); /* what the runner writes, passed on while it runs */
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
			return cand_runner_died(c, why, nWhy);
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
			return cand_runner_died(c, why, nWhy);
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
			cand_stopped_together();
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
		step_trace(req->op == CM_RUN ? "runner round trip: a run" : "runner round trip",
		           tTrip);
		return 0;
	}
}

static int c_call(struct harness_cand *hc, int mode, int *pRc, double *pMs, double *pMd, char *why,
                  size_t nWhy, char *err)
{
	struct cand_view *v = (struct cand_view *)hc;
	struct cand_proc *c = v->c;
	struct cm req = {.op = CM_RUN, .mode = mode, .set = v->set}, rep;
	(void)err;
	int rc = roundtrip(c, &req, &rep, why, nWhy);
	if (rc)
		return rc;
	*pRc = rep.rc;
	*pMs = rep.ms;
	*pMd = rep.md;
	if (mode == HC_FAST && rep.kn > 0) {
		int gap = 0;
		*pMs = cand_kernel_time(rep.ms, rep.me, rep.kn, &gap);
		v->nKernel += !gap;
		v->nEvents += gap;
		v->nGap += gap;
	} else if (mode == HC_FAST) {
		v->nEvents++;
	}
	/* a profiled run: its kernels' durations, or none, and why */
	hc->zProfNote[0] = 0;
	hc->profKernels = 0;
	if (mode == HC_PROFILED) {
		*pMs = rep.kn > 0 ? rep.ms : -1;
		hc->profKernels = rep.kn > 0 ? rep.kn : 0;
		for (int i = 0; i < HARNESS_PROF_KERNELS; i++)
			hc->profKernelMs[i] = rep.kn > i ? rep.kms[i] : -1;
		if (rep.kn <= 0)
			snprintf(hc->zProfNote, sizeof hc->zProfNote, "%.*s",
			         (int)sizeof hc->zProfNote - 1, rep.rc ? "" : rep.text);
	}
	snprintf(hc->zRunError, sizeof hc->zRunError, "%.*s", (int)sizeof hc->zRunError - 1,
	         rep.rc ? rep.text : "");
	hc->copied |= rep.copied;
	return 0;
}

double cand_kernel_time(double kernelMs, double eventMs, int nKernels, int *pGap)
{
	double allow = 0.005 * nKernels + 0.1 * kernelMs;
	*pGap = !(kernelMs >= 0) || !(eventMs >= kernelMs - 1e-6) || eventMs - kernelMs > allow;
	if (!*pGap)
		return kernelMs;
	return eventMs > kernelMs ? eventMs : kernelMs;
}

static void c_methods(struct harness_cand *hc, int *pKernel, int *pEvents, int *pGap)
{
	struct cand_view *v = (struct cand_view *)hc;
	*pKernel = v->nKernel;
	*pEvents = v->nEvents;
	*pGap = v->nGap;
}

static int c_frame(struct harness_cand *hc, double *pMd, char *why, size_t nWhy, char *err)
{
	struct cand_view *v = (struct cand_view *)hc;
	struct cand_proc *c = v->c;
	struct cm req = {.op = CM_FRAME, .set = v->set}, rep;
	(void)err;
	int rc = roundtrip(c, &req, &rep, why, nWhy);
	if (!rc)
		*pMd = rep.md;
	return rc;
}

/*
 * A request only kloop's runner answers (CM_BATCH, CM_TOUCH): a runner
 * taken over by its candidate (forge_reply: kl_run never returns, and
 * answers kloop's socket itself) that does not know the request answers
 * something else (a reply for other than want runs), or ends: neither is
 * what a runner does, and the time it reported is no time at all.  A
 * crash of the candidate (a signal, exit(), a device error: the runner's
 * own words) stays a crash.  zWhat names the request.
 */
static int runner_request(struct cand_proc *c, struct cm *req, struct cm *rep, int want,
                          const char *zWhat, char *why, size_t nWhy)
{
	char w[900];
	int rc = roundtrip(c, req, rep, w, sizeof w);
	if (!rc && rep->set != want) {
		snprintf(
		    why, nWhy,
		    "timing inconsistent: the candidate's runner answered %s with a reply for %d "
		    "(kloop's runner answers with the runs it did): the candidate has taken its "
		    "runner over",
		    zWhat, (int)rep->set);
		return HC_MISBEHAVED;
	}
	if (rc == HC_CRASHED && c->dead && !c->noteKind && !strncmp(c->zStatus, "exited", 6)) {
		snprintf(
		    why, nWhy,
		    "timing inconsistent: the candidate's runner ended instead of answering %s "
		    "(%s), which kloop's runner answers: the candidate has taken its runner over",
		    zWhat, c->zStatus);
		return HC_MISBEHAVED;
	}
	if (rc)
		snprintf(why, nWhy, "in %s: %s", zWhat, w);
	return rc;
}

/* a batch (harness_cand.batch, CM_BATCH) */
static int c_batch(struct harness_cand *hc, int mode, int n, double *pMs, double *pMd, char *why,
                   size_t nWhy, char *err)
{
	struct cand_view *v = (struct cand_view *)hc;
	struct cm req = {.op = CM_BATCH, .mode = mode, .rc = n, .set = v->set}, rep;
	char zWhat[64];
	(void)err;
	snprintf(zWhat, sizeof zWhat, "kloop's batch of %d runs", n);
	int rc = runner_request(v->c, &req, &rep, n, zWhat, why, nWhy);
	if (!rc) {
		*pMs = rep.ms;
		*pMd = rep.md;
		hc->copied |= rep.copied;
	}
	return rc;
}

/* the ring's first slots mapped before a batch (harness_cand.touch, CM_TOUCH) */
static int c_touch(struct harness_cand *hc, int n, char *why, size_t nWhy, char *err)
{
	struct cand_view *v = (struct cand_view *)hc;
	struct cm req = {.op = CM_TOUCH, .rc = n, .set = v->set}, rep;
	char zWhat[96];
	(void)err;
	snprintf(zWhat, sizeof zWhat, "kloop's request to map the slots of its batch of %d runs",
	         n);
	return runner_request(v->c, &req, &rep, n, zWhat, why, nWhy);
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
	struct cand_proc *c = ((struct cand_view *)hc)->c;
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
void cand_watch_runner(struct cand_proc *c)
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
	struct cand_proc *c = ((struct cand_view *)hc)->c;
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

int cand_started_ahead(const struct cand_proc *c)
{
	return c->ahead;
}

static void c_settle(struct harness_cand *hc)
{
	struct cand_proc *c = ((struct cand_view *)hc)->c;
	char err[KL_ERRLEN];
	if (hold_wait(c, err) < 0)
		fprintf(stderr, "kloop-worker: %s\n", err);
}

static int c_threads_left(struct harness_cand *hc)
{
	struct cand_proc *c = ((struct cand_view *)hc)->c;
	int n = cand_runner_threads(c);
	return c->nTasks0 > 0 && n > c->nTasks0 ? n - c->nTasks0 : 0;
}

void cand_describe(const struct cand_proc *c, char *buf, size_t n)
{
	static const char *stop[] = {[STOP_NONE] = "nothing",
	                             [STOP_CGROUP] = "its cgroup frozen",
	                             [STOP_SIGNAL] = "SIGSTOP"};
	snprintf(buf, n, "%s; held between calls by %s%s", c->zConfine[0] ? c->zConfine : "?",
	         stop[c->stop],
	         cgroup_has_memory(c->cg) ? "; memory and task limits of its cgroup" : "");
}

void cand_set_timeout(struct cand_proc *c, double timeoutS)
{
	c->timeoutS = timeoutS > 0 ? timeoutS : 0;
}

void cand_views_init(struct cand_proc *c)
{
	for (int k = 0; k < CAND_MAX_HARNESSES; k++) {
		struct cand_view *v = &c->views[k];
		v->c = c;
		v->set = k;
		v->hc.call = c_call;
		v->hc.methods = c_methods;
		v->hc.frame = c_frame;
		v->hc.batch = c_batch;
		v->hc.touch = c_touch;
		v->hc.sched_delay = c_sched_delay;
		v->hc.cpu = c_cpu;
		v->hc.threads_left = c_threads_left;
		v->hc.settle = c_settle;
	}
}

struct harness_cand *cand_iface(struct cand_proc *c, int k)
{
	return k >= 0 && k < c->nSet ? &c->views[k].hc : NULL;
}

void cand_destroy(struct cand_proc *c)
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
	free(c);
}
