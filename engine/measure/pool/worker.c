/*
 * worker.c - runs kloop-worker processes for the engine: the launch, the
 * JSON-lines protocol, per-job wall-clock timeouts, crash diagnosis from the
 * wait status and the worker's last output, and restarts.
 */
#include "worker.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proc.h"
#include "protocol.h"
#include "result.h"
#include "util.h"
#include "version.h"
#include "worker_priv.h"
#include "worker_warm.h"

#define TAIL_MAX (64 * 1024)

static void start(struct worker *w);
static void died(struct worker *w, const char *zWhy);

/* waiting for a worker that closed its output to exit, without blocking the loop */
struct reap {
	struct worker *w;
	char *zWhy; /* our reason, or NULL */
	int tries;
};

struct worker *worker_new(struct loop *l, const struct worker_config *cfg, worker_end_fn done,
                          worker_progress_fn progress, void *arg)
{
	/* a request written to a worker that has just died (a host that
	 * dropped, or one doctor --workers tries that dies early) must fail
	 * with EPIPE, not end kloop with SIGPIPE: the one place that ignores it */
	struct sigaction sa;
	if (sigaction(SIGPIPE, NULL, &sa) == 0 && sa.sa_handler == SIG_DFL)
		signal(SIGPIPE, SIG_IGN);
	struct worker *w = xcalloc(1, sizeof *w);
	w->l = l;
	w->cfg = *cfg;
	if (w->cfg.runTimeoutS <= 0)
		w->cfg.runTimeoutS = 120;
	if (w->cfg.setupTimeoutS <= 0)
		w->cfg.setupTimeoutS = 900;
	if (w->cfg.helloTimeoutS <= 0)
		w->cfg.helloTimeoutS = WORKER_HELLO_S;
	w->done = done;
	w->progress = progress;
	w->arg = arg;
	w->in = w->out = w->err = -1;
	lb_init(&w->outbuf, PROTO_LINE_MAX);
	return w;
}

static void close_fds(struct worker *w)
{
	if (w->in >= 0)
		close(w->in);
	if (w->out >= 0) {
		loop_del_fd(w->l, w->out);
		close(w->out);
	}
	if (w->err >= 0) {
		loop_del_fd(w->l, w->err);
		close(w->err);
	}
	w->in = w->out = w->err = -1;
}

static void job_free(struct wjob *j)
{
	eval_request_free(&j->rq);
	free(j);
}

void worker_free(struct worker *w)
{
	if (!w)
		return;
	/* a warm worker with nothing left to do waits for the next engine:
	 * its channel closes, and it is neither killed nor waited for */
	int keep = w->warm && w->ready && !w->jobs;
	if (w->pid > 0 && !keep) {
		proc_kill_group(w->pid);
		waitpid(w->pid, NULL, 0);
	}
	close_fds(w);
	if (w->timer)
		loop_del_timer(w->l, w->timer);
	if (w->reapTimer)
		loop_del_timer(w->l, w->reapTimer);
	if (w->kick)
		loop_del_timer(w->l, w->kick);
	if (w->reap) {
		free(w->reap->zWhy);
		free(w->reap);
	}
	while (w->jobs) {
		struct wjob *j = w->jobs;
		w->jobs = j->next;
		job_free(j);
	}
	lb_free(&w->outbuf);
	sb_free(&w->tail);
	cJSON_Delete(w->refTiming);
	cJSON_Delete(w->baselines);
	cJSON_Delete(w->refData);
	free(w->zRefName);
	free(w->zDevice);
	free(w->zHost);
	free(w->zUuid);
	free(w->zTaskError);
	free(w->zSignal);
	free(w->zSandboxWarning);
	free(w->zLaunch);
	cJSON_Delete(w->measured);
	free(w);
}

void worker_end(struct worker *w)
{
	if (w->in >= 0)
		close(w->in);
	w->in = -1;
}

static void send_line(struct worker *w, cJSON *o)
{
	char *z = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	size_t n = strlen(z);
	z = xrealloc(z, n + 2);
	z[n] = '\n';
	if (w->in >= 0 && write_all(w->in, z, n + 1) < 0) {
		/* the worker is gone; its EOF on the protocol pipe reports it */
	}
	free(z);
}

static void send_job(struct worker *w, struct wjob *j)
{
	send_line(w, protocol_eval(&j->rq));
	j->sent = 1;
}

