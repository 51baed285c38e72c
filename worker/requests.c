/*
 * requests.c - kloop-worker's requests: the task (loaded with its
 * reference and the PyTorch helper that makes a problem's data), eval and
 * measured (kworker.h).
 */
#include "kworker.h"

/* checking sets the PyTorch reference makes beside the trials (as memory
 * allows): each is seen once, by a checked timed run */
#define TORCH_POOL 4

/* by default the profiled runs follow a timing under this, ms (profiled_runs):
 * on an H200 a run's events read its kernels 1.3 to 2.0 us long (a launch;
 * bench/RESULTS.md, 2026-12-01), under 3% of a timing of 70 us or more */
#define PROFILED_BELOW_MS 0.07

/* ---- requests ---- */

/*
 * The profiled runs on the GPU (issue 39): after a full timing, the
 * candidate's and the kernel reference's alike, this many runs timed by
 * their kernels' durations (KLOOP_PROFILED_RUNS, 30 by default; 0: none),
 * *pBelowMs the events' median under which a timing gets them.  By default
 * (KLOOP_CUPTI unset) after a timing under PROFILED_BELOW_MS, where a launch
 * is 3% of the events or more (30 profiled runs, each checked, cost an H200
 * about 0.5 s for a 94 us kernel); KLOOP_CUPTI=range after every one;
 * KLOOP_CUPTI=0 (events alone) or 1 (CUPTI's activity records) none.
 * Against a PyTorch reference, whose helper times the model's call by
 * events, the candidate's time is its kernels' and its speedups divide its
 * events' median (result.c, speedup_time): a ratio of like with like.
 */
static int profiled_runs(double *pBelowMs)
{
	const char *cu = getenv("KLOOP_CUPTI"), *n = getenv("KLOOP_PROFILED_RUNS");
	int range = cu && !strcmp(cu, "range");
	*pBelowMs = range ? 0 : PROFILED_BELOW_MS;
	if ((cu && *cu && !range) || strcmp(W.zBackend, "cuda"))
		return 0;
	int asked = n && *n;
	if (asked && atoi(n) <= 0)
		return 0;
	int k = asked ? atoi(n) : 30;
	return k < 5 ? 5 : k > 1000 ? 1000 : k;
}

static void fail_task(const char *zMsg)
{
	kworker_kill_helper();
	if (torchref_stopped()) /* stopped with its PyTorch helper: no verdict
	                           on the task, kloop runs it elsewhere */
		proc_die_of(SIGTERM);
	kworker_send_error(-1, zMsg, 1);
	exit(1);
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
 * into a fresh directory; returns the path to kworker_load (the directory, or the
 * .py problem file in it when zDir named one) or NULL + err.
 */
static char *unpack_task(const cJSON *files, const char *zDir, char *err)
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
 * kworker_compiled (kworker_small_reference).  None when shrinking changes nothing.
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
	o.nRing = 0;
	if (!(W.hSmall = harness_new(t, W.b, &o, err))) {
		snprintf(W.zSmall, sizeof W.zSmall, "no small-shapes stage: %.*s", KL_ERRLEN, err);
		task_free(t);
		return;
	}
	W.tSmall = t;
}

/*
 * A task with a PyTorch reference loads as a state of the worker, not in a
 * loop of its own: the task request starts the helper and returns, and each
 * step the helper takes (its description of the problem, the sets, their
 * float64 copies, the baselines, its end) is waited for on the one loop,
 * its output's readiness and a timer at the step's deadline calling
 * on_load(), which goes on to the next.  Meanwhile the loop reads requests
 * (a task request is refused: one is loading) and compiles candidates;
 * none runs before task_ready.
 */
enum load_step { LOAD_NONE, LOAD_DESCRIBE, LOAD_FILL, LOAD_FILL64, LOAD_TIMING, LOAD_CHECK };

