/*
 * test_util.c - the shared helpers that guard against bad input: the line
 * splitter (bounded, newline search resumed), terminal sanitising (ESC, OSC,
 * C1, DEL, invalid UTF-8 shown escaped; the guarded stdout), and the
 * regular-file check that refuses FIFOs, devices and directories before an
 * open would block.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "util.h"

static void check_clean(const char *in, size_t n, int flags, const char *want, const char *zWhat)
{
	strbuf sb = STRBUF_INIT;
	term_sanitize(&sb, in, n, flags);
	CHECK(sb.len == strlen(want) && !memcmp(sb.buf, want, sb.len), "%s (got: %s)", zWhat,
	      sb.buf);
	CHECK(term_is_clean(sb.buf, sb.len, flags), "%s: the result is clean", zWhat);
	sb_free(&sb);
}

/* bytes that a terminal obeys: ESC, C0 (other than those allowed), DEL, C1 */
static int has_raw_control(const char *p, size_t n, int bAllowNl)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)p[i];
		if ((c < 0x20 && !(bAllowNl && (c == '\n' || c == '\t'))) || c == 0x7f)
			return 1;
		if (c == 0xC2 && i + 1 < n && (unsigned char)p[i + 1] >= 0x80 &&
		    (unsigned char)p[i + 1] < 0xA0)
			return 1;
		if (c >= 0x80 && c < 0xC0 && (i == 0 || (unsigned char)p[i - 1] < 0x80))
			return 1; /* a lone C1 byte (8-bit CSI 0x9B) */
	}
	return 0;
}

