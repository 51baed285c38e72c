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
#include <stdio.h>

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

/* the offset of member x of struct type S, whose C type must be T: a
 * table's row and the member it fills cannot disagree (a compile error) */
#define KL_MEMBER(S, x, T)                                                                         \
	(offsetof(S, x) + 0 * sizeof(char[_Generic(((S *)0)->x, T : 1, default : -1)]))

/* format an error message into err (KL_ERRLEN bytes); returns -1 so that
 * callers can write `return kl_err(err, "...")` */
int kl_err(char *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* a growable NUL-terminated byte buffer, in the manner of git's strbuf */
typedef struct {
	char *buf;    /* contents, always NUL-terminated once used */
	size_t len;   /* bytes used, excluding the NUL */
	size_t alloc; /* bytes allocated */
} strbuf;

#define STRBUF_INIT                                                                                \
	{                                                                                          \
		NULL, 0, 0                                                                         \
	}
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

/* read a whole file into sb (appending); refuses files over max bytes and
 * anything but a regular file (file_check_regular) before opening it, so a
 * FIFO or a device never blocks the read.
 * Returns 0, or -1 with err naming the path and the reason. */
int read_file(const char *path, strbuf *sb, size_t max, char *err);
/* 0 if path is a regular file (symlinks followed), or -1 with err naming the
 * path and what it is instead (a directory, a FIFO, a device, a socket) or
 * why it cannot be examined.  For every user-given path that is read: call
 * it before open(2), which on a FIFO would block. */
int file_check_regular(const char *path, char *err);
/* write n bytes to path atomically (temp file + rename); 0 or -1 + err */
int write_file_atomic(const char *path, const void *p, size_t n, char *err);
/* mkdir -p; 0 or -1 + err */
int mkdir_p(const char *path, char *err);
/* 1 if path exists, 0 otherwise */
int path_exists(const char *path);
/* 1 when path is (after links) a directory; a regular file */
int path_is_dir(const char *path);
int path_is_file(const char *path);
/* directory of the running executable (static buffer) */
const char *exe_dir(void);
/* kloop's data directory zSub ("prompts"): exe_dir()/../zSub in a build tree,
 * else exe_dir()/../share/kloop/zSub when installed (the first that exists;
 * the build tree's when neither does).  A fresh string the caller frees. */
char *exe_data_dir(const char *zSub);
/* kloop's cache root (compiled objects, baselines' timing, the devices'
 * peaks): $XDG_CACHE_HOME/kloop, else $HOME/.cache/kloop (/tmp without a
 * home); a fresh string the caller frees */
char *cache_dir_default(void);
/* join two path pieces into a fresh string */
char *path_join(const char *a, const char *b);
/* the first executable regular file named zProgram in a directory of
 * $PATH (malloc'd, as found there), or NULL */
char *path_search(const char *zProgram);

/* monotonic clock in seconds */
double now_s(void);

/* where KLOOP_STEP_TRACE names a file: one line of JSON appended to it, the
 * step zWhat and its milliseconds since t0 (now_s()), with the process and
 * the clock: what bench/gpu/steps.py reads to see where a verdict's time
 * goes (a diagnostic; nothing else reads it) */
void step_trace(const char *zWhat, double t0);
/* the same for a step from t0 to t (now_s()'s clock), and whether
 * KLOOP_STEP_TRACE is set */
void step_trace_span(const char *zWhat, double t0, double t);
int step_tracing(void);

/* write all of buf to fd, retrying on EINTR/short writes; 0 or -1 */
int write_all(int fd, const void *buf, size_t n);
/* set O_NONBLOCK / FD_CLOEXEC on fd */
void fd_nonblock(int fd);
void fd_cloexec(int fd);

/*
 * A line splitter for a byte stream (a child's protocol pipe): bytes are
 * added as they arrive; complete lines come out one by one.  The search for
 * the newline resumes where it stopped, so a long line costs linear time, and
 * a line longer than max bytes is refused instead of growing without bound.
 */
struct linebuf {
	strbuf sb;   /* the bytes received and not yet returned, from off */
	size_t off;  /* start of the first unreturned byte in sb */
	size_t scan; /* bytes after off already searched for a newline */
	size_t max;  /* the longest line accepted, newline excluded */
};
void lb_init(struct linebuf *lb, size_t max);
void lb_free(struct linebuf *lb);
/* append n received bytes */
void lb_add(struct linebuf *lb, const void *p, size_t n);
/* the next complete line: 1 with *pz (NUL-terminated in place, newline
 * dropped; valid until the next lb_add/lb_free) and *pn set; 0 when no
 * complete line is there yet; -1 when the line is over max bytes (the
 * stream should then be dropped as a protocol error) */
int lb_next(struct linebuf *lb, char **pz, size_t *pn);
/* bytes received that are not part of a returned line */
size_t lb_pending(const struct linebuf *lb);

/*
 * Terminal-safe text: bytes from a candidate, a compiler, a task, an LLM or
 * a journal may hold escape sequences (ESC[2J, OSC 52 that writes the
 * clipboard).  term_sanitize appends s (n bytes) to sb with every control
 * character shown instead of sent: ESC as "\e", other C0 bytes, DEL and
 * the C1 controls (U+0080..U+009F) as "\xNN", invalid UTF-8 bytes as
 * "\xNN"; valid UTF-8 passes.  Newline and tab pass only when flags hold
 * TERM_KEEP_NL / TERM_KEEP_TAB (otherwise "\n", "\t").
 */
#define TERM_KEEP_NL 1
#define TERM_KEEP_TAB 2
void term_sanitize(strbuf *sb, const char *s, size_t n, int flags);
/* term_sanitize of the string s (NULL: "") into a fresh string; caller frees */
char *term_clean(const char *s, int flags);
/* 1 if s (n bytes) holds nothing term_sanitize would change with flags */
int term_is_clean(const char *s, size_t n, int flags);

/*
 * A number as a person writes one, the whole of z: an optional sign, decimal
 * digits with an optional point, an optional exponent ("3", "-0.5", "1e-6",
 * ".25").  strtod alone takes hexadecimal ("0x10"), "inf", "nan" and
 * leading spaces; they are refused here.  0 with *pOut, or -1.
 */
int num_parse(const char *z, double *pOut);

/* the index of word z among words "a|b|c" (the whole of one), or -1 */
int words_find(const char *zWords, const char *z);

/* words "a|b|c" as a person says them, "a, b or c", into buf (n bytes) */
void words_say(const char *zWords, char *buf, size_t n);

/*
 * cJSON's text of o (pretty: indented) with nothing in it that a terminal
 * or a strict JSON reader trips on: cJSON passes DEL, the C1 controls and
 * bytes that are not UTF-8 through raw inside strings, which the stdout
 * guard then showed as "\x7F", an invalid JSON escape; here DEL and C1 are
 * "\u007f" .. "\u009f", and a byte that is not UTF-8 is "\ufffd".  o is a
 * cJSON pointer (void *, so that util.h needs no cJSON); NULL for NULL;
 * caller frees.
 */
char *json_text(const void *o, int pretty);

/*
 * Guard the process's stdout and stderr: from now on every byte written
 * through them passes term_sanitize (newlines and tabs kept), so no printf
 * of a candidate's name, a compiler log or an LLM title can put an escape
 * sequence on the terminal.  kloop's own control sequences go through
 * term_ctl().  A full-screen or line-editing front end (ncurses, libedit)
 * needs the real streams: term_unguard() first, then sanitise what it draws.
 * Both are idempotent.
 */
void term_guard(void);
void term_unguard(void);
/* write kloop's own control sequence zSeq ("\r\033[K") to f (stdout or
 * stderr) past the guard, after flushing what f holds */
void term_ctl(FILE *f, const char *zSeq);

/* what a message echoes of a user's text z: z itself up to max bytes (at
 * least 16), else its start and end around "..." and its length ("aaaa...aaaa
 * (100000 bytes)"), cut between UTF-8 characters: the message keeps its
 * reason however long the text (newly allocated) */
char *str_abbrev(const char *z, size_t max);

/* replace each byte of s that is not part of valid UTF-8 by '?', in place */
void utf8_sanitize(char *s);

/* 1 if the bytes look binary (a NUL in them, or invalid UTF-8 runs) */
int looks_binary(const char *p, size_t n);

#endif
