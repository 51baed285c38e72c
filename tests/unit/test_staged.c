/*
 * test_staged.c - the staged CUDA build with the real nvcc (no GPU
 * needed): a candidate's host object is kept, an edit inside a kernel
 * compiles only the device code into it, and the shared object is the one
 * a whole build of the edited source gives, byte for byte; an edit of the
 * host code builds whole; a device edit that does not compile fails with
 * nvcc's message; a PyTorch extension's template kernel likewise; a source
 * whose host object names nvcc's module id (an anonymous namespace's
 * __device__ variable; where CUTLASS_DIR has CUTLASS, a CuTe kernel)
 * builds whole (nvcc hashes the source and its path into that id, so such
 * an object is not even the same from one build directory to the next);
 * a whole build's host object made by nvcc's own steps with the host and
 * device halves side by side is nvcc's, byte for byte, with nvcc's words
 * when it fails, and one module id on both sides; and the same in the
 * compilers' sandbox.
 */
#include <stdlib.h>
#include <string.h>

#include "cand.h"
#include "check.h"
#include "compile.h"
#include "compiled.h"
#include "cudasrc.h"
#include "cuda_target.h"
#include "util.h"

/* 1 when files a and b hold the same bytes */
static int same_bytes(const char *a, const char *b)
{
	strbuf x = STRBUF_INIT, y = STRBUF_INIT;
	int same = a && b && read_file(a, &x, 1u << 30, NULL) >= 0 &&
	           read_file(b, &y, 1u << 30, NULL) >= 0 && x.len == y.len && x.len &&
	           !memcmp(x.buf, y.buf, x.len);
	sb_free(&x);
	sb_free(&y);
	return same;
}

/* how many names in shared object zSo carry nvcc's module id
 * (_INTERNAL_<8 hex>_, _GLOBAL__N__<8 hex>_), -1 where they do not all
 * carry the same one */
static int module_ids(const char *zSo)
{
	strbuf b = STRBUF_INIT;
	if (!zSo || read_file(zSo, &b, 1u << 30, NULL) < 0)
		return 0;
	static const char *const marks[] = {"_INTERNAL_", "_GLOBAL__N__"};
	char id[9] = "";
	int n = 0;
	for (size_t m = 0; m < 2; m++) {
		size_t k = strlen(marks[m]);
		for (const char *q = b.buf, *end = b.buf + b.len;
		     (q = memmem(q, (size_t)(end - q), marks[m], k)) != NULL; q += k) {
			if (end - q < (long)k + 9 || q[k + 8] != '_')
				continue;
			if (!id[0])
				memcpy(id, q + k, 8);
			else if (memcmp(id, q + k, 8))
				n = -1000;
			n++;
		}
	}
	sb_free(&b);
	return n < 0 ? -1 : n;
}

/* a compiler for sm_90a caching under zDir, sandboxed or not, that runs
 * nvcc's steps itself (steps 1, the default) or leaves nvcc alone (0:
 * KLOOP_NVCC_STEPS=0); NULL where there is none */
static struct compiler *compiler_steps(struct loop *l, const char *zDir, int steps, int sandboxed)
{
	char err[KL_ERRLEN];
	struct cuda_target t = {.zName = "sm_90a", .ccMajor = 9, .ccMinor = 0};
	if (!steps)
		setenv("KLOOP_NVCC_STEPS", "0", 1);
	struct compiler *c = compiler_new(l, zDir, 1, &t, err);
	unsetenv("KLOOP_NVCC_STEPS");
	if (c) {
		compiler_set_sandbox(c, sandboxed);
		compiler_set_timeout(c, 600);
	}
	return c;
}

/* 1 when a whole build of zSrc (name zName) by a compiler that has kept
 * nothing (a cache of its own under zDir/zSub) is g's shared object, byte
 * for byte, with its code hash; with nvcc's steps side by side (steps 1,
 * the default) or nvcc alone (0: KLOOP_NVCC_STEPS=0), as it says */
