/*
 * worker/main.c - kloop-worker: one process per device.  It speaks
 * newline-delimited JSON on the stdin/stdout it was started with, moved to
 * private descriptors so that a candidate's own output (sent to stderr)
 * cannot corrupt the protocol; it compiles candidates (in parallel, cached),
 * checks and times them, and streams progress and results.  It never loads
 * candidate code: each candidate (and the reference) runs in a sandboxed
 * runner process (cand.h: `kloop-worker --runner`) on shared buffers, and
 * this process compares and bounds the times.
 */
#include <cJSON.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "backend.h"
#include "cand.h"
#include "compile.h"
#include "harness.h"
#include "json.h"
#include "loop.h"
#include "proc.h"
#include "resources.h"
#include "precision.h"
#include "roofline.h"
#include "task.h"
#include "taskopen.h"
#include "torchref.h"
#include "util.h"
#include "version.h"
#include "worker.h"

struct job {
	int id;            /* the engine's job id */
	char *zName;       /* file name for diagnostics */
	int ok;            /* compiled */
	char *zSo;         /* shared object */
	cJSON *compile;    /* the compile report */
	double tCompile;   /* seconds */
	int compiled;      /* its compile has finished (ok or not) */
	struct job *next;  /* run queue link, in submission order */
	int isReference;   /* the task's reference */
	cJSON *req;        /* the eval request's options (quick_runs, quick_stop_x,
	                      baseline_ms, incumbent, ab_pairs, ab_force), or NULL */
	struct job *inc;   /* the incumbent to time against (A/B), compiled beside it */
	struct job *owner; /* for an incumbent: the job it belongs to */
	int cancelled;     /* the engine no longer wants it: dropped unrun once compiled */
	char zCode[65];    /* the hash of its machine code (codehash.h), "" if none */
};

/* machine code timed on this worker's device in the session */
struct timed {
	char zCode[65]; /* its code hash */
	char *zLabel;   /* the name of the candidate timed ("cand3.c") */
	cJSON *timing;  /* its timing */
};

static struct {
	int in, out; /* protocol descriptors */
	struct loop *l;
	struct backend *b;
	struct compiler *comp;
	struct task *t;
	struct harness *h;
	struct harness_opts opts;
	struct task *tSmall;          /* the task at its small shapes (task_shrink), or NULL */
	struct harness *hSmall;       /* its harness, the reference's outputs in it */
	char zSmall[KL_ERRLEN + 256]; /* "rows=64 cols=512", or why there is no such stage */
	/* what the precision verdicts are measured against, or why none is */
	char zPrec[KL_ERRLEN + 256];
	struct roofline_dev roof; /* what the device does (hello): every result's roofline */
	double tolA, tolR;        /* --atol / --rtol (< 0: the task's) */
	double loadS;             /* seconds spent starting runners in the job that runs */
	double refTimeoutS;       /* a reference run's limit (the engine's run timeout) */
	int nRunners;             /* runners started for it */
	char zConfine[600];       /* how its last runner was confined (cand_describe) */
	int nAhead;               /* of them, spares started ahead (cand_spare_policy) */
	double endS;              /* seconds spent ending them */
	int ready;                /* task loaded and reference data in place */
	int timeReference;        /* time the reference when it is ready */
	double tTask;             /* when the task request came */
	struct job *runq;         /* candidates in submission order; the head runs once compiled */
	struct linebuf inbuf;     /* request lines from the engine */
	const char *zBackend;
	char *zPython; /* interpreter for torch references */
	char *zCacheDir;
	int dev;
	int sandbox;          /* candidates run inside bubblewrap */
	struct cand *refCand; /* the reference's runner, kept for the worker's life */
	struct cand *twin;    /* the clock's twin (cand_twin), started with the first runner */
	struct timed *aTimed; /* code timed on this device (dedupe below) */
	int nTimed;
	size_t nTimedAlloc;
	struct torchref *bg; /* the PyTorch helper compiling torch.compile's baseline in
	                        the background while candidates run (its output
	                        watched by the loop), or NULL */
} W;

/* ---- protocol out ---- */

static void send_json(cJSON *o)
{
	char *z = cJSON_PrintUnformatted(o);
	size_t n = strlen(z);
	z = xrealloc(z, n + 2);
	z[n] = '\n';
	if (write_all(W.out, z, n + 1) < 0)
		_exit(4); /* the engine is gone */
	free(z);
	cJSON_Delete(o);
}

static cJSON *ev(const char *zEv, int job)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "ev", zEv);
	if (job >= 0)
		cJSON_AddNumberToObject(o, "job", job);
	return o;
}

static void send_error(int job, const char *zMsg, int fatal)
{
	cJSON *o = ev("error", job);
	cJSON_AddStringToObject(o, "message", zMsg);
	cJSON_AddBoolToObject(o, "fatal", fatal);
	send_json(o);
}

static void send_progress(int job, const char *zStage, int k)
{
	cJSON *o = ev("progress", job);
	cJSON_AddStringToObject(o, "stage", zStage);
	if (k >= 0)
		cJSON_AddNumberToObject(o, "k", k);
	send_json(o);
}

/* ---- running ---- */

static void job_free(struct job *j)
{
	if (j->inc)
		job_free(j->inc);
	free(j->zName);
	free(j->zSo);
	cJSON_Delete(j->compile);
	cJSON_Delete(j->req);
	free(j);
}

static void pump(void);
static long long mem_limit_mb(void);

/* checking sets the PyTorch reference makes beside the trials (as memory
 * allows): each is seen once, by a checked timed run */
#define TORCH_POOL 4

/* a candidate's processes and threads at most (its cgroup's pids.max): four
 * a core, at least 256 (OpenMP starts one a core; the CUDA runtime two) */
static int max_tasks(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 64 ? (int)(4 * n) : 256;
}

/* the size of a runner's private /tmp in MiB: KLOOP_TMP_LIMIT_MB, or 512 */
static long long tmp_limit_mb(void)
{
	const char *env = getenv("KLOOP_TMP_LIMIT_MB");
	long long mb = env && *env ? atoll(env) : 0;
	return mb > 0 ? mb : 512;
}

static long long pumpTimer;

static void pump_later_fn(struct loop *l, long long id, void *arg)
{
	(void)l, (void)id, (void)arg;
	pumpTimer = 0;
	pump();
}

static void pump_later(void)
{
	if (!pumpTimer)
		pumpTimer = loop_add_timer(W.l, 0, pump_later_fn, NULL);
}

/* start a runner for j's shared object on the buffers of the nH harnesses
 * ah[] (cand_iface(c, k) runs it on ah[k]'s); NULL + err (*pLoadErr: the
 * object itself is at fault, a compile_error) */
static struct cand *load_on(struct job *j, struct harness *const *ah, int nH, int *pLoadErr,
                            char *err)
{
	*pLoadErr = 0;
	double t0 = now_s();
	int fd = compiler_open_so(W.comp, j->zSo, err);
	if (fd < 0)
		return NULL;
	/* the task's libraries, where the candidate's rpath finds them */
	char **libDirs = compiler_lib_dirs(W.comp, 0);
	struct cand_opts o = {.zBackend = W.zBackend,
	                      .dev = W.dev,
	                      .sandbox = W.sandbox,
	                      .pollFd = W.in,
	                      .azLibDirs = libDirs,
	                      .reference = j->isReference,
	                      .memBytes = (unsigned long long)mem_limit_mb() << 20,
	                      .maxTasks = max_tasks(),
	                      .tmpBytes = (unsigned long long)tmp_limit_mb() << 20};
	/* the clock's twin first: started once, again if it died */
	if (!cand_alive(W.twin)) {
		char terr[KL_ERRLEN];
		cand_free(W.twin);
		if (!(W.twin = cand_twin(&o, terr)))
			fprintf(stderr,
			        "kloop-worker: warning: no clock twin (%s): the clock's bound uses "
			        "the frames taken before each load\n",
			        terr);
	}
	o.twin = W.twin;
	struct cand *c = cand_start(&o, ah, nH, fd, pLoadErr, err);
	compiler_dirs_free(libDirs);
	close(fd);
	W.loadS += now_s() - t0;
	W.nRunners++;
	W.nAhead += c && cand_started_ahead(c);
	if (c)
		cand_describe(c, W.zConfine, sizeof W.zConfine);
	return c;
}

/* end a candidate's runner (the keeper kills it and everything it started,
 * and reaps them: on the GPU the device context goes with it) */
static void unload(struct cand *c)
{
	double t0 = now_s();
	cand_free(c);
	W.endS += now_s() - t0;
}

