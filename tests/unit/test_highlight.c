/*
 * test_highlight.c - highlight spans from kloop's own query: CUDA
 * qualifiers, builtins, launches, functions, literals, preprocessor;
 * range highlighting; incremental re-highlighting after edits matches a
 * full one.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "highlight.h"
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

/* the capture name at the nth (1-based) occurrence of needle, "-" if none */
static const char *name_at(const struct highlight *h, const struct syntax_doc *d,
                           const char *needle, int nth)
{
	const char *p = d->src;
	for (int i = 0; i < nth && p; i++) {
		p = strstr(p, needle);
		if (p && i + 1 < nth)
			p++;
	}
	if (!p)
		return "(not in the source)";
	const struct hl_span *s = highlight_at(h, (uint32_t)(p - d->src));
	return s ? s->name : "-";
}

/* 1 if the spans are sorted, non-overlapping and non-empty */
static int well_formed(const struct hl_span *s, size_t n, size_t len)
{
	for (size_t i = 0; i < n; i++) {
		if (s[i].start >= s[i].end || s[i].end > len)
			return 0;
		if (i && s[i].start < s[i - 1].end)
			return 0;
	}
	return 1;
}

static int same_spans(const struct highlight *a, const struct highlight *b)
{
	if (a->n != b->n)
		return 0;
	for (size_t i = 0; i < a->n; i++)
		if (a->spans[i].start != b->spans[i].start || a->spans[i].end != b->spans[i].end ||
		    strcmp(a->spans[i].name, b->spans[i].name))
			return 0;
	return 1;
}

#define EXPECT(needle, nth, want)                                                                  \
	do {                                                                                       \
		const char *got_ = name_at(&h, d, needle, nth);                                    \
		CHECK(!strcmp(got_, want), "%s #%d is %s (got %s)", needle, nth, want, got_);      \
	} while (0)

static void test_gemm(void)
{
	size_t n;
	char *src = slurp(FIX "gemm_tiled.cu", &n);
	struct syntax_doc *d = syntax_parse(src, n, NULL);
	struct highlight h = HIGHLIGHT_INIT;
	char err[KL_ERRLEN] = "";
	CHECK(highlight_all(&h, d, err) == 0, "gemm_tiled.cu highlights (%s)", err);
	CHECK(h.n > 300, "into hundreds of spans (%zu)", h.n);
	CHECK(well_formed(h.spans, h.n, d->len), "spans are sorted and do not overlap");

	EXPECT("// Tiled SGEMM", 1, "comment");
	EXPECT("#include", 1, "preproc");
	EXPECT("<cuda_runtime.h>", 1, "string");
	EXPECT("\"kloop.h\"", 1, "string");
	EXPECT("#define", 1, "preproc");
	EXPECT("TILE_K 8", 1, "constant.macro");
	EXPECT("constexpr", 1, "keyword");
	EXPECT("32;", 1, "number");
	EXPECT("template", 1, "keyword");
	EXPECT("__global__", 1, "keyword.cuda");
	EXPECT("__launch_bounds__", 1, "keyword.cuda");
	EXPECT("__restrict__", 1, "keyword.cuda");
	EXPECT("gemm_tiled(", 1, "function");
	EXPECT("__shared__", 1, "keyword.cuda");
	EXPECT("threadIdx", 1, "variable.builtin.cuda");
	EXPECT("blockIdx", 1, "variable.builtin.cuda");
	EXPECT("blockDim", 1, "variable.builtin.cuda");
	EXPECT("for (", 1, "keyword.control");
	EXPECT("#pragma", 1, "preproc");
	EXPECT("unroll", 1, "preproc.arg");
	EXPECT("__syncthreads", 1, "function.builtin");
	EXPECT("0.0f", 1, "number");
	EXPECT("float", 1, "type.builtin");
	EXPECT("ceil_div(int", 1, "function");
	EXPECT("ceil_div(N", 1, "function.call");
	EXPECT("extern", 1, "keyword");
	EXPECT("kl_tensor", 1, "type");
	EXPECT("dim3", 1, "type.builtin");
	EXPECT("gemm_tiled<64", 1, "function.kernel");
	EXPECT("<<<", 1, "punctuation.launch");
	EXPECT(">>>", 1, "punctuation.launch");
	EXPECT("<64, 64", 1, "punctuation.bracket");
	EXPECT("cudaStream_t", 1, "type.builtin");
	EXPECT(".shape", 1, "punctuation.delimiter");
	EXPECT("shape[0]", 1, "property");
	EXPECT("return", 1, "keyword.control");
	EXPECT("+=", 1, "operator");
	EXPECT("cudaGetLastError", 1, "function.call");
	EXPECT("M, int N", 1, "variable.parameter");

	/* a byte range: spans clipped to it, the same names as the full run */
	uint32_t a = (uint32_t)(strstr(d->src, "__device__") - d->src);
	uint32_t b = a + 200;
	struct hl_span *sp;
	size_t ns;
	CHECK(highlight_range(d, a, b, &sp, &ns, err) == 0 && ns > 10,
	      "a 200-byte window highlights");
	int inside = 1, agree = 1;
	for (size_t i = 0; i < ns; i++) {
		if (sp[i].start < a || sp[i].end > b)
			inside = 0;
		const struct hl_span *f = highlight_at(&h, sp[i].start);
		if (!f || strcmp(f->name, sp[i].name))
			agree = 0;
	}
	CHECK(inside, "window spans stay inside the window");
	CHECK(agree, "window spans agree with the whole-file highlight");
	free(sp);
	CHECK(highlight_range(d, b, a, &sp, &ns, err) == 0 && ns == 0 && !sp,
	      "an empty range gives no spans");
	highlight_free(&h);
	syntax_free(d);
	free(src);
}

