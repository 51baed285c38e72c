/*
 * test_torch_real.c - where kloop finds PyTorch's own headers and libraries
 * for an extension its ATen stand-in cannot compile (torch_real.h), and the
 * flags it compiles with: a libtorch directory ($KLOOP_LIBTORCH), "off", one
 * that is no libtorch, a Python whose torch answers (a script standing for
 * it), asked by the compiler service without waiting, and Debian's
 * libtorch-dev where this machine has it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "compile.h"
#include "loop.h"
#include "torch_real.h"
#include "util.h"

static char *tmp;

static void touch(const char *zRel, const char *zText)
{
	char *p = path_join(tmp, zRel), err[KL_ERRLEN];
	char *d = xstrdup(p);
	*strrchr(d, '/') = 0;
	if (mkdir_p(d, err) < 0 || write_file_atomic(p, zText, strlen(zText), err) < 0)
		printf("# %s\n", err);
	free(d);
	free(p);
}

/* the flags as one line */
static char *flags(const struct torch_real *t, int cuda)
{
	char *v[64] = {0};
	int n = 0;
	torch_real_flags(t, cuda, v, &n, 60);
	strbuf sb = STRBUF_INIT;
	for (int i = 0; i < n; i++) {
		sb_addf(&sb, "%s%s", i ? " " : "", v[i]);
		free(v[i]);
	}
	return sb.buf ? sb.buf : xstrdup("");
}

static void test_libtorch_dir(void)
{
	touch("lt/include/torch/csrc/api/include/torch/all.h", "#pragma once\n");
	touch("lt/include/torch/csrc/api/include/torch/version.h",
	      "#define TORCH_VERSION_MAJOR 2\n#define TORCH_VERSION_MINOR 5\n"
	      "#define TORCH_VERSION_PATCH 1\n");
	touch("lt/lib/libtorch.so", "");
	char *dir = path_join(tmp, "lt");
	setenv("KLOOP_LIBTORCH", dir, 1);
	struct torch_real t = {0};
	int rc = torch_real_find(&t, "/bin/false");
	char want[600];
	snprintf(want, sizeof want, "libtorch 2.5.1 in %s ($KLOOP_LIBTORCH)", dir);
	CHECK(rc == 0 && t.ok && !strcmp(t.zWhere, want), "a libtorch directory is found (%s)",
	      rc == 0 ? t.zWhere : t.zErr);
	char *f = flags(&t, 0);
	snprintf(want, sizeof want,
	         "-isystem %s/include -isystem %s/include/torch/csrc/api/include -L%s/lib "
	         "-Wl,-rpath,%s/lib -Wl,--no-as-needed -lc10 -ltorch -ltorch_cpu",
	         dir, dir, dir, dir);
	CHECK(!strcmp(f, want),
	      "its C++ flags: the headers as system ones, libtorch with an rpath (%s)", f);
	free(f);
	f = flags(&t, 1);
	CHECK(strstr(f, "-Xlinker=-rpath,") && !strstr(f, "-ltorch_cuda"),
	      "nvcc's: the rpath nvcc's way; no libtorch_cuda where there is none (%s)", f);
	free(f);
	/* found once: a libtorch_cuda added later is not seen until the next worker */
	touch("lt/lib/libtorch_cuda.so", "");
	CHECK(torch_real_find(&t, NULL) == 0 && !t.cuda, "a second look answers the first");
	torch_real_free(&t);
	CHECK(torch_real_find(&t, NULL) == 0 && t.cuda, "looked for again, libtorch_cuda is there");
	f = flags(&t, 1);
	CHECK(strstr(f, "-lc10_cuda -ltorch_cuda") != NULL, "... and linked for CUDA (%s)", f);
	CHECK(strstr(f, "-Xlinker=--no-as-needed -lc10 ") != NULL,
	      "... kept though no symbol of theirs is named: libtorch_cuda registers the CUDA "
	      "kernels when loaded, which a linker dropping it (Ubuntu's --as-needed) loses (%s)",
	      f);
	free(f);
	f = flags(&t, 0);
	CHECK(!strstr(f, "cuda"), "... not for C++ (%s)", f);
	free(f);
	torch_real_free(&t);
	free(dir);
}