/* a runner for j's shared object on h's buffers alone */
static struct cand *load(struct job *j, struct harness *h, int *pLoadErr, char *err)
{
	return load_on(j, &h, 1, pLoadErr, err);
}

/*
 * The reference's outputs at the small shapes, in a runner of its own on
 * the small harness; where that fails, the cascade has no small-shapes
 * stage (W.zSmall says why).
 */
static void small_reference(struct job *j)
{
	char err[KL_ERRLEN];
	int loadErr;
	if (!W.hSmall)
		return;
	struct cand *c =
	    harness_generate_inputs(W.hSmall, err) < 0 ? NULL : load(j, W.hSmall, &loadErr, err);
	if (c)
		cand_set_timeout(c, W.refTimeoutS);
	if (!c || harness_run_reference(W.hSmall, cand_iface(c, 0), err) < 0) {
		char *why = xasprintf("no small-shapes stage: the reference failed on %s: %s",
		                      W.zSmall, err);
		snprintf(W.zSmall, sizeof W.zSmall, "%s", why);
		free(why);
		harness_free(W.hSmall);
		W.hSmall = NULL;
	}
	if (c)
		cand_free(c);
}

/*
 * The reference once more, with float64 outputs on the same trial inputs
 * (and on the first trial's rounded to 10 and 7 mantissa bits), for the
 * precision verdict (precision.h); where it cannot be had, every verdict
 * says why.  Returns what task_ready says of it (static or W.zPrec).
 */
static const char *float64_reference(struct job *j, struct torchref *tr)
{
	char err[KL_ERRLEN];
	int loadErr, ok = 0;
	const char *zName = tr ? "PyTorch's model" : j->zName;
	struct harness *h64 = precision_harness(W.h, err);
	if (h64 && tr) {
		ok = torchref_fill64(tr, h64, W.b, harness_options(W.h)->nTrials, err) == 0;
	} else if (h64) {
		struct cand *c = load(j, h64, &loadErr, err);
		if (c) {
			cand_set_timeout(c, W.refTimeoutS);
			ok = harness_run_reference(h64, cand_iface(c, 0), err) == 0;
			cand_free(c);
		}
	}
	if (ok)
		ok = precision_attach(W.h, h64, err) == 0; /* h64 is W.h's from now on */
	else
		precision_discard(h64);
	if (ok) {
		snprintf(W.zPrec, sizeof W.zPrec, "against %s in float64", zName);
		return W.zPrec;
	}
	snprintf(W.zPrec, sizeof W.zPrec, "no precision verdict: %s in float64: %s%s", zName, err,
	         tr ? ""
	            : " (a C or CUDA reference gives it by writing exact KL_F64 outputs when "
	              "given them: docs/TASKS.md, \"Precision\")");
	precision_note(W.h, W.zPrec);
	return W.zPrec;
}

static void finish_reference(struct job *j)
{
	char err[KL_ERRLEN];
	int loadErr;
	if (!j->ok) {
		char *z = xasprintf("the reference %s does not compile:\n%s", j->zName,
		                    cJSON_GetStringValue(cJSON_GetObjectItem(j->compile, "log")));
		send_error(-1, z, 1);
		free(z);
		exit(1);
	}
	small_reference(j);
	W.refCand = load(j, W.h, &loadErr, err);
	if (W.refCand)
		cand_set_timeout(W.refCand, W.refTimeoutS);
	if (!W.refCand || harness_run_reference(W.h, cand_iface(W.refCand, 0), err) < 0) {
		char *z = xasprintf("the reference %s failed: %s", j->zName, err);
		send_error(-1, z, 1);
		free(z);
		exit(1);
	}
	const char *zPrec = float64_reference(j, NULL);
	cJSON *o = ev("task_ready", -1);
	cJSON_AddStringToObject(o, "precision", zPrec);
	if (W.timeReference) {
		cJSON *tm = harness_time_only(W.h, cand_iface(W.refCand, 0), err);
		if (!tm) {
			char *z = xasprintf("timing the reference failed: %s", err);
			send_error(-1, z, 1);
			free(z);
			exit(1);
		}
		cJSON_AddItemToObject(o, "reference_timing", tm);
	}
	cJSON_AddStringToObject(o, "reference", j->zName);
	cJSON_AddStringToObject(o, "task", W.t->zName);
	cJSON_AddStringToObject(o, W.hSmall ? "small_shapes" : "small_shapes_note", W.zSmall);
	cJSON *su = cJSON_AddObjectToObject(o, "setup");
	cJSON_AddNumberToObject(su, "seconds", now_s() - W.tTask);
	W.ready = 1;
	send_json(o);
}

/* ---- the same machine code is not timed again ---- */

/* the entry for code zCode, if it was timed under another name than
 * zName (NULL: any): a candidate benched again is timed again */
static const struct timed *was_timed(const char *zCode, const char *zName)
{
	for (int i = 0; zCode[0] && i < W.nTimed; i++)
		if (!strcmp(W.aTimed[i].zCode, zCode))
			return zName && !strcmp(W.aTimed[i].zLabel, zName) ? NULL : &W.aTimed[i];
	return NULL;
}

static void add_timed(const char *zCode, const char *zLabel, const cJSON *timing)
{
	if (!zCode[0] || !cJSON_IsObject(timing) || was_timed(zCode, NULL))
		return;
	xgrow((void **)&W.aTimed, &W.nTimedAlloc, (size_t)W.nTimed + 1, sizeof *W.aTimed);
	struct timed *t = &W.aTimed[W.nTimed++];
	snprintf(t->zCode, sizeof t->zCode, "%s", zCode);
	t->zLabel = xstrdup(zLabel);
	t->timing = cJSON_Duplicate(timing, 1);
}

/*
 * The result's code hash, and its timing: a correct candidate whose code
 * this worker timed in the session (or the engine says was timed on a
 * device of this model: op measured) was checked but not timed (skip), and
 * gets that timing with "not_timed" saying whose it is.  The hash is the
 * worker's own, from the object it compiled and loaded.
 */
static void note_code(const struct job *j, const struct timed *skip, cJSON *o)
{
	if (!j->zCode[0])
		return;
	cJSON_AddStringToObject(o, "code_hash", j->zCode);
	const char *st = cJSON_GetStringValue(cJSON_GetObjectItem(o, "status"));
	if (!st || strcmp(st, "correct"))
		return;
	if (skip) {
		char *z = xasprintf("same machine code as %s, not timed again", skip->zLabel);
		cJSON_AddStringToObject(o, "not_timed", z);
		free(z);
		cJSON_DeleteItemFromObject(o, "timing");
		cJSON_AddItemToObject(o, "timing", cJSON_Duplicate(skip->timing, 1));
	} else {
		add_timed(j->zCode, j->zName, cJSON_GetObjectItem(o, "timing"));
	}
}

/* a cascade stage's progress: the harness's trial or run under the stage's name */
struct stage_ctx {
	int job;
	const char *zStage;
};

static void stage_progress(const char *zWhat, int k, void *arg)
{
	(void)zWhat;
	struct stage_ctx *sc = arg;
	send_progress(sc->job, sc->zStage, k);
}

static const char *status_of(const cJSON *res)
{
	const char *z = cJSON_GetStringValue(cJSON_GetObjectItem(res, "status"));
	return z ? z : "crashed";
}

/* the runner could not start: a compile_error when the object is at fault */
static cJSON *load_failed(int loadErr, const char *err)
{
	cJSON *res = cJSON_CreateObject();
	cJSON_AddStringToObject(res, "status", loadErr ? "compile_error" : "crashed");
	cJSON_AddStringToObject(res, "reason", err);
	return res;
}

static double opt_num(const struct job *j, const char *k, double dflt)
{
	return j->req ? json_num(j->req, k, dflt) : dflt;
}

