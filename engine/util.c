/*
 * util.c - allocation, fatal errors, strbuf, error formatting and small
 * file and fd helpers shared by every part of kloop.
 */
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

void die(const char *fmt, ...)
{
	va_list ap;
	fputs("kloop: fatal: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		die("out of memory allocating %zu bytes", n);
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		die("out of memory allocating %zu x %zu bytes", n, size);
	return p;
}

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		die("out of memory reallocating %zu bytes", n);
	return p;
}

char *xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

char *xstrndup(const char *s, size_t n)
{
	char *p = xmalloc(n + 1);
	memcpy(p, s, n);
	p[n] = 0;
	return p;
}

char *xasprintf(const char *fmt, ...)
{
	strbuf sb = STRBUF_INIT;
	va_list ap;
	va_start(ap, fmt);
	sb_vaddf(&sb, fmt, ap);
	va_end(ap);
	return sb_detach(&sb);
}

void xgrow(void **pp, size_t *pn_alloc, size_t n, size_t elsize)
{
	if (n <= *pn_alloc)
		return;
	size_t a = *pn_alloc ? *pn_alloc : 8;
	while (a < n)
		a *= 2;
	*pp = xrealloc(*pp, a * elsize);
	*pn_alloc = a;
}

int kl_err(char *err, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, KL_ERRLEN, fmt, ap);
		va_end(ap);
	}
	return -1;
}

void sb_grow(strbuf *sb, size_t extra)
{
	size_t need = sb->len + extra + 1;
	if (need <= sb->alloc)
		return;
	size_t a = sb->alloc ? sb->alloc : 64;
	while (a < need)
		a *= 2;
	sb->buf = xrealloc(sb->buf, a);
	sb->alloc = a;
}

void sb_add(strbuf *sb, const void *p, size_t n)
{
	sb_grow(sb, n);
	if (n)
		memcpy(sb->buf + sb->len, p, n);
	sb->len += n;
	sb->buf[sb->len] = 0;
}

void sb_adds(strbuf *sb, const char *s)
{
	sb_add(sb, s, strlen(s));
}

void sb_vaddf(strbuf *sb, const char *fmt, va_list ap)
{
	va_list cp;
	va_copy(cp, ap);
	int n = vsnprintf(NULL, 0, fmt, cp);
	va_end(cp);
	if (n < 0)
		die("bad format string %s", fmt);
	sb_grow(sb, (size_t)n);
	vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
	sb->len += (size_t)n;
}

void sb_addf(strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	sb_vaddf(sb, fmt, ap);
	va_end(ap);
}

void sb_consume(strbuf *sb, size_t n)
{
	if (n >= sb->len) {
		sb_reset(sb);
		return;
	}
	memmove(sb->buf, sb->buf + n, sb->len - n);
	sb->len -= n;
	sb->buf[sb->len] = 0;
}

void sb_reset(strbuf *sb)
{
	sb->len = 0;
	if (sb->buf)
		sb->buf[0] = 0;
}

void sb_free(strbuf *sb)
{
	free(sb->buf);
	sb->buf = NULL;
	sb->len = sb->alloc = 0;
}

char *sb_detach(strbuf *sb)
{
	if (!sb->buf)
		sb_grow(sb, 0);
	char *p = sb->buf;
	p[sb->len] = 0;
	sb->buf = NULL;
	sb->len = sb->alloc = 0;
	return p;
}

int read_file(const char *path, strbuf *sb, size_t max, char *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return kl_err(err, "%s: cannot open: %s", path, strerror(errno));
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return kl_err(err, "%s: not a regular file", path);
	}
	if ((size_t)st.st_size > max) {
		close(fd);
		return kl_err(err, "%s: file is %lld bytes, over the limit of %zu bytes", path,
			      (long long)st.st_size, max);
	}
	char tmp[65536];
	for (;;) {
		ssize_t r = read(fd, tmp, sizeof tmp);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;
			close(fd);
			return kl_err(err, "%s: read error: %s", path, strerror(e));
		}
		if (r == 0)
			break;
		sb_add(sb, tmp, (size_t)r);
		if (sb->len > max) {
			close(fd);
			return kl_err(err, "%s: file is over the limit of %zu bytes", path, max);
		}
	}
	close(fd);
	if (!sb->buf) {
		/* an empty file: an empty string, not uninitialised bytes */
		sb_grow(sb, 0);
		sb->buf[sb->len] = 0;
	}
	return 0;
}

