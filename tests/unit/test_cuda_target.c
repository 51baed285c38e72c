/*
 * test_cuda_target.c - the GPU target candidates are built for
 * (cuda_target.h): the default per compute capability, KLOOP_CUDA_ARCH's
 * spellings good and bad, nvcc's exact flag, the toolkit's fallback, the
 * compile cache key differing by target, the words for code that needs a
 * target the build lacks; with nvcc, a wgmma kernel built for sm_90a and
 * refused for sm_90; with nvcc and CUTLASS, a CuTe SM90 kernel built with
 * --libs cutlass.  No GPU is needed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cand.h"
#include "check.h"
#include "compile.h"
#include "cuda_target.h"
#include "libs.h"
#include "loop.h"
#include "proc.h"
#include "util.h"

static void default_is(int major, int minor, const char *zWant)
{
	char got[16];
	cuda_target_default(major, minor, got, sizeof got);
	CHECK(!strcmp(got, zWant), "compute capability %d.%d builds %s (got %s)", major, minor,
	      zWant, got);
}

static void parses(const char *z, const char *zWant)
{
	char got[16] = "", err[KL_ERRLEN] = "";
	int rc = cuda_target_parse(z, got, sizeof got, err);
	CHECK(rc == 0 && !strcmp(got, zWant), "KLOOP_CUDA_ARCH=%s is %s (got %s%s)", z, zWant, got,
	      err);
}

static void refused(const char *z)
{
	char got[16] = "", err[KL_ERRLEN] = "";
	int rc = cuda_target_parse(z, got, sizeof got, err);
	char want[64];
	snprintf(want, sizeof want, "KLOOP_CUDA_ARCH=%s: not a GPU target", z);
	CHECK(rc < 0 && strstr(err, want) && strstr(err, "sm_90a"),
	      "KLOOP_CUDA_ARCH='%s' is refused naming the value and the forms expected (got "
	      "rc %d, '%s')",
	      z, rc, err);
}

static void gencode_is(const char *zTarget, const char *zWant)
{
	char *g = cuda_target_gencode(zTarget);
	CHECK(!strcmp(g, zWant), "%s is built with %s (got %s)", zTarget, zWant, g);
	free(g);
}

/* a shell script at zPath answering --version and exiting with rc otherwise,
 * after printing zSay */
static void fake_nvcc(const char *zPath, int rc, const char *zSay)
{
	FILE *f = fopen(zPath, "w");
	fprintf(f,
	        "#!/bin/sh\ncase \"$*\" in *--version*) echo 'fake nvcc, release 0.0'; exit 0;; "
	        "esac\nprintf '%%s\\n' \"%s\"\nexit %d\n",
	        zSay, rc);
	fclose(f);
	chmod(zPath, 0755);
}

/* compile_one's compiles run in bubblewrap, as the worker's do */
static int sandboxed;

/* one compile through the compile path, its result kept */
struct one {
	int done, ok;
	char zKey[65], zTarget[16], zHint[512];
	char *zCommand, *zLog;
};

static void one_done(struct compile_result *r, void *arg)
{
	struct one *o = arg;
	o->done = 1;
	o->ok = r->ok;
	memcpy(o->zKey, r->zKey, sizeof o->zKey);
	memcpy(o->zTarget, r->zTarget, sizeof o->zTarget);
	memcpy(o->zHint, r->zHint, sizeof o->zHint);
	o->zCommand = xstrdup(r->zCommand);
	o->zLog = xstrdup(r->zLog);
}

/* compile zSrc (named zName) for target t (NULL: none) with libs zLibs
 * (NULL: none) under cache directory zCache into *o; 0, or -1 + err */