static double timing_num(const cJSON *tm, const char *k)
{
	const cJSON *v = cJSON_GetObjectItem(tm, k);
	return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

/* one stage passed: its name and seconds in the result's "stages" */
static void stage_done(cJSON *stages, const char *zStage, double t0)
{
	cJSON *s = cJSON_CreateObject();
	cJSON_AddStringToObject(s, "stage", zStage);
	cJSON_AddNumberToObject(s, "seconds", now_s() - t0);
	cJSON_AddItemToArray(stages, s);
}

/*
 * The A/B stage: the incumbent in a runner of its own on the same buffers,
 * timed alternately with c.  Adds "ab" to res; a challenger that misbehaves
 * or crashes in it ends with that verdict instead (returned, res freed),
 * which keeps what the earlier stages found: "correctness", and the timing
 * as "earlier_timing" (not the candidate's time: its verdict is a failure).
 */
static cJSON *ab_stage(struct job *j, struct harness_cand *hc, cJSON *res)
{
	char err[KL_ERRLEN];
	int loadErr, who;
	const cJSON *inc = cJSON_GetObjectItem(j->req, "incumbent");
	const cJSON *tm = cJSON_GetObjectItem(res, "timing");
	cJSON *ab = NULL, *fail = NULL;
	struct cand *ci = j->inc->ok ? load(j->inc, W.h, &loadErr, err) : NULL;
	if (!j->inc->ok)
		snprintf(err, sizeof err, "the incumbent %s does not compile", j->inc->zName);
	if (ci) {
		struct stage_ctx sc = {j->id, "a/b"};
		const char *m = cJSON_GetStringValue(cJSON_GetObjectItem(tm, "method"));
		struct harness_ab_opts ao = {.nPairs =
		                                 (int)opt_num(j, "ab_pairs", HARNESS_AB_PAIRS),
		                             .budgetS = W.opts.budgetS,
		                             .strict = m && !strcmp(m, "device-wide")};
		const char *im = cJSON_GetStringValue(cJSON_GetObjectItem(inc, "method"));
		ao.strict |= im && !strcmp(im, "device-wide");
		if (ao.nPairs < HARNESS_AB_MIN_PAIRS)
			ao.nPairs = HARNESS_AB_MIN_PAIRS;
		ab = harness_ab(W.h, cand_iface(ci, 0), hc, &ao, stage_progress, &sc, &who, &fail);
		unload(ci);
		if (!ab && who == 1) {
			cJSON_AddItemToObject(fail, "correctness",
			                      cJSON_DetachItemFromObject(res, "correctness"));
			cJSON_AddItemToObject(fail, "earlier_timing",
			                      cJSON_DetachItemFromObject(res, "timing"));
			cJSON_Delete(res);
			return fail;
		}
		if (!ab)
			snprintf(err, sizeof err, "%s",
			         cJSON_GetStringValue(cJSON_GetObjectItem(fail, "reason")));
		cJSON_Delete(fail);
	}
	if (!ab) {
		ab = cJSON_CreateObject();
		cJSON_AddStringToObject(ab, "error", err);
	}
	const cJSON *id = cJSON_GetObjectItem(inc, "id");
	if (cJSON_IsNumber(id))
		cJSON_AddNumberToObject(ab, "incumbent_id", id->valuedouble);
	cJSON_AddStringToObject(ab, "incumbent_name", j->inc->zName);
	cJSON_AddItemToObject(res, "ab", ab);
	return res;
}

/*
 * The cascade: small shapes, full shapes, quick timing, full timing, and
 * the A/B against an incumbent when the request gave one; the first stage
 * that fails ends it.  The verdict with "stage" (where it stopped, or the
 * last stage run) and "stages" (those passed, with their seconds).
 *
 * One runner serves every stage: it maps the small and the full shapes'
 * buffers at its start (a process, a sandbox, a device context and a load
 * of the object per candidate, not per stage).  A candidate that fails at
 * the full shapes after passing the small ones in that process may have
 * kept something from them (a workspace sized by its first call): the full
 * shapes are checked again in a fresh runner, whose verdict stands, and a
 * pass there says so in "kept_state".
 */
static cJSON *cascade(struct job *j, const struct timed *skip, cJSON *stages, double *pCheck,
                      double *pTime)
{
	char err[KL_ERRLEN];
	int loadErr = 0, full = 0;
	const char *zStage = "small shapes";
	struct stage_ctx sc = {j->id, zStage};
	cJSON *res = NULL, *fail = NULL, *tm;
	struct cand *c;
	double t0 = now_s(), tc = t0;
	if (W.hSmall) {
		struct harness *both[] = {W.hSmall, W.h};
		send_progress(j->id, zStage, -1);
		if (!(c = load_on(j, both, 2, &loadErr, err)))
			return load_failed(loadErr, err);
		full = 1;
		res = harness_eval(W.hSmall, cand_iface(c, 0), 0, stage_progress, &sc);
		if (W.b->fatal || strcmp(status_of(res), "correct")) {
			const char *r = cJSON_GetStringValue(cJSON_GetObjectItem(res, "reason"));
			char *z = xasprintf("at the small shapes (%s): %s", W.zSmall, r ? r : "");
			cJSON_ReplaceItemInObject(res, "reason", cJSON_CreateString(z));
			free(z);
			goto stop_c;
		}
		cJSON_Delete(res);
		stage_done(stages, zStage, t0);
	} else if (!(c = load(j, W.h, &loadErr, err))) {
		res = load_failed(loadErr, err);
		goto stop;
	}
	sc.zStage = zStage = "full shapes";
	t0 = now_s();
	send_progress(j->id, zStage, -1);
	res = harness_eval(W.h, cand_iface(c, full), 0, stage_progress, &sc);
	if (full && !W.b->fatal && strcmp(status_of(res), "correct")) {
		/* again in a process that has not run the small shapes */
		cJSON *shared = res;
		unload(c);
		if (!(c = load(j, W.h, &loadErr, err))) {
			cJSON_Delete(shared);
			res = load_failed(loadErr, err);
			goto stop;
		}
		full = 0;
		res = harness_eval(W.h, cand_iface(c, 0), 0, stage_progress, &sc);
		if (!strcmp(status_of(res), "correct")) {
			const char *r = cJSON_GetStringValue(cJSON_GetObjectItem(shared, "reason"));
			char *z = xasprintf(
			    "%s at the full shapes in the process that had run the small shapes "
			    "(%s), "
			    "correct in a fresh one: it keeps state from an earlier call (a buffer "
			    "sized by its first shapes?)",
			    status_of(shared), r ? r : "no reason");
			cJSON_AddStringToObject(res, "kept_state", z);
			free(z);
		}
		cJSON_Delete(shared);
	}
	if (W.b->fatal || strcmp(status_of(res), "correct"))
		goto stop_c;
	stage_done(stages, zStage, t0);
	*pCheck = now_s() - tc - W.loadS;
	cJSON_DeleteItemFromObject(res, "check_seconds");
	/* the same machine code was timed before: checked, not timed again
	 * (note_code gives it that timing) */
	if (skip) {
		unload(c);
		goto stop;
	}
	/* quick timing: a few runs, which may end it when the search asks; from
	 * here the background compile's helper is stopped (run_job lets it go) */
	torchref_hold(W.bg, 1);
	sc.zStage = zStage = "quick timing";
	t0 = tc = now_s();
	send_progress(j->id, zStage, 0);
	if (!(tm = harness_time(W.h, cand_iface(c, full), (int)opt_num(j, "quick_runs", 5),
	                        stage_progress, &sc, &fail)))
		goto failed;
	stage_done(stages, zStage, t0);
	double stopX = opt_num(j, "quick_stop_x", 0), base = opt_num(j, "baseline_ms", 0);
	double quickMs = timing_num(tm, "median_ms");
	if (stopX > 0 && base > 0 && quickMs > stopX * base &&
	    !cJSON_IsTrue(cJSON_GetObjectItem(j->req, "ab_force"))) {
		char why[200];
		snprintf(
		    why, sizeof why,
		    "stopped after the quick timing: %.4g ms is over %gx the baseline's %.4g ms",
		    quickMs, stopX, base);
		cJSON_AddStringToObject(tm, "stopped", why);
		cJSON_AddItemToObject(res, "timing", tm);
		goto stop_c;
	}
	cJSON_AddItemToObject(res, "quick_timing", tm);
	sc.zStage = zStage = "full timing";
	t0 = now_s();
	send_progress(j->id, zStage, 0);
	if (!(tm = harness_time(W.h, cand_iface(c, full), 0, stage_progress, &sc, &fail)))
		goto failed;
	cJSON_AddItemToObject(res, "timing", tm);
	stage_done(stages, zStage, t0);
	/* the precision again, with the run after timing's (precision.h) */
	cJSON *pr = cJSON_GetObjectItem(res, "precision") ? harness_precision(W.h) : NULL;
	if (pr)
		cJSON_ReplaceItemInObject(res, "precision", pr);
	/* the A/B: when it looks faster than the incumbent, or when asked */
	const cJSON *inc = j->req ? cJSON_GetObjectItem(j->req, "incumbent") : NULL;
	double incMs = inc ? json_num(inc, "median_ms", 0) : 0;
	if (j->inc && !W.b->fatal &&
	    (cJSON_IsTrue(cJSON_GetObjectItem(j->req, "ab_force")) ||
	     timing_num(tm, "median_ms") < incMs)) {
		zStage = "a/b";
		t0 = now_s();
		send_progress(j->id, zStage, 0);
		res = ab_stage(j, cand_iface(c, full), res);
		if (strcmp(status_of(res), "correct"))
			goto stop_c;
		stage_done(stages, zStage, t0);
	}
	*pTime = now_s() - tc;
	unload(c);
	cJSON_AddStringToObject(res, "stage", zStage);
	return res;
failed:
	/* a timing stage failed: its verdict, with the checks' correctness */
	cJSON_AddItemToObject(fail, "correctness", cJSON_DetachItemFromObject(res, "correctness"));
	cJSON_Delete(res);
	res = fail;
stop_c:
	*pTime = now_s() - tc;
	unload(c);
stop:
	cJSON_AddStringToObject(res, "stage", zStage);
	return res;
}

static void run_job(struct job *j)
{
	double t0 = now_s(), tCheck = 0, tTime = 0;
	cJSON *res, *stages = cJSON_CreateArray();
	const struct timed *skip = was_timed(j->zCode, j->zName);
	send_progress(j->id, "running", -1);
	W.loadS = 0;
	W.nRunners = 0;
	W.nAhead = 0;
	W.endS = 0;
	W.zConfine[0] = 0;
	if (!j->ok) {
		res = cJSON_CreateObject();
		cJSON_AddStringToObject(res, "status", "compile_error");
		cJSON_AddStringToObject(
		    res, "reason",
		    cJSON_GetStringValue(cJSON_GetObjectItem(j->compile, "summary")));
		cJSON_AddStringToObject(res, "stage", "compile");
	} else {
		stage_done(stages, "compile", t0 - j->tCompile);
		res = cascade(j, skip, stages, &tCheck, &tTime);
		torchref_hold(W.bg, 0);
		/* a load error is the object's: the compile stage's */
		if (!strcmp(status_of(res), "compile_error"))
			cJSON_ReplaceItemInObject(res, "stage", cJSON_CreateString("compile"));
	}
	double tRun = now_s() - t0;
	/* how far its time is from the device's limit; below it: a suspect */
	const cJSON *med = cJSON_GetObjectItem(cJSON_GetObjectItem(res, "timing"), "median_ms");
	cJSON *roof = !strcmp(status_of(res), "correct") && cJSON_IsNumber(med)
	                  ? roofline_json(W.t, &W.roof, med->valuedouble)
	                  : NULL;
	if (roof)
		cJSON_AddItemToObject(res, "roofline", roof);
	cJSON *o = ev("result", j->id);
	cJSON *e;
	cJSON_ArrayForEach(e, res) if (strcmp(e->string, "check_seconds"))
	    cJSON_AddItemReferenceToObject(o, e->string, e);
	cJSON_AddItemToObject(o, "stages", stages);
	cJSON_AddItemReferenceToObject(o, "compile", j->compile);
	note_code(j, skip, o);
	cJSON *sec = cJSON_AddObjectToObject(o, "seconds");
	cJSON_AddNumberToObject(sec, "compile", j->tCompile);
	cJSON_AddNumberToObject(sec, "load", W.loadS);
	cJSON_AddNumberToObject(sec, "end", W.endS);
	cJSON_AddNumberToObject(o, "runners", W.nRunners);
	cJSON_AddNumberToObject(o, "runners_ahead", W.nAhead);
	/* without a measured check, what is left of the run (never below 0: the
	 * load may have been counted for several runner starts) */
	double rest = tRun - tTime - W.loadS - W.endS;
	cJSON_AddNumberToObject(sec, "check", tCheck > 0 ? tCheck : rest > 0 ? rest : 0);
	cJSON_AddNumberToObject(sec, "time", tTime);
	cJSON_AddBoolToObject(o, "worker_exiting", W.b->fatal);
	cJSON_AddStringToObject(o, "sandbox", W.sandbox ? "bubblewrap" : "none");
	if (W.zConfine[0])
		cJSON_AddStringToObject(o, "confinement", W.zConfine);
	send_json(o);
	cJSON_Delete(res);
	if (W.b->fatal)
		exit(3);
}

static int compiles_done(const struct job *j)
{
	return j->compiled && (!j->inc || j->inc->compiled);
}

static void background_compile(void);

static void pump(void)
{
	for (;;) {
		/* between two candidates the GPU may be handed to the background
		 * compile of torch.compile's baseline (and its timing) */
		if (W.bg)
			background_compile();
		/* cancelled jobs go once the compiler is done with them */
		for (struct job **pp = &W.runq; *pp;) {
			struct job *c = *pp;
			if (c->cancelled && compiles_done(c)) {
				*pp = c->next;
				job_free(c);
			} else {
				pp = &c->next;
			}
		}
		struct job **pp = &W.runq;
		while (*pp && (*pp)->cancelled)
			pp = &(*pp)->next;
		struct job *j = *pp;
		if (!W.ready || !j || !compiles_done(j))
			return;
		*pp = j->next;
		run_job(j);
		job_free(j);
	}
}

/* the engine cancelled job id before it ran: it is dropped unrun (unknown:
 * it ran, or is running, and the engine drops its result) */
static void op_cancel(cJSON *req)
{
	int id = json_int(req, "job", -1);
	for (struct job *j = W.runq; j; j = j->next)
		if (j->id == id && !j->isReference)
			j->cancelled = 1;
	pump_later();
}

static void compiled(struct compile_result *r, void *arg)
{
	struct job *j = arg;
	if (r->stopped) /* this worker is being stopped with its compiler: no
	                   verdict, kloop runs the job elsewhere */
		proc_die_of(SIGTERM);
	j->ok = r->ok;
	j->tCompile = r->seconds;
	j->zSo = r->zSo ? xstrdup(r->zSo) : NULL;
	memcpy(j->zCode, r->zCodeHash, sizeof j->zCode);
	cJSON *c = cJSON_CreateObject();
	cJSON_AddBoolToObject(c, "ok", r->ok);
	cJSON_AddBoolToObject(c, "cached", r->cached);
	cJSON_AddNumberToObject(c, "seconds", r->seconds);
	cJSON_AddStringToObject(c, "command", r->zCommand);
	cJSON_AddStringToObject(c, "key", r->zKey);
	if (r->ok)
		cJSON_AddStringToObject(c, "code_hash", r->zCodeHash);
	/* the vectoriser's remarks (host compiles) go apart from the warnings */
	char *rest = NULL;
	cJSON *vec = resources_parse_vec(r->zLog, &rest);
	cJSON_AddStringToObject(c, "log", rest);
	free(rest);
	if (compile_lang_from_name(j->zName) != LANG_CUDA)
		cJSON_AddItemToObject(c, "vectorized", vec);
	else
		cJSON_Delete(vec);
	if (!r->ok) {
		/* the first diagnostic line, else the reason */
		char *summary = resources_first_error(r->zLog);
		if (!summary)
			summary = xasprintf("compile failed: %s", r->zWhy);
		cJSON_AddStringToObject(c, "summary", summary);
		free(summary);
	}
	cJSON *res = resources_parse_ptxas(r->zLog);
	if (res)
		cJSON_AddItemToObject(c, "resources", res);
	j->compile = c;
	if (j->owner) {
		j->compiled = 1; /* an incumbent: its job runs once both are compiled */
	} else if (j->isReference) {
		finish_reference(j);
		job_free(j);
	} else {
		if (j->cancelled) { /* dropped by pump(), no word of it */
			j->compiled = 1;
			pump_later();
			return;
		}
		cJSON *o = ev("progress", j->id);
		cJSON_AddStringToObject(o, "stage", "compiled");
		cJSON_AddBoolToObject(o, "ok", r->ok);
		cJSON_AddBoolToObject(o, "cached", r->cached);
		cJSON_AddNumberToObject(o, "seconds", r->seconds);
		send_json(o);
		j->compiled = 1;
	}
	pump_later();
}

static int submit_compile(struct job *j, const char *zSrc, size_t n, char *err)
{
	int lang = compile_lang_from_name(j->zName);
	if (lang < 0)
		return kl_err(err, "%s: unknown source language (expected .c, .cpp or .cu)",
		              j->zName);
	struct compile_req req = {zSrc, n, (enum compile_lang)lang, j->zName};
	return compiler_submit(W.comp, &req, compiled, j, err);
}

/* ---- requests ---- */

/* the PyTorch helper while the task loads: ended with what it started
 * before a task error is sent (so that nothing of it outlives the error
 * kloop prints), and when the worker ends first (a quit read meanwhile) */
static struct torchref *gHelper;
static pid_t gWorkerPid; /* a forked child's exit() leaves it alone */

static void kill_helper(void)
{
	if (getpid() == gWorkerPid)
		torchref_kill(gHelper);
}

static void fail_task(const char *zMsg)
{
	kill_helper();
	if (torchref_stopped()) /* stopped with its PyTorch helper: no verdict
	                           on the task, kloop runs it elsewhere */
		proc_die_of(SIGTERM);
	send_error(-1, zMsg, 1);
	exit(1);
}

static void handle_lines(void);

static void on_helper_fd(struct loop *l, int fd, int events, void *arg)
{
	(void)l, (void)fd, (void)events;
	*(int *)arg = 1;
}

/* while the PyTorch helper makes its data or times the baselines, the loop
 * goes on: requests are read and candidates compile (none runs before the
 * task is ready) */
static void wait_helper(void *arg, int fd, double maxS)
{
	(void)arg;
	int readable = 0;
	double end = now_s() + (maxS > 0 ? maxS : 3600);
	handle_lines();
	loop_add_fd(W.l, fd, LOOP_READ, on_helper_fd, &readable);
	while (!readable && now_s() < end)
		loop_once(W.l, end - now_s());
	loop_del_fd(W.l, fd);
}

static void on_bg_fd(struct loop *l, int fd, int events, void *arg)
{
	(void)l, (void)fd, (void)events, (void)arg;
	background_compile();
}

/*
 * torch.compile's baseline, compiled in the background (a search asked
 * "defer_compile"): what the helper said is read when no candidate runs;
 * once it has compiled, the compiled model is timed at once (the GPU is
 * its own meanwhile) and the engine hears {"ev": "baselines"} with the
 * whole baselines.  A failure of the helper is the baseline's, not the
 * task's: it says so in "compile".
 */
static void background_compile(void)
{
	char err[KL_ERRLEN];
	struct torchref *r = W.bg;
	int rc = torchref_service(r, err);
	if (rc == 0)
		return;
	double t0 = now_s();
	/* on a failure the baselines say why in "compile" */
	const cJSON *tm = rc > 0 ? torchref_time_compile(r, err) : torchref_timing(r, W.h, 0, err);
	if (rc > 0 && torchref_finish(r, err) < 0)
		torchref_kill(r);
	cJSON *o = ev("baselines", -1);
	cJSON_AddItemToObject(o, "baselines", cJSON_Duplicate(tm, 1));
	cJSON_AddNumberToObject(o, "seconds", now_s() - W.tTask);
	cJSON_AddNumberToObject(o, "timing_seconds", now_s() - t0);
	loop_del_fd(W.l, torchref_fd(r));
	W.bg = NULL;
	gHelper = NULL;
	torchref_free(r);
	send_json(o);
}

/* start the PyTorch helper on zProblem; zShapes and size scale a problem
 * file's constants (NULL, 0: as written) */
static struct torchref *start_torch(const char *zProblem, const char *zShapes, double size,
                                    char *err)
{
	struct torchref_opts to = {.zPython = W.zPython,
	                           .zCacheDir = W.zCacheDir,
	                           .zDevice = strcmp(W.zBackend, "cuda") ? "cpu" : "cuda",
	                           .cudaIndex = W.dev,
	                           .seed = W.opts.seed,
	                           .budgetS = W.opts.budgetS,
	                           .zShapes = zShapes,
	                           .size = size,
	                           .timeoutS = W.refTimeoutS,
	                           .wait = wait_helper};
	return gHelper = torchref_start(zProblem, &to, err);
}

/*
 * Keep the sets a PyTorch reference needs on the device within its free
 * memory: the sets (trials + the timing set), the candidate's own buffers and
 * the helper's one set at a time.  Fewer trials when they do not fit (said in
 * zNote), an error when not even one trial does.  0 or -1 + err.
 */
static int fit_sets(const char *zProblem, char *zNote, size_t nNote, char *err)
{
	size_t setB = task_set_bytes(W.t), fr = 0, tot = 0;
	zNote[0] = 0;
	if (!setB || !W.b->mem_info || W.b->mem_info(W.b, &fr, &tot) < 0)
		return 0;
	double avail = 0.9 * (double)fr, gb = 1e9;
	int fit = (int)(avail / (double)setB) - 2;
	if (fit < 2)
		return kl_err(
		    err,
		    "%s: one set of inputs and outputs takes %.2f GB; with %.2f GB free of "
		    "%.2f GB on this GPU, not even one trial and the timing set fit beside "
		    "the candidate's buffers: scale the problem with --size (e.g. --size "
		    "0.25) or --shapes NAME=VALUE",
		    zProblem, (double)setB / gb, (double)fr / gb, (double)tot / gb);
	/* the checking sets go first where memory is short */
	if (fit < W.opts.nTrials + 1 + W.opts.nPool)
		W.opts.nPool = fit - W.opts.nTrials - 1 > 0 ? fit - W.opts.nTrials - 1 : 0;
	if (fit < W.opts.nTrials + 1) {
		snprintf(zNote, nNote,
		         "%d trial%s instead of %d: one set takes %.2f GB and %.2f GB of the GPU's "
		         "memory are free",
		         fit - 1, fit == 2 ? "" : "s", W.opts.nTrials, (double)setB / gb,
		         (double)fr / gb);
		W.opts.nTrials = fit - 1;
	}
	return 0;
}

/*
 * Write a shipped task's files (name -> text; plain names, no directories)
 * into a fresh directory; returns the path to load (the directory, or the
 * .py problem file in it when zDir named one) or NULL + err.
 */
static char *unpack_task(cJSON *files, const char *zDir, char *err)
{
	char tmpl[] = "/tmp/kloop-task-XXXXXX";
	if (!mkdtemp(tmpl)) {
		kl_err(err, "cannot make a directory for the shipped task: %s", strerror(errno));
		return NULL;
	}
	cJSON *f;
	cJSON_ArrayForEach(f, files)
	{
		const char *n = f->string;
		if (!n || !*n || strchr(n, '/') || !strcmp(n, ".") || !strcmp(n, "..") ||
		    !cJSON_IsString(f)) {
			kl_err(err, "shipped task: '%s' is not a plain file name with text",
			       n ? n : "");
			return NULL;
		}
		char *path = path_join(tmpl, n);
		int rc = write_file_atomic(path, f->valuestring, strlen(f->valuestring), err);
		free(path);
		if (rc < 0)
			return NULL;
	}
	if (task_is_problem(zDir)) {
		const char *base = strrchr(zDir, '/');
		return path_join(tmpl, base ? base + 1 : zDir);
	}
	return xstrdup(tmpl);
}

/*
 * The cascade's small shapes: the task's dimensions shrunk (task_shrink), a
 * harness of a few trials on them; the reference fills it once it is
 * compiled (small_reference).  None when shrinking changes nothing.
 */
static void small_task(const char *zDir, const char *zShapes)
{
	char err[KL_ERRLEN];
	struct task *t = task_load(zDir, W.zBackend, zShapes, err);
	if (!t) {
		snprintf(W.zSmall, sizeof W.zSmall, "no small-shapes stage: %.*s", KL_ERRLEN, err);
		return;
	}
	task_override_tol(t, W.tolA, W.tolR, -1);
	if (!task_shrink(t, W.zSmall, sizeof W.zSmall)) {
		snprintf(W.zSmall, sizeof W.zSmall,
		         "no small-shapes stage: the task's shapes are small already");
		task_free(t);
		return;
	}
	struct harness_opts o = W.opts;
	o.nPool = 0; /* checked, never timed */
	if (!(W.hSmall = harness_new(t, W.b, &o, err))) {
		snprintf(W.zSmall, sizeof W.zSmall, "no small-shapes stage: %.*s", KL_ERRLEN, err);
		task_free(t);
		return;
	}
	W.tSmall = t;
}

static void op_task(cJSON *req)
{
	char err[KL_ERRLEN];
	const char *zDir = cJSON_GetStringValue(cJSON_GetObjectItem(req, "dir"));
	const char *zShapes = cJSON_GetStringValue(cJSON_GetObjectItem(req, "shapes"));
	const char *zRef = cJSON_GetStringValue(cJSON_GetObjectItem(req, "reference"));
	struct torchref *tr = NULL;
	static int loading; /* a task request read while one loads */
	if (W.t || loading) {
		send_error(-1, "a task is already loaded in this worker", 0);
		return;
	}
	loading = 1;
	if (!zDir) {
		send_error(-1, "task request without \"dir\"", 0);
		return;
	}
	/* a task shipped with the request (a worker on another host): its files
	 * are written to a directory of this worker's own */
	char *zShipped = NULL;
	cJSON *files = cJSON_GetObjectItem(req, "files");
	if (cJSON_IsObject(files)) {
		if (!(zShipped = unpack_task(files, zDir, err)))
			fail_task(err);
		zDir = zShipped;
	}
	W.tTask = now_s();
	harness_default_opts(&W.opts, W.zBackend);
	W.opts.nTrials = json_int(req, "trials", W.opts.nTrials);
	W.opts.seed = (uint64_t)json_num(req, "seed", (double)W.opts.seed);
	W.opts.budgetS = json_num(req, "budget_s", W.opts.budgetS);
	W.refTimeoutS = json_num(req, "run_timeout_s", 0);
	W.opts.rse = json_num(req, "rse", W.opts.rse);
	W.timeReference = cJSON_IsTrue(cJSON_GetObjectItem(req, "time_reference"));
	const char *zSrcPath = NULL;
	/* the libraries the task and --libs give candidates (and the reference),
	 * set before anything waits on the PyTorch helper: the candidates sent
	 * meanwhile compile then */
	const char *zFlagLibs = cJSON_GetStringValue(cJSON_GetObjectItem(req, "libs"));
	if (task_is_problem(zDir)) {
		/* a KernelBench problem file given directly */
		if (zFlagLibs && compiler_add_libs(W.comp, zFlagLibs, NULL, err) < 0)
			fail_task(err);
		if (!(tr = start_torch(zDir, zShapes, json_num(req, "size", 0), err)) ||
		    !(W.t = torchref_make_task(tr, zDir, err)))
			fail_task(err);
	} else {
		W.t = task_load(zDir, W.zBackend, zShapes, err);
		if (!W.t)
			fail_task(err);
		if ((W.t->zLibs && *W.t->zLibs &&
		     compiler_add_libs(W.comp, W.t->zLibs, W.t->zDir, err) < 0) ||
		    (zFlagLibs && compiler_add_libs(W.comp, zFlagLibs, NULL, err) < 0))
			fail_task(err);
		/* which reference: torch on the GPU where the task has one, else the backend's own
		 */
		int cuda = !strcmp(W.zBackend, "cuda");
		if (!zRef)
			zRef = cuda && W.t->ref.zTorch  ? "torch"
			       : cuda && W.t->ref.zCuda ? "cuda"
			                                : "host";
		if (!strcmp(zRef, "torch")) {
			if (!W.t->ref.zTorch)
				fail_task("the task has no torch reference (reference.torch in "
				          "task.json)");
			if (!(tr = start_torch(W.t->ref.zTorch, NULL, 0, err)) ||
			    torchref_check_task(tr, W.t, err) < 0)
				fail_task(err);
		} else {
			zSrcPath = !strcmp(zRef, "cuda")   ? W.t->ref.zCuda
			           : !strcmp(zRef, "host") ? W.t->ref.zHost
			                                   : NULL;
			if (!zSrcPath) {
				char *z = xasprintf(
				    "%s/task.json: reference.%s: the task has no such reference",
				    W.t->zDir, zRef);
				fail_task(z);
			}
			if (!strcmp(zRef, "cuda") && !cuda)
				fail_task(
				    "a cuda reference needs the cuda backend (--backend cuda)");
		}
	}
	/* given inputs: the reference makes a few checking sets too, so that a
	 * checked timed run is one the candidate has not seen */
	if (tr)
		W.opts.nPool = TORCH_POOL;
	/* --atol / --rtol override the float outputs' tolerances */
	W.tolA = json_num(req, "atol", -1);
	W.tolR = json_num(req, "rtol", -1);
	task_override_tol(W.t, W.tolA, W.tolR, -1);
	char note[256] = "";
	if (tr && fit_sets(zDir, note, sizeof note, err) < 0)
		fail_task(err);
	W.h = harness_new(W.t, W.b, &W.opts, err);
	if (!W.h)
		fail_task(err);
	if (tr) {
		/* PyTorch writes every set straight into the harness's buffers */
		double t0 = now_s(), tHelper = t0 - W.tTask;
		if (torchref_fill(tr, W.h, W.b, W.t, err) < 0)
			fail_task(err);
		const char *zPrec = float64_reference(NULL, tr);
		double tFill = now_s() - t0;
		cJSON *o = ev("task_ready", -1);
		cJSON_AddStringToObject(o, "precision", zPrec);
		/* where the setup's seconds went: the first candidate waits for it */
		cJSON *su = cJSON_CreateObject();
		const cJSON *hs = cJSON_GetObjectItem(torchref_manifest(tr), "seconds");
		cJSON_AddNumberToObject(su, "helper", tHelper);
		if (cJSON_IsNumber(cJSON_GetObjectItem(hs, "import_torch")))
			cJSON_AddNumberToObject(su, "import_torch",
			                        json_num(hs, "import_torch", 0));
		cJSON_AddNumberToObject(su, "reference_data", tFill);
		/* a search on the GPU: torch.compile compiles in the background */
		int defer = cJSON_IsTrue(cJSON_GetObjectItem(req, "defer_compile")) &&
		            !strcmp(W.zBackend, "cuda");
		if (W.timeReference) {
			t0 = now_s();
			const cJSON *tm = torchref_timing(tr, W.h, defer, err);
			const cJSON *eager = tm ? cJSON_GetObjectItem(tm, "eager") : NULL;
			if (!tm)
				fail_task(err);
			cJSON_AddNumberToObject(su, "baselines", now_s() - t0);
			cJSON_AddBoolToObject(su, "baselines_cached", torchref_timing_cached(tr));
			const cJSON *cs = cJSON_GetObjectItem(cJSON_GetObjectItem(tm, "compile"),
			                                      "compile_seconds");
			if (cJSON_IsNumber(cs) && !torchref_timing_cached(tr))
				cJSON_AddNumberToObject(su, "torch_compile", cs->valuedouble);
			if (eager && cJSON_GetObjectItem(eager, "median_ms"))
				cJSON_AddItemToObject(o, "reference_timing",
				                      cJSON_Duplicate(eager, 1));
			cJSON_AddItemToObject(o, "baselines", cJSON_Duplicate(tm, 1));
		}
		if (torchref_compile_pending(tr)) {
			/* the helper stays: background_compile() ends it */
			W.bg = tr;
			loop_add_fd(W.l, torchref_fd(tr), LOOP_READ, on_bg_fd, NULL);
			cJSON_AddBoolToObject(su, "torch_compile_background", 1);
		} else {
			t0 = now_s();
			if (torchref_finish(tr, err) < 0)
				fail_task(err);
			cJSON_AddNumberToObject(su, "helper_end", now_s() - t0);
		}
		cJSON_AddStringToObject(o, "reference", "PyTorch eager (reference.py)");
		cJSON_AddStringToObject(o, "task", W.t->zName);
		cJSON_AddNumberToObject(o, "trials", W.opts.nTrials);
		cJSON_AddNumberToObject(o, "reference_seconds", tFill);
		if (note[0])
			cJSON_AddStringToObject(o, "note", note);
		cJSON_AddStringToObject(o, "small_shapes_note",
		                        "no small-shapes stage: a PyTorch reference's data is "
		                        "made at the task's shapes only");
		const cJSON *sizes = cJSON_GetObjectItem(torchref_manifest(tr), "sizes");
		if (cJSON_IsObject(sizes) && sizes->child)
			cJSON_AddItemToObject(o, "sizes", cJSON_Duplicate(sizes, 1));
		cJSON_AddNumberToObject(su, "seconds", now_s() - W.tTask);
		cJSON_AddItemToObject(o, "setup", su);
		if (!W.bg) {
			gHelper = NULL;
			torchref_free(tr);
		}
		W.ready = 1;
		send_json(o);
		pump_later();
		return;
	}
	if (harness_generate_inputs(W.h, err) < 0)
		fail_task(err);
	small_task(zDir, zShapes);
	strbuf src = STRBUF_INIT;
	if (read_file(zSrcPath, &src, 64 << 20, err) < 0)
		fail_task(err);
	struct job *j = xcalloc(1, sizeof *j);
	j->id = -1;
	j->isReference = 1;
	const char *base = strrchr(zSrcPath, '/');
	j->zName = xstrdup(base ? base + 1 : zSrcPath);
	if (submit_compile(j, src.buf, src.len, err) < 0)
		fail_task(err);
	sb_free(&src);
}

static void op_eval(cJSON *req)
{
	char err[KL_ERRLEN];
	int id = json_int(req, "job", -1);
	const cJSON *src = cJSON_GetObjectItem(req, "source");
	const char *zName = cJSON_GetStringValue(cJSON_GetObjectItem(req, "name"));
	if (id < 0 || !cJSON_IsString(src) || !zName) {
		send_error(id, "eval request needs job, name and source", 0);
		return;
	}
	struct job *j = xcalloc(1, sizeof *j);
	j->id = id;
	j->zName = xstrdup(zName);
	j->req = cJSON_CreateObject();
	const char *keys[] = {"quick_runs", "quick_stop_x", "baseline_ms",
	                      "incumbent",  "ab_pairs",     "ab_force"};
	for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
		const cJSON *v = cJSON_GetObjectItem(req, keys[i]);
		if (v)
			cJSON_AddItemToObject(j->req, keys[i], cJSON_Duplicate(v, 1));
	}
	/* the incumbent of an A/B, compiled beside it (from the cache, mostly) */
	const cJSON *inc = cJSON_GetObjectItem(req, "incumbent");
	const char *zIncSrc = cJSON_GetStringValue(cJSON_GetObjectItem(inc, "source"));
	const char *zIncName = cJSON_GetStringValue(cJSON_GetObjectItem(inc, "name"));
	if (inc && (!zIncSrc || !zIncName)) {
		send_error(id, "eval request: incumbent needs name and source", 0);
		job_free(j);
		return;
	}
	send_progress(id, "compiling", -1);
	if (submit_compile(j, src->valuestring, strlen(src->valuestring), err) < 0) {
		send_error(id, err, 0);
		job_free(j);
		return;
	}
	if (zIncSrc) {
		struct job *i = xcalloc(1, sizeof *i);
		i->id = id;
		i->zName = xstrdup(zIncName);
		i->owner = j;
		j->inc = i;
		if (submit_compile(i, zIncSrc, strlen(zIncSrc), err) < 0) {
			i->compiled = 1; /* ok stays 0: the A/B says why */
			i->compile = cJSON_CreateObject();
		}
	}
	/* results come back in submission order; compiles run in parallel */
	struct job **pp = &W.runq;
	while (*pp)
		pp = &(*pp)->next;
	*pp = j;
}

