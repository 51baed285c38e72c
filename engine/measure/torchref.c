/*
 * torchref.c - serves a PyTorch reference to the harness: runs the Python
 * helper (torchref.py --serve) beside the worker, reads its description of
 * in[] and out[], and has it write every set's inputs and reference outputs
 * straight into the harness's buffers (CUDA IPC on the GPU, a shared memory
 * file on the host), never through disk.
 */
#include "torchref.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "precision.h"
#include "proc.h"
#include "sha256.h"
#include "util.h"

struct torchref {
	cJSON *manifest; /* the helper's "describe": inputs, outputs, torch, device */
	pid_t pid;       /* the helper serving the problem, or 0 */
	int to, from;    /* its stdin (our end) and stdout (our end) */
	strbuf in;       /* bytes read from it, not yet a line */
	int memfd;       /* host backend: the shared memory one set is written to, or -1 */
	char *map;       /* that memory, mapped */
	size_t mapLen;
	char *zTimingPath; /* where the baselines' timing is cached */
	cJSON *timing;     /* the baselines' timing, or NULL */
	int timingCached;  /* it was read from the cache */
	/* torch.compile compiling in the background (torchref_timing's defer) */
	enum { COMPILE_NONE, COMPILE_RUNNING, COMPILE_OVER, COMPILE_TIMED } compile;
	int held;    /* stopped (SIGSTOP) by torchref_hold() */
	int nGpu;    /* benchmarks it ran on the GPU handed over */
	double gpuS; /* seconds the GPU was handed over for them */
	struct torchref_opts o;
	char *zProblem;
};

/* the file zProgram runs, links resolved: itself when it has a slash, else
 * the one found on $PATH (NULL: none); malloc'd */
static char *program_path(const char *zProgram)
{
	if (strchr(zProgram, '/'))
		return realpath(zProgram, NULL);
	char *z = path_search(zProgram);
	char *r = z ? realpath(z, NULL) : NULL;
	free(z);
	return r;
}

