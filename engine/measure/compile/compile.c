/*
 * compile.c - runs cc, c++ or nvcc as child processes of the event loop, at
 * most N at a time, and keeps the shared objects in a content-hash cache so
 * that an unchanged candidate is never compiled twice.
 */
#include "compile_priv.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup.h"
#include "codehash.h"
#include "hostpart.h"
#include "compile_pch.h"
#include "cuda_target.h"
#include "proc.h"
#include "sandbox.h"
#include "sha256.h"
#include "libs.h"
#include "torch_real.h"
#include "util.h"

int compile_lang_from_name(const char *z)
{
	const char *dot = strrchr(z, '.');
	if (!dot)
		return -1;
	if (!strcmp(dot, ".c"))
		return LANG_C;
	if (!strcmp(dot, ".cc") || !strcmp(dot, ".cpp") || !strcmp(dot, ".cxx"))
		return LANG_CPP;
	if (!strcmp(dot, ".cu"))
		return LANG_CUDA;
	return -1;
}

static const char *lang_ext[] = {"c", "cpp", "cu"};

static char *first_line(const char *z)
{
	const char *nl = strchr(z, '\n');
	return nl ? xstrndup(z, (size_t)(nl - z)) : xstrdup(z);
}

static char *tool_version(const char *zCmd)
{
	char *argv[] = {(char *)zCmd, "--version", NULL};
	char *out = NULL;
	int st = proc_capture(argv, &out, 1 << 16);
	if (st < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		free(out);
		return NULL;
	}
	/* nvcc's version is on its last line; cc's on its first: keep all of it */
	return out;
}

static char *cpu_model(void)
{
	strbuf sb = STRBUF_INIT;
	char err[KL_ERRLEN];
	char *res = NULL;
	if (read_file("/proc/cpuinfo", &sb, 1 << 22, err) == 0) {
		char *p = strstr(sb.buf, "model name");
		if (p)
			res = first_line(p);
	}
	sb_free(&sb);
	return res ? res : xstrdup("unknown cpu");
}

static char *env_or(const char *name, const char *dflt)
{
	const char *v = getenv(name);
	return xstrdup(v && *v ? v : dflt);
}

/* the SHA-256 of kloop's headers az (NULL-terminated, in its include
 * directory), hex, fresh */
static char *headers_hash(const char **az)
{
	struct sha256 s;
	char hex[65];
	sha256_init(&s);
	for (int i = 0; az[i]; i++) {
		strbuf h = STRBUF_INIT;
		char *hp = path_join(compile_include_dir(), az[i]);
		if (read_file(hp, &h, 1 << 20, NULL) == 0)
			sha256_update(&s, h.buf, h.len);
		sb_free(&h);
		free(hp);
	}
	sha256_hex(&s, hex);
	return xstrdup(hex);
}

