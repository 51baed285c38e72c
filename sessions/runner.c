/*
 * runner.c - a session that runs: the journal, the task's seeds, the
 * evaluations submitted to the worker pool whose results come back through
 * the caller's loop as eval_finished events, and the LLM pipeline
 * evaluating through that same pool.
 */
#include "runner.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "archive.h"
#include "backend.h"
#include "emit.h"
#include "llm_config.h"
#include "mps.h"
#include "pipeline.h"
#include "pool.h"
#include "proc.h"
#include "result.h"
#include "status.h"
#include "torchref.h"
#include "util.h"

#define SOURCE_MAX (8u << 20)

char *runner_state_dir(void)
{
	const char *x = getenv("XDG_STATE_HOME");
	if (x && *x)
		return xasprintf("%s/kloop", x);
	const char *h = getenv("HOME");
	return xasprintf("%s/.local/state/kloop", h && *h ? h : ".");
}

char *runner_default_path(const char *zTask)
{
	char *dir = runner_state_dir();
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

const struct state *runner_state(const struct runner *rn)
{
	return &rn->ses->st;
}

static void note(struct runner *rn, const struct runner_note *n)
{
	if (rn->notify)
		rn->notify(rn->arg, n);
}

static void note_simple(struct runner *rn, enum runner_note_kind kind, int cand, const char *zText)
{
	struct runner_note n = {.kind = kind, .cand = cand, .zText = zText};
	note(rn, &n);
}

const struct runner_job *runner_job_of(const struct runner *rn, int id)
{
	for (int i = 0; i < rn->nJob; i++)
		if (rn->aJob[i].cand == id)
			return &rn->aJob[i];
	return NULL;
}

static int profiles_of(const struct runner *rn);

int runner_jobs(const struct runner *rn)
{
	return rn->nJob + profiles_of(rn);
}

const char *runner_task_error(const struct runner *rn)
{
	return rn->pool ? pool_task_error(rn->pool) : NULL;
}

void runner_verdict(const struct cand *c, char *buf, size_t n)
{
	/* the spread next to the time: half the p10-p90 range, relative */
	char sp[32] = "";
	const cJSON *tm = c->result ? cJSON_GetObjectItem(c->result, "timing") : NULL;
	const cJSON *p10 = cJSON_GetObjectItem(tm, "p10_ms"),
	            *p90 = cJSON_GetObjectItem(tm, "p90_ms");
	if (c->timeMs > 0 && cJSON_IsNumber(p10) && cJSON_IsNumber(p90))
		snprintf(sp, sizeof sp, " ±%.0f%%",
		         (p90->valuedouble - p10->valuedouble) / 2 / c->timeMs * 100);
	const char *zStatus = c->status == STATUS_COMPILE_ERROR ? "compile error" : c->zStatus;
	/* where the cascade stopped, when the reason does not say */
	const char *zStage = cJSON_GetStringValue(cJSON_GetObjectItem(c->result, "stage"));
	char at[48] = "";
	if (zStage && c->status != STATUS_CORRECT && strcmp(zStage, "compile") &&
	    strcmp(zStage, "small shapes"))
		snprintf(at, sizeof at, " at %s", zStage);
	/* a quick timing only, and the A/B */
	char more[160] = "";
	const cJSON *ab = cJSON_GetObjectItem(c->result, "ab");
	if (cJSON_GetObjectItem(tm, "stopped"))
		snprintf(more, sizeof more, " (stopped after the quick timing)");
	else if (cJSON_IsNumber(cJSON_GetObjectItem(ab, "pairs")))
		snprintf(more, sizeof more, "; A/B vs #%d: faster in %d of %d pairs, %.3gx, %s",
		         (int)cJSON_GetNumberValue(cJSON_GetObjectItem(ab, "incumbent_id")),
		         (int)cJSON_GetNumberValue(cJSON_GetObjectItem(ab, "wins")),
		         (int)cJSON_GetNumberValue(cJSON_GetObjectItem(ab, "pairs")),
		         cJSON_GetNumberValue(cJSON_GetObjectItem(ab, "ratio")),
		         cJSON_IsTrue(cJSON_GetObjectItem(ab, "won")) ? "won"
		                                                      : "not beyond the noise");
	else if (ab)
		snprintf(more, sizeof more, "; no A/B vs #%d",
		         (int)cJSON_GetNumberValue(cJSON_GetObjectItem(ab, "incumbent_id")));
	if (c->status == STATUS_CORRECT && c->timeMs >= 0 && c->speedup >= 0)
		snprintf(buf, n, "correct, %.4g ms%s, %.3gx%s", c->timeMs, sp, c->speedup, more);
	else if (c->status == STATUS_CORRECT && c->timeMs >= 0)
		snprintf(buf, n, "correct, %.4g ms%s%s", c->timeMs, sp, more);
	else if (c->zReason && *c->zReason)
		snprintf(buf, n, "%s%s: %s", zStatus, at, c->zReason);
	else
		snprintf(buf, n, "%s%s", zStatus, at);
	/* the same machine code as a candidate timed before: its timing */
	const char *nt = cJSON_GetStringValue(cJSON_GetObjectItem(c->result, "not_timed"));
	size_t len = strlen(buf);
	if (c->status == STATUS_CORRECT && nt && len + 4 < n)
		snprintf(buf + len, n - len, " (%s)", nt);
	/* one line: the reason may hold a compiler's newlines */
	for (char *p = buf; *p; p++)
		if (*p == '\n' || *p == '\r' || *p == '\t')
			*p = ' ';
}

void runner_describe(const struct runner *rn, const struct runner_note *n, strbuf *sb)
{
	const struct state *st = &rn->ses->st;
	const struct cand *c = state_cand(st, n->cand);
	char v[600];
	const char *gate;
	int nNew;
	switch (n->kind) {
	case RUNNER_CHANGED:
		break;
	case RUNNER_FINISHED:
		if (c) {
			runner_verdict(c, v, sizeof v);
			sb_addf(sb, "candidate %d (%s): %s", c->id, c->zName, v);
		}
		break;
	case RUNNER_IDEAS:
		/* under the auto gate a person has nothing to decide */
		gate = cJSON_GetStringValue(cJSON_GetObjectItem(st->search.settings, "gate"));
		nNew = 0; /* the rest were proposed before: deduplicated */
		for (int i = 0; i < n->nIdea; i++)
			nNew += state_idea(st, n->aIdea[i]) &&
			        !state_idea(st, n->aIdea[i])->duplicateOf;
		if (!n->nIdea)
			sb_addf(sb, "no ideas from request %d: %s", n->request,
			        n->zText ? n->zText : "the reply held none");
		else if (!nNew)
			sb_addf(sb, "no new ideas from request %d: each was proposed before",
			        n->request);
		else
			sb_addf(sb, "%d idea%s from the LLM (%s):", nNew, nNew == 1 ? "" : "s",
			        search_state_live(st->search.state) &&
			                strcmp(gate ? gate : "auto", "human")
			            ? "the search's auto gate decides them"
			            : "accept, revise or reject them");
		for (int i = 0; i < n->nIdea; i++) {
			const struct state_idea *d = state_idea(st, n->aIdea[i]);
			if (d && d->duplicateOf)
				sb_addf(sb, "\n  idea %d [%s] %s: %s (deduplicated)", d->id,
				        d->zCategory, d->zTitle, state_idea_why(st, d).z);
			else if (d)
				sb_addf(sb, "\n  idea %d [%s] %s", d->id, d->zCategory, d->zTitle);
		}
		break;
	case RUNNER_CANDIDATE:
		sb_addf(sb, "candidate %d (%s) from the LLM: idea %d, branch %d%s", n->cand,
		        c ? c->zName : "?", n->idea, n->branch, n->attempt ? ", a fix" : "");
		break;
	case RUNNER_BRANCH:
		sb_addf(sb, "idea %d, branch %d: %s%s", n->idea, n->branch, n->zText,
		        n->cand ? "" : " (no candidate)");
		break;
	case RUNNER_MESSAGE:
	case RUNNER_LOG:
		sb_addf(sb, "%s", n->zText ? n->zText : "");
		break;
	}
}

/* an event the journal refused, where no caller can take the error */
static void journal_failed(struct runner *rn, int cand, const char *zErr)
{
	char msg[KL_ERRLEN + 64];
	snprintf(msg, sizeof msg, "journal: %s", zErr);
	note_simple(rn, RUNNER_MESSAGE, cand, msg);
}

/* ---- the evaluations: the pool's jobs ---- */

static struct runner_job *job_by_id(struct runner *rn, int job)
{
	for (int i = 0; i < rn->nJob; i++)
		if (rn->aJob[i].job == job)
			return &rn->aJob[i];
	return NULL;
}

/* ---- the same machine code is not timed again ---- */

/* r's code hash and device, when r is a result that has them */
static const char *code_of(const cJSON *r, const char **pzDevice)
{
	const char *z = cJSON_GetStringValue(cJSON_GetObjectItem(r, "code_hash"));
	*pzDevice = cJSON_GetStringValue(cJSON_GetObjectItem(r, "device"));
	return z && *pzDevice ? z : NULL;
}

/* the first candidate other than id timed with code zCode on zDevice */
static const struct cand *timed_with(const struct state *st, int id, const char *zCode,
                                     const char *zDevice)
{
	for (int i = 0; i < st->nCand; i++) {
		const struct cand *c = &st->aCand[i];
		const char *dev, *code = code_of(c->result, &dev);
		if (c->id != id && code && !strcmp(code, zCode) && !strcmp(dev, zDevice) &&
		    c->status == STATUS_CORRECT && cJSON_GetObjectItem(c->result, "timing") &&
		    !cJSON_GetObjectItem(c->result, "not_timed"))
			return c;
	}
	return NULL;
}

/* a result the worker did not time (the same machine code as one timed in
 * this session on this device model): whose timing it carries, by id */
static void same_code_as(struct runner *rn, int id, cJSON *r, const char *zDevice)
{
	const char *code = cJSON_GetStringValue(cJSON_GetObjectItem(r, "code_hash"));
	const struct cand *e = code && zDevice && cJSON_GetObjectItem(r, "not_timed")
	                           ? timed_with(&rn->ses->st, id, code, zDevice)
	                           : NULL;
	if (!e)
		return; /* the worker's own words name what it timed */
	char *z = xasprintf("same machine code as #%d, not timed again", e->id);
	cJSON_ReplaceItemInObject(r, "not_timed", cJSON_CreateString(z));
	free(z);
	cJSON_DeleteItemFromObject(r, "same_code_as");
	cJSON_AddNumberToObject(r, "same_code_as", e->id);
	cJSON_ReplaceItemInObject(r, "timing",
	                          cJSON_Duplicate(cJSON_GetObjectItem(e->result, "timing"), 1));
}

/* the workers learn that cand c's code was timed (a result just in, or one
 * of a session resumed), so that they do not time it again */
static void tell_timed(struct runner *rn, const struct cand *c)
{
	const char *dev, *code = code_of(c->result, &dev);
	const cJSON *tm = cJSON_GetObjectItem(c->result, "timing");
	if (!code || c->status != STATUS_CORRECT || !cJSON_IsObject(tm) ||
	    cJSON_GetObjectItem(c->result, "not_timed"))
		return;
	pool_code_measured(rn->pool, dev, code, c->zName, tm);
}

static void on_done(int job, cJSON *result, void *arg)
{
	struct runner *rn = arg;
	struct runner_job *j = job_by_id(rn, job);
	if (!j)
		return;
	int id = j->cand;
	struct cand *c = state_cand(&rn->ses->st, id);
	cJSON *r = cJSON_Duplicate(result, 1);
	/* the baseline measured on the GPU model the result came from */
	const char *dev =
	    cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(r, "worker"), "device"));
	const char *d = dev && *dev ? dev : NULL;
	same_code_as(rn, id, r, d);
	result_complete_from(r, pool_reference_timing(rn->pool, d), pool_baselines(rn->pool, d),
	                     pool_reference_data(rn->pool, d), pool_reference_name(rn->pool), d,
	                     rn->zTaskName, c ? c->zName : "", rn->zBackend);
	int k = (int)(j - rn->aJob);
	memmove(&rn->aJob[k], &rn->aJob[k + 1], (size_t)(rn->nJob - k - 1) * sizeof *rn->aJob);
	rn->nJob--;
	char err[KL_ERRLEN];
	if (!rn->bSandboxWarned && pool_sandbox_warning(rn->pool)) {
		rn->bSandboxWarned = 1; /* once per runner: bubblewrap cannot run */
		note_simple(rn, RUNNER_MESSAGE, 0, pool_sandbox_warning(rn->pool));
	}
	if (ev_eval_finished(rn->ses, id, r, err) < 0)
		journal_failed(rn, id, err);
	/* an A/B in the result is an event of its own (the search reads it) */
	const cJSON *ab = cJSON_GetObjectItem(r, "ab");
	const cJSON *abInc = cJSON_GetObjectItem(ab, "incumbent_id");
	if (cJSON_IsNumber(abInc) && state_cand(&rn->ses->st, id) &&
	    ev_ab_compared(rn->ses, id, abInc->valueint, ab, err) < 0)
		journal_failed(rn, id, err);
	cJSON_Delete(r);
	rn->nFinished++;
	if (state_cand(&rn->ses->st, id))
		tell_timed(rn, state_cand(&rn->ses->st, id));
	/* a new win or dead end goes into the innovation archive now (issue 15):
	 * one short transaction, never fatal */
	char aerr[KL_ERRLEN] = "";
	if (archive_note_session(&rn->ses->st, rn->ses->zPath, aerr) < 0 && *aerr)
		note_simple(rn, RUNNER_LOG, id, aerr);
	if (state_cand(&rn->ses->st, id))
		note_simple(rn, RUNNER_FINISHED, id, NULL);
	if (rn->p)
		pipeline_update(rn->p); /* a branch may wait for this verdict */
	note_simple(rn, RUNNER_CHANGED, id, NULL);
}