int torchref_has_torch(const char *zPython)
{
	char *argv[] = {(char *)zPython, "-c",
	                "import importlib.util, sys; "
	                "sys.exit(0 if importlib.util.find_spec('torch') else 3)",
	                NULL};
	char *out = NULL;
	int st = proc_capture(argv, &out, 1 << 12);
	free(out);
	if (st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 1;
	return st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 3 ? 0 : -1;
}

const char *torchref_python_with_torch(const char *zPython)
{
	static const char *const others[] = {"/usr/bin/python3", "/usr/local/bin/python3"};
	char *self = program_path(zPython ? zPython : "python3");
	const char *found = NULL;
	for (size_t i = 0; i < sizeof others / sizeof *others && !found; i++) {
		char *o = realpath(others[i], NULL);
		int same = o && self && !strcmp(o, self);
		free(o);
		if (!same && access(others[i], X_OK) == 0 && torchref_has_torch(others[i]) == 1)
			found = others[i];
	}
	free(self);
	return found;
}

/* a helper of this process was ended by SIGTERM (kloop ends them with
 * SIGKILL): see torchref_stopped */
static int gStopped;

int torchref_stopped(void)
{
	return gStopped;
}

static void note_status(int st)
{
	if (WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM)
		gStopped = 1;
}

const char *torchref_script(void)
{
	static char *p;
	if (p)
		return p;
	const char *env = getenv("KLOOP_TORCHREF");
	if (env && *env)
		return p = xstrdup(env);
	const char *cands[] = {"../engine/measure/torchref.py", "../share/kloop/torchref.py"};
	for (size_t i = 0; i < 2; i++) {
		char *q = path_join(exe_dir(), cands[i]);
		if (path_exists(q))
			return p = q;
		free(q);
	}
	return p = path_join(exe_dir(), "../engine/measure/torchref.py");
}

/* the last non-empty line of z */
static char *last_line(const char *z)
{
	const char *end = z + strlen(z);
	while (end > z && (end[-1] == '\n' || end[-1] == ' '))
		end--;
	const char *s = end;
	while (s > z && s[-1] != '\n')
		s--;
	return xstrndup(s, (size_t)(end - s));
}

void torchref_free(struct torchref *r)
{
	if (!r)
		return;
	if (r->pid > 0 && r->held)
		kill(r->pid, SIGCONT);
	if (r->pid > 0) {
		/* ask it to finish, then make sure it is gone */
		if (r->to >= 0)
			(void)!write(r->to, "{\"op\":\"quit\"}\n", 14);
		if (r->to >= 0)
			close(r->to);
		r->to = -1;
		double t0 = now_s();
		int st;
		while (waitpid(r->pid, &st, WNOHANG) == 0) {
			if (now_s() - t0 > 10) {
				proc_kill_group(r->pid);
				waitpid(r->pid, &st, 0);
				break;
			}
			usleep(10000);
		}
	}
	if (r->to >= 0)
		close(r->to);
	if (r->from >= 0)
		close(r->from);
	if (r->map)
		munmap(r->map, r->mapLen);
	if (r->memfd >= 0)
		close(r->memfd);
	sb_free(&r->in);
	cJSON_Delete(r->manifest);
	cJSON_Delete(r->timing);
	free(r->zTimingPath);
	free(r->zProblem);
	free(r);
}

/* the helper's next protocol line, parsed; NULL + err when it ended or
 * failed (its own {"ev": "error"} message when it sent one), or sent
 * nothing within limitS seconds (> 0: it is killed; zWhat says what it was
 * doing) */
static cJSON *recv_line_within(struct torchref *r, double limitS, const char *zWhat, char *err)
{
	double deadline = limitS > 0 ? now_s() + limitS : 0;
	for (;;) {
		char *nl = r->in.buf ? memchr(r->in.buf, '\n', r->in.len) : NULL;
		if (nl) {
			char *line = xstrndup(r->in.buf, (size_t)(nl - r->in.buf));
			sb_consume(&r->in, (size_t)(nl - r->in.buf) + 1);
			cJSON *o = cJSON_Parse(line);
			if (!o) {
				kl_err(err,
				       "the PyTorch helper sent a line that is not JSON: %.80s",
				       line);
				free(line);
				return NULL;
			}
			free(line);
			const char *ev = cJSON_GetStringValue(cJSON_GetObjectItem(o, "ev"));
			if (ev && !strcmp(ev, "error")) {
				const char *m =
				    cJSON_GetStringValue(cJSON_GetObjectItem(o, "message"));
				kl_err(err, "%s: %s", r->zProblem,
				       m ? m : "the PyTorch helper failed");
				cJSON_Delete(o);
				return NULL;
			}
			return o;
		}
		if (deadline > 0 || r->o.wait) {
			double left = deadline > 0 ? deadline - now_s() : 1;
			struct pollfd pf = {.fd = r->from, .events = POLLIN};
			int pr = poll(&pf, 1, 0);
			if (pr == 0 && left > 0 && r->o.wait) {
				/* the caller's loop runs meanwhile */
				r->o.wait(r->o.waitArg, r->from, deadline > 0 ? left : 0);
				continue;
			}
			if (pr == 0 && left > 0)
				pr = poll(&pf, 1, (int)(left * 1000) + 1);
			if (pr < 0 && errno == EINTR)
				continue;
			if (pr == 0) {
				if (r->pid > 0) {
					proc_kill_group(r->pid);
					waitpid(r->pid, NULL, 0);
					r->pid = 0;
				}
				kl_err(
				    err,
				    "%s: the PyTorch helper sent nothing for %g s while %s (the "
				    "--timeout limit): stopped; does the problem's forward return?",
				    r->zProblem, limitS, zWhat);
				return NULL;
			}
		}
		char buf[65536];
		ssize_t n = read(r->from, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int st = 0;
			char why[128] = "ended";
			if (r->pid > 0 && waitpid(r->pid, &st, 0) == r->pid) {
				note_status(st);
				proc_describe_status(st, why, sizeof why);
				r->pid = 0;
			}
			return kl_err(err,
			              "%s: the PyTorch helper %s (its messages are in the worker's "
			              "output)",
			              r->zProblem, why),
			       NULL;
		}
		sb_add(&r->in, buf, (size_t)n);
	}
}

static int send_req(struct torchref *r, cJSON *o, char *err)
{
	char *z = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	size_t n = strlen(z);
	z = xrealloc(z, n + 2);
	z[n] = '\n';
	int rc = write_all(r->to, z, n + 1);
	free(z);
	if (rc < 0 && r->pid > 0) {
		/* it closed its input: it is ending, or has ended; how says whether
		 * it was stopped from outside */
		int st;
		if (waitpid(r->pid, &st, 0) == r->pid) {
			note_status(st);
			r->pid = 0;
		}
	}
	return rc < 0 ? kl_err(err, "%s: the PyTorch helper is gone", r->zProblem) : 0;
}

/* the interpreter can be run and has torch (and CUDA when asked); 0 or -1 + err */
static int check_python(const char *py, const char *script, const char *zDevice, char *err)
{
	char *out = NULL;
	char *argvCheck[] = {(char *)py, (char *)script, "--check", NULL};
	int st = proc_capture(argvCheck, &out, 1 << 16);
	if (st < 0 || !WIFEXITED(st) || WEXITSTATUS(st) == 127) {
		free(out);
		return kl_err(err,
		              "the Python interpreter '%s' cannot be run (set it with --python or "
		              "python= in the config)",
		              py);
	}
	char *line = last_line(out ? out : "");
	free(out);
	cJSON *chk = cJSON_Parse(line);
	free(line);
	const char *torchVer = chk ? cJSON_GetStringValue(cJSON_GetObjectItem(chk, "torch")) : NULL;
	int rc = 0;
	if (!torchVer) {
		const char *why =
		    chk ? cJSON_GetStringValue(cJSON_GetObjectItem(chk, "error")) : NULL;
		rc = why && *why ? kl_err(err, "%s", why)
		                 : kl_err(err, "PyTorch is not installed for %s", py);
		const char *other = torchref_python_with_torch(py);
		if (other) {
			size_t n = strlen(err);
			snprintf(err + n, KL_ERRLEN - n,
			         "; %s has it: give --python %s (or python = %s in the config)",
			         other, other, other);
		}
	} else if (!strcmp(zDevice, "cuda") && !cJSON_IsTrue(cJSON_GetObjectItem(chk, "cuda"))) {
		rc = kl_err(err, "PyTorch %s for %s cannot use CUDA here", torchVer, py);
	}
	cJSON_Delete(chk);
	return rc;
}

/* the timing cache's path: problem text, torch, device, seed and sizes */
static char *timing_path(const struct torchref *r, char *err)
{
	strbuf src = STRBUF_INIT;
	if (read_file(r->zProblem, &src, 16 << 20, err) < 0) {
		sb_free(&src);
		return NULL;
	}
	const cJSON *m = r->manifest;
	char *sizes = cJSON_PrintUnformatted(cJSON_GetObjectItem(m, "sizes"));
	char *meta = xasprintf("torchref-timing-v2|%s|%s|%s|%llu|%s|%.17g",
	                       cJSON_GetStringValue(cJSON_GetObjectItem(m, "torch")),
	                       cJSON_GetStringValue(cJSON_GetObjectItem(m, "device")), r->o.zDevice,
	                       (unsigned long long)r->o.seed, sizes ? sizes : "", r->o.budgetS);
	struct sha256 h;
	char key[65];
	sha256_init(&h);
	sha256_update(&h, meta, strlen(meta) + 1);
	sha256_update(&h, src.buf, src.len);
	sha256_hex(&h, key);
	free(meta);
	free(sizes);
	sb_free(&src);
	return xasprintf("%s/torch/%s.timing.json", r->o.zCacheDir, key);
}

struct torchref *torchref_start(const char *zProblem, const struct torchref_opts *o, char *err)
{
	const char *py = o->zPython ? o->zPython : "python3";
	const char *script = torchref_script();
	if (!path_exists(script))
		return kl_err(err, "the PyTorch helper %s is missing (set KLOOP_TORCHREF)", script),
		       NULL;
	/* no check of torch first (that would import torch and start CUDA
	 * twice): a helper that fails to start is explained below; only an
	 * interpreter that is not there at all is said at once, in one line */
	char *zPy = program_path(py);
	int runnable = zPy && access(zPy, X_OK) == 0;
	free(zPy);
	if (!runnable) {
		if (check_python(py, script, o->zDevice, err) == 0)
			kl_err(err, "the Python interpreter '%s' cannot be run", py);
		return NULL;
	}
	/* torch.compile's own cache (inductor's compiled graphs and kernels)
	 * beside kloop's, where it outlives a reboot (its default is under
	 * /tmp): a baseline timed again (another --budget, seed or size)
	 * compiles from it in seconds */
	if (o->zCacheDir && !getenv("TORCHINDUCTOR_CACHE_DIR")) {
		char *z = xasprintf("%s/torch/inductor", o->zCacheDir);
		setenv("TORCHINDUCTOR_CACHE_DIR", z, 0);
		free(z);
	}
	struct torchref *r = xcalloc(1, sizeof *r);
	r->to = r->from = r->memfd = -1;
	r->o = *o;
	r->zProblem = xstrdup(zProblem);
	if (!strcmp(o->zDevice, "cpu")) {
		/* the host backend: one set at a time through shared memory */
		r->memfd = memfd_create("kloop-torchref", MFD_CLOEXEC);
		if (r->memfd < 0) {
			kl_err(err, "memfd_create: %s", strerror(errno));
			torchref_free(r);
			return NULL;
		}
	}
	int tp[2];
	if (pipe2(tp, O_CLOEXEC) < 0) {
		kl_err(err, "pipe: %s", strerror(errno));
		torchref_free(r);
		return NULL;
	}
	char seed[32], dev[16], size[40];
	snprintf(seed, sizeof seed, "%llu", (unsigned long long)o->seed);
	snprintf(dev, sizeof dev, "%d", o->cudaIndex);
	snprintf(size, sizeof size, "%.17g", o->size);
	const char *argv[24] = {py,       script,          "--serve",  "--problem",
	                        zProblem, "--device",      o->zDevice, "--seed",
	                        seed,     "--cuda-device", dev};
	int n = 11;
	if (o->zShapes && *o->zShapes) {
		argv[n++] = "--shapes";
		argv[n++] = o->zShapes;
	}
	if (o->size > 0) {
		argv[n++] = "--size";
		argv[n++] = size;
	}
	argv[n] = NULL;
	struct proc_spec ps = {.argv = (char *const *)argv,
	                       .stdinFd = tp[0],
	                       .stdoutFd = -1,
	                       .stderrFd = 2,
	                       .keepFd = {r->memfd},
	                       .nKeep = r->memfd >= 0};
	r->pid = proc_spawn(&ps, &r->from, NULL, err);
	close(tp[0]);
	r->to = tp[1];
	if (r->pid < 0) {
		r->pid = 0;
		torchref_free(r);
		check_python(py, script, o->zDevice, err); /* its words, when it finds why */
		return NULL;
	}
	int fl = fcntl(r->from, F_GETFL);
	fcntl(r->from, F_SETFL, fl & ~O_NONBLOCK);
	r->manifest = recv_line_within(r, o->timeoutS > 0 ? o->timeoutS + 60 : 0,
	                               "describing the problem (its first forward)", err);
	const char *ev =
	    r->manifest ? cJSON_GetStringValue(cJSON_GetObjectItem(r->manifest, "ev")) : NULL;
	if (!r->manifest || !ev || strcmp(ev, "describe")) {
		if (r->manifest)
			kl_err(err, "%s: the PyTorch helper did not describe the problem",
			       zProblem);
		torchref_free(r);
		/* an interpreter that cannot be run, or lacks torch or CUDA: said as
		 * such (and which other python3 has torch), not as the problem's fault */
		check_python(py, script, o->zDevice, err);
		return NULL;
	}
	r->zTimingPath = timing_path(r, err);
	if (!r->zTimingPath) {
		torchref_free(r);
		return NULL;
	}
	return r;
}

/* the last line of z that starts with '{' (the helper's JSON line), or NULL */
static char *json_line(const char *z)
{
	const char *best = NULL;
	for (const char *p = z; p && *p;) {
		if (*p == '{')
			best = p;
		const char *nl = strchr(p, '\n');
		p = nl ? nl + 1 : NULL;
	}
	if (!best)
		return NULL;
	const char *e = strchr(best, '\n');
	return xstrndup(best, e ? (size_t)(e - best) : strlen(best));
}

cJSON *torchref_describe(const char *zPython, const char *zProblem, const char *zShapes,
                         const char *zSize, double timeoutS, char *err)
{
	if (timeoutS <= 0)
		timeoutS = TORCHREF_DESCRIBE_S;
	const char *py = zPython ? zPython : "python3";
	if (!path_exists(zProblem))
		return kl_err(err, "%s: no such problem file", zProblem), NULL;
	const char *argv[16] = {py, torchref_script(), "--describe", "--problem", zProblem};
	int n = 5;
	if (zShapes && *zShapes) {
		argv[n++] = "--shapes";
		argv[n++] = zShapes;
	}
	if (zSize && *zSize) {
		argv[n++] = "--size";
		argv[n++] = zSize;
	}
	argv[n] = NULL;
	char *out = NULL;
	int timedOut = 0;
	int st = proc_capture_timeout((char *const *)argv, &out, 1 << 20, timeoutS, &timedOut);
	if (timedOut) {
		free(out);
		return kl_err(err,
		              "%s: the PyTorch helper did not describe the problem within %g s "
		              "(get_init_inputs(), get_inputs() or forward() may never return); it "
		              "was stopped",
		              zProblem, timeoutS),
		       NULL;
	}
	if (st < 0 || (WIFEXITED(st) && WEXITSTATUS(st) == 127)) {
		free(out);
		return kl_err(err,
		              "the Python interpreter '%s' cannot be run (set it with --python or "
		              "python= in the config)",
		              py),
		       NULL;
	}
	char *line = json_line(out ? out : "");
	cJSON *d = line ? cJSON_Parse(line) : NULL;
	free(line);
	const char *ev = d ? cJSON_GetStringValue(cJSON_GetObjectItem(d, "ev")) : NULL;
	if (!ev || strcmp(ev, "describe")) {
		const char *m = d ? cJSON_GetStringValue(cJSON_GetObjectItem(d, "message")) : NULL;
		char *l = m ? NULL : last_line(out ? out : "");
		char how[128] = "";
		/* the problem's own code ended the helper: a crash, or exit() */
		if (!m && (WIFSIGNALED(st) || (WIFEXITED(st) && WEXITSTATUS(st) != 0)))
			proc_describe_status(st, how, sizeof how);
		if (*how)
			kl_err(err, "%s: the PyTorch helper running the problem %s%s%s", zProblem,
			       how, *l ? "; its last line: " : " (it printed nothing)", l);
		else
			kl_err(err, "%s: %s", zProblem,
			       m    ? m
			       : *l ? l
			            : "the PyTorch helper failed");
		free(l);
		cJSON_Delete(d);
		free(out);
		return NULL;
	}
	free(out);
	cJSON_DeleteItemFromObject(d, "ev");
	return d;
}

char *torchref_tensors_text(const cJSON *desc)
{
	strbuf sb = STRBUF_INIT;
	for (int k = 0; k < 2; k++) {
		const cJSON *e;
		int i = 0;
		cJSON_ArrayForEach(e, cJSON_GetObjectItem(desc, k ? "outputs" : "inputs"))
		{
			const cJSON *x;
			int nd = 0;
			const char *kind = cJSON_GetStringValue(cJSON_GetObjectItem(e, "kind"));
			sb_addf(&sb, "%s[%d] %s: %s [", k ? "out" : "in", i++,
			        cJSON_GetStringValue(cJSON_GetObjectItem(e, "name")),
			        cJSON_GetStringValue(cJSON_GetObjectItem(e, "dtype")));
			cJSON_ArrayForEach(x, cJSON_GetObjectItem(e, "shape"))
			    sb_addf(&sb, "%s%.0f", nd++ ? ", " : "", x->valuedouble);
			sb_adds(&sb, "]");
			if (kind)
				sb_addf(&sb, " (%s)",
				        !strcmp(kind, "input") ? "forward() input" : kind);
			sb_adds(&sb, "\n");
		}
	}
	return sb_detach(&sb);
}

const cJSON *torchref_manifest(const struct torchref *r)
{
	return r->manifest;
}

/* cache the baselines' timing (a cache: failing to write it loses nothing) */
static void save_timing(struct torchref *r)
{
	char e2[KL_ERRLEN];
	char *z = cJSON_PrintUnformatted(r->timing);
	char *dir = xstrdup(r->zTimingPath);
	*strrchr(dir, '/') = 0;
	if (mkdir_p(dir, e2) == 0)
		write_file_atomic(r->zTimingPath, z, strlen(z), e2);
	free(dir);
	free(z);
}

const cJSON *torchref_timing(struct torchref *r, struct harness *h, int defer, char *err)
{
	if (r->timing)
		return r->timing;
	strbuf sb = STRBUF_INIT;
	char e2[KL_ERRLEN];
	if (path_exists(r->zTimingPath) && read_file(r->zTimingPath, &sb, 1 << 20, e2) == 0) {
		r->timing = cJSON_Parse(sb.buf);
		sb_free(&sb);
		if (cJSON_IsObject(r->timing)) {
			r->timingCached = 1;
			return r->timing;
		}
		cJSON_Delete(r->timing);
		r->timing = NULL;
	}
	sb_free(&sb);
	cJSON *q = cJSON_CreateObject();
	cJSON_AddStringToObject(q, "op", "time");
	/* the timing set's */
	double seed = (double)(r->o.seed + 1 + (uint64_t)(harness_nsets(h) - 1));
	cJSON_AddNumberToObject(q, "seed", seed);
	cJSON_AddNumberToObject(q, "budget_ms", r->o.budgetS * 1000);
	if (defer)
		cJSON_AddStringToObject(q, "compile", "defer");
	if (send_req(r, q, err) < 0)
		return NULL;
	cJSON *a = recv_line_within(r, 0, NULL, err);
	if (!a)
		return NULL;
	cJSON *tm = cJSON_DetachItemFromObject(a, "timing");
	cJSON_Delete(a);
	if (!cJSON_IsObject(tm)) {
		cJSON_Delete(tm);
		return kl_err(err, "%s: the PyTorch helper sent no timing", r->zProblem), NULL;
	}
	r->timing = tm;
	const cJSON *cm = cJSON_GetObjectItem(tm, "compile");
	if (!cJSON_IsTrue(cJSON_GetObjectItem(cm, "pending"))) {
		save_timing(r);
		return r->timing;
	}
	/* the eager model alone was timed: torch.compile compiles from now on,
	 * in the background (torchref_service), and is timed later.  From here
	 * the helper is served between the caller's own work, never by running
	 * the caller's loop from inside a call (that loop is what calls us) */
	r->o.wait = NULL;
	q = cJSON_CreateObject();
	cJSON_AddStringToObject(q, "op", "compile");
	cJSON_AddNumberToObject(q, "seed", seed);
	if (send_req(r, q, err) < 0)
		return NULL;
	r->compile = COMPILE_RUNNING;
	return r->timing;
}

int torchref_compile_pending(const struct torchref *r)
{
	return r && (r->compile == COMPILE_RUNNING || r->compile == COMPILE_OVER);
}

int torchref_fd(const struct torchref *r)
{
	return r->from;
}

void torchref_hold(struct torchref *r, int hold)
{
	if (!r || r->pid <= 0 || r->compile != COMPILE_RUNNING || r->held == !!hold)
		return;
	/* the helper's own process only: torch.compile's compile workers go on
	 * with their CPU work, and only the helper touches the GPU */
	kill(r->pid, hold ? SIGSTOP : SIGCONT);
	r->held = !!hold;
}

/* the background compile's record in the baselines: rec (taken) */
static void set_compile(struct torchref *r, cJSON *rec)
{
	if (cJSON_IsObject(rec)) {
		cJSON_AddNumberToObject(rec, "benchmarks", r->nGpu);
		cJSON_AddNumberToObject(rec, "benchmark_seconds", r->gpuS);
		cJSON_AddBoolToObject(rec, "background", 1);
	}
	cJSON_ReplaceItemInObject(r->timing, "compile", rec);
}

/* the background compile failed with err: the baselines say so, and the
 * helper is ended */
static int compile_lost(struct torchref *r, const char *err)
{
	cJSON *rec = cJSON_CreateObject();
	char *z = xasprintf("torch.compile failed: %s", err);
	cJSON_AddStringToObject(rec, "error", z);
	free(z);
	set_compile(r, rec);
	r->compile = COMPILE_TIMED;
	torchref_kill(r);
	return -1;
}

/* a complete line the helper has sent, reading only what is there; NULL
 * when none (*pGone: it ended) */
static cJSON *line_now(struct torchref *r, int *pGone, char *err)
{
	*pGone = 0;
	struct pollfd pf = {.fd = r->from, .events = POLLIN};
	if (!(r->in.buf && memchr(r->in.buf, '\n', r->in.len)) && poll(&pf, 1, 0) <= 0)
		return NULL;
	cJSON *o = recv_line_within(r, 0, NULL, err);
	*pGone = !o;
	return o;
}

int torchref_service(struct torchref *r, char *err)
{
	if (r->compile != COMPILE_RUNNING)
		return r->compile == COMPILE_NONE ? 0 : 1;
	torchref_hold(r, 0);
	int rc = 0, gone;
	cJSON *o;
	while (rc == 0 && (o = line_now(r, &gone, err))) {
		const char *ev = cJSON_GetStringValue(cJSON_GetObjectItem(o, "ev"));
		if (ev && !strcmp(ev, "gpu")) {
			/* a benchmark of inductor's: the GPU is the helper's until it says done */
			double t0 = now_s(), limit = r->o.timeoutS > 600 ? r->o.timeoutS : 600;
			cJSON *done = NULL;
			if (send_req(r, cJSON_Parse("{\"op\":\"go\"}"), err) == 0)
				done = recv_line_within(
				    r, limit, "benchmarking a kernel for torch.compile", err);
			const char *dv = cJSON_GetStringValue(cJSON_GetObjectItem(done, "ev"));
			if (!done || !dv || strcmp(dv, "gpu_done")) {
				if (done)
					kl_err(err,
					       "the PyTorch helper sent \"%s\" instead of gpu_done",
					       dv ? dv : "?");
				rc = compile_lost(r, err);
			} else {
				r->nGpu++;
				r->gpuS += now_s() - t0;
			}
			cJSON_Delete(done);
		} else if (ev && !strcmp(ev, "compiled")) {
			r->compile = COMPILE_OVER;
			if (cJSON_GetObjectItem(o, "error")) {
				cJSON *rec = cJSON_CreateObject();
				cJSON_AddItemToObject(rec, "error",
				                      cJSON_DetachItemFromObject(o, "error"));
				set_compile(r, rec);
				r->compile = COMPILE_TIMED;
				save_timing(r); /* as a compile that fails in the foreground */
			}
			rc = 1;
		} else {
			kl_err(err, "the PyTorch helper sent \"%s\" while compiling",
			       ev ? ev : "?");
			rc = compile_lost(r, err);
		}
		cJSON_Delete(o);
	}
	if (rc == 0 && gone)
		rc = compile_lost(r, err);
	return rc;
}

const cJSON *torchref_time_compile(struct torchref *r, char *err)
{
	if (r->compile != COMPILE_OVER)
		return r->timing;
	cJSON *q = cJSON_CreateObject();
	cJSON_AddStringToObject(q, "op", "time_compile");
	cJSON_AddNumberToObject(q, "budget_ms", r->o.budgetS * 1000);
	cJSON *a = send_req(r, q, err) == 0 ? recv_line_within(r, 0, NULL, err) : NULL;
	if (!a) {
		compile_lost(r, err);
		return r->timing;
	}
	cJSON *rec = cJSON_DetachItemFromObject(a, "compile");
	cJSON_Delete(a);
	if (!cJSON_IsObject(rec)) {
		cJSON_Delete(rec);
		compile_lost(r, "the PyTorch helper sent no timing of the compiled model");
		return r->timing;
	}
	set_compile(r, rec);
	r->compile = COMPILE_TIMED;
	save_timing(r);
	return r->timing;
}

int torchref_timing_cached(const struct torchref *r)
{
	return r->timingCached;
}

static int tensor_from(const cJSON *e, struct task_tensor *t, const char *zWhere, char *err)
{
	const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(e, "name"));
	const char *dt = cJSON_GetStringValue(cJSON_GetObjectItem(e, "dtype"));
	const cJSON *sh = cJSON_GetObjectItem(e, "shape");
	if (!name || !dt || task_dtype_parse(dt, &t->dtype) < 0 || !cJSON_IsArray(sh))
		return kl_err(err, "the PyTorch manifest's %s entry is malformed", zWhere);
	t->zName = xstrdup(name);
	t->ndim = cJSON_GetArraySize(sh);
	if (t->ndim > 8)
		return kl_err(err, "%s %s has %d dimensions; at most 8 are supported", zWhere, name,
		              t->ndim);
	for (int i = 0; i < t->ndim; i++) {
		/* checked before the conversion: NaN or 1e300 into int64_t is undefined */
		double v = cJSON_GetNumberValue(cJSON_GetArrayItem(sh, i));
		if (!(v >= 1 && v <= TASK_DIM_MAX) || v != floor(v))
			return kl_err(
			    err, "%s %s: dimension %d is %g, not a positive integer of at most %g",
			    zWhere, name, i, v, TASK_DIM_MAX);
		t->shape[i] = (int64_t)v;
	}
	int64_t bytes;
	if (task_bytes_checked(t, &bytes) < 0 || bytes > TASK_BYTES_MAX)
		return kl_err(err, "%s %s: the tensor is over the limit of %lld bytes (16 GiB)",
		              zWhere, name, (long long)TASK_BYTES_MAX);
	/* a 0-dim tensor (a scalar) stays ndim 0: one element, shape [] */
	return 0;
}

