/*
 * test_syntax.c - parsing C, C++ and CUDA with the tree-sitter CUDA grammar:
 * clean parses of the fixture kernels, the location of the first error,
 * refusals (NUL bytes, size), token normalisation, the embedded queries,
 * and a large source read through its one tree.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "slurp.h"
#include "syntax.h"
#include "util.h"

#define FIX "tests/fixtures/cuda_src/"

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

/* valid CUDA with #pragma lines where the grammar takes them for statement
 * ends: no syntax error; a real error beside a pragma is still found, on its
 * own line */
static void test_pragmas(void)
{
	static const char *const ok[] = {
	    /* between an unbraced for and its inner loop */
	    "__global__ void k(float *a, int n)\n{\n\tfor (int i = 0; i < n; i++)\n#pragma "
	    "unroll\n\t\tfor (int j = 0; j < 4; j++)\n\t\t\ta[i * 4 + j] += 1.0f;\n}\n",
	    /* indented, with an argument, after an unbraced if */
	    "void f(float *a, int n)\n{\n\tif (n > 0)\n\t#pragma unroll 4\n\t\tfor (int j = 0; j "
	    "< 4; j++)\n\t\t\ta[j] = 0;\n}\n",
	    /* two pragmas in a row, one continued with a backslash, under a while */
	    "void g(int *a, int n)\n{\n\twhile (n--)\n#pragma unroll \\\n    8\n#  pragma "
	    "nounroll\n\t\tfor (int j = 0; j < 8; j++)\n\t\t\ta[j] += n;\n}\n",
	    /* before a braced loop and at file scope */
	    "#pragma once\nvoid h(int *a)\n{\n#pragma unroll\n\tfor (int j = 0; j < 8; j++) "
	    "{\n\t\ta[j] = j;\n\t}\n}\n",
	    NULL};
	for (int i = 0; ok[i]; i++) {
		struct syntax_doc *d = parse_s(ok[i]);
		struct syntax_error e = {0};
		int bad = syntax_first_error(d, &e);
		CHECK(d && !bad && syntax_is_clean(d),
		      "pragma placement %d parses without errors (%s)", i, bad ? e.msg : "");
		syntax_free(d);
	}
	struct syntax_doc *d = parse_s("void k(float *a, int n)\n{\n\tfor (int i = 0; i < n; "
	                               "i++)\n#pragma unroll\n\t\tfor (int j = 0; j < 4; "
	                               "j++)\n\t\t\ta[j] = ;\n}\n");
	struct syntax_error e = {0};
	CHECK(syntax_first_error(d, &e) && e.line == 6,
	      "an error beside a pragma is still found, "
	      "on line 6 (got line %u: %s)",
	      e.line, e.msg);
	syntax_free(d);
	const char *pragmaIsText = "const char *s = \"#pragma unroll\";\nint x = ;\n";
	d = parse_s(pragmaIsText);
	CHECK(syntax_first_error(d, &e) && e.line == 2, "a pragma inside a string is not blanked");
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

static void *get_highlights(void *arg)
{
	*(const struct syntax_query **)arg = syntax_query_get("highlights", NULL);
	return NULL;
}

/* the queries compiled on the warming thread while two others ask for the
 * highlight query: every caller gets the one compiled query, whole */
static void on_ready(void *arg)
{
	/* called on the warming thread once the query is there */
	*(int *)arg = syntax_query_busy("highlights") ? -1 : 1;
}

static void test_queries_warm(void)
{
	int ready = 0;
	syntax_query_warm(on_ready, &ready);
	syntax_query_warm(NULL, NULL); /* a second call starts nothing more */
	const struct syntax_query *a = NULL, *b = NULL;
	pthread_t ta, tb;
	int made = pthread_create(&ta, NULL, get_highlights, &a) == 0;
	made &= pthread_create(&tb, NULL, get_highlights, &b) == 0;
	char err[KL_ERRLEN] = "";
	const struct syntax_query *c = syntax_query_get("highlights", err);
	if (made) {
		pthread_join(ta, NULL);
		pthread_join(tb, NULL);
	}
	CHECK(made && c && a == c && b == c,
	      "threads asking while it warms get the one highlight query (%s)", err);
	CHECK(!syntax_query_busy("highlights"), "once it is there it is not busy");
	CHECK(c && ts_query_pattern_count(syntax_query_ts(c)) > 10 &&
	          ts_query_capture_count(syntax_query_ts(c)) > 5,
	      "it is compiled whole (%u patterns)",
	      c ? ts_query_pattern_count(syntax_query_ts(c)) : 0);
	CHECK(syntax_query_get("tunables", err) != NULL, "the warmed tunables query is there (%s)",
	      err);
	/* shutdown waits for the thread and frees them; they compile again */
	syntax_shutdown();
	CHECK(ready == 1, "the ready callback ran, after the query was stored (%d)", ready);
	syntax_query_warm(NULL, NULL);
	CHECK(syntax_query_get("highlights", err) != NULL,
	      "after syntax_shutdown() a new warm-up compiles them again (%s)", err);
	syntax_shutdown();
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

/* a large source (the clean fixtures 8 times over) is one tree: its
 * positions and nodes come from the one root wherever they are */
static void test_large_source(void)
{
	static const char *const files[] = {
	    "gemm_tiled.cu", "softmax_coop.cu", "wmma_gemm.cu", "inline_asm.cu",
	    "lambda.cu",     "multi_launch.cu", "host_sum.c",   NULL};
	strbuf sb = STRBUF_INIT;
	for (int t = 0; t < 8; t++)
		for (int i = 0; files[i]; i++) {
			char path[256];
			size_t len;
			snprintf(path, sizeof path, FIX "%s", files[i]);
			char *src = slurp(path, &len);
			sb_add(&sb, src, len);
			free(src);
		}
	struct syntax_doc *d = syntax_parse(sb.buf, sb.len, NULL);
	CHECK(d && syntax_is_clean(d), "a %zu-byte source parses cleanly", sb.len);
	const char *last = d->src;
	for (const char *p; (p = strstr(last + 1, "__global__"));)
		last = p;
	uint32_t lb = (uint32_t)(last - d->src);
	TSNode at = syntax_node_at(d, lb, lb + 10);
	CHECK(!ts_node_is_null(at) && ts_node_start_byte(at) == lb,
	      "syntax_node_at finds the last kernel's __global__");
	unsigned line, col, want = 1;
	syntax_position(d, lb, &line, &col);
	for (uint32_t i = 0; i < lb; i++)
		want += d->src[i] == '\n';
	CHECK(line == want && col == 1, "syntax_position counts every line (%u:%u, want %u:1)",
	      line, col, want);
	syntax_free(d);

	/* an error in the middle of it is found where it is */
	char *p = strstr(sb.buf + sb.len / 2, "for (");
	p[0] = '{';
	unsigned eline = 1;
	for (const char *q = sb.buf; q < p; q++)
		eline += *q == '\n';
	d = syntax_parse(sb.buf, sb.len, NULL);
	struct syntax_error e;
	CHECK(d && syntax_first_error(d, &e) && e.line >= eline - 1 && e.line <= eline + 1,
	      "an error mid-file is reported near line %u (got %u: %s)", eline, e.line, e.msg);
	syntax_free(d);
	sb_free(&sb);
}

int main(void)
{
	test_queries_warm();
	test_fixtures_parse_cleanly();
	test_first_error_location();
	test_bad_input();
	test_pragmas();
	test_tokens_and_text();
	test_queries();
	test_large_source();
	syntax_shutdown();
	return check_done();
}
