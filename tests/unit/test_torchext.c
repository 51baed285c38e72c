/*
 * test_torchext.c - the field's candidates (issue 38): a candidate's form
 * and language from its name and text; a ModelNew module read (nothing of
 * it run) into one source, or refused with its line; the words for what
 * the ATen stand-in lacks in gcc's, clang's and nvcc's logs; the verdict's
 * form line; and the stand-in itself: extensions of tests/fixtures/torchext
 * compiled by the compiler service and their kl_run called here on kloop's
 * tensors (an output written in place or copied and said so, an out
 * parameter, a TORCH_CHECK's message, a ModelNew passing its parameters and
 * a number, an extension's number parameters taking the problem's
 * get_init_inputs()); the search's function crossover of two extensions,
 * every child compiled and run; and the CUDA forms compiled for sm_90a
 * where nvcc is.
 */
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "compile.h"
#include "compiled.h"
#include "funcdiff.h"
#include "kloop.h"
#include "slurp.h"
#include "splice.h"
#include "torchext.h"
#include "util.h"

#define FX "tests/fixtures/torchext/"

/* fixture zName of tests/fixtures/torchext (slurp.h) */
static char *fixture(const char *zName)
{
	char *p = xasprintf(FX "%s", zName), *z = slurp(p, NULL);
	free(p);
	return z;
}

/* the kinds of an entry point's parameters, from its definition or a
 * declaration: what a number parameter takes, and what export passes */
