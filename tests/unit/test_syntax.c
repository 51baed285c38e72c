/*
 * test_syntax.c - parsing C, C++ and CUDA with the tree-sitter CUDA grammar:
 * clean parses of the fixture kernels, the location of the first error,
 * refusals (NUL bytes, size), incremental reparse, token normalisation,
 * the embedded queries, and large sources parsed as segments in parallel
 * (the same items as one whole parse, before and after edits).
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "syntax.h"
#include "util.h"

#define FIX "tests/fixtures/cuda_src/"

static char *slurp(const char *path, size_t *n)
{
	strbuf sb = STRBUF_INIT;
	char err[KL_ERRLEN];
	if (read_file(path, &sb, 1 << 24, err) < 0) {
		printf("# %s\n", err);
		*n = 0;
		return xstrdup("");
	}
	*n = sb.len;
	return sb_detach(&sb);
}

static struct syntax_doc *parse_s(const char *s)
{
	return syntax_parse(s, strlen(s), NULL);
}

static void test_fixtures_parse_cleanly(void)
{
	static const char *const clean[] = {
	    "gemm_tiled.cu", "softmax_coop.cu", "wmma_gemm.cu", "inline_asm.cu",
	    "lambda.cu",     "multi_launch.cu", "host_sum.c",   NULL};
	for (int i = 0; clean[i]; i++) {
		char path[256];
		snprintf(path, sizeof path, FIX "%s", clean[i]);
		size_t n;
		char *src = slurp(path, &n);
		char err[KL_ERRLEN] = "";
		struct syntax_doc *d = syntax_parse(src, n, err);
		CHECK(d != NULL, "%s parses (%s)", clean[i], err);
		if (d) {
			struct syntax_error e = {0};
			int bad = syntax_first_error(d, &e);
			CHECK(!bad && syntax_is_clean(d),
			      "%s has no syntax error (first: %u:%u %s)", clean[i], e.line,
			      e.column, e.msg);
			CHECK(syntax_check(src, n, err) == 0, "syntax_check accepts %s", clean[i]);
		}
		syntax_free(d);
		free(src);
	}
}

static void test_first_error_location(void)
{
	size_t n;
	char *src = slurp(FIX "device_lambda.cu", &n);
	struct syntax_doc *d = syntax_parse(src, n, NULL);
	struct syntax_error e;
	CHECK(d && syntax_first_error(d, &e),
	      "an nvcc extended lambda is a syntax error to the grammar");
	CHECK(e.line == 16 && e.column == 40, "the error is at line 16, column 40 (got %u:%u)",
	      e.line, e.column);
	CHECK(strstr(e.msg, "__device__") != NULL, "the message quotes the text: %s", e.msg);
	syntax_free(d);
	free(src);

	d = parse_s("__device__ int f(int x)\n{\n\treturn x + 1\n}\n");
	CHECK(syntax_first_error(d, &e), "a missing semicolon is found");
	CHECK(e.line == 3 && e.column == 14 && !strcmp(e.msg, "missing `;`"),
	      "reported as missing `;` right after `x + 1` at 3:14 (%u:%u: %s)", e.line, e.column,
	      e.msg);
	syntax_free(d);

	char err[KL_ERRLEN];
	const char *unterminated = "__global__ void k() {}\n/* never closed\nint x;\n";
	CHECK(syntax_check(unterminated, strlen(unterminated), err) == -1,
	      "an unterminated comment does not parse");
	CHECK(strstr(err, "line 2, column 1") != NULL, "its error is at the comment: %s", err);

	const char *str = "const char *s = \"abc;\nint y;\n";
	CHECK(syntax_check(str, strlen(str), err) == -1, "an unterminated string does not parse");
	CHECK(strstr(err, "line 1, column 17") != NULL, "its error is at the string: %s", err);

	/* columns count characters, not bytes */
	d = parse_s("/* \xc3\xa9\xc3\xa9 */ int x = ;\n");
	CHECK(syntax_first_error(d, &e) && e.column == 16 && e.byte == 17,
	      "column 16 after two 2-byte characters (byte 17): got column %u, byte %u", e.column,
	      e.byte);
	syntax_free(d);

	d = parse_s("#if X\nint a;\n");
	CHECK(syntax_first_error(d, &e) && strstr(e.msg, "#endif"), "a missing #endif is named: %s",
	      e.msg);
	syntax_free(d);

	d = parse_s("int a = ;\nint b = ;\nint c = ;\n");
	struct syntax_error all[8];
	size_t ne = syntax_errors(d, all, 8);
	CHECK(ne == 3 && all[0].line == 1 && all[1].line == 2 && all[2].line == 3,
	      "three errors listed in source order (%zu)", ne);
	CHECK(syntax_errors(d, NULL, 0) == 3, "max 0 counts them");
	CHECK(syntax_errors(d, all, 2) == 2, "the list stops at max");
	syntax_free(d);
}

