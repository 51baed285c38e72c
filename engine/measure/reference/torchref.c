/*
 * torchref.c - serves a PyTorch reference to the harness: runs the Python
 * helper (torchref.py --serve) beside the worker, reads its description of
 * in[] and out[], and has it write every set's inputs and reference outputs
 * straight into the harness's buffers (CUDA IPC on the GPU, a shared memory
 * file on the host), never through disk.  This file: the helper's process
 * and its lines; the problem: torchref_task.c; the baselines' timing:
 * torchref_timing.c (torchref_priv.h).
 */
#include "torchref_priv.h"

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

#include "proc.h"
#include "sha256.h"

/* how long the end of the helper waits for what it started (torch.compile's
 * workers, a problem's own processes) to be gone after its group's SIGKILL */
#define GROUP_GONE_S 2.0

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

char *torchref_sibling(const char *zFile, const char *zEnv)
{
	const char *env = getenv(zEnv);
	if (env && *env)
		return xstrdup(env);
	const char *t = torchref_script();
	const char *slash = strrchr(t, '/');
	char *dir = slash ? xstrndup(t, (size_t)(slash - t)) : xstrdup(".");
	char *p = path_join(dir, zFile);
	free(dir);
	return p;
}

const char *torchref_script(void)
{
	static char *p;
	if (p)
		return p;
	const char *env = getenv("KLOOP_TORCHREF");
	if (env && *env)
		return p = xstrdup(env);
	const char *cands[] = {"../engine/measure/reference/torchref.py",
	                       "../share/kloop/torchref.py"};
	for (size_t i = 0; i < 2; i++) {
		char *q = path_join(exe_dir(), cands[i]);
		if (path_exists(q))
			return p = q;
		free(q);
	}
	return p = path_join(exe_dir(), "../engine/measure/reference/torchref.py");
}

/* the last non-empty line of z */
char *torchref_last_line(const char *z)
{
	const char *end = z + strlen(z);
	while (end > z && (end[-1] == '\n' || end[-1] == ' '))
		end--;
	const char *s = end;
	while (s > z && s[-1] != '\n')
		s--;
	return xstrndup(s, (size_t)(end - s));
}

/* end the helper: ask it to finish, then make sure it is gone (within 10 s) */
static void end_helper(struct torchref *r)
{
	if (r->pid > 0 && r->held)
		kill(r->pid, SIGCONT);
	if (r->pid > 0) {
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
		(void)proc_group_gone(r->pid, GROUP_GONE_S);
		r->pid = 0;
	}
}

/* the buffers of the harness's source (torchref_draw.c) and their targets */
void torchref_draw_free(struct torchref *r)
{
	for (int i = 0; i < TASK_MAX_TENSORS; i++) {
		if (r->drawOwned && r->apDrawIn[i])
			r->srcB->release(r->srcB, r->apDrawIn[i]);
		if (r->drawOwned && r->apDrawOut[i])
			r->srcB->release(r->srcB, r->apDrawOut[i]);
		r->apDrawIn[i] = r->apDrawOut[i] = NULL;
	}
	r->drawOwned = 0;
	cJSON_Delete(r->drawIns);
	cJSON_Delete(r->drawOuts);
	r->drawIns = r->drawOuts = NULL;
}