static int compile_one(const char *zCache, const struct cuda_target *t, const char *zLibs,
                       const char *zName, const char *zSrc, struct one *o, char *err)
{
	memset(o, 0, sizeof *o);
	err[0] = 0;
	struct loop *l = loop_new();
	struct compiler *c = compiler_new(l, zCache, 1, t, err);
	if (!c) {
		loop_free(l);
		return -1;
	}
	compiler_set_timeout(c, 600);
	compiler_set_sandbox(c, sandboxed);
	struct compile_req req = {zSrc, strlen(zSrc), LANG_CUDA, zName, 0};
	int rc = zLibs ? compiler_add_libs(c, zLibs, NULL, err) : 0;
	if (rc == 0)
		rc = compiler_submit(c, &req, one_done, o, err);
	while (rc == 0 && !o->done)
		loop_once(l, 1.0);
	compiler_free(c);
	loop_free(l);
	return rc;
}

static void one_free(struct one *o)
{
	free(o->zCommand);
	free(o->zLog);
}

static struct cuda_target target_of(int major, int minor, const char *zOverride)
{
	struct cuda_target t;
	char err[KL_ERRLEN];
	if (cuda_target_choose(&t, major, minor, zOverride, NULL, err) < 0)
		CHECK(0, "choosing a target for %d.%d (%s)", major, minor, err);
	return t;
}

static const char *wgmma_src =
    "#include \"kloop.h\"\n"
    "__global__ void k(float *p) { asm volatile(\"wgmma.fence.sync.aligned;\\n\" ::: "
    "\"memory\"); p[0] = 1; }\n"
    "extern \"C\" int kl_run(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, "
    "void *s) { k<<<1, 128, 0, (cudaStream_t)s>>>((float *)out[0].data); return 0; }\n";

