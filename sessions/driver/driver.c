/*
 * driver.c - a session that runs: the journal, the task's seeds, the
 * evaluations submitted to the worker pool whose results come back through
 * the caller's loop as eval_finished events, and the LLM pipeline
 * evaluating through that same pool.
 */
#include "driver.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "archive.h"
#include "backend.h"
#include "emit.h"
#include "llm_config.h"
#include "mps.h"
#include "pipeline.h"
#include "pool.h"
#include "proc.h"
#include "result.h"
#include "driver_priv.h"
#include "status.h"
#include "torchref.h"
#include "util.h"

#define SOURCE_MAX (8u << 20)

char *driver_state_dir(void)
{
	const char *x = getenv("XDG_STATE_HOME");
	if (x && *x)
		return xasprintf("%s/kloop", x);
	const char *h = getenv("HOME");
	return xasprintf("%s/.local/state/kloop", h && *h ? h : ".");
}

char *driver_default_path(const char *zTask)
{
	char *dir = driver_state_dir();
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

void driver_verdict(const struct cand *c, char *buf, size_t n)
{
	/* the spread next to the time: half the p10-p90 range, relative */
	char sp[32] = "";
	const struct verdict *v = &c->v;
	if (c->timeMs > 0 && !isnan(v->timing.p10Ms) && !isnan(v->timing.p90Ms))
		snprintf(sp, sizeof sp, " ±%.0f%%",
		         (v->timing.p90Ms - v->timing.p10Ms) / 2 / c->timeMs * 100);
	const char *zStatus = c->status == STATUS_COMPILE_ERROR ? "compile error" : c->zStatus;
	/* where the cascade stopped, when the reason does not say */
	const char *zStage = v->zStage;
	char at[48] = "";
	if (zStage && c->status != STATUS_CORRECT && strcmp(zStage, "compile") &&
	    strcmp(zStage, "small shapes"))
		snprintf(at, sizeof at, " at %s", zStage);
	/* a quick timing only, and the A/B */
	char more[160] = "";
	const struct verdict_ab *ab = &v->ab;
	if (v->timing.stopped)
		snprintf(more, sizeof more, " (stopped after the quick timing)");
	else if (ab->pairs >= 0)
		snprintf(more, sizeof more, "; A/B vs #%d: faster in %d of %d pairs, %.3gx, %s",
		         ab->incumbent, ab->wins, ab->pairs, ab->ratio,
		         ab->unverified ? "unverified (kloop's clock could not bound its times)"
		         : ab->won      ? "won"
		                        : "not beyond the noise");
	else if (ab->present)
		snprintf(more, sizeof more, "; no A/B vs #%d", ab->incumbent);
	if (c->status == STATUS_CORRECT && c->timeMs >= 0 && c->speedup >= 0)
		snprintf(buf, n, "correct, %.4g ms%s, %.3gx%s", c->timeMs, sp, c->speedup, more);
	else if (c->status == STATUS_CORRECT && c->timeMs >= 0)
		snprintf(buf, n, "correct, %.4g ms%s%s", c->timeMs, sp, more);
	else if (c->zReason && *c->zReason)
		snprintf(buf, n, "%s%s: %s", zStatus, at, c->zReason);
	else
		snprintf(buf, n, "%s%s", zStatus, at);
	/* the same machine code as a candidate timed before: its timing */
	const char *nt = v->zNotTimed;
	size_t len = strlen(buf);
	if (c->status == STATUS_CORRECT && nt && len + 4 < n)
		snprintf(buf + len, n - len, " (%s)", nt);
	/* one line: the reason may hold a compiler's newlines */
	for (char *p = buf; *p; p++)
		if (*p == '\n' || *p == '\r' || *p == '\t')
			*p = ' ';
}

void driver_describe(const struct driver *drv, const struct driver_note *n, strbuf *sb)
{
	const struct state *st = &drv->ses->st;
	const struct cand *c = state_cand(st, n->cand);
	char v[600];
	const char *gate;
	int nNew;
	switch (n->kind) {
	case DRIVER_CHANGED:
		break;
	case DRIVER_FINISHED:
		if (c) {
			driver_verdict(c, v, sizeof v);
			sb_addf(sb, "candidate %d (%s): %s", c->id, c->zName, v);
		}
		break;
	case DRIVER_IDEAS:
		/* under the auto gate a person has nothing to decide */
		gate = st->search.set.gate;
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
	case DRIVER_CANDIDATE:
		sb_addf(sb, "candidate %d (%s) from the LLM: idea %d, branch %d%s", n->cand,
		        c ? c->zName : "?", n->idea, n->branch, n->attempt ? ", a fix" : "");
		break;
	case DRIVER_BRANCH:
		sb_addf(sb, "idea %d, branch %d: %s%s", n->idea, n->branch, n->zText,
		        n->cand ? "" : " (no candidate)");
		break;
	case DRIVER_MESSAGE:
	case DRIVER_LOG:
		sb_addf(sb, "%s", n->zText ? n->zText : "");
		break;
	}
}

/* an event the journal refused, where no caller can take the error */
static void journal_failed(struct driver *drv, int cand, const char *zErr)
{
	char msg[KL_ERRLEN + 64];
	snprintf(msg, sizeof msg, "journal: %s", zErr);
	note_simple(drv, DRIVER_MESSAGE, cand, msg);
}

/* ---- the evaluations: the pool's jobs ---- */

static struct driver_job *job_by_id(struct driver *drv, int job)
{
	for (int i = 0; i < drv->nJob; i++)
		if (drv->aJob[i].job == job)
			return &drv->aJob[i];
	return NULL;
}

/* ---- the same machine code is not timed again ---- */

/* v's code hash, when v has one and a device */
static const char *code_of(const struct verdict *v)
{
	return v->zCodeHash && v->zDevice ? v->zCodeHash : NULL;
}

/* the first candidate other than id timed with code zCode on zDevice */
static const struct cand *timed_with(const struct state *st, int id, const char *zCode,
                                     const char *zDevice)
{
	for (int i = 0; i < st->nCand; i++) {
		const struct cand *c = &st->aCand[i];
		const char *code = code_of(&c->v);
		if (c->id != id && code && !strcmp(code, zCode) && !strcmp(c->v.zDevice, zDevice) &&
		    c->status == STATUS_CORRECT && c->v.timing.present && !c->v.zNotTimed)
			return c;
	}
	return NULL;
}

/* a result the worker did not time (the same machine code as one timed in
 * this session on this device model): whose timing it carries, by id */
static void same_code_as(struct driver *drv, int id, cJSON *r, const char *zDevice)
{
	struct verdict v;
	verdict_decode(r, &v);
	const struct cand *e = v.zCodeHash && zDevice && v.zNotTimed
	                           ? timed_with(&drv->ses->st, id, v.zCodeHash, zDevice)
	                           : NULL;
	if (!e)
		return; /* the worker's own words name what it timed */
	char *z = xasprintf("same machine code as #%d, not timed again", e->id);
	v.zNotTimed = z;
	v.sameCodeAs = e->id;
	v.timingJson = e->v.timingJson;
	v.timing = e->v.timing;
	verdict_encode(r, &v, 0);
	free(z);
}

/* the workers learn that cand c's code was timed (a result just in, or one
 * of a session resumed), so that they do not time it again */
static void tell_timed(struct driver *drv, const struct cand *c)
{
	const char *code = code_of(&c->v);
	if (!code || c->status != STATUS_CORRECT || !c->v.timing.present || c->v.zNotTimed)
		return;
	pool_code_measured(drv->pool, c->v.zDevice, code, c->zName, c->v.timingJson);
}

static void on_done(int job, cJSON *result, void *arg)
{
	struct driver *drv = arg;
	struct driver_job *j = job_by_id(drv, job);
	if (!j)
		return;
	int id = j->cand;
	struct cand *c = state_cand(&drv->ses->st, id);
	cJSON *r = cJSON_Duplicate(result, 1);
	/* the baseline measured on the GPU model the result came from */
	struct verdict v;
	verdict_decode(r, &v);
	char *d = v.zWorkerDevice && *v.zWorkerDevice ? xstrdup(v.zWorkerDevice) : NULL;
	same_code_as(drv, id, r, d);
	driver_result_complete(drv, c, r, d);
	int k = (int)(j - drv->aJob);
	memmove(&drv->aJob[k], &drv->aJob[k + 1], (size_t)(drv->nJob - k - 1) * sizeof *drv->aJob);
	drv->nJob--;
	char err[KL_ERRLEN];
	if (!drv->bSandboxWarned && pool_sandbox_warning(drv->pool)) {
		drv->bSandboxWarned = 1; /* once per driver: bubblewrap cannot run */
		note_simple(drv, DRIVER_MESSAGE, 0, pool_sandbox_warning(drv->pool));
	}
	if (ev_eval_finished(drv->ses, id, r, err) < 0)
		journal_failed(drv, id, err);
	/* an A/B in the result is an event of its own (the search reads it) */
	verdict_decode(r, &v);
	if (v.ab.incumbent >= 0 && state_cand(&drv->ses->st, id) &&
	    ev_ab_compared(drv->ses, id, v.ab.incumbent, v.abJson, err) < 0)
		journal_failed(drv, id, err);
	cJSON_Delete(r);
	free(d);
	drv->nFinished++;
	if (state_cand(&drv->ses->st, id))
		tell_timed(drv, state_cand(&drv->ses->st, id));
	/* a new win or dead end goes into the innovation archive now (issue 15):
	 * one short transaction, never fatal */
	char aerr[KL_ERRLEN] = "";
	if (archive_note_session(&drv->ses->st, drv->ses->zPath, aerr) < 0 && *aerr)
		note_simple(drv, DRIVER_LOG, id, aerr);
	if (state_cand(&drv->ses->st, id))
		note_simple(drv, DRIVER_FINISHED, id, NULL);
	if (drv->p)
		pipeline_update(drv->p); /* a branch may wait for this verdict */
	note_simple(drv, DRIVER_CHANGED, id, NULL);
}

/* torch.compile's baseline, compiled in the background, is in: the results
 * before it get it (journaled), the archive too, and a line says so */
static void on_baselines(const char *zDevice, const cJSON *baselines, void *arg)
{
	struct driver *drv = arg;
	char err[KL_ERRLEN];
	const cJSON *cm = cJSON_GetObjectItem(baselines, "compile");
	if (ev_compile_baseline(drv->ses, zDevice, cm, err) < 0)
		journal_failed(drv, 0, err);
	char aerr[KL_ERRLEN] = "";
	if (archive_note_session(&drv->ses->st, drv->ses->zPath, aerr) < 0 && *aerr)
		note_simple(drv, DRIVER_LOG, 0, aerr);
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
	note_simple(drv, DRIVER_LOG, 0, sb.buf);
	sb_free(&sb);
	note_simple(drv, DRIVER_CHANGED, 0, NULL);
}

static void on_progress(int job, const char *zStage, int k, void *arg)
{
	struct driver *drv = arg;
	struct driver_job *j = job_by_id(drv, job);
	if (!j)
		return;
	if (!strcmp(zStage, "running") && !j->bRunning) {
		/* its code is about to run: from here a session cut short may be
		 * the candidate's doing (abandon_poison_pill) */
		char err[KL_ERRLEN];
		j->bRunning = 1;
		if (ev_eval_running(drv->ses, j->cand, err) < 0)
			journal_failed(drv, j->cand, err);
	}
	snprintf(j->zStage, sizeof j->zStage, "%s",
	         !strcmp(zStage, "running") ? "loading" : zStage);
	j->k = k;
	note_simple(drv, DRIVER_CHANGED, j->cand, NULL);
}

/*
 * The eval request of candidate c: what the driver was told every request
 * carries (driver_set_eval_request()), the baseline for the quick
 * timing's stop (the incumbent's time, else the reference's), and the
 * incumbent to time against in an A/B (abWith, forced, else the driver's
 * incumbent when it is correct and timed; never the candidate itself).
 * Its strings point into the state.
 */
static struct eval_request eval_request_for(struct driver *drv, const struct cand *c, int abWith)
{
	const struct state *st = &drv->ses->st;
	struct eval_request rq = {
	    .zName = c->zName,
	    .zSource = c->zSource,
	    .nSource = strlen(c->zSource),
	    .quickRuns = drv->evalReq.quickRuns,
	    .quickStopX = drv->evalReq.quickStopX,
	    .abPairs = drv->evalReq.abPairs,
	    .abForce = abWith != 0,
	};
	int incId = abWith ? abWith : drv->evalReq.inc.id;
	const struct cand *inc = incId && incId != c->id ? state_cand(st, incId) : NULL;
	if (inc && (rq.abForce || (inc->status == STATUS_CORRECT && inc->timeMs > 0)))
		rq.inc = (struct eval_incumbent){
		    .id = inc->id,
		    .zName = inc->zName,
		    .zSource = inc->zSource,
		    .medianMs = inc->timeMs > 0 ? inc->timeMs : 0,
		    .zMethod = inc->v.timing.zMethod,
		};
	double base = inc && inc->timeMs > 0 ? inc->timeMs : st->baselineMs;
	rq.baselineMs = base > 0 ? base : 0;
	return rq;
}

void driver_set_eval_request(struct driver *drv, const struct eval_request *rq)
{
	drv->evalReq = (struct eval_request){
	    .quickRuns = rq->quickRuns,
	    .quickStopX = rq->quickStopX,
	    .abPairs = rq->abPairs,
	    .inc.id = rq->inc.id,
	};
}

/* evaluate candidate id on worker w, or on any when w < 0 (an A/B against
 * abWith when not 0, forced) */
static int bench_at(struct driver *drv, int id, int w, int abWith, char *err)
{
	if (!state_cand(&drv->ses->st, id))
		return kl_err(err, "there is no candidate %d", id);
	if (driver_job_of(drv, id))
		return kl_err(err, "candidate %d is being evaluated already", id);
	int nW = pool_size(drv->pool);
	if (w >= nW)
		return kl_err(err, "there is no worker %d (the pool has %d: 0 to %d)", w, nW,
		              nW - 1);
	if (ev_eval_started(drv->ses, id, drv->zBackend, abWith, err) < 0)
		return -1;
	const struct cand *c = state_cand(&drv->ses->st, id);
	xgrow((void **)&drv->aJob, &drv->nJobAlloc, (size_t)drv->nJob + 1, sizeof *drv->aJob);
	struct driver_job *j = &drv->aJob[drv->nJob++];
	*j = (struct driver_job){.cand = id, .k = -1, .tStart = now_s()};
	snprintf(j->zStage, sizeof j->zStage, "queued");
	struct eval_request rq = eval_request_for(drv, c, abWith);
	j->job = pool_submit_req(drv->pool, w, &rq, err);
	note_simple(drv, DRIVER_CHANGED, id, NULL);
	return 0;
}

int driver_bench(struct driver *drv, int id, char *err)
{
	return bench_at(drv, id, -1, 0, err);
}

int driver_bench_ab(struct driver *drv, int id, int other, char *err)
{
	if (!state_cand(&drv->ses->st, other))
		return kl_err(err, "there is no candidate %d to time against", other);
	if (other == id)
		return kl_err(err, "an A/B needs two candidates (%d twice)", id);
	return bench_at(drv, id, -1, other, err);
}

int driver_bench_on(struct driver *drv, int id, int w, char *err)
{
	if (w < 0)
		return kl_err(err, "worker %d: a worker is numbered from 0", w);
	return bench_at(drv, id, w, 0, err);
}

/* a re-measure of the session's baseline: an evaluation on workers that
 * time the reference afresh, whose result journals the new baseline
 * (driver_result_complete(), driver_baseline.c) */
int driver_remeasure(struct driver *drv, char *err)
{
	const struct state *st = &drv->ses->st;
	if (drv->nJob)
		return kl_err(
		    err,
		    "%d evaluation%s queued or running: re-measure the baseline when they "
		    "end",
		    drv->nJob, drv->nJob == 1 ? " is" : "s are");
	if (!(state_baseline(st, NULL) > 0))
		return kl_err(err,
		              "the session has no baseline yet: its first evaluation times it");
	/* evaluated with it: the best (its machine code was timed: not timed
	 * again), else the first correct candidate */
	const struct cand *c = state_best(st, NULL, NULL);
	for (int i = 0; !c && i < st->nCand; i++)
		if (st->aCand[i].status == STATUS_CORRECT)
			c = &st->aCand[i];
	if (!c)
		return kl_err(err, "no correct candidate to evaluate with the reference");
	int id = c->id;
	if (pool_retime(drv->pool) < 0)
		return kl_err(err, "the workers have work: re-measure the baseline when it ends");
	cJSON_Delete(drv->remeasure);
	drv->remeasure = cJSON_CreateArray();
	if (driver_bench(drv, id, err) < 0)
		return -1;
	return id;
}

static const char *ext_of(const char *zName)
{
	return zName ? strrchr(zName, '.') : NULL;
}

int driver_add_cand(struct driver *drv, const struct ev_candidate *cand, char *err)
{
	const struct state *st = &drv->ses->st;
	struct ev_candidate c = *cand;
	for (int i = 0; i < c.nParent; i++)
		if (!state_cand(st, c.aParent[i]))
			return kl_err(err, "parent %d is not a candidate", c.aParent[i]);
	if (!c.zSource || !*c.zSource)
		return kl_err(err, "the source is empty");
	if (looks_binary(c.zSource, strlen(c.zSource)))
		return kl_err(err, "the source looks binary, not C, C++ or CUDA text");
	char *name;
	if (c.zName)
		name = xstrdup(c.zName);
	else {
		const char *ext = c.nParent ? ext_of(state_cand(st, c.aParent[0])->zName) : NULL;
		if (!ext)
			ext = !strcmp(drv->zBackend, "cuda") ? ".cu" : ".c";
		name = xasprintf("cand%d%s", state_next_id(st), ext);
	}
	c.zName = name;
	int id = ev_candidate_added(drv->ses, &c, err);
	free(name);
	if (id > 0)
		note_simple(drv, DRIVER_CHANGED, id, NULL);
	return id;
}

int driver_add(struct driver *drv, const char *zOrigin, const int *aParent, int nParent,
               const char *zName, const char *zSource, const char *zIdea, char *err)
{
	struct ev_candidate c = {
	    .zName = zName,
	    .zOrigin = zOrigin,
	    .aParent = aParent,
	    .nParent = nParent,
	    .zSource = zSource,
	    .zIdea = zIdea,
	};
	return driver_add_cand(drv, &c, err);
}

int driver_add_source(struct driver *drv, const char *zOrigin, const char *zName,
                      const char *zSource, char *err)
{
	const struct cand *same = state_cand_by_source(&drv->ses->st, zSource);
	if (same)
		return same->id;
	return driver_add(drv, zOrigin, NULL, 0, zName, zSource, NULL, err);
}

/* ---- opening ---- */

static int add_seeds(struct driver *drv, char *err)
{
	char *const *az;
	int nz = driver_seeds(drv, &az), rc = 0;
	for (int i = 0; i < nz && rc == 0; i++) {
		char why[KL_ERRLEN + 128];
		if (!driver_seed_usable(drv, i, why, sizeof why)) {
			note_simple(drv, DRIVER_MESSAGE, 0, why);
			continue;
		}
		strbuf sb = STRBUF_INIT;
		const char *b = strrchr(az[i], '/');
		rc = read_file(az[i], &sb, SOURCE_MAX, err);
		int id = rc < 0 ? -1
		                : driver_add(drv, "seed", NULL, 0, b ? b + 1 : az[i],
		                             sb.buf ? sb.buf : "", NULL, err);
		sb_free(&sb);
		rc = id < 0 ? -1 : driver_bench(drv, id, err);
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
static int abandon_poison_pill(struct driver *drv, const struct cand *c, char *err)
{
	int id = c->id;
	/* copied: the eval_finished below replaces c->result */
	char prev[32] = "";
	const char *z = c->result ? c->v.zStatus : NULL;
	snprintf(prev, sizeof prev, "%s", z ? z : "");
	int kept = z && status_finished(status_from_name(prev));
	cJSON *r;
	if (kept) {
		r = cJSON_Duplicate(c->result, 1);
		struct verdict v;
		verdict_decode(r, &v);
		v.zRerunAbandoned = "the session ended twice while evaluating it again: not run "
		                    "again; its earlier verdict stands";
		verdict_encode(r, &v, 0);
	} else {
		r = verdict_new(STATUS_CRASHED,
		                "the session ended twice while this candidate was running: "
		                "not run again (it may kill whatever evaluates it)");
		cJSON_AddBoolToObject(r, "abandoned", 1);
	}
	int rc = ev_eval_finished(drv->ses, id, r, err);
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
	note_simple(drv, DRIVER_MESSAGE, id, msg);
	return 0;
}

/* the session's journal refused an event (a full disk): the work under way
 * goes on in memory, the search stops, nothing more is saved */
static void journal_lost(void *arg, const char *zErr)
{
	struct driver *drv = arg;
	char msg[KL_ERRLEN + 200];
	snprintf(msg, sizeof msg,
	         "journal: %s: nothing more of this session is saved (the journal holds it up to "
	         "here: resume from it once there is room); a search stops",
	         zErr);
	note_simple(drv, DRIVER_MESSAGE, 0, msg);
}

/* the session: the journal zSession (made with its directory), or memory */
static struct session *open_session(struct driver *drv, const struct driver_opts *o, char *err)
{
	if (!o->zSession && o->bMemory)
		return session_memory();
	char *path = o->zSession ? xstrdup(o->zSession) : driver_default_path(drv->zTaskName);
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
static void torch_warning(struct driver *drv)
{
	size_t n = strlen(drv->zTaskDir);
	int py = n > 3 && !strcmp(drv->zTaskDir + n - 3, ".py");
	if (!py && !(drv->zReference && !strcmp(drv->zReference, "torch")))
		return;
	const char *python = drv->cfg->zPython ? drv->cfg->zPython : "python3";
	int has = torchref_has_torch(python);
	if (has == 1)
		return;
	const char *other = torchref_python_with_torch(python);
	char *z = has == 0 && other
	              ? xasprintf("PyTorch is not installed for %s, %s has it: start kloop with "
	                          "--python %s (or set python = %s in the config); until then %s's "
	                          "PyTorch reference cannot run and no candidate can be checked",
	                          python, other, other, other, drv->zTaskName)
	          : has == 0
	              ? xasprintf("PyTorch is not installed for %s: start kloop with --python PATH "
	                          "(a Python with torch) or install it there; until then %s's "
	                          "PyTorch reference cannot run and no candidate can be checked",
	                          python, drv->zTaskName)
	              : xasprintf("the Python interpreter '%s' cannot be run: start kloop with "
	                          "--python PATH (a Python with torch); until then %s's PyTorch "
	                          "reference cannot run",
	                          python, drv->zTaskName);
	note_simple(drv, DRIVER_MESSAGE, 0, z);
	free(z);
}

struct driver *driver_open(struct loop *l, const struct config *cfg, const struct driver_opts *o,
                           driver_notify_fn notify, void *arg, char *err)
{
	struct driver *drv = xcalloc(1, sizeof *drv);
	drv->l = l;
	drv->cfg = cfg;
	drv->notify = notify;
	drv->arg = arg;
	drv->bNoEvalParents = o->bNoEvalParents;
	drv->zShapes = o->zShapes ? xstrdup(o->zShapes) : NULL;
	drv->zReference = o->zReference ? xstrdup(o->zReference) : NULL;
	drv->argvLaunch = config_worker_argv(cfg);
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
	drv->zBackend = xstrdup(be ? be : backend_cuda_available() ? "cuda" : "host");
	if (!drv->zShapes && old && old->st.zShapes)
		drv->zShapes = xstrdup(old->st.zShapes);
	if (cfg->zBackend && old && old->st.zBackend && strcmp(cfg->zBackend, old->st.zBackend)) {
		kl_err(err, "%s: the session ran on the %s backend, not %s", o->zSession,
		       old->st.zBackend, cfg->zBackend);
		goto fail;
	}
	struct task_ref tr;
	if (task_open(zTask, drv->zBackend, drv->zShapes, &tr, err) < 0)
		goto fail;
	drv->zTaskDir = tr.zDir;
	drv->zTaskName = tr.zName;
	drv->task = tr.task;
	if (old && old->st.zTask && strcmp(old->st.zTask, drv->zTaskName)) {
		kl_err(err, "%s: the session is for task '%s', not '%s'", o->zSession,
		       old->st.zTask, drv->zTaskName);
		goto fail;
	}
	session_close(old);
	old = NULL;
	worker_config_from(&drv->wc, cfg);
	drv->wc.argvLaunch = drv->argvLaunch;
	drv->wc.zBackend = drv->zBackend;
	drv->wc.zTaskDir = drv->zTaskDir;
	drv->wc.zShapes = drv->zShapes;
	drv->wc.zReference = drv->zReference;
	drv->wc.deferCompile = o->bDeferCompile;
	drv->wc.warmS = o->warmS;
	drv->wc.onBaselines = on_baselines;
	drv->wc.baselinesArg = drv;
	/* MPS for the local GPUs (mps.h), named to the workers before they start */
	if (mps_begin(cfg->mps, drv->zBackend, cfg->zWorkers, pool_local_gpus(), NULL, err) < 0)
		goto fail;
	/* the workers (none starts before the first evaluation) */
	if (!(drv->pool = pool_new(l, &drv->wc, cfg->zWorkers, on_done, on_progress, drv, err)))
		goto fail;
	if (!(drv->ses = open_session(drv, o, err)))
		goto fail;
	if (drv->ses->warnings.len)
		note_simple(drv, DRIVER_MESSAGE, 0, drv->ses->warnings.buf);
	for (int i = 0; i < drv->ses->st.nCand; i++)
		tell_timed(drv, &drv->ses->st.aCand[i]);
	if (!drv->ses->st.zTask) {
		if (session_begin(drv->ses, drv->zTaskName, drv->zTaskDir, drv->zBackend,
		                  drv->zShapes, err) < 0 ||
		    (!o->bNoSeeds && add_seeds(drv, err) < 0))
			goto fail;
	} else if (!o->bNoResume) {
		/* evaluations cut short when the session stopped run again */
		const struct state *st = &drv->ses->st;
		for (int i = 0; i < st->nCand; i++)
			if (poison_pill(&st->aCand[i])) {
				if (abandon_poison_pill(drv, &st->aCand[i], err) < 0)
					goto fail;
			} else if (!status_finished(st->aCand[i].status)) {
				/* as it was asked for: an A/B again as that A/B, not a
				 * plain evaluation that the search would then time
				 * against the incumbent a second time */
				const struct cand *c = &st->aCand[i];
				if ((c->abWith ? driver_bench_ab(drv, c->id, c->abWith, err)
				               : driver_bench(drv, c->id, err)) < 0)
					goto fail;
			}
	}
	/* a journal that cannot be written at the start (a full disk): nothing
	 * is under way yet, so nothing is run unsaved */
	if (drv->ses->nLost) {
		kl_err(err, "%s", drv->ses->zLost);
		goto fail;
	}
	drv->ses->onLost = journal_lost;
	drv->ses->lostArg = drv;
	if (o->bTorchWarning)
		torch_warning(drv);
	return drv;
fail:
	session_close(old);
	driver_close(drv);
	return NULL;
}

void driver_close(struct driver *drv)
{
	if (!drv)
		return;
	driver_profiles_end(drv);
	pipeline_free(drv->p);
	llm_free(drv->llm);
	pool_free(drv->pool);
	session_close(drv->ses);
	task_free(drv->task);
	free(drv->aStream);
	config_argv_free(drv->argvLaunch);
	free(drv->zTaskDir);
	free(drv->zTaskName);
	free(drv->zBackend);
	free(drv->zShapes);
	free(drv->zReference);
	free(drv->aJob);
	cJSON_Delete(drv->remeasure);
	free(drv);
}

void driver_changed(struct driver *drv)
{
	note_simple(drv, DRIVER_CHANGED, 0, NULL);
}

/* ---- cancelling (issue 12: an evaluation or an LLM request stops) ---- */

int driver_cancel_eval(struct driver *drv, int id, char *err)
{
	const struct driver_job *j = driver_job_of(drv, id);
	if (!j)
		return kl_err(err, "candidate %d is not being evaluated", id);
	/* the pool restarts the worker running it (its other jobs go back on
	 * the queue) and answers "cancelled" through on_done, which journals
	 * the eval_finished and lets a branch waiting for it end */
	if (pool_cancel(drv->pool, j->job) < 0)
		return kl_err(err, "candidate %d's evaluation is no longer in the pool", id);
	return 0;
}
