/*
 * runners.c - kloop-worker's runners: their options and limits, the ones
 * started ahead of the task's inputs, a candidate's object loaded into one
 * (on one or two harnesses) and its end, the reference's runs (every set,
 * the small shapes, float64) and the task_ready once they are done
 * (kworker.h).
 */
#include "kworker.h"

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

/* the options of this worker's runners, the task's libraries' directories
 * in libDirs (compiler_lib_dirs: the caller frees them) */
static struct cand_opts runner_opts(int isReference, char **libDirs)
{
	return (struct cand_opts){.zBackend = W.zBackend,
	                          .dev = W.dev,
	                          .sandbox = W.sandbox,
	                          .pollFd = W.in,
	                          .azLibDirs = libDirs,
	                          .reference = isReference,
	                          .memBytes = (unsigned long long)kworker_mem_limit_mb() << 20,
	                          .maxTasks = max_tasks(),
	                          .tmpBytes = (unsigned long long)tmp_limit_mb() << 20};
}

void kworker_prestart(struct harness *h)
{
	char **libDirs = compiler_lib_dirs(W.comp, 0);
	struct cand_opts o = runner_opts(0, libDirs);
	/* the clock's twin too, waited for at the first load */
	char terr[KL_ERRLEN];
	if (!W.twin && !W.twinStarting)
		W.twinStarting = cand_twin_begin(&o, terr);
	cand_spare_prestart(&o, &h, 1);
	compiler_dirs_free(libDirs);
}

/* the clock's twin: started once, again if it died (NULL: none, said) */
static struct cand_proc *twin_ready(const struct cand_opts *o)
{
	if (!cand_alive(W.twin)) {
		char terr[KL_ERRLEN];
		cand_free(W.twin);
		struct cand_proc *t = W.twinStarting;
		W.twinStarting = NULL;
		if (!(W.twin = t ? cand_twin_ready(t, terr) : cand_twin(o, terr)))
			fprintf(stderr,
			        "kloop-worker: warning: no clock twin (%s): the clock's bound uses "
			        "the frames taken before each load\n",
			        terr);
	}
	return W.twin;
}

void kworker_frame_ahead(void)
{
	static int off = -1;
	if (off < 0) {
		const char *z = getenv("KLOOP_FRAME_AHEAD");
		off = z && !strcmp(z, "0");
	}
	if (off || !W.ready || !W.h || W.b->fatal || !cand_spares_waiting())
		return;
	/* the harnesses a candidate's first runner serves (cascade) */
	struct harness *both[] = {W.hSmall, W.h};
	int nH = W.hSmall ? 2 : 1;
	char **libDirs = compiler_lib_dirs(W.comp, 0);
	struct cand_opts o = runner_opts(0, libDirs);
	o.twin = twin_ready(&o);
	cand_spare_frame(&o, both + 2 - nH, nH);
	compiler_dirs_free(libDirs);
}

/* KLOOP_<name>=0 turns a draw ahead off (to measure it) */
static int ahead_off(const char *zEnv)
{
	const char *z = getenv(zEnv);
	return z && !strcmp(z, "0");
}

void kworker_draw_ahead(void)
{
	static int ringOff = -1, runsOff = -1;
	if (ringOff < 0)
		ringOff = ahead_off("KLOOP_RING_AHEAD"), runsOff = ahead_off("KLOOP_RUNS_AHEAD");
	if (!W.ready || !W.h || W.b->fatal)
		return;
	char err[KL_ERRLEN] = "";
	/* a failed draw here is the timing's to meet again and report, with
	 * the candidate it times */
	if (!ringOff && harness_ring_ahead(W.h, err) < 0)
		fprintf(stderr, "kloop-worker: the next batch's ring not drawn ahead: %s\n", err);
	if (!runsOff && !W.b->fatal && harness_runs_ahead(W.h, err) < 0)
		fprintf(stderr, "kloop-worker: the next timing's runs not drawn ahead: %s\n", err);
}

/* start a runner for j's shared object on the buffers of the nH harnesses
 * ah[] (cand_iface(c, k) runs it on ah[k]'s); NULL + err (*pLoadErr: the
 * object itself is at fault, a compile_error) */
struct cand_proc *kworker_load_on(struct job *j, struct harness *const *ah, int nH, int *pLoadErr,
                                  char *err)
{
	*pLoadErr = 0;
	double t0 = now_s();
	int fd = compiler_open_so(W.comp, j->zSo, err);
	if (fd < 0)
		return NULL;
	/* the task's libraries, where the candidate's rpath finds them */
	char **libDirs = compiler_lib_dirs(W.comp, 0);
	struct cand_opts o = runner_opts(j->isReference, libDirs);
	/* the clock's twin first */
	o.twin = twin_ready(&o);
	struct cand_proc *c = cand_start(&o, ah, nH, fd, pLoadErr, err);
	compiler_dirs_free(libDirs);
	close(fd);
	W.loadS += now_s() - t0;
	W.nRunners++;
	W.nAhead += c && cand_started_ahead(c);
	W.nFramed += c && cand_framed_ahead(c);
	if (c)
		cand_describe(c, W.zConfine, sizeof W.zConfine);
	return c;
}