static void entry_params(void)
{
	static const struct {
		const char *zSrc, *zEntry, *zWant; /* zWant NULL: not found */
	} cases[] = {
	    {"torch::Tensor forward(const torch::Tensor &x, int64_t dim, double s) { return x; }",
	     "forward", "tnn"},
	    {"// forward(x) in a comment\n/* forward(int y); */\nstd::vector<torch::Tensor> "
	     "forward(torch::Tensor a,\n  c10::optional<torch::Tensor> b, bool f = true)\n{}",
	     "forward", "ttn"},
	    {"torch::Tensor f(torch::Tensor, int);\nvoid g() { auto y = f(x, 2); }", "f", "tn"},
	    {"void g() { f(x, 2); }", "f", NULL},
	    {"torch::Tensor f();\n", "f", ""},
	    {"int f(void) { return 0; }", "f", ""},
	    {"m.def(\"f\", &f); x.f(a, b);", "f", NULL},
	    {"torch::Tensor f(torch::Tensor x);\ntorch::Tensor f(torch::Tensor x, float k) {}", "f",
	     "tn"},
	    {"torch::Tensor softmax_fwd(const torch::Tensor &x, double t) {}\n"
	     "PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def(\"forward\", &softmax_fwd, "
	     "\"(forward)\"); }",
	     "forward", "tn"},
	    {"namespace k { void g(at::Tensor a, at::Tensor b) {} }\nTORCH_LIBRARY(ns, m) { "
	     "m.def(\"g2(Tensor a, Tensor b) -> ()\", TORCH_FN(k::g)); }",
	     "g2", "tt"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		char k[64] = "?";
		int rc = torchext_entry_params(cases[i].zSrc, strlen(cases[i].zSrc),
		                               cases[i].zEntry, k, sizeof k);
		CHECK(cases[i].zWant ? rc == 0 && !strcmp(k, cases[i].zWant) : rc < 0,
		      "%s's parameters in case %zu: %s (got rc %d, '%s')", cases[i].zEntry, i + 1,
		      cases[i].zWant ? cases[i].zWant : "not declared", rc, k);
	}
}

/* an extension as CUDA-L2 releases one: functions of tensors, no module */
static void bare_forms(void)
{
	const char *one =
	    "#include <torch/extension.h>\n#define CHECK(T, S) if ((T).size(0) != (S)) {}\n"
	    "static int helper(int x) { return x; }\n"
	    "void hgemm(torch::Tensor a, torch::Tensor b, torch::Tensor c) { CHECK(a, 1) }\n";
	const char *two = "#include <torch/extension.h>\nvoid f(torch::Tensor a) {}\n"
	                  "torch::Tensor g(torch::Tensor a, int64_t k) { return a; }\n";
	const char *fwd = "#include <torch/extension.h>\nvoid f(torch::Tensor a) {}\n"
	                  "torch::Tensor forward(torch::Tensor a) { return a; }\n";
	const char *kern = "#include <torch/extension.h>\n#include \"kloop.h\"\n"
	                   "void f(torch::Tensor a) {}\nint kl_run(const kl_tensor *i, int n, "
	                   "kl_tensor *o, int m, void *s) { return 0; }\n";
	const char *none = "#include <torch/extension.h>\nstatic int f(int a) { return a; }\n";
	char e[256];
	CHECK(torchext_form_of("h.cu", one, strlen(one)) == TORCHEXT_EXTENSION &&
	          torchext_bare_entry(one, strlen(one), e, sizeof e) == 1 && !strcmp(e, "hgemm"),
	      "a torch include and one function of tensors, no PYBIND11_MODULE: an extension "
	      "whose entry point is that function (%s)",
	      e);
	CHECK(torchext_bare_entry(two, strlen(two), e, sizeof e) == -1 && !strcmp(e, "f, g"),
	      "... two such functions, none named forward: which to call is unknown, both named "
	      "(%s)",
	      e);
	CHECK(torchext_bare_entry(fwd, strlen(fwd), e, sizeof e) == 1 && !strcmp(e, "forward"),
	      "... forward among them: forward (%s)", e);
	CHECK(torchext_form_of("k.cpp", kern, strlen(kern)) == TORCHEXT_KERNEL &&
	          torchext_form_of("n.cpp", none, strlen(none)) == TORCHEXT_KERNEL,
	      "a file that defines kl_run, or no function of tensors, is no bare extension");
	struct task t;
	memset(&t, 0, sizeof t);
	size_t len;
	char *src = torchext_with_init(one, strlen(one), &t, "h.cu", &len);
	CHECK(strstr(src,
	             "PYBIND11_MODULE(TORCH_EXTENSION_NAME, m)\n{\n\tm.def(\"hgemm\", &hgemm);") &&
	          strstr(src, "#line 1 \"h.cu: kloop's module for it"),
	      "kloop writes its module, as load_inline's functions= would (%s)", src + strlen(one));
	free(src);
}

static void forms(void)
{
	const char *ext = "#include <torch/extension.h>\ntorch::Tensor f(torch::Tensor x);\n"
	                  "PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def(\"f\", &f); }\n";
	const char *lib = "#include <ATen/ATen.h>\nTORCH_LIBRARY(ns, m) { m.def(\"g(Tensor x) -> "
	                  "Tensor\"); m.impl(\"g\", &g); }\n";
	const char *kern = "#include \"kloop.h\"\nint kl_run(void);\n";
	const char *cu = "#include <torch/extension.h>\n__global__ void k() {}\n"
	                 "PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {}\n";
	CHECK(torchext_form_of("e.cpp", ext, strlen(ext)) == TORCHEXT_EXTENSION &&
	          torchext_form_of("l.cc", lib, strlen(lib)) == TORCHEXT_EXTENSION,
	      "a torch include and PYBIND11_MODULE or TORCH_LIBRARY make an extension");
	CHECK(torchext_form_of("k.c", kern, strlen(kern)) == TORCHEXT_KERNEL &&
	          torchext_form_of("x.cpp", "PYBIND11_MODULE", 15) == TORCHEXT_KERNEL,
	      "a kl_run file is a kernel, and so is PYBIND11_MODULE without a torch include");
	CHECK(torchext_form_of("dir/m.py", "", 0) == TORCHEXT_MODELNEW, "a .py is a ModelNew");
	CHECK(torchext_lang_of("e.cpp", ext, strlen(ext)) == LANG_CPP &&
	          torchext_lang_of("e.cpp", cu, strlen(cu)) == LANG_CUDA &&
	          torchext_lang_of("e.cu", ext, strlen(ext)) == LANG_CUDA &&
	          torchext_lang_of("k.c", kern, strlen(kern)) == LANG_C &&
	          torchext_lang_of("m.py", "__global__", 10) == LANG_CUDA &&
	          torchext_lang_of("m.py", "x", 1) == LANG_CPP &&
	          torchext_lang_of("r.txt", kern, strlen(kern)) < 0,
	      "the language: a .cu, or __global__ kernels, make CUDA; else C++ (C for .c kernels)");
	char *n1 = torchext_compile_name("a/m.py", LANG_CUDA),
	     *n2 = torchext_compile_name("e.cpp", LANG_CUDA),
	     *n3 = torchext_compile_name("e.cpp", LANG_CPP);
	CHECK(!strcmp(n1, "m.cu") && !strcmp(n2, "e.cu") && !strcmp(n3, "e.cpp"),
	      "compiled as m.cu, e.cu, e.cpp (got %s %s %s)", n1, n2, n3);
	free(n1), free(n2), free(n3);
	CHECK(torchext_known_name("m.py") && torchext_known_name("k.cu") &&
	          !torchext_known_name("README.md"),
	      ".py is a candidate's name, README.md is not");
	char e[64];
	torchext_entry_of(ext, strlen(ext), e, sizeof e);
	CHECK(!strcmp(e, "f"), "the entry point is the one m.def names (%s)", e);
	const char *two = "m.def(\"a\", &a); m.def(\"forward\", &b);";
	torchext_entry_of(two, strlen(two), e, sizeof e);
	CHECK(!strcmp(e, "forward"), "... \"forward\" when one is so named (%s)", e);
	torchext_entry_of(lib, strlen(lib), e, sizeof e);
	CHECK(!strcmp(e, "g"), "... a schema's name (%s)", e);
	entry_params();
	bare_forms();
}

static void diagnose(void)
{
	char w[1200];
	const char *gcc = "e.cpp: In function 'at::Tensor f(at::Tensor)':\n"
	                  "e.cpp:5:56: error: \xe2\x80\x98matmul\xe2\x80\x99 is not a member of "
	                  "\xe2\x80\x98torch\xe2\x80\x99\n"
	                  "e.cpp:6:9: error: 'class at::Tensor' has no member named 'add_'\n"
	                  "e.cpp:7:1: error: 'foo' was not declared in this scope\n";
	CHECK(torchext_diagnose("e.cpp", gcc, w, sizeof w) &&
	          strstr(w, "e.cpp uses torch::matmul and at::Tensor::add_, which kloop's ATen "
	                    "stand-in (include/kloop_torch.h) does not provide") &&
	          !strstr(w, "foo") && strstr(w, "compute them in the extension's own code"),
	      "gcc's words (typographic quotes too): the names the stand-in lacks (%s)", w);
	const char *nvcc =
	    "e.cu(9): error: namespace \"at::cuda\" has no member \"getCurrentBlasHandle\"\n"
	    "e.cu(12): error: identifier \"AT_DISPATCH_V2\" is undefined\n";
	CHECK(torchext_diagnose("e.cu", nvcc, w, sizeof w) &&
	          strstr(w, "uses at::cuda::getCurrentBlasHandle and AT_DISPATCH_V2, which"),
	      "nvcc's words (%s)", w);
	const char *clang = "e.cpp:3:8: error: no member named 'relu' in namespace 'torch'\n";
	CHECK(torchext_diagnose("e.cpp", clang, w, sizeof w) && strstr(w, "uses torch::relu, "),
	      "clang's words (%s)", w);
	const char *hdr = "e.cpp:2:10: fatal error: torch/nn/functional.h: No such file or "
	                  "directory\n";
	CHECK(torchext_diagnose("e.cpp", hdr, w, sizeof w) &&
	          strstr(w, "uses <torch/nn/functional.h>"),
	      "a header it lacks (%s)", w);
	CHECK(!torchext_diagnose("e.cpp", "e.cpp:1:1: error: 'x' was not declared\n", w, sizeof w),
	      "an error of the code's own is not the stand-in's");
	/* the names alone: what a build against PyTorch's own headers is for */
	CHECK(torchext_missing(gcc, w, sizeof w) == 2 &&
	          !strcmp(w, "torch::matmul and at::Tensor::add_"),
	      "the names the stand-in lacks, for the verdict of a build against PyTorch's (%s)", w);
	CHECK(torchext_missing("e.cpp:1:1: error: 'x' was not declared\n", w, sizeof w) == 0,
	      "... none in an error of the code's own: no second build");
}

/* a task whose inputs are named az[0..n) (the names borrowed) */
static struct task named(char **az, int n)
{
	struct task t;
	memset(&t, 0, sizeof t);
	for (int i = 0; i < n; i++)
		t.aIn[i].zName = az[i];
	t.nIn = n;
	return t;
}

/* a ModelNew whose forward passes self.X set from __init__'s parameter:
 * the value the problem's get_init_inputs() gives it (by position, or by
 * name for a dict), else the parameter's default; refused, saying why,
 * where the problem gives none or no number */
static void modelnew_init(struct task *t)
{
	char err[KL_ERRLEN];
	struct torchext_src ts;
	const char *initarg =
	    "from torch.utils.cpp_extension import load_inline\n"
	    "e = load_inline(name='e', cpp_sources='torch::Tensor f(torch::Tensor x, int d, "
	    "double s, bool b);',\n"
	    "                functions=['f'])\n"
	    "class ModelNew:\n"
	    "    def __init__(self, dim, scale, flag=True):\n"
	    "        self.dim = dim\n"
	    "        self.scale = scale\n"
	    "        self.flag = flag\n"
	    "    def forward(self, x):\n"
	    "        return e.f(x, self.dim, self.scale, self.flag)\n";
	size_t n = strlen(initarg);
	t->aInit[0] = (struct task_init){"dim", TASK_INIT_INT, 1, 0, "int"};
	t->aInit[1] = (struct task_init){"scale", TASK_INIT_FLOAT, 0, 0.5, "float"};
	t->nInit = 2;
	int rc = torchext_modelnew("python3", "d.py", initarg, n, t, &ts, err);
	CHECK(rc == 0 && strstr(ts.zSource, "{::kl_torch::ARG_INPUT, 0, 0}, {::kl_torch::ARG_INT, "
	                                    "1LL, 0}, {::kl_torch::ARG_FLOAT, 0, 0.5}, "
	                                    "{::kl_torch::ARG_BOOL, 1, 0}"),
	      "self.dim, self.scale set from __init__'s parameters: get_init_inputs()'s values "
	      "by position (1, 0.5); self.flag its default True (%s)",
	      rc ? err : "");
	if (!rc)
		torchext_src_free(&ts);
	/* a dict: by name, whatever the order */
	t->aInit[0] = (struct task_init){"scale", TASK_INIT_FLOAT, 0, 0.25, "float"};
	t->aInit[1] = (struct task_init){"dim", TASK_INIT_INT, -1, 0, "int"};
	t->aInit[2] = (struct task_init){"flag", TASK_INIT_BOOL, 0, 0, "bool"};
	t->nInit = 3;
	t->bInitByName = 1;
	rc = torchext_modelnew("python3", "d.py", initarg, n, t, &ts, err);
	CHECK(rc == 0 && strstr(ts.zSource, "{::kl_torch::ARG_INT, -1LL, 0}, "
	                                    "{::kl_torch::ARG_FLOAT, 0, 0.25}, "
	                                    "{::kl_torch::ARG_BOOL, 0, 0}"),
	      "get_init_inputs() as a dict: each value by its name (%s)", rc ? err : "");
	if (!rc)
		torchext_src_free(&ts);
	t->bInitByName = 0;
	t->nInit = 1;
	rc = torchext_modelnew("python3", "d.py", initarg, n, t, &ts, err);
	CHECK(rc < 0 && strstr(err, "d.py:10: forward passes self.scale, which __init__ sets from "
	                            "its parameter scale; the problem's get_init_inputs() gives 1 "
	                            "value, none at position 2"),
	      "a parameter get_init_inputs() leaves, without a default: refused, saying so (%s)",
	      err);
	t->aInit[0] = (struct task_init){"dim", TASK_INIT_OTHER, 0, 0, "tuple"};
	t->aInit[1] = (struct task_init){"scale", TASK_INIT_FLOAT, 0, 0.5, "float"};
	t->nInit = 2;
	rc = torchext_modelnew("python3", "d.py", initarg, n, t, &ts, err);
	CHECK(rc < 0 && strstr(err, "forward passes self.dim, which __init__ sets from its "
	                            "parameter dim; the problem's get_init_inputs() gives it a "
	                            "tuple: kloop passes numbers"),
	      "a value that is no number: refused, naming its type (%s)", err);
	t->nInit = 0;
}

static void modelnew(void)
{
	char err[KL_ERRLEN];
	struct torchext_src ts;
	char *in[] = {"x", "weight", "bias"};
	struct task t3 = named(in, 3), t1 = named(in, 1), t0 = named(in, 0);
	char *z = fixture("modelnew_layernorm.py");
	int rc =
	    torchext_modelnew("python3", FX "modelnew_layernorm.py", z, strlen(z), &t3, &ts, err);
	CHECK(rc == 0 && ts.lang == LANG_CPP && !strcmp(ts.zName, "modelnew_layernorm.cpp") &&
	          !strcmp(ts.zEntry, "layer_norm_cpu") &&
	          strstr(ts.zSource, "#line 8 \"modelnew_layernorm.py\"") &&
	          strstr(ts.zSource, "m.def(\"layer_norm_cpu\", "
	                             "torch::wrap_pybind_function(layer_norm_cpu)") &&
	          strstr(ts.zSource,
	                 "{::kl_torch::ARG_INPUT, 0, 0}, {::kl_torch::ARG_INPUT, 1, "
	                 "0}, {::kl_torch::ARG_INPUT, 2, 0}, {::kl_torch::ARG_FLOAT, 0, "
	                 "1.0000000000000001e-05}"),
	      "a ModelNew: its sources with their module lines, the bindings, forward's call "
	      "(x, self.weight, self.bias, 1e-5) as inputs 0, 1, 2 and a number (%s)",
	      rc ? err : "");
	if (!rc)
		torchext_src_free(&ts);
	char *wrong[] = {"x", "gamma", "beta"};
	struct task tw = named(wrong, 3);
	rc = torchext_modelnew("python3", "modelnew_layernorm.py", z, strlen(z), &tw, &ts, err);
	CHECK(rc < 0 &&
	          strstr(err, "modelnew_layernorm.py:44: forward passes self.weight, which is "
	                      "none of the problem's inputs (x, gamma, beta)"),
	      "self.NAME that is none of the problem's inputs: refused, naming them (%s)", err);
	rc = torchext_modelnew("python3", "modelnew_layernorm.py", z, strlen(z), &t0, &ts, err);
	CHECK(rc < 0 && strstr(err, "forward takes 1 parameters, but the problem has 0 inputs"),
	      "more forward parameters than inputs: refused (%s)", err);
	free(z);
	struct {
		const char *zFile, *zWant;
	} refusals[] = {
	    {"modelnew_ops.py", "modelnew_ops.py:13: forward does more than return mod.fn(...): `x "
	                        "= torch.softmax(x, dim=-1)`. kloop runs a ModelNew whose forward "
	                        "is one call"},
	    {"modelnew_none.py", "modelnew_none.py: defines no class ModelNew"},
	    {"modelnew_import.py", "modelnew_import.py:4: imports numpy: a ModelNew kloop takes "
	                           "imports only torch"},
	    {"modelnew_fstring.py", "modelnew_fstring.py:8: cuda_sources is cuda_src, an f-string: "
	                            "kloop reads plain string literals"},
	};
	for (size_t i = 0; i < sizeof refusals / sizeof *refusals; i++) {
		z = fixture(refusals[i].zFile);
		rc = torchext_modelnew("python3", refusals[i].zFile, z, strlen(z), &t1, &ts, err);
		CHECK(rc < 0 && strstr(err, refusals[i].zWant), "%s refused: %s (got: %s)",
		      refusals[i].zFile, refusals[i].zWant, rc ? err : "accepted");
		free(z);
	}
	/* what the exploits' ModelNew modules do at import never runs, and the
	 * notes say so; an inherited forward is refused with why */
	z = fixture("../exploits/kb_monkeypatch.py");
	rc = torchext_modelnew("python3", "kb_monkeypatch.py", z, strlen(z), &t1, &ts, err);
	CHECK(rc == 0 && strstr(ts.zNotes, "the module's code at line 13 "
	                                   "(`torch.cuda.Event.elapsed_time = lambda self, end: "
	                                   "0.001`) and 2 more statements never ran: kloop reads "
	                                   "the module, it runs none of it"),
	      "a monkeypatch at import: read, and noted as never run (%s)", rc ? err : ts.zNotes);
	if (!rc)
		torchext_src_free(&ts);
	free(z);
	z = fixture("../exploits/kb_inherit.py");
	rc = torchext_modelnew("python3", "kb_inherit.py", z, strlen(z), &t1, &ts, err);
	CHECK(rc < 0 && strstr(err, "kb_inherit.py:18: ModelNew has no forward of its own: the one "
	                            "it inherits from Model is PyTorch code, which kloop does not "
	                            "run"),
	      "ModelNew(Model) with no forward: refused, saying why (%s)", rc ? err : "accepted");
	free(z);
	const char *noparse = "class ModelNew(:\n";
	rc = torchext_modelnew("python3", "bad.py", noparse, strlen(noparse), &t1, &ts, err);
	CHECK(rc < 0 && strstr(err, "bad.py:1: the module does not parse"),
	      "a module that does not parse: its line (%s)", err);
	modelnew_init(&t1);
	rc = torchext_modelnew("/nonexistent/python3", "m.py", "x", 1, &t1, &ts, err);
	CHECK(rc < 0 && strstr(err, "kloop's reader of ModelNew modules (/nonexistent/python3"),
	      "no Python: said (%s)", err);
}

static void note_line(void)
{
	char w[1200];
	char *outs[] = {"y", "z"};
	struct torchext_note n = {TORCHEXT_EXTENSION, 0, "forward", 2, "", "", ""};
	cJSON *o = torchext_note_json(&n, outs, 2);
	CHECK(torchext_note_line(o, w, sizeof w) == 0 &&
	          strstr(w, "a PyTorch extension (C++), entry point forward, on kloop's ATen "
	                    "stand-in; output z copied from the tensor it returned (the copy is "
	                    "in its time"),
	      "the verdict's form line names the output copied (%s)", w);
	cJSON_Delete(o);
	struct torchext_note m = {TORCHEXT_MODELNEW, 1, "softmax_cuda", 0, "", "", ""};
	o = torchext_note_json(&m, outs, 2);
	CHECK(torchext_note_line(o, w, sizeof w) == 0 &&
	          !strcmp(w, "a KernelBench ModelNew (its load_inline sources as CUDA), forward "
	                     "calls softmax_cuda, on kloop's ATen stand-in"),
	      "... and a ModelNew's (%s)", w);
	cJSON_Delete(o);
	struct torchext_note r = {
	    TORCHEXT_EXTENSION, 0, "forward", 1, "", "PyTorch 2.11.0 of python3 (/t)",
	    "torch::softmax"};
	o = torchext_note_json(&r, outs, 2);
	CHECK(torchext_note_line(o, w, sizeof w) == 0 &&
	          !strcmp(w, "a PyTorch extension (C++), entry point forward, built against "
	                     "PyTorch 2.11.0 of python3 (/t) (it uses torch::softmax, which "
	                     "kloop's ATen stand-in lacks); output y copied from the tensor it "
	                     "returned (the copy is in its time: PyTorch allocates what it "
	                     "returns, which kloop cannot point at its output)") &&
	          !strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(o, "via")), "pytorch"),
	      "... and one built against PyTorch's own headers: which, why, the copy (%s)", w);
	cJSON_Delete(o);
}