int main(void)
{
	/* ---- term_sanitize ---- */
	check_clean("plain text", 10, 0, "plain text", "plain text passes");
	check_clean("\x1b[2Jcleared", 11, 0, "\\e[2Jcleared",
	            "ESC[2J (clear screen) is shown as \\e[2J");
	const char osc[] = "\x1b]52;c;aGVsbG8=\x07tail";
	check_clean(osc, sizeof osc - 1, 0, "\\e]52;c;aGVsbG8=\\x07tail",
	            "OSC 52 (write the clipboard) with its BEL is shown, not sent");
	check_clean("a\nb\tc\rd", 7, 0, "a\\nb\\tc\\x0Dd",
	            "newline, tab and CR escaped by default");
	check_clean("a\nb\tc", 5, TERM_KEEP_NL | TERM_KEEP_TAB, "a\nb\tc",
	            "newline and tab kept where the caller allows");
	check_clean("x\x7fy", 3, 0, "x\\x7Fy", "DEL escaped");
	check_clean("\xc2\x9b"
	            "31m",
	            5, 0, "\\x9B31m", "a C1 control in UTF-8 (U+009B, CSI) escaped");
	check_clean("\x9b"
	            "31m",
	            4, 0, "\\x9B31m", "a raw 8-bit CSI byte (invalid UTF-8) escaped");
	check_clean("caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x9a\x80", 14, 0,
	            "caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x9a\x80",
	            "valid UTF-8 (e, check mark, emoji) passes");
	check_clean("\xc0\xaf", 2, 0, "\\xC0\\xAF", "an overlong encoding is escaped");
	check_clean("a\0b", 3, 0, "a\\x00b", "a NUL byte is shown");
	char *z = term_clean(NULL, 0);
	CHECK(z && !*z, "term_clean(NULL) is an empty string");
	free(z);

	/* the guard: everything printed through stdout reaches the fd sanitised,
	 * even a UTF-8 character cut between two writes */
	char path[] = "/tmp/kloop-test-util.XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0, "a file to capture stdout");
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		dup2(fd, STDOUT_FILENO);
		term_guard();
		printf("name: \x1b[2J\x1b]52;c;ZXZpbA==\x07 ok\n");
		fputs("caf\xc3", stdout);
		fflush(stdout);
		fputs("\xa9\ttab\n", stdout);
		term_ctl(stdout, "[CTL]");
		printf("\x9b"
		       "6n end\n");
		exit(0);
	}
	int status;
	waitpid(pid, &status, 0);
	strbuf out = STRBUF_INIT;
	char err[KL_ERRLEN];
	CHECK(read_file(path, &out, 1 << 20, err) == 0, "captured output read");
	CHECK(!has_raw_control(out.buf, out.len, 1),
	      "no raw ESC, BEL or CSI byte reaches the guarded stdout");
	CHECK(strstr(out.buf, "name: \\e[2J\\e]52;c;ZXZpbA==\\x07 ok\n") != NULL,
	      "the sequences are shown escaped, the line intact");
	CHECK(strstr(out.buf, "caf\xc3\xa9\ttab\n") != NULL,
	      "a UTF-8 character cut across two writes is kept whole; tab and newline kept");
	CHECK(strstr(out.buf, "[CTL]\\x9B6n end") != NULL,
	      "kloop's own control sequence (term_ctl) passes raw, in order");
	sb_free(&out);
	unlink(path);
	close(fd);

	/* ---- the line splitter ---- */
	struct linebuf lb;
	lb_init(&lb, 16);
	char *line;
	size_t n;
	lb_add(&lb, "ab", 2);
	CHECK(lb_next(&lb, &line, &n) == 0, "no line before a newline");
	lb_add(&lb, "c\nde\nf", 6);
	CHECK(lb_next(&lb, &line, &n) == 1 && n == 3 && !strcmp(line, "abc"),
	      "a line split over two chunks comes out whole");
	CHECK(lb_next(&lb, &line, &n) == 1 && n == 2 && !strcmp(line, "de"),
	      "the next line of the same chunk");
	CHECK(lb_next(&lb, &line, &n) == 0 && lb_pending(&lb) == 1, "the partial line waits");
	lb_add(&lb, "\n\n", 2);
	CHECK(lb_next(&lb, &line, &n) == 1 && !strcmp(line, "f") && lb_next(&lb, &line, &n) == 1 &&
	          n == 0,
	      "then it and an empty line");
	for (int i = 0; i < 20; i++)
		lb_add(&lb, "x", 1);
	CHECK(lb_next(&lb, &line, &n) == -1,
	      "a line over the maximum without a newline is refused");
	lb_free(&lb);
	lb_init(&lb, 16);
	lb_add(&lb, "0123456789abcdefXYZ\n", 20);
	CHECK(lb_next(&lb, &line, &n) == -1, "a complete line over the maximum is refused too");
	lb_free(&lb);
	/* 1 GiB of 64 KiB chunks without a newline: refused once past the
	 * limit (64 MiB here), the buffer never larger than limit + a chunk */
	lb_init(&lb, 64u << 20);
	char *chunk = xmalloc(65536);
	memset(chunk, 'a', 65536);
	long chunks = 0;
	int got = 0;
	while (chunks < (1l << 14) && (got = lb_next(&lb, &line, &n)) == 0) {
		lb_add(&lb, chunk, 65536);
		chunks++;
	}
	CHECK(got == -1 && lb.sb.len <= (64u << 20) + 65536,
	      "a 1 GiB line is refused after %ld chunks, the buffer bounded (%zu bytes)", chunks,
	      lb.sb.len);
	lb_free(&lb);
	free(chunk);

	/* ---- regular files only ---- */
	char dir[] = "/tmp/kloop-test-util.XXXXXX";
	CHECK(mkdtemp(dir) != NULL, "a scratch directory");
	char *fifo = xasprintf("%s/fifo", dir);
	CHECK(mkfifo(fifo, 0600) == 0, "a FIFO");
	strbuf sb = STRBUF_INIT;
	CHECK(read_file(fifo, &sb, 100, err) < 0 && strstr(err, "fifo: is a FIFO (named pipe)"),
	      "read_file refuses a FIFO without blocking (%s)", err);
	CHECK(read_file(dir, &sb, 100, err) < 0 && strstr(err, "is a directory"),
	      "read_file refuses a directory (%s)", err);
	CHECK(read_file("/dev/zero", &sb, 100, err) < 0 && strstr(err, "is a character device"),
	      "read_file refuses a device such as /dev/zero (%s)", err);
	CHECK(file_check_regular("/dev/null", err) < 0 && strstr(err, "/dev/null"),
	      "file_check_regular names the path (%s)", err);
	CHECK(read_file("/proc/self/status", &sb, 1 << 20, err) == 0 && sb.len > 0,
	      "a /proc file (size 0 in stat) is still read");
	sb_free(&sb);
	unlink(fifo);
	free(fifo);
	rmdir(dir);
	/* str_abbrev: a long text shortened around "...", cut between characters */
	char *ab = str_abbrev("short", 40);
	CHECK(!strcmp(ab, "short"), "a short text is kept (got %s)", ab);
	free(ab);
	char longz[1001];
	memset(longz, 'a', 1000);
	longz[1000] = 0;
	memcpy(longz + 996, "tail", 4);
	ab = str_abbrev(longz, 40);
	CHECK(strlen(ab) < 70 && strstr(ab, "...") && strstr(ab, "tail (1000 bytes)"),
	      "a long text: its start, its end and its length (got %s)", ab);
	free(ab);
	char utf[200] = "";
	for (int i = 0; i < 60; i++)
		strcat(utf, "\xc3\xa9"); /* é */
	ab = str_abbrev(utf, 21);
	CHECK(term_is_clean(ab, strlen(ab), 0) && !strncmp(ab, "\xc3\xa9", 2),
	      "cut between UTF-8 characters (got %s)", ab);
	free(ab);
	/* words "a|b|c": the index of one (the whole word), and as a person says them */
	CHECK(words_find("host|cuda|auto", "host") == 0 &&
	          words_find("host|cuda|auto", "auto") == 2 &&
	          words_find("host|cuda|auto", "cud") < 0 && words_find("host|cuda|auto", "") < 0 &&
	          words_find("host|cuda|auto", "cuda|auto") < 0,
	      "words_find: whole words only");
	char said[64];
	words_say("host|cuda|auto", said, sizeof said);
	CHECK(!strcmp(said, "host, cuda or auto"), "words_say of three (got %s)", said);
	words_say("on|off", said, sizeof said);
	CHECK(!strcmp(said, "on or off"), "words_say of two (got %s)", said);
	words_say("one", said, sizeof said);
	CHECK(!strcmp(said, "one"), "words_say of one (got %s)", said);
	return check_done();
}
