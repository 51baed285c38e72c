/*
 * test_import.c - `kloop import`'s pure parts (issue 38): the files a list
 * of paths and directories names (order, what is left out, a path that is
 * not there), what each file is or why it is not a candidate, a module
 * `kloop export --kernelbench` wrote read back as the candidate it was
 * (each form, written by cand_export_write() itself; edited; damaged), and
 * the names the candidates get in a session.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cand_export.h"
#include "cand_import.h"
#include "check.h"
#include "compile.h"
#include "slurp.h"
#include "util.h"

static char dir[] = "/tmp/kloop-test-import.XXXXXX";

static char *put_n(const char *zRel, const char *z, size_t n);

static char *put(const char *zRel, const char *z)
{
	return put_n(zRel, z, strlen(z));
}

static char *put_n(const char *zRel, const char *z, size_t n)
{
	char *p = path_join(dir, zRel);
	char *slash = strrchr(p, '/');
	*slash = 0;
	char *mk = xasprintf("mkdir -p '%s'", p);
	if (system(mk) != 0)
		CHECK(0, "mkdir %s", p);
	free(mk);
	*slash = '/';
	FILE *f = fopen(p, "w");
	if (f) {
		if (fwrite(z, 1, n, f) != n)
			CHECK(0, "write %s", p);
		fclose(f);
	}
	return p;
}

/* the list's entries' paths relative to dir, ", " between */
static char *listed(const struct cand_import_list *l)
{
	strbuf sb = STRBUF_INIT;
	for (int i = 0; i < l->n; i++)
		sb_addf(&sb, "%s%s", i ? ", " : "",
		        l->a[i].zPath +
		            (strncmp(l->a[i].zPath, dir, strlen(dir)) ? 0 : strlen(dir) + 1));
	return sb_detach(&sb);
}

static void listing(void)
{
	const char *kern = "#include \"kloop.h\"\nint kl_run(const kl_tensor *in, int n_in, "
	                   "kl_tensor *out, int n_out, void *s) { return 0; }\n";
	free(put("run/b/k.c", kern));
	free(put("run/a/z.cu", kern));
	free(put("run/a/m.py", "class ModelNew: pass\n"));
	free(put("run/notes.txt", "x"));
	free(put("run/.hidden/h.c", kern));
	free(put("run/__pycache__/c.py", "x"));
	char *prob = put("run/problem.py", "class Model: pass\ndef get_inputs(): return []\n");
	char *run = path_join(dir, "run"), *missing = path_join(dir, "nope.cu");
	const char *args[] = {run, missing};
	struct cand_import_list l;
	char err[KL_ERRLEN];
	int rc = cand_import_list(args, 2, prob, &l, &err[0]);
	char *got = rc == 0 ? listed(&l) : xstrdup(err);
	CHECK(rc == 0 && !strcmp(got, "run/a/m.py, run/a/z.cu, run/b/k.c, nope.cu"),
	      "a directory's sources in byte order, its subdirectories' too; hidden ones, "
	      "__pycache__ and the problem left out; then a path given (%s)",
	      got);
	free(got);
	CHECK(rc == 0 && l.nSkipped == 1 && strstr(l.skipped.buf, "run/notes.txt"),
	      "... a file that is no source is counted apart, not an error (%s)",
	      l.skipped.buf ? l.skipped.buf : "");
	CHECK(rc == 0 && l.a[3].zError && strstr(l.a[3].zError, "nope.cu: No such file"),
	      "a path that is not there is an entry with its error (%s)",
	      rc == 0 && l.a[3].zError ? l.a[3].zError : "none");
	if (rc == 0)
		cand_import_list_free(&l);
	free(run);
	free(missing);
	free(prob);
}

/* file zRel with text z read for backend zBackend: its form word and
 * language, or its error, into buf */
static int read_one(const char *zRel, const char *z, const char *zBackend, char *buf, size_t n)
{
	char *p = put(zRel, z);
	struct cand_import x = {.zPath = p, .lang = -1};
	int rc = cand_import_read(&x, zBackend);
	if (rc == 0)
		cand_import_form(&x, buf, n);
	else
		snprintf(buf, n, "%s", x.zError);
	free(x.zName);
	free(x.zSource);
	free(x.zError);
	free(p);
	return rc;
}

