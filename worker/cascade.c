/*
 * cascade.c - kloop-worker's candidates: their compiles, the reference's
 * run, the cascade of checks and timings (small shapes, full shapes, quick
 * and full timing, the A/B against an incumbent), and their results in
 * submission order (kworker.h).
 */
#include "kworker.h"

#include <stdarg.h>

/* ---- running ---- */

void kworker_job_free(struct job *j)
{
	if (j->inc)
		kworker_job_free(j->inc);
	free(j->zName);
	free(j->zSo);
	free(j->zDeferred);
	free(j->zExtSrc);
	free(j->zExtName);
	compile_result_free(j->pTorchWait);
	cJSON_Delete(j->compile);
	eval_request_free(&j->rq);
	free(j);
}

static void pump(void);

static long long pumpTimer;

static void pump_later_fn(struct loop *l, long long id, void *arg)
{
	(void)l, (void)id, (void)arg;
	pumpTimer = 0;
	pump();
}

void kworker_pump_later(void)
{
	if (!pumpTimer)
		pumpTimer = loop_add_timer(W.l, 0, pump_later_fn, NULL);
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

void kworker_add_timed(const char *zCode, const char *zLabel, const cJSON *timing)
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
	struct verdict v;
	verdict_decode(o, &v);
	v.zCodeHash = j->zCode;
	if (v.status == STATUS_CORRECT && !skip)
		kworker_add_timed(j->zCode, j->zName, v.timingJson);
	char *z = NULL;
	if (v.status == STATUS_CORRECT && skip) {
		v.zNotTimed = z =
		    xasprintf("same machine code as %s, not timed again", skip->zLabel);
		v.timingJson = skip->timing;
		verdict_timing_decode(skip->timing, &v.timing);
	}
	verdict_encode(o, &v, 0);
	free(z);
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
	kworker_send_progress(sc->job, sc->zStage, k);
}

/* res decoded (verdict.h): what the cascade reads of the verdict it makes */
static struct verdict decoded(const cJSON *res)
{
	struct verdict v;
	verdict_decode(res, &v);
	return v;
}

/* res's stage: where the cascade stopped */
static void set_stage(cJSON *res, const char *zStage)
{
	struct verdict v = decoded(res);
	v.zStage = zStage;
	verdict_encode(res, &v, 0);
}

/* res's reason, formatted */
static void set_reason(cJSON *res, const char *zFmt, ...) __attribute__((format(printf, 2, 3)));
static void set_reason(cJSON *res, const char *zFmt, ...)
{
	va_list ap;
	char *z = NULL;
	va_start(ap, zFmt);
	int n = vasprintf(&z, zFmt, ap);
	va_end(ap);
	struct verdict v = decoded(res);
	v.zReason = n < 0 ? "out of memory" : z;
	verdict_encode(res, &v, 0);
	free(z);
}

/* res is correct so far */
static int is_correct(const cJSON *res)
{
	return decoded(res).status == STATUS_CORRECT;
}

/* res's status as written; a result without one is a crash */
static const char *status_of(const cJSON *res)
{
	const char *z = decoded(res).zStatus;
	return *z ? z : "crashed";
}

/* the runner could not start: a compile_error when the object is at fault */
static cJSON *load_failed(int loadErr, const char *err)
{
	return verdict_new(loadErr ? STATUS_COMPILE_ERROR : STATUS_CRASHED, err);
}