static struct wjob *find_job(struct worker *w, int id)
{
	for (struct wjob *j = w->jobs; j; j = j->next)
		if (j->id == id)
			return j;
	return NULL;
}

static void remove_job(struct worker *w, struct wjob *j)
{
	struct wjob **pp = &w->jobs;
	while (*pp && *pp != j)
		pp = &(*pp)->next;
	if (*pp)
		*pp = j->next;
}

int worker_cancel_waiting(struct worker *w, int id)
{
	struct wjob *j = w->jobs;
	while (j && j->id != id)
		j = j->next;
	if (!j || j->running)
		return -1;
	/* the worker drops it unrun; one that started it before reading this
	 * finishes it, and that result, for a job no longer here, is dropped */
	if (j->sent && w->in >= 0) {
		send_line(w, protocol_cancel(id));
	}
	remove_job(w, j);
	job_free(j);
	return 0;
}

/* end job j with result (which this consumes); lost: the worker itself
 * was lost, not the candidate's doing */
static void finish_as(struct worker *w, struct wjob *j, cJSON *result, int lost)
{
	remove_job(w, j);
	int id = j->id;
	job_free(j);
	struct worker_end e = {result, lost, lost && w->disabled};
	w->done(id, &e, w->arg);
	cJSON_Delete(result);
}

static void finish(struct worker *w, struct wjob *j, cJSON *result)
{
	finish_as(w, j, result, 0);
}

/* n more bytes of the worker's stderr into its tail (the last TAIL_MAX) */
static void tail_add(struct worker *w, const char *buf, size_t n)
{
	sb_add(&w->tail, buf, n);
	if (w->tail.len > TAIL_MAX)
		sb_consume(&w->tail, w->tail.len - TAIL_MAX / 2);
}

/* what the worker's stderr holds now, into the tail (before it is read) */
static void drain_err(struct worker *w)
{
	char buf[65536];
	ssize_t n;
	while (w->err >= 0 && (n = read(w->err, buf, sizeof buf)) > 0)
		tail_add(w, buf, (size_t)n);
}

/* the last n lines of the worker's output */
static char *tail_lines(struct worker *w, int n)
{
	if (!w->tail.len)
		return xstrdup("");
	const char *s = w->tail.buf, *p = s + w->tail.len;
	if (p > s && p[-1] == '\n')
		p--;
	int lines = 0;
	while (p > s) {
		if (p[-1] == '\n' && ++lines == n)
			break;
		p--;
	}
	size_t len = (size_t)(s + w->tail.len - p);
	if (len > 4000) {
		p = s + w->tail.len - 4000;
		len = 4000;
	}
	char *z = xstrndup(p, len);
	utf8_sanitize(z);
	return z;
}

/* 1 while a worker process serves w: our child, or the warm worker this
 * engine attached to (not our child: pid 0) */
static int live(const struct worker *w)
{
	return w->pid > 0 || w->attached;
}

/* end the worker's process and everything it started: our child, or the
 * warm worker attached to */
static void kill_worker(struct worker *w)
{
	if (w->pid > 0)
		proc_kill_group(w->pid);
	else if (w->attached && w->warmPid > 0)
		proc_kill_group(w->warmPid);
}

/* refuse this worker for good (zWhy, which this takes: why, naming it):
 * its process ends and its jobs fail with zWhy, or go to another worker of
 * a pool; it is not started again */
static void refuse(struct worker *w, char *zWhy)
{
	free(w->zTaskError);
	w->zTaskError = zWhy;
	w->taskErrorOwn = 0;
	w->disabled = 1;
	kill_worker(w);
	died(w, NULL);
}

/* the seconds a worker has for its hello (within the setup's limit) */
static double hello_limit(const struct worker *w)
{
	return w->cfg.helloTimeoutS < w->cfg.setupTimeoutS ? w->cfg.helloTimeoutS
	                                                   : w->cfg.setupTimeoutS;
}

