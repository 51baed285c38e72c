/*
 * pool.c - a queue of evaluation jobs served by several kloop-workers
 * (local GPUs, CPU workers, ssh hosts, Slurm job steps, launch commands),
 * with lost workers' jobs put back on the queue and the workers restarted
 * with backoff.  Everything runs on the caller's loop.
 */
#include "pool.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proc.h"
#include "result.h"
#include "util.h"

#define MAX_REQUEUE 2     /* a job goes back on the queue at most this often */
#define BACKOFF_MIN_S 0.5 /* first restart delay of a lost worker */
#define BACKOFF_MAX_S 30.0

enum slot_kind { SLOT_LOCAL, SLOT_SSH, SLOT_SLURM, SLOT_CMD, SLOT_ARGV };

struct pjob {
	int id;
	struct eval_request rq; /* its request (owned) */
	int onSlot;             /* the worker it must run on, or -1 */
	int slot;               /* the worker it was given to, or -1 while queued */
	int wjob;               /* that worker's job id, or 0 */
	int attempts;           /* times its worker was lost under it */
	char *zLost;            /* the last loss, for the final reason */
	struct pjob *next;
};

struct slot {
	struct pool *p;
	int idx;
	enum slot_kind kind;
	char *zLabel;
	char *zSpecHost; /* ssh host, or NULL */
	int gpu;         /* GPU index to pin, or -1 */
	char **argvCmd;  /* cmd: template words / the configured launch command */
	char **argvRun;  /* the running worker's launch command (it keeps a pointer) */
	struct worker *w;
	enum pool_state state;
	int nOut;            /* jobs given to it and not finished */
	int nCompile;        /* its compiles at once (0: not known; set as it starts) */
	int nDone, nLost;    /* finished jobs, losses */
	double tBusy, busyS; /* since when it has work; seconds with work */
	double tUp;          /* first start, or 0 */
	double backoffS;     /* next restart delay */
	long long tmRestart; /* the restart timer */
	char *zNote;         /* why it is in backoff or disabled */
};

struct refent {
	char *zDevice;
	cJSON *timing;
	cJSON *baselines;
	cJSON *refData; /* how the reference data was made (a problem file), or NULL */
};

struct pool {
	struct loop *l;
	struct worker_config wc;
	worker_done_fn done;
	worker_progress_fn progress;
	void *arg;
	struct slot *aSlot;
	int nSlot;
	struct pjob *jobs; /* queued and running, in submission order */
	int nextId;
	int nRequeued;
	int capacity;         /* jobs given to one worker at once (0: slot_capacity()) */
	long long tmDispatch; /* the pending dispatch, or 0 */
	struct refent *aRef;  /* reference timing per device model */
	int nRef;
	char *zRefName;
	char *zTaskError;
	char *zSandboxWarning; /* a worker's: candidates run unsandboxed, and why */
	/* Slurm */
	char **argvSalloc; /* salloc's arguments from the spec, or NULL */
	int nSlurmTasks;   /* job steps to run */
	char *zSlurmJob;   /* the allocation, once known */
	int ownAlloc;      /* 1 when this pool made it (and cancels it) */
	pid_t sallocPid;
	int sallocErr;
	strbuf sallocOut;
	long long tmSalloc;
	char *zCtlDir; /* ssh ControlPath directory, or NULL */
	int started;
	cJSON *measured; /* code timed in the session: [device, code, label, timing] */
};

static void dispatch_soon(struct pool *p);
static void on_done(int wjob, cJSON *result, void *arg);
static void on_progress(int wjob, const char *zStage, int k, void *arg);

/* --- specifications ---------------------------------------------------- */

static char **split_words(const char *z)
{
	char **v = xcalloc(strlen(z) / 2 + 2, sizeof(char *));
	int n = 0;
	while (*z) {
		while (*z == ' ' || *z == '\t')
			z++;
		if (!*z)
			break;
		size_t k = strcspn(z, " \t");
		v[n++] = xstrndup(z, k);
		z += k;
	}
	return v;
}

