/*
 * pool.c - a queue of evaluation jobs served by several kloop-workers
 * (local GPUs, CPU workers, ssh hosts, Slurm job steps, launch commands),
 * with lost workers' jobs put back on the queue and the workers restarted
 * with backoff.  Everything runs on the caller's loop.
 */
#include "pool.h"

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
#include "pool_priv.h"
#include "util.h"
#include "verdict.h"

static void on_done(int wjob, const struct worker_end *e, void *arg);
static void on_progress(int wjob, const char *zStage, int k, void *arg);

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
	pool_free_words(s->argvRun);
	/* kept warm (kloop eval) where the pool is this host's one worker: its
	 * launch without the pool's run directory, which goes with this kloop */
	int warm = wc.warmS > 0 && p->nSlot == 1 && s->kind == SLOT_LOCAL && s->gpu < 0;
	s->argvRun = warm ? worker_launch_argv(&wc, NULL) : pool_slot_argv(p, s);
	if (!warm)
		wc.warmS = 0;
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
	pool_free_words(s->argvRun);
	s->argvRun = NULL;
	if (s->nOut > 0 && s->tBusy > 0)
		s->busyS += now_s() - s->tBusy;
	s->tBusy = 0;
	s->nOut = 0;
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
 * compiles at once (a local worker: its share of the host's cores, so that
 * every core has a compile while the queue holds one; it was at most 16,
 * which left a node of more cores than 16 per GPU idle) and the GPU is not
 * kept waiting on nvcc; on the CPU one, since a compile takes a core from
 * the candidate being timed.
 */
static int slot_capacity(const struct pool *p, const struct slot *s)
{
	if (p->capacity > 0)
		return p->capacity;
	if (!p->wc.zBackend || strcmp(p->wc.zBackend, "cuda"))
		return 2;
	int k = s->nCompile > 0 ? s->nCompile : 4;
	return 1 + (k < 1024 ? k : 1024);
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

static void dispatch_soon(struct pool *p);

static void dispatch(struct loop *l, long long id, void *arg)
{
	struct pool *p = arg;
	(void)l, (void)id;
	p->tmDispatch = 0;
	if (p->argvSalloc && !p->zSlurmJob && !p->sallocPid && !p->started) {
		p->started = 1;
		pool_slurm_allocate(p, dispatch_soon); /* its answer: the jobs dispatched */
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
			cJSON *r = verdict_new(STATUS_ERROR, why);
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

/* give queued jobs to workers from the loop, soon */
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

static void on_done(int wjob, const struct worker_end *e, void *arg)
{
	cJSON *result = e->result;
	struct slot *s = arg;
	struct pool *p = s->p;
	struct pjob *j = job_of(s, wjob);
	if (s->w)
		note_reference(p, s);
	if (!j)
		return;
	slot_busy(s, -1);
	if (e->lost) {
		struct verdict v;
		verdict_decode(result, &v);
		const char *why = v.zReason;
		s->nLost++;
		free(s->zNote);
		s->zNote = xstrdup(why ? why : "lost");
		if (e->disabled)
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
		char *reason = xasprintf("the worker was lost %d time%s (last: %s)", j->attempts,
		                         j->attempts == 1 ? "" : "s", j->zLost);
		struct verdict rv;
		verdict_decode(r, &rv);
		rv.zReason = reason;
		verdict_encode(r, &rv, 0);
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
	/* the worker it ran on: its label, host and device (typed), then the
	 * rest of "worker" */
	struct verdict v;
	verdict_decode(r, &v);
	v.zWorker = s->zLabel;
	const char *host = s->w ? worker_host(s->w) : NULL;
	v.zWorkerHost = host ? host : (s->zSpecHost ? s->zSpecHost : "");
	const char *dev = s->w ? worker_device(s->w) : NULL;
	v.zWorkerDevice = dev ? dev : "";
	verdict_encode(r, &v, 0);
	cJSON *wk = cJSON_GetObjectItem(r, "worker");
	const char *uuid = s->w ? worker_uuid(s->w) : NULL;
	if (uuid)
		cJSON_AddStringToObject(wk, "uuid", uuid);
	if (s->gpu >= 0)
		cJSON_AddNumberToObject(wk, "gpu", s->gpu);
	if (j->attempts)
		cJSON_AddNumberToObject(wk, "requeued", j->attempts);
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
		struct slot *s = pool_add_slot(p, SLOT_ARGV, "worker");
		int n = pool_nwords(wc->argvLaunch);
		s->argvCmd = xcalloc((size_t)n + 1, sizeof(char *));
		for (int i = 0; i < n; i++)
			s->argvCmd[i] = xstrdup(wc->argvLaunch[i]);
		return p;
	}
	if (!zSpec || !*zSpec)
		zSpec = "local";
	for (const char *q = zSpec; *q;) {
		size_t k = strcspn(q, ";");
		if (strspn(q, " ") < k && pool_parse_one(p, q, k, err) < 0) {
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
	pool_run_dir_make(p);
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

/* the reference timings known, per device model, forgotten */
static void refs_forget(struct pool *p)
{
	for (int i = 0; i < p->nRef; i++) {
		free(p->aRef[i].zDevice);
		cJSON_Delete(p->aRef[i].timing);
		cJSON_Delete(p->aRef[i].baselines);
		cJSON_Delete(p->aRef[i].refData);
	}
	p->nRef = 0;
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
		pool_free_words(s->argvCmd);
	}
	free(p->aSlot);
	while (p->jobs) {
		struct pjob *j = p->jobs;
		p->jobs = j->next;
		job_free(j);
	}
	refs_forget(p);
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
	pool_run_dir_remove(p);
	sb_free(&p->sallocOut);
	pool_free_words(p->argvSalloc);
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
	cJSON *r = verdict_new(STATUS_CANCELLED, "cancelled by the user");
	deliver(p, j, r);
	cJSON_Delete(r);
	dispatch_soon(p);
	return 0;
}

int pool_retime(struct pool *p)
{
	if (p->jobs)
		return -1;
	/* every worker starts again: a fresh worker times the reference */
	for (int i = 0; i < p->nSlot; i++) {
		struct slot *s = &p->aSlot[i];
		if (!s->w)
			continue;
		slot_stop(s);
		if (s->state != POOL_W_DISABLED)
			s->state = POOL_W_IDLE;
	}
	refs_forget(p);
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
	pi->setup =
	    s->w && !worker_ready(s->w) && !worker_task_error(s->w) &&
	    (s->state == POOL_W_STARTING || s->state == POOL_W_BUSY || s->state == POOL_W_IDLE);
	const cJSON *su = s->w ? cJSON_GetObjectItem(worker_reference_data(s->w), "setup") : NULL;
	const cJSON *sec = cJSON_GetObjectItem(su, "seconds");
	pi->setupS = cJSON_IsNumber(sec) ? sec->valuedouble : -1;
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