static void on_timer(struct loop *l, long long id, void *arg)
{
	struct worker *w = arg;
	(void)l, (void)id;
	w->timer = 0;
	struct wjob *run = NULL;
	for (struct wjob *j = w->jobs; j; j = j->next)
		if (j->running)
			run = j;
	char why[300];
	if (!w->helloed) {
		/* not a kloop-worker, or one that hangs: waiting longer for it
		 * helps nobody, and starting it again neither */
		refuse(w, xasprintf("the worker said nothing within %g s of its start (a "
		                    "kloop-worker says hello first): is '%s' a kloop-worker? "
		                    "(--worker CMD, --workers SPEC)",
		                    hello_limit(w), w->zLaunch ? w->zLaunch : "?"));
		return;
	}
	if (run)
		snprintf(why, sizeof why, "no result after %g s (wall-clock limit) while %s%s",
		         w->cfg.runTimeoutS, run->zStage ? run->zStage : "running",
		         run->zStage && !strcmp(run->zStage, "checking") ? " (trial)" : "");
	else
		snprintf(why, sizeof why, "the worker did not finish loading the task within %g s",
		         w->cfg.setupTimeoutS);
	kill_worker(w);
	died(w, why);
}

static void arm(struct worker *w, double s)
{
	if (w->timer)
		loop_del_timer(w->l, w->timer);
	w->timer = loop_add_timer(w->l, s, on_timer, w);
}