/* the engine: code with this hash was timed (timing) as label on a device
 * named device in the session (by a worker before this one, or another of
 * the same model) */
static void op_measured(cJSON *req)
{
	const char *zDev = cJSON_GetStringValue(cJSON_GetObjectItem(req, "device"));
	const char *zCode = cJSON_GetStringValue(cJSON_GetObjectItem(req, "code_hash"));
	const char *zLabel = cJSON_GetStringValue(cJSON_GetObjectItem(req, "label"));
	const cJSON *tm = cJSON_GetObjectItem(req, "timing");
	if (!zDev || !zCode || strlen(zCode) != 64 || !zLabel || !cJSON_IsObject(tm)) {
		send_error(
		    -1, "measured request needs device, label, timing and a 64-digit code_hash", 0);
		return;
	}
	if (!strcmp(zDev, W.b->zDevice))
		add_timed(zCode, zLabel, tm);
}

static void handle_line(char *line)
{
	cJSON *req = cJSON_Parse(line);
	const char *op = req ? cJSON_GetStringValue(cJSON_GetObjectItem(req, "op")) : NULL;
	if (!op) {
		send_error(-1, "malformed request (expected a JSON object with \"op\")", 0);
	} else if (!strcmp(op, "task")) {
		op_task(req);
	} else if (!strcmp(op, "eval")) {
		op_eval(req);
	} else if (!strcmp(op, "measured")) {
		op_measured(req);
	} else if (!strcmp(op, "cancel")) {
		op_cancel(req);
	} else if (!strcmp(op, "quit")) {
		exit(0);
	} else {
		char *z = xasprintf("unknown op '%s'", op);
		send_error(-1, z, 0);
		free(z);
	}
	cJSON_Delete(req);
}

