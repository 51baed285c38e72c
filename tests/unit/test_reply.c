/*
 * test_reply.c - code blocks of an LLM reply to a candidate source: a whole
 * file is taken whole (the last one when the reply shows two), functions are
 * spliced into the parent, and replies without usable code (prose, Python,
 * code that does not parse, elided bodies) get a reason naming the block and
 * the reply line.  A PyTorch extension and a ```python ModelNew module are
 * whole candidates too, with their form; a ModelNew parent takes a whole
 * module only.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "reply.h"
#include "torchext.h"
#include "util.h"

static const char *parent =
    "#include <math.h>\n"
    "#include \"kloop.h\"\n"
    "\n"
    "static float row_max(const float *x, long n)\n"
    "{\n"
    "\tfloat m = x[0];\n"
    "\tfor (long i = 1; i < n; i++)\n"
    "\t\tm = fmaxf(m, x[i]);\n"
    "\treturn m;\n"
    "}\n"
    "\n"
    "int kl_run(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *s)\n"
    "{\n"
    "\t(void)n_in, (void)n_out, (void)s;\n"
    "\tconst float *x = in[0].data;\n"
    "\tfloat *y = out[0].data;\n"
    "\ty[0] = row_max(x, in[0].shape[0]);\n"
    "\treturn 0;\n"
    "}\n";

#define WHOLE_V2                                                                                   \
	"#include \"kloop.h\"\n"                                                                   \
	"int kl_run(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *s)\n"          \
	"{\n\t(void)in, (void)n_in, (void)n_out, (void)s;\n\t((float *)out[0].data)[0] = 2;\n"     \
	"\treturn 0;\n}\n"

static int convert(const char *reply, struct reply_code *r, char *err)
{
	return reply_code(parent, strlen(parent), reply, strlen(reply), r, err);
}

#define EXT                                                                                        \
	"#include <torch/extension.h>\n"                                                           \
	"torch::Tensor forward(torch::Tensor x) { return torch::empty_like(x); }\n"                \
	"PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def(\"forward\", &forward); }\n"
#define MODELNEW                                                                                   \
	"import torch\nfrom torch.utils.cpp_extension import load_inline\n"                        \
	"e = load_inline(name='e', cpp_sources='torch::Tensor f(torch::Tensor x);', "              \
	"functions=['f'])\nclass ModelNew(torch.nn.Module):\n"                                     \
	"    def forward(self, x):\n        return e.f(x)\n"

static const char *whole = "Here is the complete file:\n\n```c\n" WHOLE_V2 "```\n";

/* the field's forms (torchext.h): an extension, a ModelNew */
static void forms(void)
{
	char err[KL_ERRLEN] = "";
	struct reply_code r;
	const char *ext = "Here it is as an extension:\n```cpp\n" EXT "```\n";
	CHECK(convert(ext, &r, err) == 0 && r.whole && r.form == TORCHEXT_EXTENSION &&
	          !strcmp(r.zSource, EXT),
	      "a PyTorch extension block is taken whole, its form said (%s)", err);
	reply_code_free(&r);
	const char *mn = "```python\n" MODELNEW "```\n";
	CHECK(convert(mn, &r, err) == 0 && r.whole && r.form == TORCHEXT_MODELNEW &&
	          !strcmp(r.zSource, MODELNEW),
	      "a ```python ModelNew module is taken whole, its form said (%s)", err);
	reply_code_free(&r);
	CHECK(convert(whole, &r, err) == 0 && r.form == TORCHEXT_KERNEL,
	      "a kl_run file is a kernel");
	reply_code_free(&r);
	const char *fn =
	    "```cpp\nstatic float row_max(const float *x, long n)\n{\n\treturn x[0];\n}"
	    "\n```\n";
	CHECK(reply_code(MODELNEW, strlen(MODELNEW), fn, strlen(fn), &r, err) == -1 &&
	          strstr(err, "the parent is a KernelBench ModelNew module: reply with the whole "
	                      "new module in one ```python block"),
	      "a function for a ModelNew parent: refused, asking for the whole module (%s)", err);
	const char *splice = "```cpp\ntorch::Tensor forward(torch::Tensor x) { return x; }\n```\n";
	CHECK(reply_code(EXT, strlen(EXT), splice, strlen(splice), &r, err) == 0 && !r.whole &&
	          r.form == TORCHEXT_EXTENSION && strstr(r.zSource, "return x; }") &&
	          strstr(r.zSource, "PYBIND11_MODULE"),
	      "a function spliced into an extension parent keeps it an extension (%s)", err);
	reply_code_free(&r);
	const char *lib = "```cpp\nTORCH_LIBRARY(ns, m) { m.def(\"f(Tensor x) -> Tensor\", "
	                  "&forward); }\n```\n";
	CHECK(reply_code(EXT, strlen(EXT), lib, strlen(lib), &r, err) == -1 &&
	          strstr(err, "would register with PYBIND11_MODULE and TORCH_LIBRARY where the "
	                      "source spliced into has PYBIND11_MODULE only"),
	      "a TORCH_LIBRARY block for an extension parent with PYBIND11_MODULE: refused, not a "
	      "second registration (%s)",
	      err);
	const char *run = "```cpp\nint kl_run(const kl_tensor *in, int a, kl_tensor *out, int b, "
	                  "void *s) { return 0; }\n```\n";
	CHECK(reply_code(EXT, strlen(EXT), run, strlen(run), &r, err) == -1 &&
	          strstr(err, "would define kl_run in a PyTorch extension"),
	      "a kl_run for an extension parent: refused, the stand-in has it (%s)", err);
	const char *bind = "```cpp\nPYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def(\"forward\", "
	                   "&forward2); }\n```\n";
	CHECK(reply_code(EXT, strlen(EXT), bind, strlen(bind), &r, err) == -1 &&
	          strstr(err, "PYBIND11_MODULE binds `forward2`, which it neither defines nor "
	                      "declares"),
	      "a binding of a function neither the reply nor the parent defines: refused (%s)",
	      err);
	const char *mod = "```cpp\nPYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def(\"f\", "
	                  "&row_max); }\n```\n";
	CHECK(convert(mod, &r, err) == -1 &&
	          strstr(err,
	                 "the spliced source would have PYBIND11_MODULE, which makes a PyTorch "
	                 "extension of a source that is none"),
	      "a PYBIND11_MODULE for a kernel parent: refused (%s)", err);
}