static void test_bad_input(void)
{
	char err[KL_ERRLEN] = "";
	struct syntax_doc *d = syntax_parse("", 0, err);
	CHECK(d && syntax_is_clean(d) && d->nseg == 1 &&
	          ts_node_child_count(syntax_seg_root(d, 0)) == 0,
	      "an empty source parses to an empty translation unit");
	syntax_free(d);

	static const char bin[] = "int x;\0\x01\x02garbage";
	d = syntax_parse(bin, sizeof bin - 1, err);
	CHECK(d == NULL && strstr(err, "NUL byte at offset 6"), "a NUL byte is refused: %s", err);

	size_t big = 10u << 20;
	char *huge = xmalloc(big);
	for (size_t i = 0; i < big; i++)
		huge[i] = "int a;\n"[i % 7];
	d = syntax_parse(huge, big, err);
	CHECK(d == NULL && strstr(err, "over the limit"), "a 10 MB source is refused: %s", err);
	free(huge);

	const char *bad_utf8 = "int f() { return 1; } // \xff\xfe\x80 stray bytes\nint g;\n";
	d = syntax_parse(bad_utf8, strlen(bad_utf8), err);
	CHECK(d && syntax_is_clean(d), "invalid UTF-8 inside a comment still parses cleanly");
	syntax_free(d);

	const char *bad_code = "\xff\xfe garbage \x80 int x;\n";
	d = parse_s(bad_code);
	struct syntax_error e;
	CHECK(d && syntax_first_error(d, &e),
	      "invalid UTF-8 in code is a syntax error, not a crash");
	char *u = syntax_utf8(e.msg);
	CHECK(!strcmp(u, e.msg), "the error message is valid UTF-8: %s", e.msg);
	free(u);
	syntax_free(d);

	/* found by the fuzzer: a stray byte in a #define's value at the end of
	 * the file sets the root's error flag without leaving an ERROR node */
	d = parse_s("#define x a\xde CUDAh__");
	CHECK(d && ts_node_has_error(syntax_seg_root(d, 0)) && !syntax_first_error(d, &e) &&
	          syntax_is_clean(d),
	      "a stray byte with no ERROR node: syntax_is_clean agrees with syntax_first_error");
	syntax_free(d);

	u = syntax_utf8("a\xff"
	                "b\xc3\xa9");
	CHECK(!strcmp(u, "a\xEF\xBF\xBD"
	                 "b\xc3\xa9"),
	      "syntax_utf8 replaces only the invalid byte");
	free(u);
}

static void test_incremental_edit(void)
{
	size_t n;
	char *src = slurp(FIX "softmax_coop.cu", &n);
	struct syntax_doc *d = syntax_parse(src, n, NULL);
	char err[KL_ERRLEN];
	const char *at = strstr(d->src, "float s = 0.f;");
	size_t off = (size_t)(at - d->src);
	struct syntax_change chg;
	int rc = syntax_edit(d, off + 10, off + 13, "1.0f", 4, &chg, err);
	CHECK(rc == 0, "an edit inside a kernel reparses (%s)", rc ? err : "");
	CHECK(strstr(d->src, "float s = 1.0f;") != NULL, "the doc holds the edited text");
	CHECK(chg.start == off + 10 && chg.old_end == off + 13 && chg.new_end == off + 14,
	      "the change records the edit");
	CHECK(chg.dirty_start <= chg.start && chg.dirty_end >= chg.new_end,
	      "the dirty range covers the edit");
	struct syntax_doc *fresh = syntax_parse(d->src, d->len, NULL);
	char *a = syntax_items_string(d), *b = syntax_items_string(fresh);
	CHECK(!strcmp(a, b), "the incremental tree equals a fresh parse");
	free(a);
	free(b);
	syntax_free(fresh);

	/* opening a comment turns the rest of the line into a comment */
	at = strstr(d->src, "__global__ void scale_rows");
	off = (size_t)(at - d->src);
	rc = syntax_edit(d, off, off, "/* ", 3, &chg, err);
	CHECK(rc == 0 && chg.dirty_end > chg.new_end, "an unclosed comment dirties past the edit");
	CHECK(syntax_edit(d, off, off + 3, "", 0, &chg, err) == 0, "and deleting it reparses");
	fresh = syntax_parse(d->src, d->len, NULL);
	a = syntax_items_string(d);
	b = syntax_items_string(fresh);
	CHECK(!strcmp(a, b) && syntax_is_clean(d),
	      "the tree is clean again and equals a fresh parse");
	free(a);
	free(b);
	syntax_free(fresh);

	size_t len = d->len;
	CHECK(syntax_edit(d, len + 1, len + 2, "x", 1, NULL, err) == -1 && strstr(err, "outside"),
	      "an edit outside the source is refused: %s", err);
	CHECK(syntax_edit(d, 0, 0, "a\0b", 3, NULL, err) == -1 && d->len == len,
	      "inserting a NUL is refused and leaves the doc as it was");
	syntax_free(d);
	free(src);
}

