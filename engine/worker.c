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
#include <sys/wait.h>
#include <unistd.h>

#include "proc.h"
#include "util.h"

#define TAIL_MAX (64 * 1024)

struct wjob {
	int id;
	char *zName;
	char *zSource;
	size_t nSource;
	int sent;         /* sent to the current worker process */
	int running;      /* the worker said "running" */
	const char *zStage;
	int k;
	struct wjob *next;
};

struct worker {
	struct loop *l;
	struct worker_config cfg;
	worker_done_fn done;
	worker_progress_fn progress;
	void *arg;
	pid_t pid;          /* current process, 0 if none */
	int in, out, err;   /* its stdin (we write), stdout (protocol), stderr */
	strbuf outbuf;      /* partial protocol line */
	strbuf tail;        /* last bytes of its stderr (and the candidate's output) */
	int ready;          /* task loaded */
	cJSON *refTiming;   /* from the first task_ready */
	cJSON *baselines;   /* PyTorch eager and torch.compile timings, or NULL */
	char *zRefName;
	char *zDevice;
	char *zTaskError;   /* task-level failure */
	struct wjob *jobs;  /* unfinished jobs, in order */
	int nextId;
	long long timer;    /* the running job's or the setup's deadline */
	long long reapTimer; /* polling for a dying worker's exit */
	struct reap *reap;  /* that poll's state, or NULL */
	int starts;
	char *zSignal;      /* crash note from the worker (candidate_signal/exit) */
};

static void start(struct worker *w);
static void died(struct worker *w, const char *zWhy);

/* waiting for a worker that closed its output to exit, without blocking the loop */
struct reap {
	struct worker *w;
	char *zWhy;  /* our reason, or NULL */
	int tries;
};

struct worker *worker_new(struct loop *l, const struct worker_config *cfg, worker_done_fn done,
			  worker_progress_fn progress, void *arg)
{
	struct worker *w = xcalloc(1, sizeof *w);
	w->l = l;
	w->cfg = *cfg;
	if (w->cfg.runTimeoutS <= 0)
		w->cfg.runTimeoutS = 120;
	if (w->cfg.setupTimeoutS <= 0)
		w->cfg.setupTimeoutS = 900;
	w->done = done;
	w->progress = progress;
	w->arg = arg;
	w->in = w->out = w->err = -1;
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
	free(j->zName);
	free(j->zSource);
	free(j);
}

void worker_free(struct worker *w)
{
	if (!w)
		return;
	if (w->pid > 0) {
		proc_kill_group(w->pid);
		waitpid(w->pid, NULL, 0);
	}
	close_fds(w);
	if (w->timer)
		loop_del_timer(w->l, w->timer);
	if (w->reapTimer)
		loop_del_timer(w->l, w->reapTimer);
	if (w->reap) {
		free(w->reap->zWhy);
		free(w->reap);
	}
	while (w->jobs) {
		struct wjob *j = w->jobs;
		w->jobs = j->next;
		job_free(j);
	}
	sb_free(&w->outbuf);
	sb_free(&w->tail);
	cJSON_Delete(w->refTiming);
	cJSON_Delete(w->baselines);
	free(w->zRefName);
	free(w->zDevice);
	free(w->zTaskError);
	free(w->zSignal);
	free(w);
}

int worker_pending(const struct worker *w)
{
	int n = 0;
	for (struct wjob *j = w->jobs; j; j = j->next)
		n++;
	return n;
}

const cJSON *worker_reference_timing(const struct worker *w)
{
	return w->refTiming;
}

const cJSON *worker_baselines(const struct worker *w)
{
	return w->baselines;
}

const char *worker_reference_name(const struct worker *w)
{
	return w->zRefName;
}

const char *worker_device(const struct worker *w)
{
	return w->zDevice;
}

const char *worker_task_error(const struct worker *w)
{
	return w->zTaskError;
}

int worker_starts(const struct worker *w)
{
	return w->starts;
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
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "op", "eval");
	cJSON_AddNumberToObject(o, "job", j->id);
	cJSON_AddStringToObject(o, "name", j->zName);
	cJSON_AddItemToObject(o, "source", cJSON_CreateString(j->zSource));
	send_line(w, o);
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

/* end job j with result (which this consumes) */
static void finish(struct worker *w, struct wjob *j, cJSON *result)
{
	remove_job(w, j);
	int id = j->id;
	job_free(j);
	w->done(id, result, w->arg);
	cJSON_Delete(result);
}

