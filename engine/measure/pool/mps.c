/*
 * mps.c - an MPS control daemon found, or started for kloop's pool and
 * stopped when kloop ends (mps.h).
 */
#include "mps.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

#define MPS_TOOL "nvidia-cuda-mps-control"
#define MPS_DEFAULT_PIPE "/tmp/nvidia-mps"

/* the daemon started here, if any */
static struct {
	char *zDir;     /* the private directory (pipe/, log/) */
	char *zPipe;    /* its pipe directory */
	pid_t keeper;   /* the process that sends `quit` when kloop ends */
	int lifeFd;     /* closed: the keeper stops the daemon */
	int registered; /* atexit(mps_stop) done */
} g = {NULL, NULL, 0, -1, 0};

const char *mps_mode_name(int mode)
{
	return mode == MPS_ON ? "on" : mode == MPS_OFF ? "off" : "auto";
}

const char *mps_pipe_dir(void)
{
	const char *z = getenv("CUDA_MPS_PIPE_DIRECTORY");
	return z && *z ? z : MPS_DEFAULT_PIPE;
}

int mps_daemon_running(const char *zPipeDir)
{
	char *ctl = xasprintf("%s/control", zPipeDir);
	struct stat st;
	int have = lstat(ctl, &st) == 0;
	free(ctl);
	if (!have)
		return 0;
	/* where it wrote its pid, that process must be there (a daemon killed
	 * leaves its pipe behind); EPERM: another user's, alive */
	char *pf = xasprintf("%s/nvidia-cuda-mps-control.pid", zPipeDir);
	FILE *f = fopen(pf, "r");
	free(pf);
	if (!f)
		return 1;
	long pid = 0;
	int n = fscanf(f, "%ld", &pid);
	fclose(f);
	if (n != 1 || pid <= 0)
		return 1;
	return kill((pid_t)pid, 0) == 0 || errno == EPERM;
}

char *mps_control_path(void)
{
	const char *path = getenv("PATH");
	if (!path || !*path)
		path = "/usr/bin:/bin";
	char *dup = xstrdup(path), *save = NULL, *found = NULL;
	for (char *d = strtok_r(dup, ":", &save); d && !found; d = strtok_r(NULL, ":", &save)) {
		char *p = xasprintf("%s/%s", *d ? d : ".", MPS_TOOL);
		if (access(p, X_OK) == 0)
			found = p;
		else
			free(p);
	}
	free(dup);
	return found;
}

/* every part of a workers' specification is local (its GPUs are this host's) */
static int workers_local(const char *zWorkers)
{
	if (!zWorkers || !*zWorkers)
		return 1;
	for (const char *q = zWorkers; *q;) {
		size_t k = strcspn(q, ";");
		const char *s = q, *e = q + k;
		while (s < e && *s == ' ')
			s++;
		size_t n = (size_t)(e - s);
		if (n &&
		    !(n >= 5 && !strncmp(s, "local", 5) && (n == 5 || s[5] == ':' || s[5] == ' ')))
			return 0;
		q = *e ? e + 1 : e;
	}
	return 1;
}

static double now_mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void nap_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

/* wait for pid at most s seconds (killed after); its status, or -1 */
static int wait_for(pid_t pid, double s)
{
	double end = now_mono() + s;
	int st;
	for (;;) {
		pid_t r = waitpid(pid, &st, WNOHANG);
		if (r == pid)
			return st;
		if (r < 0 && errno != EINTR)
			return -1;
		if (now_mono() > end) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			return -1;
		}
		nap_ms(10);
	}
}

/* run the control program (zTool) with zArg (or none), stdin from zStdin
 * (or /dev/null), its output appended to zOut; the exit status, or -1 */