static struct load {
	enum load_step step;    /* the helper's step under way, LOAD_NONE: no task loads */
	struct torchref *tr;    /* the helper */
	long long timer;        /* at the step's deadline, or 0 */
	char *zDir;             /* the problem file, or the task's directory */
	int problem;            /* a problem file given as the task: its task is made */
	int defer;              /* torch.compile in the background (a search on the GPU) */
	struct harness *h64;    /* the float64 reference's sets, while they are made */
	double t0;              /* when the step began */
	double tHelper;         /* seconds from the request to the helper's description */
	double tFill;           /* seconds the sets took */
	char note[256];         /* fewer trials than asked for (fit_sets) */
	const char *zPrecision; /* what the precision verdicts are measured against */
	cJSON *su;              /* task_ready's setup: where the seconds went */
	cJSON *refTm, *bases;   /* the eager baseline and the baselines (copies), or NULL */
} L;

static void load_next(int rc, char *err);

static void on_load_timer(struct loop *l, long long id, void *arg);

/* the step under way goes on: its deadline's timer again */
static void load_arm(void)
{
	if (L.timer)
		loop_del_timer(W.l, L.timer);
	double d = torchref_deadline(L.tr);
	L.timer =
	    d > 0 ? loop_add_timer(W.l, d > now_s() ? d - now_s() : 0, on_load_timer, NULL) : 0;
}

/* what the helper sent, or its deadline: the step goes on, or is done */
static void on_load(void)
{
	char err[KL_ERRLEN];
	int rc = torchref_step(L.tr, err);
	if (rc == 0)
		load_arm();
	else
		load_next(rc, err);
}

static void on_load_fd(struct loop *l, int fd, int events, void *arg)
{
	(void)l, (void)fd, (void)events, (void)arg;
	on_load();
}

static void on_load_timer(struct loop *l, long long id, void *arg)
{
	(void)l, (void)id, (void)arg;
	L.timer = 0;
	on_load();
}

/* the helper's step s was begun (rc: 1 done at once, 0 under way, -1 + err) */
static void load_wait(enum load_step s, int rc, char *err)
{
	L.step = s;
	if (rc == 0)
		load_arm();
	else
		load_next(rc, err);
}

/* the load is over: the engine hears task_ready */
static void load_ready(void)
{
	struct proto_ready rd = {.zPrecision = L.zPrecision,
	                         .refTiming = L.refTm,
	                         .baselines = L.bases,
	                         .zReference = "PyTorch eager (reference.py)",
	                         .zTask = W.t->zName,
	                         .nTrials = W.opts.nTrials,
	                         .refSeconds = L.tFill,
	                         .zSmallNote = "no small-shapes stage: a PyTorch reference's "
	                                       "data is made at the task's shapes only"};
	if (L.note[0])
		rd.zNote = L.note;
	const cJSON *sizes = cJSON_GetObjectItem(torchref_manifest(L.tr), "sizes");
	if (cJSON_IsObject(sizes) && sizes->child)
		rd.sizes = sizes;
	cJSON_AddNumberToObject(L.su, "seconds", now_s() - W.tTask);
	rd.setup = L.su;
	W.ready = 1;
	kworker_send_ready(protocol_ready(&rd));
	cJSON_Delete(L.su);
	cJSON_Delete(L.refTm);
	cJSON_Delete(L.bases);
	if (L.timer)
		loop_del_timer(W.l, L.timer);
	if (!W.bg)
		loop_del_fd(W.l, torchref_fd(L.tr));
	free(L.zDir);
	memset(&L, 0, sizeof L);
	kworker_pump_later();
}

/* the baselines are timed (or none was asked for): the helper ends, or
 * stays to compile torch.compile's baseline in the background */