/* torch.compile's baseline, compiled in the background, is in: the results
 * before it get it (journaled), the archive too, and a line says so */
static void on_baselines(const char *zDevice, const cJSON *baselines, void *arg)
{
	struct runner *rn = arg;
	char err[KL_ERRLEN];
	const cJSON *cm = cJSON_GetObjectItem(baselines, "compile");
	if (ev_compile_baseline(rn->ses, zDevice, cm, err) < 0)
		journal_failed(rn, 0, err);
	char aerr[KL_ERRLEN] = "";
	if (archive_note_session(&rn->ses->st, rn->ses->zPath, aerr) < 0 && *aerr)
		note_simple(rn, RUNNER_LOG, 0, aerr);
	strbuf sb = STRBUF_INIT;
	double ms = result_num(cm, "median_ms");
	if (isnan(ms))
		sb_addf(&sb, "torch.compile's baseline on %s: %s", zDevice,
		        cJSON_GetStringValue(cJSON_GetObjectItem(cm, "error"))
		            ? cJSON_GetStringValue(cJSON_GetObjectItem(cm, "error"))
		            : "not measured");
	else
		sb_addf(&sb,
		        "torch.compile's baseline on %s: %.4g ms (compiled in the background in "
		        "%.1f s, %d benchmark%s given the GPU between candidates)",
		        zDevice, ms, result_num(cm, "compile_seconds"),
		        (int)result_num(cm, "benchmarks"),
		        result_num(cm, "benchmarks") == 1 ? "" : "s");
	note_simple(rn, RUNNER_LOG, 0, sb.buf);
	sb_free(&sb);
	note_simple(rn, RUNNER_CHANGED, 0, NULL);
}