/* a stage's timing's median (0: none) */
static double median_of(const cJSON *tm)
{
	struct verdict_timing t;
	verdict_timing_decode(tm, &t);
	return isnan(t.medianMs) ? 0 : t.medianMs;
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
	const struct eval_incumbent *inc = &j->rq.inc;
	struct verdict v = decoded(res);
	cJSON *ab = NULL, *fail = NULL;
	struct cand_proc *ci = j->inc->ok ? kworker_load(j->inc, W.h, &loadErr, err) : NULL;
	if (!j->inc->ok)
		snprintf(err, sizeof err, "the incumbent %s does not compile", j->inc->zName);
	if (ci) {
		struct stage_ctx sc = {j->id, "a/b"};
		const char *m = v.timing.zMethod;
		struct harness_ab_opts ao = {.nPairs = j->rq.abPairs,
		                             .budgetS = W.opts.budgetS,
		                             .strict = m && !strcmp(m, "device-wide")};
		const char *im = inc->zMethod;
		ao.strict |= im && !strcmp(im, "device-wide");
		if (ao.nPairs < HARNESS_AB_MIN_PAIRS)
			ao.nPairs = HARNESS_AB_MIN_PAIRS;
		ab = harness_ab(W.h, cand_iface(ci, 0), hc, &ao, stage_progress, &sc, &who, &fail);
		kworker_unload(ci);
		if (!ab && who == 1) {
			cJSON_AddItemToObject(fail, "correctness",
			                      cJSON_DetachItemFromObject(res, "correctness"));
			cJSON_AddItemToObject(fail, "earlier_timing",
			                      cJSON_Duplicate(v.timingJson, 1));
			cJSON_Delete(res);
			return fail;
		}
		if (!ab)
			snprintf(err, sizeof err, "%s", decoded(fail).zReason);
		cJSON_Delete(fail);
	}
	/* why it was not run, and whom it was against */
	int ran = ab != NULL;
	if (!ab)
		ab = cJSON_CreateObject();
	struct verdict_ab a;
	verdict_ab_decode(ab, &a);
	if (!ran)
		a.zError = err;
	if (inc->id >= 0)
		a.incumbent = inc->id;
	verdict_ab_encode(ab, &a, 0);
	cJSON_AddStringToObject(ab, "incumbent_name", j->inc->zName);
	cJSON_AddItemToObject(res, "ab", ab);
	return res;
}

/* the precision verdict again, once timed: with the run after timing's and
 * the checked timed runs' (precision.h), the A/B's included */
static void precision_again(cJSON *res)
{
	cJSON *pr = decoded(res).precisionJson ? harness_precision(W.h) : NULL;
	if (pr)
		cJSON_ReplaceItemInObject(res, "precision", pr);
}

/* end the candidate's runner, keeping the outputs its calls copied (the
 * verdict says so: torchext.h); later: once its result is sent (its
 * device context's teardown, 60-100 ms on an H200, is nobody's wait) */
