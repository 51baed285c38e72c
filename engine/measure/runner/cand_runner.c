/*
 * cand_runner.c - the runner's side (cand_serve, in kloop-worker --runner):
 * its device context, the buffers mapped, the empty frames answered, then
 * confined and the candidate loaded, each call answered; a crash, an
 * exit() or a write to an input said before it dies.
 */
#include "cand_priv.h"

#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "confine.h"
#include "proc.h"
#include "start_order.h"
#include "util.h"

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

static struct {
	int fd;
	volatile int inCand;
	/* the candidate's optional kl_run_error and kl_run_copied (kloop.h),
	 * read after each call (NULL: it has none) */
	const char *zRunError;
	const volatile uint32_t *pCopied;
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
	if (sig != SIGTERM && sig != SIGXCPU && sig != SIGXFSZ) {
		/* where it died, into the crash's stderr tail (the verdict's
		 * stderr_tail): the runner's frames name kloop's code or the
		 * candidate's object; backtrace() was readied before any of it */
		void *fr[24];
		int nf = backtrace(fr, 24);
		dprintf(2, "kloop runner: %s at address %p; its call stack:\n", name, si->si_addr);
		backtrace_symbols_fd(fr, nf, 2);
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

/*
 * Signals wait until the candidate is called (issue 37): outside kl_run the
 * runner's thread blocks every signal but those it handles itself (the
 * faults it reports, kloop's SIGTERM), so that
 * no handler of the candidate's runs when kloop lets the runner go with a
 * request already in its socket (a SIGIO from O_ASYNC on that socket, a
 * timer's signal: its handler could peek at the request and know a timed
 * call from a batch or a frame).  The mask is set before the device's
 * context is made, so that the runtime's threads inherit it.  Pending ones
 * are delivered inside kl_run, inside the runner's timer.  The fault
 * handlers are the runner's again after every call (a candidate's handler
 * for SIGSEGV, raised through F_SETSIG, would run at the thaw too).
 */
static const int aFatal[] = {SIGSEGV, SIGBUS,  SIGFPE,  SIGILL, SIGABRT,
                             SIGSYS,  SIGTERM, SIGXCPU, SIGXFSZ};
static sigset_t waitMask, callMask;

static void fatal_handlers(void)
{
	for (size_t i = 0; i < sizeof aFatal / sizeof *aFatal; i++) {
		struct sigaction sa = {0};
		sa.sa_sigaction = on_fatal;
		sa.sa_flags = SA_ONSTACK | SA_RESETHAND | SA_SIGINFO;
		sigaction(aFatal[i], &sa, NULL);
	}
}

static void signals_wait(void)
{
	sigfillset(&waitMask);
	/* the faults and kloop's SIGTERM are not held (a synchronous fault
	 * blocked kills without a word): their handlers are the runner's */
	for (size_t i = 0; i < sizeof aFatal / sizeof *aFatal; i++)
		sigdelset(&waitMask, aFatal[i]);
	sigemptyset(&callMask);
	pthread_sigmask(SIG_SETMASK, &waitMask, NULL);
}

/* around each call of the candidate: its signals let through, then held
 * again and the fault handlers the runner's */
static void call_begin(void)
{
	S.inCand = 1;
	pthread_sigmask(SIG_SETMASK, &callMask, NULL);
}

static void call_end(void)
{
	pthread_sigmask(SIG_SETMASK, &waitMask, NULL);
	fatal_handlers();
	S.inCand = 0;
}

/* every call of the candidate, from this one place, so that kl_run's
 * return address is the same whatever the request (a run, a batch's run:
 * retaddr_skip.c skipped its work where it differed) */
static __attribute__((noinline)) int call_cand(kl_run_fn fn, const kl_tensor *in, int nIn,
                                               kl_tensor *out, int nOut, void *stream)
{
	call_begin();
	int rc = fn(in, nIn, out, nOut, stream);
	call_end();
	return rc;
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
	int injected = proc_profiler_injected();
	if (!injected && confine_runner(&cr, err) < 0) {
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
	S.zRunError = dlsym(dl, "kl_run_error");
	S.pCopied = dlsym(dl, "kl_run_copied");
	if (!fn) {
		say(CM_LOADERR, 0,
		    "the candidate does not define kl_run (it must have C linkage: extern \"C\" in "
		    "C++ and CUDA)");
		return NULL;
	}
	char what[400];
	if (injected)
		snprintf(what, sizeof what,
		         CAND_UNCONFINED
		         " (a profiler's injection in its environment): not confined, its "
		         "times unverified");
	else if (cr.landlock)
		snprintf(what, sizeof what, "seccomp filter (%d ranges kept), landlock (ABI %d)",
		         cr.nRanges, cr.landlockAbi);
	else
		snprintf(what, sizeof what, "%s (%d ranges kept); %s",
		         cr.seccomp ? "seccomp filter" : "no seccomp filter", cr.nRanges, cr.zNote);
	say(CM_READY, 0, what);
	return fn;
}

/* what the candidate said of the call it just returned from (rc): its
 * words for a non-zero return, the outputs it copied, into rep */
/* a profiled run's time into rep (pw: its window opened; the flush was
 * queued in it on the GPU): the durations of its launches, or no time
 * (kn -1) with why in rep's text where kl_run said nothing */
static void profiled_time(struct backend *b, int pw, int cuda, int bad, struct cm *rep)
{
	int n = 0;
	double ms = pw ? b->prof_end(b, cuda ? 1 : 0, &n, rep->kms, HARNESS_PROF_KERNELS) : -1;
	rep->ms = ms;
	rep->kn = !bad && ms >= 0 && n > 0 ? n : -1;
	if (rep->kn > 0 || rep->rc)
		return;
	if (b->prof_begin && !pw) {
		snprintf(rep->text, sizeof rep->text,
		         "the Range Profiler's window did not open%s%.200s",
		         b->zProfWhy[0] ? ": " : "", b->zProfWhy);
		return;
	}
	snprintf(rep->text, sizeof rep->text, "%s",
	         !b->prof_begin
	             ? (b->zProfWhy[0]
	                    ? b->zProfWhy
	                    : "the runner has no Range Profiler "
	                      "(a GPU runner where CUPTI loads; KLOOP_CUPTI=0 or 1 asks for none)")
	         : ms >= 0 && !n ? "the run launched no kernel"
	                         : "the Range Profiler gave no time (more than 63 launches in "
	                           "the run, or its ranges dropped)");
}

static void call_said(int rc, struct cm *rep)
{
	if (S.pCopied)
		rep->copied |= *S.pCopied;
	if (rc && S.zRunError && !rep->text[0]) {
		size_t n = strnlen(S.zRunError, KL_RUN_ERROR_MAX);
		n = n < sizeof rep->text - 1 ? n : sizeof rep->text - 1;
		memcpy(rep->text, S.zRunError, n);
		rep->text[n] = 0;
	}
}

/* a harness's batch ring as mapped here: slot k's tensor t at base +
 * k * stride + off[t] (for the inputs, then the outputs) */
struct ring {
	int slots;
	char *base[2];
	size_t stride[2];
	size_t off[2][TASK_MAX_TENSORS];
};

/* the tensors of slot k of ring r: as in and out, their data in the slot */
static void ring_tensors(const struct ring *r, int k, const kl_tensor *in, int nIn,
                         const kl_tensor *out, int nOut, kl_tensor *kin, kl_tensor *kout)
{
	for (int t = 0; t < nIn; t++) {
		kin[t] = in[t];
		kin[t].data = r->base[0] + (size_t)k * r->stride[0] + r->off[0][t];
	}
	for (int t = 0; t < nOut; t++) {
		kout[t] = out[t];
		kout[t].data = r->base[1] + (size_t)k * r->stride[1] + r->off[1][t];
	}
}

/* the first n slots of ring r mapped in this process (CM_TOUCH): its page
 * tables filled (at once where the kernel can, 5.14 on), then each page
 * read, and each page of the outputs written with the byte it holds: on
 * the 2-core VM (a Firecracker guest) a page's first access through a
 * mapping costs 10 to 50 us even once its page table entry is there
 * (20 MB populated in 3 to 7 ms, its first writes then took 50 to 130 ms,
 * its next 1) */
static void ring_touch(const struct ring *r, int n)
{
	for (int x = 0; x < 2; x++) {
		size_t len = (size_t)n * r->stride[x];
		if (!r->base[x] || !len)
			continue;
		(void)madvise(r->base[x], len, x ? MADV_POPULATE_WRITE : MADV_POPULATE_READ);
		volatile char *p = r->base[x];
		for (size_t i = 0; i < len; i += 4096) {
			char v = p[i];
			if (x)
				p[i] = v;
		}
	}
}

/*
 * A batch (CM_BATCH): n runs of kl_run (fn; on the clock's twin, NULL: n
 * empty kernels where the backend has one, else nothing) one after the
 * other, inside one start and one stop of the timer, run k on slot k of
 * the harness's ring (kloop draws each slot's inputs and poisons its
 * outputs before the batch, and checks a few of them after it: every run
 * has inputs of its own, as every timed run has).  The same code for the
 * twin and the candidate, so that the two batches differ by the
 * candidate's runs alone: no flush, no synchronize between the runs (on
 * the stream; device-wide after each run in strict mode), so that the
 * frame a taken-over runner could skip is as short as it can be
 * (harness_batch.c).  kl_run's returns are not judged.  Into rep: the runs
 * done (set), the mean stream and device-wide time of a run (ms, md); 1
 * with err when the device failed.
 */
static int run_batch(struct backend *b, kl_run_fn fn, int mode, int n, const struct ring *r,
                     const kl_tensor *in, int nIn, const kl_tensor *out, int nOut, struct cm *rep,
                     char *err)
{
	double ms = 0, md = 0;
	static kl_tensor kin[TASK_MAX_TENSORS], kout[TASK_MAX_TENSORS];
	if (b->sync(b, err) < 0 || b->timer_start(b, err) < 0)
		return 1;
	for (int i = 0; i < n; i++) {
		if (fn) {
			ring_tensors(r, i, in, nIn, out, nOut, kin, kout);
			int rc = call_cand(fn, kin, nIn, kout, nOut, b->stream);
			call_said(rc, rep);
			if (rc && !rep->rc)
				rep->rc = rc;
		} else if (b->launch_empty && b->launch_empty(b, err) < 0) {
			return 1;
		}
		if (mode == HC_STRICT && b->sync(b, err) < 0)
			return 1;
	}
	if (b->timer_stop(b, &ms, &md, err) < 0 || b->sync(b, err) < 0)
		return 1;
	rep->set = n;
	rep->ms = ms / n;
	rep->md = md / n;
	return 0;
}

int cand_serve(int fd, const char *zBackend, int dev, const char *zOrder)
{
	char err[KL_ERRLEN];
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	S.fd = fd;
	static char stack[1 << 16];
	stack_t ss = {.ss_sp = stack, .ss_size = sizeof stack};
	sigaltstack(&ss, NULL);
	fatal_handlers();
	signals_wait();
	on_exit(on_exit_hook, NULL);
	/* backtrace() loads its unwinder on its first call: now, before any
	 * confinement that would refuse the load, not in a crash */
	void *fr0[2];
	(void)backtrace(fr0, 2);
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
	/* made in the host's start order (start_order.h): the lock is let go
	 * and closed before anything of the candidate comes */
	const char *zId = zOrder ? strchr(zOrder, ':') : NULL;
	int orderFd = zId ? START_ORDER_FD : -1;
	start_order_take(orderFd, zId ? atoi(zOrder) : START_NOW, zId ? zId + 1 : "");
	struct backend *b = cuda ? backend_cuda_new(dev, beErr) : backend_host_new(beErr);
	start_order_give(orderFd, zId ? zId + 1 : "", b != NULL);
	say(CM_STARTED, b != NULL, NULL);
	struct cm_setup *su = xcalloc(1, sizeof *su);
	int fds[MAX_SETUP_BUF + 1], nFds;
	ssize_t got = recv_with_fds(fd, su, sizeof *su, fds, &nFds);
	int twin = got == (ssize_t)sizeof *su && su->twin && su->nBuf == 0;
	if (got != (ssize_t)sizeof *su || su->op != CM_SETUP || su->nBuf > MAX_SETUP_BUF ||
	    su->nSet < 1 || su->nSet > CAND_MAX_HARNESSES) {
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
	static struct ring ring[CAND_MAX_HARNESSES];
	int nIn[CAND_MAX_HARNESSES] = {0}, nOut[CAND_MAX_HARNESSES] = {0}, k = 0;
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
		if (cb->ring > 0) {
			/* a ring: every tensor's slots of its kind */
			int x = !cb->input;
			if (cb->ring > HARNESS_BATCH_MAX ||
			    cb->stride * (uint64_t)cb->ring > cb->n) {
				say(CM_LOADERR, 1,
				    "the runner's setup message was malformed (a ring's size)");
				return 3;
			}
			ring[q].slots = cb->ring;
			ring[q].base[x] = p;
			ring[q].stride[x] = cb->stride;
			continue;
		}
		kl_tensor *t = cb->input ? &in[q][nIn[q]] : &out[q][nOut[q]];
		ring[q].off[!cb->input][cb->input ? nIn[q] : nOut[q]] = cb->ringOff;
		cb->input ? nIn[q]++ : nOut[q]++;
		t->data = (char *)p + cb->off;
		t->dtype = (kl_dtype)cb->dtype;
		t->ndim = cb->ndim;
		memcpy(t->shape, cb->shape, sizeof t->shape);
	}
	free(su);
	/* mapped: the trusted side takes its empty frames now (or long
	 * before the candidate is known: cand_spare_frame), then asks for the
	 * load, the object's descriptor with the request */
	say(CM_MAPPED, 0, NULL);
	kl_run_fn fn = NULL;
	for (;;) {
		struct cm m;
		int soFd[MAX_SETUP_BUF + 1], nSo = 0;
		ssize_t r = recv_with_fds(fd, &m, sizeof m, soFd, &nSo);
		if (r < 0 && errno == EINTR)
			continue;
		if (r != (ssize_t)sizeof m)
			_exit(0); /* the trusted side hung up */
		if (twin && m.op != CM_FRAME && m.op != CM_BATCH)
			_exit(3); /* the clock's twin never loads anything */
		if (m.op == CM_LOAD && !fn) {
			if (nSo != 1) {
				say(CM_LOADERR, 1,
				    "the runner's load message was malformed (no shared object's "
				    "descriptor)");
				return 3;
			}
			if (!(fn = load_candidate(soFd[0])))
				return 3;
			/* its constructors may have changed both */
			pthread_sigmask(SIG_SETMASK, &waitMask, NULL);
			fatal_handlers();
			continue;
		}
		for (int i = 0; i < nSo; i++) /* none but the load's is kept */
			close(soFd[i]);
		struct cm rep = {.op = CM_REPLY, .seq = m.seq};
		int bad = 0, q = m.set;
		if (q < 0 || q >= nSet || ((m.op == CM_RUN || m.op == CM_BATCH) && !fn && !twin))
			_exit(3);
		if (m.op == CM_FRAME) {
			double ms;
			int kn;
			/* a run without kl_run: the same flush, start and stop, and
			 * the same window of activity records as a fast run (its
			 * cost is in kloop's clock's round trip of a run, so it is in
			 * the frame taken from it too) */
			int kw = b->kernels_begin && b->kernels_begin(b) == 0;
			bad = (cuda && b->flush(b, err) < 0) || b->sync(b, err) < 0;
			bad = bad || b->timer_start(b, err) < 0 ||
			      (b->launch_empty && b->launch_empty(b, err) < 0) ||
			      b->timer_stop(b, &ms, &rep.md, err) < 0;
			if (kw)
				b->kernels_end(b, &kn);
		} else if (m.op == CM_RUN) {
			/* a window of activity records around every call, whatever
			 * its kind (the same cost in each); a fast run's time is its
			 * kernels' (a strict one's is device-wide, to a synchronize,
			 * by events).  Opened before the flush is queued: opening it
			 * holds the host longer than the flush kernel runs, which
			 * then left the GPU idle before the start event (cupti.cu) */
			/* a profiled run: the Range Profiler's window instead, opened
			 * before the flush too (its first range), no events (the
			 * profiler's work between the launches would be in them) */
			int prof = m.mode == HC_PROFILED;
			int kw = !prof && b->kernels_begin && b->kernels_begin(b) == 0;
			int pw = prof && b->prof_begin && b->prof_begin(b) == 0;
			/* on the GPU, the caches are flushed in this context too (its
			 * persisting L2 lines are its own), right before the start event */
			if (m.mode != HC_UNTIMED && cuda && b->flush(b, err) < 0)
				bad = 1;
			if (!bad && m.mode == HC_STRICT && b->sync(b, err) < 0)
				bad = 1;
			if (!bad && m.mode != HC_UNTIMED && !prof && b->timer_start(b, err) < 0)
				bad = 1;
			if (!bad) {
				rep.rc = call_cand(fn, in[q], nIn[q], out[q], nOut[q], b->stream);
				call_said(rep.rc, &rep);
			}
			if (!bad && m.mode != HC_UNTIMED && !prof &&
			    b->timer_stop(b, &rep.ms, &rep.md, err) < 0)
				bad = 1;
			int kn = 0;
			double k = kw ? b->kernels_end(b, &kn) : -1;
			if (!bad && m.mode == HC_FAST && k >= 0 && kn > 0) {
				rep.me = rep.ms;
				rep.ms = k;
				rep.kn = kn;
			}
			if (!bad && b->sync(b, err) < 0)
				bad = 1;
			if (prof)
				profiled_time(b, pw, cuda, bad, &rep);
		} else if (m.op == CM_TOUCH) {
			if (m.rc < 1 || m.rc > ring[q].slots)
				_exit(3);
			if (!cuda)
				ring_touch(&ring[q], m.rc);
			rep.set = m.rc;
		} else if (m.op == CM_BATCH) {
			if (m.rc < 1 || m.rc > HARNESS_BATCH_MAX || (fn && m.rc > ring[q].slots))
				_exit(3);
			bad = run_batch(b, fn, m.mode, m.rc, &ring[q], in[q], nIn[q], out[q],
			                nOut[q], &rep, err);
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
