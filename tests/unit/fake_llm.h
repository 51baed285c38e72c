/*
 * fake_llm.h - start and stop tests/fake_llm/server.py from a unit test: it
 * binds 127.0.0.1 port 0 and writes the port it got to a file, which this
 * waits for.  Tests run from the repository root (tests/run.sh).
 */
#ifndef KL_TEST_FAKE_LLM_H
#define KL_TEST_FAKE_LLM_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proc.h"
#include "util.h"

struct fake_llm {
	pid_t pid;    /* the server (its process group) */
	int port;     /* the port it listens on, 0 if it did not start */
	char dir[64]; /* a temporary directory for the port file and the log */
	char *zLog;   /* the request log (JSON lines) */
	char *zBase;  /* http://127.0.0.1:PORT/v1 */
};

/* start the server on script zScript; 0, or -1 when it did not come up in 10 s */
static int fake_llm_start(struct fake_llm *f, const char *zScript)
{
	memset(f, 0, sizeof *f);
	snprintf(f->dir, sizeof f->dir, "/tmp/kloop-fake-llm.XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	char *port = xasprintf("%s/port", f->dir);
	f->zLog = xasprintf("%s/log.jsonl", f->dir);
	char *argv[] = {"python3",     "tests/fake_llm/server.py",
	                "--script",    (char *)zScript,
	                "--port-file", port,
	                "--log",       f->zLog,
	                NULL};
	int devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
	struct proc_spec s = {.argv = argv, .stdinFd = -1, .stdoutFd = devnull, .stderrFd = -1};
	char err[KL_ERRLEN];
	f->pid = proc_spawn(&s, NULL, NULL, err);
	close(devnull);
	for (int i = 0; f->pid > 0 && i < 1000 && !f->port; i++) {
		FILE *fp = fopen(port, "r");
		if (fp) {
			if (fscanf(fp, "%d", &f->port) != 1)
				f->port = 0;
			fclose(fp);
		}
		if (!f->port)
			usleep(10000);
	}
	free(port);
	if (!f->port)
		return -1;
	f->zBase = xasprintf("http://127.0.0.1:%d/v1", f->port);
	return 0;
}

static void fake_llm_stop(struct fake_llm *f)
{
	if (f->pid > 0) {
		proc_kill_group(f->pid);
		waitpid(f->pid, NULL, 0);
	}
	char *p = xasprintf("%s/port", f->dir);
	unlink(p);
	free(p);
	unlink(f->zLog);
	rmdir(f->dir);
	free(f->zLog);
	free(f->zBase);
	memset(f, 0, sizeof *f);
}

#endif
