/*
 * util.c - allocation, fatal errors, strbuf, error formatting and small
 * file and fd helpers shared by every part of kloop.
 */
#include "util.h"

#include <cJSON.h>

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
	/* said outright: with -fsanitize=undefined at -O1, GCC 12 otherwise sees
	 * the sanitizer's own null-argument check as a path with fmt NULL into
	 * vsnprintf and fails the build with -Wformat-truncation ("null format
	 * string") */
	if (!fmt)
		die("sb_vaddf: no format string");
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

static const char *file_kind(mode_t m)
{
	return S_ISDIR(m)    ? "a directory"
	       : S_ISFIFO(m) ? "a FIFO (named pipe)"
	       : S_ISCHR(m)  ? "a character device"
	       : S_ISBLK(m)  ? "a block device"
	       : S_ISSOCK(m) ? "a socket"
	                     : "not a regular file";
}

int file_check_regular(const char *path, char *err)
{
	struct stat st;
	if (stat(path, &st) < 0)
		return kl_err(err, "%s: cannot open: %s", path, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return kl_err(err, "%s: is %s, not a regular file", path, file_kind(st.st_mode));
	return 0;
}

int read_file(const char *path, strbuf *sb, size_t max, char *err)
{
	if (file_check_regular(path, err) < 0)
		return -1;
	/* O_NONBLOCK: a FIFO put in the file's place since the check must not
	 * block the open; fstat below then refuses it */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return kl_err(err, "%s: cannot open: %s", path, strerror(errno));
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return kl_err(err, "%s: is %s, not a regular file", path, file_kind(st.st_mode));
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

/* write p into path through a temporary file renamed over it */
static int write_replacing(const char *path, const void *p, size_t n, char *err)
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

int write_file_atomic(const char *zPath, const void *p, size_t n, char *err)
{
	/* a link is written through (its target is replaced, the link stays);
	 * what exists and is not a regular file (a FIFO, a device, a
	 * directory) is not replaced by one */
	char *real = realpath(zPath, NULL);
	const char *path = real ? real : zPath;
	struct stat st;
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		kl_err(err, "%s is not a regular file (%s): not replaced; give a file's path",
		       zPath,
		       S_ISDIR(st.st_mode)                          ? "a directory"
		       : S_ISFIFO(st.st_mode)                       ? "a FIFO"
		       : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device"
		                                                    : "a socket or the like");
		free(real);
		return -1;
	}
	int rc = write_replacing(path, p, n, err);
	free(real);
	return rc;
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

int path_is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int path_is_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
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

char *cache_dir_default(void)
{
	const char *x = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");
	if (x && *x)
		return xasprintf("%s/kloop", x);
	return xasprintf("%s/.cache/kloop", home && *home ? home : "/tmp");
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

char *path_search(const char *zProgram)
{
	const char *path = getenv("PATH");
	for (const char *p = path ? path : ""; *p;) {
		size_t n = strcspn(p, ":");
		char *z = xasprintf("%.*s/%s", (int)n, p, zProgram);
		struct stat st;
		if (n && stat(z, &st) == 0 && S_ISREG(st.st_mode) && access(z, X_OK) == 0)
			return z;
		free(z);
		p += n + (p[n] == ':');
	}
	return NULL;
}

double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static const char *step_trace_file(void)
{
	static const char *z;
	static int looked;
	if (!looked) {
		looked = 1;
		z = getenv("KLOOP_STEP_TRACE");
	}
	return z && *z ? z : NULL;
}

int step_tracing(void)
{
	return step_trace_file() != NULL;
}

void step_trace(const char *zWhat, double t0)
{
	if (step_tracing())
		step_trace_span(zWhat, t0, now_s());
}

void step_trace_span(const char *zWhat, double t0, double t)
{
	const char *z = step_trace_file();
	if (!z)
		return;
	FILE *f = fopen(z, "ae");
	if (!f)
		return;
	fprintf(f, "{\"pid\":%ld,\"at\":%.6f,\"what\":\"%s\",\"ms\":%.3f}\n", (long)getpid(), t,
	        zWhat, (t - t0) * 1e3);
	fclose(f);
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
		int len = (c & 0xE0) == 0xC0   ? 2
		          : (c & 0xF0) == 0xE0 ? 3
		          : (c & 0xF8) == 0xF0 ? 4
		                               : 0;
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

char *str_abbrev(const char *z, size_t max)
{
	size_t n = strlen(z);
	if (max < 16)
		max = 16;
	if (n <= max)
		return xstrdup(z);
	size_t head = max / 2, tail = max - head;
	while (head > 0 && ((unsigned char)z[head] & 0xC0) == 0x80)
		head--;
	size_t from = n - tail;
	while (from < n && ((unsigned char)z[from] & 0xC0) == 0x80)
		from++;
	return xasprintf("%.*s...%s (%zu bytes)", (int)head, z, z + from, n);
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
		int len = (c & 0xE0) == 0xC0   ? 2
		          : (c & 0xF0) == 0xE0 ? 3
		          : (c & 0xF8) == 0xF0 ? 4
		                               : 0;
		int ok = len && i + (size_t)len <= n && c != 0xC0 && c != 0xC1;
		for (int k = 1; ok && k < len; k++)
			ok = ((unsigned char)s[i + k] & 0xC0) == 0x80;
		if (!ok)
			s[i++] = '?';
		else
			i += (size_t)len;
	}
}

/* ---- line splitting ---- */

void lb_init(struct linebuf *lb, size_t max)
{
	memset(lb, 0, sizeof *lb);
	lb->max = max;
}

void lb_free(struct linebuf *lb)
{
	sb_free(&lb->sb);
	lb->off = lb->scan = 0;
}

void lb_add(struct linebuf *lb, const void *p, size_t n)
{
	if (lb->off) { /* drop the lines returned, once per read rather than per line */
		sb_consume(&lb->sb, lb->off);
		lb->off = 0;
	}
	sb_add(&lb->sb, p, n);
}

int lb_next(struct linebuf *lb, char **pz, size_t *pn)
{
	size_t avail = lb->sb.len - lb->off;
	if (lb->scan > avail)
		lb->scan = avail;
	char *start = lb->sb.buf ? lb->sb.buf + lb->off : NULL;
	char *nl = avail > lb->scan ? memchr(start + lb->scan, '\n', avail - lb->scan) : NULL;
	if (!nl) {
		lb->scan = avail;
		return avail > lb->max ? -1 : 0;
	}
	size_t n = (size_t)(nl - start);
	if (n > lb->max)
		return -1;
	*nl = 0;
	*pz = start;
	*pn = n;
	lb->off += n + 1;
	lb->scan = 0;
	return 1;
}

size_t lb_pending(const struct linebuf *lb)
{
	return lb->sb.len - lb->off;
}

/* ---- terminal-safe text ---- */

/* length of the valid UTF-8 sequence at p (n bytes left), 0 if invalid */
static size_t utf8_len(const unsigned char *p, size_t n)
{
	unsigned c = p[0];
	size_t len = c < 0x80             ? 1
	             : (c & 0xE0) == 0xC0 ? 2
	             : (c & 0xF0) == 0xE0 ? 3
	             : (c & 0xF8) == 0xF0 ? 4
	                                  : 0;
	if (!len || len > n || c == 0xC0 || c == 0xC1 || c > 0xF4)
		return 0;
	for (size_t k = 1; k < len; k++)
		if ((p[k] & 0xC0) != 0x80)
			return 0;
	/* overlong 3- and 4-byte forms and surrogates */
	if (len == 3 && ((c == 0xE0 && p[1] < 0xA0) || (c == 0xED && p[1] >= 0xA0)))
		return 0;
	if (len == 4 && ((c == 0xF0 && p[1] < 0x90) || (c == 0xF4 && p[1] >= 0x90)))
		return 0;
	return len;
}

/* bytes at p that pass unchanged (0: the byte at p needs escaping) */
static size_t term_pass(const unsigned char *p, size_t n, int flags)
{
	unsigned c = p[0];
	if (c == '\n')
		return flags & TERM_KEEP_NL ? 1 : 0;
	if (c == '\t')
		return flags & TERM_KEEP_TAB ? 1 : 0;
	if (c < 0x20 || c == 0x7F)
		return 0;
	size_t len = utf8_len(p, n);
	if (len == 2 && c == 0xC2 && p[1] < 0xA0)
		return 0; /* a C1 control, U+0080..U+009F */
	return len;
}

void term_sanitize(strbuf *sb, const char *s, size_t n, int flags)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;
	sb_grow(sb, n);
	while (i < n) {
		size_t run = i, k;
		while (run < n && (k = term_pass(p + run, n - run, flags)) > 0)
			run += k;
		if (run > i)
			sb_add(sb, p + i, run - i);
		i = run;
		if (i >= n)
			break;
		unsigned c = p[i];
		if (c == 0x1B)
			sb_adds(sb, "\\e");
		else if (c == '\n')
			sb_adds(sb, "\\n");
		else if (c == '\t')
			sb_adds(sb, "\\t");
		else if (c == 0xC2 && i + 1 < n && p[i + 1] >= 0x80 && p[i + 1] < 0xA0) {
			sb_addf(sb, "\\x%02X", p[i + 1]); /* the C1 control's code */
			i++;
		} else
			sb_addf(sb, "\\x%02X", c);
		i++;
	}
	if (!sb->buf)
		sb_grow(sb, 0), sb->buf[0] = 0;
}

int num_parse(const char *z, double *pOut)
{
	const char *p = z;
	if (*p == '+' || *p == '-')
		p++;
	size_t nd = strspn(p, "0123456789");
	p += nd;
	if (*p == '.') {
		size_t nf = strspn(p + 1, "0123456789");
		p += 1 + nf;
		nd += nf;
	}
	if (!nd)
		return -1;
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		size_t ne = strspn(p, "0123456789");
		if (!ne)
			return -1;
		p += ne;
	}
	if (*p)
		return -1;
	*pOut = strtod(z, NULL);
	return 0;
}

int words_find(const char *zWords, const char *z)
{
	size_t n = strlen(z);
	int i = 0;
	for (const char *p = zWords; *p; i++) {
		size_t k = strcspn(p, "|");
		if (k == n && !strncmp(p, z, n))
			return i;
		p += k + (p[k] == '|');
	}
	return -1;
}

void words_say(const char *zWords, char *buf, size_t n)
{
	strbuf sb = STRBUF_INIT;
	for (const char *p = zWords; *p;) {
		size_t k = strcspn(p, "|");
		sb_add(&sb, p, k);
		p += k + (p[k] == '|');
		if (*p)
			sb_adds(&sb, strchr(p, '|') ? ", " : " or ");
	}
	snprintf(buf, n, "%s", sb.buf ? sb.buf : "");
	sb_free(&sb);
}

char *json_text(const void *o, int pretty)
{
	if (!o)
		return NULL;
	char *z = pretty ? cJSON_Print(o) : cJSON_PrintUnformatted(o);
	if (!z)
		die("out of memory printing JSON");
	const unsigned char *p = (const unsigned char *)z;
	size_t n = strlen(z);
	if (term_is_clean(z, n, TERM_KEEP_NL | TERM_KEEP_TAB))
		return z;
	strbuf sb = STRBUF_INIT;
	for (size_t i = 0, k; i < n; i += k) {
		if ((k = term_pass(p + i, n - i, TERM_KEEP_NL | TERM_KEEP_TAB)) > 0) {
			sb_add(&sb, p + i, k);
			continue;
		}
		k = 1;
		if (p[i] == 0xC2 && i + 1 < n && p[i + 1] >= 0x80 && p[i + 1] < 0xA0) {
			sb_addf(&sb, "\\u00%02x", p[i + 1]);
			k = 2;
		} else if (p[i] == 0x7F || p[i] < 0x20) {
			sb_addf(&sb, "\\u%04x", p[i]);
		} else {
			sb_adds(&sb, "\\ufffd");
		}
	}
	free(z);
	return sb_detach(&sb);
}

char *term_clean(const char *s, int flags)
{
	strbuf sb = STRBUF_INIT;
	if (!s)
		s = "";
	term_sanitize(&sb, s, strlen(s), flags);
	return sb_detach(&sb);
}

int term_is_clean(const char *s, size_t n, int flags)
{
	const unsigned char *p = (const unsigned char *)s;
	for (size_t i = 0, k; i < n; i += k)
		if (!(k = term_pass(p + i, n - i, flags)))
			return 0;
	return 1;
}

/* ---- guarded stdout/stderr ---- */

struct tguard {
	int fd;                /* the real descriptor written to */
	unsigned char pend[4]; /* an incomplete UTF-8 sequence held for the next write */
	size_t nPend;
};

static FILE *guardOrig[2]; /* the real stdout and stderr while guarded */
/* the guards' states: glibc keeps a FILE's cookie mangled, so this is the
 * reference to them LeakSanitizer sees while a program ends guarded */
static struct tguard *guardCookie[2];

/* bytes at the end of p (n) that may begin a UTF-8 sequence still to be
 * completed by the next write (0..3) */
static size_t utf8_partial_tail(const unsigned char *p, size_t n)
{
	for (size_t back = 1; back <= 3 && back <= n; back++) {
		unsigned c = p[n - back];
		if ((c & 0xC0) == 0x80)
			continue; /* a continuation byte: look further back */
		size_t len = (c & 0xE0) == 0xC0   ? 2
		             : (c & 0xF0) == 0xE0 ? 3
		             : (c & 0xF8) == 0xF0 ? 4
		                                  : 0;
		return len > back ? back : 0;
	}
	return 0;
}

static ssize_t tguard_write(void *cookie, const char *buf, size_t n)
{
	struct tguard *g = cookie;
	strbuf in = STRBUF_INIT, out = STRBUF_INIT;
	sb_add(&in, g->pend, g->nPend);
	sb_add(&in, buf, n);
	size_t keep = utf8_partial_tail((const unsigned char *)in.buf, in.len);
	g->nPend = keep;
	memcpy(g->pend, in.buf + in.len - keep, keep);
	term_sanitize(&out, in.buf, in.len - keep, TERM_KEEP_NL | TERM_KEEP_TAB);
	int rc = write_all(g->fd, out.buf, out.len);
	sb_free(&in);
	sb_free(&out);
	return rc < 0 ? -1 : (ssize_t)n;
}

static int tguard_close(void *cookie)
{
	struct tguard *g = cookie;
	for (int i = 0; i < 2; i++)
		if (guardCookie[i] == g)
			guardCookie[i] = NULL;
	if (g->nPend) {
		strbuf out = STRBUF_INIT;
		term_sanitize(&out, (const char *)g->pend, g->nPend, 0);
		(void)!write_all(g->fd, out.buf, out.len);
		sb_free(&out);
	}
	free(g);
	return 0;
}

static FILE *guard_stream(int fd, int mode)
{
	struct tguard *g = xcalloc(1, sizeof *g);
	g->fd = fd;
	guardCookie[fd == STDERR_FILENO] = g;
	cookie_io_functions_t fns = {.write = tguard_write, .close = tguard_close};
	FILE *f = fopencookie(g, "w", fns);
	if (!f)
		die("fopencookie: %s", strerror(errno));
	setvbuf(f, NULL, mode, 0);
	return f;
}

void term_guard(void)
{
	if (guardOrig[0])
		return;
	fflush(stdout);
	fflush(stderr);
	guardOrig[0] = stdout;
	guardOrig[1] = stderr;
	stdout = guard_stream(STDOUT_FILENO, isatty(STDOUT_FILENO) ? _IOLBF : _IOFBF);
	stderr = guard_stream(STDERR_FILENO, _IONBF);
}

void term_unguard(void)
{
	if (!guardOrig[0])
		return;
	fclose(stdout);
	fclose(stderr);
	stdout = guardOrig[0];
	stderr = guardOrig[1];
	guardOrig[0] = guardOrig[1] = NULL;
}

void term_ctl(FILE *f, const char *zSeq)
{
	fflush(f);
	if (!guardOrig[0]) {
		fputs(zSeq, f);
		fflush(f);
		return;
	}
	(void)!write_all(f == stderr ? STDERR_FILENO : STDOUT_FILENO, zSeq, strlen(zSeq));
}
