/*
 * proc.c - spawning and killing child processes (compilers, workers, the
 * Python helper, the `command` LLM provider) with kloop's hygiene rules.
 */
#include "proc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

void proc_close_fds(int first, const int *keep, int nKeep, int profiler)
{
	DIR *d = opendir("/proc/self/fd");
	int fds[1024], n = 0;
	struct dirent *de;
	while (d && (de = readdir(d)) && n < 1024) {
		int fd = atoi(de->d_name);
		if (de->d_name[0] < '0' || de->d_name[0] > '9' || fd < first || fd == dirfd(d))
			continue;
		int k = 0;
		for (int i = 0; i < nKeep; i++)
			k |= keep[i] == fd;
		if (profiler && !k) {
			char path[64], to[512];
			snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
			ssize_t nt = readlink(path, to, sizeof to - 1);
			to[nt > 0 ? nt : 0] = 0;
			k = strstr(to, "/NVIDIA-") != NULL;
		}
		if (!k)
			fds[n++] = fd;
	}
	if (d)
		closedir(d);
	for (int i = 0; i < n; i++)
		close(fds[i]);
}

int proc_secret_name(const char *zName)
{
	static const char *bad[] = {"API_KEY", "APIKEY", "TOKEN", "SECRET", "PASSW", "CREDENTIAL"};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
		if (strcasestr(zName, bad[i]))
			return 1;
	return 0;
}

extern char **environ;

/* in a child: drop every variable that looks like a secret */
static void scrub_env(void)
{
	for (char **e = environ; e && *e;) {
		char name[256];
		size_t n = strcspn(*e, "=");
		snprintf(name, sizeof name, "%.*s", (int)(n < 255 ? n : 255), *e);
		if (proc_secret_name(name) && unsetenv(name) == 0)
			e = environ; /* the array changed: start over */
		else
			e++;
	}
}

int proc_env_allowed(const char *zName)
{
	static const char *const allow[] = {"PATH",
	                                    "LD_LIBRARY_PATH",
	                                    "LANG",
	                                    "LANGUAGE",
	                                    "LC_ALL",
	                                    "LC_CTYPE",
	                                    "LC_MESSAGES",
	                                    "LC_NUMERIC",
	                                    "TMPDIR",
	                                    "CUDA_HOME",
	                                    "CUDA_PATH",
	                                    "CUDA_VISIBLE_DEVICES",
	                                    "CUDA_DEVICE_ORDER",
	                                    "CUDA_MPS_PIPE_DIRECTORY",
	                                    "CUDA_MPS_LOG_DIRECTORY",
	                                    "CPATH",
	                                    "C_INCLUDE_PATH",
	                                    "CPLUS_INCLUDE_PATH",
	                                    "LIBRARY_PATH",
	                                    "NVCC_PREPEND_FLAGS",
	                                    "NVCC_APPEND_FLAGS",
	                                    "NVCC_CCBIN",
	                                    "SOURCE_DATE_EPOCH",
	                                    "KLOOP_CUDART",
	                                    "KLOOP_CUDA_KERNELS",
	                                    "KLOOP_CUDA_ARCH",
	                                    "KLOOP_CUPTI",
	                                    "KLOOP_PROF_TRACE",
	                                    "ASAN_OPTIONS",
	                                    "UBSAN_OPTIONS",
	                                    "LSAN_OPTIONS"};
	for (size_t i = 0; i < sizeof allow / sizeof *allow; i++)
		if (!strcmp(zName, allow[i]))
			return 1;
	/* a profiler that follows this process into its children (Nsight
	 * Compute's --target-processes all) keeps what it injects with: the
	 * user ran it around kloop, and the runner it reaches does not confine
	 * itself, its times unverified (cand_runner.c) */
	static const char *const tool[] = {"LD_PRELOAD", "CUDA_INJECTION64_PATH",
	                                   "NV_",        "NVIDIA", /* its process tracking */
	                                   "NVTX_",      "NSIGHT",
	                                   "TPS_",       "CUPTI"};
	if (proc_profiler_injected())
		for (size_t i = 0; i < sizeof tool / sizeof *tool; i++)
			if (!strncmp(zName, tool[i], strlen(tool[i])))
				return 1;
	return 0;
}