/* ---- the stand-in, compiled and called here ---- */

typedef int (*run_fn)(const kl_tensor *, int, kl_tensor *, int, void *);

struct lib {
	void *dl;
	run_fn run;
	const char *zErr;
	const uint32_t *pCopied;
};

/* fixture zName compiled and loaded (0), or -1 */
static int load(struct loop *l, struct compiler *c, const char *zName, const char *zSrc,
                struct lib *lb)
{
	struct compiled g = {0};
	char *z = zSrc ? xstrdup(zSrc) : fixture(zName);
	compiled_check(l, c, z, zName, 1, &g);
	free(z);
	memset(lb, 0, sizeof *lb);
	lb->dl = g.ok ? dlopen(g.zSo, RTLD_NOW | RTLD_LOCAL) : NULL;
	if (lb->dl) {
		lb->run = (run_fn)(uintptr_t)dlsym(lb->dl, "kl_run");
		lb->zErr = dlsym(lb->dl, "kl_run_error");
		lb->pCopied = dlsym(lb->dl, "kl_run_copied");
	}
	CHECK(lb->run && lb->zErr && lb->pCopied,
	      "%s compiles against the stand-in and defines kl_run, kl_run_error, "
	      "kl_run_copied%s%.300s",
	      zName, g.ok ? "" : ": ", g.ok ? "" : g.zLog);
	compiled_free(&g);
	return lb->run ? 0 : -1;
}