static void on_input(struct loop *l, int fd, int events, void *arg)
{
	(void)l, (void)events, (void)arg;
	char buf[65536];
	ssize_t r = read(fd, buf, sizeof buf);
	if (r < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (r <= 0)
		exit(0); /* the engine closed the channel */
	lb_add(&W.inbuf, buf, (size_t)r);
	handle_lines();
}

/* the request lines read so far; from the input's callback, and while a task
 * loads (the lines read with the task request come after it) */
static void handle_lines(void)
{
	char *z;
	size_t n;
	int got;
	while ((got = lb_next(&W.inbuf, &z, &n)) > 0) {
		char *line = xstrndup(z, n);
		handle_line(line);
		free(line);
	}
	if (got < 0) {
		char *m =
		    xasprintf("protocol error: a request line of more than %u bytes without a "
		              "newline",
		              (unsigned)WORKER_LINE_MAX);
		send_error(-1, m, 1);
		free(m);
		exit(2);
	}
}

/*
 * Limits a candidate runs under, so that exhausting them ends in a clear
 * crash of this worker rather than the machine's: on the host backend an
 * address space of KLOOP_MEM_LIMIT_MB (default: half the memory), here and
 * in the runners it starts.  The CUDA runtime reserves huge address ranges,
 * so the cuda backend has no address-space limit.  The file size limit is
 * the runner's alone (limit_files): the worker's own buffers are memfds,
 * whose size counts as a file's, and a task's tensors may be up to 16 GiB.
 */
/* built with AddressSanitizer (make asan): its shadow memory takes terabytes
 * of address space, so RLIMIT_AS cannot coexist with it */
#if defined(__SANITIZE_ADDRESS__)
#define KL_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KL_ASAN 1
#endif
#endif

/* the host backend's memory limit in MiB (0: none) */
static long long mem_limit_mb(void)
{
	const char *env = getenv("KLOOP_MEM_LIMIT_MB");
	long long mb = env && *env ? atoll(env) : 0;
	if (mb <= 0) {
		long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);
		mb = pages > 0 && size > 0 ? (long long)pages * size / 2 / (1 << 20) : 0;
	}
	return mb;
}

