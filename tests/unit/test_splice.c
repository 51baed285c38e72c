/*
 * test_splice.c - function-level edits: find, replace, splicing an LLM
 * reply's code blocks into a candidate, crossover from a second parent
 * (with the callers whose calls change, or refused naming the one it
 * lacks); what a PyTorch extension and a kernel keep of their form; with
 * the failures a user meets (a name that is not there, code that does not
 * parse, a reply without code).
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "outline.h"
#include "slurp.h"
#include "splice.h"
#include "syntax.h"
#include "util.h"

#define FIX "tests/fixtures/cuda_src/"

static int parses(const char *s, size_t n)
{
	return syntax_check(s, n, NULL) == 0;
}

/* occurrences of needle in s */
static int occurs(const char *s, const char *needle)
{
	int k = 0;
	for (const char *p = s; (p = strstr(p, needle)); p++)
		k++;
	return k;
}

static const struct splice_change *change(const struct splice_result *r, const char *name)
{
	for (size_t i = 0; i < r->n_changes; i++)
		if (!strcmp(r->changes[i].name, name))
			return &r->changes[i];
	return NULL;
}

static int action(const struct splice_result *r, const char *name, enum splice_action a)
{
	const struct splice_change *c = change(r, name);
	return c && c->action == a;
}

/* the line of s where needle starts (1-based), 0 when absent */
static unsigned line_of(const char *s, const char *needle)
{
	const char *p = strstr(s, needle);
	if (!p)
		return 0;
	unsigned line = 1;
	for (const char *q = s; q < p; q++)
		line += *q == '\n';
	return line;
}

static void test_find(void)
{
	size_t n;
	char *src = slurp(FIX "gemm_tiled.cu", &n);
	struct splice_span sp;
	char err[KL_ERRLEN] = "";
	CHECK(splice_find(src, n, "gemm_tiled", &sp, err) == 0, "gemm_tiled is found (%s)", err);
	CHECK(sp.line == 12 && sp.end_line == 50 && !strncmp(sp.text, "template <int BM", 16) &&
	          sp.text[strlen(sp.text) - 1] == '}',
	      "with its template<> line, lines 12-50");
	splice_span_free(&sp);
	CHECK(splice_find(src, n, "kl_run", &sp, err) == 0 &&
	          !strncmp(sp.text, "extern \"C\" int kl_run", 21),
	      "kl_run comes with its extern \"C\"");
	splice_span_free(&sp);
	CHECK(splice_find(src, n, "gemm_tiled_v2", &sp, err) == -1 &&
	          strstr(err, "no function named `gemm_tiled_v2`") && strstr(err, "ceil_div"),
	      "a missing name is an error that lists what is there: %s", err);
	free(src);

	src = slurp(FIX "multi_launch.cu", &n);
	CHECK(splice_find(src, n, "row_var", &sp, err) == 0 && !strcmp(sp.qualname, "ln::row_var"),
	      "an unqualified name finds the function in its namespace");
	splice_span_free(&sp);
	free(src);

	const char *two = "namespace a { void f() {} }\nnamespace b { void f() {} }\n";
	CHECK(splice_find(two, strlen(two), "f", &sp, err) == -1 && strstr(err, "ambiguous") &&
	          strstr(err, "a::f") && strstr(err, "b::f"),
	      "an ambiguous name lists the candidates: %s", err);
	CHECK(splice_find(two, strlen(two), "b::f", &sp, err) == 0 && sp.line == 2,
	      "the qualified name picks one");
	splice_span_free(&sp);
}

static const char new_ceil_div[] = "// rounds up; b must be positive\n"
                                   "__device__ __forceinline__ int ceil_div(int a, int b)\n"
                                   "{\n"
                                   "\treturn (a + b - 1) / b; // unchanged math, new comment\n"
                                   "}\n";