static void reading(void)
{
	char w[600];
	char *ext = slurp("tests/fixtures/torchext/softmax.cpp", NULL);
	char *mn = slurp("tests/fixtures/torchext/modelnew_cpu.py", NULL);
	char *kern = slurp("tasks/softmax/seed.c", NULL);
	struct {
		const char *zRel, *zText, *zBackend;
		int ok;
		const char *zWant;
	} cases[] = {
	    {"r/softmax.cpp", ext, "host", 1, "extension C++"},
	    {"r/m.py", mn, "host", 1, "ModelNew C++"},
	    {"r/seed.c", kern, "host", 1, "kernel C"},
	    {"r/seed.cu", kern, "host", 0, "r/seed.cu: a .cu candidate needs the cuda backend"},
	    {"r/softmax.cu", ext, "host", 0,
	     "r/softmax.cu: a PyTorch extension with CUDA kernels needs the cuda backend"},
	    {"r/helper.c", "int helper(int x) { return x + 1; }\n", "host", 0,
	     "r/helper.c: defines no kl_run and is no PyTorch extension"},
	    {"r/half.cpp", "#include <torch/extension.h>\ntorch::Tensor f(torch::Tensor x);\n",
	     "host", 0, "r/half.cpp: includes PyTorch but names no function with PYBIND11_MODULE"},
	    {"r/problem.py",
	     "class Model(nn.Module):\n    pass\ndef get_inputs():\n    return []\n", "host", 0,
	     "r/problem.py: a KernelBench problem file (class Model, get_inputs), not a "
	     "candidate: give it with --problem"},
	    {"r/tool.py", "print('hello')\n", "host", 0, "r/tool.py: defines no class ModelNew"},
	    {"r/notes.txt", "x", "host", 0, "r/notes.txt: not a source kloop takes"},
	    {"r/empty.c", "", "host", 0, "r/empty.c: the file is empty"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		int rc = read_one(cases[i].zRel, cases[i].zText, cases[i].zBackend, w, sizeof w);
		char *want =
		    cases[i].ok ? xstrdup(cases[i].zWant) : xasprintf("%s/%s", dir, cases[i].zWant);
		CHECK(cases[i].ok ? rc == 0 && !strcmp(w, want) : rc < 0 && strstr(w, want),
		      "%s: %s (got: %s)", cases[i].zRel, cases[i].zWant, w);
		free(want);
	}
	static const char elf[] = "\x7f"
	                          "ELF\x02\x01\x01\0\0\0\0\0\0\0\0\0\x03\0>\0\x01\0\0\0";
	char *p = put_n("r/bin.c", elf, sizeof elf - 1);
	struct cand_import x = {.zPath = p, .lang = -1};
	int rc = cand_import_read(&x, "host");
	CHECK(rc < 0 && strstr(x.zError, "r/bin.c: a binary file, not source"),
	      "a binary file named .c: said (%s)", x.zError ? x.zError : "taken");
	free(x.zError);
	free(p);
	free(ext);
	free(mn);
	free(kern);
}

/* candidate c exported with --kernelbench for the problem, read back */
static void exported(const char *zName, const char *zFile, const char *zForm)
{
	char err[KL_ERRLEN];
	struct state st;
	memset(&st, 0, sizeof st);
	char *src = slurp(zFile, NULL);
	struct cand c = {.id = 7, .zName = (char *)zName, .zSource = src, .zStatus = "correct"};
	char *out = path_join(dir, "exp.py");
	struct cand_export x = {.zKernelbench = out,
	                        .zProblem = "tests/fixtures/torch/kb/23_Softmax.py"};
	int rc = cand_export_write(&st, NULL, &c, &x, err);
	CHECK(rc == 0, "%s exported (%s)", zName, rc ? err : "");
	char *mod = slurp(out, NULL);
	struct cand_exported ex;
	rc = cand_export_read(mod, strlen(mod), &ex, err);
	CHECK(rc == 1 && ex.id == 7 && !strcmp(ex.zName, zName) && !strcmp(ex.zSource, src) &&
	          !strcmp(ex.zForm, zForm) && !strcmp(ex.zStatus, "correct") && !ex.edited,
	      "%s (%s): its export read back as it was, named %s (rc %d: %s)", zName, zForm,
	      rc == 1 ? ex.zName : "?", rc, rc < 0 ? err : "");
	if (rc == 1)
		cand_exported_free(&ex);
	/* an edit in the source: read back as edited */
	const char *needle = !strcmp(zForm, "modelnew") ? "torch::Tensor" : "exp";
	const char *from = !strcmp(zForm, "modelnew")    ? CAND_EXPORT_MARK
	                   : !strcmp(zForm, "extension") ? "\n_KLOOP_SOURCE = "
	                                                 : "\n_SOURCE = ";
	char *at = strstr(mod, from) ? strstr(strstr(mod, from), needle) : NULL;
	if (at && !strcmp(zForm, "modelnew"))
		memcpy(at, "TORCH::Tensor", 13);
	else if (at)
		memcpy(at, "EXP", 3);
	rc = cand_export_read(mod, strlen(mod), &ex, err);
	CHECK(rc == 1 && ex.edited &&
	          strstr(ex.zSource, !strcmp(zForm, "modelnew") ? "TORCH" : "EXP"),
	      "... edited since: the edited source, said to be edited (rc %d %s)", rc,
	      rc < 0 ? err : "");
	if (rc == 1)
		cand_exported_free(&ex);
	free(mod);
	free(out);
	free(src);
}

static void exports(void)
{
	exported("modelnew_cpu.py", "tests/fixtures/torchext/modelnew_cpu.py", "modelnew");
	exported("softmax.cpp", "tests/fixtures/torchext/softmax.cpp", "extension");
	exported("seed.c", "tasks/softmax/seed.c", "kernel");
	char err[KL_ERRLEN];
	struct cand_exported ex;
	const char *plain = "import torch\nclass ModelNew: pass\n";
	CHECK(cand_export_read(plain, strlen(plain), &ex, err) == 0, "a module of no export: 0");
	const char *cut = "# kloop-candidate: {\"id\": 2, \"name\": \"e.cpp\", \"form\": "
	                  "\"extension\", \"bytes\": 3, \"sha256\": \"x\"}\nimport torch\n";
	int rc = cand_export_read(cut, strlen(cut), &ex, err);
	CHECK(rc < 0 && strstr(err, "its source's line is no longer the JSON string kloop wrote"),
	      "an export whose source's line is gone: said (%s)", err);
	/* the import reads an export as its candidate, named as it was */
	struct state st;
	memset(&st, 0, sizeof st);
	char *src = slurp("tests/fixtures/torchext/softmax.cpp", NULL);
	struct cand c = {.id = 3, .zName = "softmax.cpp", .zSource = src, .zStatus = "correct"};
	char *out = path_join(dir, "r/c3.py");
	struct cand_export x = {.zKernelbench = out,
	                        .zProblem = "tests/fixtures/torch/kb/23_Softmax.py"};
	cand_export_write(&st, NULL, &c, &x, err);
	struct cand_import y = {.zPath = out, .lang = -1};
	rc = cand_import_read(&y, "host");
	CHECK(rc == 0 && !strcmp(y.zName, "softmax.cpp") && !strcmp(y.zSource, src) &&
	          y.exportId == 3 && y.form == TORCHEXT_EXTENSION,
	      "import reads c3.py, an export, as candidate 3's extension softmax.cpp (%s)",
	      rc ? y.zError : y.zName);
	free(y.zName);
	free(y.zSource);
	free(y.zError);
	free(out);
	free(src);
}

static void naming(void)
{
	struct state st;
	memset(&st, 0, sizeof st);
	struct cand have = {.id = 1, .zName = "kernel.py", .zSource = "held"};
	st.aCand = &have;
	st.nCand = 1;
	struct cand_import a[4] = {
	    {.zPath = "run/s0/kernel.py", .zName = xstrdup("kernel.py"), .zSource = "a"},
	    {.zPath = "run/s0/kernel.py", .zName = xstrdup("kernel.py"), .zSource = "b"},
	    {.zPath = "run/s1/x.cu", .zName = xstrdup("x.cu"), .zSource = "held"},
	    {.zPath = "k.c", .zName = xstrdup("k.c"), .zSource = "c"},
	};
	struct cand_import_list l = {.a = a, .n = 4};
	cand_import_names(&l, &st);
	CHECK(!strcmp(a[0].zName, "s0-kernel.py") && !strcmp(a[1].zName, "s0-kernel-2.py") &&
	          !strcmp(a[3].zName, "k.c"),
	      "a name the session or an earlier file has: its directory's name before it, then "
	      "-2 (%s, %s, %s)",
	      a[0].zName, a[1].zName, a[3].zName);
	CHECK(a[2].present == 1 && !a[0].present,
	      "a source the session holds already is marked as that candidate (%d)", a[2].present);
	for (int i = 0; i < 4; i++)
		free(a[i].zName);
}

int main(void)
{
	setenv("KLOOP_INCLUDE", "include", 1);
	setenv("KLOOP_TORCHREF", "engine/measure/reference/torchref.py", 1);
	CHECK(mkdtemp(dir) != NULL, "a directory for the files");
	listing();
	reading();
	exports();
	naming();
	char *rm = xasprintf("rm -rf %s", dir);
	if (system(rm) != 0)
		printf("# could not remove %s\n", dir);
	free(rm);
	return check_done();
}