static void test_refusals(void)
{
	struct torch_real t = {0};
	setenv("KLOOP_LIBTORCH", "off", 1);
	CHECK(torch_real_find(&t, NULL) < 0 && strstr(t.zErr, "KLOOP_LIBTORCH=off"),
	      "KLOOP_LIBTORCH=off: none looked for (%s)", t.zErr);
	torch_real_free(&t);
	char *dir = path_join(tmp, "empty");
	char err[KL_ERRLEN];
	mkdir_p(dir, err);
	setenv("KLOOP_LIBTORCH", dir, 1);
	CHECK(torch_real_find(&t, NULL) < 0 && strstr(t.zErr, "is no libtorch: it needs") &&
	          strstr(t.zErr, dir) && !t.ok && t.nInc == 0,
	      "a directory that is no libtorch is named, with what it lacks (%s)", t.zErr);
	torch_real_free(&t);
	free(dir);
	unsetenv("KLOOP_LIBTORCH");
}

/* a Python whose torch answers: its include and library paths, its ABI */
static void test_python(void)
{
	char text[1200];
	char *lt = path_join(tmp, "lt");
	touch("lt/nvidia/cusparselt/lib/libcusparseLt.so.0", "");
	snprintf(text, sizeof text,
	         "#!/bin/sh\necho 'a line torch printed first'\n"
	         "echo '{\"inc\": [\"%s/include\", \"%s/include/torch/csrc/api/include\", "
	         "\"%s/nowhere\"], \"lib\": [\"%s/nolib\", \"%s/lib\"], \"abi\": 1, "
	         "\"version\": \"2.11.0+cu130\", \"dir\": \"%s/torch\", \"deps\": "
	         "[\"%s/nvidia/cusparselt/lib/libcusparseLt.so.0\", \"%s/gone/libx.so.1\", "
	         "\"relative/liby.so\"]}'\n",
	         lt, lt, lt, lt, lt, lt, lt, lt);
	touch("py/python", text);
	char *py = path_join(tmp, "py/python");
	chmod(py, 0755);
	struct torch_real t = {0};
	int rc = torch_real_find(&t, py);
	CHECK(rc == 0 && t.nInc == 2 && t.abi == 1 &&
	          strstr(t.zWhere, "PyTorch 2.11.0+cu130 of ") && strstr(t.zWhere, py),
	      "the Python's torch: its paths that exist, its ABI (%s)",
	      rc == 0 ? t.zWhere : t.zErr);
	char *f = flags(&t, 0);
	CHECK(strstr(f, "-D_GLIBCXX_USE_CXX11_ABI=1") && strstr(f, "/lt/lib -Wl") &&
	          !strstr(f, "nowhere"),
	      "... compiled with its C++ ABI, linked from the directory holding libtorch (%s)", f);
	free(f);
	f = flags(&t, 1);
	char want[700];
	snprintf(want, sizeof want,
	         "-ltorch_cuda -L%s/nvidia/cusparselt/lib -Xlinker=-rpath,%s/nvidia/cusparselt/lib "
	         "-l:libcusparseLt.so.0",
	         lt, lt);
	CHECK(t.nDep == 1 && strstr(f, want) && !strstr(f, "libx") && !strstr(f, "liby"),
	      "a library import torch loaded for libtorch (a wheel's libcusparseLt) is linked by "
	      "name with an rpath, after libtorch; one that is not there, or not a full path, is "
	      "not (%s)",
	      f);
	free(f);
	torch_real_free(&t);
	free(py);
	free(lt);
}

/* compiler_torch_real_start's callback: the order of the calls */
static void answered(void *arg)
{
	strbuf *sb = arg;
	sb_adds(sb, sb->len ? ",second" : "first");
}

/* the compiler asks Python without waiting for it: the Python here answers
 * once the test lets it (a file appears), so whatever the machine's speed
 * the answer comes after the start returned, to both who asked, in order */