static void handle_event(struct worker *w, cJSON *o)
{
	int jid;
	enum proto_ev ev = protocol_event_of(o, &jid);
	struct wjob *j = jid >= 0 ? find_job(w, jid) : NULL;
	if (ev == PROTO_EV_HELLO) {
		struct proto_hello hi;
		protocol_hello_decode(o, &hi);
		const char *h = hi.zHost, *v = hi.zVersion;
		free(w->zDevice);
		w->zDevice = xstrdup(hi.zDevice ? hi.zDevice : "?");
		free(w->zHost);
		w->zHost = h ? xstrdup(h) : NULL;
		w->bandwidthGbs = hi.bandwidthGbs;
		free(w->zUuid);
		w->zUuid = hi.zUuid ? xstrdup(hi.zUuid) : NULL;
		if (!v || strcmp(v, KLOOP_VERSION)) {
			/* another kloop's worker: its numbers and protocol are not ours */
			refuse(w, xasprintf("kloop-worker%s%s is version %s, kloop is %s: install "
			                    "the same kloop on both (make install)",
			                    h ? " on " : "", h ? h : "",
			                    v ? v : "unknown (older than 0.1.0)", KLOOP_VERSION));
			return;
		}
		const char *sw = hi.zSandboxWarning;
		if (sw && !w->zSandboxWarning)
			w->zSandboxWarning = xstrdup(sw);
		/* from here on the task's loading has the setup's limit */
		w->helloed = 1;
		if (!w->ready)
			arm(w, w->cfg.setupTimeoutS);
	} else if (ev == PROTO_EV_TASK_READY) {
		struct proto_ready rd;
		protocol_ready_decode(o, &rd);
		w->ready = 1;
		if (w->timer)
			loop_del_timer(w->l, w->timer), w->timer = 0;
		const cJSON *tm = rd.refTiming;
		if (tm && !w->refTiming)
			w->refTiming = cJSON_Duplicate(tm, 1);
		const cJSON *bl = rd.baselines;
		if (bl && (!w->baselines || result_compile_pending(w->baselines))) {
			/* a restart's, whole where the first's was still compiling */
			int whole = w->baselines && !result_compile_pending(bl);
			cJSON_Delete(w->baselines);
			w->baselines = cJSON_Duplicate(bl, 1);
			if (whole && w->cfg.onBaselines)
				w->cfg.onBaselines(w->zDevice, w->baselines, w->cfg.baselinesArg);
		}
		if (rd.refSeconds >= 0) {
			/* the latest worker's: a restart makes the data again (the
			 * reference data's keys, result.h's) */
			cJSON_Delete(w->refData);
			w->refData = cJSON_CreateObject();
			cJSON_AddNumberToObject(w->refData, "seconds", rd.refSeconds);
			if (rd.nTrials >= 0)
				cJSON_AddNumberToObject(w->refData, "trials", rd.nTrials);
			if (rd.zNote)
				cJSON_AddStringToObject(w->refData, "note", rd.zNote);
			if (rd.sizes)
				cJSON_AddItemToObject(w->refData, "sizes",
				                      cJSON_Duplicate(rd.sizes, 1));
			/* setup: where the worker's seconds before its first candidate went */
			if (rd.setup)
				cJSON_AddItemToObject(w->refData, "setup",
				                      cJSON_Duplicate(rd.setup, 1));
		} else if (rd.setup) {
			/* a kernel reference's: its setup alone (the inputs drawn and
			 * varied, the reference compiled, run and timed) */
			cJSON_Delete(w->refData);
			w->refData = cJSON_CreateObject();
			cJSON_AddItemToObject(w->refData, "setup", cJSON_Duplicate(rd.setup, 1));
		}
		const char *r = rd.zReference;
		if (r && !w->zRefName)
			w->zRefName = xstrdup(r);
	} else if (ev == PROTO_EV_BASELINES) {
		/* torch.compile's baseline, compiled in the background, is timed */
		double sec;
		const cJSON *bl = protocol_baselines_decode(o, &sec);
		if (!cJSON_IsObject(bl) || !result_compile_pending(w->baselines))
			return;
		cJSON_Delete(w->baselines);
		w->baselines = cJSON_Duplicate(bl, 1);
		cJSON *su = cJSON_GetObjectItem(w->refData, "setup");
		if (cJSON_IsObject(su) && sec >= 0)
			cJSON_AddNumberToObject(su, "torch_compile_done", sec);
		if (w->cfg.onBaselines)
			w->cfg.onBaselines(w->zDevice, w->baselines, w->cfg.baselinesArg);
	} else if (ev == PROTO_EV_PROGRESS && j) {
		int k;
		const char *st = protocol_progress_decode(o, &k);
		if (!st)
			return;
		if (!strcmp(st, "running")) {
			j->running = 1;
			free(w->zSignal);
			w->zSignal = NULL;
			arm(w, w->cfg.runTimeoutS);
		}
		static const char *known[] = {"checking",     "timing",      "compiling",
		                              "small shapes", "full shapes", "quick timing",
		                              "full timing",  "a/b"};
		if (!strcmp(st, "running"))
			j->zStage = "loading";
		for (size_t i = 0; i < sizeof known / sizeof *known; i++)
			if (!strcmp(st, known[i]))
				j->zStage = known[i];
		j->k = k;
		if (w->progress)
			w->progress(j->id, st, j->k, w->arg);
	} else if (ev == PROTO_EV_RESULT && j) {
		if (w->timer)
			loop_del_timer(w->l, w->timer), w->timer = 0;
		cJSON *r = protocol_result_of(o);
		/* a candidate that crashed in its own process: its last words */
		struct verdict v;
		verdict_decode(r, &v);
		if (v.status == STATUS_CRASHED && !v.zStderrTail) {
			drain_err(w);
			char *tail = tail_lines(w, 20);
			v.zStderrTail = tail;
			verdict_encode(r, &v, 0);
			free(tail);
		}
		finish(w, j, r);
	} else if (ev == PROTO_EV_CAND_SIGNAL || ev == PROTO_EV_CAND_EXIT) {
		int code;
		const char *zName;
		protocol_cand_ended_decode(o, &code, &zName);
		free(w->zSignal);
		if (ev == PROTO_EV_CAND_EXIT)
			w->zSignal = xasprintf("the candidate called exit(%d)", code);
		else
			w->zSignal = xasprintf("the candidate was killed by %s", zName);
	} else if (ev == PROTO_EV_ERROR) {
		int fatal;
		const char *m = protocol_error_decode(o, &fatal);
		if (j) {
			finish(w, j, verdict_new(STATUS_COMPILE_ERROR, m ? m : "error"));
		} else if (fatal && !w->ready) {
			/* what the worker and its helpers printed last (a problem's
			 * traceback, a helper's complaint) goes with the error: the
			 * person reading it has no other way to see it */
			drain_err(w);
			char *tail = tail_lines(w, 12);
			free(w->zTaskError);
			w->zTaskError =
			    *tail ? xasprintf("%s\nthe worker's last lines of output:\n%s",
			                      m ? m : "the worker failed to load the task", tail)
			          : xstrdup(m ? m : "the worker failed to load the task");
			free(tail);
			w->taskErrorOwn = 1;
		}
	}
}

