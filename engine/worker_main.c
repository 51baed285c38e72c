/*
 * worker_main.c - kloop-worker: one process per device.  It speaks
 * newline-delimited JSON on the stdin/stdout it was started with, moved to
 * private descriptors so that a candidate's own output (sent to stderr)
 * cannot corrupt the protocol; it compiles candidates (in parallel, cached),
 * loads them, checks and times them, and streams progress and results.
 */
#include <cJSON.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "backend.h"
#include "compile.h"
#include "harness.h"
#include "loop.h"
#include "resources.h"
#include "task.h"
#include "torchref.h"
#include "util.h"

struct job {
	int id;             /* the engine's job id */
	char *zName;        /* file name for diagnostics */
	int ok;             /* compiled */
	char *zSo;          /* shared object */
	cJSON *compile;     /* the compile report */
	double tCompile;    /* seconds */
	int compiled;       /* its compile has finished (ok or not) */
	struct job *next;   /* run queue link, in submission order */
	int isReference;    /* the task's reference */
};

static struct {
	int in, out;               /* protocol descriptors */
	struct loop *l;
	struct backend *b;
	struct compiler *comp;
	struct task *t;
	struct harness *h;
	struct harness_opts opts;
	int ready;                 /* task loaded and reference data in place */
	int timeReference;         /* time the reference when it is ready */
	struct job *runq;          /* candidates in submission order; the head runs once compiled */
	strbuf inbuf;
	const char *zBackend;
	char *zPython;             /* interpreter for torch references */
	char *zCacheDir;
	int dev;
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

/* ---- dying candidates ---- */

static char crashMsg[NSIG][160];

static void on_fatal_signal(int sig)
{
	if (harness_in_candidate && crashMsg[sig][0])
		(void)!write(W.out, crashMsg[sig], strlen(crashMsg[sig]));
	signal(sig, SIG_DFL);
	raise(sig);
}

static void on_exit_hook(int status, void *arg)
{
	(void)arg;
	if (!harness_in_candidate)
		return;
	char buf[128];
	int n = snprintf(buf, sizeof buf, "{\"ev\":\"candidate_exit\",\"status\":%d}\n", status);
	(void)!write(W.out, buf, (size_t)n);
}

static void install_crash_reporting(void)
{
	static char stack[1 << 16];
	stack_t ss = {.ss_sp = stack, .ss_size = sizeof stack};
	sigaltstack(&ss, NULL);
	int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGSYS};
	for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) {
		int s = sigs[i];
		snprintf(crashMsg[s], sizeof crashMsg[s],
			 "{\"ev\":\"candidate_signal\",\"signal\":%d,\"name\":\"SIG%s\"}\n", s,
			 sigabbrev_np(s));
		struct sigaction sa = {0};
		sa.sa_handler = on_fatal_signal;
		sa.sa_flags = SA_ONSTACK | SA_RESETHAND;
		sigaction(s, &sa, NULL);
	}
	on_exit(on_exit_hook, NULL);
}

/* ---- running ---- */