void torchref_free(struct torchref *r)
{
	if (!r)
		return;
	end_helper(r);
	if (r->to >= 0)
		close(r->to);
	if (r->from >= 0)
		close(r->from);
	torchref_draw_free(r);
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

/* a complete line already read from the helper, parsed: 1 and *pOut, 0
 * when no line is complete, -1 + err when it is not JSON or is the
 * helper's {"ev": "error"} (its own message) */
static int parse_line(struct torchref *r, cJSON **pOut, char *err)
{
	char *nl = r->in.buf ? memchr(r->in.buf, '\n', r->in.len) : NULL;
	if (!nl)
		return 0;
	char *line = xstrndup(r->in.buf, (size_t)(nl - r->in.buf));
	sb_consume(&r->in, (size_t)(nl - r->in.buf) + 1);
	cJSON *o = cJSON_Parse(line);
	if (!o) {
		kl_err(err, "the PyTorch helper sent a line that is not JSON: %.80s", line);
		free(line);
		return -1;
	}
	free(line);
	const char *ev = cJSON_GetStringValue(cJSON_GetObjectItem(o, "ev"));
	if (ev && !strcmp(ev, "error")) {
		const char *m = cJSON_GetStringValue(cJSON_GetObjectItem(o, "message"));
		kl_err(err, "%s: %s", r->zProblem, m ? m : "the PyTorch helper failed");
		cJSON_Delete(o);
		return -1;
	}
	*pOut = o;
	return 1;
}

/* read what the helper sent (waits when nothing is there): 0, or -1 + err
 * when it ended (reaped: how it ended is said) */
static int read_some(struct torchref *r, char *err)
{
	char buf[65536];
	ssize_t n = read(r->from, buf, sizeof buf);
	if (n < 0 && errno == EINTR)
		return 0;
	if (n <= 0) {
		int st = 0;
		char why[128] = "ended";
		if (r->pid > 0 && waitpid(r->pid, &st, 0) == r->pid) {
			note_status(st);
			proc_describe_status(st, why, sizeof why);
			r->pid = 0;
		}
		return kl_err(err,
		              "%s: the PyTorch helper %s (its messages are in the worker's output)",
		              r->zProblem, why);
	}
	sb_add(&r->in, buf, (size_t)n);
	return 0;
}

/* the helper sent nothing within limitS seconds while zWhat: it is
 * stopped; -1 + err */
static int late(struct torchref *r, double limitS, const char *zWhat, char *err)
{
	if (r->pid > 0) {
		proc_kill_group(r->pid);
		waitpid(r->pid, NULL, 0);
		(void)proc_group_gone(r->pid, GROUP_GONE_S);
		r->pid = 0;
	}
	return kl_err(err,
	              "%s: the PyTorch helper sent nothing for %g s while %s (the --timeout "
	              "limit): stopped; does the problem's forward return?",
	              r->zProblem, limitS, zWhat);
}

/* the helper's next protocol line, parsed; NULL + err when it ended or
 * failed (its own {"ev": "error"} message when it sent one), or sent
 * nothing within limitS seconds (> 0: it is killed; zWhat says what it was
 * doing) */
cJSON *torchref_recv_line(struct torchref *r, double limitS, const char *zWhat, char *err)
{
	double deadline = limitS > 0 ? now_s() + limitS : 0;
	for (;;) {
		cJSON *o = NULL;
		int rc = parse_line(r, &o, err);
		if (rc)
			return rc > 0 ? o : NULL;
		if (deadline > 0) {
			double left = deadline - now_s();
			struct pollfd pf = {.fd = r->from, .events = POLLIN};
			int pr = poll(&pf, 1, left > 0 ? (int)(left * 1000) + 1 : 0);
			if (pr < 0 && errno == EINTR)
				continue;
			if (pr == 0)
				return late(r, limitS, zWhat, err), NULL;
		}
		if (read_some(r, err) < 0)
			return NULL;
	}
}

int torchref_send(struct torchref *r, cJSON *o, char *err)
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
	char *line = torchref_last_line(out ? out : "");
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

/* the start's reply (torchref_await) */
static int described(struct torchref *r, cJSON *m, char *err);

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
	torchref_await(r, STEP_DESCRIBE, described, o->timeoutS > 0 ? o->timeoutS + 60 : 0,
	               "describing the problem (its first forward)");
	return r;
}

/* the start's step failed (err): the helper is ended, and an interpreter
 * that cannot be run, or lacks torch or CUDA, is said as such (and which
 * other python3 has torch), not as the problem's fault */
static int describe_failed(struct torchref *r, char *err)
{
	end_helper(r);
	const char *py = r->o.zPython ? r->o.zPython : "python3";
	check_python(py, torchref_script(), r->o.zDevice, err);
	return -1;
}

/* the start's reply: the helper's description of the problem */
static int described(struct torchref *r, cJSON *m, char *err)
{
	r->manifest = m;
	const char *ev = cJSON_GetStringValue(cJSON_GetObjectItem(m, "ev"));
	if (!ev || strcmp(ev, "describe")) {
		kl_err(err, "%s: the PyTorch helper did not describe the problem", r->zProblem);
		return describe_failed(r, err);
	}
	r->zTimingPath = timing_path(r, err);
	if (!r->zTimingPath) {
		end_helper(r);
		return -1;
	}
	return 1;
}

