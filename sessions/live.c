/*
 * live.c - a session that runs: the journal, the task's seeds, and a worker
 * whose results come back through the caller's loop as eval_finished events.
 */
#include "live.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "backend.h"
#include "compile.h"
#include "result.h"
#include "task.h"
#include "util.h"

#define SOURCE_MAX (8u << 20)

char *live_state_dir(void)
{
	const char *x = getenv("XDG_STATE_HOME");
	if (x && *x)
		return xasprintf("%s/kloop", x);
	const char *h = getenv("HOME");
	return xasprintf("%s/.local/state/kloop", h && *h ? h : ".");
}

char *live_default_path(const char *zTask)
{
	char *dir = live_state_dir();
	time_t t = time(NULL);
	struct tm tm;
	localtime_r(&t, &tm);
	char stamp[32];
	strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
	char *p = xasprintf("%s/sessions/%s-%s.jsonl", dir, zTask, stamp);
	for (int i = 2; path_exists(p); i++) {
		free(p);
		p = xasprintf("%s/sessions/%s-%s-%d.jsonl", dir, zTask, stamp, i);
	}
	free(dir);
	return p;
}

const struct state *live_state(const struct live *lv)
{
	return &lv->ses->st;
}

static void note(struct live *lv, enum live_note kind, int cand, const char *zText)
{
	if (lv->notify)
		lv->notify(lv->arg, kind, cand, zText);
}

static struct live_job *job_by_worker(struct live *lv, int job)
{
	for (int i = 0; i < lv->nJob; i++)
		if (lv->aJob[i].job == job)
			return &lv->aJob[i];
	return NULL;
}

const struct live_job *live_job_of(const struct live *lv, int id)
{
	for (int i = 0; i < lv->nJob; i++)
		if (lv->aJob[i].cand == id)
			return &lv->aJob[i];
	return NULL;
}

int live_jobs(const struct live *lv)
{
	return lv->nJob;
}

void live_verdict(const struct cand *c, char *buf, size_t n)
{
	if (!strcmp(c->zStatus, "correct") && c->timeMs >= 0 && c->speedup >= 0)
		snprintf(buf, n, "correct, %.4g ms, %.3gx", c->timeMs, c->speedup);
	else if (!strcmp(c->zStatus, "correct") && c->timeMs >= 0)
		snprintf(buf, n, "correct, %.4g ms", c->timeMs);
	else if (c->zReason && *c->zReason)
		snprintf(buf, n, "%s: %s", c->zStatus, c->zReason);
	else
		snprintf(buf, n, "%s", c->zStatus);
	/* one line: the reason may hold a compiler's newlines */
	for (char *p = buf; *p; p++)
		if (*p == '\n' || *p == '\r' || *p == '\t')
			*p = ' ';
}

static void emit_or_note(struct live *lv, cJSON *ev, int cand)
{
	char err[KL_ERRLEN], msg[KL_ERRLEN + 64];
	if (session_emit(lv->ses, ev, err) < 0) {
		snprintf(msg, sizeof msg, "journal: %s", err);
		note(lv, LIVE_MESSAGE, cand, msg);
	}
}

static void on_done(int job, cJSON *result, void *arg)
{
	struct live *lv = arg;
	struct live_job *j = job_by_worker(lv, job);
	if (!j && lv->submitting) /* answered inside worker_submit() */
		j = (struct live_job *)live_job_of(lv, lv->submitting);
	if (!j)
		return;
	int id = j->cand;
	struct cand *c = state_cand(&lv->ses->st, id);
	cJSON *r = cJSON_Duplicate(result, 1);
	result_complete(r, lv->w, lv->zTaskName, c ? c->zName : "", lv->zBackend);
	cJSON *e = cJSON_CreateObject();
	cJSON_AddStringToObject(e, "type", "eval_finished");
	cJSON_AddNumberToObject(e, "candidate", id);
	cJSON_AddItemToObject(e, "result", r);
	int k = (int)(j - lv->aJob);
	memmove(&lv->aJob[k], &lv->aJob[k + 1], (size_t)(lv->nJob - k - 1) * sizeof *lv->aJob);
	lv->nJob--;
	emit_or_note(lv, e, id);
	lv->nFinished++;
	c = state_cand(&lv->ses->st, id);
	char v[600], msg[700];
	if (c) {
		live_verdict(c, v, sizeof v);
		snprintf(msg, sizeof msg, "candidate %d (%s): %s", id, c->zName, v);
		note(lv, LIVE_FINISHED, id, msg);
	}
	note(lv, LIVE_CHANGED, id, NULL);
}