/* an object of a profiler's injection is loaded (dl_iterate_phdr) */
static int injection_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	static const char *const lib[] = {"libcuda-injection",    "TreeLauncherTarget",
	                                  "InterceptorInjection", "ToolsInjection",
	                                  "/nsight-compute",      "/nsight-systems"};
	(void)size, (void)arg;
	for (size_t i = 0; info->dlpi_name && i < sizeof lib / sizeof *lib; i++)
		if (strstr(info->dlpi_name, lib[i]))
			return 1;
	return 0;
}

int proc_profiler_injected(void)
{
	/* CUDA's injection variable, a preload of Nsight's that follows the
	 * processes it starts (its tree launcher re-injects what they exec,
	 * adding the preload at the exec and hiding it once loaded: what it
	 * exec'd says so by its objects alone), the configuration of that
	 * tracking (NVIDIA_VISIBLE_DEVICES and the like of a container are not
	 * a profiler) */
	static int known = -1; /* asked once: a child after fork asks no loader */
	if (known >= 0)
		return known;
	const char *z = getenv("CUDA_INJECTION64_PATH"), *pre = getenv("LD_PRELOAD");
	known = (z && *z) ||
	        (pre && (strstr(pre, "Injection") || strstr(pre, "TreeLauncher") ||
	                 strstr(pre, "nsight") || strstr(pre, "Nsight"))) ||
	        getenv("NVIDIA-PROCESS-TRACKING-CONFIGURATION") || getenv("NV_TPS_LAUNCH_TOKEN") ||
	        getenv("NV_NSIGHT_INJECTION_TRANSPORT_TYPE") ||
	        dl_iterate_phdr(injection_object, NULL) != 0;
	return known;
}

void proc_env_clean(void)
{
	for (char **e = environ; e && *e;) {
		char name[256];
		size_t n = strcspn(*e, "=");
		snprintf(name, sizeof name, "%.*s", (int)(n < 255 ? n : 255), *e);
		if (!proc_env_allowed(name) && unsetenv(name) == 0)
			e = environ; /* the array changed: start over */
		else
			e++;
	}
}

pid_t proc_spawn(const struct proc_spec *s, int *pOut, int *pErr, char *err)
{
	pid_t parent = getpid();
	int profiler = proc_profiler_injected(); /* before the fork: it reads the loader's list */
	int outp[2] = {-1, -1}, errp[2] = {-1, -1}, life[2] = {-1, -1};
	if (pOut)
		*pOut = -1;
	if (pErr)
		*pErr = -1;
	if (s->stdoutFd < 0 && pipe2(outp, O_CLOEXEC) < 0)
		return kl_err(err, "cannot create a pipe: %s", strerror(errno));
	if ((s->stderrFd == -2 && pipe2(errp, O_CLOEXEC) < 0) ||
	    (s->pLife && pipe2(life, O_CLOEXEC) < 0)) {
		int e = errno;
		if (outp[0] >= 0)
			close(outp[0]), close(outp[1]);
		if (errp[0] >= 0)
			close(errp[0]), close(errp[1]);
		return kl_err(err, "cannot create a pipe: %s", strerror(e));
	}
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		int *fds[] = {outp, errp, life};
		for (int k = 0; k < 3; k++)
			if (fds[k][0] >= 0)
				close(fds[k][0]), close(fds[k][1]);
		return kl_err(err, "cannot fork: %s", strerror(e));
	}
	if (pid == 0) {
		setpgid(0, 0);
		/* no orphans: the child dies with us, even of SIGKILL; a keeper
		 * outlives us to kill what it keeps, and what it runs dies with it */
		if (!s->pLife)
			prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(127);
		if (s->pLife) {
			close(life[1]);
			proc_keep(life[0]);
		}
		/* before the descriptors it may use are closed */
		if (s->inChild)
			s->inChild(s->childArg);
		if (s->scrubEnv)
			scrub_env();
		if (s->cleanEnv)
			proc_env_clean();
		if (s->nice > 0)
			(void)!nice(s->nice);
		sigset_t all;
		sigemptyset(&all);
		sigprocmask(SIG_SETMASK, &all, NULL);
		for (int sig = 1; sig < NSIG; sig++)
			signal(sig, SIG_DFL);
		int in = s->stdinFd >= 0 ? s->stdinFd : open("/dev/null", O_RDONLY);
		int out = s->stdoutFd >= 0 ? s->stdoutFd : outp[1];
		int er = s->stderrFd >= 0 ? s->stderrFd : s->stderrFd == -2 ? errp[1] : out;
		/* move the keep list out of the way of 0..2 first */
		int keep[8], nKeep = 0;
		for (int i = 0; i < s->nKeep && i < 4; i++)
			keep[nKeep++] = s->keepFd[i];
		if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(er, 2) < 0)
			_exit(127);
		proc_close_fds(3, keep, nKeep, profiler);
		for (int i = 0; i < nKeep; i++) {
			int fl = fcntl(keep[i], F_GETFD);
			if (fl >= 0)
				fcntl(keep[i], F_SETFD, fl & ~FD_CLOEXEC);
		}
		if (s->zCwd && chdir(s->zCwd) < 0) {
			dprintf(2, "kloop: cannot change directory to %s: %s\n", s->zCwd,
			        strerror(errno));
			_exit(127);
		}
		execvp(s->argv[0], s->argv);
		dprintf(2, "kloop: cannot run %s: %s\n", s->argv[0], strerror(errno));
		_exit(127);
	}
	setpgid(pid, pid);
	if (s->pLife) {
		close(life[0]);
		*s->pLife = life[1];
	}
	if (outp[1] >= 0)
		close(outp[1]);
	if (errp[1] >= 0)
		close(errp[1]);
	if (outp[0] >= 0) {
		fd_nonblock(outp[0]);
		if (pOut)
			*pOut = outp[0];
		else
			close(outp[0]);
	}
	if (errp[0] >= 0) {
		fd_nonblock(errp[0]);
		if (pErr)
			*pErr = errp[0];
		else
			close(errp[0]);
	}
	return pid;
}