static void test_tokens_and_text(void)
{
	struct syntax_doc *a = parse_s("int  f(int x)\n{\n\treturn x+1; // one more\n}\n");
	struct syntax_doc *b = parse_s("int f(int x) { /* c */ return x + 1; }");
	strbuf sa = STRBUF_INIT, sb = STRBUF_INIT;
	syntax_tokens(a, syntax_seg_root(a, 0), &sa);
	syntax_tokens(b, syntax_seg_root(b, 0), &sb);
	CHECK(!strcmp(sa.buf, sb.buf), "layout and comments do not change the tokens: %s", sa.buf);
	CHECK(!strcmp(sa.buf, "int f ( int x ) { return x + 1 ; }"), "tokens are space-separated");
	TSNode fn = ts_node_named_child(syntax_seg_root(a, 0), 0);
	char *t = syntax_text(a, fn);
	CHECK(!strncmp(t, "int  f(int x)", 13), "syntax_text gives a node's bytes");
	free(t);
	unsigned line, col;
	syntax_position(a, (uint32_t)(strstr(a->src, "return") - a->src), &line, &col);
	CHECK(line == 3 && col == 2, "syntax_position: return is at 3:2 (got %u:%u)", line, col);
	sb_free(&sa);
	sb_free(&sb);
	syntax_free(a);
	syntax_free(b);
}

static void test_queries(void)
{
	char err[KL_ERRLEN] = "";
	const struct syntax_query *q = syntax_query_get("highlights", err);
	CHECK(q != NULL, "the highlight query compiles against the grammar (%s)", err);
	CHECK(q == syntax_query_get("highlights", err), "it is compiled once and cached");
	CHECK(syntax_query_get("tunables", err) != NULL, "the tunables query compiles (%s)", err);
	CHECK(syntax_query_get("no_such_query", err) == NULL && strstr(err, "no_such_query.scm"),
	      "an unknown query is an error naming it: %s", err);
	CHECK(ts_language_abi_version(syntax_language()) == 15, "the CUDA grammar has ABI 15");
}

/* the clean fixtures, each `times` times over: a large, realistic source */
static char *big_source(int times, size_t *n)
{
	static const char *const files[] = {
	    "gemm_tiled.cu", "softmax_coop.cu", "wmma_gemm.cu", "inline_asm.cu",
	    "lambda.cu",     "multi_launch.cu", "host_sum.c",   NULL};
	strbuf sb = STRBUF_INIT;
	for (int t = 0; t < times; t++)
		for (int i = 0; files[i]; i++) {
			char path[256];
			size_t len;
			snprintf(path, sizeof path, FIX "%s", files[i]);
			char *src = slurp(path, &len);
			sb_add(&sb, src, len);
			free(src);
		}
	*n = sb.len;
	return sb_detach(&sb);
}

/* parse src whole (one thread) and in up to `threads` segments; check both
 * hold the same items and errors; returns the segmented doc */