/* end a candidate's runner (the keeper kills it and everything it started,
 * and reaps them: on the GPU the device context goes with it) */
void kworker_unload(struct cand_proc *c)
{
	double t0 = now_s();
	cand_free(c);
	W.endS += now_s() - t0;
}

/* a runner for j's shared object on h's buffers alone */
struct cand_proc *kworker_load(struct job *j, struct harness *h, int *pLoadErr, char *err)
{
	return kworker_load_on(j, &h, 1, pLoadErr, err);
}

/* the small shapes' harness of a reference that failed on it: never freed,
 * since the reference's runner may have mapped its buffers */
static struct harness *smallDropped;

/*
 * The reference's outputs at the small shapes: in the reference's runner c
 * (its harness k: W.hSmall, whose inputs were drawn before it started), or
 * where c is NULL in a runner of its own; where that fails, the cascade has
 * no small-shapes stage (W.zSmall says why).
 */
void kworker_small_reference(struct job *j, struct cand_proc *c, int k)
{
	char err[KL_ERRLEN];
	int loadErr, own = !c;
	if (!W.hSmall)
		return;
	if (own && harness_generate_inputs(W.hSmall, err) == 0 &&
	    (c = kworker_load(j, W.hSmall, &loadErr, err)))
		cand_set_timeout(c, W.refTimeoutS);
	if (!c || harness_run_reference(W.hSmall, cand_iface(c, own ? 0 : k), err) < 0) {
		char *why = xasprintf("no small-shapes stage: the reference failed on %s: %s",
		                      W.zSmall, err);
		snprintf(W.zSmall, sizeof W.zSmall, "%s", why);
		free(why);
		if (own)
			harness_free(W.hSmall);
		else
			smallDropped = W.hSmall;
		W.hSmall = NULL;
	}
	if (own && c)
		cand_free(c);
}

/*
 * The float64 reference of the precision verdict (precision.h) made, into
 * h64 (precision_harness(W.h)), by zName when ok, else not (err says why:
 * h64 is discarded); every verdict says what it is measured against, or
 * why there is none (a C or CUDA reference, torch 0, is told how to give
 * it).  Returns what task_ready says of it (W.zPrec).
 */
const char *kworker_float64_end(struct harness *h64, int ok, const char *zName, int torch,
                                char *err)
{
	if (ok)
		ok = precision_attach(W.h, h64, err) == 0; /* h64 is W.h's from now on */
	else
		precision_discard(h64);
	if (ok) {
		snprintf(W.zPrec, sizeof W.zPrec, "against %s in float64", zName);
		return W.zPrec;
	}
	snprintf(W.zPrec, sizeof W.zPrec, "no precision verdict: %s in float64: %s%s", zName, err,
	         torch ? ""
	               : " (a C or CUDA reference gives it by writing exact KL_F64 outputs when "
	                 "given them: docs/TASKS.md, \"Precision\")");
	precision_note(W.h, W.zPrec);
	return W.zPrec;
}

/*
 * The reference once more, with float64 outputs on the same trial inputs
 * (and on the first trial's rounded to 10 and 7 mantissa bits), for the
 * precision verdict (precision.h): in the reference's runner (W.refCand,
 * its second harness h64, made before it was started), its inputs copied
 * now that W.h's sets are final; h64 NULL: none, zWhyNot says why, and
 * every verdict.  Returns what task_ready says of it (static or W.zPrec).
 */
const char *kworker_float64_reference(struct job *j, struct harness *h64, const char *zWhyNot)
{
	char err[KL_ERRLEN];
	int ok = 0;
	snprintf(err, sizeof err, "%s", zWhyNot);
	if (h64 && precision_harness_fill(h64, W.h, err) == 0)
		ok = harness_run_reference(h64, cand_iface(W.refCand, 1), err) == 0;
	return kworker_float64_end(h64, ok, j->zName, 0, err);
}

/* the reference compiled (j): its runs on every set, at the small shapes
 * and in float64, its timing, and the task_ready with where the setup's
 * seconds went; a reference that fails ends the worker */