/* /proc/PID/stat's state, parent and process group; 0 when gone */
static int proc_stat(const char *zPid, char *pState, int *pPpid, int *pPgrp)
{
	char p[300], buf[512];
	snprintf(p, sizeof p, "/proc/%s/stat", zPid);
	int fd = open(p, O_RDONLY | O_CLOEXEC);
	ssize_t r = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (r <= 0)
		return 0;
	buf[r] = 0;
	char *rp = strrchr(buf, ')');
	return rp && sscanf(rp + 1, " %c %d %d", pState, pPpid, pPgrp) == 3;
}

/* the pids under /proc whose stat matches (parent ppid, or a live member
 * of process group pgrp), up to max; their number */
static int proc_scan(pid_t ppid, pid_t pgrp, pid_t *aOut, int max)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int n = 0;
	while (d && (e = readdir(d)) && n < max) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		char state;
		int pp, pg;
		if (!proc_stat(e->d_name, &state, &pp, &pg))
			continue;
		if ((ppid > 0 && pp == ppid) ||
		    (pgrp > 0 && pg == pgrp && state != 'Z' && state != 'X'))
			aOut[n++] = (pid_t)atoi(e->d_name);
	}
	if (d)
		closedir(d);
	return n;
}

int proc_children(pid_t pid, pid_t *aOut, int max)
{
	return proc_scan(pid, 0, aOut, max);
}

