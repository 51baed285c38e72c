/*
 * test_highlight.c - highlight spans from kloop's own query: CUDA
 * qualifiers, builtins, launches, functions, literals, preprocessor;
 * a window of a file (what the code pane draws) highlighted as the whole
 * file is; bad sources.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "highlight.h"
#include "slurp.h"
#include "util.h"

#define FIX "tests/fixtures/cuda_src/"

/* the spans of a whole document */
struct spans {
	struct hl_span *s;
	size_t n;
};

static int highlight_doc(const struct syntax_doc *d, struct spans *h, char *err)
{
	return highlight_range(d, 0, (uint32_t)d->len, &h->s, &h->n, err);
}

/* the span covering byte b, or NULL */
static const struct hl_span *span_at(const struct hl_span *s, size_t n, uint32_t b)
{
	for (size_t i = 0; i < n; i++)
		if (s[i].start <= b && b < s[i].end)
			return &s[i];
	return NULL;
}

/* the capture name at the nth (1-based) occurrence of needle, "-" if none */
static const char *name_at(const struct spans *h, const struct syntax_doc *d, const char *needle,
                           int nth)
{
	const char *p = d->src;
	for (int i = 0; i < nth && p; i++) {
		p = strstr(p, needle);
		if (p && i + 1 < nth)
			p++;
	}
	if (!p)
		return "(not in the source)";
	const struct hl_span *s = span_at(h->s, h->n, (uint32_t)(p - d->src));
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
	struct spans h = {0};
	char err[KL_ERRLEN] = "";
	CHECK(highlight_doc(d, &h, err) == 0, "gemm_tiled.cu highlights (%s)", err);
	CHECK(h.n > 300, "into hundreds of spans (%zu)", h.n);
	CHECK(well_formed(h.s, h.n, d->len), "spans are sorted and do not overlap");

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
		const struct hl_span *f = span_at(h.s, h.n, sp[i].start);
		if (!f || strcmp(f->name, sp[i].name))
			agree = 0;
	}
	CHECK(inside, "window spans stay inside the window");
	CHECK(agree, "window spans agree with the whole-file highlight");
	free(sp);
	CHECK(highlight_range(d, b, a, &sp, &ns, err) == 0 && ns == 0 && !sp,
	      "an empty range gives no spans");
	free(h.s);
	syntax_free(d);
	free(src);
}

static void test_cuda_shapes(void)
{
	size_t n;
	char *src = slurp(FIX "softmax_coop.cu", &n);
	struct syntax_doc *d = syntax_parse(src, n, NULL);
	struct spans h = {0};
	highlight_doc(d, &h, NULL);
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
	free(h.s);
	syntax_free(d);
	free(src);

	src = slurp(FIX "wmma_gemm.cu", &n);
	d = syntax_parse(src, n, NULL);
	highlight_doc(d, &h, NULL);
	EXPECT("asm", 1, "keyword");
	EXPECT("volatile", 1, "keyword");
	EXPECT("\"mma.sync", 1, "string");
	EXPECT("\\n\"", 1, "string.escape");
	EXPECT("half2 *y", 1, "type.builtin");
	EXPECT("__nv_bfloat16", 1, "type.builtin");
	EXPECT("wmma::fragment", 1, "namespace");
	EXPECT("fragment<", 1, "type");
	EXPECT("warpSize", 1, "variable.builtin.cuda");
	free(h.s);
	syntax_free(d);
	free(src);

	src = slurp(FIX "multi_launch.cu", &n);
	d = syntax_parse(src, n, NULL);
	highlight_doc(d, &h, NULL);
	EXPECT("CUDA_TRY(expr)", 1, "function.macro");
	EXPECT("row_mean<<<", 1, "function.kernel");
	EXPECT("normalize<<<", 1, "function.kernel");
	EXPECT("#if ROWS", 1, "preproc");
	EXPECT("#endif", 1, "preproc");
	EXPECT("nullptr", 1, "constant.builtin");
	free(h.s);
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
		struct spans h = {0};
		int rc = highlight_doc(d, &h, NULL);
		CHECK(rc == 0 && well_formed(h.s, h.n, d->len),
		      "bad source %zu highlights into well-formed spans (%zu)", i, h.n);
		free(h.s);
		syntax_free(d);
	}
}

/*
 * The code pane's windows: 60 lines at a time, each highlighted on its
 * own, give the spans the whole-file highlight has on those lines (a
 * capture that starts above the window, such as a block comment, is still
 * found), clipped to the window.
 */
static void test_windows(void)
{
	size_t n;
	char *src = slurp(FIX "multi_launch.cu", &n);
	strbuf sb = STRBUF_INIT;
	sb_adds(&sb, "/* a block comment\n");
	for (int i = 0; i < 130; i++)
		sb_addf(&sb, "   line %d of it, __global__ void k() {}\n", i);
	sb_adds(&sb, "*/\n");
	sb_add(&sb, src, n);
	struct syntax_doc *d = syntax_parse(sb.buf, sb.len, NULL);
	struct spans h = {0};
	char err[KL_ERRLEN] = "";
	CHECK(highlight_doc(d, &h, err) == 0, "the file highlights (%s)", err);
	int windows = 0, same = 1;
	for (uint32_t from = 0; from < d->len;) {
		uint32_t to = from;
		for (int l = 0; l < 60 && to < d->len; to++)
			l += d->src[to] == '\n';
		struct hl_span *w;
		size_t nw;
		if (highlight_range(d, from, to, &w, &nw, err) < 0) {
			same = 0;
			break;
		}
		/* the whole-file spans meeting [from, to), clipped */
		size_t k = 0;
		for (size_t i = 0; i < h.n; i++) {
			if (h.s[i].end <= from || h.s[i].start >= to)
				continue;
			uint32_t s = h.s[i].start > from ? h.s[i].start : from;
			uint32_t e = h.s[i].end < to ? h.s[i].end : to;
			if (k >= nw || w[k].start != s || w[k].end != e ||
			    strcmp(w[k].name, h.s[i].name))
				same = 0;
			k++;
		}
		same &= k == nw;
		if (windows == 1)
			CHECK(nw == 1 && !strcmp(w[0].name, "comment") && w[0].start == from,
			      "the second window, inside the block comment, is all comment");
		free(w);
		windows++;
		from = to;
	}
	CHECK(windows >= 3 && same, "%d 60-line windows hold the whole-file spans", windows);
	free(h.s);
	syntax_free(d);
	sb_free(&sb);
	free(src);
}

int main(void)
{
	test_gemm();
	test_cuda_shapes();
	test_bad_sources();
	test_windows();
	syntax_shutdown();
	return check_done();
}