/* row softmax of x[r][c] into y */
static void softmax_ref(const float *x, float *y, int r, int c)
{
	for (int i = 0; i < r; i++) {
		float m = x[i * c], s = 0;
		for (int j = 1; j < c; j++)
			m = fmaxf(m, x[i * c + j]);
		for (int j = 0; j < c; j++)
			s += (y[i * c + j] = expf(x[i * c + j] - m));
		for (int j = 0; j < c; j++)
			y[i * c + j] /= s;
	}
}

static double max_diff(const float *a, const float *b, int n)
{
	double d = 0;
	for (int i = 0; i < n; i++)
		d = fmax(d, fabs((double)a[i] - b[i]));
	return d;
}

/* scaled_softmax.cpp (forward(x, int64_t dim, double scale)) compiled for
 * a task whose get_init_inputs() gives v (n of them) and called on x[r][c];
 * kl_run's status, the words in zErr (n bytes), the output in y */
static int run_scaled(struct loop *l, struct compiler *c, const struct task_init *v, int n,
                      float *x, float *y, int r, int cols, char *zErr, size_t nErr)
{
	struct task t;
	memset(&t, 0, sizeof t);
	memcpy(t.aInit, v, (size_t)n * sizeof *v);
	t.nInit = n;
	char *z = fixture("scaled_softmax.cpp");
	size_t len;
	char *src = torchext_with_init(z, strlen(z), &t, "scaled_softmax.cpp", &len);
	free(z);
	struct lib lb;
	int rc = -1;
	if (strlen(src) == len && load(l, c, "scaled_softmax.cpp", src, &lb) == 0) {
		kl_tensor in = {x, KL_F32, 2, {r, cols}}, out = {y, KL_F32, 2, {r, cols}};
		rc = lb.run(&in, 1, &out, 1, NULL);
		snprintf(zErr, nErr, "%s", lb.zErr);
		dlclose(lb.dl);
	}
	free(src);
	return rc;
}