struct compiler *compiler_new(struct loop *l, const char *zCacheDir, int jobs,
                              const struct cuda_target *pTarget, char *err)
{
	if (mkdir_p(zCacheDir, err) < 0)
		return NULL;
	struct compiler *c = xcalloc(1, sizeof *c);
	c->l = l;
	c->zCache = xstrdup(zCacheDir);
	c->jobs = jobs > 0 ? jobs : 1;
	c->timeout = 300;
	if (pTarget)
		c->target = *pTarget;
	else
		snprintf(c->target.zName, sizeof c->target.zName, "sm_90");
	c->bTarget = pTarget != NULL;
	c->azCmd[LANG_C] = env_or("KLOOP_CC", "cc");
	c->azCmd[LANG_CPP] = env_or("KLOOP_CXX", "c++");
	c->azCmd[LANG_CUDA] = env_or("KLOOP_NVCC", "nvcc");
	/* nvcc's steps run by kloop: a whole build's host and device halves
	 * side by side, an edit's #includes preprocessed once (compile_argv.c's
	 * hostobj and devfat); KLOOP_NVCC_STEPS=0 leaves nvcc alone */
	const char *steps = getenv("KLOOP_NVCC_STEPS");
	c->bSteps = !(steps && !strcmp(steps, "0"));
	for (int i = 0; i < 3; i++)
		c->azVersion[i] = tool_version(c->azCmd[i]);
	c->zHeaderHash = headers_hash((const char *[]){"kloop.h", NULL});
	/* kloop.h too: the precompiled stand-in holds it (compile_pch.h) */
	c->zTorchHash = headers_hash(
	    (const char *[]){"kloop.h", "kloop_torch.h", "kloop_torch/kl_torch_tensor.h",
	                     "kloop_torch/kl_torch_run.h", "kloop_torch/kl_torch_common.h", NULL});
	c->zTorchRealHash = headers_hash((const char *[]){
	    "kloop.h", "kloop_torch_real.h", "kloop_torch/kl_torch_run.h",
	    "kloop_torch/kl_torch_common.h", "kloop_torch_real/torch/extension.h",
	    "kloop_torch_real/torch/python.h", "kloop_torch_real/pybind11/pybind11.h",
	    "kloop_torch_real/pybind11/stl.h", NULL});
	c->zCpu = cpu_model();
	compile_pch_init(&c->pch, l, c->zCache, c->azCmd[LANG_CPP], c->azVersion[LANG_CPP],
	                 compile_cxx_flags, c->zTorchHash);
	return c;
}

/* one waiting for the answer (compiler_torch_real_start) */
struct torch_waiter {
	compile_torch_fn done;
	void *arg;
	struct torch_waiter *next;
};

/* the Python asked where PyTorch's headers are, while it answers */
struct torch_ask {
	struct compiler *c;
	char *zPython;
	pid_t pid;
	int fd;          /* its output */
	strbuf out;      /* what it said, its first 64 KiB */
	long long timer; /* TORCH_REAL_ASK_S */
	int timedOut;
	struct torch_waiter *waiters;
};

static void ask_cancel(struct compiler *c);

void compiler_free(struct compiler *c)
{
	if (!c)
		return;
	ask_cancel(c);
	free(c->zCache);
	for (int i = 0; i < 3; i++) {
		free(c->azCmd[i]);
		free(c->azVersion[i]);
	}
	free(c->zHeaderHash);
	free(c->zTorchHash);
	free(c->zTorchRealHash);
	torch_real_free(&c->torchReal);
	compile_pch_free(&c->pch);
	free(c->zCpu);
	libs_free(&c->libs);
	libs_free(&c->cutlass);
	free(c);
}

int compiler_add_libs(struct compiler *c, const char *zList, const char *zBaseDir, char *err)
{
	return libs_add(&c->libs, zList, zBaseDir, err);
}

int compiler_torch_real(struct compiler *c, const char *zPython, char *err)
{
	if (c->ask)
		return kl_err(err, "kloop is still asking %s where PyTorch's headers are",
		              c->ask->zPython);
	if (torch_real_find(&c->torchReal, zPython) == 0)
		return 0;
	return kl_err(err, "%s", c->torchReal.zErr);
}

/* end a's watch: its fd, its timer, its process (reaped); its wait status */
static int ask_stop(struct torch_ask *a)
{
	struct loop *l = a->c->l;
	loop_del_fd(l, a->fd);
	close(a->fd);
	if (a->timer)
		loop_del_timer(l, a->timer);
	int st = -1;
	while (waitpid(a->pid, &st, 0) < 0 && errno == EINTR)
		;
	return st;
}

static void ask_free(struct torch_ask *a)
{
	while (a->waiters) {
		struct torch_waiter *w = a->waiters;
		a->waiters = w->next;
		free(w);
	}
	sb_free(&a->out);
	free(a->zPython);
	free(a);
}