struct task *torchref_make_task(const struct torchref *r, const char *zProblem, char *err)
{
	struct task *t = xcalloc(1, sizeof *t);
	const char *slash = strrchr(zProblem, '/');
	const char *base = slash ? slash + 1 : zProblem;
	const char *dot = strrchr(base, '.');
	t->zName = xstrndup(base, dot ? (size_t)(dot - base) : strlen(base));
	t->zDir = slash ? xstrndup(zProblem, (size_t)(slash - zProblem)) : xstrdup(".");
	t->zDescription = xasprintf("KernelBench problem %s", base);
	t->zShapeSet = xstrdup("");
	t->ref.zTorch = xstrdup(zProblem);
	task_use_kernelbench_tol(t); /* KernelBench's own allclose tolerances */
	const cJSON *ins = cJSON_GetObjectItem(r->manifest, "inputs");
	const cJSON *outs = cJSON_GetObjectItem(r->manifest, "outputs");
	int ni = cJSON_GetArraySize(ins), no = cJSON_GetArraySize(outs);
	if (ni > TASK_MAX_TENSORS || no > TASK_MAX_TENSORS || no < 1) {
		kl_err(
		    err,
		    "%s: %d inputs and %d outputs; kloop supports 0..%d inputs and 1..%d outputs",
		    zProblem, ni, no, TASK_MAX_TENSORS, TASK_MAX_TENSORS);
		task_free(t);
		return NULL;
	}
	for (int i = 0; i < ni; i++, t->nIn++)
		if (tensor_from(cJSON_GetArrayItem(ins, i), &t->aIn[i], "input", err) < 0) {
			t->nIn++;
			task_free(t);
			return NULL;
		}
	for (int i = 0; i < no; i++, t->nOut++)
		if (tensor_from(cJSON_GetArrayItem(outs, i), &t->aOut[i], "output", err) < 0) {
			t->nOut++;
			task_free(t);
			return NULL;
		}
	return t;
}