static int run_tool(const char *zTool, const char *zArg, const char *zStdin, const char *zOut)
{
	int in[2] = {-1, -1};
	if (zStdin && pipe(in) < 0)
		return -1;
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int out = open(zOut ? zOut : "/dev/null", O_WRONLY | O_CREAT | O_APPEND, 0600);
		int nul = open("/dev/null", O_RDONLY);
		if (out < 0 || nul < 0)
			_exit(127);
		dup2(zStdin ? in[0] : nul, 0);
		dup2(out, 1);
		dup2(out, 2);
		if (close_range(3, ~0u, 0) < 0)
			for (int fd = 3; fd < 1024; fd++)
				close(fd);
		char *argv[] = {(char *)zTool, (char *)zArg, NULL};
		execv(zTool, argv);
		_exit(127);
	}
	if (zStdin) {
		close(in[0]);
		ssize_t w = write(in[1], zStdin, strlen(zStdin));
		(void)w;
		close(in[1]);
	}
	/* -d returns once the daemon is in the background */
	return wait_for(pid, 10);
}

static int rm_entry(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb, (void)flag, (void)ftw;
	remove(p);
	return 0;
}

/* in the keeper: stop the daemon of pipe directory zPipe, remove zDir */
static _Noreturn void stop_and_clean(const char *zTool, const char *zPipe, const char *zDir)
{
	setenv("CUDA_MPS_PIPE_DIRECTORY", zPipe, 1);
	char *log = xasprintf("%s/log/kloop.log", zDir);
	run_tool(zTool, NULL, "quit\n", log);
	free(log);
	/* the daemon goes once its servers have: its control pipe with it */
	for (int i = 0; i < 500 && mps_daemon_running(zPipe); i++)
		nap_ms(10);
	nftw(zDir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	_exit(0);
}

int mps_start(const char *zParent, char *err)
{
	if (g.zDir)
		return 0;
	char *tool = mps_control_path();
	if (!tool)
		return kl_err(err,
		              "--mps: %s is not on PATH (it comes with the NVIDIA driver's "
		              "utilities)",
		              MPS_TOOL);
	const char *tmp = getenv("TMPDIR");
	if (!zParent)
		zParent = tmp && tmp[0] == '/' ? tmp : "/tmp";
	char *dir = xasprintf("%s/kloop-mps-XXXXXX", zParent);
	if (!mkdtemp(dir)) {
		int e = errno;
		kl_err(err, "--mps: cannot make a directory in %s: %s", zParent, strerror(e));
		free(dir), free(tool);
		return -1;
	}
	char *pipeDir = xasprintf("%s/pipe", dir), *logDir = xasprintf("%s/log", dir);
	char *out = xasprintf("%s/kloop.log", logDir);
	int rc = 0;
	if (mkdir(pipeDir, 0700) < 0 || mkdir(logDir, 0700) < 0) {
		rc = kl_err(err, "--mps: cannot make %s: %s", pipeDir, strerror(errno));
		goto fail;
	}
	setenv("CUDA_MPS_PIPE_DIRECTORY", pipeDir, 1);
	setenv("CUDA_MPS_LOG_DIRECTORY", logDir, 1);
	int st = run_tool(tool, "-d", NULL, out);
	for (int i = 0; i < 500 && st == 0 && !mps_daemon_running(pipeDir); i++)
		nap_ms(10);
	if (st != 0 || !mps_daemon_running(pipeDir)) {
		strbuf sb = STRBUF_INIT;
		read_file(out, &sb, 4096, NULL);
		char *nl = sb.buf ? strchr(sb.buf, '\n') : NULL;
		if (nl)
			*nl = 0;
		rc = kl_err(err, "--mps: %s -d did not start a daemon in %s (%s%s%s)", tool,
		            pipeDir, st == 0 ? "no control pipe after 5 s" : "it failed",
		            sb.len ? ": " : "", sb.len ? sb.buf : "");
		sb_free(&sb);
		/* a daemon that came up late is still ours to stop */
		run_tool(tool, NULL, "quit\n", NULL);
		nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
		goto fail;
	}
	/* the keeper: kloop's end (exit, any signal, kill -9) closes its life
	 * line, and it stops the daemon; in a process group of its own, which
	 * a terminal's ^C does not reach */
	int life[2];
	if (pipe2(life, O_CLOEXEC) < 0) {
		rc = kl_err(err, "--mps: cannot make a pipe: %s", strerror(errno));
		goto fail;
	}
	pid_t k = fork();
	if (k == 0) {
		setpgid(0, 0);
		int sigs[] = {SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGPIPE, SIGTSTP, SIGTTIN, SIGTTOU};
		for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++)
			signal(sigs[i], SIG_IGN);
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		if (dup2(life[0], 3) < 0)
			_exit(127);
		if (close_range(4, ~0u, 0) < 0)
			for (int fd = 4; fd < 1024; fd++)
				close(fd);
		int nul = open("/dev/null", O_RDWR);
		for (int fd = 0; fd < 3 && nul >= 0; fd++)
			if (fd != nul)
				dup2(nul, fd);
		for (;;) {
			char c;
			ssize_t r = read(3, &c, 1);
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0)
				break;
		}
		stop_and_clean(tool, pipeDir, dir);
	}
	close(life[0]);
	if (k < 0) {
		close(life[1]);
		rc = kl_err(err, "--mps: cannot fork: %s", strerror(errno));
		run_tool(tool, NULL, "quit\n", NULL);
		nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
		goto fail;
	}
	g.zDir = dir;
	g.zPipe = pipeDir;
	g.keeper = k;
	g.lifeFd = life[1];
	if (!g.registered)
		atexit(mps_stop);
	g.registered = 1;
	free(tool);
	free(logDir);
	free(out);
	return 0;