/* an extension's number parameters take the problem's get_init_inputs()
 * in order, from the table kloop appends to its source */
static void standin_init(struct loop *l, struct compiler *c, float *x, int r, int cols)
{
	float y[64], want[64], xs[64];
	char w[KL_RUN_ERROR_MAX];
	for (int i = 0; i < r * cols; i++)
		xs[i] = x[i] * 0.5f;
	softmax_ref(xs, want, r, cols);
	struct task_init v[2] = {{"dim", TASK_INIT_INT, 1, 0, "int"},
	                         {"scale", TASK_INIT_FLOAT, 0, 0.5, "float"}};
	int rc = run_scaled(l, c, v, 2, x, y, r, cols, w, sizeof w);
	CHECK(rc == 0 && max_diff(y, want, r * cols) < 1e-6,
	      "scaled_softmax.cpp: forward(x, dim, scale) takes get_init_inputs()'s dim = 1 and "
	      "scale = 0.5 (rc %d: %s)",
	      rc, w);
	rc = run_scaled(l, c, v, 0, x, y, r, cols, w, sizeof w);
	CHECK(rc == 1 && strstr(w, "parameter 2 of forward is an int64_t: kloop gives an "
	                           "extension's entry point the task's tensors only (inputs, then "
	                           "outputs), and numbers from the problem's get_init_inputs(), "
	                           "which this task has none of"),
	      "... a task without get_init_inputs(): its number parameter is a clear failure (%s)",
	      w);
	rc = run_scaled(l, c, v, 1, x, y, r, cols, w, sizeof w);
	CHECK(rc == 1 && strstr(w, "parameter 3 of forward is a double: kloop gives an "
	                           "extension's entry point the task's tensors (inputs, then "
	                           "outputs) and, to its number parameters in order, what the "
	                           "problem's get_init_inputs() gives (dim); forward takes more"),
	      "... fewer values than number parameters: said, naming them (%s)", w);
	struct task_init sw[2] = {{"scale", TASK_INIT_FLOAT, 0, 2.0, "float"},
	                          {"dim", TASK_INIT_INT, 1, 0, "int"}};
	rc = run_scaled(l, c, sw, 2, x, y, r, cols, w, sizeof w);
	CHECK(rc == 1 &&
	          strstr(w, "parameter 2 of forward is an int64_t; it is given 2.0, a float"),
	      "... a float for an integer parameter: refused, as PyTorch's bindings do (%s)", w);
	struct task_init tu[2] = {{"kernel_size", TASK_INIT_OTHER, 0, 0, "tuple"}, v[1]};
	rc = run_scaled(l, c, tu, 2, x, y, r, cols, w, sizeof w);
	CHECK(rc == 1 && strstr(w, "parameter 2 of forward is an int64_t, which takes "
	                           "get_init_inputs()'s value 1 (kernel_size); that is a tuple"),
	      "... a value that is no number: said, naming it (%s)", w);
}