static void on_progress(int job, const char *zStage, int k, void *arg)
{
	struct runner *rn = arg;
	struct runner_job *j = job_by_id(rn, job);
	if (!j)
		return;
	if (!strcmp(zStage, "running") && !j->bRunning) {
		/* its code is about to run: from here a session cut short may be
		 * the candidate's doing (abandon_poison_pill) */
		char err[KL_ERRLEN];
		j->bRunning = 1;
		if (ev_eval_running(rn->ses, j->cand, err) < 0)
			journal_failed(rn, j->cand, err);
	}
	snprintf(j->zStage, sizeof j->zStage, "%s",
	         !strcmp(zStage, "running") ? "loading" : zStage);
	j->k = k;
	note_simple(rn, RUNNER_CHANGED, j->cand, NULL);
}

/*
 * The eval request's extra fields for candidate id: the runner's options,
 * the baseline for the quick timing's stop (the incumbent's time, else the
 * reference's), and the incumbent to time against in an A/B (abWith, else
 * the runner's incumbent; never the candidate itself).  NULL when none.
 */
static cJSON *eval_opts(struct runner *rn, int id, int abWith, int force)
{
	const struct state *st = &rn->ses->st;
	cJSON *o = rn->evalOpts ? cJSON_Duplicate(rn->evalOpts, 1) : cJSON_CreateObject();
	int incId = abWith ? abWith : rn->incumbent;
	const struct cand *inc = incId && incId != id ? state_cand(st, incId) : NULL;
	if (inc && (force || (inc->status == STATUS_CORRECT && inc->timeMs > 0))) {
		cJSON *i = cJSON_AddObjectToObject(o, "incumbent");
		cJSON_AddNumberToObject(i, "id", inc->id);
		cJSON_AddStringToObject(i, "name", inc->zName);
		cJSON_AddStringToObject(i, "source", inc->zSource);
		cJSON_AddNumberToObject(i, "median_ms", inc->timeMs > 0 ? inc->timeMs : 0);
		const cJSON *m =
		    cJSON_GetObjectItem(cJSON_GetObjectItem(inc->result, "timing"), "method");
		if (cJSON_IsString(m))
			cJSON_AddStringToObject(i, "method", m->valuestring);
		if (force)
			cJSON_AddBoolToObject(o, "ab_force", 1);
	}
	double base = inc && inc->timeMs > 0 ? inc->timeMs : st->baselineMs;
	if (base > 0 && !cJSON_GetObjectItem(o, "baseline_ms"))
		cJSON_AddNumberToObject(o, "baseline_ms", base);
	return o;
}