fail:
	unsetenv("CUDA_MPS_PIPE_DIRECTORY");
	unsetenv("CUDA_MPS_LOG_DIRECTORY");
	rmdir(pipeDir);
	rmdir(logDir);
	rmdir(dir);
	free(dir), free(pipeDir), free(logDir), free(out), free(tool);
	return rc;
}

void mps_stop(void)
{
	if (!g.zDir)
		return;
	close(g.lifeFd);
	g.lifeFd = -1;
	wait_for(g.keeper, 15);
	unsetenv("CUDA_MPS_PIPE_DIRECTORY");
	unsetenv("CUDA_MPS_LOG_DIRECTORY");
	free(g.zDir);
	free(g.zPipe);
	g.zDir = g.zPipe = NULL;
	g.keeper = 0;
}

const char *mps_started_dir(void)
{
	return g.zPipe;
}

int mps_begin(int mode, const char *zBackend, const char *zWorkers, int nGpu, char **pzNote,
              char *err)
{
	if (pzNote)
		*pzNote = NULL;
	int cuda = zBackend && !strcmp(zBackend, "cuda");
	if (mode == MPS_ON && !cuda)
		return kl_err(err,
		              "--mps: MPS shares a GPU between processes; the backend is %s (use "
		              "--backend cuda)",
		              zBackend ? zBackend : "host");
	if (mode == MPS_ON && !workers_local(zWorkers))
		return kl_err(err,
		              "--mps: kloop starts MPS for this host's GPUs, and the workers '%s' "
		              "run elsewhere (use --workers local or local:N, or start MPS on "
		              "their hosts)",
		              zWorkers);
	if (!cuda || g.zDir)
		return 0;
	const char *dir = mps_pipe_dir();
	int running = mps_daemon_running(dir);
	if (mode == MPS_OFF) {
		if (running) {
			/* a pipe directory where none runs: the driver then makes
			 * contexts without MPS */
			const char *tmp = getenv("TMPDIR");
			char *none = xasprintf("%s/kloop-no-mps-%ld",
			                       tmp && tmp[0] == '/' ? tmp : "/tmp", (long)getpid());
			if (pzNote)
				*pzNote =
				    xasprintf("mps = off: the MPS daemon at %s is not used", dir);
			setenv("CUDA_MPS_PIPE_DIRECTORY", none, 1);
			free(none);
		}
		return 0;
	}
	if (running && mode == MPS_AUTO) {
		/* not used unless asked: whether a sandboxed runner reaches the
		 * server, and what MPS does to a time, are not measured yet (the
		 * runners' private /tmp hides the default pipe directory, as
		 * before) */
		if (pzNote)
			*pzNote = xasprintf("MPS: a daemon runs at %s; not used unless asked "
			                    "(--mps or mps = on)",
			                    dir);
		return 0;
	}
	if (running) {
		/* named, so that the runners' sandbox binds it */
		setenv("CUDA_MPS_PIPE_DIRECTORY", dir, 1);
		if (pzNote)
			*pzNote = xasprintf("MPS: the daemon at %s is used", dir);
		return 0;
	}
	if (mode != MPS_ON)
		return 0;
	if (nGpu < 1)
		return kl_err(err, "--mps: no GPU is visible here (CUDA_VISIBLE_DEVICES, "
		                   "/proc/driver/nvidia/gpus)");
	if (mps_start(NULL, err) < 0)
		return -1;
	if (pzNote)
		*pzNote = xasprintf(
		    "MPS: kloop started a daemon of its own (%s), stopped when it ends", g.zPipe);
	return 0;
}