void torchref_await(struct torchref *r, int step, torchref_reply_fn reply, double limitS,
                    const char *zWhat)
{
	r->step = step;
	r->onReply = reply;
	r->limitS = limitS;
	r->deadline = limitS > 0 ? now_s() + limitS : 0;
	snprintf(r->zWhat, sizeof r->zWhat, "%s", zWhat ? zWhat : "");
}

/* the end's reply: "bye" */
static int finished(struct torchref *r, cJSON *o, char *err)
{
	(void)err;
	cJSON_Delete(o);
	close(r->to);
	r->to = -1;
	int st;
	if (waitpid(r->pid, &st, 0) == r->pid)
		note_status(st);
	/* it ends itself at once after "bye" (torchref.py): what it started,
	 * torch.compile's compile workers, goes with its process group */
	kill(-r->pid, SIGKILL); /* the group only: the pid itself is reaped */
	(void)proc_group_gone(r->pid, GROUP_GONE_S);
	r->pid = 0;
	return 1;
}

/* line o (taken) answers the step under way (its reply, torchref_await):
 * 1 done, 0 awaits more, -1 + err */
static int reply(struct torchref *r, cJSON *o, char *err)
{
	if (r->step != STEP_NONE && r->onReply)
		return r->onReply(r, o, err);
	cJSON_Delete(o);
	return 1;
}

int torchref_step(struct torchref *r, char *err)
{
	if (r->step == STEP_NONE)
		return 1;
	int step = r->step, rc, said = 0, read = 0;
	/* the lines read already, then once what the helper sent since */
	for (;;) {
		cJSON *o = NULL;
		rc = parse_line(r, &o, err);
		if (rc > 0) {
			rc = reply(r, o, err);
			said = rc < 0; /* the reply said why, and dealt with the helper */
			if (rc != 0)
				break;
			continue;
		}
		struct pollfd pf = {.fd = r->from, .events = POLLIN};
		if (rc < 0 || read || poll(&pf, 1, 0) <= 0)
			break;
		read = 1;
		if ((rc = read_some(r, err)) < 0)
			break;
	}
	if (rc == 0 && r->deadline > 0 && now_s() >= r->deadline)
		rc = late(r, r->limitS, r->zWhat, err);
	if (rc != 0) {
		r->step = STEP_NONE;
		r->deadline = 0;
	}
	if (rc < 0 && step == STEP_DESCRIBE && !said)
		return describe_failed(r, err);
	return rc;
}

double torchref_deadline(const struct torchref *r)
{
	return r->step == STEP_NONE ? 0 : r->deadline;
}

int torchref_wait(struct torchref *r, char *err)
{
	int rc;
	while ((rc = torchref_step(r, err)) == 0) {
		double left = r->deadline > 0 ? r->deadline - now_s() : -1;
		struct pollfd pf = {.fd = r->from, .events = POLLIN};
		poll(&pf, 1, left < 0 ? -1 : (int)(left * 1000) + 1);
	}
	return rc < 0 ? -1 : 0;
}

int torchref_fd(const struct torchref *r)
{
	return r->from;
}

void torchref_kill(struct torchref *r)
{
	if (r && r->pid > 0) {
		proc_kill_group(r->pid);
		waitpid(r->pid, NULL, 0);
		(void)proc_group_gone(r->pid, GROUP_GONE_S);
		r->pid = 0;
	}
}

int torchref_finish_begin(struct torchref *r, char *err)
{
	if (r->pid <= 0)
		return 1;
	if (r->held)
		kill(r->pid, SIGCONT), r->held = 0;
	if (torchref_send(r, cJSON_Parse("{\"op\":\"quit\"}"), err) < 0)
		return -1;
	torchref_await(r, STEP_FINISH, finished, 0, NULL);
	return 0;
}

int torchref_finish(struct torchref *r, char *err)
{
	int rc = torchref_finish_begin(r, err);
	return rc < 0 ? -1 : rc > 0 ? 0 : torchref_wait(r, err);
}
