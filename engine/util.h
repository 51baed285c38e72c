/*
 * util.h - small shared helpers: allocation that aborts on exhaustion
 * (xmalloc family), fatal errors (die), a growable string buffer (strbuf),
 * error-message formatting into caller buffers, and file helpers.
 */
#ifndef KL_UTIL_H
#define KL_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* size of the caller-provided error buffers used across kloop */
#define KL_ERRLEN 512

/* print "kloop: fatal: ..." and abort; for broken invariants only */
_Noreturn void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* allocation that never returns NULL (dies on exhaustion) */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
/* printf into a fresh heap string; caller frees */
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* grow *pp (an array of *pn_alloc elements of size elsize) to hold n */
void xgrow(void **pp, size_t *pn_alloc, size_t n, size_t elsize);

/* format an error message into err (KL_ERRLEN bytes); returns -1 so that
 * callers can write `return kl_err(err, "...")` */
int kl_err(char *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* a growable NUL-terminated byte buffer, in the manner of git's strbuf */
typedef struct {
	char *buf;    /* contents, always NUL-terminated once used */
	size_t len;   /* bytes used, excluding the NUL */
	size_t alloc; /* bytes allocated */
} strbuf;

#define STRBUF_INIT {NULL, 0, 0}
void sb_grow(strbuf *sb, size_t extra);
void sb_add(strbuf *sb, const void *p, size_t n);
void sb_adds(strbuf *sb, const char *s);
void sb_addf(strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sb_vaddf(strbuf *sb, const char *fmt, va_list ap);
/* drop the first n bytes */
void sb_consume(strbuf *sb, size_t n);
void sb_reset(strbuf *sb);
void sb_free(strbuf *sb);
/* hand the buffer to the caller (who frees it); sb is reset */
char *sb_detach(strbuf *sb);

/* read a whole file into sb (appending); refuses files over max bytes.
 * Returns 0, or -1 with err naming the path and the reason. */
int read_file(const char *path, strbuf *sb, size_t max, char *err);
/* write n bytes to path atomically (temp file + rename); 0 or -1 + err */
int write_file_atomic(const char *path, const void *p, size_t n, char *err);
/* mkdir -p; 0 or -1 + err */
int mkdir_p(const char *path, char *err);
/* 1 if path exists, 0 otherwise */
int path_exists(const char *path);
/* directory of the running executable (static buffer) */
const char *exe_dir(void);
/* kloop's data directory zSub ("prompts"): exe_dir()/../zSub in a build tree,
 * else exe_dir()/../share/kloop/zSub when installed (the first that exists;
 * the build tree's when neither does).  A fresh string the caller frees. */
char *exe_data_dir(const char *zSub);
/* join two path pieces into a fresh string */
char *path_join(const char *a, const char *b);

/* monotonic clock in seconds */
double now_s(void);

/* write all of buf to fd, retrying on EINTR/short writes; 0 or -1 */
int write_all(int fd, const void *buf, size_t n);
/* set O_NONBLOCK / FD_CLOEXEC on fd */
void fd_nonblock(int fd);
void fd_cloexec(int fd);

/* replace each byte of s that is not part of valid UTF-8 by '?', in place */
void utf8_sanitize(char *s);

/* 1 if the bytes look binary (a NUL in them, or invalid UTF-8 runs) */
int looks_binary(const char *p, size_t n);

#endif