/* the runner: a file the candidate writes is at most 1 GiB (past it,
 * SIGXFSZ: a crash) */
static void limit_files(void)
{
	struct rlimit fs = {1ul << 30, 1ul << 30};
	setrlimit(RLIMIT_FSIZE, &fs);
}

static void limit_resources(void)
{
	/* the buffers are memfds, whose size counts as a file's: a file size
	 * limit kloop was started under (ulimit -f, its soft part) is lifted to
	 * the hard one here, and what still passes it is a write error, not a
	 * signal (the runners get the default back, and their own 1 GiB) */
	struct rlimit fs;
	if (getrlimit(RLIMIT_FSIZE, &fs) == 0 && fs.rlim_cur != fs.rlim_max) {
		fs.rlim_cur = fs.rlim_max;
		setrlimit(RLIMIT_FSIZE, &fs);
	}
	signal(SIGXFSZ, SIG_IGN);
	if (strcmp(W.zBackend, "host"))
		return;
	long long mb = mem_limit_mb();
#ifndef KL_ASAN
	/* the soft limit: a runner whose cgroup limits the candidate as a
	 * whole lifts it (runner_limits) */
	struct rlimit as;
	if (mb > 0 && getrlimit(RLIMIT_AS, &as) == 0) {
		as.rlim_cur = (rlim_t)mb << 20;
		if (as.rlim_max != RLIM_INFINITY && as.rlim_max < as.rlim_cur)
			as.rlim_cur = as.rlim_max;
		setrlimit(RLIMIT_AS, &as);
	}
#else
	(void)mb; /* ASan's own limit instead: asan_limit() */
#endif
}