static void standin(struct loop *l, struct compiler *c)
{
	enum { R = 3, C = 7 };
	float x[R * C], y[R * C], want[R * C];
	for (int i = 0; i < R * C; i++)
		x[i] = (float)((i * 37) % 11) * 0.3f - 1.2f;
	softmax_ref(x, want, R, C);
	kl_tensor in = {x, KL_F32, 2, {R, C}}, out = {y, KL_F32, 2, {R, C}};
	struct lib lb;
	if (load(l, c, "softmax.cpp", NULL, &lb) == 0) {
		memset(y, 0xff, sizeof y);
		int rc = lb.run(&in, 1, &out, 1, NULL);
		CHECK(
		    rc == 0 && max_diff(y, want, R * C) < 1e-6 && *lb.pCopied == 0 && !*lb.zErr,
		    "softmax.cpp: kl_run writes softmax into kloop's output in place "
		    "(torch::empty_like is the output's buffer: nothing copied; rc %d, copied %u)",
		    rc, *lb.pCopied);
		kl_tensor bad = {x, KL_F32, 0, {0}};
		rc = lb.run(&bad, 1, &out, 1, NULL);
		CHECK(
		    rc == 1 && strstr(lb.zErr, "softmax.cpp:11: x must have a dimension, got 0"),
		    "... its TORCH_CHECK fails on a 0-dim input: kl_run returns 1 with the check's "
		    "message and place (%s)",
		    lb.zErr);
		kl_tensor small = {y, KL_F32, 2, {R, C - 1}};
		rc = lb.run(&in, 1, &small, 1, NULL);
		CHECK(rc == 1 &&
		          strstr(lb.zErr, "forward returned a tensor of shape [3, 7] for output "
		                          "0, which is [3, 6]"),
		      "... an output of another shape: said (%s)", lb.zErr);
		dlclose(lb.dl);
	}
	struct task none;
	memset(&none, 0, sizeof none);
	char *zb = fixture("bare.cpp");
	size_t nb;
	char *bare = torchext_with_init(zb, strlen(zb), &none, "bare.cpp", &nb);
	free(zb);
	if (load(l, c, "bare.cpp", bare, &lb) == 0) {
		memset(y, 0xff, sizeof y);
		int rc = lb.run(&in, 1, &out, 1, NULL);
		CHECK(rc == 0 && max_diff(y, want, R * C) < 1e-6 && *lb.pCopied == 0,
		      "bare.cpp (CUDA-L2's form: no module, the output a parameter, .to() and "
		      "copy_): its softmax lands in kloop's output (rc %d: %s)",
		      rc, lb.zErr);
		double xd[R * C] = {0};
		kl_tensor in64 = {xd, KL_F64, 2, {R, C}};
		rc = lb.run(&in64, 1, &out, 1, NULL);
		CHECK(rc == 1 && strstr(lb.zErr, "values must be torch::kFloat"),
		      "... its own dtype check (options().dtype(), std::cout << options()) "
		      "refuses doubles in its words (%s)",
		      lb.zErr);
		dlclose(lb.dl);
	}
	free(bare);
	struct {
		const char *zFile, *zWhat;
		unsigned copied;
	} softmaxes[] = {
	    {"copy.cpp",
	     "its scratch takes kloop's buffer, the tensor it returns is copied into "
	     "the output inside kl_run, and kl_run_copied says so",
	     1},
	    {"library.cpp", "TORCH_LIBRARY's impl, its out parameter kloop's output", 0},
	};
	for (size_t i = 0; i < sizeof softmaxes / sizeof *softmaxes; i++) {
		if (load(l, c, softmaxes[i].zFile, NULL, &lb) < 0)
			continue;
		memset(y, 0, sizeof y);
		int rc = lb.run(&in, 1, &out, 1, NULL);
		CHECK(rc == 0 && max_diff(y, want, R * C) < 1e-6 &&
		          *lb.pCopied == softmaxes[i].copied,
		      "%s: %s (rc %d, copied %u: %s)", softmaxes[i].zFile, softmaxes[i].zWhat, rc,
		      *lb.pCopied, lb.zErr);
		dlclose(lb.dl);
	}
	if (load(l, c, "check.cpp", NULL, &lb) == 0) {
		int rc = lb.run(&in, 1, &out, 1, NULL);
		CHECK(rc == 1 &&
		          !strcmp(lb.zErr, "check.cpp:7: softmax_3d wants a 3-D input, got 2 "
		                           "dimensions [3, 7]"),
		      "check.cpp: TORCH_CHECK(cond, parts...) formats its parts (%s)", lb.zErr);
		dlclose(lb.dl);
	}
	standin_init(l, c, x, R, C);
	/* a ModelNew made one source, run with the problem's three inputs */
	char err[KL_ERRLEN];
	char *names[] = {"x", "weight", "bias"};
	char *z = fixture("modelnew_layernorm.py");
	struct torchext_src ts;
	struct task tl = named(names, 3);
	if (torchext_modelnew("python3", "modelnew_layernorm.py", z, strlen(z), &tl, &ts, err) ==
	        0 &&
	    load(l, c, ts.zName, ts.zSource, &lb) == 0) {
		float w[C], b[C], yl[R * C], wl[R * C];
		for (int j = 0; j < C; j++)
			w[j] = 1.0f + 0.1f * j, b[j] = 0.05f * j;
		for (int i = 0; i < R; i++) {
			double mean = 0, var = 0;
			for (int j = 0; j < C; j++)
				mean += x[i * C + j];
			mean /= C;
			for (int j = 0; j < C; j++)
				var += (x[i * C + j] - mean) * (x[i * C + j] - mean);
			double inv = 1 / sqrt(var / C + 1e-5);
			for (int j = 0; j < C; j++)
				wl[i * C + j] = (float)((x[i * C + j] - mean) * inv * w[j] + b[j]);
		}
		kl_tensor ins[3] = {
		    {x, KL_F32, 2, {R, C}}, {w, KL_F32, 1, {C}}, {b, KL_F32, 1, {C}}};
		kl_tensor o = {yl, KL_F32, 2, {R, C}};
		int rc = lb.run(ins, 3, &o, 1, NULL);
		CHECK(rc == 0 && max_diff(yl, wl, R * C) < 1e-5,
		      "modelnew_layernorm.py: forward's call (x, self.weight, self.bias, 1e-5) "
		      "reaches "
		      "layer_norm_cpu as inputs 0, 1, 2 and eps (rc %d: %s)",
		      rc, lb.zErr);
		kl_tensor i64 = {x, KL_I64, 2, {R, C}};
		kl_tensor ins2[3] = {i64, ins[1], ins[2]};
		rc = lb.run(ins2, 3, &o, 1, NULL);
		CHECK(rc == 1 && strstr(lb.zErr, "expected scalar type Float but found Long"),
		      "... data_ptr<float>() of an i64 tensor: PyTorch's words (%s)", lb.zErr);
		dlclose(lb.dl);
	}
	torchext_src_free(&ts);
	free(z);
}