static void test_replace(void)
{
	size_t n;
	char *src = slurp(FIX "gemm_tiled.cu", &n);
	struct splice_result r;
	char err[KL_ERRLEN] = "";
	const char *k2 = "template <int BM, int BN, int BK>\n"
	                 "__global__ void __launch_bounds__(THREADS, MIN_BLOCKS)\n"
	                 "gemm_tiled(const float *__restrict__ A, const float *__restrict__ B,\n"
	                 "\t   float *__restrict__ C, int M, int N, int K)\n"
	                 "{\n\t/* version 2 */\n\tC[0] = A[0] * B[0];\n}";
	CHECK(splice_replace(src, n, "gemm_tiled", k2, strlen(k2), &r, err) == 0,
	      "gemm_tiled is replaced (%s)", err);
	if (r.src) {
		CHECK(strstr(r.src, "/* version 2 */") && !strstr(r.src, "__shared__ float As"),
		      "the result has the new body and not the old one");
		CHECK(occurs(r.src, "template <int BM") == 1, "one template<> line, not two");
		CHECK(strstr(r.src, "int ceil_div(int a, int b)") &&
		          strstr(r.src, "extern \"C\" int kl_run") &&
		          strstr(r.src, "#define TILE_K 8"),
		      "ceil_div, kl_run and the #defines are kept");
		CHECK(parses(r.src, r.len), "the result parses");
		CHECK(action(&r, "gemm_tiled", SPLICE_REPLACED), "the change says replaced");
	}
	splice_result_free(&r);

	/* kl_run without extern "C" in the new text keeps its C linkage */
	const char *run =
	    "int kl_run(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *stream)\n"
	    "{\n\treturn 7;\n}\n";
	CHECK(splice_replace(src, n, "kl_run", run, strlen(run), &r, err) == 0 &&
	          strstr(r.src, "extern \"C\" int kl_run") && strstr(r.src, "return 7;") &&
	          occurs(r.src, "extern \"C\"") == 1,
	      "a replaced extern \"C\" function keeps extern \"C\" once (%s)", err);
	splice_result_free(&r);

	/* leading comments of the new text replace none of the old */
	CHECK(splice_replace(src, n, "ceil_div", new_ceil_div, strlen(new_ceil_div), &r, err) ==
	              0 &&
	          strstr(r.src, "// rounds up; b must be positive\n__device__"),
	      "the new text's comment comes along (%s)", err);
	splice_result_free(&r);

	const char *nosemi = "int ceil_div(int a, int b) { return a / b }";
	CHECK(splice_replace(src, n, "ceil_div", nosemi, strlen(nosemi), &r, err) == -1 &&
	          strstr(err, "replacement text does not parse") && strstr(err, "missing `;`"),
	      "replacement text that does not parse is refused: %s", err);
	CHECK(r.src == NULL, "and nothing is returned");
	const char *other = "__device__ int floor_div(int a, int b) { return a / b; }";
	CHECK(splice_replace(src, n, "ceil_div", other, strlen(other), &r, err) == -1 &&
	          strstr(err, "defines floor_div, not `ceil_div`"),
	      "text defining another function is refused: %s", err);
	const char *both = "__device__ int ceil_div(int a, int b) { return a / b; }\n"
	                   "__device__ int floor_div(int a, int b) { return a / b; }\n";
	CHECK(splice_replace(src, n, "ceil_div", both, strlen(both), &r, err) == -1 &&
	          strstr(err, "other functions too (floor_div)"),
	      "text defining more functions is refused: %s", err);
	CHECK(splice_replace(src, n, "nope", both, strlen(both), &r, err) == -1 &&
	          strstr(err, "no function named `nope`"),
	      "replacing a function that is not there is refused: %s", err);
	CHECK(splice_replace(src, n, "ceil_div", "", 0, &r, err) == -1 &&
	          strstr(err, "defines no function"),
	      "empty replacement text is refused: %s", err);
	free(src);

	/* a function in an extern "C" block: new text with extern "C" drops it */
	const char *blk = "extern \"C\" {\nint f(void) { return 1; }\n}\n";
	const char *nf = "extern \"C\" int f(void) { return 2; }";
	CHECK(splice_replace(blk, strlen(blk), "f", nf, strlen(nf), &r, err) == 0 &&
	          !strcmp(r.src, "extern \"C\" {\nint f(void) { return 2; }\n}\n"),
	      "inside an extern \"C\" { } block, no second extern \"C\" (%s)", r.src ? r.src : err);
	splice_result_free(&r);
}

