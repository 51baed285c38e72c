/*
 * test_start_order.c - the host's runner starts one at a time
 * (start_order.h): a runner that comes while another holds the lock takes
 * it only after the holder's made line, at every level; a runner killed
 * while it holds the lock lets it go; no file named, no order.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "slurp.h"
#include "start_order.h"
#include "util.h"

/* a child that takes the lock at level as zId, says so on its pipe, holds
 * it until its go pipe closes (or forever: die 1), then gives it */
static pid_t holder(int level, const char *zId, int *pTook, int *pGo)
{
	int took[2], go[2];
	if (pipe(took) < 0 || pipe(go) < 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		/* its own two ends alone (another holder's go pipe kept open
		 * here would never close) */
		if (dup2(took[1], 100) < 0 || dup2(go[0], 101) < 0)
			_exit(1);
		close_range(3, 99, 0);
		close_range(102, ~0u, 0);
		int fd = start_order_open();
		start_order_take(fd, level, zId);
		(void)!write(100, "t", 1);
		char c;
		(void)!read(101, &c, 1); /* until the parent closes it */
		start_order_give(fd, zId, 1);
		_exit(0);
	}
	close(took[1]);
	close(go[0]);
	*pTook = took[0];
	*pGo = go[1];
	return pid;
}

/* wait until the child said it took the lock */
static void wait_took(int fd)
{
	char c;
	(void)!read(fd, &c, 1);
	close(fd);
}

int main(void)
{
	char dir[] = "/tmp/kloop-test-order-XXXXXX";
	if (!mkdtemp(dir))
		return 1;
	char *path = path_join(dir, "runners.lock");
	unsetenv("KLOOP_RUNNER_LOCK");
	CHECK(start_order_open() < 0, "no file named: no order (no descriptor)");
	start_order_take(-1, START_NOW, "x");
	start_order_give(-1, "x", 1);
	setenv("KLOOP_RUNNER_LOCK", path, 1);
	int fd = start_order_open();
	CHECK(fd > 9, "the lock opened above the descriptors a runner is given (%d)", fd);
	if (fd >= 0)
		close(fd);

	/* at each level of the one that comes second: it waits for the holder */
	const char *names[] = {"now", "spare", "extra"};
	for (int level = START_NOW; level <= START_EXTRA; level++) {
		unlink(path);
		int t1, g1, t2, g2;
		pid_t a = holder(START_NOW, "a.1", &t1, &g1);
		wait_took(t1);
		pid_t b = holder(level, "b.1", &t2, &g2);
		close(g2);      /* b gives it back as soon as it has it */
		usleep(100000); /* a chance for b to take it wrongly: not a timing
		                   the test needs, the order is the lock's */
		close(g1);
		waitpid(a, NULL, 0);
		wait_took(t2);
		waitpid(b, NULL, 0);
		char *j = slurp(path, NULL), want[128];
		snprintf(want, sizeof want, "take 0 a.1\nmade a.1 ok\ntake %d b.1\nmade b.1 ok\n",
		         level);
		CHECK(!strcmp(j, want),
		      "a runner (%s) that comes while another holds the lock takes it after the "
		      "holder's made line (%s)",
		      names[level], j);
		free(j);
	}

	/* a holder killed: the lock goes with it, the next one takes it */
	unlink(path);
	int t1, g1, t2, g2;
	pid_t a = holder(START_NOW, "a.2", &t1, &g1);
	wait_took(t1);
	pid_t b = holder(START_SPARE, "b.2", &t2, &g2);
	close(g2);
	kill(a, SIGKILL);
	waitpid(a, NULL, 0);
	close(g1);
	wait_took(t2);
	waitpid(b, NULL, 0);
	char *j = slurp(path, NULL);
	CHECK(!strcmp(j, "take 0 a.2\ntake 1 b.2\nmade b.2 ok\n"),
	      "a holder killed lets the lock go: the next takes it (%s)", j);
	free(j);

	unlink(path);
	rmdir(dir);
	free(path);
	return check_done();
}