static struct syntax_doc *parse_both(const char *src, size_t n, unsigned threads, const char *what)
{
	syntax_set_threads(1);
	struct syntax_doc *whole = syntax_parse(src, n, NULL);
	syntax_set_threads(threads);
	struct syntax_doc *d = syntax_parse(src, n, NULL);
	syntax_set_threads(0);
	char *a = syntax_items_string(whole), *b = syntax_items_string(d);
	CHECK(whole->nseg == 1 && !strcmp(a, b),
	      "%s: %zu segment(s) hold the same items as one whole parse", what, d->nseg);
	struct syntax_error ea = {0}, eb = {0};
	int ba = syntax_first_error(whole, &ea), bb = syntax_first_error(d, &eb);
	CHECK(ba == bb && ea.line == eb.line && ea.column == eb.column && !strcmp(ea.msg, eb.msg),
	      "%s: the same first error (%u:%u %s / %u:%u %s)", what, ea.line, ea.column, ea.msg,
	      eb.line, eb.column, eb.msg);
	free(a);
	free(b);
	syntax_free(whole);
	return d;
}

/* src with text put at the start of the line after byte at, parsed both ways */
static struct syntax_doc *parse_inserted(const char *src, size_t n, size_t at, const char *text,
                                         unsigned threads, const char *what)
{
	size_t line = (size_t)(strchr(src + at, '\n') - src) + 1;
	strbuf sb = STRBUF_INIT;
	sb_add(&sb, src, line);
	sb_adds(&sb, text);
	sb_add(&sb, src + line, n - line);
	struct syntax_doc *d = parse_both(sb.buf, sb.len, threads, what);
	sb_free(&sb);
	return d;
}

/* after an edit of d, it must equal a fresh whole parse of its text */
static void check_edit(struct syntax_doc *d, size_t start, size_t old_end, const char *text,
                       const char *what)
{
	char err[KL_ERRLEN] = "";
	struct syntax_change chg;
	int rc = syntax_edit(d, start, old_end, text, strlen(text), &chg, err);
	syntax_set_threads(1);
	struct syntax_doc *fresh = syntax_parse(d->src, d->len, NULL);
	syntax_set_threads(0);
	char *a = syntax_items_string(d), *b = syntax_items_string(fresh);
	CHECK(rc == 0 && !strcmp(a, b), "%s: %zu segment(s), the same items as a fresh parse (%s)",
	      what, d->nseg, err);
	CHECK(chg.dirty_start <= chg.start && chg.dirty_end >= chg.new_end,
	      "%s: the dirty range covers the edit", what);
	uint32_t at = 0;
	int contiguous = d->seg[0].start == 0 && d->seg[d->nseg - 1].end == d->len;
	for (size_t k = 0; k < d->nseg; k++) {
		contiguous &= d->seg[k].start == at && d->seg[k].end >= d->seg[k].start;
		at = d->seg[k].end;
	}
	CHECK(contiguous, "%s: the segments still tile the source", what);
	free(a);
	free(b);
	syntax_free(fresh);
}

