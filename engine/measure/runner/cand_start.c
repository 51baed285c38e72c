/*
 * cand_start.c - starting a runner: the keeper's fork and bubblewrap's (or
 * the runner's) exec, its setup (the buffers, then the empty frames of the
 * clock's bound, then the load); the spare runner started ahead of its
 * candidate, and one readied while its candidate compiles (its buffers and
 * frames: cand_spare_frame); a runner's end (cand_free: a spare started
 * after it); the clock's twin.
 */
#include "cand_priv.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "proc.h"
#include "start_order.h"
#include "util.h"

/* the spare runners (cand_spare_policy) */
static struct {
	int policy;                            /* CAND_SPARE_* */
	int want;                              /* spares kept (cand_spare_count), 1 by default */
	struct cand_proc *ac[CAND_MAX_SPARES]; /* the spares, oldest first, started for o and
	                                     waiting for their setup */
	int n;                                 /* of them */
	struct cand_proc *framed;              /* one readied ahead (cand_spare_frame), or NULL */
	int defer; /* CAND_SPARE_READY's refill left to a runner's end (cand_spare_defer) */
	int owed;  /* ... and one is owed */
	struct cand_opts o; /* the last runner's options (a deep copy): the next spare's */
	int keepPid;        /* ... and its namespaces */
	char *zKey;         /* runner_key() of them; NULL: none yet */
} Spare = {.want = 1};

/* runners this worker started (their ids in the start order's journal) */
static int nSpawned;
/* seconds spent starting spares (cand_spare_seconds) */
static double spareS;

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

/*
 * Start a runner that makes its device context and then waits for its setup
 * (attach): NULL with err.  The keeper's fork and bubblewrap's (or the
 * runner's) exec, as cand_start does them; level: its place in the host's
 * start order (START_*, start_order.h).
 */
static struct cand_proc *spawn(const struct cand_opts *o, int keepPid, int twin, int level,
                               char *err)
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
	/* the host's start order: the lock file, the runner's place and name */
	int orderFd = start_order_open();
	char zOrder[64];
	snprintf(zOrder, sizeof zOrder, "%d:%d.%d", level, (int)getpid(), ++nSpawned);
	struct argv a = {0};
	cand_build_argv(o, exe, keepPid, asMb, twin, orderFd >= 0 ? zOrder : NULL, &a);
	int sv[2], life[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		cand_argv_free(&a);
		cgroup_free(cg);
		if (orderFd >= 0)
			close(orderFd);
		return kl_err(err, "socketpair: %s", strerror(errno)), NULL;
	}
	if (pipe2(life, O_CLOEXEC) < 0) {
		cand_argv_free(&a);
		cgroup_free(cg);
		close(sv[0]), close(sv[1]);
		if (orderFd >= 0)
			close(orderFd);
		return kl_err(err, "pipe: %s", strerror(errno)), NULL;
	}
	pid_t parent = getpid();
	int profiler = proc_profiler_injected(); /* before the fork: it reads the loader's list */
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
		/* the start order's lock, which the runner closes before its
		 * setup (orderFd is above 9: nothing above clobbered it) */
		if (orderFd >= 0 && dup2(orderFd, START_ORDER_FD) < 0)
			_exit(127);
		/* nothing else: not the protocol, not the session, not the cache;
		 * under a profiler (proc.h) its pipes to its front end too
		 * (without them its injection crashes in the runner's first CUDA
		 * call; the runner is then unconfined, its times unverified) */
		int first = orderFd >= 0 ? START_ORDER_FD + 1 : 4;
		if (profiler)
			proc_close_fds(first, NULL, 0, 1);
		else if (close_range((unsigned)first, ~0u, 0) < 0)
			for (int fd = first; fd < 65536; fd++)
				if (fcntl(fd, F_GETFD) >= 0)
					close(fd);
		execvp(a.v[0], a.v);
		dprintf(2, "kloop-worker: cannot run %s: %s\n", a.v[0], strerror(errno));
		_exit(127);
	}
	cand_argv_free(&a);
	close(sv[1]);
	close(life[0]);
	if (orderFd >= 0)
		close(orderFd);
	if (pid < 0) {
		close(sv[0]);
		close(life[1]);
		cgroup_free(cg);
		return kl_err(err, "cannot fork: %s", strerror(errno)), NULL;
	}
	struct cand_proc *c = xcalloc(1, sizeof *c);
	c->cg = cg;
	c->stop = cgroup_has_freeze(cg) ? STOP_CGROUP : STOP_SIGNAL;
	c->fd = sv[0];
	c->pid = pid;
	c->lifeFd = life[1];
	c->pollFd = o->pollFd;
	c->schedFd = c->statFd = -1;
	c->sandboxed = o->sandbox;
	cand_views_init(c);
	return c;
}