void runner_set_eval_opts(struct runner *rn, const cJSON *opts)
{
	cJSON_Delete(rn->evalOpts);
	rn->evalOpts = opts ? cJSON_Duplicate(opts, 1) : NULL;
}

void runner_set_incumbent(struct runner *rn, int id)
{
	rn->incumbent = id;
}

/* evaluate candidate id on worker w, or on any when w < 0 (an A/B against
 * abWith when not 0, forced) */
static int bench_at(struct runner *rn, int id, int w, int abWith, char *err)
{
	if (!state_cand(&rn->ses->st, id))
		return kl_err(err, "there is no candidate %d", id);
	if (runner_job_of(rn, id))
		return kl_err(err, "candidate %d is being evaluated already", id);
	int nW = pool_size(rn->pool);
	if (w >= nW)
		return kl_err(err, "there is no worker %d (the pool has %d: 0 to %d)", w, nW,
		              nW - 1);
	if (ev_eval_started(rn->ses, id, rn->zBackend, abWith, err) < 0)
		return -1;
	const struct cand *c = state_cand(&rn->ses->st, id);
	xgrow((void **)&rn->aJob, &rn->nJobAlloc, (size_t)rn->nJob + 1, sizeof *rn->aJob);
	struct runner_job *j = &rn->aJob[rn->nJob++];
	*j = (struct runner_job){.cand = id, .k = -1, .tStart = now_s()};
	snprintf(j->zStage, sizeof j->zStage, "queued");
	cJSON *opts = eval_opts(rn, id, abWith, abWith != 0);
	j->job = pool_submit_opts(rn->pool, w, c->zName, c->zSource, strlen(c->zSource), opts, err);
	cJSON_Delete(opts);
	note_simple(rn, RUNNER_CHANGED, id, NULL);
	return 0;
}

int runner_bench(struct runner *rn, int id, char *err)
{
	return bench_at(rn, id, -1, 0, err);
}

int runner_bench_ab(struct runner *rn, int id, int other, char *err)
{
	if (!state_cand(&rn->ses->st, other))
		return kl_err(err, "there is no candidate %d to time against", other);
	if (other == id)
		return kl_err(err, "an A/B needs two candidates (%d twice)", id);
	return bench_at(rn, id, -1, other, err);
}

int runner_bench_on(struct runner *rn, int id, int w, char *err)
{
	if (w < 0)
		return kl_err(err, "worker %d: a worker is numbered from 0", w);
	return bench_at(rn, id, w, 0, err);
}

static const char *ext_of(const char *zName)
{
	return zName ? strrchr(zName, '.') : NULL;
}

int runner_add(struct runner *rn, const char *zOrigin, const int *aParent, int nParent,
               const char *zName, const char *zSource, const char *zIdea, char *err)
{
	const struct state *st = &rn->ses->st;
	for (int i = 0; i < nParent; i++)
		if (!state_cand(st, aParent[i]))
			return kl_err(err, "parent %d is not a candidate", aParent[i]);
	if (!zSource || !*zSource)
		return kl_err(err, "the source is empty");
	if (looks_binary(zSource, strlen(zSource)))
		return kl_err(err, "the source looks binary, not C, C++ or CUDA text");
	char *name;
	if (zName)
		name = xstrdup(zName);
	else {
		const char *ext = nParent ? ext_of(state_cand(st, aParent[0])->zName) : NULL;
		if (!ext)
			ext = !strcmp(rn->zBackend, "cuda") ? ".cu" : ".c";
		name = xasprintf("cand%d%s", state_next_id(st), ext);
	}
	struct ev_candidate c = {
	    .zName = name,
	    .zOrigin = zOrigin,
	    .aParent = aParent,
	    .nParent = nParent,
	    .zSource = zSource,
	    .zIdea = zIdea,
	    .round = rn->round,
	};
	int id = ev_candidate_added(rn->ses, &c, err);
	free(name);
	if (id > 0)
		note_simple(rn, RUNNER_CHANGED, id, NULL);
	return id;
}

int runner_add_source(struct runner *rn, const char *zOrigin, const char *zName,
                      const char *zSource, char *err)
{
	const struct cand *same = state_cand_by_source(&rn->ses->st, zSource);
	if (same)
		return same->id;
	return runner_add(rn, zOrigin, NULL, 0, zName, zSource, NULL, err);
}

/* ---- the LLM pipeline ---- */

static int eval_hook(int candId, void *arg, char *err)
{
	return runner_bench(arg, candId, err);
}

static void on_ideas(int request, const int *aIdea, int nIdea, const char *zError, void *arg)
{
	struct runner *rn = arg;
	struct runner_note n = {
	    .kind = RUNNER_IDEAS,
	    .request = request,
	    .aIdea = aIdea,
	    .nIdea = nIdea,
	    .zText = nIdea    ? NULL
	             : zError ? zError
	                      : "the reply held none",
	};
	note(rn, &n);
	note_simple(rn, RUNNER_CHANGED, 0, NULL);
}

static void on_candidate(int candId, int branch, int attempt, void *arg)
{
	struct runner *rn = arg;
	const struct cand *c = state_cand(&rn->ses->st, candId);
	struct runner_note n = {
	    .kind = RUNNER_CANDIDATE,
	    .cand = candId,
	    .idea = c ? c->ideaId : 0,
	    .branch = branch,
	    .attempt = attempt,
	};
	note(rn, &n);
}

static void on_branch(int ideaId, int branch, int candId, const char *zError, void *arg)
{
	struct runner *rn = arg;
	if (!zError)
		return;
	struct runner_note n = {
	    .kind = RUNNER_BRANCH,
	    .cand = candId,
	    .idea = ideaId,
	    .branch = branch,
	    .zText = zError,
	};
	note(rn, &n);
}