static void unload_cand(struct job *j, struct cand_proc *c, int later)
{
	for (int k = 0; k < CAND_MAX_HARNESSES; k++) {
		struct harness_cand *hc = cand_iface(c, k);
		if (hc)
			j->ext.copied |= hc->copied;
	}
	if (later && W.nEndLater < KWORKER_END_LATER)
		W.aEndLater[W.nEndLater++] = c;
	else
		kworker_unload(c);
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
	struct cand_proc *c;
	double t0 = now_s(), tc = t0;
	if (W.hSmall) {
		struct harness *both[] = {W.hSmall, W.h};
		kworker_send_progress(j->id, zStage, -1);
		if (!(c = kworker_load_on(j, both, 2, &loadErr, err)))
			return load_failed(loadErr, err);
		full = 1;
		res = harness_eval(W.hSmall, cand_iface(c, 0), 0, stage_progress, &sc);
		if (W.b->fatal || !is_correct(res)) {
			set_reason(res, "at the small shapes (%s): %s", W.zSmall,
			           decoded(res).zReason);
			goto stop_c;
		}
		cJSON_Delete(res);
		stage_done(stages, zStage, t0);
	} else if (!(c = kworker_load(j, W.h, &loadErr, err))) {
		res = load_failed(loadErr, err);
		goto stop;
	}
	sc.zStage = zStage = "full shapes";
	t0 = now_s();
	kworker_send_progress(j->id, zStage, -1);
	res = harness_eval(W.h, cand_iface(c, full), 0, stage_progress, &sc);
	if (full && !W.b->fatal && !is_correct(res)) {
		/* again in a process that has not run the small shapes */
		cJSON *shared = res;
		unload_cand(j, c, 0);
		if (!(c = kworker_load(j, W.h, &loadErr, err))) {
			cJSON_Delete(shared);
			res = load_failed(loadErr, err);
			goto stop;
		}
		full = 0;
		res = harness_eval(W.h, cand_iface(c, 0), 0, stage_progress, &sc);
		if (is_correct(res)) {
			const char *r = decoded(shared).zReason;
			struct verdict v = decoded(res);
			char *z = xasprintf(
			    "%s at the full shapes in the process that had run the small shapes "
			    "(%s), "
			    "correct in a fresh one: it keeps state from an earlier call (a buffer "
			    "sized by its first shapes?)",
			    status_of(shared), *r ? r : "no reason");
			v.zKeptState = z;
			verdict_encode(res, &v, 0);
			free(z);
		}
		cJSON_Delete(shared);
	}
	if (W.b->fatal || !is_correct(res))
		goto stop_c;
	stage_done(stages, zStage, t0);
	*pCheck = now_s() - tc - W.loadS;
	cJSON_DeleteItemFromObject(res, "check_seconds");
	/* the same machine code was timed before: checked, not timed again
	 * (note_code gives it that timing) */
	if (skip) {
		unload_cand(j, c, 1);
		goto stop;
	}
	/* quick timing: a few runs, which may end it when the search asks; from
	 * here the background compile's helper is stopped (run_job lets it go) */
	torchref_hold(W.bg, 1);
	sc.zStage = zStage = "quick timing";
	t0 = tc = now_s();
	kworker_send_progress(j->id, zStage, 0);
	if (!(tm = harness_time(W.h, cand_iface(c, full), j->rq.quickRuns, stage_progress, &sc,
	                        &fail)))
		goto failed;
	stage_done(stages, zStage, t0);
	double stopX = j->rq.quickStopX, base = j->rq.baselineMs;
	double quickMs = median_of(tm);
	if (stopX > 0 && base > 0 && quickMs > stopX * base && !j->rq.abForce) {
		char why[200];
		snprintf(
		    why, sizeof why,
		    "stopped after the quick timing: %.4g ms is over %gx the baseline's %.4g ms",
		    quickMs, stopX, base);
		struct verdict_timing t;
		verdict_timing_decode(tm, &t);
		t.stopped = 1;
		t.zStopped = why;
		verdict_timing_encode(tm, &t, 0);
		verdict_put_timing(res, tm);
		precision_again(res);
		goto stop_c;
	}
	cJSON_AddItemToObject(res, "quick_timing", tm);
	sc.zStage = zStage = "full timing";
	t0 = now_s();
	kworker_send_progress(j->id, zStage, 0);
	if (!(tm = harness_time(W.h, cand_iface(c, full), 0, stage_progress, &sc, &fail)))
		goto failed;
	verdict_put_timing(res, tm);
	stage_done(stages, zStage, t0);
	precision_again(res);
	/* the A/B: when it looks faster than the incumbent, or when asked */
	double incMs = j->rq.inc.zSource ? j->rq.inc.medianMs : 0;
	if (j->inc && !W.b->fatal && (j->rq.abForce || median_of(tm) < incMs)) {
		zStage = "a/b";
		t0 = now_s();
		kworker_send_progress(j->id, zStage, 0);
		res = ab_stage(j, cand_iface(c, full), res);
		if (!is_correct(res))
			goto stop_c;
		precision_again(res);
		stage_done(stages, zStage, t0);
	}
	*pTime = now_s() - tc;
	unload_cand(j, c, 1);
	set_stage(res, zStage);
	return res;
failed:
	/* a timing stage failed: its verdict, with the checks' correctness */
	cJSON_AddItemToObject(fail, "correctness", cJSON_DetachItemFromObject(res, "correctness"));
	cJSON_Delete(res);
	res = fail;
stop_c:
	*pTime = now_s() - tc;
	unload_cand(j, c, 1);
stop:
	set_stage(res, zStage);
	return res;
}