static void test_reply(void)
{
	size_t n;
	char *src = slurp(FIX "softmax_coop.cu", &n);
	struct splice_result r;
	char err[KL_ERRLEN] = "";
	const char *reply =
	    "Here is a faster version: the block reduction now uses a helper, and the\n"
	    "scale kernel is vectorized.\n\n"
	    "```cuda\n"
	    "__device__ __forceinline__ float block_max(float v, float *red)\n"
	    "{\n"
	    "\tv = warp_max(v);\n"
	    "\tif ((threadIdx.x & 31) == 0)\n"
	    "\t\tred[threadIdx.x >> 5] = v;\n"
	    "\t__syncthreads();\n"
	    "\treturn red[0];\n"
	    "}\n"
	    "\n"
	    "__global__ void scale_rows(float *y, float alpha, int n)\n"
	    "{\n"
	    "\tint i = (blockIdx.x * blockDim.x + threadIdx.x) * 4;\n"
	    "\tif (i + 3 < n) {\n"
	    "\t\tfloat4 v = *(float4 *)(y + i);\n"
	    "\t\tv.x *= alpha; v.y *= alpha; v.z *= alpha; v.w *= alpha;\n"
	    "\t\t*(float4 *)(y + i) = v;\n"
	    "\t}\n"
	    "}\n"
	    "```\n\n"
	    "And use it in the softmax:\n\n"
	    "```cpp\n"
	    "#define BLOCK 512\n"
	    "#include <cuda_fp16.h>\n"
	    "__global__ void __launch_bounds__(BLOCK) softmax_rows(const float *x, float *y, int "
	    "cols)\n"
	    "{\n"
	    "\t__shared__ float red[BLOCK / 32];\n"
	    "\tfloat m = block_max(x[threadIdx.x], red);\n"
	    "\ty[threadIdx.x] = m;\n"
	    "}\n"
	    "```\n"
	    "To test it:\n```python\nimport torch\nprint(torch.ones(3))\n```\n";
	CHECK(splice_reply(src, n, reply, strlen(reply), &r, err) == 0, "the reply splices (%s)",
	      err);
	if (r.src) {
		CHECK(strstr(r.src, "block_max(x[threadIdx.x], red)") &&
		          strstr(r.src, "float4 v = *(float4 *)"),
		      "the result has both new bodies");
		CHECK(!strstr(r.src, "cg::reduce(warp, m"), "the old softmax body is gone");
		CHECK(strstr(r.src, "float warp_max(float v)") &&
		          strstr(r.src, "float warp_sum(float v)") &&
		          strstr(r.src, "extern \"C\" int kl_run"),
		      "the functions the reply left alone are kept");
		unsigned helper = line_of(r.src, "float block_max("),
		         user = line_of(r.src, "softmax_rows(const");
		CHECK(helper && user && helper < user,
		      "the new helper goes before its first user (lines %u < %u)", helper, user);
		CHECK(line_of(r.src, "float warp_max(") < helper,
		      "and after the function it calls");
		CHECK(strstr(r.src, "#define BLOCK 512") && !strstr(r.src, "#define BLOCK 256"),
		      "the changed #define replaces the old one");
		CHECK(line_of(r.src, "#include <cuda_fp16.h>") ==
		          line_of(r.src, "#include \"kloop.h\"") + 1,
		      "the new #include goes after the last one");
		CHECK(!strstr(r.src, "import torch"), "the python block is ignored");
		CHECK(parses(r.src, r.len), "the result parses");
		CHECK(action(&r, "block_max", SPLICE_ADDED) &&
		          action(&r, "scale_rows", SPLICE_REPLACED) &&
		          action(&r, "softmax_rows", SPLICE_REPLACED) &&
		          action(&r, "BLOCK", SPLICE_REPLACED) &&
		          action(&r, "<cuda_fp16.h>", SPLICE_ADDED),
		      "the changes: block_max added; scale_rows, softmax_rows and BLOCK replaced; "
		      "<cuda_fp16.h> added");
	}
	splice_result_free(&r);

	/* a reply with the whole file: unchanged functions are reported as such */
	char *whole = xasprintf("```cuda\n%s```\n", src);
	CHECK(splice_reply(src, n, whole, strlen(whole), &r, err) == 0 && r.len == n &&
	          !memcmp(r.src, src, n) && action(&r, "kl_run", SPLICE_UNCHANGED),
	      "a reply repeating the file changes nothing (%s)", err);
	splice_result_free(&r);
	free(whole);

	/* a reply without fences that is all code */
	CHECK(splice_reply(src, n, new_ceil_div, strlen(new_ceil_div), &r, err) == 0 &&
	          action(&r, "ceil_div", SPLICE_ADDED) && parses(r.src, r.len),
	      "bare code without fences is spliced (%s)", err);
	splice_result_free(&r);

	const char *prose = "I would unroll the loop by four and use shuffles.";
	CHECK(splice_reply(src, n, prose, strlen(prose), &r, err) == -1 && strstr(err, "no code"),
	      "a reply with no code says so: %s", err);
	const char *py = "```python\nx = 1\n```\n";
	CHECK(splice_reply(src, n, py, strlen(py), &r, err) == -1 &&
	          strstr(err, "not C, C++ or CUDA (python)"),
	      "a reply with only python says so: %s", err);
	const char *broken =
	    "Try this:\n\n```cuda\n__global__ void scale_rows(float *y, float a, int n)\n{\n"
	    "\tint i = threadIdx.x;\n\tif (i < n)\n\t\ty[i] *= a\n}\n```\n";
	CHECK(splice_reply(src, n, broken, strlen(broken), &r, err) == -1 &&
	          strstr(err, "code block 1 does not parse") && strstr(err, "reply line 8") &&
	          strstr(err, "missing `;`"),
	      "code that does not parse names the block and the reply line: %s", err);
	const char *elided = "```cuda\n__global__ void scale_rows(float *y, float a, int n)\n{\n"
	                     "\t// ... rest of the kernel unchanged\n}\n```\n";
	CHECK(splice_reply(src, n, elided, strlen(elided), &r, err) == -1 &&
	          strstr(err, "leaves code out"),
	      "a function with `// ... rest unchanged` is refused: %s", err);
	const char *with_main =
	    "```cuda\n__global__ void scale_rows(float *y, float a, int n) { y[0] = a; }\n"
	    "int main() { return 0; }\n```\n";
	CHECK(splice_reply(src, n, with_main, strlen(with_main), &r, err) == 0 &&
	          action(&r, "main", SPLICE_SKIPPED) && !strstr(r.src, "int main"),
	      "a test main() in the reply is skipped (%s)", err);
	splice_result_free(&r);
	const char *unterminated =
	    "```cuda\n__global__ void scale_rows(float *y, float a, int n) { y[0] = a; }\n";
	CHECK(splice_reply(src, n, unterminated, strlen(unterminated), &r, err) == 0 &&
	          strstr(r.src, "y[0] = a;"),
	      "an unterminated fence runs to the end of the reply (%s)", err);
	splice_result_free(&r);
	free(src);

	/* a new kernel and a kl_run that launches it */
	src = slurp(FIX "inline_asm.cu", &n);
	const char *newk =
	    "```cuda\n"
	    "__global__ void copy_scalar(const float *src, float *dst, int n)\n"
	    "{\n\tint i = blockIdx.x * blockDim.x + threadIdx.x;\n\tif (i < n)\n\t\tdst[i] = "
	    "src[i];\n}\n\n"
	    "extern \"C\" int kl_run(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, "
	    "void *stream)\n"
	    "{\n\tint n = (int)in[0].shape[0];\n"
	    "\tcopy_scalar<<<(n + 255) / 256, 256, 0, (cudaStream_t)stream>>>((const float "
	    "*)in[0].data, (float *)out[0].data, n);\n"
	    "\treturn 0;\n}\n```\n";
	CHECK(splice_reply(src, n, newk, strlen(newk), &r, err) == 0,
	      "a reply with a new kernel splices (%s)", err);
	if (r.src) {
		unsigned k = line_of(r.src, "void copy_scalar("),
		         run = line_of(r.src, "int kl_run(");
		CHECK(k && run && k < run,
		      "the new kernel goes before kl_run, which launches it (%u < %u)", k, run);
		CHECK(strstr(r.src, "void copy_vec(") && occurs(r.src, "int kl_run(") == 1,
		      "the old kernel stays, kl_run is there once");
		CHECK(parses(r.src, r.len), "the result parses");
	}
	splice_result_free(&r);
	free(src);
}