static int have_nvcc(void)
{
	char *v = NULL;
	char *argv[] = {"nvcc", "--version", NULL};
	int st = proc_capture(argv, &v, 1 << 16);
	free(v);
	return st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

int main(void)
{
	char err[KL_ERRLEN];
	/* ---- the default target per compute capability ---- */
	default_is(9, 0, "sm_90a");
	default_is(10, 0, "sm_100a");
	default_is(10, 3, "sm_103a");
	default_is(12, 0, "sm_120a");
	default_is(12, 1, "sm_121a");
	default_is(8, 6, "sm_86");
	default_is(8, 9, "sm_89");
	default_is(7, 5, "sm_75");

	/* ---- KLOOP_CUDA_ARCH as people write it ---- */
	parses("sm_90", "sm_90");
	parses("sm_90a", "sm_90a");
	parses("90a", "sm_90a");
	parses("90", "sm_90");
	parses("sm90a", "sm_90a");
	parses("SM_100A", "sm_100a");
	parses("sm_100f", "sm_100f");
	parses("121a", "sm_121a");
	refused("");
	refused("sm_");
	refused("sm_9");
	refused("sm_9000");
	refused("compute_90a");
	refused("sm_90b");
	refused("sm_90a ");
	refused("090");
	refused("sm_90,sm_80");
	refused("hopper");

	/* ---- nvcc's flag ---- */
	gencode_is("sm_90a", "-gencode=arch=compute_90a,code=sm_90a");
	gencode_is("sm_100a", "-gencode=arch=compute_100a,code=sm_100a");
	gencode_is("sm_86", "-gencode=arch=compute_86,code=[sm_86,compute_86]");
	gencode_is("sm_90", "-gencode=arch=compute_90,code=[sm_90,compute_90]");

	/* ---- the choice: the default, an override, and their notes ---- */
	struct cuda_target t = target_of(9, 0, NULL);
	CHECK(!strcmp(t.zName, "sm_90a") && !t.bOverride && !t.zNote[0],
	      "a 9.0 device with no KLOOP_CUDA_ARCH builds sm_90a without a note (got %s, '%s')",
	      t.zName, t.zNote);
	t = target_of(9, 0, "90");
	CHECK(!strcmp(t.zName, "sm_90") && t.bOverride &&
	          strstr(t.zNote, "unset it to build sm_90a"),
	      "KLOOP_CUDA_ARCH=90 on a 9.0 device builds sm_90 and says what it leaves out (got "
	      "%s, '%s')",
	      t.zName, t.zNote);
	t = target_of(9, 0, "sm_100a");
	CHECK(!strcmp(t.zName, "sm_100a") && strstr(t.zNote, "this device (9.0) cannot run it"),
	      "KLOOP_CUDA_ARCH=sm_100a on a 9.0 device says the device cannot run it (got '%s')",
	      t.zNote);
	t = target_of(8, 6, NULL);
	CHECK(!strcmp(t.zName, "sm_86") && !t.zNote[0], "an 8.6 device builds sm_86 (got %s)",
	      t.zName);
	CHECK(cuda_target_choose(&t, 9, 0, "sm_9x", NULL, err) < 0 &&
	          strstr(err, "KLOOP_CUDA_ARCH=sm_9x: not a GPU target"),
	      "a bad KLOOP_CUDA_ARCH is an error naming it (got '%s')", err);
	char d[800];
	t = target_of(9, 0, NULL);
	cuda_target_describe(&t, d, sizeof d);
	CHECK(strstr(d, "sm_90a for compute capability 9.0") &&
	          strstr(d, "-gencode=arch=compute_90a,code=sm_90a"),
	      "the doctor's words name the target, the compute capability and the flag (got '%s')",
	      d);

	/* a toolkit that cannot build the arch-specific target: sm_XY, said */
	char dir[] = "/tmp/kloop-test-target.XXXXXX";
	CHECK(mkdtemp(dir) != NULL, "a scratch directory");
	char *no = path_join(dir, "nvcc-no"), *yes = path_join(dir, "nvcc-yes");
	fake_nvcc(no, 1, "nvcc fatal   : Unsupported gpu architecture 'compute_90a'");
	fake_nvcc(yes, 0, "");
	CHECK(cuda_target_choose(&t, 9, 0, NULL, no, err) == 0 && !strcmp(t.zName, "sm_90") &&
	          strstr(t.zNote, "cannot build sm_90a") && strstr(t.zNote, "built for sm_90"),
	      "where nvcc refuses sm_90a, a 9.0 device builds sm_90 and says so (got %s, '%s')",
	      t.zName, t.zNote);
	CHECK(cuda_target_choose(&t, 9, 0, NULL, yes, err) == 0 && !strcmp(t.zName, "sm_90a") &&
	          !t.zNote[0],
	      "where nvcc builds sm_90a, a 9.0 device builds it (got %s, '%s')", t.zName, t.zNote);
	char *none = path_join(dir, "no-such-nvcc");
	CHECK(cuda_target_choose(&t, 9, 0, NULL, none, err) == 0 && !strcmp(t.zName, "sm_90a") &&
	          !t.zNote[0],
	      "where nvcc is not installed, a 9.0 device keeps sm_90a (its compiles say nvcc is "
	      "missing; got %s, '%s')",
	      t.zName, t.zNote);
	free(none);
	CHECK(cuda_target_choose(&t, 8, 6, NULL, no, err) == 0 && !strcmp(t.zName, "sm_86"),
	      "an 8.6 device does not ask nvcc about an arch-specific target (got %s)", t.zName);

	/* ---- what a candidate that needs another target is told ---- */
	const char *ptxas = "ptxas /tmp/tmpxft-6_c.ptx, line 26; error   : Instruction "
	                    "'wgmma.fence' not supported on .target 'sm_90'\nptxas fatal   : Ptx "
	                    "assembly aborted due to errors\n";
	char hint[512];
	t = target_of(9, 0, "sm_90");
	CHECK(cuda_target_diagnose_compile(&t, ptxas, NULL, hint, sizeof hint) &&
	          strstr(hint, "built for sm_90 ") && strstr(hint, "compute capability 9.0") &&
	          strstr(hint, "Instruction 'wgmma.fence' not supported") &&
	          strstr(hint, "set it to sm_90a"),
	      "ptxas refusing wgmma for sm_90 (forced) names the target, the device and the fix "
	      "(got '%s')",
	      hint);
	const char *hashErr = "c.cu:2:2: error: #error \"needs sm_90a\"\n";
	const char *guarded = "#if !defined(__CUDA_ARCH_FEAT_SM90_ALL)\n#error \"needs sm_90a\"\n";
	CHECK(cuda_target_diagnose_compile(&t, hashErr, guarded, hint, sizeof hint) &&
	          strstr(hint, "#error \"needs sm_90a\""),
	      "an #error under __CUDA_ARCH_FEAT_SM90_ALL is read as a target need (got '%s')",
	      hint);
	CHECK(
	    !cuda_target_diagnose_compile(&t, hashErr, "#error \"unrelated\"\n", hint, sizeof hint),
	    "an #error of another cause is left alone");
	CHECK(!cuda_target_diagnose_compile(&t, "c.cu(3): error: identifier \"x\" is undefined\n",
	                                    NULL, hint, sizeof hint),
	      "an ordinary compile error is left alone");
	t = target_of(9, 0, "sm_100a");
	CHECK(cuda_target_diagnose_run(&t,
	                               "the run failed: no kernel image is available for execution "
	                               "on the device (cudaErrorNoKernelImageForDevice, CUDA error "
	                               "209)",
	                               hint, sizeof hint) &&
	          strstr(hint, "built for sm_100a") && strstr(hint, "compute capability 9.0") &&
	          strstr(hint, "unset KLOOP_CUDA_ARCH"),
	      "a run with no code for the device names the target, the device and the fix (got "
	      "'%s')",
	      hint);
	CHECK(cuda_target_diagnose_run(&t, "trial 1 of 5: kl_run returned 1", hint, sizeof hint) &&
	          strstr(hint, "built for sm_100a"),
	      "... also when the candidate only returned an error code (got '%s')", hint);
	t = target_of(9, 0, "sm_80");
	CHECK(!cuda_target_diagnose_run(&t, "trial 1 of 5: kl_run returned 1", hint, sizeof hint),
	      "code for sm_80 runs on a 9.0 device (its PTX): an error code is its own");
	t = target_of(9, 0, "sm_90");
	CHECK(cuda_target_diagnose_run(&t,
	                               "ERROR : Arch conditional MMA instruction used without "
	                               "targeting appropriate compute capability. Aborting.",
	                               hint, sizeof hint) &&
	          strstr(hint, "compiled out") && strstr(hint, "built for sm_90 "),
	      "CUTLASS's compiled-out kernel is named (got '%s')", hint);
	CHECK(!cuda_target_diagnose_run(&t, "trial 1 of 5: output C differs", hint, sizeof hint),
	      "a wrong answer is left alone");
	const char *unwritten = "trial 1 of 5: output C at [0, 0]: expected 1.5, got NaN (left "
	                        "unwritten? outputs are poisoned with NaN before each run)";
	CHECK(cuda_target_diagnose_run(&t, unwritten, hint, sizeof hint) &&
	          strstr(hint, "built for sm_90 and the device has compute capability 9.0") &&
	          strstr(hint, "empty body") && strstr(hint, "set it to sm_90a"),
	      "an output left unwritten by a sm_90 build on a 9.0 device names the target (got "
	      "'%s')",
	      hint);
	CHECK(cuda_target_diagnose_run(&t,
	                               "trial 1 of 5: the run failed: device-side assert triggered "
	                               "(cudaErrorAssert, CUDA error 710)",
	                               hint, sizeof hint) &&
	          strstr(hint, "built for sm_90 and") && strstr(hint, "failed assert"),
	      "so does a device-side assert (CUTLASS's guard where NDEBUG is not defined; got "
	      "'%s')",
	      hint);
	t = target_of(9, 0, NULL);
	CHECK(!cuda_target_diagnose_run(&t, unwritten, hint, sizeof hint),
	      "... and not when it was built for sm_90a");
	t = target_of(8, 6, NULL);
	CHECK(!cuda_target_diagnose_run(&t, unwritten, hint, sizeof hint),
	      "... nor on an 8.6 device, which has no arch-specific target of its own");

	/* ---- the compile path: the exact flag, the cache key, the hint ---- */
	setenv("KLOOP_INCLUDE", "include", 1);
	char *cache = path_join(dir, "cache");
	setenv("KLOOP_NVCC", no, 1);
	struct one a, b;
	struct cuda_target t90a = target_of(9, 0, NULL), t90 = target_of(9, 0, "sm_90");
	CHECK(compile_one(cache, &t90a, NULL, "c.cu", "int x;\n", &a, err) == 0 &&
	          compile_one(cache, &t90, NULL, "c.cu", "int x;\n", &b, err) == 0,
	      "two compiles through a fake nvcc (%s)", err);
	CHECK(a.zCommand && strstr(a.zCommand, " -gencode=arch=compute_90a,code=sm_90a ") &&
	          !strstr(a.zCommand, "-arch="),
	      "a sm_90a compile passes -gencode=arch=compute_90a,code=sm_90a and no -arch (got "
	      "%s)",
	      a.zCommand ? a.zCommand : "");
	CHECK(b.zCommand &&
	          strstr(b.zCommand, " -gencode=arch=compute_90,code=[sm_90,compute_90] "),
	      "a sm_90 compile passes its own -gencode (got %s)", b.zCommand ? b.zCommand : "");
	CHECK(!strcmp(a.zTarget, "sm_90a") && !strcmp(b.zTarget, "sm_90"),
	      "each result names its target (got %s, %s)", a.zTarget, b.zTarget);
	CHECK(a.zKey[0] && b.zKey[0] && strcmp(a.zKey, b.zKey),
	      "the same source's cache keys differ between sm_90a and sm_90 (%.12s, %.12s)", a.zKey,
	      b.zKey);
	one_free(&a);
	one_free(&b);
	char *refuser = path_join(dir, "nvcc-ptxas");
	fake_nvcc(refuser, 1,
	          "ptxas /tmp/x.ptx, line 26; error   : Instruction 'wgmma.fence' not supported "
	          "on .target 'sm_90'");
	setenv("KLOOP_NVCC", refuser, 1);
	CHECK(compile_one(cache, &t90, NULL, "c.cu", "int y;\n", &a, err) == 0 && !a.ok &&
	          strstr(a.zHint, "built for sm_90 and the device has compute capability 9.0") &&
	          strstr(a.zLog, "kloop: the code needs a GPU target this build lacks"),
	      "a compile refused for want of sm_90a says so in its hint and its log (hint '%s')",
	      a.zHint);
	one_free(&a);
	/* a source that includes CUTLASS, where there is none: said before nvcc runs */
	char *saved = getenv("CUTLASS_DIR") ? xstrdup(getenv("CUTLASS_DIR")) : NULL;
	setenv("CUTLASS_DIR", "/nonexistent/cutlass", 1);
	CHECK(compile_one(cache, &t90a, NULL, "c.cu", "#include \"cutlass/cutlass.h\"\n", &a,
	                  err) == 0 &&
	          !a.ok && strstr(a.zLog, "c.cu includes CUTLASS or CuTe headers") &&
	          strstr(a.zLog,
	                 "CUTLASS_DIR=/nonexistent/cutlass holds no include/cutlass/cutlass.h"),
	      "a source that includes CUTLASS where it is not found fails naming CUTLASS_DIR%s%s",
	      a.ok ? "" : ": ", a.zLog && !strstr(a.zLog, "CUTLASS_DIR=/non") ? a.zLog : "");
	one_free(&a);
	if (saved)
		setenv("CUTLASS_DIR", saved, 1);
	else
		unsetenv("CUTLASS_DIR");
	free(saved);
	unsetenv("KLOOP_NVCC");

	/* ---- the real nvcc: wgmma builds for sm_90a, not for sm_90 ---- */
	if (!have_nvcc()) {
		printf(
		    "skip - nvcc is not installed: the wgmma and CUTLASS compiles are not tried\n");
		free(no), free(yes), free(refuser), free(cache);
		return check_done();
	}
	CHECK(compile_one(cache, &t90a, NULL, "wgmma.cu", wgmma_src, &a, err) == 0 && a.ok,
	      "nvcc builds a wgmma kernel for sm_90a (%s%s)", err, a.ok ? "" : a.zLog);
	one_free(&a);
	CHECK(compile_one(cache, &t90, NULL, "wgmma.cu", wgmma_src, &a, err) == 0 && !a.ok &&
	          strstr(a.zHint, "built for sm_90 and the device has compute capability 9.0") &&
	          strstr(a.zHint, "wgmma.fence"),
	      "nvcc refuses it for sm_90 and kloop names the target and the device (hint '%s')",
	      a.zHint);
	one_free(&a);

	/* ---- CUTLASS: a CuTe SM90 kernel through --libs cutlass ---- */
	struct libs L = {0};
	if (libs_add(&L, "cutlass", NULL, err) < 0) {
		printf("skip - CUTLASS is not here (set CUTLASS_DIR to a checkout): the CuTe "
		       "compile is not tried\n");
		libs_free(&L);
		free(no), free(yes), free(refuser), free(cache);
		return check_done();
	}
	libs_free(&L);
	strbuf src = STRBUF_INIT;
	CHECK(read_file("tests/fixtures/cutlass/cute_sm90_small.cu", &src, 1 << 20, err) == 0,
	      "the CuTe fixture (%s)", err);
	CHECK(compile_one(cache, &t90a, "cutlass", "cute_sm90_small.cu", src.buf, &a, err) == 0 &&
	          a.ok,
	      "a CuTe SM90 kernel builds with --libs cutlass for sm_90a (%s%s)", err,
	      a.ok ? "" : a.zLog);
	CHECK(a.zCommand && strstr(a.zCommand, "/cutlass/include") &&
	          strstr(a.zCommand, "--expt-relaxed-constexpr") &&
	          strstr(a.zCommand, "-std=c++17"),
	      "--libs cutlass gives CUTLASS's include directory, --expt-relaxed-constexpr and "
	      "C++17 (got %s)",
	      a.zCommand ? a.zCommand : "");
	one_free(&a);
	/* without --libs: a source that includes CUTLASS gets it (in the
	 * compilers' sandbox where bubblewrap runs: CUTLASS is seen there) */
	char serr[KL_ERRLEN];
	sandboxed = cand_sandbox_probe(serr) == 0;
	CHECK(
	    compile_one(cache, &t90a, NULL, "inc.cu",
	                "#include <cutlass/version.h>\n#include \"kloop.h\"\n"
	                "extern \"C\" int kl_run(const kl_tensor *i, int ni, kl_tensor *o, int no, "
	                "void *s) { return CUTLASS_MAJOR < 3; }\n",
	                &a, err) == 0 &&
	        a.ok && strstr(a.zCommand, "/cutlass/include") &&
	        strstr(a.zCommand, "--expt-relaxed-constexpr"),
	    "a source that includes <cutlass/...> builds with CUTLASS and no --libs%s (%s%s)",
	    sandboxed ? ", in the sandbox" : "", err, a.ok ? "" : a.zLog);
	sandboxed = 0;
	one_free(&a);
	sb_free(&src);
	free(no);
	free(yes);
	free(refuser);
	free(cache);
	return check_done();
}