static int match(const cJSON *arr, const struct task_tensor *a, int n, const char *zWhat,
                 const struct task *t, char *err)
{
	if (cJSON_GetArraySize(arr) != n)
		return kl_err(err, "%s/task.json: %s: the task has %d, reference.py gives %d",
		              t->zDir, zWhat, n, cJSON_GetArraySize(arr));
	for (int i = 0; i < n; i++) {
		struct task_tensor m = {0};
		if (tensor_from(cJSON_GetArrayItem(arr, i), &m, zWhat, err) < 0) {
			free(m.zName);
			return -1;
		}
		int same = m.dtype == a[i].dtype && m.ndim == a[i].ndim;
		for (int k = 0; same && k < m.ndim; k++)
			same = m.shape[k] == a[i].shape[k];
		if (!same) {
			char *want = task_shape_str(&a[i]), *got = task_shape_str(&m);
			kl_err(err,
			       "%s/task.json: %s[%d] (%s): the task says %s %s for shape set '%s', "
			       "reference.py gives %s %s (%s); pick the matching --shapes or "
			       "--reference",
			       t->zDir, zWhat, i, a[i].zName, task_dtype_name(a[i].dtype), want,
			       t->zShapeSet, task_dtype_name(m.dtype), got, m.zName);
			free(want);
			free(got);
			free(m.zName);
			return -1;
		}
		free(m.zName);
	}
	return 0;
}