static void on_ask_output(struct loop *l, int fd, int ev, void *arg)
{
	struct torch_ask *a = arg;
	(void)l, (void)ev;
	char buf[4096];
	ssize_t r;
	while ((r = read(fd, buf, sizeof buf)) > 0)
		if (a->out.len < (1 << 16))
			sb_add(&a->out, buf, (size_t)r);
	if (r < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	/* its answer, or its end */
	struct compiler *c = a->c;
	int st = ask_stop(a);
	torch_real_answer(&c->torchReal, a->zPython, a->out.buf, st, a->timedOut);
	c->ask = NULL;
	/* in the order they asked */
	struct torch_waiter *w = NULL;
	while (a->waiters) {
		struct torch_waiter *n = a->waiters->next;
		a->waiters->next = w;
		w = a->waiters;
		a->waiters = n;
	}
	ask_free(a);
	while (w) {
		struct torch_waiter *n = w->next;
		w->done(w->arg);
		free(w);
		w = n;
	}
}

/* the compiler goes while Python answers: it is stopped, and those who
 * waited are not called */
static void ask_cancel(struct compiler *c)
{
	if (!c->ask)
		return;
	proc_kill_group(c->ask->pid);
	ask_stop(c->ask);
	ask_free(c->ask);
	c->ask = NULL;
}

static void on_ask_timeout(struct loop *l, long long id, void *arg)
{
	struct torch_ask *a = arg;
	(void)l, (void)id;
	a->timer = 0;
	a->timedOut = 1;
	proc_kill_group(a->pid); /* its output ends: on_ask_output answers */
}

int compiler_torch_real_start(struct compiler *c, const char *zPython, compile_torch_fn done,
                              void *arg)
{
	if (!c->ask) {
		if (torch_real_begin(&c->torchReal, zPython) != 1)
			return 0;
		char *argv[5], err[KL_ERRLEN];
		torch_real_ask_argv(zPython, argv);
		struct proc_spec s = {.argv = argv, .stdinFd = -1, .stdoutFd = -1, .stderrFd = -1};
		int fd = -1;
		pid_t pid = proc_spawn(&s, &fd, NULL, err);
		if (pid < 0) {
			torch_real_answer(&c->torchReal, zPython, NULL, -1, 0);
			return 0;
		}
		struct torch_ask *a = xcalloc(1, sizeof *a);
		*a = (struct torch_ask){.c = c, .zPython = xstrdup(zPython), .pid = pid, .fd = fd};
		a->timer = loop_add_timer(c->l, TORCH_REAL_ASK_S, on_ask_timeout, a);
		loop_add_fd(c->l, fd, LOOP_READ, on_ask_output, a);
		c->ask = a;
	}
	struct torch_waiter *w = xcalloc(1, sizeof *w);
	*w = (struct torch_waiter){done, arg, c->ask->waiters};
	c->ask->waiters = w;
	return 1;
}

struct compile_result *compile_result_dup(const struct compile_result *r)
{
	struct compile_result *d = xmalloc(sizeof *d);
	*d = *r;
	d->zSo = r->zSo ? xstrdup(r->zSo) : NULL;
	d->zLog = r->zLog ? xstrdup(r->zLog) : NULL;
	d->zCommand = r->zCommand ? xstrdup(r->zCommand) : NULL;
	return d;
}

void compile_result_free(struct compile_result *r)
{
	if (!r)
		return;
	free(r->zSo);
	free(r->zLog);
	free(r->zCommand);
	free(r);
}

const char *compiler_torch_real_where(const struct compiler *c)
{
	return c->torchReal.ok ? c->torchReal.zWhere : "";
}

int compiler_torch_real_cuda(const struct compiler *c)
{
	return c->torchReal.ok && c->torchReal.cuda;
}

void compiler_set_timeout(struct compiler *c, double seconds)
{
	c->timeout = seconds;
}

void compiler_set_sandbox(struct compiler *c, int on)
{
	c->sandbox = on;
}

/* the SHA-256 of p (hex) */
static void hash_hex(const void *p, size_t n, char out[65])
{
	struct sha256 s;
	sha256_init(&s);
	sha256_update(&s, p, n);
	sha256_hex(&s, out);
}

/* the recorded hash of a cached object, in its .sha256 file next to it */
static char *sum_path(const char *zSo)
{
	return xasprintf("%s.sha256", zSo);
}

/* 1 if the cached object at zSo matches its recorded hash (the content
 * read into sb when given), 0 if not or unreadable */
static int so_verified(const char *zSo, strbuf *sb)
{
	strbuf own = STRBUF_INIT, sum = STRBUF_INIT;
	strbuf *b = sb ? sb : &own;
	char *sp = sum_path(zSo), hex[65];
	int ok = read_file(zSo, b, 1u << 30, NULL) == 0 && read_file(sp, &sum, 128, NULL) == 0 &&
	         sum.len >= 64;
	if (ok) {
		hash_hex(b->buf, b->len, hex);
		ok = !memcmp(hex, sum.buf, 64);
	}
	free(sp);
	sb_free(&own);
	sb_free(&sum);
	return ok;
}

int compiler_open_so(struct compiler *c, const char *zSo, char *err)
{
	(void)c;
	strbuf sb = STRBUF_INIT;
	if (!so_verified(zSo, &sb)) {
		sb_free(&sb);
		return kl_err(err,
		              "%s: the cached shared object does not match the SHA-256 recorded "
		              "when it was compiled (changed on disk): not loaded",
		              zSo);
	}
	int fd = memfd_create("kloop-candidate.so", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0 || write_all(fd, sb.buf, sb.len) < 0 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0) {
		kl_err(err, "cannot copy %s into memory: %s", zSo, strerror(errno));
		if (fd >= 0)
			close(fd);
		fd = -1;
	}
	sb_free(&sb);
	return fd;
}

int compiler_pending(struct compiler *c)
{
	return c->nPending;
}

const struct cuda_target *compiler_target(const struct compiler *c)
{
	return c->bTarget ? &c->target : NULL;
}

static void job_free(struct cjob *j)
{
	cgroup_free(j->cg);
	free(j->zSrc);
	free(j->zName);
	free(j->zDir);
	compile_argv_free(j->argv);
	sb_free(&j->log);
	free(j);
}

/* in the compiler's process, before its exec: into its group, or where
 * there is no memory controller, a limit on its data (each process of it:
 * the driver and cc1 alike) */
static void compile_child(void *arg)
{
	struct cjob *j = arg;
	if (j->cg && cgroup_enter(j->cg) < 0) {
		dprintf(2, "kloop: cannot enter the compile's cgroup: %s\n", strerror(errno));
		_exit(127);
	}
	if (!cgroup_has_memory(j->cg)) {
		rlim_t b = (rlim_t)j->memMb << 20;
		struct rlimit r = {b, b};
		setrlimit(RLIMIT_DATA, &r);
	}
}

/* whether the memory limit stopped a compile that failed (status: its
 * wait status): its group's OOM kills (v2 memory.events, v1
 * memory.oom_control), or on a v1 kernel that counts none its limit reached
 * (memory.failcnt) with the peak at it and a process of it killed (SIGKILL,
 * nvcc's status 137, a driver's "Killed signal"); where there is no group,
 * the compiler's own words for a refused allocation (RLIMIT_DATA).  Said in
 * its log, with the rule that sized the limit */
static int compile_limit_note(struct cjob *j, int status)
{
	struct cgroup_usage u;
	cgroup_usage(j->cg, &u);
	const char *log = j->log.buf ? j->log.buf : "";
	int killed = (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) ||
	             (WIFEXITED(status) && WEXITSTATUS(status) == 128 + SIGKILL) ||
	             strstr(log, "Killed signal") || strstr(log, "signal 9");
	if (u.oomKills > 0 ||
	    (killed && u.memMaxHits > 0 && u.memLimit && u.memPeak >= u.memLimit / 100 * 99)) {
		sb_addf(&j->log,
		        "kloop: the compile reached its memory limit of %llu MiB (all of its "
		        "processes together; from %s; KLOOP_COMPILE_MEM_MB sets it) and was "
		        "stopped%s\n",
		        j->memMb, j->zMemHow,
		        u.oomKills > 0 ? ": the kernel's OOM killer ended its largest process"
		                       : "");
		return 1;
	}
	if (!cgroup_has_memory(j->cg) &&
	    (strstr(log, "out of memory") || strstr(log, "virtual memory exhausted") ||
	     strstr(log, "Cannot allocate memory") || strstr(log, "bad_alloc"))) {
		sb_addf(&j->log,
		        "kloop: the compiler ran out of its memory limit of %llu MiB (each of its "
		        "processes; from %s; KLOOP_COMPILE_MEM_MB sets it)\n",
		        j->memMb, j->zMemHow);
		return 1;
	}
	return 0;
}

static void finish(struct cjob *j, int ok, const char *zWhy, int cached, int stopped)
{
	struct compiler *c = j->c;
	struct compile_result r = {0};
	r.ok = ok;
	r.cached = cached;
	r.stopped = !ok && stopped;
	r.memLimitMb = !ok && j->memStopped ? j->memMb : 0;
	memcpy(r.zKey, j->zKey, 65);
	r.zSo = ok ? xasprintf("%s/%s.so", c->zCache, j->zKey) : NULL;
	char herr[KL_ERRLEN];
	if (ok && code_hash_file(r.zSo, r.zCodeHash, herr) < 0) {
		sb_addf(&j->log, "kloop: %s\n", herr);
		ok = r.ok = 0;
		free(r.zSo);
		r.zSo = NULL;
		zWhy = "the compiled object cannot be read";
	}
	r.zLog = j->log.buf ? xstrdup(j->log.buf) : xstrdup("");
	utf8_sanitize(r.zLog);
	r.zCommand = compile_argv_show(j->argv, j->noLink, j->sideBySide, j->prefixKept);
	r.deviceOnly = ok && !cached && j->deviceOnly;
	r.noLink = r.deviceOnly && j->noLink;
	r.sideBySide = ok && !cached && j->sideBySide;
	r.prefixKept = r.deviceOnly && j->prefixKept;
	r.seconds = cached ? 0 : now_s() - j->t0;
	snprintf(r.zWhy, sizeof r.zWhy, "%s", zWhy ? zWhy : "");
	if (j->req.lang == LANG_CUDA)
		snprintf(r.zTarget, sizeof r.zTarget, "%s", c->target.zName);
	/* code that needs another target: the words that name both, also at
	 * the end of the log that the LLM reads */
	if (!ok && j->req.lang == LANG_CUDA &&
	    cuda_target_diagnose_compile(&c->target, r.zLog, j->zSrc, r.zHint, sizeof r.zHint)) {
		char *log = xasprintf("%skloop: %s\n", r.zLog, r.zHint);
		free(r.zLog);
		r.zLog = log;
	}
	c->nPending--;
	j->done(&r, j->arg);
	free(r.zSo);
	free(r.zLog);
	free(r.zCommand);
	job_free(j);
}

static void start_next(struct compiler *c);

/* remove a build directory (flat: the source and the compiler's outputs) */
static void rm_build_dir(const char *zDir)
{
	DIR *d = opendir(zDir);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		char *p = path_join(zDir, de->d_name);
		unlink(p);
		free(p);
	}
	if (d)
		closedir(d);
	rmdir(zDir);
}