static void test_segments(void)
{
	size_t n;
	char *src = big_source(8, &n);
	struct syntax_doc *d = parse_both(src, n, 4, "8 x the fixtures");
	CHECK(d->nseg == 4, "a %zu-byte source is cut into 4 segments for 4 threads (%zu)", n,
	      d->nseg);
	CHECK(syntax_is_clean(d), "every segment is clean");
	for (size_t k = 1; k < d->nseg; k++)
		CHECK(d->seg[k].start > d->seg[k - 1].start && d->src[d->seg[k].start - 1] == '\n',
		      "segment %zu starts a line", k);

	/* a node is found in the segment holding it, wherever that is */
	const char *last = strstr(d->src + d->seg[d->nseg - 1].start, "__global__");
	uint32_t lb = (uint32_t)(last - d->src);
	TSNode at = syntax_node_at(d, lb, lb + 10);
	CHECK(!ts_node_is_null(at) && ts_node_start_byte(at) == lb,
	      "syntax_node_at in the last segment");
	CHECK(ts_node_is_null(syntax_node_at(d, d->seg[1].start - 2, d->seg[1].start + 2)),
	      "a range across a cut has no node");
	unsigned line, col;
	syntax_position(d, lb, &line, &col);
	unsigned want = 1;
	for (uint32_t i = 0; i < lb; i++)
		want += d->src[i] == '\n';
	CHECK(line == want, "syntax_position counts lines through the segments (%u, want %u)", line,
	      want);

	/* edits: inside a segment, at a cut, across a cut, one that breaks the code */
	size_t nseg = d->nseg;
	size_t k2 = (size_t)(strstr(d->src + d->seg[2].start, "float") - d->src);
	check_edit(d, k2, k2 + 5, "double", "a type renamed");
	CHECK(d->nseg == nseg, "an edit inside a segment keeps the segments");
	check_edit(d, d->seg[2].start, d->seg[2].start, "// a new first line\n", "insert at a cut");
	check_edit(d, d->seg[1].end - 1, d->seg[1].end, "\n\n", "the newline before a cut");
	CHECK(d->nseg == nseg, "still %zu segments", nseg);
	size_t brace = (size_t)(strstr(d->src + d->seg[1].start, "{") - d->src);
	check_edit(d, brace, brace + 1, "", "a `{` deleted");
	CHECK(d->nseg == 1 && !syntax_is_clean(d),
	      "a syntax error makes the doc one tree, as a fresh parse has it");
	check_edit(d, brace, brace, "{", "the `{` put back");
	CHECK(syntax_is_clean(d), "clean again");
	syntax_free(d);

	d = parse_both(src, n, 4, "again");
	check_edit(d, d->seg[1].start - 10, d->seg[1].start + 10, "", "an edit across a cut");
	syntax_free(d);

	/* a syntax error in the middle: one tree, the error where a whole parse puts it */
	size_t mid = n / 2;
	char *broken = xstrdup(src);
	char *p = strstr(broken + mid, "for (");
	p[0] = '{';
	d = parse_both(broken, n, 4, "an error mid-file");
	CHECK(d->nseg == 1, "a source with an error is parsed whole (%zu)", d->nseg);
	syntax_free(d);
	free(broken);

	/* a cut the scan is fooled into: it reads a raw string's `}` line as
	 * the end of an item, and the source is built so that the cut for two
	 * threads falls right there; the cut segment does not parse, so the
	 * source is parsed whole */
	static const char raw[] = "const char *ptx = R\"(\n}\nint not_code;\n)\";\n";
	size_t x = (size_t)(strstr(src + 50000, "\n__global__") - src) + 1;
	size_t y = x - (sizeof raw - 1) + 10; /* the middle of the whole is x + 5 */
	size_t from = (size_t)(strstr(src + n - y + 200, "\n__global__") - src) + 1;
	strbuf sb = STRBUF_INIT;
	sb_add(&sb, src, x);
	sb_adds(&sb, raw);
	sb_add(&sb, src + from, n - from);
	sb_adds(&sb, "//");
	while (sb.len < 2 * x + 10)
		sb_adds(&sb, "-");
	sb_adds(&sb, "\n");
	d = parse_both(sb.buf, sb.len, 2, "a raw string holding a `}` line at the cut");
	CHECK(d->nseg == 1, "the fooled cut is not kept (%zu segments)", d->nseg);
	syntax_free(d);

	/* a string continued over a newline before the cuts: the lines after it
	 * keep their numbers */
	d = parse_inserted(src, n, n / 3, "const char *two_lines = \"one \\\ntwo\";\n", 4,
	                   "a string continued over a newline");
	CHECK(d->nseg > 1, "it is still cut into segments (%zu)", d->nseg);
	syntax_free(d);

	/* a #define's continuation lines are not code */
	d = parse_inserted(src, n, n / 2, "#define OPEN_BODY \\\n  {\\\n}\n", 8,
	                   "a #define holding a `}` line");
	syntax_free(d);
	sb_free(&sb);

	/* a long source of small items: many cuts, 16 segments at most */
	sb_reset(&sb);
	for (int i = 0; i < 12000; i++)
		sb_addf(&sb, "__device__ int f%d(int x) { return x * %d; }\n", i, i);
	d = parse_both(sb.buf, sb.len, 64, "12,000 one-line functions");
	CHECK(d->nseg == SYNTAX_MAX_SEGS, "at most %d segments (%zu)", SYNTAX_MAX_SEGS, d->nseg);
	syntax_free(d);
	sb_free(&sb);

	/* a small source is one tree whatever the threads */
	syntax_set_threads(8);
	d = parse_s("__global__ void k(float *x) { x[0] = 1; }\n");
	CHECK(d->nseg == 1, "a small source is one tree");
	syntax_set_threads(0);
	syntax_free(d);
	free(src);
}

int main(void)
{
	test_fixtures_parse_cleanly();
	test_first_error_location();
	test_bad_input();
	test_incremental_edit();
	test_tokens_and_text();
	test_queries();
	test_segments();
	syntax_shutdown();
	return check_done();
}
