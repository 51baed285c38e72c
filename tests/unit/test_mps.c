/*
 * test_mps.c - MPS for the pool (mps.h) on a host without a GPU, against a
 * FAKE nvidia-cuda-mps-control (tests/fixtures/mps: a script standing in
 * for NVIDIA's control program, which records each call): a running daemon
 * found from its pipe directory, a daemon of kloop's own started in a
 * private directory and named in the environment, stopped by mps_stop, at
 * exit and after a kill -9 (its keeper), a daemon kloop did not start never
 * stopped, mps = off pointing away from one, and the errors of --mps where
 * it cannot work.  The runner's side: test_cand.c; kloop's: e2e/mps.sh.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "mps.h"
#include "util.h"

static char *rec;

/* the fake's record holds a line starting with zLine (within 10 s) */
static int recorded(const char *zLine)
{
	for (int i = 0; i < 1000; i++) {
		strbuf sb = STRBUF_INIT;
		int have =
		    read_file(rec, &sb, 1 << 16, NULL) == 0 && sb.buf && strstr(sb.buf, zLine);
		sb_free(&sb);
		if (have)
			return 1;
		usleep(10000);
	}
	return 0;
}

/* a directory that exists no more, within 10 s */
static int removed(const char *zDir)
{
	for (int i = 0; i < 1000; i++) {
		if (access(zDir, F_OK) < 0)
			return 1;
		usleep(10000);
	}
	return 0;
}

static void write_pid(const char *zDir, long pid)
{
	char *p = xasprintf("%s/nvidia-cuda-mps-control.pid", zDir);
	FILE *f = fopen(p, "w");
	if (f) {
		fprintf(f, "%ld\n", pid);
		fclose(f);
	}
	free(p);
}

/* a child that starts a daemon and then ends as `how` says: its pipe dir */
static char *start_in_child(const char *how)
{
	int p[2];
	if (pipe(p) < 0)
		return NULL;
	pid_t pid = fork();
	if (pid == 0) {
		char err[KL_ERRLEN];
		close(p[0]);
		if (mps_start(NULL, err) < 0)
			_exit(3);
		dprintf(p[1], "%s", mps_started_dir());
		close(p[1]);
		if (!strcmp(how, "kill"))
			raise(SIGKILL);
		exit(0); /* atexit */
	}
	close(p[1]);
	char buf[4096];
	ssize_t n = read(p[0], buf, sizeof buf - 1);
	close(p[0]);
	int st;
	waitpid(pid, &st, 0);
	if (n <= 0)
		return NULL;
	buf[n] = 0;
	return xstrdup(buf);
}