static void test_crossover(void)
{
	size_t na;
	char *a = slurp(FIX "softmax_coop.cu", &na);
	const char *b = "#include <cuda_fp16.h>\n"
	                "#define VEC 4\n"
	                "struct Scale { float s; };\n"
	                "__device__ float mul(float x, Scale k) { return x * k.s; }\n"
	                "__global__ void scale_rows(float *y, float alpha, int n)\n"
	                "{\n"
	                "\tint i = (blockIdx.x * blockDim.x + threadIdx.x) * VEC;\n"
	                "\tScale k = {alpha};\n"
	                "\tfor (int v = 0; v < VEC; v++)\n"
	                "\t\tif (i + v < n)\n"
	                "\t\t\ty[i + v] = mul(y[i + v], k);\n"
	                "}\n"
	                "__global__ void unrelated(void) {}\n";
	struct splice_result r;
	char err[KL_ERRLEN] = "";
	CHECK(splice_crossover(a, na, b, strlen(b), "scale_rows", &r, err) == 0,
	      "crossover works (%s)", err);
	if (r.src) {
		CHECK(strstr(r.src, "y[i + v] = mul(y[i + v], k)") &&
		          !strstr(r.src, "y[i] *= alpha"),
		      "scale_rows now has parent B's body");
		CHECK(strstr(r.src, "__device__ float mul(float x, Scale k)") &&
		          line_of(r.src, "float mul(") < line_of(r.src, "void scale_rows("),
		      "the helper it calls comes along, before it");
		CHECK(strstr(r.src, "#define VEC 4") &&
		          strstr(r.src, "struct Scale { float s; };") &&
		          line_of(r.src, "struct Scale") < line_of(r.src, "float mul("),
		      "so do the macro and the struct it uses, before the functions");
		CHECK(strstr(r.src, "#include <cuda_fp16.h>"), "and B's include");
		CHECK(!strstr(r.src, "unrelated"), "what it does not use stays behind");
		CHECK(strstr(r.src, "softmax_rows(const float *x") &&
		          strstr(r.src, "#define BLOCK 256"),
		      "parent A's other functions and macros are kept");
		CHECK(parses(r.src, r.len), "the child parses");
	}
	splice_result_free(&r);
	CHECK(splice_crossover(a, na, b, strlen(b), "missing_fn", &r, err) == -1 &&
	          strstr(err, "no function named `missing_fn` in the second parent"),
	      "a function B does not have is an error: %s", err);
	/* a kernel A does not have is added before the function that launches it? none: at the end
	 */
	CHECK(splice_crossover(a, na, b, strlen(b), "unrelated", &r, err) == 0 &&
	          action(&r, "unrelated", SPLICE_ADDED) && parses(r.src, r.len) &&
	          line_of(r.src, "void unrelated") > line_of(r.src, "int kl_run"),
	      "a function new to A is added at the end when nothing uses it");
	splice_result_free(&r);
	free(a);
}