static void on_stdout(struct loop *l, int fd, int events, void *arg)
{
	struct worker *w = arg;
	(void)l, (void)events;
	char buf[65536];
	ssize_t r;
	while ((r = read(fd, buf, sizeof buf)) > 0) {
		lb_add(&w->outbuf, buf, (size_t)r);
		char *z;
		size_t n;
		int got;
		while ((got = lb_next(&w->outbuf, &z, &n)) > 0) {
			cJSON *o = cJSON_ParseWithLength(z, n);
			if (o)
				handle_event(w, o);
			cJSON_Delete(o);
			if (w->out != fd)
				return; /* the worker was replaced from a callback */
		}
		if (got < 0) {
			free(w->zSignal);
			w->zSignal =
			    xasprintf("protocol error: the worker sent a line of more than "
			              "%u bytes without a newline",
			              (unsigned)PROTO_LINE_MAX);
			kill_worker(w);
			died(w, NULL);
			return;
		}
	}
	if (r < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	died(w, NULL);
}

static void on_stderr(struct loop *l, int fd, int events, void *arg)
{
	struct worker *w = arg;
	(void)l, (void)events;
	char buf[65536];
	ssize_t r;
	while ((r = read(fd, buf, sizeof buf)) > 0)
		tail_add(w, buf, (size_t)r);
	if (r < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	loop_del_fd(w->l, fd);
	close(fd);
	w->err = -1;
}

static void reaped(struct worker *w, const char *zWhy, int status);

static void reap_poll(struct loop *l, long long id, void *arg)
{
	struct reap *r = arg;
	struct worker *w = r->w;
	int status = 0;
	(void)id;
	w->reapTimer = 0;
	pid_t p = waitpid(w->pid, &status, WNOHANG);
	if (p == 0 && ++r->tries < 200) {
		w->reapTimer = loop_add_timer(l, 0.005, reap_poll, r);
		return;
	}
	if (p == 0) { /* closed its output but lingers: 1 s is enough */
		proc_kill_group(w->pid);
		waitpid(w->pid, &status, 0);
	}
	w->reap = NULL;
	reaped(w, r->zWhy, status);
	free(r->zWhy);
	free(r);
}

/* the worker process ended or must end (zWhy: our reason, e.g. a timeout;
 * NULL: it died).  The report follows once it has been reaped. */
static void died(struct worker *w, const char *zWhy)
{
	/* drain what it left on stderr */
	if (w->err >= 0) {
		fd_nonblock(w->err);
		char buf[65536];
		ssize_t r;
		while ((r = read(w->err, buf, sizeof buf)) > 0)
			tail_add(w, buf, (size_t)r);
	}
	close_fds(w);
	if (w->timer)
		loop_del_timer(w->l, w->timer), w->timer = 0;
	if (w->pid <= 0) {
		reaped(w, zWhy, 0);
		return;
	}
	if (zWhy)
		proc_kill_group(w->pid);
	struct reap *r = xcalloc(1, sizeof *r);
	r->w = w;
	r->zWhy = zWhy ? xstrdup(zWhy) : NULL;
	w->reap = r;
	reap_poll(w->l, 0, r);
}

static void reaped(struct worker *w, const char *zWhy, int status)
{
	char st[160] = "";
	if (w->pid > 0)
		proc_describe_status(status, st, sizeof st);
	else if (w->attached)
		snprintf(st, sizeof st, "kept warm (pid %d) closed its connection",
		         (int)w->warmPid);
	if (w->attached || w->warm)
		w->warmOff = 1; /* a plain worker of our own from here */
	w->attached = w->warm = 0;
	w->pid = 0;
	if (w->timer)
		loop_del_timer(w->l, w->timer), w->timer = 0;
	struct wjob *run = NULL;
	for (struct wjob *j = w->jobs; j; j = j->next)
		if (j->running)
			run = j;
	char *tail = tail_lines(w, 20);
	if (run) {
		strbuf why = STRBUF_INIT;
		if (zWhy)
			sb_addf(&why, "%s", zWhy);
		else if (w->zSignal)
			sb_addf(&why, "%s (the worker %s)", w->zSignal, st);
		else
			sb_addf(&why, "the worker %s while %s", st,
			        run->zStage ? run->zStage : "running");
		/* no crash note from the candidate and not our timeout: the worker
		 * itself was lost (killed, its host or connection gone) */
		int lost = !zWhy && !w->zSignal;
		cJSON *r = verdict_new(zWhy ? STATUS_TIMEOUT : STATUS_CRASHED, why.buf);
		struct verdict v;
		verdict_decode(r, &v);
		v.zStderrTail = tail;
		verdict_encode(r, &v, 0);
		if (!zWhy && WIFSIGNALED(status))
			cJSON_AddNumberToObject(r, "signal", WTERMSIG(status));
		sb_free(&why);
		finish_as(w, run, r, lost);
	} else if (!w->ready || w->jobs) {
		/* nothing was running: the worker itself failed */
		const char *m = w->zTaskError;
		char *msg = m ? xstrdup(m)
		            : w->zSignal
		                ? xasprintf("%s, before %s", w->zSignal,
		                            w->ready ? "running a candidate" : "loading the task")
		                : xasprintf("the worker %s before %s%s%s", zWhy ? zWhy : st,
		                            w->ready ? "running a candidate" : "loading the task",
		                            *tail ? ":\n" : "", tail);
		if (!w->zTaskError && !w->ready)
			w->zTaskError = xstrdup(msg);
		if (!w->ready) {
			while (w->jobs)
				finish_as(w, w->jobs, verdict_new(STATUS_ERROR, msg),
				          !w->taskErrorOwn);
		}
		free(msg);
	}
	free(tail);
	free(w->zSignal);
	w->zSignal = NULL;
	/* the remaining jobs go to a fresh worker (the task loaded once proved it works) */
	if (w->jobs && !w->zTaskError) {
		for (struct wjob *j = w->jobs; j; j = j->next)
			j->sent = j->running = 0;
		start(w);
	}
}

/* from the loop: fail the jobs of a worker that cannot start or load the
 * task (worker_submit() and start() never answer from inside themselves) */
static void on_kick(struct loop *l, long long id, void *arg)
{
	struct worker *w = arg;
	(void)l, (void)id;
	w->kick = 0;
	while (w->zTaskError && w->jobs)
		finish_as(w, w->jobs, verdict_new(STATUS_ERROR, w->zTaskError), !w->taskErrorOwn);
}

static void kick(struct worker *w)
{
	if (!w->kick)
		w->kick = loop_add_timer(w->l, 0, on_kick, w);
}

/* the task request for a process of w (a fresh copy) */
static cJSON *task_request(struct worker *w)
{
	cJSON *files = w->cfg.shipTask ? worker_task_files(w->cfg.zTaskDir) : NULL;
	struct proto_task t = {
	    .zDir = w->cfg.zTaskDir,
	    .files = files,
	    .zShapes = w->cfg.zShapes,
	    .zReference = w->cfg.zReference,
	    .zLibs = w->cfg.zLibs,
	    .nTrials = w->cfg.nTrials,
	    .budgetS = w->cfg.budgetS,
	    /* a reference run is bounded as a candidate's whole evaluation is */
	    .runTimeoutS = w->cfg.runTimeoutS,
	    .atol = w->cfg.bTol ? w->cfg.atol : -1,
	    .rtol = w->cfg.bTol ? w->cfg.rtol : -1,
	    .size = w->cfg.size,
	    .timeReference = (w->refTiming == NULL && w->baselines == NULL) ||
	                     result_compile_pending(w->baselines),
	    .deferCompile = w->cfg.deferCompile,
	};
	cJSON *o = protocol_task(&t);
	cJSON_Delete(files);
	return o;
}

/*
 * Kept warm (cfg.warmS): attach to the worker waiting on the socket named
 * for this launch and task (1: attached, its channel in w), else the launch
 * with --warm and --linger added (*pArgv replaced by a fresh copy, which
 * the caller frees), so that it waits there once this engine is done.
 */
static int warm_start(struct worker *w, char ***pArgv, int *pOwned, const char *zTaskLine)
{
	char err[KL_ERRLEN];
	if (w->cfg.warmS <= 0 || w->warmOff || w->cfg.shipTask)
		return 0;
	char *path = worker_warm_path(*pArgv, zTaskLine, w->cfg.zTaskDir, err);
	if (!path)
		return 0;
	int sock, efd, pid;
	if (worker_warm_attach(path, &sock, &efd, &pid) == 0) {
		free(path);
		w->in = fcntl(sock, F_DUPFD_CLOEXEC, 3);
		w->out = sock;
		w->err = efd;
		fd_nonblock(w->out);
		fd_nonblock(w->err);
		w->pid = 0;
		w->warmPid = pid;
		w->attached = w->warm = 1;
		if (w->in >= 0)
			return 1;
		close(sock);
		close(efd);
		w->in = w->out = w->err = -1;
		w->warmPid = 0;
		w->attached = w->warm = 0; /* a plain worker of our own, then */
		return 0;
	}
	int n = 0;
	while ((*pArgv)[n])
		n++;
	char **v = xcalloc((size_t)n + 5, sizeof *v);
	for (int i = 0; i < n; i++)
		v[i] = xstrdup((*pArgv)[i]);
	v[n++] = xstrdup("--warm");
	v[n++] = path;
	v[n++] = xstrdup("--linger");
	v[n++] = xasprintf("%g", w->cfg.warmS);
	if (*pOwned)
		for (int i = 0; (*pArgv)[i]; i++)
			free((*pArgv)[i]);
	if (*pOwned)
		free(*pArgv);
	*pArgv = v;
	*pOwned = 1;
	w->warm = 1;
	return 0;
}

static void start(struct worker *w)
{
	char err[KL_ERRLEN];
	char **argv = w->cfg.argvLaunch ? w->cfg.argvLaunch : worker_launch_argv(&w->cfg, NULL);
	int owned = argv != w->cfg.argvLaunch;
	cJSON *task = task_request(w);
	char *zTask = cJSON_PrintUnformatted(task);
	sb_reset(&w->tail);
	lb_free(&w->outbuf);
	int attached = warm_start(w, &argv, &owned, zTask);
	int inp[2] = {-1, -1};
	if (!attached) {
		if (pipe2(inp, O_CLOEXEC) < 0)
			die("pipe: %s", strerror(errno));
		/* workers never see API keys: nothing they run can leak one */
		struct proc_spec s = {
		    .argv = argv, .stdinFd = inp[0], .stdoutFd = -1, .stderrFd = -2, .scrubEnv = 1};
		w->pid = proc_spawn(&s, &w->out, &w->err, err);
		close(inp[0]);
	}
	strbuf launch = STRBUF_INIT;
	if (attached)
		sb_addf(&launch, "the warm kloop-worker (pid %d) of ", (int)w->warmPid);
	for (int i = 0; argv[i]; i++)
		sb_addf(&launch, "%s%s", i ? " " : "", argv[i]);
	free(w->zLaunch);
	w->zLaunch = sb_detach(&launch);
	if (owned) {
		for (int i = 0; argv[i]; i++)
			free(argv[i]);
		free(argv);
	}
	if (!attached && w->pid < 0) {
		close(inp[1]);
		w->pid = 0;
		free(w->zTaskError);
		w->zTaskError = xasprintf("cannot start the worker: %s", err);
		w->taskErrorOwn = 0;
		free(zTask);
		cJSON_Delete(task);
		kick(w); /* the jobs fail from the loop */
		return;
	}
	w->starts++;
	if (!attached)
		w->in = inp[1];
	loop_add_fd(w->l, w->out, LOOP_READ, on_stdout, w);
	loop_add_fd(w->l, w->err, LOOP_READ, on_stderr, w);
	w->ready = 0;
	w->helloed = 0;
	free(zTask);
	send_line(w, task);
	arm(w, hello_limit(w));
	cJSON *m;
	cJSON_ArrayForEach(m, w->measured) send_line(w, cJSON_Duplicate(m, 1));
	for (struct wjob *j = w->jobs; j; j = j->next)
		send_job(w, j);
}

int worker_submit(struct worker *w, const char *zName, const char *zSource, size_t nSource)
{
	struct eval_request rq = {.zName = zName, .zSource = zSource, .nSource = nSource};
	return worker_submit_req(w, &rq);
}

int worker_submit_req(struct worker *w, const struct eval_request *rq)
{
	struct wjob *j = xcalloc(1, sizeof *j);
	j->rq = eval_request_copy(rq);
	j->id = j->rq.job = ++w->nextId;
	struct wjob **pp = &w->jobs;
	while (*pp)
		pp = &(*pp)->next;
	*pp = j;
	if (w->zTaskError)
		kick(w); /* the job fails from the loop */
	else if (!live(w) && !w->reap)
		start(w); /* sends every job, this one too */
	else if (w->in >= 0)
		send_job(w, j);
	/* else: a dying worker is being reaped; the restart sends every job */
	return j->id;
}

void worker_code_measured(struct worker *w, const char *zDevice, const char *zCode,
                          const char *zLabel, const cJSON *timing)
{
	cJSON *o = protocol_measured(zDevice, zCode, zLabel, timing);
	if (!w->measured)
		w->measured = cJSON_CreateArray();
	cJSON_AddItemToArray(w->measured, o);
	/* a running worker now; one that starts later from start() */
	if (live(w) && w->in >= 0)
		send_line(w, cJSON_Duplicate(o, 1));
}