/* the runner's next message, whatever it is: 1, or 0 when it hung up */
static int next_msg(struct cand_proc *c, struct cm *rep)
{
	for (;;) {
		/* the relay of the runners' output too (a warm worker's,
		 * cand_set_relay): a candidate's constructors that print more
		 * than its pipe holds wait for it to be read */
		struct pollfd p[2] = {{.fd = c->fd, .events = POLLIN},
		                      {.fd = cand_relay_fd(), .events = POLLIN}};
		int n = poll(p, 2, -1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n > 0 && (p[1].revents & (POLLIN | POLLHUP)))
			cand_relay_drain();
		if (n > 0 && !(p[0].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		ssize_t r = recv(c->fd, rep, sizeof *rep, 0);
		if (r < 0 && errno == EINTR)
			continue;
		/* that its context was made: known already, or not needed */
		if (r == (ssize_t)sizeof *rep && rep->op == CM_STARTED)
			continue;
		if (r == (ssize_t)sizeof *rep) {
			rep->text[sizeof rep->text - 1] = 0;
			if (rep->op == CM_TERM)
				cand_stopped_together(); /* as in a call (roundtrip) */
		}
		return r == (ssize_t)sizeof *rep;
	}
}

/* why the runner did not come to be ready (rep: its last message, when
 * got), into err; *pLoadErr when the object is at fault */
static void not_ready(struct cand_proc *c, const struct cm *rep, int got, int *pLoadErr, char *err)
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
		cand_runner_died(c, why, sizeof why);
		kl_err(err, "%s's process did not start: %s%s", who(c), why,
		       strstr(c->zStatus, "status 127")
		           ? "; status 127 is the loader's or exec's: the runner program or "
		             "a library it needs (LD_LIBRARY_PATH) was not found, see the "
		             "worker's messages"
		           : "");
	}
}

/*
 * Hand the started runner c its setup (the buffers) and wait until it has
 * mapped them; c held.  0, or -1 (c freed) with err, *pLoadErr set when
 * the object is at fault.  *pStarted: the runner had started (it said
 * anything at all), so a failure is not the start's.
 */
static int map_buffers(struct cand_proc *c, const struct cm_setup *su, const int *fds, int nFds,
                       int *pLoadErr, int *pStarted, char *err)
{
	*pStarted = 0;
	c->nSet = (int)su->nSet;
	double t0 = now_s();
	if (send_with_fds(c->fd, su, sizeof *su, fds, nFds) < 0) {
		char why[KL_ERRLEN];
		cand_runner_died(c, why, sizeof why);
		kl_err(err, "%s's process did not start: %s", who(c), why);
		cand_free(c);
		return -1;
	}
	struct cm rep;
	int got = next_msg(c, &rep);
	*pStarted = got;
	if (!got || rep.op != CM_MAPPED) {
		not_ready(c, &rep, got, pLoadErr, err);
		cand_free(c);
		return -1;
	}
	step_trace(c->ahead ? "runner mapped (a spare)" : "runner mapped", t0);
	cand_watch_runner(c);
	if (cand_hold(c, 1, err) < 0) {
		cand_free(c);
		return -1;
	}
	return 0;
}

/*
 * The empty frames of the clock's bound on each harness of ah[]
 * (harness_preload), from a runner that holds nothing of a candidate yet,
 * so that it cannot lengthen them.  0, or -1 (c freed) with err.
 */
