/*
 * test_hlmatch.c - kloop's highlight matcher against tree-sitter's query
 * cursor: the same spans for every CUDA source in the repository, a large
 * generated file and sources with syntax errors, over the whole file and
 * over windows and ranges cut mid-token; the same capture ids and pattern
 * count; hlm_compile()'s errors with their line; and tswalk.c's walk
 * against TSTreeCursor's (the same nodes, symbols, fields, indexes).
 */
#include <glob.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "highlight.h"
#include "hlmatch.h"
#include "tswalk.h"
#include "util.h"

static size_t n_sources, n_ranges, n_spans;

/* path's text into sb (emptied first); 0, or -1 when it cannot be read */
static int load(const char *path, strbuf *sb)
{
	char err[KL_ERRLEN];
	sb_reset(sb);
	int rc = read_file(path, sb, 1 << 24, err);
	if (rc < 0)
		printf("# %s\n", err);
	else if (!sb->buf)
		sb_grow(sb, 0);
	return rc;
}

/* the nodes a TSTreeCursor walk reaches under c that overlap [start, end),
 * one line each, as tswalk reports them */
static void cursor_walk(TSTreeCursor *c, uint32_t depth, uint32_t index, uint32_t start,
                        uint32_t end, strbuf *out)
{
	TSNode n = ts_tree_cursor_current_node(c);
	uint32_t s = ts_node_start_byte(n), e = ts_node_end_byte(n);
	if (s >= end || e <= start)
		return;
	sb_addf(out, "%u %u %u %u-%u %u %p %u\n", depth, index, ts_node_symbol(n), s, e,
	        ts_tree_cursor_current_field_id(c), n.id, n.context[3]);
	if (!ts_tree_cursor_goto_first_child(c))
		return;
	uint32_t i = 0;
	do
		cursor_walk(c, depth + 1, i++, start, end, out);
	while (ts_tree_cursor_goto_next_sibling(c));
	ts_tree_cursor_goto_parent(c);
}

/* tswalk and TSTreeCursor reach the same nodes of d over [start, end) */
static int same_walk(const char *what, const struct syntax_doc *d, uint32_t start, uint32_t end)
{
	int same = 1;
	for (size_t k = 0; k < d->nseg && same; k++) {
		strbuf a = STRBUF_INIT, b = STRBUF_INIT;
		TSNode root = syntax_seg_root(d, k);
		struct tswalk *w = tswalk_new(root, start, end);
		struct tswalk_node n;
		while (tswalk_next(w, &n))
			sb_addf(&a, "%u %u %u %u-%u %u %p %u\n", n.depth, n.index, n.sym, n.start,
			        n.end, tswalk_field(w), n.node.id, n.node.context[3]);
		tswalk_free(w);
		TSTreeCursor c = ts_tree_cursor_new(root);
		cursor_walk(&c, 0, 0, start, end, &b);
		ts_tree_cursor_delete(&c);
		same = a.len == b.len && (!a.len || !memcmp(a.buf, b.buf, a.len));
		if (!same) {
			size_t i = 0;
			while (i < a.len && i < b.len && a.buf[i] == b.buf[i])
				i++;
			while (i > 0 && a.buf[i - 1] != '\n')
				i--;
			printf("# %s [%u, %u) segment %zu: tswalk `%.60s` vs the cursor `%.60s`\n",
			       what, start, end, k, a.buf ? a.buf + i : "", b.buf ? b.buf + i : "");
		}
		sb_free(&a);
		sb_free(&b);
	}
	return same;
}

/* compare both ways over [start, end); 1 if the same, else prints the first difference */
static int same_range(const char *what, const struct syntax_doc *d, uint32_t start, uint32_t end)
{
	struct hl_span *a, *b;
	size_t na, nb;
	char err[KL_ERRLEN];
	if (highlight_range(d, start, end, &a, &na, err) < 0 ||
	    highlight_range_reference(d, start, end, &b, &nb, err) < 0) {
		printf("# %s: %s\n", what, err);
		return 0;
	}
	int same = na == nb;
	size_t i = 0;
	for (; same && i < na; i++)
		same = a[i].start == b[i].start && a[i].end == b[i].end &&
		       strcmp(a[i].name, b[i].name) == 0;
	if (!same) {
		i = i ? i - 1 : 0;
		printf("# %s [%u, %u): %zu spans vs tree-sitter's %zu", what, start, end, na, nb);
		if (i < na && i < nb)
			printf("; span %zu: [%u, %u) %s vs [%u, %u) %s `%.*s`", i, a[i].start,
			       a[i].end, a[i].name, b[i].start, b[i].end, b[i].name,
			       (int)(b[i].end - b[i].start), d->src + b[i].start);
		printf("\n");
	}
	same &= same_walk(what, d, start, end);
	n_ranges++;
	n_spans += nb;
	free(a);
	free(b);
	return same;
}