/* what a failed check shows: the result, else the error */
#define GOT(ok, r, err) (ok) ? "" : ": ", (ok) ? "" : (r).src ? (r).src : (err)

/* a crossover never lends a function without what its calls need: when the
 * callee's signature (a type, a macro's parameters) differs between the
 * parents, the callers of the first parent come from the second too, or the
 * crossover is refused naming the caller */
static void test_crossover_interface(void)
{
	const char *a = "#include \"kloop.h\"\n"
	                "struct Args { long n; };\n"
	                "#define AT(p, i) ((p)[i])\n"
	                "static void scale(float *y, long n)\n{\n"
	                "\tfor (long i = 0; i < n; i++)\n\t\tAT(y, i) *= 2;\n}\n"
	                "static long count(struct Args g) { return g.n; }\n"
	                "int kl_run(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, "
	                "void *s)\n{\n"
	                "\tstruct Args g = {in[0].shape[0]};\n"
	                "\tscale(out[0].data, count(g));\n\treturn 0;\n}\n";
	const char *b = "#include \"kloop.h\"\n"
	                "struct Args { long n; float k; };\n"
	                "#define AT(p, i, s) ((p)[(i) * (s)])\n"
	                "static void scale(float *y, long n, float k)\n{\n"
	                "\tfor (long i = 0; i < n; i++)\n\t\tAT(y, i, 1) *= k;\n}\n"
	                "static long count(struct Args g) { return g.n + 0 * (long)g.k; }\n"
	                "int kl_run(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, "
	                "void *s)\n{\n"
	                "\tstruct Args g = {in[0].shape[0], 2};\n"
	                "\tscale(out[0].data, count(g), g.k);\n\treturn 0;\n}\n";
	struct splice_result r;
	char err[KL_ERRLEN] = "";
	int ok = splice_crossover(a, strlen(a), b, strlen(b), "scale", &r, err) == 0 &&
	         action(&r, "scale", SPLICE_REPLACED) && action(&r, "kl_run", SPLICE_REPLACED) &&
	         strstr(r.src, "scale(out[0].data, count(g), g.k)") &&
	         !strstr(r.src, "scale(out[0].data, count(g));");
	CHECK(ok, "scale's signature differs: kl_run, which calls it, comes from B with it%s%s",
	      GOT(ok, r, err));
	ok = r.src && strstr(r.src, "#define AT(p, i, s)") && !strstr(r.src, "#define AT(p, i)") &&
	     strstr(r.src, "struct Args { long n; float k; };") &&
	     strstr(r.src, "return g.n + 0 * (long)g.k;") && occurs(r.src, "struct Args {") == 1;
	CHECK(ok,
	      "... so do the macro whose parameters differ, the struct B's kl_run uses (g.k) and "
	      "count, A's other user of that struct, each once%s%s",
	      GOT(ok, r, err));
	splice_result_free(&r);
	ok = splice_crossover(a, strlen(a), b, strlen(b), "kl_run", &r, err) == 0 &&
	     strstr(r.src, "static void scale(float *y, long n, float k)") &&
	     occurs(r.src, "static void scale(") == 1;
	CHECK(ok, "crossing kl_run takes B's scale, whose signature its call needs%s%s",
	      GOT(ok, r, err));
	splice_result_free(&r);
	/* a caller B does not have: no child */
	char *a2 =
	    xasprintf("%sstatic void twice(float *y, long n) { scale(y, n); scale(y, n); }\n", a);
	CHECK(splice_crossover(a2, strlen(a2), b, strlen(b), "scale", &r, err) == -1 &&
	          strstr(err, "`twice` of the first parent uses `scale`, which the second parent "
	                      "declares otherwise, and the second parent has no `twice` to bring "
	                      "along: the child would not compile"),
	      "a caller of A that B lacks: refused, naming it (%s)", err);
	free(a2);
	/* the same signature: A keeps its own callers, B's function alone comes */
	const char *b2 = "static void scale(float *y, long n)\n{\n"
	                 "\tfor (long i = 0; i < n; i++)\n\t\ty[i] += y[i];\n}\n";
	ok = splice_crossover(a, strlen(a), b2, strlen(b2), "scale", &r, err) == 0 &&
	     r.n_changes == 1 && action(&r, "scale", SPLICE_REPLACED) &&
	     strstr(r.src, "y[i] += y[i]") && strstr(r.src, "scale(out[0].data, count(g));");
	CHECK(ok, "the same signature: only the function changes%s%s", GOT(ok, r, err));
	splice_result_free(&r);
}

