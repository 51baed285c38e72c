/*
 * journal.c - append-only JSON-lines journal: write(2) of whole lines with
 * an fdatasync-free flush per event, and a tolerant reader.
 */
#include "journal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "util.h"

struct journal {
	int fd;      /* opened O_APPEND */
	char *zPath; /* for messages */
	int bEndNl;  /* the file ends in a partial line: the next append ends it */
};

/* "pid N (COMMAND LINE)" of the process holding a flock on the file st
 * names, from /proc/locks, or "" when it cannot be told */
static void lock_holder(const struct stat *st, char *buf, size_t n)
{
	buf[0] = 0;
	FILE *f = fopen("/proc/locks", "re");
	if (!f)
		return;
	char line[512];
	char want[96];
	snprintf(want, sizeof want, "%02x:%02x:%llu", major(st->st_dev), minor(st->st_dev),
	         (unsigned long long)st->st_ino);
	long pid = 0;
	while (!pid && fgets(line, sizeof line, f)) {
		/* "1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF" */
		char kind[16], mode[16], rw[16], dev[96];
		long p;
		if (sscanf(line, "%*[^:]: %15s %15s %15s %ld %95s", kind, mode, rw, &p, dev) == 5 &&
		    !strcmp(kind, "FLOCK") && !strcmp(dev, want) && p > 0)
			pid = p;
	}
	fclose(f);
	if (!pid)
		return;
	char path[64], cmd[256] = "";
	snprintf(path, sizeof path, "/proc/%ld/cmdline", pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t r = fd >= 0 ? read(fd, cmd, sizeof cmd - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (r > 0) {
		for (ssize_t i = 0; i < r; i++)
			if (!cmd[i])
				cmd[i] = ' ';
		while (r > 0 && cmd[r - 1] == ' ')
			r--;
		cmd[r] = 0;
	}
	char *clean = term_clean(cmd, 0);
	snprintf(buf, n, "pid %ld%s%s", pid, *clean ? ": " : "", clean);
	free(clean);
}

struct journal *journal_open(const char *zPath, char *err)
{
	struct stat st;
	char e2[KL_ERRLEN];
	/* a FIFO or a device in the journal's place would block the open */
	if (stat(zPath, &st) == 0 && file_check_regular(zPath, e2) < 0)
		return kl_err(err, "%s (the session journal)", e2), NULL;
	int fd = open(zPath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NONBLOCK, 0644);
	if (fd < 0)
		return kl_err(err, "%s: cannot open the session journal for writing: %s", zPath,
		              strerror(errno)),
		       NULL;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return kl_err(err, "%s: the session journal is not a regular file", zPath), NULL;
	}
	/* one writer per journal: a second process appending would interleave
	 * candidates and attach results to the wrong sources */
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		int e = errno;
		char who[320];
		lock_holder(&st, who, sizeof who);
		close(fd);
		if (e == EWOULDBLOCK) {
			kl_err(err,
			       "%s: the session is open for writing in another process (%s); "
			       "close it there first, or read it with 'kloop session %s'",
			       zPath, *who ? who : "its pid is not known", zPath);
			errno = EBUSY;
		} else {
			kl_err(err, "%s: cannot lock the session journal: %s", zPath, strerror(e));
			errno = e;
		}
		return NULL;
	}
	/* a previous crash may have left a partial last line: the next event
	 * ends it first, so that it starts on a line of its own (not now: a
	 * reader of the journal still sees the last line as truncated) */
	int bEndNl = 0;
	if (st.st_size > 0) {
		int rfd = open(zPath, O_RDONLY | O_CLOEXEC);
		char c = '\n';
		bEndNl = rfd >= 0 && pread(rfd, &c, 1, st.st_size - 1) == 1 && c != '\n';
		if (rfd >= 0)
			close(rfd);
	}
	struct journal *j = xcalloc(1, sizeof *j);
	j->bEndNl = bEndNl;
	j->fd = fd;
	j->zPath = xstrdup(zPath);
	return j;
}

void journal_close(struct journal *j)
{
	if (!j)
		return;
	close(j->fd);
	free(j->zPath);
	free(j);
}

int journal_append(struct journal *j, const cJSON *ev, char *err)
{
	char *zEv = json_text(ev, 0);
	char *z = xasprintf("%s%s\n", j->bEndNl ? "\n" : "", zEv);
	free(zEv);
	struct stat st;
	off_t before = fstat(j->fd, &st) == 0 ? st.st_size : -1;
	int rc = write_all(j->fd, z, strlen(z));
	free(z);
	if (rc == 0)
		j->bEndNl = 0;
	if (rc < 0) {
		int e = errno;
		/* a line cut short (a full disk) would swallow the next event: cut
		 * the journal back to the last whole line (we hold the lock) */
		if (before >= 0)
			(void)!ftruncate(j->fd, before);
		return kl_err(err, "%s: cannot append to the session journal: %s", j->zPath,
		              e ? strerror(e) : "short write");
	}
	return 0;
}

int journal_read(const char *zPath, journal_event_fn fn, journal_bad_fn bad, void *arg, char *err)
{
	strbuf sb = STRBUF_INIT;
	if (read_file(zPath, &sb, (size_t)1 << 34, err) < 0) {
		sb_free(&sb);
		return -1;
	}
	int n = 0, line = 0;
	const char *p = sb.buf, *end = sb.buf + sb.len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
		line++;
		if (len == 0) {
			p += 1;
			continue;
		}
		if (len > JOURNAL_LINE_MAX) {
			if (bad)
				bad(line, "a line over the limit of " JOURNAL_LINE_MAX_S, !nl, arg);
			p += len + (nl ? 1 : 0);
			continue;
		}
		cJSON *o = cJSON_ParseWithLength(p, len);
		if (o && cJSON_IsObject(o)) {
			fn(o, p, len, line, arg);
			n++;
		} else if (bad) {
			bad(line, o ? "not a JSON object" : "not valid JSON", !nl, arg);
		}
		cJSON_Delete(o);
		p += len + (nl ? 1 : 0);
	}
	sb_free(&sb);
	return n;
}