/* byte offset of the start of line `line` (0-based), or the end */
static uint32_t line_start(const struct syntax_doc *d, unsigned line)
{
	size_t i = 0;
	for (unsigned l = 0; l < line && i < d->len; i++)
		l += d->src[i] == '\n';
	return (uint32_t)i;
}

/* whole file, 60-line windows at several offsets, ranges cut mid-token */
static int same_everywhere(const char *what, const char *src, size_t len)
{
	struct syntax_doc *d = syntax_parse(src, len, NULL);
	if (!d)
		return 0;
	n_sources++;
	unsigned lines = 1;
	for (size_t i = 0; i < len; i++)
		lines += src[i] == '\n';
	int ok = same_range(what, d, 0, (uint32_t)len);
	for (unsigned k = 0; k < 4; k++) {
		unsigned l = lines * k / 4;
		ok &= same_range(what, d, line_start(d, l), line_start(d, l + 60));
	}
	uint32_t seed = (uint32_t)len * 2654435761u + 7;
	for (int k = 0; k < 6 && len > 1; k++) {
		seed = seed * 1103515245u + 12345u;
		uint32_t s = (seed >> 8) % (uint32_t)len;
		seed = seed * 1103515245u + 12345u;
		uint32_t e = s + 1 + (seed >> 8) % 4000;
		ok &= same_range(what, d, s, e);
	}
	syntax_free(d);
	return ok;
}

static void test_files(void)
{
	const char *globs[] = {"tests/fixtures/cuda_src/*", "tests/fixtures/cuda/*.cu",
	                       "tasks/*/seed.cu",           "tasks/*/reference.cu",
	                       "tests/fuzz/corpus/*",       "build/bench/gen_5000.cu"};
	strbuf all = STRBUF_INIT;
	size_t files = 0;
	for (size_t g = 0; g < sizeof globs / sizeof *globs; g++) {
		glob_t gl;
		if (glob(globs[g], 0, NULL, &gl) != 0)
			continue;
		for (size_t i = 0; i < gl.gl_pathc; i++) {
			strbuf f = STRBUF_INIT;
			if (load(gl.gl_pathv[i], &f) < 0 || memchr(f.buf, 0, f.len) ||
			    f.len > SYNTAX_MAX_BYTES) {
				sb_free(&f);
				continue;
			}
			const char *src = f.buf;
			size_t n = f.len;
			CHECK(same_everywhere(gl.gl_pathv[i], src, n),
			      "%s: the same spans as tree-sitter's query cursor", gl.gl_pathv[i]);
			if (all.len < 400000)
				sb_add(&all, src, n);
			files++;
			sb_free(&f);
		}
		globfree(&gl);
	}
	CHECK(files >= 20, "the fixtures, tasks and corpus give %zu sources", files);
	/* a large file: everything above, one after the other */
	CHECK(same_everywhere("all sources concatenated", all.buf ? all.buf : "", all.len),
	      "all sources concatenated (%zu bytes): the same spans", all.len);
	sb_free(&all);
}

