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
#include "llm.h"
#include "pipeline.h"
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
	if (lv->p)
		pipeline_update(lv->p); /* a branch may wait for this verdict */
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

/* ---- the LLM pipeline ---- */

static int eval_hook(int candId, void *arg, char *err)
{
	return live_bench(arg, candId, err);
}

static void on_ideas(int request, const int *aIdea, int nIdea, const char *zError, void *arg)
{
	struct live *lv = arg;
	strbuf sb = STRBUF_INIT;
	if (!nIdea)
		sb_addf(&sb, "no ideas from request %d: %s", request,
		        zError ? zError : "the reply held none");
	else
		sb_addf(&sb, "%d idea%s from the LLM (accept, revise or reject them):", nIdea,
		        nIdea == 1 ? "" : "s");
	for (int i = 0; i < nIdea; i++) {
		const struct state_idea *d = state_idea(&lv->ses->st, aIdea[i]);
		if (d)
			sb_addf(&sb, "\n  idea %d [%s] %s", d->id, d->zCategory, d->zTitle);
	}
	note(lv, LIVE_IDEAS, 0, sb.buf);
	sb_free(&sb);
	note(lv, LIVE_CHANGED, 0, NULL);
}

static void on_candidate(int candId, int branch, int attempt, void *arg)
{
	struct live *lv = arg;
	const struct cand *c = state_cand(&lv->ses->st, candId);
	char msg[300];
	snprintf(msg, sizeof msg, "candidate %d (%s) from the LLM: idea %d, branch %d%s", candId,
	         c ? c->zName : "?", c ? c->ideaId : 0, branch, attempt ? ", a fix" : "");
	note(lv, LIVE_LOG, candId, msg);
}

static void on_branch(int ideaId, int branch, int candId, const char *zError, void *arg)
{
	struct live *lv = arg;
	if (!zError)
		return;
	char msg[600];
	snprintf(msg, sizeof msg, "idea %d, branch %d: %s%s", ideaId, branch, zError,
	         candId ? "" : " (no candidate)");
	note(lv, LIVE_LOG, candId, msg);
}

static void on_delta(int request, const char *z, size_t n, void *arg)
{
	struct live *lv = arg;
	(void)z;
	struct live_stream *st = NULL;
	for (int i = 0; i < lv->nStream; i++)
		if (lv->aStream[i].request == request)
			st = &lv->aStream[i];
	if (!st) {
		xgrow((void **)&lv->aStream, &lv->nStreamAlloc, (size_t)lv->nStream + 1,
		      sizeof *lv->aStream);
		st = &lv->aStream[lv->nStream++];
		*st = (struct live_stream){.request = request, .tStart = now_s()};
	}
	st->nChars += (long)n;
	st->tLast = now_s();
	note(lv, LIVE_CHANGED, 0, NULL);
}

static void on_log(const char *zLine, void *arg)
{
	note(arg, LIVE_LOG, 0, zLine);
}

int live_llm(struct live *lv, char *err)
{
	if (lv->p)
		return 0;
	struct llm_config lc;
	if (llm_config_from(&lc, lv->cfg, err) < 0)
		return -1;
	if (!lv->llm && !(lv->llm = llm_new(lv->l, &lc, err)))
		return -1;
	static const struct pipeline_hooks hooks = {
	    .ideas = on_ideas,
	    .candidate = on_candidate,
	    .branch = on_branch,
	    .delta = on_delta,
	    .log = on_log,
	};
	struct pipeline_config pc = {
	    .l = lv->l,
	    .ses = lv->ses,
	    .llm = lv->llm,
	    .task = lv->task,
	    .zProblem = lv->task ? NULL : lv->zTaskDir,
	    .zTaskName = lv->zTaskName,
	    .zBackend = lv->zBackend,
	    .fixAttempts = lv->cfg->fixAttempts,
	    .evaluateParents = 1,
	    .evaluate = eval_hook,
	    .hooks = &hooks,
	    .arg = lv,
	};
	lv->p = pipeline_new(&pc, err);
	return lv->p ? 0 : -1;
}

int live_ideas(struct live *lv, int parent, int n, char *err)
{
	return live_llm(lv, err) < 0 ? -1 : pipeline_ideas(lv->p, parent, n, err);
}

int live_idea_accept(struct live *lv, int id, char *err)
{
	return live_llm(lv, err) < 0 ? -1 : pipeline_idea_accept(lv->p, id, err);
}

int live_idea_reject(struct live *lv, int id, char *err)
{
	return live_llm(lv, err) < 0 ? -1 : pipeline_idea_reject(lv->p, id, NULL, err);
}

int live_idea_revise(struct live *lv, int id, const char *zTitle, const char *zDescription,
                     char *err)
{
	if (live_llm(lv, err) < 0)
		return -1;
	return pipeline_idea_edit(lv->p, id, zTitle, zDescription, NULL, err);
}

int live_implement(struct live *lv, int id, int parent, int nBranches, char *err)
{
	return live_llm(lv, err) < 0 ? -1
	                             : pipeline_implement(lv->p, id, parent, 0, nBranches, err);
}

int live_llm_busy(const struct live *lv)
{
	return lv->p ? pipeline_busy(lv->p) : 0;
}

int live_streams(struct live *lv, const struct live_stream **pa)
{
	/* a finished request stops streaming: keep as many of the most
	 * recently active streams as the client has requests pending */
	int pending = lv->llm ? llm_pending(lv->llm) : 0;
	while (lv->nStream > pending) {
		int old = 0;
		for (int i = 1; i < lv->nStream; i++)
			if (lv->aStream[i].tLast < lv->aStream[old].tLast)
				old = i;
		memmove(&lv->aStream[old], &lv->aStream[old + 1],
		        (size_t)(lv->nStream - old - 1) * sizeof *lv->aStream);
		lv->nStream--;
	}
	*pa = lv->aStream;
	return lv->nStream;
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
	lv->task = task_load(lv->zTaskDir, lv->zBackend, lv->zShapes, err);
	if (!lv->task)
		return -1;
	lv->zTaskName = xstrdup(lv->task->zName);
	return 0;
}

static int add_seeds(struct live *lv, char *err)
{
	const struct task *t = lv->task;
	if (!t)
		return 0; /* a KernelBench problem has no seeds */
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
	return rc;
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
	lv->argvLaunch = config_worker_argv(cfg);
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
		if (session_begin(lv->ses, lv->zTaskName, lv->zTaskDir, lv->zBackend, lv->zShapes,
		                  err) < 0 ||
		    (!o->bNoSeeds && add_seeds(lv, err) < 0))
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
	pipeline_free(lv->p);
	llm_free(lv->llm);
	worker_free(lv->w);
	session_close(lv->ses);
	task_free(lv->task);
	free(lv->aStream);
	config_argv_free(lv->argvLaunch);
	free(lv->zTaskDir);
	free(lv->zTaskName);
	free(lv->zBackend);
	free(lv->zShapes);
	free(lv->zReference);
	free(lv->aJob);
	free(lv);
}