/* a run that failed for want of code this device runs (an object built
 * for another GPU, a CUTLASS kernel compiled out): its reason says so,
 * naming the target built and the device (cuda_target.h) */
static void note_target(cJSON *res)
{
	const struct cuda_target *tg = compiler_target(W.comp);
	struct verdict v = decoded(res);
	if (!tg || v.status == STATUS_CORRECT || v.status == STATUS_COMPILE_ERROR)
		return;
	const char *why = v.zReason;
	char hint[800];
	if (!cuda_target_diagnose_run(tg, why, hint, sizeof hint) &&
	    !cuda_target_diagnose_run(tg, v.zStderrTail ? v.zStderrTail : "", hint, sizeof hint))
		return;
	set_reason(res, "%s%s%s", why, *why ? "; " : "", hint);
}

static void run_job(struct job *j)
{
	double t0 = now_s(), tCheck = 0, tTime = 0;
	cJSON *res, *stages = cJSON_CreateArray();
	const struct timed *skip = was_timed(j->zCode, j->zName);
	kworker_send_progress(j->id, "running", -1);
	W.loadS = 0;
	W.nRunners = 0;
	W.nAhead = 0;
	W.nFramed = 0;
	W.endS = 0;
	W.spare0 = cand_spare_seconds();
	W.zConfine[0] = 0;
	if (!j->ok) {
		res = verdict_new(STATUS_COMPILE_ERROR,
		                  cJSON_GetStringValue(cJSON_GetObjectItem(j->compile, "summary")));
		set_stage(res, "compile");
	} else {
		stage_done(stages, "compile", t0 - j->tCompile);
		res = cascade(j, skip, stages, &tCheck, &tTime);
		/* a load error is the object's: the compile stage's */
		if (decoded(res).status == STATUS_COMPILE_ERROR)
			set_stage(res, "compile");
	}
	if (j->ext.form != TORCHEXT_KERNEL) {
		char *azOut[TASK_MAX_TENSORS];
		for (int k = 0; k < W.t->nOut; k++)
			azOut[k] = W.t->aOut[k].zName;
		cJSON_AddItemToObject(res, "candidate_form",
		                      torchext_note_json(&j->ext, azOut, W.t->nOut));
	}
	note_target(res);
	kworker_peaks();
	double tRun = now_s() - t0;
	/* how far its time is from the device's limit; below it: a suspect */
	struct verdict v = decoded(res);
	cJSON *roof = v.status == STATUS_CORRECT && !isnan(v.timing.medianMs)
	                  ? roofline_json(W.t, &W.roof, v.timing.medianMs)
	                  : NULL;
	if (roof) {
		/* at the clock the timing ended at (issue 39) */
		roofline_at_clock(roof, &W.roof,
		                  isnan(v.timing.smClockMhzAfter) ? 0 : v.timing.smClockMhzAfter);
		cJSON_AddItemToObject(res, "roofline", roof);
	}
	cJSON *o = protocol_event(PROTO_EV_RESULT, j->id);
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
	/* of load and end: spares started (their fork and exec) while it ran */
	cJSON_AddNumberToObject(sec, "spares", cand_spare_seconds() - W.spare0);
	cJSON_AddNumberToObject(o, "runners", W.nRunners);
	cJSON_AddNumberToObject(o, "runners_ahead", W.nAhead);
	cJSON_AddNumberToObject(o, "runners_framed", W.nFramed);
	/* without a measured check, what is left of the run (never below 0: the
	 * load may have been counted for several runner starts) */
	double rest = tRun - tTime - W.loadS - W.endS;
	cJSON_AddNumberToObject(sec, "check", tCheck > 0 ? tCheck : rest > 0 ? rest : 0);
	cJSON_AddNumberToObject(sec, "time", tTime);
	cJSON_AddStringToObject(o, "sandbox", W.sandbox ? "bubblewrap" : "none");
	if (W.zConfine[0])
		cJSON_AddStringToObject(o, "confinement", W.zConfine);
	kworker_send_json(o);
	cJSON_Delete(res);
	if (W.b->fatal)
		exit(3);
	/* its runners end now that the result is out; then the background
	 * compile's helper goes on (its timing never beside a context's end) */
	while (W.nEndLater > 0)
		cand_free(W.aEndLater[--W.nEndLater]);
	torchref_hold(W.bg, 0);
}