static int take_frames(struct cand_proc *c, struct harness *const *ah, const char *zTrace,
                       char *err)
{
	char why[KL_ERRLEN];
	double t0 = now_s();
	for (int k = 0; k < c->nSet; k++) {
		int rc = harness_preload(ah[k], &c->views[k].hc, why, sizeof why, err);
		if (rc > 0)
			kl_err(err, "%s's process failed before the load: %s", who(c), why);
		if (rc) {
			cand_free(c);
			return -1;
		}
	}
	step_trace(zTrace, t0);
	return 0;
}

/*
 * Have the mapped runner c confine itself and load the object soFd (sent
 * with the request): c, ready and held; or NULL (c freed) with err,
 * *pLoadErr set when the object is at fault.
 */
static struct cand_proc *load_object(struct cand_proc *c, int soFd, int *pLoadErr, char *err)
{
	double t0 = now_s();
	struct cm rep = {0};
	struct cm load = {.op = CM_LOAD, .seq = ++c->seq};
	if (send_with_fds(c->fd, &load, sizeof load, &soFd, 1) < 0 || cand_hold(c, 0, err) < 0) {
		not_ready(c, &rep, 0, pLoadErr, err);
		cand_free(c);
		return NULL;
	}
	int got = next_msg(c, &rep);
	if (!got || rep.op != CM_READY) {
		not_ready(c, &rep, got, pLoadErr, err);
		cand_free(c);
		return NULL;
	}
	step_trace("runner loaded", t0);
	snprintf(c->zConfine, sizeof c->zConfine, "%s", rep.text);
	for (int k = 0; k < CAND_MAX_HARNESSES; k++)
		c->views[k].hc.unconfined =
		    !strncmp(rep.text, CAND_UNCONFINED, sizeof CAND_UNCONFINED - 1);
	if (cand_hold(c, 1, err) < 0) {
		cand_free(c);
		return NULL;
	}
	c->nTasks0 = cand_runner_threads(c);
	return c;
}

/* what a runner was started for: a spare serves a candidate of the same */
static char *runner_key(const struct cand_opts *o, int keepPid)
{
	strbuf b = STRBUF_INIT;
	sb_addf(&b, "%s|%d|%d|%d", o->zBackend, o->dev, o->sandbox, keepPid);
	for (char *const *d = o->azLibDirs; d && *d; d++)
		sb_addf(&b, "|%s", *d);
	return sb_detach(&b);
}

/* kill the spares beyond keep, without starting others in their place */
static void spare_trim(int keep)
{
	int policy = Spare.policy;
	Spare.policy = CAND_SPARE_OFF; /* cand_free's refill */
	while (Spare.n > keep)
		cand_free(Spare.ac[--Spare.n]);
	Spare.policy = policy;
}

/* kill the spares, if any, the one readied ahead too */
static void spare_drop(void)
{
	spare_trim(0);
	cand_destroy(Spare.framed);
	Spare.framed = NULL;
}

void cand_spare_policy(int policy)
{
	Spare.policy = policy;
	if (policy == CAND_SPARE_OFF)
		spare_drop();
}

void cand_spare_count(int n)
{
	Spare.want = n < 1 ? 1 : n > CAND_MAX_SPARES ? CAND_MAX_SPARES : n;
	spare_trim(Spare.want);
}

