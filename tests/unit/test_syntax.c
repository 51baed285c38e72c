/*
 * test_syntax.c - parsing C, C++ and CUDA with the tree-sitter CUDA grammar:
 * clean parses of the fixture kernels, the location of the first error,
 * refusals (NUL bytes, size), incremental reparse, token normalisation and
 * the embedded queries.
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
	CHECK(d && syntax_is_clean(d) && ts_node_child_count(syntax_root(d)) == 0,
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
	CHECK(d && ts_node_has_error(syntax_root(d)) && !syntax_first_error(d, &e) &&
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
	char *a = ts_node_string(syntax_root(d)), *b = ts_node_string(syntax_root(fresh));
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
	a = ts_node_string(syntax_root(d));
	b = ts_node_string(syntax_root(fresh));
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
	syntax_tokens(a, syntax_root(a), &sa);
	syntax_tokens(b, syntax_root(b), &sb);
	CHECK(!strcmp(sa.buf, sb.buf), "layout and comments do not change the tokens: %s", sa.buf);
	CHECK(!strcmp(sa.buf, "int f ( int x ) { return x + 1 ; }"), "tokens are space-separated");
	TSNode fn = ts_node_named_child(syntax_root(a), 0);
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

int main(void)
{
	test_fixtures_parse_cleanly();
	test_first_error_location();
	test_bad_input();
	test_incremental_edit();
	test_tokens_and_text();
	test_queries();
	syntax_shutdown();
	return check_done();
}