static void test_cuda_shapes(void)
{
	size_t n;
	char *src = slurp(FIX "softmax_coop.cu", &n);
	struct syntax_doc *d = syntax_parse(src, n, NULL);
	struct highlight h = HIGHLIGHT_INIT;
	highlight_all(&h, d, NULL);
	EXPECT("cg = cooperative_groups", 1, "namespace");
	EXPECT("__shfl_xor_sync", 1, "function.builtin");
	EXPECT("0xffffffff", 1, "number");
	EXPECT("this_thread_block", 1, "function.call");
	EXPECT("tiled_partition", 1, "function.call");
	EXPECT("thread_rank", 1, "function.method.call");
	EXPECT("__expf", 1, "function.builtin");
	EXPECT("FLT_MAX", 1, "constant");
	EXPECT("softmax_rows<<<", 1, "function.kernel");
	EXPECT("scale_rows<<<", 1, "function.kernel");
	highlight_free(&h);
	syntax_free(d);
	free(src);

	src = slurp(FIX "wmma_gemm.cu", &n);
	d = syntax_parse(src, n, NULL);
	highlight_all(&h, d, NULL);
	EXPECT("asm", 1, "keyword");
	EXPECT("volatile", 1, "keyword");
	EXPECT("\"mma.sync", 1, "string");
	EXPECT("\\n\"", 1, "string.escape");
	EXPECT("half2 *y", 1, "type.builtin");
	EXPECT("__nv_bfloat16", 1, "type.builtin");
	EXPECT("wmma::fragment", 1, "namespace");
	EXPECT("fragment<", 1, "type");
	EXPECT("warpSize", 1, "variable.builtin.cuda");
	highlight_free(&h);
	syntax_free(d);
	free(src);

	src = slurp(FIX "multi_launch.cu", &n);
	d = syntax_parse(src, n, NULL);
	highlight_all(&h, d, NULL);
	EXPECT("CUDA_TRY(expr)", 1, "function.macro");
	EXPECT("row_mean<<<", 1, "function.kernel");
	EXPECT("normalize<<<", 1, "function.kernel");
	EXPECT("#if ROWS", 1, "preproc");
	EXPECT("#endif", 1, "preproc");
	EXPECT("nullptr", 1, "constant.builtin");
	highlight_free(&h);
	syntax_free(d);
	free(src);
}