static void on_progress(int job, const char *zStage, int k, void *arg)
{
	struct live *lv = arg;
	struct live_job *j = job_by_worker(lv, job);
	if (!j)
		return;
	snprintf(j->zStage, sizeof j->zStage, "%s",
	         !strcmp(zStage, "running") ? "loading" : zStage);
	j->k = k;
	note(lv, LIVE_CHANGED, j->cand, NULL);
}

static char **split_words(const char *z)
{
	char **v = xcalloc(strlen(z) / 2 + 2, sizeof(char *));
	int n = 0;
	for (const char *p = z; *p;) {
		size_t k = strspn(p, " ");
		p += k;
		if (!*p)
			break;
		k = strcspn(p, " ");
		v[n++] = xstrndup(p, k);
		p += k;
	}
	return v;
}

int live_bench(struct live *lv, int id, char *err)
{
	struct cand *c = state_cand(&lv->ses->st, id);
	if (!c)
		return kl_err(err, "there is no candidate %d", id);
	if (live_job_of(lv, id))
		return kl_err(err, "candidate %d is being evaluated already", id);
	cJSON *e = cJSON_CreateObject();
	cJSON_AddStringToObject(e, "type", "eval_started");
	cJSON_AddNumberToObject(e, "candidate", id);
	cJSON_AddStringToObject(e, "backend", lv->zBackend);
	if (session_emit(lv->ses, e, err) < 0)
		return -1;
	if (!lv->w) {
		struct worker_config wc = {
		    .argvLaunch = lv->argvLaunch,
		    .zBackend = lv->zBackend,
		    .zTaskDir = lv->zTaskDir,
		    .zShapes = lv->zShapes,
		    .zReference = lv->zReference,
		    .zPython = lv->cfg->zPython,
		    .nTrials = lv->cfg->nTrials,
		    .budgetS = lv->cfg->budgetS,
		    .runTimeoutS = lv->cfg->timeoutS,
		    .jobs = lv->cfg->jobs,
		};
		lv->w = worker_new(lv->l, &wc, on_done, on_progress, lv);
	}
	c = state_cand(&lv->ses->st, id);
	xgrow((void **)&lv->aJob, &lv->nJobAlloc, (size_t)lv->nJob + 1, sizeof *lv->aJob);
	lv->aJob[lv->nJob++] = (struct live_job){.cand = id, .job = -1, .k = -1, .tStart = now_s()};
	snprintf(lv->aJob[lv->nJob - 1].zStage, sizeof lv->aJob->zStage, "queued");
	lv->submitting = id;
	int job = worker_submit(lv->w, c->zName, c->zSource, strlen(c->zSource));
	lv->submitting = 0;
	/* a worker that cannot start answers at once, and the job is gone */
	struct live_job *j2 = (struct live_job *)live_job_of(lv, id);
	if (j2)
		j2->job = job;
	note(lv, LIVE_CHANGED, id, NULL);
	return 0;
}

static const char *ext_of(const char *zName)
{
	return zName ? strrchr(zName, '.') : NULL;
}