/* the search's function crossover (funcdiff, then splice_crossover per
 * function that differs) of two real extensions, both ways: every child
 * made compiles against the stand-in and computes the softmax; one that
 * cannot be made is refused with its reason (rows.cpp and rows_scaled.cpp
 * differ in the row helper's signature and its call; library.cpp registers
 * with TORCH_LIBRARY) */
static void crossover(struct loop *l, struct compiler *c)
{
	enum { R = 3, C = 7 };
	float x[R * C], y[R * C], want[R * C];
	for (int i = 0; i < R * C; i++)
		x[i] = (float)((i * 29) % 13) * 0.25f - 1.5f;
	softmax_ref(x, want, R, C);
	static const struct {
		const char *zA, *zB;
		int nMade, nRefused;
	} pairs[] = {{"rows.cpp", "rows_scaled.cpp", 4, 0},
	             {"rows_scaled.cpp", "rows.cpp", 3, 0},
	             {"softmax.cpp", "rows.cpp", 3, 0},
	             {"softmax.cpp", "library.cpp", 1, 2}};
	for (size_t p = 0; p < sizeof pairs / sizeof *pairs; p++) {
		char *a = fixture(pairs[p].zA), *b = fixture(pairs[p].zB);
		char err[KL_ERRLEN] = "";
		struct funcdiff d;
		int made = 0, good = 0, refused = 0;
		strbuf why = STRBUF_INIT;
		if (funcdiff_compare(a, strlen(a), b, strlen(b), &d, err) < 0)
			CHECK(0, "funcdiff of %s and %s: %s", pairs[p].zA, pairs[p].zB, err);
		for (size_t i = 0; i < d.n; i++) {
			if (d.v[i].status != FUNCDIFF_CHANGED && d.v[i].status != FUNCDIFF_ADDED)
				continue;
			struct splice_result r;
			if (splice_crossover(a, strlen(a), b, strlen(b), d.v[i].name, &r, err) <
			    0) {
				refused++;
				sb_addf(&why, "%s%s: %s", why.len ? "; " : "", d.v[i].name, err);
				continue;
			}
			made++;
			struct lib lb;
			char *zName = xasprintf("cross_%s.cpp", d.v[i].name);
			if (load(l, c, zName, r.src, &lb) == 0) {
				kl_tensor in = {x, KL_F32, 2, {R, C}}, out = {y, KL_F32, 2, {R, C}};
				memset(y, 0, sizeof y);
				int rc = lb.run(&in, 1, &out, 1, NULL);
				good += rc == 0 && max_diff(y, want, R * C) < 1e-5;
				if (rc)
					printf("# %s: kl_run returned %d: %s\n", zName, rc,
					       lb.zErr);
				dlclose(lb.dl);
			} else {
				printf("# the child, %s from %s into %s:\n%s", d.v[i].name,
				       pairs[p].zB, pairs[p].zA, r.src);
			}
			free(zName);
			splice_result_free(&r);
		}
		funcdiff_free(&d);
		CHECK(made == pairs[p].nMade && good == made && refused == pairs[p].nRefused,
		      "crossover of %s with %s: %d child%s, each compiling and computing the "
		      "softmax (%d did), %d refused%s%s",
		      pairs[p].zA, pairs[p].zB, made, made == 1 ? "" : "ren", good, refused,
		      why.len ? ": " : "", why.len ? why.buf : "");
		sb_free(&why);
		free(a);
		free(b);
	}
}