static void on_delta(int request, const char *z, size_t n, void *arg)
{
	struct runner *rn = arg;
	(void)z;
	struct runner_stream *st = NULL;
	for (int i = 0; i < rn->nStream; i++)
		if (rn->aStream[i].request == request)
			st = &rn->aStream[i];
	if (!st) {
		xgrow((void **)&rn->aStream, &rn->nStreamAlloc, (size_t)rn->nStream + 1,
		      sizeof *rn->aStream);
		st = &rn->aStream[rn->nStream++];
		*st = (struct runner_stream){.request = request, .tStart = now_s()};
	}
	st->nChars += (long)n;
	st->tLast = now_s();
	struct runner_note nt = {.kind = RUNNER_CHANGED, .request = request};
	note(rn, &nt);
}

static void on_log(const char *zLine, void *arg)
{
	note_simple(arg, RUNNER_LOG, 0, zLine);
}

int runner_llm(struct runner *rn, char *err)
{
	if (rn->p)
		return 0;
	struct llm_config lc;
	if (llm_config_from(&lc, rn->cfg, err) < 0)
		return -1;
	if (!rn->llm && !(rn->llm = llm_new(rn->l, &lc, err)))
		return -1;
	static const struct pipeline_hooks hooks = {
	    .ideas = on_ideas,
	    .candidate = on_candidate,
	    .branch = on_branch,
	    .delta = on_delta,
	    .log = on_log,
	};
	struct pipeline_config pc = {
	    .l = rn->l,
	    .ses = rn->ses,
	    .llm = rn->llm,
	    .task = rn->task,
	    .zProblem = rn->task ? NULL : rn->zTaskDir,
	    .zTaskName = rn->zTaskName,
	    .zBackend = rn->zBackend,
	    .fixAttempts = rn->cfg->fixAttempts,
	    .evaluateParents = !rn->bNoEvalParents,
	    .zPython = rn->cfg->zPython,
	    .zShapes = rn->zShapes,
	    .size = rn->cfg->size,
	    .evaluate = eval_hook,
	    .hooks = &hooks,
	    .arg = rn,
	};
	rn->p = pipeline_new(&pc, err);
	if (rn->p) {
		pipeline_round(rn->p, rn->round);
		pipeline_limit(rn->p, rn->limit, rn->limitArg);
	}
	return rn->p ? 0 : -1;
}

int runner_ideas(struct runner *rn, int parent, int n, char *err)
{
	return runner_llm(rn, err) < 0 ? -1 : pipeline_ideas(rn->p, parent, n, err);
}

int runner_idea_accept(struct runner *rn, int id, char *err)
{
	return runner_llm(rn, err) < 0 ? -1 : pipeline_idea_accept(rn->p, id, err);
}

int runner_idea_reject(struct runner *rn, int id, char *err)
{
	return runner_llm(rn, err) < 0 ? -1 : pipeline_idea_reject(rn->p, id, NULL, err);
}

int runner_idea_revise(struct runner *rn, int id, const char *zTitle, const char *zDescription,
                       char *err)
{
	if (runner_llm(rn, err) < 0)
		return -1;
	return pipeline_idea_edit(rn->p, id, zTitle, zDescription, NULL, err);
}

int runner_idea_new(struct runner *rn, const char *zText, int parent, char *err)
{
	return runner_llm(rn, err) < 0 ? -1 : pipeline_idea_new(rn->p, zText, parent, err);
}

int runner_implement(struct runner *rn, int id, int parent, int nBranches, char *err)
{
	return runner_crossover(rn, id, parent, 0, nBranches, err);
}

int runner_crossover(struct runner *rn, int id, int parent, int parent2, int nBranches, char *err)
{
	return runner_llm(rn, err) < 0
	           ? -1
	           : pipeline_implement(rn->p, id, parent, parent2, nBranches, err);
}

int runner_branch_resume(struct runner *rn, const struct state_branch *b, int nBranches, char *err)
{
	return runner_llm(rn, err) < 0 ? -1 : pipeline_branch_resume(rn->p, b, nBranches, err);
}

int runner_llm_busy(const struct runner *rn)
{
	return rn->p ? pipeline_busy(rn->p) : 0;
}

int runner_busy(const struct runner *rn)
{
	return runner_jobs(rn) > 0 || runner_llm_busy(rn) > 0;
}

int runner_streams(struct runner *rn, const struct runner_stream **pa)
{
	/* a finished request stops streaming: keep as many of the most
	 * recently active streams as the client has requests pending */
	int pending = rn->llm ? llm_pending(rn->llm) : 0;
	while (rn->nStream > pending) {
		int old = 0;
		for (int i = 1; i < rn->nStream; i++)
			if (rn->aStream[i].tLast < rn->aStream[old].tLast)
				old = i;
		memmove(&rn->aStream[old], &rn->aStream[old + 1],
		        (size_t)(rn->nStream - old - 1) * sizeof *rn->aStream);
		rn->nStream--;
	}
	*pa = rn->aStream;
	return rn->nStream;
}

/* ---- opening ---- */