int cand_spares_waiting(void)
{
	return Spare.n;
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

/* start spares for the options of the last runner until there are as many
 * as wanted: the first of a worker that has none left before the others
 * in the host's start order */
static void spare_start(void)
{
	char err[KL_ERRLEN];
	double t0 = now_s();
	while (Spare.policy != CAND_SPARE_OFF && Spare.zKey && Spare.n < Spare.want) {
		struct cand_proc *c =
		    spawn(&Spare.o, Spare.keepPid, 0, Spare.n ? START_EXTRA : START_SPARE, err);
		if (!c)
			break;
		Spare.ac[Spare.n++] = c;
	}
	spareS += now_s() - t0;
}

double cand_spare_seconds(void)
{
	return spareS;
}

/* a runner was freed: a spare started, where the policy says so
 * (CAND_SPARE_AFTER), or where a start left its refill owed
 * (cand_spare_defer) */
static void spare_refill(void)
{
	if (Spare.policy == CAND_SPARE_AFTER || (Spare.policy == CAND_SPARE_READY && Spare.owed)) {
		Spare.owed = 0;
		spare_start();
	}
}

void cand_spare_defer(int defer)
{
	Spare.defer = defer;
}

/* a runner was started (CAND_SPARE_READY): the spares refilled now, or
 * once a runner ends where the worker defers them */
static void spare_after_start(void)
{
	if (Spare.policy != CAND_SPARE_READY)
		return;
	if (Spare.defer)
		Spare.owed = 1;
	else
		spare_start();
}

void cand_free(struct cand_proc *c)
{
	if (!c)
		return;
	int twin = c->twin;
	cand_destroy(c);
	if (!twin)
		spare_refill();
}

/* whether the runner keeps the worker's pid namespace: a device buffer
 * shared by a handle without a descriptor (CUDA IPC) is opened by pid */
static int keeps_pid(const struct cand_opts *o, const struct harness_buf *hb, int nBuf)
{
	for (int i = 0; i < nBuf; i++)
		if (hb[i].sh.n && hb[i].sh.fd < 0 && !strcmp(o->zBackend, "cuda"))
			return 1;
	return 0;
}

/* the spares are for o's runners from now on: those started for other
 * options are dropped */
static void spares_for(const struct cand_opts *o, int keepPid)
{
	char *zKey = runner_key(o, keepPid);
	if (Spare.zKey && !strcmp(Spare.zKey, zKey)) {
		free(zKey);
	} else {
		spare_drop();
		keep_opts(o, keepPid, zKey);
	}
}

void cand_spare_prestart(const struct cand_opts *o, struct harness *const *ah, int nH)
{
	if (Spare.policy == CAND_SPARE_OFF || nH < 1 || nH > CAND_MAX_HARNESSES)
		return;
	struct harness_buf hb[MAX_SETUP_BUF];
	int nBuf = 0;
	for (int k = 0; k < nH; k++)
		nBuf += harness_buffers(ah[k], hb + nBuf);
	int keepPid = keeps_pid(o, hb, nBuf);
	spares_for(o, keepPid);
	spare_start();
}

/* the setup of a runner on the nH harnesses ah[] (their buffers, the fds
 * of those shared by one into fds[], *pnFds of them), *pKeepPid as
 * keeps_pid; the caller frees it */
static struct cm_setup *setup_of(const struct cand_opts *o, struct harness *const *ah, int nH,
                                 int *fds, int *pnFds, int *pKeepPid)
{
	struct harness_buf hb[MAX_SETUP_BUF];
	int set[MAX_SETUP_BUF], nBuf = 0;
	for (int k = 0; k < nH; k++) {
		int n = harness_buffers(ah[k], hb + nBuf);
		for (int i = 0; i < n; i++)
			set[nBuf + i] = k;
		nBuf += n;
	}
	struct cm_setup *su = xcalloc(1, sizeof *su);
	*pnFds = 0;
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
		cb->ring = hb[i].ring;
		cb->stride = hb[i].stride;
		cb->ringOff = hb[i].ringOff;
		memcpy(cb->shape, hb[i].t.shape, sizeof cb->shape);
		snprintf(cb->name, sizeof cb->name, "%s", hb[i].zName ? hb[i].zName : "?");
		if (hb[i].sh.fd >= 0 && hb[i].sh.n) {
			cb->hasFd = 1;
			fds[(*pnFds)++] = hb[i].sh.fd;
		}
	}
	*pKeepPid = keeps_pid(o, hb, nBuf);
	return su;
}

/* c serves o's candidate (or reference) from now on; spare: started ahead */
static void serve_for(struct cand_proc *c, const struct cand_opts *o, int spare)
{
	c->pollFd = o->pollFd;
	c->reference = o->reference;
	cand_use_twin(c, o->twin);
	for (int k = 0; k < CAND_MAX_HARNESSES; k++)
		c->views[k].hc.trusted = o->reference;
	c->ahead = spare;
}