int torchref_check_task(const struct torchref *r, const struct task *t, char *err)
{
	if (match(cJSON_GetObjectItem(r->manifest, "inputs"), t->aIn, t->nIn, "inputs", t, err) < 0)
		return -1;
	return match(cJSON_GetObjectItem(r->manifest, "outputs"), t->aOut, t->nOut, "outputs", t,
	             err);
}

/* a target for the helper: the device buffer's IPC handle, or bytes of the
 * shared memory at *pOff (advanced) */
static cJSON *target(struct torchref *r, struct backend *b, void *dev, size_t n, size_t *pOff,
                     char *err)
{
	cJSON *o = cJSON_CreateObject();
	if (r->memfd >= 0) {
		cJSON_AddNumberToObject(o, "memfd", r->memfd);
		cJSON_AddNumberToObject(o, "offset", (double)*pOff);
		*pOff += (n + 63) & ~(size_t)63;
		return o;
	}
	char hex[130];
	if (!b->share_handle) {
		cJSON_Delete(o);
		return kl_err(err, "the %s backend cannot share its buffers", b->zName), NULL;
	}
	if (b->share_handle(b, dev, hex, err) < 0) {
		cJSON_Delete(o);
		return NULL;
	}
	cJSON_AddStringToObject(o, "ipc", hex);
	return o;
}

