/*
 * warm.c - kloop-worker kept warm between two engines (kloop eval --warm
 * SECONDS, issue 40: a lone eval's seconds went to starting the worker,
 * its device context and the runners', drawing the sets and running the
 * reference on them, not to the candidate).  Started with --warm PATH
 * --linger S, the worker listens on the Unix socket PATH (in a directory
 * of this user's alone).  When its engine closes the protocol channel
 * while nothing is queued or running, it does not exit: for S seconds it
 * waits on PATH for the next engine.  That engine connects, passes its
 * stderr (SCM_RIGHTS) with an attach line, and gets the hello again; a
 * task request with the very text of the first (the engine names PATH by
 * a hash of the request, the task's files, the worker's binary and
 * environment: pool/warm_key.c) is answered by the task_ready kept from
 * the first, its setup saying it was kept warm.  Everything else is the
 * first engine's session: the same sets, reference outputs and runners;
 * the code timed before is forgotten (each engine times its candidates).
 * A connection of another user, one that says nothing, or a quit line
 * (kloop warm stop) is closed, or ends the worker.  Its stdout and stderr,
 * and so its children's (the runners, spares started for one engine and
 * used for the next, the PyTorch helper), are a pipe it relays to the
 * current engine's stderr: read from the loop, while a runner's call is
 * waited for (cand_set_relay), and before each event it sends.
 */
#include "kworker.h"
#include "worker_warm.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>

static struct {
	loop_fd_fn onInput;                     /* main.c's reader of W.in */
	void (*addLines)(const char *, size_t); /* main.c: bytes read from W.in */
	char zInfo[4096];                       /* PATH.json: what `kloop warm` lists */
	char zSock[sizeof(((struct sockaddr_un *)0)->sun_path)];
} Wm;

/* the socket and its description go with the worker (also from SIGTERM) */
static void warm_unlink(void)
{
	if (getpid() != kworker_pid)
		return;
	if (Wm.zSock[0])
		unlink(Wm.zSock);
	if (Wm.zInfo[0])
		unlink(Wm.zInfo);
}

static void on_relay(struct loop *l, int fd, int events, void *arg)
{
	(void)l, (void)fd, (void)events, (void)arg;
	kworker_relay_drain();
}

/* the relay (kworker.h): this process's stdout and stderr, and so every
 * child's, a pipe of 1 MiB passed on to the engine's stderr; 0 or -1 */
static int relay_begin(void)
{
	int rp[2];
	if (pipe(rp) < 0)
		return -1;
	fcntl(rp[0], F_SETFD, FD_CLOEXEC);
	fcntl(rp[1], F_SETPIPE_SZ, 1 << 20);
	W.errOut = fcntl(2, F_DUPFD_CLOEXEC, 100);
	dup2(rp[1], 1);
	dup2(rp[1], 2);
	close(rp[1]);
	fd_nonblock(rp[0]);
	W.relayFd = rp[0];
	loop_add_fd(W.l, W.relayFd, LOOP_READ, on_relay, NULL);
	cand_set_relay(W.relayFd, kworker_relay_drain);
	return 0;
}

static void on_term(int sig)
{
	(void)sig;
	warm_unlink();
	_exit(0);
}

/* PATH.json: the worker's pid, task and state, for `kloop warm` */
static void write_info(const char *zState)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "pid", getpid());
	cJSON_AddStringToObject(o, "task", W.t && W.t->zName ? W.t->zName : "");
	cJSON_AddStringToObject(o, "backend", W.zBackend);
	cJSON_AddStringToObject(o, "device", W.b ? W.b->zDevice : "");
	cJSON_AddStringToObject(o, "uuid", W.b ? W.b->zUuid : "");
	cJSON_AddStringToObject(o, "state", zState);
	cJSON_AddNumberToObject(o, "evals", W.warmEvals);
	cJSON_AddNumberToObject(o, "linger_s", W.lingerS);
	cJSON_AddNumberToObject(o, "since", (double)time(NULL));
	char *z = json_text(o, 0);
	cJSON_Delete(o);
	char tmp[sizeof Wm.zInfo + 8];
	snprintf(tmp, sizeof tmp, "%s.tmp", Wm.zInfo);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd >= 0) {
		int ok = write_all(fd, z, strlen(z)) == 0;
		close(fd);
		if (!ok || rename(tmp, Wm.zInfo) < 0)
			unlink(tmp);
	}
	free(z);
}

/* the warm workers of other tasks that wait, idle, on this device, the
 * newest KWORKER_WARM_IDLE - 1 of them aside, stopped: each holds its
 * sets in device memory, and a task loaded beside many would get fewer
 * checking sets (harness.c fits them in the memory free) */