static int compiles_done(const struct job *j)
{
	return j->compiled && (!j->inc || j->inc->compiled);
}

static void pump(void)
{
	for (;;) {
		/* between two candidates the GPU may be handed to the background
		 * compile of torch.compile's baseline (and its timing) */
		if (W.bg)
			kworker_background_compile();
		/* cancelled jobs go once the compiler is done with them */
		for (struct job **pp = &W.runq; *pp;) {
			struct job *c = *pp;
			if (c->cancelled && compiles_done(c)) {
				*pp = c->next;
				kworker_job_free(c);
			} else {
				pp = &c->next;
			}
		}
		struct job **pp = &W.runq;
		while (*pp && (*pp)->cancelled)
			pp = &(*pp)->next;
		struct job *j = *pp;
		if (!W.ready || !j)
			return;
		if (!compiles_done(j)) {
			/* the next batch's ring and timed runs' inputs
			 * drawn, and its runner readied, while it compiles
			 * (the draws first: they keep the device busy, and
			 * the spare's frames are the clock's bound) */
			kworker_draw_ahead();
			kworker_frame_ahead();
			return;
		}
		*pp = j->next;
		/* the spares its runners take are refilled while it runs only
		 * when another candidate waits for its turn: else once its
		 * verdict is out (a context made beside its check slows it) */
		int behind = 0;
		for (struct job *q = W.runq; q && !behind; q = q->next)
			behind = !q->cancelled;
		cand_spare_defer(!behind);
		run_job(j);
		kworker_job_free(j);
	}
}

/* the engine cancelled job id before it ran: it is dropped unrun (unknown:
 * it ran, or is running, and the engine drops its result) */
void kworker_op_cancel(cJSON *req)
{
	int id = protocol_cancel_job(req);
	for (struct job *j = W.runq; j; j = j->next)
		if (j->id == id && !j->isReference)
			j->cancelled = 1;
	kworker_pump_later();
}

/* extension j failed on the stand-in for what it lacks (zLacks): compiled
 * again against PyTorch's own headers, where kloop finds them.  1 when that
 * compile is under way (its end calls kworker_compiled again), else 0 with
 * j->zNoTorch saying why not */
static int compile_on_pytorch(struct job *j, const char *zLacks)
{
	char err[KL_ERRLEN];
	if (compiler_torch_real(W.comp, W.zPython, err) < 0) {
		snprintf(j->zNoTorch, sizeof j->zNoTorch, "%s", err);
		return 0;
	}
	if (j->extLang == LANG_CUDA && !compiler_torch_real_cuda(W.comp)) {
		snprintf(
		    j->zNoTorch, sizeof j->zNoTorch,
		    "%s is built without CUDA (no libtorch_cuda.so): its headers cannot "
		    "compile a CUDA extension; give --python a Python whose torch has CUDA, or "
		    "set KLOOP_LIBTORCH to a CUDA libtorch",
		    compiler_torch_real_where(W.comp));
		return 0;
	}
	snprintf(j->ext.zPytorch, sizeof j->ext.zPytorch, "%s", compiler_torch_real_where(W.comp));
	snprintf(j->ext.zLacks, sizeof j->ext.zLacks, "%s", zLacks);
	struct compile_req req = {j->zExtSrc, j->nExtSrc, (enum compile_lang)j->extLang,
	                          j->zExtName, COMPILE_TORCH_REAL};
	if (compiler_submit(W.comp, &req, kworker_compiled, j, err) < 0) {
		snprintf(j->zNoTorch, sizeof j->zNoTorch, "%s", err);
		j->ext.zPytorch[0] = j->ext.zLacks[0] = 0;
		return 0;
	}
	return 1;
}