static void test_errors(void)
{
	const char *cases[][2] = {
	    {"unterminated comment", "/* an unterminated comment\n__global__ void k() {}\n"},
	    {"unterminated string", "const char *s = \"unterminated;\n__global__ void k() {}\n"},
	    {"stray braces", "}}} __global__ void k(float *x) { x[threadIdx.x] = 1; } {{\n"},
	    {"launch soup", "__global__ void k( {{{ <<< >>> )))\nk<<<1, 2>>>(a);\n"},
	    {"error-heavy",
	     "#include <x.h>\nint f( { return ) <<< ; ]]] template <typename T> __global__ void "
	     "g(T *p) { p[blockIdx.x] = __expf(1.0f); atomicAdd(p, 1) ; } ;; ) ( @ $ `\n"
	     "ns::kern<float><<<grid, block>>>(p); obj.method(); half2 h; ALL_CAPS = 3;\n"},
	    {"bad bytes", "\xff\xfe\x80 bad bytes __global__\n"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
		CHECK(same_everywhere(cases[i][0], cases[i][1], strlen(cases[i][1])),
		      "syntax errors (%s): the same spans", cases[i][0]);
	/* a source cut at every 97th byte: errors everywhere */
	strbuf f = STRBUF_INIT;
	load("tests/fixtures/cuda/syntax_error.cu", &f);
	const char *src = f.buf ? f.buf : "";
	size_t n = f.len;
	CHECK(n > 0 && same_everywhere("syntax_error.cu", src, n),
	      "syntax_error.cu: the same spans");
	int ok = 1;
	for (size_t cut = 97; cut < n; cut += 97)
		ok &= same_everywhere("a truncated source", src, cut);
	CHECK(ok, "syntax_error.cu truncated at every 97th byte: the same spans");
	sb_free(&f);
}

static void test_ids(void)
{
	char err[KL_ERRLEN];
	const struct syntax_query *sq = syntax_query_get("highlights", err);
	const struct syntax_query_src *qs = syntax_query_srcs;
	while (qs->name && strcmp(qs->name, "highlights") != 0)
		qs++;
	struct hlm *m = hlm_compile(syntax_language(), "highlights.scm", qs->text, qs->len, err);
	CHECK(sq && m, "both compile highlights.scm");
	if (!sq || !m)
		return;
	const TSQuery *q = syntax_query_ts(sq);
	CHECK(hlm_pattern_count(m) == ts_query_pattern_count(q), "%u patterns, as tree-sitter (%u)",
	      hlm_pattern_count(m), ts_query_pattern_count(q));
	CHECK(hlm_capture_count(m) == ts_query_capture_count(q), "%u captures, as tree-sitter (%u)",
	      hlm_capture_count(m), ts_query_capture_count(q));
	int same = 1;
	for (uint32_t i = 0; i < ts_query_capture_count(q) && i < hlm_capture_count(m); i++) {
		uint32_t len;
		same &=
		    strcmp(ts_query_capture_name_for_id(q, i, &len), hlm_capture_name(m, i)) == 0;
	}
	CHECK(same, "every capture id names the same capture as tree-sitter's");
	CHECK(hlm_capture_name(m, 9999) == NULL, "an id out of range has no name");
	hlm_free(m);
}

static void expect_error(const char *scm, const char *want)
{
	char err[KL_ERRLEN] = "";
	struct hlm *m = hlm_compile(syntax_language(), "t.scm", scm, strlen(scm), err);
	CHECK(!m && strcmp(err, want) == 0, "refused: %s (got: %s)", want, m ? "compiled" : err);
	hlm_free(m);
}

static void test_compile_errors(void)
{
	expect_error("(comment) @c\n(no_such_node) @x\n",
	             "t.scm: line 2: unknown node type `no_such_node`");
	expect_error("\n\n(comment)* @c\n",
	             "t.scm: line 3: quantifier `*` is not supported by kloop's highlighter");
	expect_error("(identifier) @c\n((identifier) @d\n (#match? @d \"(\"))\n",
	             "t.scm: line 3: bad regular expression \"(\"");
	expect_error("(call_expression\n  nofield: (identifier) @c)\n",
	             "t.scm: line 2: unknown field `nofield`");
	expect_error("(call_expression . (identifier) @c)",
	             "t.scm: line 1: anchor `.` is not supported by kloop's highlighter");
	expect_error("(call_expression (_) @c)",
	             "t.scm: line 1: wildcard `_` is not supported by kloop's highlighter");
	expect_error("(ERROR) @e", "t.scm: line 1: pattern `ERROR` is not supported by kloop's "
	                           "highlighter");
	expect_error("(call_expression !arguments) @c",
	             "t.scm: line 1: negated field `!arguments` is not supported by kloop's "
	             "highlighter");
	expect_error("((identifier) @a (identifier) @b)",
	             "t.scm: line 1: grouping of sibling patterns `((` is not supported by "
	             "kloop's highlighter");
	expect_error("((identifier) @a (#eq? @a @b))", "t.scm: line 1: unknown capture `@b`");
	expect_error("\"no-such-token\" @k",
	             "t.scm: line 1: unknown node type `\"no-such-token\"`");
	expect_error("(comment) @c\n(identifier", "t.scm: line 2: unbalanced `(`");
}

/* the captures as "start end pattern capture" lines, sorted, deduplicated */
static void add_capture(void *ctx, TSNode node, uint32_t pattern, uint32_t capture)
{
	strbuf *sb = ctx;
	sb_addf(sb, "%u %u %u %u\n", ts_node_start_byte(node), ts_node_end_byte(node), pattern,
	        capture);
}

static int cmp_line(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static char *sorted_unique(strbuf *sb)
{
	char **lines = NULL;
	size_t n = 0, alloc = 0;
	for (char *p = sb->buf, *nl; p && (nl = strchr(p, '\n')); p = nl + 1) {
		*nl = 0;
		xgrow((void **)&lines, &alloc, n + 1, sizeof *lines);
		lines[n++] = p;
	}
	qsort(lines, n, sizeof *lines, cmp_line);
	strbuf out = STRBUF_INIT;
	for (size_t i = 0; i < n; i++)
		if (!i || strcmp(lines[i], lines[i - 1]) != 0)
			sb_addf(&out, "%s\n", lines[i]);
	free(lines);
	sb_free(sb);
	if (!out.buf)
		sb_grow(&out, 0);
	return sb_detach(&out);
}

/* a query beyond highlights.scm: several captures, nesting, siblings, predicates */
static void test_several_captures(void)
{
	const char *scm =
	    "(call_expression function: (identifier) @fn arguments: (argument_list\n"
	    "  (number_literal) @num (identifier) @arg))\n"
	    "((binary_expression left: (identifier) @l [\"+\" \"*\"] @op right: (_x_) @r))\n";
	const char *src = "void f() { g(1, a, 2, b); h(x, 3); k(4, 5, c); "
	                  "y = a + b * c; }\n";
	char err[KL_ERRLEN];
	struct hlm *m = hlm_compile(syntax_language(), "t.scm", scm, strlen(scm), err);
	CHECK(!m, "an unknown node in an alternation's sibling is refused (%s)", m ? "" : err);
	hlm_free(m);
	scm = "(call_expression function: (identifier) @fn arguments: (argument_list\n"
	      "  (number_literal) @num (identifier) @arg))\n"
	      "(binary_expression left: (identifier) @l [\"+\" \"*\"] @op "
	      "right: [(identifier) (binary_expression)] @r)\n"
	      "((identifier) @fn (#not-any-of? @fn \"a\" \"b\"))\n";
	m = hlm_compile(syntax_language(), "t.scm", scm, strlen(scm), err);
	uint32_t off;
	TSQueryError qe;
	TSQuery *q = ts_query_new(syntax_language(), scm, (uint32_t)strlen(scm), &off, &qe);
	CHECK(m && q, "a query with several captures per pattern compiles both ways");
	if (!m || !q) {
		hlm_free(m);
		if (q)
			ts_query_delete(q);
		return;
	}
	struct syntax_doc *d = syntax_parse(src, strlen(src), NULL);
	strbuf a = STRBUF_INIT, b = STRBUF_INIT;
	hlm_run(m, syntax_seg_root(d, 0), d->src, d->len, 0, (uint32_t)d->len, add_capture, &a);
	TSQueryCursor *qc = ts_query_cursor_new();
	ts_query_cursor_exec(qc, q, syntax_seg_root(d, 0));
	TSQueryMatch qm;
	while (ts_query_cursor_next_match(qc, &qm)) {
		for (uint16_t i = 0; i < qm.capture_count; i++) {
			TSNode node = qm.captures[i].node;
			uint32_t s = ts_node_start_byte(node), e = ts_node_end_byte(node);
			int keep = 1;
			if (qm.pattern_index == 2) /* the #not-any-of? */
				keep = !(e - s == 1 && (src[s] == 'a' || src[s] == 'b'));
			if (keep)
				add_capture(&b, node, qm.pattern_index, qm.captures[i].index);
		}
	}
	ts_query_cursor_delete(qc);
	char *sa = sorted_unique(&a), *sb = sorted_unique(&b);
	CHECK(strcmp(sa, sb) == 0 && strlen(sb) > 40,
	      "every capture of every match, as tree-sitter finds them");
	if (strcmp(sa, sb) != 0)
		printf("# kloop:\n%s# tree-sitter:\n%s", sa, sb);
	free(sa);
	free(sb);
	syntax_free(d);
	ts_query_delete(q);
	hlm_free(m);
}

int main(void)
{
	test_ids();
	test_compile_errors();
	test_several_captures();
	test_files();
	test_errors();
	printf("# %zu sources, %zu ranges, %zu spans compared with tree-sitter's\n", n_sources,
	       n_ranges, n_spans);
	highlight_shutdown();
	syntax_shutdown();
	return check_done();
}