static void stop_others(void)
{
	char err[KL_ERRLEN];
	struct warm_entry *a;
	int n = worker_warm_list(&a, err), kept = 0;
	for (int pass = 0; pass < n; pass++) {
		/* the newest idle one not yet looked at */
		int best = -1;
		for (int i = 0; i < n; i++)
			if (a[i].pid > 0 && a[i].pid != getpid() && !strcmp(a[i].zState, "idle") &&
			    !strcmp(a[i].zBackend, W.zBackend) &&
			    /* the same GPU: its UUID where both have one (two of one
			     * model are two devices), else its description */
			    (a[i].zUuid[0] && W.b->zUuid[0]
			         ? !strcmp(a[i].zUuid, W.b->zUuid)
			         : !strcmp(a[i].zDevice, W.b->zDevice)) &&
			    (best < 0 || a[i].since > a[best].since))
				best = i;
		if (best < 0)
			break;
		if (++kept >= KWORKER_WARM_IDLE)
			kill(a[best].pid, SIGTERM);
		a[best].pid = 0;
	}
	worker_warm_list_free(a, n > 0 ? n : 0);
}

int kworker_warm_listen(const char *zPath, double lingerS, loop_fd_fn onInput,
                        void (*addLines)(const char *, size_t), char *err)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	if (strlen(zPath) >= sizeof a.sun_path)
		return kl_err(err, "the socket path %s is too long", zPath);
	/* its directory is this user's alone */
	char *dir = xstrdup(zPath), *sl = strrchr(dir, '/');
	if (sl)
		*sl = 0;
	struct stat st;
	int bad = !sl || lstat(dir, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != getuid() ||
	          (st.st_mode & 077);
	free(dir);
	if (bad)
		return kl_err(err, "the directory of %s is not this user's alone (mode 0700)",
		              zPath);
	snprintf(a.sun_path, sizeof a.sun_path, "%s", zPath);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return kl_err(err, "socket: %s", strerror(errno));
	if (bind(fd, (struct sockaddr *)&a, sizeof a) < 0 || listen(fd, 8) < 0) {
		/* another worker holds the name: this one is not kept warm */
		int e = errno;
		close(fd);
		return kl_err(err, "%s: %s", zPath, strerror(e));
	}
	W.warmFd = fd;
	W.lingerS = lingerS;
	W.zWarmPath = xstrdup(zPath);
	W.warmEvals = 1;
	snprintf(Wm.zSock, sizeof Wm.zSock, "%s", zPath);
	snprintf(Wm.zInfo, sizeof Wm.zInfo, "%s.json", zPath);
	Wm.onInput = onInput;
	Wm.addLines = addLines;
	if (relay_begin() < 0) {
		close(fd);
		W.warmFd = -1;
		return kl_err(err, "pipe: %s", strerror(errno));
	}
	atexit(warm_unlink);
	signal(SIGTERM, on_term);
	signal(SIGHUP, SIG_IGN);
	write_info("busy");
	stop_others();
	return 0;
}

int kworker_warm_task(const char *zLine)
{
	if (W.warmFd < 0)
		return 0;
	if (!W.zTaskReq) {
		W.zTaskReq = xstrdup(zLine);
		return 0;
	}
	if (!W.ready || !W.readyMsg || strcmp(zLine, W.zTaskReq))
		return 0;
	/* the task_ready of the first engine, its setup saying so */
	cJSON *o = cJSON_Duplicate(W.readyMsg, 1);
	cJSON *first = cJSON_DetachItemFromObject(o, "setup");
	cJSON *su = cJSON_AddObjectToObject(o, "setup");
	cJSON_AddNumberToObject(su, "seconds", now_s() - W.tTask);
	cJSON *wm = cJSON_AddObjectToObject(su, "warm");
	cJSON_AddNumberToObject(wm, "evals", W.warmEvals);
	cJSON_AddNumberToObject(wm, "age_s", now_s() - W.tReady);
	cJSON_AddNumberToObject(wm, "linger_s", W.lingerS);
	if (first)
		cJSON_AddItemToObject(wm, "first", first);
	kworker_send_json(o);
	return 1;
}

static void on_linger(struct loop *l, long long id, void *arg)
{
	(void)l, (void)id, (void)arg;
	W.lingerTimer = 0;
	exit(0);
}

static void on_accept(struct loop *l, int fd, int events, void *arg);

/* wait for the next engine, S seconds at most */
static void wait_engine(void)
{
	loop_add_fd(W.l, W.warmFd, LOOP_READ, on_accept, NULL);
	if (!W.lingerTimer)
		W.lingerTimer = loop_add_timer(W.l, W.lingerS, on_linger, NULL);
	write_info("idle");
}