static void free_words(char **v)
{
	for (int i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

static int nwords(char **v)
{
	int n = 0;
	while (v && v[n])
		n++;
	return n;
}

static struct slot *add_slot(struct pool *p, enum slot_kind kind, const char *zLabel)
{
	p->aSlot = xrealloc(p->aSlot, (size_t)(p->nSlot + 1) * sizeof *p->aSlot);
	struct slot *s = &p->aSlot[p->nSlot];
	memset(s, 0, sizeof *s);
	s->p = p;
	s->idx = p->nSlot++;
	s->kind = kind;
	s->zLabel = xstrdup(zLabel);
	s->gpu = -1;
	s->state = POOL_W_IDLE;
	s->backoffS = BACKOFF_MIN_S;
	return s;
}

int pool_local_gpus(void)
{
	const char *v = getenv("CUDA_VISIBLE_DEVICES");
	if (v) {
		int n = 0;
		for (const char *q = v; *q;) {
			size_t k = strcspn(q, ",");
			if (k > 0)
				n++;
			q += k;
			if (*q == ',')
				q++;
		}
		return n;
	}
	DIR *d = opendir("/proc/driver/nvidia/gpus");
	if (!d)
		return 0;
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

/* a positive count "N" of at most 1024, or -1 */
static int parse_count(const char *z, size_t n)
{
	if (n == 0 || n > 4)
		return -1;
	int v = 0;
	for (size_t i = 0; i < n; i++) {
		if (!isdigit((unsigned char)z[i]))
			return -1;
		v = v * 10 + (z[i] - '0');
	}
	return v >= 1 && v <= 1024 ? v : -1;
}

/* the number of tasks in salloc arguments (-n N, --ntasks=N, --ntasks N) */
static int slurm_ntasks(char **v, char *err)
{
	int n = 1;
	for (int i = 0; v[i]; i++) {
		const char *z = NULL;
		if (!strcmp(v[i], "-n") || !strcmp(v[i], "--ntasks"))
			z = v[i + 1];
		else if (!strncmp(v[i], "--ntasks=", 9))
			z = v[i] + 9;
		else if (!strncmp(v[i], "-n", 2) && v[i][2])
			z = v[i] + 2;
		else
			continue;
		if (!z || (n = parse_count(z, strlen(z))) < 0)
			return kl_err(err, "workers: slurm: '%s' is not a task count (1 to 1024)",
			              z ? z : v[i]);
	}
	return n;
}

static int parse_one(struct pool *p, const char *z, size_t n, char *err)
{
	char *spec = xstrndup(z, n);
	char *s = spec;
	while (*s == ' ')
		s++;
	size_t len = strlen(s);
	while (len && s[len - 1] == ' ')
		s[--len] = 0;
	int rc = 0;
	const char *cuda = p->wc.zBackend && !strcmp(p->wc.zBackend, "cuda") ? "" : NULL;
	if (!strcmp(s, "local") || !strncmp(s, "local:", 6)) {
		int cnt = 1;
		if (s[5] == ':' && (cnt = parse_count(s + 6, strlen(s + 6))) < 0) {
			rc = kl_err(
			    err, "workers: '%s': expected local or local:N (N from 1 to 1024)", s);
			goto out;
		}
		if (cuda && s[5] != ':') {
			cnt = pool_local_gpus();
			if (cnt < 1)
				cnt = 1; /* no GPU visible: one worker, which says so */
		}
		for (int i = 0; i < cnt; i++) {
			char lab[32];
			snprintf(lab, sizeof lab, "local:%d", i);
			struct slot *sl = add_slot(p, SLOT_LOCAL, lab);
			if (cuda && (cnt > 1 || s[5] == ':' || pool_local_gpus() > 1))
				sl->gpu = i;
		}
	} else if (!strncmp(s, "ssh:", 4)) {
		char *host = s + 4, *c = strchr(host, ':');
		if (c)
			*c++ = 0;
		if (!*host || strspn(host, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
		                           "0123456789.-_@[]") != strlen(host)) {
			rc = kl_err(err, "workers: '%s': expected ssh:HOST[:N|:GPU,GPU...]", spec);
			goto out;
		}
		int gpus[1024], ng = 0;
		if (!c) {
			gpus[ng++] = -1;
		} else if (!strchr(c, ',') && parse_count(c, strlen(c)) > 0) {
			int cnt = parse_count(c, strlen(c));
			for (int i = 0; i < cnt; i++)
				gpus[ng++] = i;
		} else {
			for (char *q = c; *q;) {
				size_t k = strcspn(q, ",");
				int g = k && k <= 3 && strspn(q, "0123456789") >= k ? atoi(q) : -1;
				if (g < 0 || ng >= 1024) {
					rc = kl_err(err, "workers: '%s': '%.*s' is not a GPU index",
					            spec, (int)k, q);
					goto out;
				}
				gpus[ng++] = g;
				q += k;
				if (*q == ',')
					q++;
			}
		}
		for (int i = 0; i < ng; i++) {
			char lab[300];
			if (gpus[i] >= 0)
				snprintf(lab, sizeof lab, "ssh:%s:%d", host, gpus[i]);
			else
				snprintf(lab, sizeof lab, "ssh:%s", host);
			struct slot *sl = add_slot(p, SLOT_SSH, lab);
			sl->zSpecHost = xstrdup(host);
			sl->gpu = gpus[i];
		}
	} else if (!strncmp(s, "slurm:", 6) || !strcmp(s, "slurm")) {
		if (p->argvSalloc) {
			rc = kl_err(
			    err, "workers: one slurm: specification per session (one allocation)");
			goto out;
		}
		p->argvSalloc = split_words(s[5] ? s + 6 : "");
		int nt = slurm_ntasks(p->argvSalloc, err);
		if (nt < 0) {
			rc = -1;
			goto out;
		}
		p->nSlurmTasks = nt;
		for (int i = 0; i < nt; i++) {
			char lab[32];
			snprintf(lab, sizeof lab, "slurm:%d", i);
			struct slot *sl = add_slot(p, SLOT_SLURM, lab);
			sl->state = POOL_W_WAITING;
		}
	} else if (!strncmp(s, "cmd:", 4)) {
		char **v = split_words(s + 4);
		if (!v[0]) {
			free_words(v);
			rc = kl_err(err, "workers: '%s': cmd: needs a command", spec);
			goto out;
		}
		char lab[32];
		snprintf(lab, sizeof lab, "cmd:%d", p->nSlot);
		struct slot *sl = add_slot(p, SLOT_CMD, lab);
		sl->argvCmd = v;
	} else {
		rc = kl_err(err, "workers: '%s' is not a worker specification (expected %s)", s,
		            POOL_SPEC_HELP);
	}
out:
	free(spec);
	return rc;
}

/* --- starting workers -------------------------------------------------- */

static char *subst(const char *z, int idx, int gpu)
{
	strbuf sb = STRBUF_INIT;
	while (*z) {
		if (!strncmp(z, "{i}", 3)) {
			sb_addf(&sb, "%d", idx);
			z += 3;
		} else if (!strncmp(z, "{gpu}", 5)) {
			sb_addf(&sb, "%d", gpu < 0 ? 0 : gpu);
			z += 5;
		} else {
			sb_add(&sb, z++, 1);
		}
	}
	return sb_detach(&sb);
}

/* the launch command of slot s (fresh argv) */
static char **slot_argv(struct pool *p, struct slot *s)
{
	strbuf pre = STRBUF_INIT;
	char **v = xcalloc(64, sizeof(char *));
	int n = 0;
	char **tail = NULL;
	switch (s->kind) {
	case SLOT_ARGV:
		for (int i = 0; s->argvCmd[i] && n < 62; i++)
			v[n++] = xstrdup(s->argvCmd[i]);
		if (!worker_sandboxed(&p->wc)) /* a configured command, with the flag appended */
			v[n++] = xstrdup("--no-sandbox");
		return v;
	case SLOT_CMD:
		for (int i = 0; s->argvCmd[i] && n < 62; i++)
			v[n++] = subst(s->argvCmd[i], s->idx, s->gpu);
		if (!worker_sandboxed(&p->wc))
			v[n++] = xstrdup("--no-sandbox");
		return v;
	case SLOT_LOCAL:
		if (s->gpu >= 0) {
			v[n++] = xstrdup("env");
			v[n++] = xasprintf("CUDA_VISIBLE_DEVICES=%d", s->gpu);
		}
		tail = worker_launch_argv(&p->wc, NULL);
		break;
	case SLOT_SSH: {
		const char *ssh = getenv("KLOOP_SSH");
		v[n++] = xstrdup(ssh && *ssh ? ssh : "ssh");
		v[n++] = xstrdup("-o");
		v[n++] = xstrdup("BatchMode=yes");
		v[n++] = xstrdup("-o");
		v[n++] = xstrdup("ControlMaster=auto");
		v[n++] = xstrdup("-o");
		v[n++] = xasprintf("ControlPath=%s/%%C", p->zCtlDir);
		v[n++] = xstrdup("-o");
		v[n++] = xstrdup("ControlPersist=120");
		v[n++] = xstrdup(s->zSpecHost);
		if (s->gpu >= 0) {
			v[n++] = xstrdup("env");
			v[n++] = xasprintf("CUDA_VISIBLE_DEVICES=%d", s->gpu);
		}
		tail = worker_launch_argv(&p->wc, "kloop-worker");
		break;
	}
	case SLOT_SLURM:
		v[n++] = xstrdup("srun");
		v[n++] = xasprintf("--jobid=%s", p->zSlurmJob);
		v[n++] = xstrdup("--ntasks=1");
		v[n++] = xstrdup("--exact");
		v[n++] = xstrdup("--unbuffered");
		v[n++] = xstrdup("--kill-on-bad-exit=1");
		v[n++] = xasprintf("--job-name=kloop-worker-%d", s->idx);
		if (p->wc.zBackend && !strcmp(p->wc.zBackend, "cuda"))
			v[n++] = xstrdup("--gpus=1");
		/* the allocation's nodes have kloop at the same path, or on PATH */
		tail = worker_launch_argv(&p->wc, NULL);
		if (tail[0] && access(tail[0], X_OK) != 0) {
			free(tail[0]);
			tail[0] = xstrdup("kloop-worker");
		}
		break;
	}
	for (int i = 0; tail && tail[i] && n < 62; i++)
		v[n++] = tail[i];
	free(tail);
	sb_free(&pre);
	return v;
}

/* one [device, code, label, timing] entry to slot s's worker */
static void slot_measured(struct slot *s, const cJSON *m)
{
	worker_code_measured(s->w, cJSON_GetArrayItem(m, 0)->valuestring,
	                     cJSON_GetArrayItem(m, 1)->valuestring,
	                     cJSON_GetArrayItem(m, 2)->valuestring, cJSON_GetArrayItem(m, 3));
}

/* a worker's torch.compile baseline came from the background: the
 * device's baselines are whole now (the first worker's to come), and the
 * pool's owner hears of it */
static void on_baselines(const char *zDevice, const cJSON *baselines, void *arg)
{
	struct slot *s = arg;
	struct pool *p = s->p;
	for (int i = 0; zDevice && i < p->nRef; i++) {
		if (strcmp(p->aRef[i].zDevice, zDevice) ||
		    !result_compile_pending(p->aRef[i].baselines))
			continue;
		cJSON_Delete(p->aRef[i].baselines);
		p->aRef[i].baselines = cJSON_Duplicate(baselines, 1);
		if (p->wc.onBaselines)
			p->wc.onBaselines(zDevice, baselines, p->wc.baselinesArg);
	}
}

static void slot_start(struct pool *p, struct slot *s)
{
	if (s->w || s->state == POOL_W_DISABLED || s->state == POOL_W_WAITING)
		return;
	struct worker_config wc = p->wc;
	/* a host of its own: the task goes with the request */
	wc.shipTask = s->kind == SLOT_SSH;
	/* local workers share this host's cores for their compiles */
	if (s->kind == SLOT_LOCAL && wc.jobs <= 0) {
		int nLocal = 0;
		for (int i = 0; i < p->nSlot; i++)
			nLocal += p->aSlot[i].kind == SLOT_LOCAL;
		long cores = sysconf(_SC_NPROCESSORS_ONLN);
		wc.jobs = nLocal > 1 ? (int)(cores / nLocal > 1 ? cores / nLocal : 1) : 0;
		s->nCompile = wc.jobs > 0 ? wc.jobs : (int)cores;
	} else if (wc.jobs > 0) {
		s->nCompile = wc.jobs;
	}
	free_words(s->argvRun);
	s->argvRun = slot_argv(p, s);
	wc.argvLaunch = s->argvRun;
	wc.onBaselines = on_baselines;
	wc.baselinesArg = s;
	s->w = worker_new(p->l, &wc, on_done, on_progress, s);
	cJSON *m;
	cJSON_ArrayForEach(m, p->measured) slot_measured(s, m);
	s->state = POOL_W_STARTING;
	if (!s->tUp)
		s->tUp = now_s();
}

/* stop slot s's worker (no callbacks follow from it) */
static void slot_stop(struct slot *s)
{
	if (s->w) {
		worker_free(s->w);
		s->w = NULL;
	}
	free_words(s->argvRun);
	s->argvRun = NULL;
	if (s->nOut > 0 && s->tBusy > 0)
		s->busyS += now_s() - s->tBusy;
	s->tBusy = 0;
	s->nOut = 0;
}

/* --- Slurm allocation -------------------------------------------------- */

static void slurm_granted(struct pool *p, const char *zJob)
{
	free(p->zSlurmJob);
	p->zSlurmJob = xstrdup(zJob);
	for (int i = 0; i < p->nSlot; i++)
		if (p->aSlot[i].kind == SLOT_SLURM && p->aSlot[i].state == POOL_W_WAITING) {
			struct slot *s = &p->aSlot[i];
			free(s->zLabel);
			s->zLabel = xasprintf("slurm:%s.%d", zJob, i);
			s->state = POOL_W_IDLE;
		}
	dispatch_soon(p);
}

static void slurm_failed(struct pool *p, const char *zWhy)
{
	for (int i = 0; i < p->nSlot; i++)
		if (p->aSlot[i].kind == SLOT_SLURM) {
			struct slot *s = &p->aSlot[i];
			s->state = POOL_W_DISABLED;
			free(s->zNote);
			s->zNote = xstrdup(zWhy);
		}
	dispatch_soon(p);
}

static void salloc_reap(struct loop *l, long long id, void *arg)
{
	struct pool *p = arg;
	(void)id;
	p->tmSalloc = 0;
	int status = 0;
	pid_t r = waitpid(p->sallocPid, &status, WNOHANG);
	if (r == 0) {
		p->tmSalloc = loop_add_timer(l, 0.05, salloc_reap, p);
		return;
	}
	p->sallocPid = 0;
	/* "salloc: Granted job allocation 1234" */
	const char *g = p->sallocOut.buf ? strstr(p->sallocOut.buf, "job allocation ") : NULL;
	if (g && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		char job[32];
		size_t k = strspn(g + 15, "0123456789");
		snprintf(job, sizeof job, "%.*s", (int)(k < 30 ? k : 30), g + 15);
		p->ownAlloc = 1;
		slurm_granted(p, job);
	} else {
		char st[160];
		proc_describe_status(status, st, sizeof st);
		char *out = xstrdup(p->sallocOut.buf ? p->sallocOut.buf : "");
		utf8_sanitize(out);
		size_t n = strlen(out);
		while (n && (out[n - 1] == '\n' || out[n - 1] == ' '))
			out[--n] = 0;
		char *why = xasprintf("salloc %s%s%s", st, *out ? ": " : "", out);
		slurm_failed(p, why);
		free(why);
		free(out);
	}
}

static void on_salloc(struct loop *l, int fd, int events, void *arg)
{
	struct pool *p = arg;
	(void)events;
	char buf[4096];
	ssize_t r;
	while ((r = read(fd, buf, sizeof buf)) > 0)
		if (p->sallocOut.len < 65536)
			sb_add(&p->sallocOut, buf, (size_t)r);
	if (r < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	loop_del_fd(l, fd);
	close(fd);
	p->sallocErr = -1;
	salloc_reap(l, 0, p);
}

static void slurm_allocate(struct pool *p)
{
	const char *j = getenv("SLURM_JOB_ID");
	if (j && *j && strspn(j, "0123456789") == strlen(j)) {
		slurm_granted(p, j);
		return;
	}
	int n = nwords(p->argvSalloc);
	char **v = xcalloc((size_t)n + 4, sizeof(char *));
	int k = 0;
	v[k++] = "salloc";
	v[k++] = "--no-shell";
	v[k++] = "--job-name=kloop";
	for (int i = 0; i < n; i++)
		v[k++] = p->argvSalloc[i];
	char err[KL_ERRLEN];
	struct proc_spec s = {.argv = v, .stdinFd = -1, .stdoutFd = -1, .stderrFd = -1};
	int out = -1;
	p->sallocPid = proc_spawn(&s, &out, NULL, err);
	free(v);
	if (p->sallocPid < 0) {
		p->sallocPid = 0;
		char *why = xasprintf("cannot run salloc: %s", err);
		slurm_failed(p, why);
		free(why);
		return;
	}
	p->sallocErr = out;
	loop_add_fd(p->l, out, LOOP_READ, on_salloc, p);
}

/* --- the queue --------------------------------------------------------- */

static struct pjob *find_job(struct pool *p, int id)
{
	for (struct pjob *j = p->jobs; j; j = j->next)
		if (j->id == id)
			return j;
	return NULL;
}

static void unlink_job(struct pool *p, struct pjob *j)
{
	struct pjob **pp = &p->jobs;
	while (*pp && *pp != j)
		pp = &(*pp)->next;
	if (*pp)
		*pp = j->next;
}

static void job_free(struct pjob *j)
{
	eval_request_free(&j->rq);
	free(j->zLost);
	free(j);
}

static void slot_busy(struct slot *s, int delta)
{
	double t = now_s();
	if (s->nOut == 0 && delta > 0)
		s->tBusy = t;
	s->nOut += delta;
	if (s->nOut <= 0) {
		if (s->tBusy > 0)
			s->busyS += t - s->tBusy;
		s->tBusy = 0;
		s->nOut = 0;
		if (s->state == POOL_W_BUSY)
			s->state = POOL_W_IDLE;
	} else if (s->state == POOL_W_IDLE || s->state == POOL_W_STARTING) {
		if (s->w && worker_device(s->w))
			s->state = POOL_W_BUSY;
	}
}

/*
 * Jobs given to one worker at once: one running and some compiling behind
 * it.  On the GPU a candidate's compile (nvcc, about a second) takes longer
 * than its check and timing, so as many compile behind it as the worker
 * compiles at once (at most 16) and the GPU is not kept waiting on nvcc; on
 * the CPU one, since a compile takes a core from the candidate being timed.
 */
static int slot_capacity(const struct pool *p, const struct slot *s)
{
	if (p->capacity > 0)
		return p->capacity;
	if (!p->wc.zBackend || strcmp(p->wc.zBackend, "cuda"))
		return 2;
	int k = s->nCompile > 0 ? s->nCompile : 4;
	return 1 + (k < 16 ? k : 16);
}

/* a slot that can take another job */
static int slot_open(const struct pool *p, const struct slot *s)
{
	return s->state != POOL_W_DISABLED && s->state != POOL_W_BACKOFF &&
	       s->state != POOL_W_WAITING && s->nOut < slot_capacity(p, s);
}

static struct slot *pick_slot(struct pool *p, const struct pjob *j)
{
	if (j->onSlot >= 0)
		return slot_open(p, &p->aSlot[j->onSlot]) ? &p->aSlot[j->onSlot] : NULL;
	struct slot *best = NULL;
	for (int i = 0; i < p->nSlot; i++) {
		struct slot *s = &p->aSlot[i];
		if (slot_open(p, s) && (!best || s->nOut < best->nOut))
			best = s;
	}
	return best;
}

static void deliver(struct pool *p, struct pjob *j, cJSON *r)
{
	unlink_job(p, j);
	int id = j->id;
	job_free(j);
	p->done(id, r, p->arg);
}

/* every worker is gone for good: fail what waits */
static int all_disabled(const struct pool *p)
{
	for (int i = 0; i < p->nSlot; i++)
		if (p->aSlot[i].state != POOL_W_DISABLED)
			return 0;
	return p->nSlot > 0;
}

static cJSON *failed_result(const char *zStatus, const char *zReason)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "status", zStatus);
	cJSON_AddStringToObject(o, "reason", zReason);
	return o;
}

static void dispatch(struct loop *l, long long id, void *arg)
{
	struct pool *p = arg;
	(void)l, (void)id;
	p->tmDispatch = 0;
	if (p->argvSalloc && !p->zSlurmJob && !p->sallocPid && !p->started) {
		p->started = 1;
		slurm_allocate(p);
	}
	p->started = 1;
	for (struct pjob *j = p->jobs, *next; j; j = next) {
		next = j->next;
		if (j->slot >= 0)
			continue;
		if (all_disabled(p) ||
		    (j->onSlot >= 0 && p->aSlot[j->onSlot].state == POOL_W_DISABLED)) {
			struct slot *s = j->onSlot >= 0 ? &p->aSlot[j->onSlot] : &p->aSlot[0];
			char *why = xasprintf("no worker can run it: %s%s%s", s->zLabel,
			                      s->zNote ? ": " : "", s->zNote ? s->zNote : "");
			cJSON *r = failed_result("error", why);
			free(why);
			deliver(p, j, r);
			cJSON_Delete(r);
			continue;
		}
		struct slot *s = pick_slot(p, j);
		if (!s)
			continue;
		slot_start(p, s);
		j->slot = s->idx;
		slot_busy(s, +1);
		/* worker_submit() answers later, from the loop, never from inside */
		j->wjob = worker_submit_req(s->w, &j->rq);
		/* the list may have changed under us: start again from the top */
		next = p->jobs;
		for (struct pjob *q = p->jobs; q; q = q->next)
			if (q == j) {
				next = j->next;
				break;
			}
	}
}

static void dispatch_soon(struct pool *p)
{
	if (!p->tmDispatch)
		p->tmDispatch = loop_add_timer(p->l, 0, dispatch, p);
}

/* --- worker callbacks -------------------------------------------------- */

static struct pjob *job_of(struct slot *s, int wjob)
{
	for (struct pjob *j = s->p->jobs; j; j = j->next)
		if (j->slot == s->idx && j->wjob == wjob && wjob)
			return j;
	return NULL;
}

static void restart_timer(struct loop *l, long long id, void *arg)
{
	struct slot *s = arg;
	(void)l, (void)id;
	s->tmRestart = 0;
	if (s->state == POOL_W_BACKOFF)
		s->state = POOL_W_IDLE;
	dispatch_soon(s->p);
}

/* slot s lost its worker: stop it, put what it had back on the queue, and
 * let it start again after a delay (or never, when it was refused) */
static void slot_lost(struct loop *l, long long id, void *arg)
{
	struct slot *s = arg;
	struct pool *p = s->p;
	(void)l, (void)id;
	s->tmRestart = 0;
	slot_stop(s);
	for (struct pjob *j = p->jobs; j; j = j->next)
		if (j->slot == s->idx) {
			j->slot = -1;
			j->wjob = 0;
		}
	if (s->state != POOL_W_DISABLED) {
		s->state = POOL_W_BACKOFF;
		s->tmRestart = loop_add_timer(p->l, s->backoffS, restart_timer, s);
		s->backoffS = fmin(s->backoffS * 2, BACKOFF_MAX_S);
	}
	dispatch_soon(p);
}

static void note_reference(struct pool *p, struct slot *s)
{
	const char *dev = worker_device(s->w);
	const cJSON *t = worker_reference_timing(s->w);
	if (!p->zRefName && worker_reference_name(s->w))
		p->zRefName = xstrdup(worker_reference_name(s->w));
	if (!dev || !t)
		return;
	for (int i = 0; i < p->nRef; i++)
		if (!strcmp(p->aRef[i].zDevice, dev))
			return;
	p->aRef = xrealloc(p->aRef, (size_t)(p->nRef + 1) * sizeof *p->aRef);
	p->aRef[p->nRef].zDevice = xstrdup(dev);
	p->aRef[p->nRef].timing = cJSON_Duplicate(t, 1);
	const cJSON *b = worker_baselines(s->w);
	p->aRef[p->nRef].baselines = b ? cJSON_Duplicate(b, 1) : NULL;
	const cJSON *rd = worker_reference_data(s->w);
	p->aRef[p->nRef].refData = rd ? cJSON_Duplicate(rd, 1) : NULL;
	p->nRef++;
}

static void on_progress(int wjob, const char *zStage, int k, void *arg)
{
	struct slot *s = arg;
	struct pool *p = s->p;
	if (s->state == POOL_W_STARTING)
		s->state = POOL_W_BUSY;
	note_reference(p, s);
	struct pjob *j = job_of(s, wjob);
	if (j && p->progress)
		p->progress(j->id, zStage, k, p->arg);
}

static void on_done(int wjob, cJSON *result, void *arg)
{
	struct slot *s = arg;
	struct pool *p = s->p;
	struct pjob *j = job_of(s, wjob);
	if (s->w)
		note_reference(p, s);
	if (!j)
		return;
	slot_busy(s, -1);
	if (cJSON_IsTrue(cJSON_GetObjectItem(result, "worker_lost"))) {
		const char *why = cJSON_GetStringValue(cJSON_GetObjectItem(result, "reason"));
		s->nLost++;
		free(s->zNote);
		s->zNote = xstrdup(why ? why : "lost");
		if (cJSON_IsTrue(cJSON_GetObjectItem(result, "worker_disabled")))
			s->state = POOL_W_DISABLED;
		j->attempts++;
		free(j->zLost);
		j->zLost = xasprintf("%s: %s", s->zLabel, why ? why : "lost");
		if (!s->tmRestart) /* never free a worker from inside its own callback */
			s->tmRestart = loop_add_timer(p->l, 0, slot_lost, s);
		if (j->attempts <= MAX_REQUEUE &&
		    !(j->onSlot >= 0 && s->state == POOL_W_DISABLED)) {
			j->slot = -1;
			j->wjob = 0;
			p->nRequeued++;
			return; /* back on the queue, in its place: runs when a worker is free */
		}
		cJSON *r = cJSON_Duplicate(result, 1);
		cJSON_DeleteItemFromObject(r, "worker_lost");
		cJSON_DeleteItemFromObject(r, "worker_disabled");
		char *reason = xasprintf("the worker was lost %d time%s (last: %s)", j->attempts,
		                         j->attempts == 1 ? "" : "s", j->zLost);
		cJSON_DeleteItemFromObject(r, "reason");
		cJSON_AddStringToObject(r, "reason", reason);
		free(reason);
		deliver(p, j, r);
		cJSON_Delete(r);
		return;
	}
	s->nDone++;
	s->backoffS = BACKOFF_MIN_S;
	if (s->state == POOL_W_STARTING)
		s->state = s->nOut ? POOL_W_BUSY : POOL_W_IDLE;
	cJSON *r = cJSON_Duplicate(result, 1);
	cJSON *wk = cJSON_CreateObject();
	cJSON_AddStringToObject(wk, "label", s->zLabel);
	const char *host = s->w ? worker_host(s->w) : NULL;
	cJSON_AddStringToObject(wk, "host", host ? host : (s->zSpecHost ? s->zSpecHost : ""));
	const char *dev = s->w ? worker_device(s->w) : NULL;
	cJSON_AddStringToObject(wk, "device", dev ? dev : "");
	const char *uuid = s->w ? worker_uuid(s->w) : NULL;
	if (uuid)
		cJSON_AddStringToObject(wk, "uuid", uuid);
	if (s->gpu >= 0)
		cJSON_AddNumberToObject(wk, "gpu", s->gpu);
	if (j->attempts)
		cJSON_AddNumberToObject(wk, "requeued", j->attempts);
	cJSON_AddItemToObject(r, "worker", wk);
	if (s->w && worker_task_error(s->w) && !p->zTaskError)
		p->zTaskError = xstrdup(worker_task_error(s->w));
	if (s->w && worker_sandbox_warning(s->w) && !p->zSandboxWarning)
		p->zSandboxWarning = xstrdup(worker_sandbox_warning(s->w));
	deliver(p, j, r);
	cJSON_Delete(r);
	dispatch_soon(p);
}

/* --- the interface ----------------------------------------------------- */

struct pool *pool_new(struct loop *l, const struct worker_config *wc, const char *zSpec,
                      worker_done_fn done, worker_progress_fn progress, void *arg, char *err)
{
	struct pool *p = xcalloc(1, sizeof *p);
	p->l = l;
	p->wc = *wc;
	p->wc.argvLaunch = NULL;
	p->done = done;
	p->progress = progress;
	p->arg = arg;
	if (wc->argvLaunch && (!zSpec || !*zSpec)) {
		/* the old --worker CMD: one worker started by that command */
		struct slot *s = add_slot(p, SLOT_ARGV, "worker");
		int n = nwords(wc->argvLaunch);
		s->argvCmd = xcalloc((size_t)n + 1, sizeof(char *));
		for (int i = 0; i < n; i++)
			s->argvCmd[i] = xstrdup(wc->argvLaunch[i]);
		return p;
	}
	if (!zSpec || !*zSpec)
		zSpec = "local";
	for (const char *q = zSpec; *q;) {
		size_t k = strcspn(q, ";");
		if (strspn(q, " ") < k && parse_one(p, q, k, err) < 0) {
			pool_free(p);
			return NULL;
		}
		q += k;
		if (*q == ';')
			q++;
	}
	if (p->nSlot == 0) {
		kl_err(err, "workers: '%s' names no worker (expected %s)", zSpec, POOL_SPEC_HELP);
		pool_free(p);
		return NULL;
	}
	for (int i = 0; i < p->nSlot; i++)
		if (p->aSlot[i].kind == SLOT_SSH) {
			char tmpl[] = "/tmp/kloop-ssh-XXXXXX";
			if (!mkdtemp(tmpl)) {
				kl_err(err,
				       "workers: cannot make a directory for ssh connections: %s",
				       strerror(errno));
				pool_free(p);
				return NULL;
			}
			p->zCtlDir = xstrdup(tmpl);
			break;
		}
	return p;
}

void pool_code_measured(struct pool *p, const char *zDevice, const char *zCode, const char *zLabel,
                        const cJSON *timing)
{
	cJSON *m = cJSON_CreateArray();
	cJSON_AddItemToArray(m, cJSON_CreateString(zDevice));
	cJSON_AddItemToArray(m, cJSON_CreateString(zCode));
	cJSON_AddItemToArray(m, cJSON_CreateString(zLabel));
	cJSON_AddItemToArray(m, cJSON_Duplicate(timing, 1));
	if (!p->measured)
		p->measured = cJSON_CreateArray();
	cJSON_AddItemToArray(p->measured, m);
	for (int i = 0; i < p->nSlot; i++)
		if (p->aSlot[i].w)
			slot_measured(&p->aSlot[i], m);
}

void pool_free(struct pool *p)
{
	if (!p)
		return;
	cJSON_Delete(p->measured);
	if (p->tmDispatch)
		loop_del_timer(p->l, p->tmDispatch);
	for (int i = 0; i < p->nSlot; i++) {
		struct slot *s = &p->aSlot[i];
		slot_stop(s);
		if (s->tmRestart)
			loop_del_timer(p->l, s->tmRestart);
		free(s->zLabel);
		free(s->zSpecHost);
		free(s->zNote);
		free_words(s->argvCmd);
	}
	free(p->aSlot);
	while (p->jobs) {
		struct pjob *j = p->jobs;
		p->jobs = j->next;
		job_free(j);
	}
	for (int i = 0; i < p->nRef; i++) {
		free(p->aRef[i].zDevice);
		cJSON_Delete(p->aRef[i].timing);
		cJSON_Delete(p->aRef[i].baselines);
		cJSON_Delete(p->aRef[i].refData);
	}
	free(p->aRef);
	if (p->tmSalloc)
		loop_del_timer(p->l, p->tmSalloc);
	if (p->sallocErr > 0) {
		loop_del_fd(p->l, p->sallocErr);
		close(p->sallocErr);
	}
	if (p->sallocPid > 0) {
		proc_kill_group(p->sallocPid);
		waitpid(p->sallocPid, NULL, 0);
	}
	if (p->ownAlloc && p->zSlurmJob) {
		char *v[] = {"scancel", p->zSlurmJob, NULL};
		char *out = NULL;
		proc_capture(v, &out, 4096);
		free(out);
	}
	if (p->zCtlDir) {
		/* close the shared connections, then their directory */
		DIR *d = opendir(p->zCtlDir);
		struct dirent *e;
		while (d && (e = readdir(d)))
			if (e->d_name[0] != '.') {
				char *f = path_join(p->zCtlDir, e->d_name);
				unlink(f);
				free(f);
			}
		if (d)
			closedir(d);
		rmdir(p->zCtlDir);
		free(p->zCtlDir);
	}
	sb_free(&p->sallocOut);
	free_words(p->argvSalloc);
	free(p->zSlurmJob);
	free(p->zRefName);
	free(p->zTaskError);
	free(p->zSandboxWarning);
	free(p);
}

static int submit(struct pool *p, int onSlot, const struct eval_request *rq)
{
	struct pjob *j = xcalloc(1, sizeof *j);
	j->rq = eval_request_copy(rq);
	j->id = ++p->nextId;
	j->onSlot = onSlot;
	j->slot = -1;
	struct pjob **pp = &p->jobs;
	while (*pp)
		pp = &(*pp)->next;
	*pp = j;
	dispatch_soon(p);
	return j->id;
}

int pool_submit(struct pool *p, const char *zName, const char *zSource, size_t nSource)
{
	struct eval_request rq = {.zName = zName, .zSource = zSource, .nSource = nSource};
	return submit(p, -1, &rq);
}

int pool_submit_req(struct pool *p, int w, const struct eval_request *rq, char *err)
{
	if (w >= p->nSlot)
		return kl_err(err, "there is no worker %d (the pool has %d: 0 to %d)", w, p->nSlot,
		              p->nSlot - 1);
	return submit(p, w < 0 ? -1 : w, rq);
}

int pool_submit_on(struct pool *p, int w, const char *zName, const char *zSource, size_t nSource,
                   char *err)
{
	if (w < 0 || w >= p->nSlot)
		return kl_err(err, "there is no worker %d (the pool has %d: 0 to %d)", w, p->nSlot,
		              p->nSlot - 1);
	struct eval_request rq = {.zName = zName, .zSource = zSource, .nSource = nSource};
	return submit(p, w, &rq);
}

int pool_cancel(struct pool *p, int id)
{
	struct pjob *j = find_job(p, id);
	if (!j)
		return -1;
	if (j->slot >= 0 && p->aSlot[j->slot].w &&
	    worker_cancel_waiting(p->aSlot[j->slot].w, j->wjob) == 0) {
		/* it waited in the worker (compiling, or behind the one running) */
		slot_busy(&p->aSlot[j->slot], -1);
	} else if (j->slot >= 0) {
		/* the worker is in the middle of it: start that worker again */
		struct slot *s = &p->aSlot[j->slot];
		int keep = s->state == POOL_W_DISABLED;
		slot_stop(s);
		for (struct pjob *q = p->jobs; q; q = q->next)
			if (q != j && q->slot == s->idx) {
				q->slot = -1;
				q->wjob = 0;
			}
		s->state = keep ? POOL_W_DISABLED : POOL_W_IDLE;
	}
	cJSON *r = failed_result("cancelled", "cancelled by the user");
	deliver(p, j, r);
	cJSON_Delete(r);
	dispatch_soon(p);
	return 0;
}

int pool_pending(const struct pool *p)
{
	int n = 0;
	for (const struct pjob *j = p->jobs; j; j = j->next)
		n++;
	return n;
}

int pool_size(const struct pool *p)
{
	return p->nSlot;
}

int pool_requeued(const struct pool *p)
{
	return p->nRequeued;
}

void pool_info(const struct pool *p, int i, struct pool_info *pi)
{
	const struct slot *s = &p->aSlot[i];
	memset(pi, 0, sizeof *pi);
	pi->zLabel = s->zLabel;
	pi->zHost = s->w && worker_host(s->w) ? worker_host(s->w) : s->zSpecHost;
	pi->zDevice = s->w ? worker_device(s->w) : NULL;
	pi->state = s->state;
	for (const struct pjob *j = p->jobs; j; j = j->next)
		if (j->slot == s->idx) {
			pi->job = j->id;
			break;
		}
	pi->nDone = s->nDone;
	pi->nLost = s->nLost;
	pi->nOut = s->nOut;
	pi->busyS = s->busyS + (s->tBusy > 0 ? now_s() - s->tBusy : 0);
	pi->upS = s->tUp > 0 ? now_s() - s->tUp : 0;
	pi->pid = s->w ? worker_pid(s->w) : 0;
	pi->zNote = s->state == POOL_W_BACKOFF || s->state == POOL_W_DISABLED ? s->zNote : NULL;
}

const cJSON *pool_reference_timing(const struct pool *p, const char *zDevice)
{
	for (int i = 0; i < p->nRef; i++)
		if (!zDevice || !strcmp(p->aRef[i].zDevice, zDevice))
			return p->aRef[i].timing;
	return NULL;
}

const cJSON *pool_baselines(const struct pool *p, const char *zDevice)
{
	for (int i = 0; i < p->nRef; i++)
		if (!zDevice || !strcmp(p->aRef[i].zDevice, zDevice))
			return p->aRef[i].baselines;
	return NULL;
}

int pool_baselines_pending(const struct pool *p)
{
	for (int i = 0; i < p->nRef; i++)
		if (result_compile_pending(p->aRef[i].baselines))
			return 1;
	return 0;
}

const cJSON *pool_reference_data(const struct pool *p, const char *zDevice)
{
	for (int i = 0; i < p->nRef; i++)
		if (!zDevice || !strcmp(p->aRef[i].zDevice, zDevice))
			return p->aRef[i].refData;
	return NULL;
}

double pool_bandwidth_gbs(const struct pool *p)
{
	double bw = 0;
	for (int i = 0; i < p->nSlot; i++) {
		double v = p->aSlot[i].w ? worker_bandwidth_gbs(p->aSlot[i].w) : 0;
		if (v > 0 && (bw == 0 || v < bw))
			bw = v;
	}
	return bw;
}

const char *pool_reference_name(const struct pool *p)
{
	return p->zRefName;
}

const char *pool_task_error(const struct pool *p)
{
	return p->zTaskError;
}

const char *pool_sandbox_warning(const struct pool *p)
{
	return p->zSandboxWarning;
}