int live_add(struct live *lv, const char *zOrigin, const int *aParent, int nParent,
             const char *zName, const char *zSource, const char *zIdea, char *err)
{
	const struct state *st = &lv->ses->st;
	for (int i = 0; i < nParent; i++)
		if (!state_cand(st, aParent[i]))
			return kl_err(err, "parent %d is not a candidate", aParent[i]);
	if (!zSource || !*zSource)
		return kl_err(err, "the source is empty");
	if (looks_binary(zSource, strlen(zSource)))
		return kl_err(err, "the source looks binary, not C, C++ or CUDA text");
	int id = state_next_id(st);
	char *name;
	if (zName)
		name = xstrdup(zName);
	else {
		const char *ext = nParent ? ext_of(state_cand(st, aParent[0])->zName) : NULL;
		if (!ext)
			ext = !strcmp(lv->zBackend, "cuda") ? ".cu" : ".c";
		name = xasprintf("cand%d%s", id, ext);
	}
	cJSON *e = cJSON_CreateObject();
	cJSON_AddStringToObject(e, "type", "candidate_added");
	cJSON_AddNumberToObject(e, "id", id);
	cJSON_AddStringToObject(e, "name", name);
	cJSON_AddStringToObject(e, "origin", zOrigin);
	cJSON *ps = cJSON_AddArrayToObject(e, "parents");
	for (int i = 0; i < nParent; i++)
		cJSON_AddItemToArray(ps, cJSON_CreateNumber(aParent[i]));
	cJSON_AddStringToObject(e, "source", zSource);
	if (zIdea)
		cJSON_AddStringToObject(e, "idea", zIdea);
	free(name);
	if (session_emit(lv->ses, e, err) < 0)
		return -1;
	note(lv, LIVE_CHANGED, id, NULL);
	return id;
}

int live_export(const struct state *st, int id, const char *zPath, char *err)
{
	const struct cand *c = state_cand(st, id);
	if (!c)
		return kl_err(err, "there is no candidate %d", id);
	return write_file_atomic(zPath, c->zSource, strlen(c->zSource), err);
}

/* the task: a directory (task.json) or a KernelBench problem file */
static int resolve_task(struct live *lv, const char *zTask, char *err)
{
	size_t n = strlen(zTask);
	if (n > 3 && !strcmp(zTask + n - 3, ".py")) {
		if (!path_exists(zTask))
			return kl_err(err, "%s: no such problem file", zTask);
		char *real = realpath(zTask, NULL);
		lv->zTaskDir = real ? real : xstrdup(zTask);
		const char *b = strrchr(lv->zTaskDir, '/');
		b = b ? b + 1 : lv->zTaskDir;
		lv->zTaskName = xstrndup(b, strlen(b) - 3);
		return 0;
	}
	lv->zTaskDir = task_resolve(zTask, err);
	if (!lv->zTaskDir)
		return -1;
	struct task *t = task_load(lv->zTaskDir, lv->zBackend, lv->zShapes, err);
	if (!t)
		return -1;
	lv->zTaskName = xstrdup(t->zName);
	task_free(t);
	return 0;
}

static int add_seeds(struct live *lv, char *err)
{
	size_t n = strlen(lv->zTaskDir);
	if (n > 3 && !strcmp(lv->zTaskDir + n - 3, ".py"))
		return 0; /* a KernelBench problem has no seeds */
	struct task *t = task_load(lv->zTaskDir, lv->zBackend, lv->zShapes, err);
	if (!t)
		return -1;
	int cuda = !strcmp(lv->zBackend, "cuda");
	char **az = cuda ? t->seeds.azCuda : t->seeds.azHost;
	int nz = cuda ? t->seeds.nCuda : t->seeds.nHost, rc = 0;
	for (int i = 0; i < nz && rc == 0; i++) {
		strbuf sb = STRBUF_INIT;
		const char *b = strrchr(az[i], '/');
		rc = read_file(az[i], &sb, SOURCE_MAX, err);
		int id = rc < 0 ? -1
		                : live_add(lv, "seed", NULL, 0, b ? b + 1 : az[i],
		                           sb.buf ? sb.buf : "", NULL, err);
		sb_free(&sb);
		rc = id < 0 ? -1 : live_bench(lv, id, err);
	}
	task_free(t);
	return rc;
}

static int start_session(struct live *lv, char *err)
{
	cJSON *e = cJSON_CreateObject();
	cJSON_AddStringToObject(e, "type", "session_started");
	cJSON_AddStringToObject(e, "task", lv->zTaskName);
	cJSON_AddStringToObject(e, "task_dir", lv->zTaskDir);
	cJSON_AddStringToObject(e, "backend", lv->zBackend);
	if (lv->zShapes)
		cJSON_AddStringToObject(e, "shapes", lv->zShapes);
	cJSON_AddStringToObject(e, "kloop", "0.1.0");
	return session_emit(lv->ses, e, err);
}

