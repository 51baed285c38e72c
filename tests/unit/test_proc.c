/*
 * test_proc.c - children as kloop starts them: their own process group
 * (a grandchild in the background dies with proc_kill_group(), and
 * proc_group_gone() waits until it has), inherited
 * fds closed, stdin from /dev/null, ignored signals reset, and the wait
 * status described in words.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "proc.h"
#include "util.h"

/* run sh -c zScript with stdin from /dev/null; its stdout+stderr (fresh) */
static char *run_sh(const char *zScript, int *pStatus)
{
	char *argv[] = {"sh", "-c", (char *)zScript, NULL};
	struct proc_spec s = {.argv = argv, .stdinFd = -1, .stdoutFd = -1, .stderrFd = -1};
	int out = -1, errFd = -1;
	char err[KL_ERRLEN];
	pid_t pid = proc_spawn(&s, &out, &errFd, err);
	if (pid < 0)
		return xasprintf("spawn failed: %s", err);
	strbuf sb = STRBUF_INIT;
	for (;;) {
		struct pollfd pf = {out, POLLIN, 0};
		poll(&pf, 1, 10000);
		char buf[256];
		ssize_t n = read(out, buf, sizeof buf);
		if (n > 0)
			sb_add(&sb, buf, (size_t)n);
		else if (n == 0 || (errno != EAGAIN && errno != EINTR))
			break;
	}
	close(out);
	waitpid(pid, pStatus, 0);
	return sb.buf ? sb_detach(&sb) : xstrdup("");
}

/* 1 when pid is gone or a zombie (killed, not yet reaped by its new parent) */
static int dead(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return 1;
	char state = 0;
	int rc = fscanf(f, "%*d %*s %c", &state);
	fclose(f);
	return rc == 1 && (state == 'Z' || state == 'X');
}

int main(void)
{
	int status = 0;
	/* an fd the parent leaks without close-on-exec */
	int leak = open("/dev/null", O_RDONLY);
	CHECK(leak >= 0 && dup2(leak, 57) == 57, "an fd (57) open in the parent, no close-on-exec");
	char *o =
	    run_sh("if [ -e /proc/self/fd/57 ]; then echo open; else echo closed; fi", &status);
	CHECK(!strcmp(o, "closed\n"), "inherited fds are closed in the child (%.*s)",
	      (int)strcspn(o, "\n"), o);
	free(o);
	close(57);
	close(leak);

	o = run_sh("readlink /proc/self/fd/0", &status);
	CHECK(!strcmp(o, "/dev/null\n"), "stdin is /dev/null (%.*s)", (int)strcspn(o, "\n"), o);
	free(o);

	signal(SIGINT, SIG_IGN);
	o = run_sh("sed -n 's/^SigIgn:[[:space:]]*//p' /proc/self/status", &status);
	/* signals 1 to 31 (bits 0 to 30); glibc keeps 32 and 33 for itself, and
	 * whatever started the test may ignore those */
	unsigned long long ign = strtoull(o, NULL, 16);
	CHECK((ign & 0x7fffffffull) == 0,
	      "signals the parent ignores (SIGINT here) are reset in the child (SigIgn %.*s)",
	      (int)strcspn(o, "\n"), o);
	free(o);
	signal(SIGINT, SIG_DFL);

	o = run_sh("exit 3", &status);
	char d[160];
	proc_describe_status(status, d, sizeof d);
	CHECK(!strcmp(d, "exited with status 3"), "an exit status in words: %s", d);
	free(o);

	/* a child that leaves a grandchild running in the background */
	char *argv[] = {"sh", "-c", "sleep 300 & echo $!; wait", NULL};
	struct proc_spec s = {.argv = argv, .stdinFd = -1, .stdoutFd = -1, .stderrFd = -1};
	int out = -1, errFd = -1;
	char err[KL_ERRLEN];
	pid_t pid = proc_spawn(&s, &out, &errFd, err);
	CHECK(pid > 0, "spawn a child with a background grandchild (%s)", pid > 0 ? "" : err);
	char line[64] = "";
	size_t n = 0;
	while (pid > 0 && n < sizeof line - 1 && !strchr(line, '\n')) {
		struct pollfd pf = {out, POLLIN, 0};
		poll(&pf, 1, 10000);
		ssize_t k = read(out, line + n, sizeof line - 1 - n);
		if (k <= 0 && errno != EAGAIN && errno != EINTR)
			break;
		n += k > 0 ? (size_t)k : 0;
		line[n] = 0;
	}
	pid_t grand = (pid_t)atoi(line);
	CHECK(grand > 0 && getpgid(grand) == pid,
	      "the child leads its own process group, and the grandchild is in it (%d in %d)",
	      (int)getpgid(grand), (int)pid);
	CHECK(!proc_group_gone(pid, 0.02),
	      "proc_group_gone() says a group with a live member is not gone (it waited 20 ms)");
	proc_kill_group(pid);
	waitpid(pid, &status, 0);
	proc_describe_status(status, d, sizeof d);
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL && strstr(d, "SIGKILL"),
	      "proc_kill_group() kills the child: %s", d);
	CHECK(proc_group_gone(pid, 5) && dead(grand),
	      "... and the grandchild in its group: proc_group_gone() returns when it is dead");
	if (out >= 0)
		close(out);
	return check_done();
}
