/*
 * journal.c - append-only JSON-lines journal: write(2) of whole lines with
 * an fdatasync-free flush per event, and a tolerant reader.
 */
#include "journal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

struct journal {
	int fd;       /* opened O_APPEND */
	char *zPath;  /* for messages */
};

struct journal *journal_open(const char *zPath, char *err)
{
	int fd = open(zPath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0)
		return kl_err(err, "%s: cannot open the session journal for writing: %s", zPath,
			      strerror(errno)),
		       NULL;
	/* a previous crash may have left a partial last line: end it so that the
	 * next event starts on a line of its own */
	struct stat st;
	if (fstat(fd, &st) == 0 && st.st_size > 0) {
		int rfd = open(zPath, O_RDONLY | O_CLOEXEC);
		char c = '\n';
		if (rfd >= 0 && pread(rfd, &c, 1, st.st_size - 1) == 1 && c != '\n')
			(void)!write(fd, "\n", 1);
		if (rfd >= 0)
			close(rfd);
	}
	struct journal *j = xcalloc(1, sizeof *j);
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
	char *z = cJSON_PrintUnformatted(ev);
	size_t n = strlen(z);
	z = xrealloc(z, n + 2);
	z[n] = '\n';
	int rc = write_all(j->fd, z, n + 1);
	free(z);
	if (rc < 0)
		return kl_err(err, "%s: cannot append to the session journal: %s", j->zPath,
			      strerror(errno));
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
		cJSON *o = cJSON_ParseWithLength(p, len);
		if (o && cJSON_IsObject(o)) {
			fn(o, line, arg);
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