static void load_timed(void)
{
	char err[KL_ERRLEN];
	struct torchref *tr = L.tr;
	cJSON *su = L.su;
	if (W.timeReference) {
		const cJSON *tm = torchref_baselines(tr);
		const cJSON *eager = cJSON_GetObjectItem(tm, "eager");
		cJSON_AddNumberToObject(su, "baselines", now_s() - L.t0);
		cJSON_AddBoolToObject(su, "baselines_cached", torchref_timing_cached(tr));
		const cJSON *cs =
		    cJSON_GetObjectItem(cJSON_GetObjectItem(tm, "compile"), "compile_seconds");
		if (cJSON_IsNumber(cs) && !torchref_timing_cached(tr))
			cJSON_AddNumberToObject(su, "torch_compile", cs->valuedouble);
		/* copies: the helper's own go with it */
		struct verdict_timing et;
		verdict_timing_decode(eager, &et);
		if (!isnan(et.medianMs))
			L.refTm = cJSON_Duplicate(eager, 1);
		L.bases = cJSON_Duplicate(tm, 1);
	}
	/* the helper stays for the worker's life: it draws each run's inputs
	 * and makes the outputs of those checked after their call (issue 37);
	 * kloop-worker's end kills it (gHelper) */
	struct harness_source src;
	int nSets = harness_nsets(W.h);
	if (torchref_source(tr, W.h, W.b, &src, nSets ? L.tFill * 1e3 / nSets : 0, err) < 0)
		fail_task(err);
	harness_set_source(W.h, &src);
	W.tr = tr;
	if (torchref_compile_pending(tr)) {
		/* kworker_background_compile() reads it meanwhile, and checks its
		 * parameters once the compile is over */
		kworker_background_watch(tr);
		cJSON_AddBoolToObject(su, "torch_compile_background", 1);
		load_ready();
		return;
	}
	L.t0 = now_s();
	load_wait(LOAD_CHECK, torchref_check_begin(tr, err), err);
}

/* the float64 sets are made (ok) or not (err): the baselines next */
static void load_float64(int ok, char *err)
{
	L.zPrecision = kworker_float64_end(L.h64, ok, "PyTorch's model", 1, err);
	L.h64 = NULL;
	/* where the setup's seconds went: the first candidate waits for it */
	cJSON *su = L.su = cJSON_CreateObject();
	const cJSON *hs = cJSON_GetObjectItem(torchref_manifest(L.tr), "seconds");
	cJSON_AddNumberToObject(su, "helper", L.tHelper);
	if (cJSON_IsNumber(cJSON_GetObjectItem(hs, "import_torch")))
		cJSON_AddNumberToObject(su, "import_torch", json_num(hs, "import_torch", 0));
	cJSON_AddNumberToObject(su, "reference_data", L.tFill);
	if (W.timeReference) {
		L.t0 = now_s();
		load_wait(LOAD_TIMING, torchref_timing_begin(L.tr, W.h, L.defer, err), err);
	} else {
		load_timed();
	}
}

/* the sets are made: their float64 copies next, for the precision verdict */
static void load_filled(void)
{
	char err[KL_ERRLEN];
	L.tFill = now_s() - L.t0;
	L.h64 = precision_harness(W.h, err);
	if (L.h64)
		load_wait(LOAD_FILL64, torchref_fill64_begin(L.tr, L.h64, W.h, W.b, err), err);
	else
		load_float64(0, err);
}

/* the helper described the problem: the task made (or checked), its
 * harness, and the sets asked for */
static void load_described(void)
{
	char err[KL_ERRLEN];
	if (L.problem) {
		if (!(W.t = torchref_make_task(L.tr, L.zDir, err)))
			fail_task(err);
		kworker_compile_deferred();
	} else if (torchref_check_task(L.tr, W.t, err) < 0) {
		fail_task(err);
	}
	/* given inputs: the reference makes a few checking sets too, so that a
	 * checked timed run is one the candidate has not seen */
	W.opts.nPool = TORCH_POOL;
	task_override_tol(W.t, W.tolA, W.tolR, -1);
	if (fit_sets(L.zDir, L.note, sizeof L.note, err) < 0)
		fail_task(err);
	W.h = harness_new(W.t, W.b, &W.opts, err);
	if (!W.h)
		fail_task(err);
	/* the first runners make their contexts while the inputs are drawn */
	kworker_prestart(W.h);
	/* PyTorch writes every set straight into the harness's buffers */
	L.t0 = now_s();
	L.tHelper = L.t0 - W.tTask;
	load_wait(LOAD_FILL, torchref_fill_begin(L.tr, W.h, W.b, err), err);
}