static void compiled(struct compile_result *r, struct job *j);

/* compiler_torch_real_start's answer for j, which waited with its failed
 * compile on the stand-in kept: compiled again on PyTorch's headers, or
 * that failure is its result */
static void torch_answered(void *arg)
{
	struct job *j = arg;
	struct compile_result *r = j->pTorchWait;
	j->pTorchWait = NULL;
	if (!compile_on_pytorch(j, j->zTorchLacks))
		compiled(r, j);
	compile_result_free(r);
}

void kworker_compiled(struct compile_result *r, void *arg)
{
	struct job *j = arg;
	if (r->stopped) /* this worker is being stopped with its compiler: no
	                   verdict, kloop runs the job elsewhere */
		proc_die_of(SIGTERM);
	/* what the stand-in lacks: PyTorch's own headers, once; where Python
	 * must be asked where they are, the worker serves its other requests
	 * meanwhile */
	if (!r->ok && !r->memLimitMb && j->zExtSrc && !j->ext.zPytorch[0] &&
	    torchext_missing(r->zLog, j->zTorchLacks, sizeof j->zTorchLacks)) {
		if (compiler_torch_real_start(W.comp, W.zPython, torch_answered, j) == 1) {
			j->pTorchWait = compile_result_dup(r);
			return;
		}
		if (compile_on_pytorch(j, j->zTorchLacks))
			return;
	}
	compiled(r, j);
}

/* j's compile is done (r): its verdict's compile object, and the job goes
 * on */