static void job_free(struct job *j)
{
	free(j->zName);
	free(j->zSo);
	cJSON_Delete(j->compile);
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

static void pump_later(void)
{
	if (!pumpTimer)
		pumpTimer = loop_add_timer(W.l, 0, pump_later_fn, NULL);
}

static void progress_cb(const char *zStage, int k, void *arg)
{
	send_progress(*(int *)arg, zStage, k);
}

static const char *kl_run_missing =
	"the candidate does not define kl_run (it must have C linkage: extern \"C\" in C++ and CUDA)";

/* load j's shared object; returns the handle and sets *pfn, or NULL + err */
static void *load(struct job *j, kl_run_fn *pfn, char *err)
{
	dlerror();
	void *dl = dlopen(j->zSo, RTLD_NOW | RTLD_LOCAL);
	if (!dl)
		return kl_err(err, "the shared object could not be loaded: %s", dlerror()), NULL;
	*pfn = (kl_run_fn)(uintptr_t)dlsym(dl, "kl_run");
	if (!*pfn) {
		dlclose(dl);
		return kl_err(err, "%s", kl_run_missing), NULL;
	}
	return dl;
}

static void finish_reference(struct job *j)
{
	char err[KL_ERRLEN];
	kl_run_fn fn;
	if (!j->ok) {
		char *z = xasprintf("the reference %s does not compile:\n%s", j->zName,
				    cJSON_GetStringValue(cJSON_GetObjectItem(j->compile, "log")));
		send_error(-1, z, 1);
		free(z);
		exit(1);
	}
	void *dl = load(j, &fn, err);
	if (!dl || harness_run_reference(W.h, fn, err) < 0) {
		char *z = xasprintf("the reference %s failed: %s", j->zName, err);
		send_error(-1, z, 1);
		free(z);
		exit(1);
	}
	cJSON *o = ev("task_ready", -1);
	if (W.timeReference) {
		cJSON *tm = harness_time_only(W.h, fn, err);
		if (!tm) {
			char *z = xasprintf("timing the reference failed: %s", err);
			send_error(-1, z, 1);
			free(z);
			exit(1);
		}
		cJSON_AddItemToObject(o, "reference_timing", tm);
	}
	dlclose(dl);
	cJSON_AddStringToObject(o, "reference", j->zName);
	cJSON_AddStringToObject(o, "task", W.t->zName);
	W.ready = 1;
	send_json(o);
}

static void run_job(struct job *j)
{
	char err[KL_ERRLEN];
	double t0 = now_s();
	cJSON *res;
	kl_run_fn fn;
	send_progress(j->id, "running", -1);
	void *dl = j->ok ? load(j, &fn, err) : NULL;
	double tLoad = now_s() - t0;
	if (!j->ok) {
		res = cJSON_CreateObject();
		cJSON_AddStringToObject(res, "status", "compile_error");
		cJSON_AddStringToObject(res, "reason",
					cJSON_GetStringValue(cJSON_GetObjectItem(j->compile, "summary")));
	} else if (!dl) {
		res = cJSON_CreateObject();
		cJSON_AddStringToObject(res, "status", "compile_error");
		cJSON_AddStringToObject(res, "reason", err);
	} else {
		res = harness_eval(W.h, fn, 1, progress_cb, &j->id);
		dlclose(dl);
	}
	double tRun = now_s() - t0 - tLoad;
	cJSON *o = ev("result", j->id);
	cJSON *e;
	cJSON_ArrayForEach(e, res) if (strcmp(e->string, "check_seconds") && strcmp(e->string, "time_seconds"))
		cJSON_AddItemReferenceToObject(o, e->string, e);
	cJSON_AddItemReferenceToObject(o, "compile", j->compile);
	cJSON *sec = cJSON_AddObjectToObject(o, "seconds");
	cJSON_AddNumberToObject(sec, "compile", j->tCompile);
	cJSON_AddNumberToObject(sec, "load", tLoad);
	cJSON *cs = cJSON_GetObjectItem(res, "check_seconds"), *ts = cJSON_GetObjectItem(res, "time_seconds");
	cJSON_AddNumberToObject(sec, "check", cs ? cs->valuedouble : tRun);
	cJSON_AddNumberToObject(sec, "time", ts ? ts->valuedouble : 0);
	cJSON_AddBoolToObject(o, "worker_exiting", W.b->fatal);
	send_json(o);
	cJSON_Delete(res);
	if (W.b->fatal)
		exit(3);
}

static void pump(void)
{
	while (W.ready && W.runq && W.runq->compiled) {
		struct job *j = W.runq;
		W.runq = j->next;
		run_job(j);
		job_free(j);
	}
}

static void compiled(struct compile_result *r, void *arg)
{
	struct job *j = arg;
	j->ok = r->ok;
	j->tCompile = r->seconds;
	j->zSo = r->zSo ? xstrdup(r->zSo) : NULL;
	cJSON *c = cJSON_CreateObject();
	cJSON_AddBoolToObject(c, "ok", r->ok);
	cJSON_AddBoolToObject(c, "cached", r->cached);
	cJSON_AddNumberToObject(c, "seconds", r->seconds);
	cJSON_AddStringToObject(c, "command", r->zCommand);
	cJSON_AddStringToObject(c, "key", r->zKey);
	cJSON_AddStringToObject(c, "log", r->zLog);
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
	if (j->isReference) {
		finish_reference(j);
		job_free(j);
	} else {
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
		return kl_err(err, "%s: unknown source language (expected .c, .cpp or .cu)", j->zName);
	struct compile_req req = {zSrc, n, (enum compile_lang)lang, j->zName};
	return compiler_submit(W.comp, &req, compiled, j, err);
}

/* ---- requests ---- */

static int json_int(const cJSON *o, const char *k, int dflt)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	return cJSON_IsNumber(v) ? v->valueint : dflt;
}

static double json_num(const cJSON *o, const char *k, double dflt)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

static void fail_task(const char *zMsg)
{
	send_error(-1, zMsg, 1);
	exit(1);
}

static int ends_with(const char *z, const char *suffix)
{
	size_t n = strlen(z), m = strlen(suffix);
	return n >= m && !strcmp(z + n - m, suffix);
}

static struct torchref *prepare_torch(const char *zProblem, char *err)
{
	struct torchref_opts to = {W.zPython, W.zCacheDir, strcmp(W.zBackend, "cuda") ? "cpu" : "cuda",
				   /* always timed: the cache makes it a one-time cost, and the
				    * cache key must not depend on whether this worker is a restart */
				   W.opts.nTrials, W.opts.seed, 1, W.opts.budgetS};
	return torchref_prepare(zProblem, &to, err);
}

static void op_task(cJSON *req)
{
	char err[KL_ERRLEN];
	const char *zDir = cJSON_GetStringValue(cJSON_GetObjectItem(req, "dir"));
	const char *zShapes = cJSON_GetStringValue(cJSON_GetObjectItem(req, "shapes"));
	const char *zRef = cJSON_GetStringValue(cJSON_GetObjectItem(req, "reference"));
	struct torchref *tr = NULL;
	if (W.t) {
		send_error(-1, "a task is already loaded in this worker", 0);
		return;
	}
	if (!zDir) {
		send_error(-1, "task request without \"dir\"", 0);
		return;
	}
	harness_default_opts(&W.opts, W.zBackend);
	W.opts.nTrials = json_int(req, "trials", W.opts.nTrials);
	W.opts.seed = (uint64_t)json_num(req, "seed", (double)W.opts.seed);
	W.opts.budgetS = json_num(req, "budget_s", W.opts.budgetS);
	W.opts.rse = json_num(req, "rse", W.opts.rse);
	W.timeReference = cJSON_IsTrue(cJSON_GetObjectItem(req, "time_reference"));
	const char *zSrcPath = NULL;
	if (ends_with(zDir, ".py")) {
		/* a KernelBench problem file given directly */
		if (!(tr = prepare_torch(zDir, err)) || !(W.t = torchref_make_task(tr, zDir, err)))
			fail_task(err);
	} else {
		W.t = task_load(zDir, W.zBackend, zShapes, err);
		if (!W.t)
			fail_task(err);
		/* which reference: torch on the GPU where the task has one, else the backend's own */
		int cuda = !strcmp(W.zBackend, "cuda");
		if (!zRef)
			zRef = cuda && W.t->ref.zTorch ? "torch" : cuda && W.t->ref.zCuda ? "cuda" : "host";
		if (!strcmp(zRef, "torch")) {
			if (!W.t->ref.zTorch)
				fail_task("the task has no torch reference (reference.torch in task.json)");
			if (!(tr = prepare_torch(W.t->ref.zTorch, err)) ||
			    torchref_check_task(tr, W.t, err) < 0)
				fail_task(err);
		} else {
			zSrcPath = !strcmp(zRef, "cuda") ? W.t->ref.zCuda
				   : !strcmp(zRef, "host") ? W.t->ref.zHost
							   : NULL;
			if (!zSrcPath) {
				char *z = xasprintf("%s/task.json: reference.%s: the task has no such reference",
						    W.t->zDir, zRef);
				fail_task(z);
			}
			if (!strcmp(zRef, "cuda") && !cuda)
				fail_task("a cuda reference needs the cuda backend (--backend cuda)");
		}
	}
	W.h = harness_new(W.t, W.b, &W.opts, err);
	if (!W.h)
		fail_task(err);
	if (tr) {
		if (torchref_fill(tr, W.h, W.t, err) < 0)
			fail_task(err);
		cJSON *o = ev("task_ready", -1);
		const cJSON *tm = torchref_timing(tr);
		const cJSON *eager = tm ? cJSON_GetObjectItem(tm, "eager") : NULL;
		if (eager && cJSON_GetObjectItem(eager, "median_ms"))
			cJSON_AddItemToObject(o, "reference_timing", cJSON_Duplicate(eager, 1));
		if (tm)
			cJSON_AddItemToObject(o, "baselines", cJSON_Duplicate(tm, 1));
		cJSON_AddStringToObject(o, "reference", "PyTorch eager (reference.py)");
		cJSON_AddStringToObject(o, "task", W.t->zName);
		torchref_free(tr);
		W.ready = 1;
		send_json(o);
		pump_later();
		return;
	}
	if (harness_generate_inputs(W.h, err) < 0)
		fail_task(err);
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
	send_progress(id, "compiling", -1);
	if (submit_compile(j, src->valuestring, strlen(src->valuestring), err) < 0) {
		send_error(id, err, 0);
		job_free(j);
		return;
	}
	/* results come back in submission order; compiles run in parallel */
	struct job **pp = &W.runq;
	while (*pp)
		pp = &(*pp)->next;
	*pp = j;
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
	sb_add(&W.inbuf, buf, (size_t)r);
	char *nl;
	while (W.inbuf.buf && (nl = memchr(W.inbuf.buf, '\n', W.inbuf.len))) {
		size_t n = (size_t)(nl - W.inbuf.buf);
		char *line = xstrndup(W.inbuf.buf, n);
		sb_consume(&W.inbuf, n + 1);
		handle_line(line);
		free(line);
	}
}

/*
 * Limits a candidate runs under, so that exhausting them ends in a clear
 * crash of this worker rather than the machine's: files at most 1 GiB, and on
 * the host backend an address space of KLOOP_MEM_LIMIT_MB (default: half the
 * memory).  The CUDA runtime reserves huge address ranges, so the cuda
 * backend has no address-space limit.
 */
static void limit_resources(void)
{
	struct rlimit fs = {1ul << 30, 1ul << 30};
	setrlimit(RLIMIT_FSIZE, &fs);
	if (strcmp(W.zBackend, "host"))
		return;
	const char *env = getenv("KLOOP_MEM_LIMIT_MB");
	long long mb = env && *env ? atoll(env) : 0;
	if (mb <= 0) {
		long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);
		mb = pages > 0 && size > 0 ? (long long)pages * size / 2 / (1 << 20) : 0;
	}
	if (mb > 0) {
		struct rlimit as = {(rlim_t)mb << 20, (rlim_t)mb << 20};
		setrlimit(RLIMIT_AS, &as);
	}
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
	fprintf(stderr, "usage: kloop-worker [--backend host|cuda] [--device N] [--jobs N] [--cache DIR] "
			"[--python PATH]\n(kloop starts workers itself; see kloop eval)\n");
	return 2;
}