/* the host backend's shared memory, sized once for a set of every tensor,
 * each output as large as its float64 copy would be (torchref_fill64) */
static int map_sets(struct torchref *r, const struct task *t, char *err)
{
	if (r->memfd < 0 || r->map)
		return 0;
	size_t need = 64;
	for (int i = 0; i < t->nIn; i++)
		need += (task_tensor_bytes(&t->aIn[i]) + 63) & ~(size_t)63;
	for (int j = 0; j < t->nOut; j++) {
		size_t n = task_tensor_bytes(&t->aOut[j]),
		       n64 = (size_t)task_numel(&t->aOut[j]) * 8;
		need += ((n > n64 ? n : n64) + 63) & ~(size_t)63;
	}
	if (ftruncate(r->memfd, (off_t)need) < 0)
		return kl_err(err, "sizing the shared memory (%zu bytes): %s", need,
		              strerror(errno));
	r->map = mmap(NULL, need, PROT_READ | PROT_WRITE, MAP_SHARED, r->memfd, 0);
	if (r->map == MAP_FAILED) {
		r->map = NULL;
		return kl_err(err, "mapping the shared memory (%zu bytes): %s", need,
		              strerror(errno));
	}
	r->mapLen = need;
	return 0;
}

/*
 * One set s of h made by the helper from the seed of set `from`: "fill"
 * (in[] and the outputs) or "fill64" (the outputs in float64 of the model
 * in float64, its float inputs and parameters rounded to `bits` mantissa
 * bits first where bits > 0, truncated to -bits where bits < 0).
 */