int main(void)
{
	char err[KL_ERRLEN] = "";
	struct reply_code r;

	CHECK(convert(whole, &r, err) == 0 && r.whole && !strcmp(r.zSource, WHOLE_V2) &&
	          !strcmp(r.zChanges, "whole file") && r.nSource == strlen(WHOLE_V2),
	      "a whole file (includes and kl_run) is taken as it is (%s)", err);
	CHECK(r.zSource && !strstr(r.zSource, "row_max"), "nothing of the parent is kept");
	reply_code_free(&r);

	const char *two =
	    "Before:\n```c\n#include \"kloop.h\"\nint kl_run(const kl_tensor *in, int a, "
	    "kl_tensor *out, int b, void *s) { return 1; }\n```\nAfter:\n```c\n" WHOLE_V2 "```\n";
	CHECK(convert(two, &r, err) == 0 && r.whole && !strcmp(r.zSource, WHOLE_V2),
	      "with two whole files the last one is taken (%s)", err);
	reply_code_free(&r);

	const char *one = "Replace row_max with a four-way unrolled version:\n\n```c\n"
	                  "static float row_max(const float *x, long n)\n{\n"
	                  "\tfloat m = x[0];\n\tfor (long i = 1; i < n; i++)\n"
	                  "\t\tm = m > x[i] ? m : x[i];\n\treturn m;\n}\n```\n";
	CHECK(convert(one, &r, err) == 0 && !r.whole && strstr(r.zSource, "m > x[i] ? m : x[i]") &&
	          !strstr(r.zSource, "fmaxf") && strstr(r.zSource, "int kl_run(") &&
	          !strcmp(r.zChanges, "replaced row_max"),
	      "one function is spliced into the parent by name (%s; %s)", err,
	      r.zChanges ? r.zChanges : "");
	reply_code_free(&r);

	const char *add =
	    "```cpp\nstatic float row_sum(const float *x, long n)\n{\n\tfloat s = 0;\n"
	    "\tfor (long i = 0; i < n; i++)\n\t\ts += x[i];\n\treturn s;\n}\n\n"
	    "int kl_run(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void "
	    "*s)\n{\n\t(void)n_in, (void)n_out, (void)s;\n"
	    "\t((float *)out[0].data)[0] = row_sum(in[0].data, in[0].shape[0]);\n"
	    "\treturn 0;\n}\n```\n";
	CHECK(convert(add, &r, err) == 0 && !r.whole && strstr(r.zSource, "row_sum(in[0].data") &&
	          strstr(r.zSource, "static float row_max(") &&
	          strstr(r.zChanges, "replaced kl_run") && strstr(r.zChanges, "added row_sum"),
	      "a new helper is added and kl_run replaced, the rest kept (%s)",
	      r.zChanges ? r.zChanges : err);
	reply_code_free(&r);

	const char *prose = "You could unroll the loop by four and use a tree reduction.";
	CHECK(convert(prose, &r, err) == -1 && strstr(err, "no code"),
	      "a reply with no code says so: %s", err);
	CHECK(convert("```python\nimport torch\n```\n", &r, err) == -1 && strstr(err, "python"),
	      "a reply with only Python says so: %s", err);

	const char *bad = "Fixed:\n\n```c\nstatic float row_max(const float *x, long n)\n{\n"
	                  "\tfloat m = x[0]\n\treturn m;\n}\n```\n";
	CHECK(convert(bad, &r, err) == -1 && strstr(err, "does not parse") &&
	          strstr(err, "reply line"),
	      "a function that does not parse names the reply line: %s", err);

	const char *badWhole = "```c\n#include \"kloop.h\"\nint kl_run(const kl_tensor *in, int a, "
	                       "kl_tensor *out, int b, void *s)\n{\n\treturn (1 + ;\n}\n```\n";
	CHECK(convert(badWhole, &r, err) == -1 && strstr(err, "code block 1 does not parse") &&
	          strstr(err, "reply line 5"),
	      "a whole file that does not parse names the block and the reply line: %s", err);

	const char *elided = "```c\nint kl_run(const kl_tensor *in, int a, kl_tensor *out, int b, "
	                     "void *s)\n{\n\t// ... rest unchanged\n}\n```\n";
	CHECK(convert(elided, &r, err) == -1 && strstr(err, "leaves code out"),
	      "a function with its body elided is refused: %s", err);

	const char *elidedWhole =
	    "Intro.\n```\nsome text\n```\n\n```c\n#include \"kloop.h\"\n"
	    "static void helper(void)\n{\n\t/* ... same as before */\n}\n"
	    "int kl_run(const kl_tensor *in, int a, kl_tensor *out, int b, void "
	    "*s)\n{\n\thelper();\n\treturn 0;\n}\n```\n";
	CHECK(convert(elidedWhole, &r, err) == -1 && strstr(err, "code block 2 (reply line 6)") &&
	          strstr(err, "leaves code out"),
	      "a whole file that elides code is refused, naming its block and line: %s", err);

	CHECK(convert(WHOLE_V2, &r, err) == 0 && r.whole && !strcmp(r.zSource, WHOLE_V2),
	      "a whole file without fences is taken (%s)", err);
	reply_code_free(&r);
	const char *bareBad =
	    "#include \"kloop.h\"\nint kl_run(const kl_tensor *in, int a, kl_tensor "
	    "*out, int b, void *s) { return 0 }\n";
	CHECK(convert(bareBad, &r, err) == -1 && strstr(err, "the reply does not parse: line 2"),
	      "a whole file without fences that does not parse says where: %s", err);
	forms();
	return check_done();
}