static int add_seeds(struct runner *rn, char *err)
{
	const struct task *t = rn->task;
	if (!t)
		return 0; /* a KernelBench problem has no seeds */
	int cuda = !strcmp(rn->zBackend, "cuda");
	char **az = cuda ? t->seeds.azCuda : t->seeds.azHost;
	int nz = cuda ? t->seeds.nCuda : t->seeds.nHost, rc = 0;
	for (int i = 0; i < nz && rc == 0; i++) {
		strbuf sb = STRBUF_INIT;
		const char *b = strrchr(az[i], '/');
		rc = read_file(az[i], &sb, SOURCE_MAX, err);
		int id = rc < 0 ? -1
		                : runner_add(rn, "seed", NULL, 0, b ? b + 1 : az[i],
		                             sb.buf ? sb.buf : "", NULL, err);
		sb_free(&sb);
		rc = id < 0 ? -1 : runner_bench(rn, id, err);
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

/*
 * Issue 14 (sandbox): a candidate whose evaluation the session did not live
 * through twice, its code running (eval_running) at least once of them, is
 * never run again on resume, so that no candidate can make a session
 * impossible to reopen.  One that only waited (queued or compiling behind
 * another, or the worker still timing the reference) when kloop was killed
 * did nothing to it and runs again, up to the fourth time its evaluation is
 * cut short.  "At least once": a candidate that kills kloop at once may do
 * so before the worker's "running" reaches the journal.
 */
static int poison_pill(const struct cand *c)
{
	return (c->nUnfinished >= 2 && c->nRunning >= 1) || c->nUnfinished >= 4;
}

/* it ends as crashed, marked "abandoned"; or, when it had a verdict before
 * this evaluation (an A/B, a bench again), that verdict stands, marked */
static int abandon_poison_pill(struct runner *rn, const struct cand *c, char *err)
{
	int id = c->id;
	/* copied: the eval_finished below replaces c->result */
	char prev[32] = "";
	const char *z = cJSON_GetStringValue(cJSON_GetObjectItem(c->result, "status"));
	snprintf(prev, sizeof prev, "%s", z ? z : "");
	int kept = z && status_finished(status_from_name(prev));
	cJSON *r;
	if (kept) {
		r = cJSON_Duplicate(c->result, 1);
		cJSON_DeleteItemFromObject(r, "rerun_abandoned");
		cJSON_AddStringToObject(
		    r, "rerun_abandoned",
		    "the session ended twice while evaluating it again: not run "
		    "again; its earlier verdict stands");
	} else {
		r = cJSON_CreateObject();
		cJSON_AddStringToObject(r, "status", status_name(STATUS_CRASHED));
		cJSON_AddStringToObject(r, "reason",
		                        "the session ended twice while this candidate was running: "
		                        "not run again (it may kill whatever evaluates it)");
		cJSON_AddBoolToObject(r, "abandoned", 1);
	}
	int rc = ev_eval_finished(rn->ses, id, r, err);
	cJSON_Delete(r);
	if (rc < 0)
		return -1;
	char msg[200];
	snprintf(msg, sizeof msg,
	         kept ? "candidate %d: the session ended twice while evaluating it again; not "
	                "run again, its earlier verdict (%s) stands"
	              : "candidate %d: the session ended twice while it was running; not run "
	                "again%s",
	         id, kept ? prev : "");
	note_simple(rn, RUNNER_MESSAGE, id, msg);
	return 0;
}

/* the session's journal refused an event (a full disk): the work under way
 * goes on in memory, the search stops, nothing more is saved */
static void journal_lost(void *arg, const char *zErr)
{
	struct runner *rn = arg;
	char msg[KL_ERRLEN + 200];
	snprintf(msg, sizeof msg,
	         "journal: %s: nothing more of this session is saved (the journal holds it up to "
	         "here: resume from it once there is room); a search stops",
	         zErr);
	note_simple(rn, RUNNER_MESSAGE, 0, msg);
}

/* the session: the journal zSession (made with its directory), or memory */
static struct session *open_session(struct runner *rn, const struct runner_opts *o, char *err)
{
	if (!o->zSession && o->bMemory)
		return session_memory();
	char *path = o->zSession ? xstrdup(o->zSession) : runner_default_path(rn->zTaskName);
	/* a one-shot command writes only into a directory that exists */
	struct session *s =
	    !o->bMemory && make_parent(path, err) < 0 ? NULL : session_open(path, 1, err);
	free(path);
	return s;
}

/*
 * A problem file (or --reference torch) needs PyTorch: when the configured
 * interpreter cannot be run or has no torch, say so at once, with the fix,
 * rather than at the first evaluation.  (importlib's find_spec does not
 * import torch: this takes milliseconds.)
 */
static void torch_warning(struct runner *rn)
{
	size_t n = strlen(rn->zTaskDir);
	int py = n > 3 && !strcmp(rn->zTaskDir + n - 3, ".py");
	if (!py && !(rn->zReference && !strcmp(rn->zReference, "torch")))
		return;
	const char *python = rn->cfg->zPython ? rn->cfg->zPython : "python3";
	int has = torchref_has_torch(python);
	if (has == 1)
		return;
	const char *other = torchref_python_with_torch(python);
	char *z = has == 0 && other
	              ? xasprintf("PyTorch is not installed for %s, %s has it: start kloop with "
	                          "--python %s (or set python = %s in the config); until then %s's "
	                          "PyTorch reference cannot run and no candidate can be checked",
	                          python, other, other, other, rn->zTaskName)
	          : has == 0
	              ? xasprintf("PyTorch is not installed for %s: start kloop with --python PATH "
	                          "(a Python with torch) or install it there; until then %s's "
	                          "PyTorch reference cannot run and no candidate can be checked",
	                          python, rn->zTaskName)
	              : xasprintf("the Python interpreter '%s' cannot be run: start kloop with "
	                          "--python PATH (a Python with torch); until then %s's PyTorch "
	                          "reference cannot run",
	                          python, rn->zTaskName);
	note_simple(rn, RUNNER_MESSAGE, 0, z);
	free(z);
}

struct runner *runner_open(struct loop *l, const struct config *cfg, const struct runner_opts *o,
                           runner_notify_fn notify, void *arg, char *err)
{
	struct runner *rn = xcalloc(1, sizeof *rn);
	rn->l = l;
	rn->cfg = cfg;
	rn->notify = notify;
	rn->arg = arg;
	rn->bNoEvalParents = o->bNoEvalParents;
	rn->zShapes = o->zShapes ? xstrdup(o->zShapes) : NULL;
	rn->zReference = o->zReference ? xstrdup(o->zReference) : NULL;
	rn->argvLaunch = config_worker_argv(cfg);
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
	rn->zBackend = xstrdup(be ? be : backend_cuda_available() ? "cuda" : "host");
	if (!rn->zShapes && old && old->st.zShapes)
		rn->zShapes = xstrdup(old->st.zShapes);
	if (cfg->zBackend && old && old->st.zBackend && strcmp(cfg->zBackend, old->st.zBackend)) {
		kl_err(err, "%s: the session ran on the %s backend, not %s", o->zSession,
		       old->st.zBackend, cfg->zBackend);
		goto fail;
	}
	struct task_ref tr;
	if (task_open(zTask, rn->zBackend, rn->zShapes, &tr, err) < 0)
		goto fail;
	rn->zTaskDir = tr.zDir;
	rn->zTaskName = tr.zName;
	rn->task = tr.task;
	if (old && old->st.zTask && strcmp(old->st.zTask, rn->zTaskName)) {
		kl_err(err, "%s: the session is for task '%s', not '%s'", o->zSession,
		       old->st.zTask, rn->zTaskName);
		goto fail;
	}
	session_close(old);
	old = NULL;
	worker_config_from(&rn->wc, cfg);
	rn->wc.argvLaunch = rn->argvLaunch;
	rn->wc.zBackend = rn->zBackend;
	rn->wc.zTaskDir = rn->zTaskDir;
	rn->wc.zShapes = rn->zShapes;
	rn->wc.zReference = rn->zReference;
	rn->wc.deferCompile = o->bDeferCompile;
	rn->wc.onBaselines = on_baselines;
	rn->wc.baselinesArg = rn;
	/* MPS for the local GPUs (mps.h), named to the workers before they start */
	if (mps_begin(cfg->mps, rn->zBackend, cfg->zWorkers, pool_local_gpus(), NULL, err) < 0)
		goto fail;
	/* the workers (none starts before the first evaluation) */
	if (!(rn->pool = pool_new(l, &rn->wc, cfg->zWorkers, on_done, on_progress, rn, err)))
		goto fail;
	if (!(rn->ses = open_session(rn, o, err)))
		goto fail;
	if (rn->ses->warnings.len)
		note_simple(rn, RUNNER_MESSAGE, 0, rn->ses->warnings.buf);
	for (int i = 0; i < rn->ses->st.nCand; i++)
		tell_timed(rn, &rn->ses->st.aCand[i]);
	if (!rn->ses->st.zTask) {
		if (session_begin(rn->ses, rn->zTaskName, rn->zTaskDir, rn->zBackend, rn->zShapes,
		                  err) < 0 ||
		    (!o->bNoSeeds && add_seeds(rn, err) < 0))
			goto fail;
	} else if (!o->bNoResume) {
		/* evaluations cut short when the session stopped run again */
		const struct state *st = &rn->ses->st;
		for (int i = 0; i < st->nCand; i++)
			if (poison_pill(&st->aCand[i])) {
				if (abandon_poison_pill(rn, &st->aCand[i], err) < 0)
					goto fail;
			} else if (!status_finished(st->aCand[i].status)) {
				/* as it was asked for: an A/B again as that A/B, not a
				 * plain evaluation that the search would then time
				 * against the incumbent a second time */
				const struct cand *c = &st->aCand[i];
				if ((c->abWith ? runner_bench_ab(rn, c->id, c->abWith, err)
				               : runner_bench(rn, c->id, err)) < 0)
					goto fail;
			}
	}
	/* a journal that cannot be written at the start (a full disk): nothing
	 * is under way yet, so nothing is run unsaved */
	if (rn->ses->nLost) {
		kl_err(err, "%s", rn->ses->zLost);
		goto fail;
	}
	rn->ses->onLost = journal_lost;
	rn->ses->lostArg = rn;
	if (o->bTorchWarning)
		torch_warning(rn);
	return rn;
fail:
	session_close(old);
	runner_close(rn);
	return NULL;
}

/* ---- Nsight Compute in the background ---- */

struct profile_run {
	struct runner *rn;
	int cand;
	pid_t pid;
	int fd;
	strbuf out;
	char *zFile; /* the candidate's source, written for the profiler */
	struct profile_run *next;
};

static struct profile_run *profiles;

static int profiles_of(const struct runner *rn)
{
	int n = 0;
	for (struct profile_run *q = profiles; q; q = q->next)
		n += q->rn == rn;
	return n;
}

static void profile_end(struct profile_run *p, int bKill)
{
	struct profile_run **pp = &profiles;
	while (*pp && *pp != p)
		pp = &(*pp)->next;
	if (*pp)
		*pp = p->next;
	loop_del_fd(p->rn->l, p->fd);
	close(p->fd);
	if (bKill)
		proc_kill_group(p->pid);
	waitpid(p->pid, NULL, 0);
	unlink(p->zFile);
	char *dir = xstrdup(p->zFile);
	*strrchr(dir, '/') = 0;
	rmdir(dir);
	free(dir);
	free(p->zFile);
	sb_free(&p->out);
	free(p);
}

static void profile_read(struct loop *l, int fd, int events, void *arg)
{
	struct profile_run *p = arg;
	(void)l, (void)events;
	char buf[8192];
	ssize_t n = read(fd, buf, sizeof buf);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n > 0) {
		sb_add(&p->out, buf, (size_t)n);
		return;
	}
	struct runner *rn = p->rn;
	const char *z = p->out.buf ? p->out.buf : "";
	const char *js = z[0] == '{' ? z : strstr(z, "\n{");
	cJSON *prof = js ? cJSON_Parse(js + (js[0] == '\n')) : NULL;
	char err[KL_ERRLEN];
	const char *sum = prof ? cJSON_GetStringValue(cJSON_GetObjectItem(prof, "summary")) : NULL;
	if (sum) {
		char *line = xasprintf("candidate %d: ncu %s", p->cand, sum);
		cJSON_DeleteItemFromObject(prof, "summary");
		if (ev_profile(rn->ses, p->cand, prof, err) < 0)
			note_simple(rn, RUNNER_MESSAGE, p->cand, err);
		else
			note_simple(rn, RUNNER_MESSAGE, p->cand, line);
		free(line);
	} else {
		/* its last line says why */
		size_t len = strlen(z);
		while (len && z[len - 1] == '\n')
			len--;
		size_t s = len;
		while (s && z[s - 1] != '\n')
			s--;
		char *m = xasprintf("profile of candidate %d failed: %.*s", p->cand, (int)(len - s),
		                    z + s);
		note_simple(rn, RUNNER_MESSAGE, p->cand, m);
		free(m);
	}
	cJSON_Delete(prof);
	profile_end(p, 0);
	note_simple(rn, RUNNER_CHANGED, 0, NULL);
}

int runner_profile(struct runner *rn, int id, char *err)
{
	const struct cand *c = state_cand(&rn->ses->st, id);
	if (!c)
		return kl_err(err, "no candidate %d", id);
	for (struct profile_run *q = profiles; q; q = q->next)
		if (q->rn == rn && q->cand == id)
			return kl_err(err, "candidate %d is being profiled already", id);
	char tmpl[] = "/tmp/kloop-profile-XXXXXX";
	if (!mkdtemp(tmpl))
		return kl_err(err, "cannot make a temporary directory: %s", strerror(errno));
	struct profile_run *p = xcalloc(1, sizeof *p);
	p->rn = rn;
	p->cand = id;
	p->zFile = path_join(tmpl, c->zName && *c->zName ? c->zName : "candidate.cu");
	if (write_file_atomic(p->zFile, c->zSource, strlen(c->zSource), err) < 0) {
		rmdir(tmpl);
		free(p->zFile);
		free(p);
		return -1;
	}
	char *kl = path_join(exe_dir(), "kloop");
	const char *argv[16] = {kl,       "profile",   rn->zTaskDir, p->zFile,
	                        "--json", "--backend", rn->zBackend};
	int n = 7;
	if (rn->cfg->zPython) {
		argv[n++] = "--python";
		argv[n++] = rn->cfg->zPython;
	}
	if (rn->cfg->zLibs) {
		argv[n++] = "--libs";
		argv[n++] = rn->cfg->zLibs;
	}
	argv[n] = NULL;
	struct proc_spec ps = {
	    .argv = (char *const *)argv, .stdinFd = -1, .stdoutFd = -1, .stderrFd = -1};
	p->pid = proc_spawn(&ps, &p->fd, NULL, err);
	free(kl);
	if (p->pid < 0) {
		unlink(p->zFile);
		rmdir(tmpl);
		free(p->zFile);
		free(p);
		return -1;
	}
	p->next = profiles;
	profiles = p;
	loop_add_fd(rn->l, p->fd, LOOP_READ, profile_read, p);
	return 0;
}

void runner_close(struct runner *rn)
{
	if (!rn)
		return;
	for (struct profile_run *q = profiles, *nx; q; q = nx) {
		nx = q->next;
		if (q->rn == rn)
			profile_end(q, 1);
	}
	pipeline_free(rn->p);
	llm_free(rn->llm);
	pool_free(rn->pool);
	session_close(rn->ses);
	task_free(rn->task);
	free(rn->aStream);
	config_argv_free(rn->argvLaunch);
	free(rn->zTaskDir);
	free(rn->zTaskName);
	free(rn->zBackend);
	free(rn->zShapes);
	free(rn->zReference);
	free(rn->aJob);
	cJSON_Delete(rn->evalOpts);
	free(rn);
}

/* ---- for the search (sessions/search.h) ---- */

double runner_bandwidth_gbs(const struct runner *rn)
{
	return pool_bandwidth_gbs(rn->pool);
}

const struct task *runner_task(const struct runner *rn)
{
	return rn->task;
}

struct loop *runner_loop(const struct runner *rn)
{
	return rn->l;
}

struct session *runner_session(struct runner *rn)
{
	return rn->ses;
}

int runner_saved(const struct runner *rn)
{
	return rn ? session_saved(rn->ses, NULL) : 0;
}

void runner_changed(struct runner *rn)
{
	note_simple(rn, RUNNER_CHANGED, 0, NULL);
}

int runner_translate(struct runner *rn, int n, char *err)
{
	return runner_llm(rn, err) < 0 ? -1 : pipeline_translate(rn->p, n, err);
}

int runner_no_repeats(struct runner *rn, char *err)
{
	if (runner_llm(rn, err) < 0)
		return -1;
	pipeline_no_repeats(rn->p, 1);
	return 0;
}

void runner_round(struct runner *rn, int round)
{
	rn->round = round > 0 ? round : 0;
	if (rn->p)
		pipeline_round(rn->p, rn->round);
}

void runner_limit(struct runner *rn, pipeline_limit_fn fn, void *arg)
{
	rn->limit = fn;
	rn->limitArg = arg;
	if (rn->p)
		pipeline_limit(rn->p, fn, arg);
}

int runner_round_busy(const struct runner *rn, int round, int *pUnsent)
{
	if (pUnsent)
		*pUnsent = 0;
	return rn->p ? pipeline_round_busy(rn->p, round, pUnsent) : 0;
}

void runner_usd(const struct runner *rn, double *pHeld, double *pNext)
{
	*pHeld = *pNext = 0;
	if (rn->p)
		pipeline_usd(rn->p, pHeld, pNext);
}

int runner_llm_room(const struct runner *rn)
{
	return !rn->llm || llm_pending(rn->llm) < llm_max_in_flight(rn->llm);
}

int runner_idea_reject_why(struct runner *rn, int id, const char *zReason, char *err)
{
	return runner_llm(rn, err) < 0 ? -1 : pipeline_idea_reject(rn->p, id, zReason, err);
}

/* ---- cancelling (issue 12: an evaluation or an LLM request stops) ---- */

int runner_cancel_eval(struct runner *rn, int id, char *err)
{
	const struct runner_job *j = runner_job_of(rn, id);
	if (!j)
		return kl_err(err, "candidate %d is not being evaluated", id);
	/* the pool restarts the worker running it (its other jobs go back on
	 * the queue) and answers "cancelled" through on_done, which journals
	 * the eval_finished and lets a branch waiting for it end */
	if (pool_cancel(rn->pool, j->job) < 0)
		return kl_err(err, "candidate %d's evaluation is no longer in the pool", id);
	return 0;
}

int runner_cancel_request(struct runner *rn, int request, char *err)
{
	if (!rn->p)
		return kl_err(err, "LLM request %d is not running", request);
	return pipeline_cancel(rn->p, request, err);
}

int runner_requests(const struct runner *rn, struct pipeline_request *a, int max)
{
	return rn->p ? pipeline_requests(rn->p, a, max) : 0;
}