static int fill_set(struct torchref *r, struct harness *h, struct backend *b, int s, int from,
                    const char *zOp, int bits, char *err)
{
	const struct task *t = harness_task(h);
	int b64 = !strcmp(zOp, "fill64");
	cJSON *q = cJSON_CreateObject();
	cJSON_AddStringToObject(q, "op", zOp);
	cJSON_AddNumberToObject(q, "set", s);
	cJSON_AddNumberToObject(q, "seed", (double)(r->o.seed + 1 + (uint64_t)from));
	if (b64) {
		cJSON_AddNumberToObject(q, "round", bits < 0 ? -bits : bits);
		cJSON_AddBoolToObject(q, "truncate", bits < 0);
	} else {
		cJSON_AddNumberToObject(q, "vary", harness_vary_of(h, s));
	}
	cJSON *ins = cJSON_AddArrayToObject(q, "inputs");
	cJSON *outs = cJSON_AddArrayToObject(q, "outputs");
	size_t off = 0, offIn[TASK_MAX_TENSORS], offOut[TASK_MAX_TENSORS];
	for (int k = b64; k < 2; k++) {
		int n = k ? t->nOut : t->nIn;
		for (int i = 0; i < n; i++) {
			const struct task_tensor *tt = k ? &t->aOut[i] : &t->aIn[i];
			void *dev = k ? harness_expected_buf(h, s, i) : harness_input_buf(h, s, i);
			(k ? offOut : offIn)[i] = off;
			cJSON *o = target(r, b, dev, task_tensor_bytes(tt), &off, err);
			if (!o) {
				cJSON_Delete(q);
				return -1;
			}
			if (b64)
				cJSON_AddStringToObject(o, "dtype", task_dtype_name(tt->dtype));
			cJSON_AddItemToArray(k ? outs : ins, o);
		}
	}
	if (send_req(r, q, err) < 0)
		return -1;
	char what[64];
	snprintf(what, sizeof what, "computing set %d (the forward%s)", s,
	         b64 ? " in float64" : "");
	cJSON *a = recv_line_within(r, r->o.timeoutS, what, err);
	if (!a)
		return -1;
	if (!b64) /* how its inputs were varied, and what was out of the problem's domain */
	{
		const cJSON *va = cJSON_GetObjectItem(a, "varied"),
		            *un = cJSON_GetObjectItem(a, "unsound");
		harness_note_vary(h, s, cJSON_IsNumber(va) ? va->valueint : 0,
		                  cJSON_IsNumber(un) ? un->valueint : 0);
	}
	cJSON_Delete(a);
	if (r->memfd < 0)
		return 0;
	/* the host backend: copy the set out of the shared memory */
	for (int i = 0; !b64 && i < t->nIn; i++)
		if (harness_set_input(h, s, i, r->map + offIn[i], err) < 0)
			return -1;
	for (int j = 0; j < t->nOut; j++)
		if (harness_set_expected(h, s, j, r->map + offOut[j], err) < 0)
			return -1;
	return 0;
}