int main(int argc, char **argv)
{
	W.zBackend = "host";
	int jobs = (int)sysconf(_SC_NPROCESSORS_ONLN);
	char *zCache = NULL;
	W.zPython = xstrdup("python3");
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
		} else
			return usage();
	}
	if (strcmp(W.zBackend, "host") && strcmp(W.zBackend, "cuda"))
		return usage();
	/* the protocol moves to private descriptors; stdout joins stderr */
	W.in = fcntl(0, F_DUPFD_CLOEXEC, 100);
	W.out = fcntl(1, F_DUPFD_CLOEXEC, 100);
	if (W.in < 0 || W.out < 0) {
		fprintf(stderr, "kloop-worker: cannot set up the protocol channel: %s\n", strerror(errno));
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
	install_crash_reporting();

	char err[KL_ERRLEN];
	W.b = !strcmp(W.zBackend, "cuda") ? backend_cuda_new(W.dev, err) : backend_host_new(err);
	if (!W.b) {
		send_error(-1, err, 1);
		return 1;
	}
	W.zCacheDir = zCache ? zCache : default_cache_dir();
	char *soDir = path_join(W.zCacheDir, "so");
	W.l = loop_new();
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
	send_json(o);
	fd_nonblock(W.in);
	loop_add_fd(W.l, W.in, LOOP_READ, on_input, NULL);
	loop_run(W.l);
	return 0;
}