static void test_python_async(void)
{
	char text[1400];
	char *lt = path_join(tmp, "lt"), *go = path_join(tmp, "go");
	snprintf(text, sizeof text,
	         "#!/bin/sh\nwhile [ ! -e '%s' ]; do sleep 0.02; done\n"
	         "echo '{\"inc\": [\"%s/include\", \"%s/include/torch/csrc/api/include\"], "
	         "\"lib\": [\"%s/lib\"], \"abi\": 0, \"version\": \"2.11.0+cu130\", "
	         "\"dir\": \"%s/torch\", \"dirs\": [\"%s/nvidia/cusparselt/lib\", "
	         "\"%s/nothere\"]}'\n",
	         go, lt, lt, lt, lt, lt, lt);
	touch("pya/python", text);
	char *py = path_join(tmp, "pya/python"), *cache = path_join(tmp, "cache");
	chmod(py, 0755);
	char err[KL_ERRLEN];
	struct loop *l = loop_new();
	struct compiler *c = compiler_new(l, cache, 1, NULL, err);
	CHECK(c != NULL, "a compiler service (%s)", c ? "" : err);
	if (!c)
		goto out;
	strbuf calls = STRBUF_INIT;
	int a = compiler_torch_real_start(c, py, answered, &calls);
	int b = compiler_torch_real_start(c, py, answered, &calls);
	int still = compiler_torch_real(c, py, err) < 0 && strstr(err, "still asking");
	CHECK(a == 1 && b == 1 && calls.len == 0 && still,
	      "asking Python does not wait: both who ask wait for its answer, which is not in "
	      "(%d %d, %s)",
	      a, b, err);
	touch("go", "");
	for (int i = 0; i < 6000 && calls.len < 12; i++)
		loop_once(l, 0.05);
	CHECK(calls.buf && !strcmp(calls.buf, "first,second") &&
	          compiler_torch_real(c, NULL, err) == 0 &&
	          strstr(compiler_torch_real_where(c), "PyTorch 2.11.0+cu130 of "),
	      "once it answers, each is called, in the order they asked, and the answer is "
	      "PyTorch's (%s; %s)",
	      calls.buf ? calls.buf : "none", compiler_torch_real_where(c));
	CHECK(compiler_torch_real_start(c, py, answered, &calls) == 0,
	      "asked again, the answer is known at once");
	/* a wheel's libtorch_cuda finds libcusparseLt by its rpath, in the
	 * nvidia package beside torch: a sandboxed runner is shown that
	 * directory (on an H200 the load failed without it) */
	char **dirs = compiler_lib_dirs(c, 0);
	int nv = 0, gone = 0;
	for (int i = 0; dirs[i]; i++) {
		nv += strstr(dirs[i], "/nvidia/cusparselt/lib") != NULL;
		gone += strstr(dirs[i], "nothere") != NULL;
	}
	CHECK(nv == 1 && !gone,
	      "the directories of what import torch loaded outside the system's are among those "
	      "a runner is shown, once each; one that is not there is not (%d, %d)",
	      nv, gone);
	compiler_dirs_free(dirs);
	sb_free(&calls);
out:
	compiler_free(c);
	loop_free(l);
	free(py);
	free(cache);
	free(lt);
	free(go);
}

/* no Python with torch: Debian's libtorch-dev, where this machine has it */
static void test_system(void)
{
	struct torch_real t = {0};
	int rc = torch_real_find(&t, "/bin/false");
	if (access("/usr/include/torch/csrc/api/include/torch/all.h", R_OK) == 0)
		CHECK(rc == 0 && strstr(t.zWhere, "of the system (libtorch-dev: "),
		      "Debian's libtorch-dev (%s)", rc == 0 ? t.zWhere : t.zErr);
	else
		CHECK(rc < 0 && strstr(t.zErr, "/bin/false has no torch") &&
		          strstr(t.zErr, "install libtorch-dev"),
		      "none here: the error says where kloop looked and what to install (%s)",
		      t.zErr);
	torch_real_free(&t);
}

int main(void)
{
	char tpl[] = "/tmp/kloop-torchreal.XXXXXX";
	tmp = mkdtemp(tpl);
	unsetenv("KLOOP_LIBTORCH");
	test_libtorch_dir();
	test_refusals();
	test_python();
	test_python_async();
	test_system();
	char *cmd = xasprintf("rm -rf '%s'", tmp);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", tmp);
	free(cmd);
	return check_done();
}