void kworker_finish_reference(struct job *j)
{
	char err[KL_ERRLEN];
	int loadErr;
	double t0 = now_s(), tCompile = t0 - W.tRefCompile;
	if (!j->ok) {
		char *z = xasprintf("the reference %s does not compile:\n%s", j->zName,
		                    cJSON_GetStringValue(cJSON_GetObjectItem(j->compile, "log")));
		kworker_send_error(-1, z, 1);
		free(z);
		exit(1);
	}
	/* the float64 reference's harness made first, and the small shapes'
	 * inputs drawn, so that the reference's runner maps them too: their
	 * runs there, not in runners (device contexts, made and ended) of
	 * their own */
	char err64[KL_ERRLEN];
	struct harness *h64 = precision_harness_new(W.h, err64);
	struct harness *ah[3] = {W.h};
	int nH = 1, kSmall = 0;
	if (h64)
		ah[nH++] = h64;
	if (W.hSmall && harness_generate_inputs(W.hSmall, err) == 0)
		kSmall = nH, ah[nH++] = W.hSmall;
	if (nH > 1 && !(W.refCand = kworker_load_on(j, ah, nH, &loadErr, err))) {
		if (h64) {
			snprintf(err64, sizeof err64, "%s", err);
			precision_discard(h64);
			h64 = NULL;
		}
		kSmall = 0;
	}
	if (!W.refCand)
		W.refCand = kworker_load(j, W.h, &loadErr, err);
	if (W.refCand)
		cand_set_timeout(W.refCand, W.refTimeoutS);
	double tSmall = now_s();
	if (W.refCand)
		kworker_small_reference(j, kSmall ? W.refCand : NULL, kSmall);
	tSmall = now_s() - tSmall;
	if (!W.refCand || harness_run_reference(W.h, cand_iface(W.refCand, 0), err) < 0) {
		char *z = xasprintf("the reference %s failed: %s", j->zName, err);
		kworker_send_error(-1, z, 1);
		free(z);
		exit(1);
	}
	/* and the judge of the runs checked after their call (harness.h) */
	harness_set_reference(W.h, cand_iface(W.refCand, 0));
	double tRuns = now_s() - t0, tF64 = now_s();
	struct proto_ready rd = {.zPrecision = kworker_float64_reference(j, h64, err64),
	                         .zReference = j->zName,
	                         .zTask = W.t->zName,
	                         .nTrials = -1,
	                         .refSeconds = -1};
	tF64 = now_s() - tF64;
	cJSON *tm = NULL;
	double tTime = now_s();
	if (W.timeReference) {
		/* on the GPU in a runner of its own, ended after it: a runner's
		 * first profiled window takes the device's profiling hardware for
		 * the runner's life (CUPTI 13.0 does not give it back: enabled again
		 * after a disable, it killed the process), and the reference's
		 * runner, kept for the worker's life as the judge, left every
		 * candidate's profiler CUPTI_ERROR_HARDWARE_BUSY, its short kernels
		 * timed by their events (on an H200: a kernel on a stream of its
		 * own read 1.3 us, "stream") */
		struct cand_proc *tc =
		    !strcmp(W.zBackend, "cuda") ? kworker_load(j, W.h, &loadErr, err) : NULL;
		if (tc)
			cand_set_timeout(tc, W.refTimeoutS);
		tm = harness_time_only(W.h, cand_iface(tc ? tc : W.refCand, 0), err);
		cand_free(tc);
		if (!tm) {
			char *z = xasprintf("timing the reference failed: %s", err);
			kworker_send_error(-1, z, 1);
			free(z);
			exit(1);
		}
		rd.refTiming = tm;
	}
	*(W.hSmall ? &rd.zSmallShapes : &rd.zSmallNote) = W.zSmall;
	/* where the worker's seconds before its first candidate went */
	cJSON *su = cJSON_CreateObject();
	cJSON_AddNumberToObject(su, "seconds", now_s() - W.tTask);
	cJSON_AddNumberToObject(su, "inputs", W.inputsS);
	cJSON_AddNumberToObject(su, "reference_compile", tCompile);
	cJSON_AddNumberToObject(su, "reference_runs", tRuns);
	/* of them the small shapes' (a runner of their own); then the float64
	 * reference's (another), and the worker's start to its hello */
	cJSON_AddNumberToObject(su, "small_reference", tSmall);
	cJSON_AddNumberToObject(su, "float64_reference", tF64);
	cJSON_AddNumberToObject(su, "worker_start", W.tHello - W.tMain);
	cJSON_AddNumberToObject(su, "task_after_hello", W.tTask - W.tHello);
	if (tm)
		cJSON_AddNumberToObject(su, "reference_timing", now_s() - tTime);
	rd.setup = su;
	W.ready = 1;
	kworker_send_ready(protocol_ready(&rd));
	cJSON_Delete(tm);
	cJSON_Delete(su);
}
