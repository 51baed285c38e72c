/*
 * start_order.c - the runners' contexts made one at a time on a lock file
 * the workers of a pool share (start_order.h): open file description locks
 * on its first bytes (the context, and the spares' two gates), a journal
 * appended to the file.
 */
#include "start_order.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* the bytes locked: the context's, then the gates of START_SPARE and
 * START_EXTRA */
enum { BYTE_CONTEXT, BYTE_SPARE, BYTE_EXTRA };

int start_order_open(void)
{
	const char *z = getenv("KLOOP_RUNNER_LOCK");
	if (!z || !*z)
		return -1;
	int fd = open(z, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -1;
	int hi = fcntl(fd, F_DUPFD_CLOEXEC, 10);
	close(fd);
	return hi;
}

/* lock (type F_WRLCK) or unlock (F_UNLCK) byte k of fd, waiting: 0 or -1
 * (an unlock does not wait) */
static int lock_byte(int fd, int k, short type)
{
	struct flock fl = {.l_type = type, .l_whence = SEEK_SET, .l_start = k, .l_len = 1};
	int rc;
	while ((rc = fcntl(fd, F_OFD_SETLKW, &fl)) < 0 && errno == EINTR)
		;
	return rc;
}

static void journal(int fd, const char *zLine)
{
	size_t n = strlen(zLine);
	if (write(fd, zLine, n) != (ssize_t)n)
		return; /* the journal is a record, not the order */
}

void start_order_take(int fd, int level, const char *zId)
{
	if (fd < 0)
		return;
	/* the context's byte, after the gates from the outermost in (a runner
	 * needed now passes none); each gate let go once the next is held */
	int first = level >= START_EXTRA   ? BYTE_EXTRA
	            : level == START_SPARE ? BYTE_SPARE
	                                   : BYTE_CONTEXT;
	if (lock_byte(fd, first, F_WRLCK) < 0)
		return;
	for (int k = first; k > BYTE_CONTEXT; k--) {
		if (lock_byte(fd, k - 1, F_WRLCK) < 0)
			return;
		lock_byte(fd, k, F_UNLCK);
	}
	char line[128];
	snprintf(line, sizeof line, "take %d %s\n", level, zId);
	journal(fd, line);
}

void start_order_give(int fd, const char *zId, int ok)
{
	if (fd < 0)
		return;
	char line[128];
	snprintf(line, sizeof line, "made %s %s\n", zId, ok ? "ok" : "failed");
	journal(fd, line);
	/* all of it: a gate too, where taking the next lock failed */
	struct flock fl = {.l_type = F_UNLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 3};
	fcntl(fd, F_OFD_SETLK, &fl);
	close(fd);
}