int main(void)
{
	char err[KL_ERRLEN], here[4096], buf[1024];
	char tmp[] = "/tmp/kloop-test-mps.XXXXXX";
	CHECK(mkdtemp(tmp) != NULL, "a scratch directory");
	CHECK(getcwd(here, sizeof here) != NULL, "the working directory");
	rec = xasprintf("%s/record", tmp);
	char *fakeDir = xasprintf("%s/tests/fixtures/mps", here);
	const char *path0 = getenv("PATH");
	char *pathWith = xasprintf("%s:%s", fakeDir, path0 ? path0 : "/usr/bin:/bin");
	char *pathWithout = xstrdup(path0 ? path0 : "/usr/bin:/bin");
	setenv("PATH", pathWith, 1);
	setenv("FAKE_MPS_RECORD", rec, 1);
	setenv("TMPDIR", tmp, 1);
	unsetenv("CUDA_MPS_LOG_DIRECTORY");

	/* ---- a daemon found ---- */
	char *sys = xasprintf("%s/sys", tmp), *ctl = xasprintf("%s/control", sys);
	(void)!mkdir(sys, 0700);
	setenv("CUDA_MPS_PIPE_DIRECTORY", sys, 1);
	CHECK(!strcmp(mps_pipe_dir(), sys), "the pipe directory is $CUDA_MPS_PIPE_DIRECTORY");
	CHECK(!mps_daemon_running(sys), "no control pipe: no daemon");
	CHECK(mkfifo(ctl, 0600) == 0, "a control pipe");
	CHECK(mps_daemon_running(sys), "a control pipe and no pid file: a daemon runs");
	write_pid(sys, 999999999L);
	CHECK(!mps_daemon_running(sys), "its pid file names a process that is gone: none runs");
	write_pid(sys, (long)getpid());
	CHECK(mps_daemon_running(sys), "its pid file names a live process: a daemon runs");
	char *tool = mps_control_path();
	CHECK(tool && strstr(tool, "tests/fixtures/mps/nvidia-cuda-mps-control"),
	      "the control program is found on PATH (%s)", tool ? tool : "none");
	free(tool);
	unsetenv("CUDA_MPS_PIPE_DIRECTORY");
	CHECK(!strcmp(mps_pipe_dir(), "/tmp/nvidia-mps"), "else the default, /tmp/nvidia-mps");
	setenv("CUDA_MPS_PIPE_DIRECTORY", sys, 1);

	/* doctor's line */
	CHECK(mps_describe(MPS_AUTO, 0, buf, sizeof buf) && strstr(buf, "not used unless asked") &&
	          strstr(buf, sys),
	      "doctor, by default: available where it runs, not used unless asked (%s)", buf);
	CHECK(mps_describe(MPS_ON, 0, buf, sizeof buf) && strstr(buf, "in use") && strstr(buf, sys),
	      "doctor, mps = on: in use, where it runs (%s)", buf);
	CHECK(!mps_describe(MPS_OFF, 1, buf, sizeof buf) && strstr(buf, "mps = off"),
	      "doctor: off in the configuration (%s)", buf);

	/* auto says it runs, uses it not and starts nothing; on uses it; off
	 * points away from it */
	char *an = NULL;
	CHECK(mps_begin(MPS_AUTO, "cuda", NULL, 1, &an, err) == 0 && !mps_started_dir() && an &&
	          strstr(an, "not used unless asked"),
	      "auto: the running daemon is said, not used, none started (%s)", an ? an : "");
	free(an);
	CHECK(mps_begin(MPS_ON, "cuda", "local", 1, NULL, err) == 0 && !mps_started_dir(),
	      "on: a running daemon is used, none started");
	char *note = NULL;
	CHECK(mps_begin(MPS_OFF, "cuda", NULL, 1, &note, err) == 0 &&
	          strcmp(getenv("CUDA_MPS_PIPE_DIRECTORY"), sys) &&
	          access(getenv("CUDA_MPS_PIPE_DIRECTORY"), F_OK) < 0 && note &&
	          strstr(note, "not used"),
	      "off: the workers are pointed at a pipe directory where none runs (%s)",
	      note ? note : "");
	free(note);
	setenv("CUDA_MPS_PIPE_DIRECTORY", sys, 1);
	mps_stop();
	CHECK(mps_daemon_running(sys) && access(ctl, F_OK) == 0,
	      "mps_stop leaves a daemon kloop did not start alone");

	/* ---- the errors of --mps ---- */
	char *none = xasprintf("%s/none", tmp);
	setenv("CUDA_MPS_PIPE_DIRECTORY", none, 1);
	CHECK(mps_begin(MPS_ON, "host", NULL, 1, NULL, err) < 0 && strstr(err, "--backend cuda"),
	      "--mps on the host backend: %s", err);
	CHECK(mps_begin(MPS_ON, "cuda", "local:1;ssh:gpu1", 1, NULL, err) < 0 &&
	          strstr(err, "ssh:gpu1"),
	      "--mps with workers on other hosts: %s", err);
	CHECK(mps_begin(MPS_ON, "cuda", NULL, 0, NULL, err) < 0 && strstr(err, "no GPU"),
	      "--mps without a GPU: %s", err);
	setenv("PATH", pathWithout, 1);
	CHECK(mps_begin(MPS_ON, "cuda", NULL, 1, NULL, err) < 0 && strstr(err, "not on PATH"),
	      "--mps without nvidia-cuda-mps-control: %s", err);
	setenv("PATH", pathWith, 1);
	CHECK(mps_begin(MPS_AUTO, "cuda", NULL, 0, NULL, err) == 0 && !mps_started_dir(),
	      "auto with no daemon and no GPU: nothing to do, no error");
	setenv("FAKE_MPS_FAIL", "a test", 1);
	CHECK(mps_begin(MPS_ON, "cuda", NULL, 1, NULL, err) < 0 && strstr(err, "did not start") &&
	          strstr(err, "cannot start (a test)") && !getenv("CUDA_MPS_PIPE_DIRECTORY"),
	      "a daemon that does not start: its own words (%s)", err);
	unsetenv("FAKE_MPS_FAIL");
	char *ls = xasprintf("ls -d %s/kloop-mps-* 2>/dev/null | grep -q .", tmp);
	CHECK(system(ls) != 0, "... and its private directory is gone");

	/* ---- one of kloop's own ---- */
	setenv("CUDA_MPS_PIPE_DIRECTORY", none, 1);
	CHECK(mps_begin(MPS_ON, "cuda", "local:2", 2, &note, err) == 0 && mps_started_dir(),
	      "on, none running: one started (%s)", note ? note : err);
	free(note);
	const char *dir = mps_started_dir();
	char *mine = xstrdup(dir ? dir : "?");
	char *prefix = xasprintf("%s/kloop-mps-", tmp);
	CHECK(!strncmp(mine, prefix, strlen(prefix)), "in a private directory under $TMPDIR (%s)",
	      mine);
	const char *envPipe = getenv("CUDA_MPS_PIPE_DIRECTORY"),
	           *envLog = getenv("CUDA_MPS_LOG_DIRECTORY");
	CHECK(envPipe && !strcmp(envPipe, mine) && envLog && strstr(envLog, "/log"),
	      "its pipe and log directories are in the environment the workers inherit");
	char *line = xasprintf("start %s %s", mine, envLog ? envLog : "?");
	CHECK(recorded(line), "the control program was run with -d in that environment");
	free(line);
	CHECK(mps_daemon_running(mine), "the daemon runs there");
	CHECK(mps_describe(MPS_ON, 1, buf, sizeof buf) && strstr(buf, "in use"),
	      "doctor in this process: in use (%s)", buf);
	CHECK(mps_begin(MPS_ON, "cuda", NULL, 2, NULL, err) == 0 &&
	          !strcmp(mps_started_dir(), mine),
	      "a second pool: the same daemon");
	mps_stop();
	line = xasprintf("quit %s", mine);
	CHECK(recorded(line), "mps_stop sends it quit");
	free(line);
	CHECK(!mps_started_dir() && !getenv("CUDA_MPS_PIPE_DIRECTORY") && removed(mine),
	      "and its private directory is gone");

	/* at exit, and when kloop is killed: the keeper stops it */
	char *d1 = start_in_child("exit");
	line = xasprintf("quit %s", d1 ? d1 : "?");
	CHECK(d1 && recorded(line) && removed(d1), "a process that exits stops its daemon (%s)",
	      d1 ? d1 : "none");
	free(line);
	char *d2 = start_in_child("kill");
	line = xasprintf("quit %s", d2 ? d2 : "?");
	CHECK(d2 && recorded(line) && removed(d2),
	      "a process killed with SIGKILL: its keeper stops the daemon (%s)", d2 ? d2 : "none");
	free(line);
	CHECK(access(ctl, F_OK) == 0, "the daemon kloop did not start is still there");

	char *rm = xasprintf("rm -rf %s", tmp);
	(void)!system(rm);
	free(rm), free(ls), free(d1), free(d2), free(mine), free(prefix), free(none), free(sys),
	    free(ctl), free(rec), free(fakeDir), free(pathWith), free(pathWithout);
	return check_done();
}