/* make the journal's directory */
static int make_parent(const char *zPath, char *err)
{
	const char *slash = strrchr(zPath, '/');
	if (!slash || slash == zPath)
		return 0;
	char *dir = xstrndup(zPath, (size_t)(slash - zPath));
	int rc = path_exists(dir) ? 0 : mkdir_p(dir, err);
	free(dir);
	return rc;
}

struct live *live_open(struct loop *l, const struct config *cfg, const struct live_opts *o,
                       live_notify_fn notify, void *arg, char *err)
{
	struct live *lv = xcalloc(1, sizeof *lv);
	lv->l = l;
	lv->cfg = cfg;
	lv->notify = notify;
	lv->arg = arg;
	lv->zShapes = o->zShapes ? xstrdup(o->zShapes) : NULL;
	lv->zReference = o->zReference ? xstrdup(o->zReference) : NULL;
	if (cfg->zWorker)
		lv->argvLaunch = split_words(cfg->zWorker);
	/* an existing journal says which task and backend it is for */
	struct session *old =
	    o->zSession && path_exists(o->zSession) ? session_open(o->zSession, 0, err) : NULL;
	if (o->zSession && path_exists(o->zSession) && !old)
		goto fail;
	const char *zTask = o->zTask;
	if (old && old->st.zTaskDir && !zTask)
		zTask = old->st.zTaskDir;
	if (!zTask)
		zTask = "softmax";
	const char *be = old && old->st.zBackend ? old->st.zBackend : cfg->zBackend;
	lv->zBackend = xstrdup(be ? be : backend_cuda_available() ? "cuda" : "host");
	if (!lv->zShapes && old && old->st.zShapes)
		lv->zShapes = xstrdup(old->st.zShapes);
	if (cfg->zBackend && old && old->st.zBackend && strcmp(cfg->zBackend, old->st.zBackend)) {
		kl_err(err, "%s: the session ran on the %s backend, not %s", o->zSession,
		       old->st.zBackend, cfg->zBackend);
		goto fail;
	}
	if (resolve_task(lv, zTask, err) < 0)
		goto fail;
	if (old && old->st.zTask && strcmp(old->st.zTask, lv->zTaskName)) {
		kl_err(err, "%s: the session is for task '%s', not '%s'", o->zSession,
		       old->st.zTask, lv->zTaskName);
		goto fail;
	}
	session_close(old);
	old = NULL;
	char *path = o->zSession ? xstrdup(o->zSession) : live_default_path(lv->zTaskName);
	if (make_parent(path, err) < 0) {
		free(path);
		goto fail;
	}
	lv->ses = session_open(path, 1, err);
	free(path);
	if (!lv->ses)
		goto fail;
	if (lv->ses->warnings.len)
		note(lv, LIVE_MESSAGE, 0, lv->ses->warnings.buf);
	if (!lv->ses->st.zTask) {
		if (start_session(lv, err) < 0 || (!o->bNoSeeds && add_seeds(lv, err) < 0))
			goto fail;
	} else {
		/* evaluations cut short when the session stopped run again */
		const struct state *st = &lv->ses->st;
		for (int i = 0; i < st->nCand; i++)
			if ((!strcmp(st->aCand[i].zStatus, "evaluating") ||
			     !strcmp(st->aCand[i].zStatus, "new")) &&
			    live_bench(lv, st->aCand[i].id, err) < 0)
				goto fail;
	}
	return lv;
fail:
	session_close(old);
	live_close(lv);
	return NULL;
}

void live_close(struct live *lv)
{
	if (!lv)
		return;
	worker_free(lv->w);
	session_close(lv->ses);
	for (int i = 0; lv->argvLaunch && lv->argvLaunch[i]; i++)
		free(lv->argvLaunch[i]);
	free(lv->argvLaunch);
	free(lv->zTaskDir);
	free(lv->zTaskName);
	free(lv->zBackend);
	free(lv->zShapes);
	free(lv->zReference);
	free(lv->aJob);
	free(lv);
}