static cJSON *simple_result(const char *zStatus, const char *zReason)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "status", zStatus);
	cJSON_AddStringToObject(o, "reason", zReason);
	return o;
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
	if (run)
		snprintf(why, sizeof why, "no result after %.0f s (wall-clock limit) while %s%s",
			 w->cfg.runTimeoutS, run->zStage ? run->zStage : "running",
			 run->zStage && !strcmp(run->zStage, "checking") ? " (trial)" : "");
	else
		snprintf(why, sizeof why, "the worker did not finish loading the task within %.0f s",
			 w->cfg.setupTimeoutS);
	if (w->pid > 0)
		proc_kill_group(w->pid);
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
	const char *ev = cJSON_GetStringValue(cJSON_GetObjectItem(o, "ev"));
	cJSON *jid = cJSON_GetObjectItem(o, "job");
	struct wjob *j = cJSON_IsNumber(jid) ? find_job(w, jid->valueint) : NULL;
	if (!ev)
		return;
	if (!strcmp(ev, "hello")) {
		const char *d = cJSON_GetStringValue(cJSON_GetObjectItem(o, "device"));
		free(w->zDevice);
		w->zDevice = xstrdup(d ? d : "?");
	} else if (!strcmp(ev, "task_ready")) {
		w->ready = 1;
		if (w->timer)
			loop_del_timer(w->l, w->timer), w->timer = 0;
		cJSON *tm = cJSON_GetObjectItem(o, "reference_timing");
		if (tm && !w->refTiming)
			w->refTiming = cJSON_Duplicate(tm, 1);
		cJSON *bl = cJSON_GetObjectItem(o, "baselines");
		if (bl && !w->baselines)
			w->baselines = cJSON_Duplicate(bl, 1);
		const char *r = cJSON_GetStringValue(cJSON_GetObjectItem(o, "reference"));
		if (r && !w->zRefName)
			w->zRefName = xstrdup(r);
	} else if (!strcmp(ev, "progress") && j) {
		const char *st = cJSON_GetStringValue(cJSON_GetObjectItem(o, "stage"));
		cJSON *k = cJSON_GetObjectItem(o, "k");
		if (!st)
			return;
		if (!strcmp(st, "running")) {
			j->running = 1;
			free(w->zSignal);
			w->zSignal = NULL;
			arm(w, w->cfg.runTimeoutS);
		}
		j->zStage = !strcmp(st, "running") ? "loading" : !strcmp(st, "checking") ? "checking"
			    : !strcmp(st, "timing") ? "timing" : !strcmp(st, "compiling") ? "compiling"
										: j->zStage;
		j->k = cJSON_IsNumber(k) ? k->valueint : -1;
		if (w->progress)
			w->progress(j->id, st, j->k, w->arg);
	} else if (!strcmp(ev, "result") && j) {
		if (w->timer)
			loop_del_timer(w->l, w->timer), w->timer = 0;
		cJSON *r = cJSON_Duplicate(o, 1);
		cJSON_DeleteItemFromObject(r, "ev");
		cJSON_DeleteItemFromObject(r, "job");
		finish(w, j, r);
	} else if (!strcmp(ev, "candidate_signal") || !strcmp(ev, "candidate_exit")) {
		free(w->zSignal);
		if (!strcmp(ev, "candidate_exit"))
			w->zSignal = xasprintf("the candidate called exit(%d)",
					       (int)cJSON_GetNumberValue(cJSON_GetObjectItem(o, "status")));
		else
			w->zSignal = xasprintf("the candidate was killed by %s",
					       cJSON_GetStringValue(cJSON_GetObjectItem(o, "name")));
	} else if (!strcmp(ev, "error")) {
		const char *m = cJSON_GetStringValue(cJSON_GetObjectItem(o, "message"));
		if (j) {
			finish(w, j, simple_result("compile_error", m ? m : "error"));
		} else if (cJSON_IsTrue(cJSON_GetObjectItem(o, "fatal")) && !w->ready) {
			free(w->zTaskError);
			w->zTaskError = xstrdup(m ? m : "the worker failed to load the task");
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
		sb_add(&w->outbuf, buf, (size_t)r);
		char *nl;
		while (w->outbuf.buf && (nl = memchr(w->outbuf.buf, '\n', w->outbuf.len))) {
			size_t n = (size_t)(nl - w->outbuf.buf);
			cJSON *o = cJSON_ParseWithLength(w->outbuf.buf, n);
			sb_consume(&w->outbuf, n + 1);
			if (o)
				handle_event(w, o);
			cJSON_Delete(o);
			if (w->out != fd)
				return; /* the worker was replaced from a callback */
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
	while ((r = read(fd, buf, sizeof buf)) > 0) {
		sb_add(&w->tail, buf, (size_t)r);
		if (w->tail.len > TAIL_MAX)
			sb_consume(&w->tail, w->tail.len - TAIL_MAX / 2);
	}
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
		while ((r = read(w->err, buf, sizeof buf)) > 0) {
			sb_add(&w->tail, buf, (size_t)r);
			if (w->tail.len > TAIL_MAX)
				sb_consume(&w->tail, w->tail.len - TAIL_MAX / 2);
		}
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
			sb_addf(&why, "the worker %s while %s", st, run->zStage ? run->zStage : "running");
		cJSON *r = simple_result(zWhy ? "timeout" : "crashed", why.buf);
		cJSON_AddStringToObject(r, "stderr_tail", tail);
		if (!zWhy && WIFSIGNALED(status))
			cJSON_AddNumberToObject(r, "signal", WTERMSIG(status));
		sb_free(&why);
		finish(w, run, r);
	} else if (!w->ready || w->jobs) {
		/* nothing was running: the worker itself failed */
		const char *m = w->zTaskError;
		char *msg = m ? xstrdup(m)
			      : xasprintf("the worker %s before %s%s%s", zWhy ? zWhy : st,
					  w->ready ? "running a candidate" : "loading the task",
					  *tail ? ":\n" : "", tail);
		if (!w->zTaskError && !w->ready)
			w->zTaskError = xstrdup(msg);
		if (!w->ready) {
			while (w->jobs)
				finish(w, w->jobs, simple_result("error", msg));
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

static char **default_launch(const struct worker_config *c)
{
	char **v = xcalloc(12, sizeof(char *));
	int n = 0;
	v[n++] = path_join(exe_dir(), "kloop-worker");
	v[n++] = xstrdup("--backend");
	v[n++] = xstrdup(c->zBackend);
	if (c->jobs > 0) {
		v[n++] = xstrdup("--jobs");
		v[n++] = xasprintf("%d", c->jobs);
	}
	if (c->zPython) {
		v[n++] = xstrdup("--python");
		v[n++] = xstrdup(c->zPython);
	}
	return v;
}

static void start(struct worker *w)
{
	char err[KL_ERRLEN];
	char **argv = w->cfg.argvLaunch ? w->cfg.argvLaunch : default_launch(&w->cfg);
	int inp[2];
	if (pipe2(inp, O_CLOEXEC) < 0)
		die("pipe: %s", strerror(errno));
	struct proc_spec s = {.argv = argv, .stdinFd = inp[0], .stdoutFd = -1, .stderrFd = -2};
	sb_reset(&w->tail);
	sb_reset(&w->outbuf);
	w->pid = proc_spawn(&s, &w->out, &w->err, err);
	close(inp[0]);
	if (argv != w->cfg.argvLaunch) {
		for (int i = 0; argv[i]; i++)
			free(argv[i]);
		free(argv);
	}
	if (w->pid < 0) {
		close(inp[1]);
		w->pid = 0;
		free(w->zTaskError);
		w->zTaskError = xasprintf("cannot start the worker: %s", err);
		while (w->jobs)
			finish(w, w->jobs, simple_result("error", w->zTaskError));
		return;
	}
	w->starts++;
	w->in = inp[1];
	loop_add_fd(w->l, w->out, LOOP_READ, on_stdout, w);
	loop_add_fd(w->l, w->err, LOOP_READ, on_stderr, w);
	w->ready = 0;
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "op", "task");
	cJSON_AddStringToObject(o, "dir", w->cfg.zTaskDir);
	if (w->cfg.zShapes)
		cJSON_AddStringToObject(o, "shapes", w->cfg.zShapes);
	if (w->cfg.zReference)
		cJSON_AddStringToObject(o, "reference", w->cfg.zReference);
	if (w->cfg.nTrials > 0)
		cJSON_AddNumberToObject(o, "trials", w->cfg.nTrials);
	if (w->cfg.budgetS > 0)
		cJSON_AddNumberToObject(o, "budget_s", w->cfg.budgetS);
	cJSON_AddBoolToObject(o, "time_reference", w->refTiming == NULL && w->baselines == NULL);
	send_line(w, o);
	arm(w, w->cfg.setupTimeoutS);
	for (struct wjob *j = w->jobs; j; j = j->next)
		send_job(w, j);
}

int worker_submit(struct worker *w, const char *zName, const char *zSource, size_t nSource)
{
	struct wjob *j = xcalloc(1, sizeof *j);
	j->id = ++w->nextId;
	j->zName = xstrdup(zName);
	j->zSource = xstrndup(zSource, nSource);
	j->nSource = nSource;
	struct wjob **pp = &w->jobs;
	while (*pp)
		pp = &(*pp)->next;
	*pp = j;
	if (w->zTaskError) {
		finish(w, j, simple_result("error", w->zTaskError));
		return w->nextId;
	}
	if (!w->pid)
		start(w);
	else
		send_job(w, j);
	return w->nextId;
}