static void compiled(struct compile_result *r, struct job *j)
{
	j->ok = r->ok;
	j->tCompile = r->seconds;
	j->zSo = r->zSo ? xstrdup(r->zSo) : NULL;
	memcpy(j->zCode, r->zCodeHash, sizeof j->zCode);
	cJSON *c = cJSON_CreateObject();
	cJSON_AddBoolToObject(c, "ok", r->ok);
	cJSON_AddBoolToObject(c, "cached", r->cached);
	if (r->deviceOnly)
		cJSON_AddBoolToObject(c, "device_only", 1);
	if (r->noLink)
		cJSON_AddBoolToObject(c, "no_link", 1);
	if (r->sideBySide)
		cJSON_AddBoolToObject(c, "side_by_side", 1);
	if (r->prefixKept)
		cJSON_AddBoolToObject(c, "prefix_kept", 1);
	cJSON_AddNumberToObject(c, "seconds", r->seconds);
	cJSON_AddStringToObject(c, "command", r->zCommand);
	cJSON_AddStringToObject(c, "key", r->zKey);
	/* what the code was built for, and the device's compute capability */
	const struct cuda_target *tg = compiler_target(W.comp);
	if (r->zTarget[0]) {
		cJSON_AddStringToObject(c, "target", r->zTarget);
		if (tg) {
			char cc[16];
			snprintf(cc, sizeof cc, "%d.%d", tg->ccMajor, tg->ccMinor);
			cJSON_AddStringToObject(c, "device_cc", cc);
			if (tg->zNote[0])
				cJSON_AddStringToObject(c, "target_note", tg->zNote);
		}
	}
	if (r->ok)
		cJSON_AddStringToObject(c, "code_hash", r->zCodeHash);
	/* the vectoriser's remarks (host compiles) go apart from the warnings,
	 * which are kept folded (diagfold.h: CuTe's one warning said
	 * thousands of times is one line) */
	char *rest = NULL;
	cJSON *vec = resources_parse_vec(r->zLog, compile_include_dir(), &rest);
	char *folded = diag_fold(rest);
	/* an extension's use of what the ATen stand-in lacks: said, also at
	 * the end of the log that the LLM reads */
	char gap[600] = "";
	if (!r->ok && j->ext.form != TORCHEXT_KERNEL && !j->ext.zPytorch[0] &&
	    torchext_diagnose(j->zName, r->zLog, gap, sizeof gap)) {
		char *z = xasprintf("%skloop: %s\nkloop: it was not compiled against PyTorch's own "
		                    "headers: %s\n",
		                    folded, gap, j->zNoTorch);
		free(folded);
		folded = z;
	}
	/* built against PyTorch's own: said first */
	if (j->ext.zPytorch[0]) {
		char *z =
		    xasprintf("kloop: %s uses %s, which kloop's ATen stand-in lacks: compiled "
		              "against %s (a slower build; what it returns is copied into "
		              "kloop's outputs, in its time)\n%s",
		              j->zName, j->ext.zLacks, j->ext.zPytorch, folded);
		free(folded);
		folded = z;
	}
	cJSON_AddStringToObject(c, "log", folded);
	free(folded);
	free(rest);
	if (compile_lang_from_name(j->zName) != LANG_CUDA && !j->ext.cuda && !j->ext.zPytorch[0])
		cJSON_AddItemToObject(c, "vectorized", vec);
	else
		cJSON_Delete(vec);
	if (!r->ok) {
		/* the memory limit when it stopped the compile (what the compiler
		 * said then, "Killed signal terminated program cc1", is its
		 * symptom), else code that needs a target this build lacks, else
		 * the first diagnostic line, else the reason */
		char *summary = r->memLimitMb ? xstrdup(r->zWhy)
		                : r->zHint[0] ? xstrdup(r->zHint)
		                : gap[0] && j->zNoTorch[0]
		                    ? xasprintf("%s; not built against PyTorch's own headers "
		                                "either: %s",
		                                gap, j->zNoTorch)
		                : gap[0] ? xstrdup(gap)
		                         : resources_first_error(r->zLog);
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
		kworker_finish_reference(j);
		kworker_job_free(j);
	} else {
		if (j->cancelled) { /* dropped by pump(), no word of it */
			j->compiled = 1;
			kworker_pump_later();
			return;
		}
		kworker_send_json(protocol_compiled(j->id, r->ok, r->cached, r->seconds));
		j->compiled = 1;
	}
	kworker_pump_later();
}

/* the backend runs code of language lang: 0, or -1 + err saying which it needs */
static int backend_runs(const struct job *j, int lang, char *err)
{
	int cuda = !strcmp(W.zBackend, "cuda");
	if (lang == LANG_CUDA && !cuda)
		return kl_err(err,
		              "%s: its CUDA code (%s) needs the cuda backend (--backend cuda); "
		              "this worker's is %s",
		              j->zName,
		              j->ext.form == TORCHEXT_MODELNEW ? "load_inline's cuda_sources"
		                                               : "__global__ kernels",
		              W.zBackend);
	if (lang != LANG_CUDA && cuda)
		return kl_err(err,
		              "%s: a %s without CUDA code (%s) runs on the host backend (--backend "
		              "host); the cuda backend gives it GPU memory",
		              j->zName, j->ext.form == TORCHEXT_MODELNEW ? "ModelNew" : "extension",
		              j->ext.form == TORCHEXT_MODELNEW ? "cpp_sources only"
		                                               : "no __global__ kernel");
	return 0;
}

/* j's deferred ModelNew compiled now; one that cannot be is its compile
 * error (the job said to have failed, then dropped) */
static void compile_deferred(struct job *j)
{
	char err[KL_ERRLEN];
	char *z = j->zDeferred;
	j->zDeferred = NULL;
	if (z && kworker_submit_compile(j, z, j->nDeferred, err) < 0) {
		j->compiled = 1;
		if (j->owner) {
			j->compile = cJSON_CreateObject(); /* ok stays 0: the A/B says why */
		} else {
			kworker_send_error(j->id, err, 0);
			j->cancelled = 1;
		}
		kworker_pump_later();
	}
	free(z);
}