/* the step under way is done (rc 1) or failed (rc -1, err says why): the
 * load goes on, or the task fails (the float64 copies alone may fail: the
 * verdicts then say why they have no precision) */
static void load_next(int rc, char *err)
{
	if (L.timer)
		loop_del_timer(W.l, L.timer);
	L.timer = 0;
	if (rc < 0 && L.step != LOAD_FILL64)
		fail_task(err);
	switch (L.step) {
	case LOAD_DESCRIBE:
		load_described();
		break;
	case LOAD_FILL:
		load_filled();
		break;
	case LOAD_FILL64:
		load_float64(rc > 0, err);
		break;
	case LOAD_TIMING:
		load_timed();
		break;
	case LOAD_CHECK:
		cJSON_AddNumberToObject(L.su, "helper_end", now_s() - L.t0);
		load_ready();
		break;
	case LOAD_NONE:
		break;
	}
}

void kworker_op_task(cJSON *req)
{
	char err[KL_ERRLEN];
	struct proto_task tq;
	int bad = protocol_task_decode(req, &tq, err) < 0;
	const char *zDir = tq.zDir, *zShapes = tq.zShapes, *zRef = tq.zReference;
	struct torchref *tr = NULL;
	if (W.t || L.step != LOAD_NONE) {
		kworker_send_error(-1, "a task is already loaded in this worker", 0);
		return;
	}
	if (bad) {
		/* refused before anything was loaded: the worker still has no
		 * task, and takes the next request as its first */
		kworker_send_error(-1, err, 0);
		return;
	}
	/* a task shipped with the request (a worker on another host): its files
	 * are written to a directory of this worker's own */
	char *zShipped = NULL;
	const cJSON *files = tq.files;
	if (cJSON_IsObject(files)) {
		if (!(zShipped = unpack_task(files, zDir, err)))
			fail_task(err);
		zDir = zShipped;
	}
	W.tTask = now_s();
	harness_default_opts(&W.opts, W.zBackend);
	if (tq.nTrials >= 0)
		W.opts.nTrials = tq.nTrials;
	if (tq.bSeed)
		W.opts.seed = (uint64_t)tq.seed;
	if (tq.budgetS >= 0)
		W.opts.budgetS = tq.budgetS;
	W.refTimeoutS = tq.runTimeoutS;
	if (tq.rse >= 0)
		W.opts.rse = tq.rse;
	W.timeReference = tq.timeReference;
	/* --atol / --rtol override the float outputs' tolerances */
	W.tolA = tq.atol;
	W.tolR = tq.rtol;
	const char *zSrcPath = NULL;
	/* the libraries the task and --libs give candidates (and the reference),
	 * set before anything waits on the PyTorch helper: the candidates sent
	 * meanwhile compile then */
	const char *zFlagLibs = tq.zLibs;
	if (task_is_problem(zDir)) {
		/* a KernelBench problem file given directly */
		if (zFlagLibs && compiler_add_libs(W.comp, zFlagLibs, NULL, err) < 0)
			fail_task(err);
		if (!(tr = kworker_start_helper(zDir, zShapes, tq.size, err)))
			fail_task(err);
		L.problem = 1;
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
			/* at the shape set's dimensions: the constants of
			 * reference.py that bear their names */
			if (!(tr = kworker_start_helper(W.t->ref.zTorch, W.t->zDims, 0, err)))
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
	W.opts.profiledRuns = profiled_runs(&W.opts.profiledBelowMs);
	if (tr) {
		/* the helper describes the problem while the loop goes on */
		L.tr = tr;
		L.zDir = xstrdup(zDir);
		/* a search on the GPU: torch.compile compiles in the background */
		L.defer = tq.deferCompile && !strcmp(W.zBackend, "cuda");
		loop_add_fd(W.l, torchref_fd(tr), LOOP_READ, on_load_fd, NULL);
		load_wait(LOAD_DESCRIBE, 0, err);
		free(zShipped);
		kworker_peaks();
		return;
	}
	task_override_tol(W.t, W.tolA, W.tolR, -1);
	W.h = harness_new(W.t, W.b, &W.opts, err);
	if (!W.h)
		fail_task(err);
	/* the first runners make their contexts while the inputs are drawn */
	kworker_prestart(W.h);
	double t0 = now_s();
	if (harness_generate_inputs(W.h, err) < 0)
		fail_task(err);
	W.inputsS = now_s() - t0;
	small_task(zDir, zShapes);
	strbuf src = STRBUF_INIT;
	if (read_file(zSrcPath, &src, 64 << 20, err) < 0)
		fail_task(err);
	struct job *j = xcalloc(1, sizeof *j);
	j->id = -1;
	j->isReference = 1;
	eval_request_defaults(&j->rq);
	const char *base = strrchr(zSrcPath, '/');
	j->zName = xstrdup(base ? base + 1 : zSrcPath);
	W.tRefCompile = now_s();
	if (kworker_submit_compile(j, src.buf, src.len, err) < 0)
		fail_task(err);
	sb_free(&src);
	kworker_peaks();
}

void kworker_op_eval(cJSON *req)
{
	char err[KL_ERRLEN];
	struct eval_request rq;
	if (protocol_eval_decode(req, &rq, err) < 0) {
		kworker_send_error(rq.job, err, 0);
		return;
	}
	int id = rq.job;
	struct job *j = xcalloc(1, sizeof *j);
	j->id = id;
	j->zName = xstrdup(rq.zName);
	j->rq = eval_request_copy(&rq);
	/* the incumbent of an A/B, compiled beside it (from the cache, mostly) */
	const char *zIncSrc = rq.inc.zSource, *zIncName = rq.inc.zName;
	kworker_send_progress(id, "compiling", -1);
	if (kworker_submit_compile(j, rq.zSource, rq.nSource, err) < 0) {
		kworker_send_error(id, err, 0);
		kworker_job_free(j);
		return;
	}
	if (zIncSrc) {
		struct job *i = xcalloc(1, sizeof *i);
		i->id = id;
		i->zName = xstrdup(zIncName);
		i->owner = j;
		j->inc = i;
		if (kworker_submit_compile(i, zIncSrc, strlen(zIncSrc), err) < 0) {
			i->compiled = 1; /* ok stays 0: the A/B says why */
			i->compile = cJSON_CreateObject();
		}
	}
	/* results come back in submission order; compiles run in parallel */
	struct job **pp = &W.runq;
	while (*pp)
		pp = &(*pp)->next;
	*pp = j;
	/* its runner readied while it compiles (pump: kworker_frame_ahead) */
	kworker_pump_later();
}

/* the engine: code with this hash was timed (timing) as label on a device
 * named device in the session (by a worker before this one, or another of
 * the same model) */
void kworker_op_measured(cJSON *req)
{
	const char *zDev, *zCode, *zLabel;
	const cJSON *tm;
	char err[KL_ERRLEN];
	if (protocol_measured_decode(req, &zDev, &zCode, &zLabel, &tm, err) < 0) {
		kworker_send_error(-1, err, 0);
		return;
	}
	if (!strcmp(zDev, W.b->zDevice))
		kworker_add_timed(zCode, zLabel, tm);
}