/* the GPU's exploit candidates (tests/fixtures/exploits/cuda, run by
 * tests/e2e/exploits_cuda.sh) compile for sm_90a, the extensions after
 * evil_cuda's softmax_kernel.cuh as that script puts them */
static void cuda_exploits(struct loop *l, struct compiler *c, struct compiled *g)
{
	char *kernel = fixture("../evil_cuda/softmax_kernel.cuh");
	const char *cus[] = {"own_stream.cu", "gpu_scan_zeros.cu", "control.cu"};
	for (size_t i = 0; i < sizeof cus / sizeof *cus; i++) {
		char *p = xasprintf("../exploits/cuda/%s", cus[i]);
		char *z = fixture(p), *src = xasprintf("%s%s", kernel, z);
		compiled_check(l, c, src, cus[i], 1, g);
		CHECK(g->ok, "exploits/cuda/%s compiles for sm_90a%s%.400s", cus[i],
		      g->ok ? "" : ": ", g->ok ? "" : g->zLog);
		free(src);
		free(z);
		free(p);
	}
	free(kernel);
	char err[KL_ERRLEN], *in[] = {"x"};
	struct torchext_src ts;
	char *z = fixture("../exploits/cuda/kb_result_reuse_cuda.py");
	struct task tx = named(in, 1);
	int rc =
	    torchext_modelnew("python3", "kb_result_reuse_cuda.py", z, strlen(z), &tx, &ts, err);
	CHECK(rc == 0 && ts.lang == LANG_CUDA, "exploits/cuda/kb_result_reuse_cuda.py is read (%s)",
	      rc ? err : "");
	if (rc == 0) {
		compiled_check(l, c, ts.zSource, ts.zName, 1, g);
		CHECK(g->ok, "... and compiles for sm_90a%s%.400s", g->ok ? "" : ": ",
		      g->ok ? "" : g->zLog);
		torchext_src_free(&ts);
	}
	free(z);
}

/* the CUDA forms compile with nvcc for sm_90a (they cannot run here) */
static void cuda_forms(struct loop *l, const char *zCache)
{
	char err[KL_ERRLEN];
	if (system("${KLOOP_NVCC:-nvcc} --version >/dev/null 2>&1") != 0) {
		printf("skip - the CUDA extension and ModelNew compile with nvcc: nvcc is not "
		       "installed (KLOOP_NVCC)\n");
		return;
	}
	struct cuda_target tg = {"sm_90a", 9, 0, 0, ""};
	struct compiler *c = compiler_new(l, zCache, 2, &tg, err);
	struct compiled g = {0};
	const char *cus[][2] = {
	    {"softmax.cu", "a CUDA extension (dispatch over float, double, half, bf16; "
	                   "getCurrentCUDAStream, C10_CUDA_KERNEL_LAUNCH_CHECK)"},
	    {"copy.cu", "a CUDA extension on the legacy stream, with zeros and an arena tensor"},
	    {"half_ops.cu", "c10::Half and BFloat16 arithmetic and comparisons in a kernel"},
	};
	char *z;
	for (size_t i = 0; i < sizeof cus / sizeof *cus; i++) {
		z = fixture(cus[i][0]);
		compiled_check(l, c, z, cus[i][0], 1, &g);
		CHECK(g.ok, "%s: %s compiles for sm_90a%s%.400s", cus[i][0], cus[i][1],
		      g.ok ? "" : ": ", g.ok ? "" : g.zLog);
		free(z);
	}
	char *in[] = {"x"};
	struct task t1 = named(in, 1);
	struct torchext_src ts;
	z = fixture("modelnew_cuda.py");
	int rc = torchext_modelnew("python3", "modelnew_cuda.py", z, strlen(z), &t1, &ts, err);
	CHECK(rc == 0 && ts.lang == LANG_CUDA && !strcmp(ts.zName, "modelnew_cuda.cu"),
	      "modelnew_cuda.py: its cuda_sources make it a CUDA source (%s)", rc ? err : "");
	if (rc == 0) {
		compiled_check(l, c, ts.zSource, ts.zName, 1, &g);
		CHECK(g.ok, "... which compiles for sm_90a%s%.400s", g.ok ? "" : ": ",
		      g.ok ? "" : g.zLog);
		torchext_src_free(&ts);
	}
	free(z);
	cuda_exploits(l, c, &g);
	const char *gap = "#include <torch/extension.h>\n"
	                  "torch::Tensor f(torch::Tensor x) { return at::matmul(x, x); }\n"
	                  "PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def(\"f\", &f); }\n";
	compiled_check(l, c, gap, "gap.cu", 1, &g);
	char w[1200] = "";
	CHECK(!g.ok && torchext_diagnose("gap.cu", g.zLog, w, sizeof w) &&
	          strstr(w, "gap.cu uses at::matmul, which kloop's ATen stand-in"),
	      "nvcc's own error for what the stand-in lacks is explained (%s)", w[0] ? w : g.zLog);
	compiled_free(&g);
	compiler_free(c);
}

int main(void)
{
	setenv("KLOOP_INCLUDE", "include", 1);
	setenv("KLOOP_TORCHREF", "engine/measure/reference/torchref.py", 1);
	forms();
	diagnose();
	modelnew();
	note_line();
	char dir[] = "/tmp/kloop-test-torchext.XXXXXX";
	char err[KL_ERRLEN];
	CHECK(mkdtemp(dir) != NULL, "a cache directory");
	struct loop *l = loop_new();
	struct compiler *c = compiler_new(l, dir, 2, NULL, err);
	CHECK(c != NULL, "a compiler service (%s)", c ? "" : err);
	if (c)
		standin(l, c);
	if (c)
		crossover(l, c);
	compiler_free(c);
	cuda_forms(l, dir);
	loop_free(l);
	char *rm = xasprintf("rm -rf %s", dir);
	if (system(rm) != 0)
		printf("# could not remove %s\n", dir);
	free(rm);
	return check_done();
}