void kworker_compile_deferred(void)
{
	for (struct job *j = W.runq; j; j = j->next) {
		compile_deferred(j);
		if (j->inc)
			compile_deferred(j->inc);
	}
}

/* 1 when the entry point of extension z[0..n) may have a scalar parameter
 * (one it has, or a declaration not found), which takes a number of the
 * problem's get_init_inputs() */
static int takes_numbers(const char *z, size_t n)
{
	char entry[64], kinds[64];
	torchext_entry_of(z, n, entry, sizeof entry);
	return torchext_entry_params(z, n, entry, kinds, sizeof kinds) < 0 || strchr(kinds, 'n');
}

int kworker_submit_compile(struct job *j, const char *zSrc, size_t n, char *err)
{
	j->ext.form = torchext_form_of(j->zName, zSrc, n);
	int lang = torchext_lang_of(j->zName, zSrc, n);
	if (j->ext.form == TORCHEXT_KERNEL && lang < 0)
		return kl_err(err, "%s: unknown source language (expected .c, .cpp, .cu or .py)",
		              j->zName);
	if (j->ext.form == TORCHEXT_KERNEL) {
		struct compile_req req = {zSrc, n, (enum compile_lang)lang, j->zName, 0};
		return compiler_submit(W.comp, &req, kworker_compiled, j, err);
	}
	/* a PyTorch extension as it is, or a ModelNew made one (its Python
	 * read by modelnew.py, never run) */
	char names[256];
	if (j->ext.form == TORCHEXT_EXTENSION &&
	    torchext_bare_entry(zSrc, n, names, sizeof names) < 0)
		return kl_err(
		    err,
		    "%s has no PYBIND11_MODULE and defines several functions of tensors "
		    "(%s), none named forward: kloop cannot tell which to call; name it "
		    "with PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def(\"forward\", &FN); }",
		    j->zName, names);
	struct torchext_src ts = {0};
	if (!W.t && (j->ext.form == TORCHEXT_MODELNEW || takes_numbers(zSrc, n))) {
		/* its forward maps self.NAME onto the task's inputs (an
		 * extension's scalar parameters: get_init_inputs()), which a
		 * PyTorch problem's helper has yet to say */
		j->zDeferred = xstrndup(zSrc, n);
		j->nDeferred = n;
		return 0;
	}
	if (j->ext.form == TORCHEXT_MODELNEW) {
		if (torchext_modelnew(W.zPython, j->zName, zSrc, n, W.t, &ts, err) < 0)
			return -1;
		snprintf(j->ext.zEntry, sizeof j->ext.zEntry, "%s", ts.zEntry);
		snprintf(j->ext.zNotes, sizeof j->ext.zNotes, "%s", ts.zNotes);
	} else {
		/* its scalar parameters take the problem's get_init_inputs() */
		ts.lang = lang;
		ts.zName = torchext_compile_name(j->zName, lang);
		ts.zSource = torchext_with_init(zSrc, n, W.t, ts.zName, &ts.nSource);
		torchext_entry_of(zSrc, n, j->ext.zEntry, sizeof j->ext.zEntry);
	}
	j->ext.cuda = ts.lang == LANG_CUDA;
	int rc = backend_runs(j, ts.lang, err);
	if (rc == 0) {
		struct compile_req req = {ts.zSource, ts.nSource, (enum compile_lang)ts.lang,
		                          ts.zName, COMPILE_TORCH_STANDIN};
		rc = compiler_submit(W.comp, &req, kworker_compiled, j, err);
	}
	if (rc == 0) { /* kept for PyTorch's own headers (compile_on_pytorch) */
		free(j->zExtSrc);
		free(j->zExtName);
		j->zExtSrc = ts.zSource, ts.zSource = NULL;
		j->nExtSrc = ts.nSource;
		j->extLang = ts.lang;
		j->zExtName = ts.zName, ts.zName = NULL;
	}
	torchext_src_free(&ts);
	return rc;
}