/* the spare readied ahead, if it was readied for the harnesses ah[] and is
 * still waiting quietly (one that died, or said anything, is freed): taken
 * out of the spares */
static struct cand_proc *take_framed(struct harness *const *ah, int nH)
{
	struct cand_proc *c = Spare.framed;
	if (!c || c->nSet != nH)
		return NULL;
	for (int k = 0; k < nH; k++)
		if (c->framedOf[k] != harness_serial(ah[k]))
			return NULL;
	Spare.framed = NULL;
	struct pollfd p = {.fd = c->fd, .events = POLLIN};
	if (c->dead || poll(&p, 1, 0) != 0) {
		cand_destroy(c);
		return NULL;
	}
	return c;
}

/* the twin whose frames were taken beside a readied spare's */
static pid_t twin_pid(const struct cand_proc *twin)
{
	return cand_alive(twin) ? twin->pid : 0;
}

int cand_spare_frame(const struct cand_opts *o, struct harness *const *ah, int nH)
{
	if (Spare.policy == CAND_SPARE_OFF || nH < 1 || nH > CAND_MAX_HARNESSES)
		return 0;
	int fds[MAX_SETUP_BUF], nFds, keepPid;
	struct cm_setup *su = setup_of(o, ah, nH, fds, &nFds, &keepPid);
	spares_for(o, keepPid);
	struct cand_proc *c = take_framed(ah, nH);
	if (c) { /* ready already */
		Spare.framed = c;
		free(su);
		return 0;
	}
	/* a spare whose context is made (it said so); none: the candidate's
	 * start takes one as it would have */
	int k = -1;
	for (int i = 0; i < Spare.n && k < 0; i++) {
		struct pollfd p = {.fd = Spare.ac[i]->fd, .events = POLLIN};
		if (poll(&p, 1, 0) > 0)
			k = i;
	}
	if (k < 0) {
		free(su);
		return 0;
	}
	c = Spare.ac[k];
	memmove(Spare.ac + k, Spare.ac + k + 1, (size_t)(--Spare.n - k) * sizeof *Spare.ac);
	/* one readied spare at most: one for other harnesses goes */
	cand_destroy(Spare.framed);
	Spare.framed = NULL;
	serve_for(c, o, 1);
	char err[KL_ERRLEN];
	int loadErr, started;
	if (map_buffers(c, su, fds, nFds, &loadErr, &started, err) < 0 ||
	    take_frames(c, ah, "runner frames (ahead)", err) < 0) {
		free(su);
		return 0;
	}
	free(su);
	c->framed = 1;
	c->framedAt = now_s();
	c->framedTwin = o->twin;
	c->framedTwinPid = twin_pid(o->twin);
	for (int i = 0; i < nH; i++)
		c->framedOf[i] = harness_serial(ah[i]);
	Spare.framed = c;
	return 1;
}

int cand_framed_ahead(const struct cand_proc *c)
{
	return c->framed;
}

/* the readied spare c, its frames taken again where they are older than
 * CAND_FRAMED_FRESH_S or were taken beside another twin, loading soFd (as
 * load_object); NULL with *pGone where it failed before the load (c freed:
 * then a runner of its own) */
static struct cand_proc *load_framed(struct cand_proc *c, const struct cand_opts *o,
                                     struct harness *const *ah, int soFd, int *pLoadErr, int *pGone,
                                     char *err)
{
	*pGone = 0;
	serve_for(c, o, 1);
	if ((now_s() - c->framedAt > CAND_FRAMED_FRESH_S || c->framedTwin != o->twin ||
	     c->framedTwinPid != twin_pid(o->twin)) &&
	    take_frames(c, ah, "runner frames", err) < 0) {
		*pGone = 1;
		return NULL;
	}
	return load_object(c, soFd, pLoadErr, err);
}