int torchref_fill(struct torchref *r, struct harness *h, struct backend *b, const struct task *t,
                  char *err)
{
	if (map_sets(r, t, err) < 0)
		return -1;
	for (int s = 0; s < harness_nsets(h); s++)
		if (fill_set(r, h, b, s, s, "fill", 0, err) < 0)
			return -1;
	return 0;
}

int torchref_fill64(struct torchref *r, struct harness *h64, struct backend *b, int hTiming,
                    char *err)
{
	if (map_sets(r, harness_task(h64), err) < 0)
		return -1;
	int nTrials = harness_options(h64)->nTrials, nSets = harness_nsets(h64);
	for (int s = 0; s <= nTrials; s++) /* the trials kept, then h's timing set */
		if (fill_set(r, h64, b, s, s < nTrials ? s : hTiming, "fill64", 0, err) < 0)
			return -1;
	for (int k = 0; k < PRECISION_NEMU && nTrials + 1 + k < nSets; k++) {
		int tr, bits = precision_emu_bits(k, &tr);
		if (fill_set(r, h64, b, nTrials + 1 + k, 0, "fill64", tr ? -bits : bits, err) < 0)
			return -1;
	}
	return 0;
}

void torchref_kill(struct torchref *r)
{
	if (r && r->pid > 0) {
		proc_kill_group(r->pid);
		waitpid(r->pid, NULL, 0);
		r->pid = 0;
	}
}

int torchref_finish(struct torchref *r, char *err)
{
	if (r->pid <= 0)
		return 0;
	if (r->held)
		kill(r->pid, SIGCONT), r->held = 0;
	if (send_req(r, cJSON_Parse("{\"op\":\"quit\"}"), err) < 0)
		return -1;
	cJSON *a = recv_line_within(r, 0, NULL, err);
	if (!a)
		return -1;
	cJSON_Delete(a);
	close(r->to);
	r->to = -1;
	int st;
	if (waitpid(r->pid, &st, 0) == r->pid)
		note_status(st);
	/* it ends itself at once after "bye" (torchref.py): what it started,
	 * torch.compile's compile workers, goes with its process group */
	kill(-r->pid, SIGKILL); /* the group only: the pid itself is reaped */
	r->pid = 0;
	return 0;
}