/*
 * Under ASan the same limit is ASan's soft RSS limit (past it malloc returns
 * NULL, as under RLIMIT_AS), which can only be set when the process starts:
 * the worker runs itself again once with it in ASAN_OPTIONS.
 */
static void asan_limit(char **argv, const char *zBackend, int runner, long long runnerMb)
{
#ifdef KL_ASAN
	long long mb = runner ? runnerMb : mem_limit_mb();
	if (strcmp(zBackend, "host") || mb <= 0 || getenv("KLOOP_WORKER_ASAN_LIMIT"))
		return;
	const char *old = getenv("ASAN_OPTIONS");
	char *opts = xasprintf("%s%ssoft_rss_limit_mb=%lld:allocator_may_return_null=1",
	                       old ? old : "", old && *old ? ":" : "", mb);
	setenv("ASAN_OPTIONS", opts, 1);
	setenv("KLOOP_WORKER_ASAN_LIMIT", "1", 1);
	free(opts);
	execv("/proc/self/exe", argv);
#else
	(void)argv, (void)zBackend, (void)runner, (void)runnerMb;
#endif
}

/*
 * A runner's own limits: its files at most 1 GiB; its address space asMb
 * MiB where the worker gave it one (--as-limit-mb: no cgroup limits the
 * candidate as a whole, so this process, the only one it may have, is
 * limited), else lifted from the worker's (its cgroup's memory limit
 * holds, and says so when it is reached).
 */