int proc_group_gone(pid_t pgid, double limitS)
{
	if (pgid <= 0)
		return 1;
	double end = now_s() + limitS;
	for (;;) {
		pid_t one;
		/* no member at all, or none but the dead (a zombie whose parent
		 * has not reaped it yet runs nothing) */
		if ((kill(-pgid, 0) < 0 && errno == ESRCH) || proc_scan(0, pgid, &one, 1) == 0)
			return 1;
		if (now_s() >= end)
			return 0;
		struct timespec ts = {0, 2 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
}

static void on_child(int sig)
{
	(void)sig; /* only to interrupt ppoll */
}

/* the keeper's life: see proc_keep */
static _Noreturn void keep(int lifeFd, pid_t child)
{
	/* nothing of its parent's stays open here: not the runner's socket (its
	 * end would never see the runner go), not a pipe someone waits on */
	proc_close_fds(3, &lifeFd, 1, proc_profiler_injected());
	int nul = open("/dev/null", O_RDWR);
	for (int fd = 0; fd < 3 && nul >= 0; fd++)
		if (fd != nul)
			dup2(nul, fd);
	if (nul > 2)
		close(nul);
	/* what stops a job (a terminal's ^C, a hang-up, SIGTERM to its group)
	 * reaches what it runs; this one stays to clean up after them */
	int ign[] = {SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGPIPE, SIGTSTP, SIGTTIN, SIGTTOU};
	for (size_t i = 0; i < sizeof ign / sizeof *ign; i++)
		signal(ign[i], SIG_IGN);
	sigset_t chld, none;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigemptyset(&none);
	sigprocmask(SIG_BLOCK, &chld, NULL);
	struct sigaction sa = {0};
	sa.sa_handler = on_child;
	sigaction(SIGCHLD, &sa, NULL);
	int st = 0, have = 0;
	for (;;) {
		if (waitpid(child, &st, WNOHANG) == child) {
			have = 1;
			break;
		}
		struct pollfd p = {.fd = lifeFd, .events = POLLIN};
		if (ppoll(&p, 1, NULL, &none) > 0 && p.revents)
			break;
	}
	if (!have)
		kill(child, SIGKILL);
	/* what it left below it is this process's now: kill and reap all of it
	 * (a pid namespace's init takes its namespace with it), for at most 10 s */
	for (int round = 0; round < 1000; round++) {
		pid_t kids[256];
		int n = proc_children(getpid(), kids, 256);
		for (int i = 0; i < n; i++)
			kill(kids[i], SIGKILL);
		pid_t r;
		int s;
		while ((r = waitpid(-1, &s, WNOHANG)) > 0)
			if (r == child)
				st = s, have = 1;
		if (r < 0 && errno == ECHILD)
			break;
		struct timespec ts = {0, 10 * 1000 * 1000};
		ppoll(NULL, 0, &ts, &none);
	}
	if (have && WIFSIGNALED(st)) {
		signal(WTERMSIG(st), SIG_DFL);
		sigprocmask(SIG_SETMASK, &none, NULL);
		raise(WTERMSIG(st));
	}
	_exit(have && WIFEXITED(st) ? WEXITSTATUS(st) : 127);
}

pid_t proc_keep(int lifeFd)
{
	pid_t keeper = getpid();
	/* before the fork: an orphan from any depth below comes here */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	pid_t pid = fork();
	if (pid < 0)
		_exit(127);
	if (pid > 0)
		keep(lifeFd, pid);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != keeper)
		_exit(127);
	close(lifeFd);
	return 0;
}

void proc_kill_group(pid_t pid)
{
	if (pid > 0) {
		kill(-pid, SIGKILL);
		kill(pid, SIGKILL);
	}
}

void proc_die_of(int sig)
{
	signal(sig, SIG_DFL);
	sigset_t one;
	sigemptyset(&one);
	sigaddset(&one, sig);
	sigprocmask(SIG_UNBLOCK, &one, NULL);
	raise(sig);
	_exit(128 + sig);
}

void proc_describe_status(int status, char *buf, size_t n)
{
	if (WIFEXITED(status))
		snprintf(buf, n, "exited with status %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, n, "killed by signal %d (SIG%s)", WTERMSIG(status),
		         sigabbrev_np(WTERMSIG(status)) ? sigabbrev_np(WTERMSIG(status)) : "?");
	else
		snprintf(buf, n, "stopped (status 0x%x)", status);
}

int proc_capture(char *const *argv, char **pzOut, size_t max)
{
	int timedOut;
	return proc_capture_timeout(argv, pzOut, max, 0, &timedOut);
}

int proc_capture_timeout(char *const *argv, char **pzOut, size_t max, double timeoutS,
                         int *pTimedOut)
{
	struct proc_spec s = {.argv = argv, .stdinFd = -1, .stdoutFd = -1, .stderrFd = -1};
	int out;
	char err[KL_ERRLEN];
	*pzOut = NULL;
	*pTimedOut = 0;
	pid_t pid = proc_spawn(&s, &out, NULL, err);
	if (pid < 0)
		return -1;
	strbuf sb = STRBUF_INIT;
	char buf[4096];
	double deadline = timeoutS > 0 ? now_s() + timeoutS : 0;
	for (;;) {
		int ms = -1;
		if (deadline > 0) {
			double left = deadline - now_s();
			ms = left > 0 ? (int)(left * 1000) + 1 : 0;
		}
		struct pollfd p = {.fd = out, .events = POLLIN};
		int n = poll(&p, 1, ms);
		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0) {
			*pTimedOut = 1;
			proc_kill_group(pid);
			break;
		}
		ssize_t r = read(out, buf, sizeof buf);
		if (r < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (r <= 0)
			break;
		if (sb.len < max)
			sb_add(&sb, buf, (size_t)r);
	}
	close(out);
	int status;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	*pzOut = sb_detach(&sb);
	return status;
}