static void test_bad_sources(void)
{
	const char *cases[] = {
	    "",
	    "/* an unterminated comment\n__global__ void k() {}\n",
	    "const char *s = \"unterminated;\n__global__ void k() {}\n",
	    "__global__ void k( {{{ <<< >>> )))\n",
	    "\xff\xfe\x80 bad bytes __global__\n",
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		struct syntax_doc *d = syntax_parse(cases[i], strlen(cases[i]), NULL);
		struct highlight h = HIGHLIGHT_INIT;
		int rc = highlight_all(&h, d, NULL);
		CHECK(rc == 0 && well_formed(h.spans, h.n, d->len),
		      "bad source %zu highlights into well-formed spans (%zu)", i, h.n);
		highlight_free(&h);
		syntax_free(d);
	}
}

/* apply an edit, update incrementally, compare with a full highlight */
static void edit_and_compare(struct syntax_doc *d, struct highlight *h, const char *what,
                             const char *anchor, size_t del, const char *ins)
{
	char err[KL_ERRLEN] = "";
	const char *p = strstr(d->src, anchor);
	if (!p) {
		CHECK(0, "%s: anchor %s not found", what, anchor);
		return;
	}
	size_t off = (size_t)(p - d->src);
	struct syntax_change chg;
	int rc = syntax_edit(d, off, off + del, ins, strlen(ins), &chg, err);
	rc = rc ? rc : highlight_update(h, d, &chg, err);
	struct highlight full = HIGHLIGHT_INIT;
	highlight_all(&full, d, err);
	CHECK(rc == 0 && same_spans(h, &full),
	      "%s: incremental highlight equals a full one (%zu vs %zu)", what, h->n, full.n);
	highlight_free(&full);
}

static void test_incremental(void)
{
	size_t n;
	char *src = slurp(FIX "multi_launch.cu", &n);
	struct syntax_doc *d = syntax_parse(src, n, NULL);
	struct highlight h = HIGHLIGHT_INIT;
	highlight_all(&h, d, NULL);
	edit_and_compare(d, &h, "typing a character", "float t = block_reduce", 0, "x");
	edit_and_compare(d, &h, "deleting it", "xfloat t", 1, "");
	edit_and_compare(d, &h, "renaming a kernel", "row_var(const", 7, "row_variance");
	edit_and_compare(d, &h, "inserting a line", "namespace ln {", 0, "#define EXTRA 7\n");
	edit_and_compare(d, &h, "opening a block comment", "__global__ void row_mean", 0, "/* ");
	edit_and_compare(d, &h, "closing it after row_mean", "__global__ void row_var", 0, "*/\n");
	CHECK(!strcmp(name_at(&h, d, "row_mean", 1), "comment"),
	      "the commented-out kernel is comment");
	edit_and_compare(d, &h, "removing the comment's end", "*/\n__global__ void row_var", 3, "");
	edit_and_compare(d, &h, "and its start", "/* __global__", 3, "");
	CHECK(!strcmp(name_at(&h, d, "row_variance", 1), "function"),
	      "and the kernel's name is a function again");
	edit_and_compare(d, &h, "breaking a launch", "<<<rows, 128", 3, "<<");
	edit_and_compare(d, &h, "mending it", "<<rows, 128", 0, "<");
	edit_and_compare(d, &h, "adding a kernel at the end", "extern \"C\"", 0,
	                 "__global__ void extra(float *p) { p[threadIdx.x] = 0.f; }\n\n");
	edit_and_compare(d, &h, "deleting everything but a line", "#include <cuda_runtime.h>",
	                 d->len - (size_t)(strstr(d->src, "#include <cuda_runtime.h>") - d->src),
	                 "");
	const struct hl_span *s = highlight_at(&h, 0);
	CHECK(s && !strcmp(s->name, "comment"), "the first line is still a comment");
	highlight_free(&h);
	syntax_free(d);
	free(src);
}

int main(void)
{
	test_gemm();
	test_cuda_shapes();
	test_bad_sources();
	test_incremental();
	syntax_shutdown();
	return check_done();
}