int kworker_warm_idle(void)
{
	if (W.warmFd < 0 || !W.ready || W.runq || W.bg || W.lingerS <= 0)
		return 0;
	loop_del_fd(W.l, W.in);
	/* nothing of the last engine's: its stderr (the relay's output dropped
	 * until the next), the code it timed */
	kworker_relay_drain();
	if (W.errOut >= 0)
		close(W.errOut);
	W.errOut = -1;
	for (int i = 0; i < W.nTimed; i++) {
		free(W.aTimed[i].zLabel);
		cJSON_Delete(W.aTimed[i].timing);
	}
	W.nTimed = 0;
	lb_free(&W.inbuf);
	lb_init(&W.inbuf, PROTO_LINE_MAX);
	wait_engine();
	return 1;
}

/* the first message of a connection: its bytes (n), the descriptor passed
 * with them into *pFd (-1: none); -1 where nothing came within 2 s */
static ssize_t first_message(int c, char *buf, size_t nBuf, int *pFd)
{
	*pFd = -1;
	struct pollfd p = {.fd = c, .events = POLLIN};
	if (poll(&p, 1, 2000) <= 0)
		return -1;
	struct iovec io = {.iov_base = buf, .iov_len = nBuf};
	union {
		char b[CMSG_SPACE(4 * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr m = {
	    .msg_iov = &io, .msg_iovlen = 1, .msg_control = u.b, .msg_controllen = sizeof u.b};
	ssize_t r = recvmsg(c, &m, MSG_CMSG_CLOEXEC);
	if (r <= 0)
		return -1;
	/* one descriptor is an attach's; any other it was sent is closed */
	for (struct cmsghdr *h = CMSG_FIRSTHDR(&m); h; h = CMSG_NXTHDR(&m, h)) {
		if (h->cmsg_level != SOL_SOCKET || h->cmsg_type != SCM_RIGHTS)
			continue;
		size_t nFd = (h->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < nFd; i++) {
			int fd;
			memcpy(&fd, CMSG_DATA(h) + i * sizeof(int), sizeof fd);
			if (nFd == 1 && *pFd < 0)
				*pFd = fd;
			else
				close(fd);
		}
	}
	return r;
}

static void on_accept(struct loop *l, int fd, int events, void *arg)
{
	(void)l, (void)events, (void)arg;
	int c = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
	if (c < 0)
		return;
	struct ucred cr;
	socklen_t n = sizeof cr;
	char buf[65536];
	int errFd = -1;
	ssize_t r = -1;
	if (getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cr, &n) == 0 && cr.uid == getuid())
		r = first_message(c, buf, sizeof buf - 1, &errFd);
	char *nl = r > 0 ? memchr(buf, '\n', (size_t)r) : NULL;
	cJSON *req = nl ? cJSON_ParseWithLength(buf, (size_t)(nl - buf)) : NULL;
	const char *op = req ? protocol_op_name(req) : NULL;
	if (op && !strcmp(op, "quit"))
		exit(0);
	int attach = op && !strcmp(op, "attach") && errFd >= 0;
	cJSON_Delete(req);
	/* an engine that gave up waiting while this worker served another
	 * (its hello within a second: worker_warm_attach) left its attach in
	 * the queue and closed: not taken, the worker stays waiting (its hello
	 * there failed, and the worker with it) */
	char ch;
	if (attach && recv(c, &ch, 1, MSG_PEEK | MSG_DONTWAIT) == 0)
		attach = 0;
	if (!attach) {
		if (errFd >= 0)
			close(errFd);
		close(c);
		return;
	}
	/* the engine's: the protocol on the descriptors the runners watch (the
	 * same numbers), its stderr for ours and the runners to come */
	loop_del_fd(W.l, W.warmFd);
	if (W.lingerTimer)
		loop_del_timer(W.l, W.lingerTimer), W.lingerTimer = 0;
	dup3(c, W.in, O_CLOEXEC);
	dup3(c, W.out, O_CLOEXEC);
	close(c);
	kworker_relay_drain(); /* what came between engines: dropped */
	W.errOut = errFd;      /* the relay's output from here on */
	fd_nonblock(W.in);
	W.warmEvals++;
	W.tTask = now_s();
	write_info("busy");
	kworker_send_json(cJSON_Duplicate(W.hello, 1));
	loop_add_fd(W.l, W.in, LOOP_READ, Wm.onInput, NULL);
	size_t rest = (size_t)r - (size_t)(nl + 1 - buf);
	if (rest)
		Wm.addLines(nl + 1, rest);
}