static void runner_limits(long long asMb)
{
	limit_files();
	struct rlimit as;
	if (getrlimit(RLIMIT_AS, &as) < 0)
		return;
	if (asMb > 0)
		as.rlim_cur = as.rlim_max = (rlim_t)asMb << 20;
	else
		as.rlim_cur = as.rlim_max;
	setrlimit(RLIMIT_AS, &as);
}

static char *default_cache_dir(void)
{
	const char *x = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");
	if (x && *x)
		return xasprintf("%s/kloop", x);
	return xasprintf("%s/.cache/kloop", home && *home ? home : "/tmp");
}

static int usage(void)
{
	fprintf(stderr,
	        "usage: kloop-worker [--backend host|cuda] [--device N] [--jobs N] [--cache DIR] "
	        "[--python PATH] [--no-sandbox]\n(kloop starts workers itself; see kloop eval)\n");
	return 2;
}

int main(int argc, char **argv)
{
	W.zBackend = "host";
	int jobs = (int)sysconf(_SC_NPROCESSORS_ONLN);
	char *zCache = NULL;
	W.zPython = xstrdup("python3");
	lb_init(&W.inbuf, WORKER_LINE_MAX);
	W.sandbox = 1;
	int runner = 0;
	long long asMb = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--backend") && i + 1 < argc)
			W.zBackend = argv[++i];
		else if (!strcmp(argv[i], "--device") && i + 1 < argc)
			W.dev = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--jobs") && i + 1 < argc)
			jobs = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--cache") && i + 1 < argc)
			zCache = xstrdup(argv[++i]);
		else if (!strcmp(argv[i], "--python") && i + 1 < argc) {
			free(W.zPython);
			W.zPython = xstrdup(argv[++i]);
		} else if (!strcmp(argv[i], "--no-sandbox"))
			W.sandbox = 0;
		else if (!strcmp(argv[i], "--runner"))
			runner = 1;
		else if (!strcmp(argv[i], "--as-limit-mb") && i + 1 < argc)
			asMb = atoll(argv[++i]);
		else if (!strcmp(argv[i], "--twin") && runner)
			; /* the clock's twin: a runner that never loads anything */
		else
			return usage();
	}
	if (strcmp(W.zBackend, "host") && strcmp(W.zBackend, "cuda"))
		return usage();
	/* under ASan the host backend's memory limit is ASan's (the runner, where
	 * the candidate allocates, included) */
	asan_limit(argv, W.zBackend, runner, asMb);
	/* a runner: the candidate's side, on the socket it was given as fd 3 */
	if (runner) {
		runner_limits(asMb);
		return cand_serve(3, W.zBackend, W.dev);
	}
	/* the trusted side dies with kloop, and no other process of this user
	 * reads its memory, descriptors or environment through /proc */
	pid_t parent = getppid();
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		return 1;
	prctl(PR_SET_DUMPABLE, 0);
	/* the protocol moves to private descriptors; stdout joins stderr */
	W.in = fcntl(0, F_DUPFD_CLOEXEC, 100);
	W.out = fcntl(1, F_DUPFD_CLOEXEC, 100);
	if (W.in < 0 || W.out < 0) {
		fprintf(stderr, "kloop-worker: cannot set up the protocol channel: %s\n",
		        strerror(errno));
		return 1;
	}
	int devnull = open("/dev/null", O_RDONLY);
	dup2(devnull, 0);
	if (devnull > 0)
		close(devnull);
	dup2(2, 1);
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	struct rlimit rl = {0, 0};
	setrlimit(RLIMIT_CORE, &rl);
	limit_resources();

	char err[KL_ERRLEN];
	W.b = !strcmp(W.zBackend, "cuda") ? backend_cuda_new(W.dev, err) : backend_host_new(err);
	if (!W.b) {
		send_error(-1, err, 1);
		return 1;
	}
	W.zCacheDir = zCache ? zCache : default_cache_dir();
	char *soDir = path_join(W.zCacheDir, "so");
	W.l = loop_new();
	gWorkerPid = getpid();
	atexit(kill_helper);
	W.comp = compiler_new(W.l, soDir, jobs, W.b->zArch[0] ? W.b->zArch : NULL, err);
	free(soDir);
	if (!W.comp) {
		send_error(-1, err, 1);
		return 1;
	}
	cJSON *o = ev("hello", -1);
	cJSON_AddStringToObject(o, "backend", W.b->zName);
	cJSON_AddStringToObject(o, "device", W.b->zDevice);
	cJSON_AddStringToObject(o, "arch", W.b->zArch);
	cJSON_AddNumberToObject(o, "pid", getpid());
	cJSON_AddStringToObject(o, "version", KLOOP_VERSION);
	if (W.b->zUuid[0])
		cJSON_AddStringToObject(o, "uuid", W.b->zUuid);
	if (W.b->bandwidthGbs > 0)
		cJSON_AddNumberToObject(o, "bandwidth_gbs", W.b->bandwidthGbs);
	/* what the device does, for every result's roofline (roofline.h) */
	W.roof.bwGbs = W.b->bandwidthGbs;
	W.roof.tflops = W.b->tflops;
	char merr[KL_ERRLEN];
	if (W.b->measure &&
	    W.b->measure(W.b, &W.roof.bwMeasuredGbs, &W.roof.tflopsMeasured, merr) < 0)
		fprintf(stderr, "kloop-worker: warning: %s\n", merr);
	if (W.roof.bwMeasuredGbs > 0)
		cJSON_AddNumberToObject(o, "measured_bandwidth_gbs", W.roof.bwMeasuredGbs);
	if (W.roof.tflops > 0)
		cJSON_AddNumberToObject(o, "peak_tflops", W.roof.tflops);
	if (W.roof.tflopsMeasured > 0)
		cJSON_AddNumberToObject(o, "measured_peak_tflops", W.roof.tflopsMeasured);
	char zHost[256] = "";
	if (gethostname(zHost, sizeof zHost - 1) == 0)
		cJSON_AddStringToObject(o, "host", zHost);
	char serr[KL_ERRLEN];
	if (W.sandbox && cand_sandbox_probe(serr) < 0) {
		fprintf(stderr, "kloop-worker: warning: %s\n", serr);
		cJSON_AddStringToObject(o, "sandbox_warning", serr);
		W.sandbox = 0;
	}
	cJSON_AddStringToObject(o, "sandbox", W.sandbox ? "bubblewrap" : "none");
	compiler_set_sandbox(W.comp, W.sandbox);
	/* the spare runner: on the GPU the next candidate's runner makes its
	 * device context while this one is checked and timed; on the CPU a
	 * runner starts in milliseconds, and one started ahead would only take
	 * a core from the candidate being timed */
	const char *zSpare = getenv("KLOOP_SPARE_RUNNER");
	static const char *const spares[] = {
	    [CAND_SPARE_OFF] = "off", [CAND_SPARE_AFTER] = "after", [CAND_SPARE_READY] = "ready"};
	int nSpares = (int)(sizeof spares / sizeof *spares);
	int spare = strcmp(W.zBackend, "cuda") ? CAND_SPARE_OFF : CAND_SPARE_READY;
	if (zSpare && *zSpare) {
		for (spare = nSpares - 1; spare >= 0 && strcmp(zSpare, spares[spare]); spare--)
			;
		if (spare < 0) {
			send_error(-1,
			           "KLOOP_SPARE_RUNNER must be off, after or ready (when a runner "
			           "for the next candidate is started ahead)",
			           1);
			cJSON_Delete(o);
			return 2;
		}
	}
	cand_spare_policy(spare);
	cJSON_AddStringToObject(o, "spare_runner", spares[spare]);
	send_json(o);
	fd_nonblock(W.in);
	loop_add_fd(W.l, W.in, LOOP_READ, on_input, NULL);
	loop_run(W.l);
	return 0;
}