int write_file_atomic(const char *path, const void *p, size_t n, char *err)
{
	char *tmp = xasprintf("%s.tmp.%d", path, (int)getpid());
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		kl_err(err, "%s: cannot create: %s", tmp, strerror(errno));
		free(tmp);
		return -1;
	}
	if (write_all(fd, p, n) < 0 || close(fd) < 0) {
		kl_err(err, "%s: write error: %s", tmp, strerror(errno));
		unlink(tmp);
		free(tmp);
		return -1;
	}
	if (rename(tmp, path) < 0) {
		kl_err(err, "%s: cannot rename into place: %s", path, strerror(errno));
		unlink(tmp);
		free(tmp);
		return -1;
	}
	free(tmp);
	return 0;
}

int mkdir_p(const char *path, char *err)
{
	char *p = xstrdup(path);
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = 0;
		if (mkdir(p, 0755) < 0 && errno != EEXIST) {
			kl_err(err, "%s: cannot create directory: %s", p, strerror(errno));
			free(p);
			return -1;
		}
		*s = '/';
	}
	if (mkdir(p, 0755) < 0 && errno != EEXIST) {
		kl_err(err, "%s: cannot create directory: %s", p, strerror(errno));
		free(p);
		return -1;
	}
	free(p);
	return 0;
}

int path_exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

const char *exe_dir(void)
{
	static char dir[PATH_MAX];
	if (dir[0])
		return dir;
	ssize_t n = readlink("/proc/self/exe", dir, sizeof dir - 1);
	if (n <= 0) {
		strcpy(dir, ".");
		return dir;
	}
	dir[n] = 0;
	char *slash = strrchr(dir, '/');
	if (slash && slash != dir)
		*slash = 0;
	return dir;
}

char *exe_data_dir(const char *zSub)
{
	char *build = xasprintf("%s/../%s", exe_dir(), zSub);
	if (path_exists(build))
		return build;
	char *inst = xasprintf("%s/../share/kloop/%s", exe_dir(), zSub);
	if (path_exists(inst)) {
		free(build);
		return inst;
	}
	free(inst);
	return build;
}

char *path_join(const char *a, const char *b)
{
	if (b[0] == '/')
		return xstrdup(b);
	size_t n = strlen(a);
	return xasprintf("%s%s%s", a, (n && a[n - 1] == '/') ? "" : "/", b);
}

double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int write_all(int fd, const void *buf, size_t n)
{
	const char *p = buf;
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno == EAGAIN) {
			struct timespec ts = {0, 1000000};
			nanosleep(&ts, NULL);
			continue;
		}
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

void fd_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

void fd_cloexec(int fd)
{
	int fl = fcntl(fd, F_GETFD);
	if (fl >= 0)
		fcntl(fd, F_SETFD, fl | FD_CLOEXEC);
}

int looks_binary(const char *p, size_t n)
{
	size_t bad = 0;
	for (size_t i = 0; i < n;) {
		unsigned char c = (unsigned char)p[i];
		if (c == 0)
			return 1;
		if (c < 0x80) {
			i++;
			continue;
		}
		int len = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
		int ok = len && i + (size_t)len <= n;
		for (int k = 1; ok && k < len; k++)
			ok = ((unsigned char)p[i + k] & 0xC0) == 0x80;
		if (!ok) {
			bad++;
			i++;
		} else {
			i += (size_t)len;
		}
	}
	return bad * 100 > n + 100;
}

void utf8_sanitize(char *s)
{
	size_t n = strlen(s);
	for (size_t i = 0; i < n;) {
		unsigned char c = (unsigned char)s[i];
		if (c < 0x80) {
			i++;
			continue;
		}
		int len = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
		int ok = len && i + (size_t)len <= n && c != 0xC0 && c != 0xC1;
		for (int k = 1; ok && k < len; k++)
			ok = ((unsigned char)s[i + k] & 0xC0) == 0x80;
		if (!ok)
			s[i++] = '?';
		else
			i += (size_t)len;
	}
}