int mps_describe(int mode, int haveGpu, char *buf, size_t n)
{
	const char *dir = mps_pipe_dir();
	int running = mps_daemon_running(dir);
	char *tool = mps_control_path();
	int ok = 0;
	if (mode == MPS_OFF)
		snprintf(buf, n, "off in the configuration (mps = off)%s%s",
		         running ? ": not using the daemon at " : "", running ? dir : "");
	else if (running && tool && mode == MPS_ON)
		ok = 1, snprintf(buf, n,
		                 "in use: a daemon runs at %s; the pool's workers and runners "
		                 "use it",
		                 dir);
	else if (running && tool)
		ok = 1, snprintf(buf, n,
		                 "available: a daemon runs at %s; not used unless asked (--mps or "
		                 "mps = on: its effect on the sandboxed runners and on timing is "
		                 "not measured yet)",
		                 dir);
	else if (running)
		snprintf(buf, n, "a daemon's control pipe is at %s, but %s is not on PATH", dir,
		         MPS_TOOL);
	else if (!haveGpu)
		snprintf(buf, n, "not available: no usable GPU here");
	else if (!tool)
		snprintf(buf, n, "not available: %s is not on PATH (the NVIDIA driver's utilities)",
		         MPS_TOOL);
	else
		ok = 1,
		snprintf(buf, n,
		         "available, not running (no daemon at %s): --mps or mps = on starts "
		         "one for kloop's pool%s",
		         dir, mode == MPS_ON ? " (mps = on: the next session will)" : "");
	free(tool);
	return ok;
}

int mps_runner_args(int cuda, char **v, int max, int *pShareNs)
{
	static const char *const vars[] = {"CUDA_MPS_PIPE_DIRECTORY", "CUDA_MPS_LOG_DIRECTORY"};
	int n = 0;
	*pShareNs = 0;
	for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) {
		const char *z = getenv(vars[i]);
		if (z && *z && n + 3 <= max) {
			v[n++] = xstrdup("--setenv");
			v[n++] = xstrdup(vars[i]);
			v[n++] = xstrdup(z);
		}
	}
	const char *pipeDir = getenv("CUDA_MPS_PIPE_DIRECTORY");
	struct stat st;
	if (cuda && pipeDir && pipeDir[0] == '/' && stat(pipeDir, &st) == 0 &&
	    S_ISDIR(st.st_mode) && n + 6 <= max) {
		/* the client connects to the daemon's and the server's sockets
		 * there (read-only suffices for that) and shares memory with the
		 * server through /dev/shm */
		v[n++] = xstrdup("--ro-bind");
		v[n++] = xstrdup(pipeDir);
		v[n++] = xstrdup(pipeDir);
		v[n++] = xstrdup("--bind-try");
		v[n++] = xstrdup("/dev/shm");
		v[n++] = xstrdup("/dev/shm");
		/* the runner keeps its own pid and IPC namespaces (with kloop's, a
		 * hand-made GPU sandbox failed cuInit on an H100); whether an MPS
		 * client needs them is for a GPU host to say: share tries it */
		const char *ns = getenv("KLOOP_MPS_NAMESPACES");
		*pShareNs = ns && !strcmp(ns, "share");
	}
	return n;
}