static int whole_same(struct loop *l, const char *zDir, const char *zSub, const char *zSrc,
                      const char *zName, int torch, int sandboxed, const struct compiled *g,
                      int steps)
{
	char *dirW = xasprintf("%s/%s", zDir, zSub);
	struct compiler *whole = compiler_steps(l, dirW, steps, sandboxed);
	struct compiled w = {0};
	if (whole)
		compiled_check(l, whole, zSrc, zName, torch, &w);
	int same = whole && w.ok && !w.deviceOnly && w.sideBySide == steps && g->ok &&
	           same_bytes(g->zSo, w.zSo) && !strcmp(g->zCode, w.zCode);
	compiler_free(whole);
	compiled_free(&w);
	free(dirW);
	return same;
}

/* the staged build under cache zDir (sandboxed or not) */
static void staged(const char *zDir, int sandboxed)
{
	const char *in = sandboxed ? " in the sandbox" : "";
	char err[KL_ERRLEN];
	struct cuda_target t = {.zName = "sm_90a", .ccMajor = 9, .ccMinor = 0};
	struct loop *l = loop_new();
	char *dirA = xasprintf("%s/a", zDir);
	struct compiler *a = compiler_new(l, dirA, 1, &t, err);
	CHECK(a, "a compiler service with nvcc (%s)", a ? "" : err);
	if (!a)
		goto out;
	compiler_set_sandbox(a, sandboxed);
	compiler_set_timeout(a, 600);
	struct compiled g = {0};

	compiled_check(l, a, cudasrc_seed, "cand.cu", 0, &g);
	CHECK(g.ok && !g.deviceOnly && strstr(g.zCommand, " -c cand.cu -o kl_host.o && ") &&
	          strstr(g.zCommand, " -shared kl_host.o -o out.so"),
	      "the seed builds whole%s, in two stages: nvcc -c, then the link (%s%s)", in,
	      g.zCommand ? g.zCommand : "", g.ok ? "" : g.zLog);
	/* nvcc -c by its own steps, the host and device halves side by side:
	 * nvcc's bytes and output */
	CHECK(g.sideBySide && strstr(g.zCommand, "host and device halves side by side") &&
	          strstr(g.zLog, "ptxas info") &&
	          whole_same(l, zDir, "alone", cudasrc_seed, "cand.cu", 0, sandboxed, &g, 0),
	      "... its host object by nvcc's steps, the host and device halves side by side, "
	      "ptxas' report in its log, and the shared object is the one nvcc alone builds "
	      "(KLOOP_NVCC_STEPS=0), byte for byte%s",
	      in);

	/* an edit inside the kernel and one adding lines to a device function,
	 * each under a name of its own as a session gives it (cand2.cu) */
	/* and one whose device code holds its file's name and a line number
	 * (__FILE__'s characters, __LINE__, and INFINITY, a macro of the
	 * headers): its lines after the last #include preprocessed alone under
	 * the macros the #includes left, they must come out the same */
	const char *aWhat[] = {"an edit inside the kernel", "lines added to a __device__ function",
	                       "__FILE__, __LINE__ and INFINITY in the kernel"};
	char *aEdit[] = {
	    cudasrc_edit(cudasrc_seed, "y[i] = twice(x[i]);", "y[i] = twice(x[i]) + 1.0f;"),
	    cudasrc_edit(cudasrc_seed, "\treturn 2.0f * x;\n", "\tfloat t = x + x;\n\treturn t;\n"),
	    cudasrc_edit(cudasrc_seed, "\t\t\ty[i] = twice(x[i]);\n",
	                 "\t\t\ty[i] = twice(x[i]);\n\tconst char *f = __FILE__;\n\tif (n < 0)\n"
	                 "\t\ty[0] = f[i % 8] + __LINE__ + INFINITY;\n")};
	for (int i = 0; i < 3; i++) {
		char name[32], fat[48];
		snprintf(name, sizeof name, "cand%d.cu", i + 2);
		snprintf(fat, sizeof fat, "-fatbin %s", name);
		compiled_check(l, a, aEdit[i], name, 0, &g);
		CHECK(g.ok && g.deviceOnly && strstr(g.zCommand, fat) &&
		          strstr(g.zLog, "ptxas info"),
		      "%s%s: only the device code is compiled (nvcc -fatbin into the kept host "
		      "object), ptxas' report in its log (%s%s)",
		      aWhat[i], in, g.zCommand ? g.zCommand : "", g.ok ? "" : g.zLog);
		/* the first edit preprocesses its #includes as nvcc does and keeps
		 * that; the next ones take it */
		CHECK(g.prefixKept == (i > 0) &&
		          (strstr(g.zCommand, "the #includes' preprocessing kept") != NULL) ==
		              (i > 0),
		      "... %s (%s)",
		      i ? "its lines after the last #include preprocessed alone, the #includes' "
		          "preprocessing the first edit's"
		        : "its #includes preprocessed as nvcc does, and kept for the next edits",
		      g.zCommand ? g.zCommand : "");
		/* a whole build by a compiler that has kept no host object */
		char sub[24];
		snprintf(sub, sizeof sub, "whole%d", i);
		CHECK(g.noLink && whole_same(l, zDir, sub, aEdit[i], name, 0, sandboxed, &g, 1),
		      "... written into the shared object kept for the seed's host code (no link: "
		      "%d), and that is a whole build's, byte for byte%s",
		      g.noLink, in);
	}

	/* the source guarded by an #ifndef that its last line closes: its
	 * lines up to the last #include do not preprocess alone, so no edit of
	 * it takes their preprocessing, and each is still a whole build's bytes */
	char *guarded = xasprintf("#ifndef KL_GUARD\n#define KL_GUARD\n%s#endif\n", cudasrc_seed);
	compiled_check(l, a, guarded, "cand.cu", 0, &g);
	for (int i = 0; i < 2; i++) {
		char *e = cudasrc_edit(guarded, "return 2.0f * x;",
		                       i ? "return x * 2.0f + 0.0f;" : "return x + x;");
		char name[32], sub[24];
		snprintf(name, sizeof name, "guard%d.cu", i);
		snprintf(sub, sizeof sub, "wguard%d", i);
		compiled_check(l, a, e, name, 0, &g);
		CHECK(
		    g.ok && g.deviceOnly && !g.prefixKept &&
		        whole_same(l, zDir, sub, e, name, 0, sandboxed, &g, 1),
		    "a source whose #includes sit in an #ifndef closed at its end, edit %d: device "
		    "code only, its #includes preprocessed as nvcc does (they do not stand alone), "
		    "a whole build's bytes%s (%s%s)",
		    i + 1, in, g.zCommand ? g.zCommand : "", g.ok ? "" : g.zLog);
		free(e);
	}
	free(guarded);

	/* an edit that grows the device code past the kept object's slot (a
	 * chain of 5000 FMAs, 16 bytes each): linked again, and that object is
	 * the one the next edit of its size is written into */
	const char *grow[] = {"5000", "4999"};
	for (int i = 0; i < 2; i++) {
		char *loop =
		    xasprintf("\tfloat a = i < n ? x[i] : 0.0f, b = 1.0f;\n#pragma unroll\n"
		              "\tfor (int j = 0; j < %s; j++)\n"
		              "\t\tb = b * a + __int_as_float(0x3f800000 + j);\n"
		              "\tif (i < n)\n\t\ty[i] = twice(b);\n",
		              grow[i]);
		char *e2 =
		    cudasrc_edit(cudasrc_seed,
		                 "#pragma unroll\n\tfor (int j = 0; j < 1; j++)\n\t\tif (i < "
		                 "n)\n\t\t\ty[i] = twice(x[i]);\n",
		                 loop);
		char name[32];
		snprintf(name, sizeof name, "grow%d.cu", i);
		compiled_check(l, a, e2, name, 0, &g);
		CHECK(
		    g.ok && g.deviceOnly && g.noLink == (i == 1) &&
		        whole_same(l, zDir, i ? "wgrow1" : "wgrow0", e2, name, 0, sandboxed, &g, 1),
		    "%s: device code only, %s, a whole build's bytes%s (%s%s)",
		    i ? "then a loop unrolled 4999 times" : "a loop unrolled 5000 times",
		    i ? "written into the object the last one linked"
		      : "past the kept object's slot: linked",
		    in, g.zCommand ? g.zCommand : "", g.ok ? "" : g.zLog);
		free(loop);
		free(e2);
	}

	/* a __device__ variable in an anonymous namespace: host and device name
	 * it by nvcc's module id, a hash of the whole source, so the host
	 * object is not kept and an edit in the kernel builds whole */
	char *anon =
	    cudasrc_edit(cudasrc_seed, "__device__ float twice",
	                 "namespace {\n__device__ float one = 1.0f;\n}\n__device__ float twice");
	char *anon2 = cudasrc_edit(anon, "return 2.0f * x;", "return 2.0f * x * one;");
	compiled_check(l, a, anon, "cand.cu", 0, &g);
	int ids = module_ids(g.zSo);
	CHECK(g.ok && g.sideBySide && ids >= 2,
	      "... built side by side, the host code and the device code name it by one module "
	      "id (cicc's is cudafe++'s: %d names, all of one id)%s",
	      ids, in);
	compiled_check(l, a, anon2, "cand.cu", 0, &g);
	CHECK(g.ok && !g.deviceOnly,
	      "a __device__ variable in an anonymous namespace (named by the module id): an edit "
	      "in the kernel builds whole%s (ok %d, device only %d)",
	      in, g.ok, g.deviceOnly);
	free(anon);
	free(anon2);

	/* host code that prints its line and file (assert): the name counts */
	char *as = cudasrc_edit(cudasrc_seed, "\tint n = (int)kl_numel(&in[0]);\n",
	                        "\tint n = (int)kl_numel(&in[0]);\n\tassert(n > 0);\n");
	char *as2 = cudasrc_edit(as, "2.0f * x", "3.0f * x");
	char *as1 = cudasrc_edit(as, "#include <cuda_runtime.h>\n",
	                         "#include <assert.h>\n#include <cuda_runtime.h>\n");
	char *as3 = cudasrc_edit(as2, "#include <cuda_runtime.h>\n",
	                         "#include <assert.h>\n#include <cuda_runtime.h>\n");
	compiled_check(l, a, as1, "asrt.cu", 0, &g);
	compiled_check(l, a, as3, "asrt2.cu", 0, &g);
	int renamed = g.ok && !g.deviceOnly;
	compiled_check(l, a, as3, "asrt.cu", 0, &g);
	CHECK(renamed && g.ok && g.deviceOnly,
	      "a host assert() (its file's name in the object): a kernel edit under another "
	      "name builds whole, under the same name device-only%s",
	      in);
	free(as);
	free(as1);
	free(as2);
	free(as3);

	char *host = cudasrc_edit(cudasrc_seed, "(n + 255) / 256, 256", "(n + 127) / 128, 128");
	compiled_check(l, a, host, "cand.cu", 0, &g);
	CHECK(g.ok && !g.deviceOnly, "an edit of the host code (the block size) builds whole%s",
	      in);
	char line[32];
	snprintf(line, sizeof line, "cand.cu(%d)", CUDASRC_CALL_LINE);
	/* host code that does not compile: side by side, nvcc's own words */
	char *badHost = cudasrc_edit(host, "(n + 127) / 128, 128", "(n + 127) / 128, undefined_h");
	compiled_check(l, a, badHost, "cand.cu", 0, &g);
	char *sideLog = xstrdup(g.zLog ? g.zLog : "");
	int sideOk = g.ok;
	char *dirB = xasprintf("%s/b", zDir);
	struct compiler *b = compiler_steps(l, dirB, 0, sandboxed);
	if (b)
		compiled_check(l, b, badHost, "cand.cu", 0, &g);
	CHECK(b && !sideOk && !g.ok && strstr(sideLog, "undefined_h") && !strcmp(sideLog, g.zLog),
	      "host code that does not compile%s: the steps side by side say what nvcc alone "
	      "says, word for word (%s)",
	      in, sideLog);
	compiler_free(b);
	free(dirB);
	free(sideLog);
	free(badHost);
	char *bad =
	    cudasrc_edit(cudasrc_seed, "y[i] = twice(x[i]);", "y[i] = twice(x[i]) + undefined_z;");
	compiled_check(l, a, bad, "cand.cu", 0, &g);
	CHECK(!g.ok && g.zLog && strstr(g.zLog, "undefined_z") && strstr(g.zLog, line) && *g.zWhy,
	      "a device edit that does not compile fails with nvcc's message and line%s (%s)", in,
	      g.zWhy ? g.zWhy : "");
	/* a PyTorch extension's template kernel (against the ATen stand-in),
	 * under its own name again, as `kloop eval FILE` compiles an edited
	 * file (PyTorch's headers' macros may print the file's name: under a
	 * session's new name the edit builds whole) */
	strbuf ext = STRBUF_INIT;
	if (read_file("tests/fixtures/torchext/softmax.cu", &ext, 1 << 20, err) < 0) {
		CHECK(0, "tests/fixtures/torchext/softmax.cu: %s", err);
	} else {
		compiled_check(l, a, ext.buf, "ext.cu", 1, &g);
		CHECK(g.sideBySide &&
		          whole_same(l, zDir, "ext_alone", ext.buf, "ext.cu", 1, sandboxed, &g, 0),
		      "an extension built whole side by side%s: nvcc alone's bytes (%s)", in,
		      g.ok ? "" : g.zLog);
		char *e = cudasrc_edit(ext.buf, "s += expf((float)xr[c] - m);",
		                       "s += __expf((float)xr[c] - m);");
		compiled_check(l, a, e, "ext.cu", 1, &g);
		CHECK(g.ok && g.deviceOnly &&
		          whole_same(l, zDir, "whole_ext", e, "ext.cu", 1, sandboxed, &g, 1),
		      "an extension's template kernel edited%s: device code only, a whole build's "
		      "bytes (%s)",
		      in, g.ok ? "" : g.zLog);
		free(e);
	}
	sb_free(&ext);

	/* a CuTe kernel (CUTLASS where CUTLASS_DIR has it) */
	const char *cut = getenv("CUTLASS_DIR");
	char *h = xasprintf("%s/include/cutlass/cutlass.h", cut ? cut : "");
	strbuf cute = STRBUF_INIT;
	if (!cut || !path_is_file(h)) {
		printf(
		    "skip - a CuTe kernel's device-only build%s: no CUTLASS (set CUTLASS_DIR to a "
		    "checkout)\n",
		    in);
	} else if (read_file("tests/fixtures/cutlass/cute_sm90_small.cu", &cute, 1 << 20, err) <
	           0) {
		CHECK(0, "tests/fixtures/cutlass/cute_sm90_small.cu: %s", err);
	} else {
		compiled_check(l, a, cute.buf, "cute.cu", 0, &g);
		char *e = cudasrc_edit(cute.buf, "t(i) = 2.0f * t(i);", "t(i) = 3.0f * t(i);");
		compiled_check(l, a, e, "cute.cu", 0, &g);
		CHECK(
		    g.ok && !g.deviceOnly,
		    "a CuTe SM90 kernel edited%s: built whole (CuTe's constexpr objects are named "
		    "by the module id; ok %d, device only %d%s%s)",
		    in, g.ok, g.deviceOnly, g.ok ? "" : ": ", g.ok ? "" : g.zLog);
		free(e);
	}
	sb_free(&cute);
	free(h);
	CHECK(compiler_pending(a) == 0, "nothing left pending");
	free(host);
	free(bad);
	free(aEdit[0]);
	free(aEdit[1]);
	free(aEdit[2]);
	compiled_free(&g);
out:
	compiler_free(a);
	loop_free(l);
	free(dirA);
}

int main(void)
{
	if (system("${KLOOP_NVCC:-nvcc} --version >/dev/null 2>&1") != 0) {
		printf("skip - the staged CUDA build: nvcc is not installed (KLOOP_NVCC)\n");
		return check_done();
	}
	char dir[] = "/tmp/kloop-test-staged.XXXXXX";
	CHECK(mkdtemp(dir) != NULL, "a cache directory");
	setenv("KLOOP_INCLUDE", "include", 1);
	char *plain = xasprintf("%s/plain", dir), *boxed = xasprintf("%s/boxed", dir);
	staged(plain, 0);
	char serr[KL_ERRLEN];
	if (cand_sandbox_probe(serr) == 0)
		staged(boxed, 1);
	else
		printf("skip - the staged CUDA build in the sandbox: %s\n", serr);
	char *rm = xasprintf("rm -rf '%s'", dir);
	CHECK(system(rm) == 0, "remove the cache directory");
	free(rm);
	free(plain);
	free(boxed);
	return check_done();
}