/* 1 where job j's build directory holds the file zName */
static int build_marked(const struct cjob *j, const char *zName)
{
	char *p = path_join(j->zDir, zName);
	int there = path_exists(p);
	free(p);
	return there;
}

static void on_output(struct loop *l, int fd, int ev, void *arg)
{
	struct cjob *j = arg;
	(void)ev;
	char buf[8192];
	ssize_t r;
	while ((r = read(fd, buf, sizeof buf)) > 0) {
		if (j->log.len < LOG_MAX)
			sb_add(&j->log, buf, (size_t)r);
		else
			j->nDropped += (size_t)r;
	}
	if (r < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	/* EOF: the compiler is done (or killed) */
	loop_del_fd(l, fd);
	close(fd);
	if (j->timer)
		loop_del_timer(l, j->timer);
	int status = 0;
	while (waitpid(j->pid, &status, 0) < 0 && errno == EINTR)
		;
	if (j->lifeFd >= 0)
		close(j->lifeFd);
	j->lifeFd = -1;
	struct compiler *c = j->c;
	c->nRunning--;
	if (j->nDropped)
		sb_addf(&j->log,
		        "\nkloop: %zu more bytes of the compiler's output were not kept (its first "
		        "%d MiB are)\n",
		        j->nDropped, LOG_MAX >> 20);
	char why[200], st[160];
	proc_describe_status(status, st, sizeof st);
	char *tmpSo = xasprintf("%s/out.so", j->zDir);
	int ok =
	    !j->timedOut && WIFEXITED(status) && WEXITSTATUS(status) == 0 && path_exists(tmpSo);
	if (ok) {
		char *dst = xasprintf("%s/%s.so", c->zCache, j->zKey);
		char *logp = xasprintf("%s/%s.log", c->zCache, j->zKey);
		char *sp = sum_path(dst), hex[65];
		strbuf so = STRBUF_INIT;
		write_file_atomic(logp, j->log.buf ? j->log.buf : "", j->log.len, NULL);
		/* the object's hash, checked whenever it is loaded */
		if (read_file(tmpSo, &so, 1u << 30, NULL) < 0)
			ok = 0;
		hash_hex(so.buf ? so.buf : "", so.len, hex);
		/* what the staged build's script did, by its marker files */
		j->noLink = build_marked(j, "kl_nolink");
		j->sideBySide = build_marked(j, "kl_side");
		j->prefixKept = build_marked(j, "kl_spliced");
		if (ok && j->zHostKey[0])
			compile_host_keep(c, j, so.buf ? so.buf : "", so.len);
		if (ok)
			compile_prefix_keep(c, j);
		if (!ok || write_file_atomic(sp, hex, 64, NULL) < 0 || rename(tmpSo, dst) < 0)
			ok = 0;
		sb_free(&so);
		free(sp);
		free(dst);
		free(logp);
	}
	free(tmpSo);
	if (!ok && !j->timedOut)
		j->memStopped = compile_limit_note(j, status);
	if (!ok && c->sandbox && j->log.buf && strstr(j->log.buf, "No such file or directory"))
		sb_adds(&j->log,
		        "kloop: the compiler runs in a sandbox: it sees the system, the "
		        "candidate's own directory, kloop's include directory and the task's "
		        "libs, no other files (#include of anything else is refused)\n");
	if (j->timedOut)
		snprintf(why, sizeof why, "the compiler timed out after %.0f s", c->timeout);
	else if (j->memStopped)
		snprintf(why, sizeof why,
		         "the compile reached its memory limit of %llu MiB (KLOOP_COMPILE_MEM_MB)",
		         j->memMb);
	else
		snprintf(why, sizeof why, "%s %s", c->azCmd[j->req.lang], st);
	rm_build_dir(j->zDir);
	finish(j, ok, ok ? "" : why, 0,
	       !j->timedOut && WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
	start_next(c);
}

static void on_timeout(struct loop *l, long long id, void *arg)
{
	struct cjob *j = arg;
	(void)l, (void)id;
	j->timer = 0;
	j->timedOut = 1;
	if (j->lifeFd >= 0) {
		/* its keeper kills bubblewrap and everything below it */
		close(j->lifeFd);
		j->lifeFd = -1;
	} else {
		proc_kill_group(j->pid);
	}
}

static void start_job(struct compiler *c, struct cjob *j)
{
	char err[KL_ERRLEN];
	/* a directory of its own, also when the same source is compiled twice
	 * at once (two copies of a candidate, an LLM's repeated answer): one
	 * compiler must not clean up what the other is still writing */
	static unsigned long nBuild;
	j->zDir = xasprintf("%s/build/%s.%d.%lu", c->zCache, j->zKey, (int)getpid(), ++nBuild);
	char *src = path_join(j->zDir, j->zName);
	if (mkdir_p(j->zDir, err) < 0 || write_file_atomic(src, j->zSrc, j->req.nSource, err) < 0) {
		free(src);
		sb_adds(&j->log, err);
		finish(j, 0, "cannot write the source into the build directory", 0, 0);
		return;
	}
	free(src);
	j->argv = compile_host_staged(c, j, compile_argv(c, j, "out.so"));
	if (c->sandbox)
		j->argv = compile_sandboxed(c, j, j->argv);
	/* bubblewrap gets a keeper: killed while it sets up, it would leave its
	 * pid namespace's init behind (engine/proc.h, proc_keep) */
	j->lifeFd = -1;
	/* compiles are work ahead of the GPU: they yield the CPU to what runs
	 * now (a candidate being timed, the PyTorch helper) */
	struct proc_spec s = {.argv = j->argv,
	                      .zCwd = j->zDir,
	                      .stdinFd = -1,
	                      .stdoutFd = -1,
	                      .stderrFd = -1,
	                      .pLife = c->sandbox ? &j->lifeFd : NULL,
	                      .cleanEnv = 1,
	                      .nice = COMPILE_NICE,
	                      .inChild = compile_child,
	                      .childArg = j};
	j->memMb = compile_mem_mb(c->jobs, j->zMemHow, sizeof j->zMemHow);
	struct cgroup_limits lim = {j->memMb << 20, 0};
	char cgErr[KL_ERRLEN];
	j->cg = cgroup_new("compile", &lim, cgErr);
	j->t0 = now_s();
	j->pid = proc_spawn(&s, &j->fd, NULL, err);
	if (j->pid < 0) {
		sb_adds(&j->log, err);
		finish(j, 0, "cannot start the compiler", 0, 0);
		return;
	}
	c->nRunning++;
	loop_add_fd(c->l, j->fd, LOOP_READ, on_output, j);
	j->timer = loop_add_timer(c->l, c->timeout, on_timeout, j);
}

static void start_next(struct compiler *c)
{
	while (c->queue && c->nRunning < c->jobs) {
		struct cjob *j = c->queue;
		c->queue = j->next;
		start_job(c, j);
	}
}

static void compute_key(struct compiler *c, struct cjob *j)
{
	struct sha256 s;
	sha256_init(&s);
	const char *ver = c->azVersion[j->req.lang] ? c->azVersion[j->req.lang] : "";
	char **v = compile_argv(c, j, "out.so");
	char *cmd = compile_argv_join(v);
	/* the target besides the command that names it: a build for sm_90
	 * and one for sm_90a never share an entry, whatever the flags say */
	const char *target = j->req.lang == LANG_CUDA ? c->target.zName : "host";
	const char *parts[] = {"kloop-compile-v3",
	                       cmd,
	                       ver,
	                       c->zHeaderHash,
	                       c->zCpu,
	                       target,
	                       j->req.torch == COMPILE_TORCH_REAL ? c->zTorchRealHash
	                       : j->req.torch                     ? c->zTorchHash
	                                                          : ""};
	for (size_t i = 0; i < sizeof parts / sizeof *parts; i++)
		sha256_update(&s, parts[i], strlen(parts[i]) + 1);
	sha256_update(&s, j->zSrc, j->req.nSource);
	sha256_hex(&s, j->zKey);
	/* the host object's key: the same, with the source's host part; and,
	 * where the host code expands no line number nor the file's name, with
	 * the file's name left out (a session names each edit anew:
	 * cand2.cu, cand3.cu) */
	char *host = NULL, why[200];
	size_t nHost = 0;
	j->zHostKey[0] = 0;
	if (j->req.lang == LANG_CUDA &&
	    cuda_host_part(j->zSrc, j->req.nSource, &host, &nHost, why, sizeof why)) {
		if (strstr(host, "lines not counted"))
			for (int i = 1; v[i]; i++)
				if (!strcmp(v[i], j->zName)) {
					free(v[i]);
					v[i] = xstrdup("<the source>");
				}
		char *hostCmd = compile_argv_join(v);
		sha256_init(&s);
		sha256_update(&s, "kloop-host-object-v2", 21);
		sha256_update(&s, hostCmd, strlen(hostCmd) + 1);
		for (size_t i = 2; i < sizeof parts / sizeof *parts; i++)
			sha256_update(&s, parts[i], strlen(parts[i]) + 1);
		sha256_update(&s, host, nHost);
		sha256_hex(&s, j->zHostKey);
		free(hostCmd);
	}
	compile_argv_free(v);
	free(host);
	free(cmd);
}

int compiler_submit(struct compiler *c, const struct compile_req *req, compile_done_fn done,
                    void *arg, char *err)
{
	if (!c->azVersion[req->lang])
		return kl_err(err, "the %s compiler '%s' is not available (set KLOOP_%s)",
		              req->lang == LANG_C     ? "C"
		              : req->lang == LANG_CPP ? "C++"
		                                      : "CUDA",
		              c->azCmd[req->lang],
		              req->lang == LANG_C     ? "CC"
		              : req->lang == LANG_CPP ? "CXX"
		                                      : "NVCC");
	struct cjob *j = xcalloc(1, sizeof *j);
	j->c = c;
	j->lifeFd = -1;
	j->req = *req;
	j->zSrc = xstrndup(req->zSource, req->nSource);
	const char *base = req->zName ? strrchr(req->zName, '/') : NULL;
	base = base ? base + 1 : req->zName;
	if (!base || !*base || base[0] == '.')
		base = NULL;
	j->zName = base ? xstrdup(base) : xasprintf("candidate.%s", lang_ext[req->lang]);
	j->done = done;
	j->arg = arg;
	/* a source that includes CUTLASS gets it without --libs */
	j->bCutlass = req->lang == LANG_CUDA && !libs_have_cutlass(&c->libs) &&
	              libs_source_includes_cutlass(j->zSrc);
	if (j->bCutlass && !c->cutlassTried) {
		c->cutlassTried = 1;
		if (libs_add(&c->cutlass, "cutlass", NULL, c->zCutlassErr) == 0)
			c->zCutlassErr[0] = 0;
	}
	compute_key(c, j);
	c->nPending++;
	if (j->req.torch == COMPILE_TORCH_STANDIN && req->lang == LANG_CPP)
		compile_pch_start(&c->pch, c->azCmd[LANG_CPP], compile_cxx_flags,
		                  compile_include_dir(), COMPILE_NICE);
	if (j->bCutlass && c->zCutlassErr[0]) {
		sb_addf(&j->log,
		        "kloop: %s includes CUTLASS or CuTe headers, which this machine does "
		        "not have: %s\n",
		        j->zName, c->zCutlassErr);
		j->argv = compile_argv(c, j, "out.so");
		finish(j, 0,
		       "the source includes CUTLASS, which was not found (set CUTLASS_DIR to a "
		       "CUTLASS checkout)",
		       0, 0);
		return 0;
	}
	char *so = xasprintf("%s/%s.so", c->zCache, j->zKey);
	/* a cached object whose hash does not match is compiled again */
	if (path_exists(so) && so_verified(so, NULL)) {
		free(so);
		char *logp = xasprintf("%s/%s.log", c->zCache, j->zKey);
		read_file(logp, &j->log, LOG_MAX, NULL);
		free(logp);
		j->argv = compile_argv(c, j, "out.so");
		finish(j, 1, NULL, 1, 0);
		return 0;
	}
	free(so);
	j->next = NULL;
	struct cjob **pp = &c->queue;
	while (*pp)
		pp = &(*pp)->next;
	*pp = j;
	start_next(c);
	return 0;
}