#define EXT_HEAD "#include <torch/extension.h>\n"
#define EXT_FWD "torch::Tensor forward(torch::Tensor x) { return x; }\n"
#define EXT_MOD "PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def(\"forward\", &forward); }\n"

/* what a splice into a PyTorch extension keeps (one registration block,
 * the functions it binds, no kl_run of its own), and what a kernel does
 * not take (a registration block, PyTorch's headers) */
static void test_extension_form(void)
{
	const char *ext = EXT_HEAD EXT_FWD EXT_MOD;
	struct splice_result r;
	char err[KL_ERRLEN] = "";
	static const struct {
		const char *zReply, *zWant, *zWhat;
	} refused[] = {
	    {"```cpp\nTORCH_LIBRARY(ns, m) { m.def(\"forward(Tensor x) -> Tensor\", &forward); "
	     "}\n```",
	     "the spliced source would register with PYBIND11_MODULE and TORCH_LIBRARY where the "
	     "source spliced into has PYBIND11_MODULE only: an extension registers its functions "
	     "one way, once",
	     "a TORCH_LIBRARY block beside the PYBIND11_MODULE"},
	    {"```cpp\nint kl_run(const kl_tensor *in, int a, kl_tensor *out, int b, void *s) "
	     "{ return 0; }\n```",
	     "the spliced source would define kl_run in a PyTorch extension, whose kl_run kloop's "
	     "ATen stand-in defines (it calls what PYBIND11_MODULE binds)",
	     "a kl_run of its own"},
	    {"```cpp\nPYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def(\"forward\", &fast); }\n```",
	     "the spliced source's PYBIND11_MODULE binds `fast`, which it neither defines nor "
	     "declares",
	     "a PYBIND11_MODULE binding a function nobody defines"},
	};
	for (size_t i = 0; i < sizeof refused / sizeof *refused; i++)
		CHECK(splice_reply(ext, strlen(ext), refused[i].zReply, strlen(refused[i].zReply),
		                   &r, err) == -1 &&
		          strstr(err, refused[i].zWant),
		      "an extension refuses %s: %s", refused[i].zWhat, err);
	const char *fast =
	    "```cpp\ntorch::Tensor fast(torch::Tensor x) { return x; }\n"
	    "PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def(\"forward\", &fast); }\n"
	    "```\n";
	int ok = splice_reply(ext, strlen(ext), fast, strlen(fast), &r, err) == 0 &&
	         occurs(r.src, "PYBIND11_MODULE") == 1 && strstr(r.src, "&fast);") &&
	         strstr(r.src, "#include <torch/extension.h>") &&
	         line_of(r.src, "torch::Tensor fast(") < line_of(r.src, "PYBIND11_MODULE");
	CHECK(ok,
	      "a new entry point with its binding: one PYBIND11_MODULE, binding it, the include "
	      "kept%s%s",
	      GOT(ok, r, err));
	splice_result_free(&r);
	const char *lib =
	    EXT_HEAD "#include <torch/library.h>\n"
	             "void out_fn(const torch::Tensor &x, torch::Tensor &y) {}\n"
	             "TORCH_LIBRARY(ns, m) { m.def(\"out_fn(Tensor x, Tensor(a!) y) -> "
	             "()\"); }\n"
	             "TORCH_LIBRARY_IMPL(ns, CPU, m) { m.impl(\"out_fn\", &out_fn); }\n";
	CHECK(splice_crossover(ext, strlen(ext), lib, strlen(lib), "TORCH_LIBRARY_IMPL", &r, err) ==
	              -1 &&
	          strstr(err, "would register with PYBIND11_MODULE and TORCH_LIBRARY_IMPL where"),
	      "crossing a TORCH_LIBRARY_IMPL into a PYBIND11_MODULE extension: refused (%s)", err);
	const char *kern = "#include \"kloop.h\"\n"
	                   "int kl_run(const kl_tensor *in, int a, kl_tensor *out, int b, void *s) "
	                   "{ return 0; }\n";
	CHECK(splice_crossover(kern, strlen(kern), ext, strlen(ext), "PYBIND11_MODULE", &r, err) ==
	              -1 &&
	          strstr(err,
	                 "the spliced source would have PYBIND11_MODULE, which makes a PyTorch "
	                 "extension of a source that is none"),
	      "a kernel takes no PYBIND11_MODULE (%s)", err);
	CHECK(splice_crossover(kern, strlen(kern), ext, strlen(ext), "forward", &r, err) == -1 &&
	          strstr(err, "the spliced source would include <torch/extension.h> (PyTorch's C++ "
	                      "API) in a source that is no PyTorch extension"),
	      "... nor PyTorch's headers with a function of an extension (%s)", err);
	CHECK(splice_crossover(ext, strlen(ext), kern, strlen(kern), "kl_run", &r, err) == -1 &&
	          strstr(err, "would define kl_run in a PyTorch extension"),
	      "an extension takes no kl_run from a kernel (%s)", err);
}

int main(void)
{
	test_find();
	test_replace();
	test_reply();
	test_crossover();
	test_crossover_interface();
	test_extension_form();
	syntax_shutdown();
	return check_done();
}