struct cand_proc *cand_start(const struct cand_opts *o, struct harness *const *ah, int nH, int soFd,
                             int *pLoadErr, char *err)
{
	*pLoadErr = 0;
	if (nH < 1 || nH > CAND_MAX_HARNESSES)
		return kl_err(err, "a runner serves 1 to %d harnesses, not %d", CAND_MAX_HARNESSES,
		              nH),
		       NULL;
	int fds[MAX_SETUP_BUF], nFds, keepPid;
	struct cm_setup *su = setup_of(o, ah, nH, fds, &nFds, &keepPid);
	/* the spare, when it was started for the same options; else a runner
	 * now (and the options kept for the next spare) */
	spares_for(o, keepPid);
	/* the spare readied for these harnesses, its frames taken: only the load */
	struct cand_proc *c = take_framed(ah, nH);
	if (c) {
		int gone;
		c = load_framed(c, o, ah, soFd, pLoadErr, &gone, err);
		if (c || !gone) { /* loaded, or the object's failure: the answer */
			free(su);
			if (c)
				spare_after_start();
			return c;
		}
	}
	/* a spare whose context is made (it said so, or died: then a runner
	 * of its own follows), else the oldest: the first in the start order */
	int k = 0;
	for (int i = 0; i < Spare.n; i++) {
		struct pollfd p = {.fd = Spare.ac[i]->fd, .events = POLLIN};
		if (poll(&p, 1, 0) > 0) {
			k = i;
			break;
		}
	}
	c = Spare.n ? Spare.ac[k] : NULL;
	int spare = c != NULL;
	if (spare)
		memmove(Spare.ac + k, Spare.ac + k + 1, (size_t)(--Spare.n - k) * sizeof *Spare.ac);
	for (;;) {
		int started = 0;
		if (!c && !(c = spawn(o, keepPid, 0, START_NOW, err)))
			break;
		serve_for(c, o, spare);
		if (map_buffers(c, su, fds, nFds, pLoadErr, &started, err) < 0)
			c = NULL;
		else if (take_frames(c, ah, "runner frames", err) < 0)
			c = NULL;
		else
			c = load_object(c, soFd, pLoadErr, err);
		if (c || !spare || started)
			break;
		/* the spare had died before its turn (its start failed, or it was
		 * killed): a runner of its own, whose failure is the answer */
		*pLoadErr = 0;
		spare = 0;
	}
	free(su);
	if (c)
		spare_after_start();
	return c;
}

struct cand_proc *cand_twin_begin(const struct cand_opts *o, char *err)
{
	struct cand_opts to = *o;
	to.azLibDirs = NULL;
	to.reference = 0;
	struct cand_proc *c = spawn(&to, 0, 1, START_NOW, err);
	if (!c)
		return NULL;
	c->twin = 1;
	c->nSet = CAND_MAX_HARNESSES;
	struct cm_setup *su = xcalloc(1, sizeof *su);
	*su = (struct cm_setup){.op = CM_SETUP, .nSet = CAND_MAX_HARNESSES, .twin = 1};
	c->twinUnsent = send_with_fds(c->fd, su, sizeof *su, NULL, 0) != 0;
	free(su);
	return c;
}

struct cand_proc *cand_twin(const struct cand_opts *o, char *err)
{
	struct cand_proc *c = cand_twin_begin(o, err);
	return c ? cand_twin_ready(c, err) : NULL;
}

struct cand_proc *cand_twin_ready(struct cand_proc *c, char *err)
{
	struct cm rep = {0};
	int pl = 0;
	if (c->twinUnsent || !next_msg(c, &rep) || rep.op != CM_MAPPED) {
		not_ready(c, &rep, 0, &pl, err);
		cand_free(c);
		return NULL;
	}
	cand_watch_runner(c);
	if (cand_hold(c, 1, err) < 0) {
		cand_free(c);
		return NULL;
	}
	return c;
}

int cand_alive(const struct cand_proc *c)
{
	return c && !c->dead;
}

void cand_use_twin(struct cand_proc *c, struct cand_proc *twin)
{
	for (int k = 0; k < CAND_MAX_HARNESSES; k++)
		c->views[k].hc.twin = cand_alive(twin) ? &twin->views[k].hc : NULL;
}
