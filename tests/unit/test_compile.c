/*
 * test_compile.c - the compiler service with the real C compiler: a
 * candidate compiles into a shared object, the same source again is a
 * cache hit under the same key (by hash, no compiler run), a changed
 * source gets another key, and a broken one fails with the compiler's
 * message and why; the compiler runs COMPILE_NICE nicer than kloop.  The
 * memory a compile may hold (compile_mem_rule) on the machines kloop meets,
 * and a compile stopped by that limit (#include "/dev/zero", by cc and,
 * where it is installed, nvcc: no GPU needed) says so as its reason.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "compile.h"
#include "compiled.h"
#include "diagfold.h"
#include "util.h"

/* the rule for f gives want MiB */
static void rule_is(const char *zWhat, struct compile_mem_facts f, unsigned long long want,
                    const char *zHowHas)
{
	char how[300];
	unsigned long long got = compile_mem_rule(&f, how, sizeof how);
	CHECK(got == want && strstr(how, zHowHas), "%s: %llu MiB (got %llu MiB: %s)", zWhat, want,
	      got, how);
}

static void mem_rule(void)
{
	/* (cgroup limit, MemTotal, MemAvailable, compiles at once, the variable) */
	rule_is("a GPU VM whose memory grows (cgroup 128 GiB, MemTotal 31 GiB), 16 compiles",
	        (struct compile_mem_facts){131072, 31744, 30720, 16, NULL}, 8192,
	        "the cgroup's limit 131072 MiB, 130048 MiB of it available, 16 compiles");
	rule_is("the same VM once grown (MemTotal 126 GiB: the old rule's 4027 MiB)",
	        (struct compile_mem_facts){0, 128864, 120000, 16, NULL}, 8192, "MemTotal");
	rule_is("the same VM at its start with no cgroup limit (MemTotal 31 GiB)",
	        (struct compile_mem_facts){0, 31744, 30720, 16, NULL}, 8192, "MemTotal 31744");
	rule_is("a 512 GiB host, 4 compiles: half of it shared",
	        (struct compile_mem_facts){0, 524288, 524288, 4, NULL}, 65536, "4 compiles");
	rule_is("a container of 4 GiB on a 64 GiB host: half its limit",
	        (struct compile_mem_facts){4096, 65536, 60000, 2, NULL}, 2048,
	        "the cgroup's limit 4096");
	rule_is("a 24 GiB VM, 2 compiles", (struct compile_mem_facts){0, 24104, 23683, 2, NULL},
	        8192, "23683 MiB of it available");
	rule_is("a 64 GiB host with all but 4 GiB held by others: half of those 4",
	        (struct compile_mem_facts){0, 65536, 4096, 2, NULL}, 2048,
	        "4096 MiB of it available");
	rule_is("a 3000 MiB machine: half of it",
	        (struct compile_mem_facts){0, 3000, 2500, 2, NULL}, 1500, "MemTotal 3000");
	rule_is("nothing known: 2 GiB", (struct compile_mem_facts){0, 0, 0, 2, NULL}, 2048,
	        "unknown");
	rule_is("KLOOP_COMPILE_MEM_MB=300 wins",
	        (struct compile_mem_facts){131072, 31744, 30720, 16, "300"}, 300,
	        "KLOOP_COMPILE_MEM_MB=300");
	rule_is("KLOOP_COMPILE_MEM_MB=lots is ignored, and the rule says so",
	        (struct compile_mem_facts){0, 24104, 23683, 2, "lots"}, 8192,
	        "KLOOP_COMPILE_MEM_MB=lots is not a positive number of MiB: ignored");
	rule_is("KLOOP_COMPILE_MEM_MB=-5 is ignored",
	        (struct compile_mem_facts){0, 24104, 23683, 2, "-5"}, 8192, "ignored");
}

/* a compile of /dev/zero under a 300 MiB limit, as zName by the compiler
 * service c (with a kernel after it where kernel is 1: a CUDA source built
 * in two stages, nvcc's steps side by side): stopped by the limit, which
 * its reason names */
static void dev_zero(struct loop *l, struct compiler *c, const char *zName, int kernel,
                     struct compiled *g)
{
	setenv("KLOOP_COMPILE_MEM_MB", "300", 1);
	compiled_check(l, c,
	               kernel
	                   ? "#include \"/dev/zero\"\n__global__ void k(float *p) { p[0] = 1; }\n"
	                     "int kl_run(void) { k<<<1, 1>>>(0); return 0; }\n"
	                   : "#include \"/dev/zero\"\nint kl_run(void) { return 0; }\n",
	               zName, 0, g);
	unsetenv("KLOOP_COMPILE_MEM_MB");
	const char *want = "the compile reached its memory limit of 300 MiB (KLOOP_COMPILE_MEM_MB)";
	CHECK(!g->ok && g->memMb == 300 && !strcmp(g->zWhy, want),
	      "%s of #include \"/dev/zero\" under KLOOP_COMPILE_MEM_MB=300: \"%s\" (got ok %d, "
	      "limit %llu, \"%s\")",
	      zName, want, g->ok, g->memMb, g->zWhy ? g->zWhy : "");
	const char *note =
	    g->zLog && strstr(g->zLog, "kloop:") ? strstr(g->zLog, "kloop:") : "none";
	CHECK(g->zLog &&
	          strstr(g->zLog, "kloop: the compile reached its memory limit of 300 MiB") &&
	          strstr(g->zLog, "KLOOP_COMPILE_MEM_MB=300"),
	      "its log says so too, and what set the limit (%.*s)", (int)strcspn(note, "\n"), note);
}

static const char *good =
    "#include \"kloop.h\"\n"
    "int kl_run(const kl_tensor *in, int n_in, kl_tensor *out, int n_out,\n"
    "           void *stream)\n"
    "{ (void)in; (void)n_in; (void)out; (void)n_out; (void)stream; return 0; }\n";

int main(void)
{
	char dir[] = "/tmp/kloop-test-compile.XXXXXX";
	char err[KL_ERRLEN];
	CHECK(mkdtemp(dir) != NULL, "a cache directory");
	setenv("KLOOP_INCLUDE", "include", 1);
	struct loop *l = loop_new();
	struct compiler *c = compiler_new(l, dir, 2, NULL, err);
	CHECK(c != NULL, "a compiler service with cc (%s)", c ? "" : err);
	if (!c)
		return check_done();
	struct compiled g = {0};

	compiled_check(l, c, good, "cand.c", 0, &g);
	char key[65];
	memcpy(key, g.zKey, sizeof key);
	CHECK(g.n == 1 && g.ok && !g.cached && g.zSo && path_exists(g.zSo),
	      "a candidate compiles into a shared object (%s)", g.zSo ? g.zSo : g.zWhy);

	compiled_check(l, c, good, "cand.c", 0, &g);
	CHECK(g.n == 2 && g.ok && g.cached && !strcmp(g.zKey, key),
	      "the same source again is a cache hit under the same key");

	char *other = xasprintf("%s/* another */\n", good);
	compiled_check(l, c, other, "cand.c", 0, &g);
	CHECK(g.n == 3 && g.ok && !g.cached && strcmp(g.zKey, key),
	      "a changed source has another key and is compiled");
	free(other);

	compiled_check(l, c, "int kl_run(void) { return undefined_name; }\n", "cand.c", 0, &g);
	CHECK(g.n == 4 && !g.ok && strstr(g.zLog, "undefined_name") && *g.zWhy,
	      "a broken source fails with the compiler's message (%s)", g.zWhy);
	CHECK(compiler_pending(c) == 0, "nothing left pending");
	dev_zero(l, c, "zero.c", 0, &g);

	/* 12000 unused variables x: gcc's 2 MB of warnings, its first MiB kept,
	 * and that one warning folded into a line (diagfold.h) */
	strbuf big = STRBUF_INIT;
	sb_adds(&big, "int kl_run(void)\n{\n");
	for (int i = 0; i < 12000; i++)
		sb_adds(&big, "\t{ int x; }\n");
	sb_adds(&big, "\treturn 0;\n}\n");
	compiled_check(l, c, big.buf, "cand.c", 0, &g);
	const char *cut = g.zLog ? strstr(g.zLog, "kloop: ") : NULL;
	CHECK(g.ok && g.zLog && strlen(g.zLog) < (1 << 20) + 8192 && cut &&
	          strstr(cut, "more bytes of the compiler's output were not kept (its first 1 MiB "
	                      "are)"),
	      "a 2 MB log: its first MiB kept, and it says how much was not (%zu bytes; %.*s)",
	      g.zLog ? strlen(g.zLog) : 0, cut ? (int)strcspn(cut, "\n") : 4, cut ? cut : "none");
	char *folded = diag_fold(g.zLog ? g.zLog : "");
	CHECK(strlen(folded) < 2048 && strstr(folded, "[-Wunused-variable] (") &&
	          strstr(folded, " times; first at cand.c:3:15)"),
	      "folded, it is a few lines (%zu bytes: %.*s)", strlen(folded),
	      (int)strcspn(folded, "\n"), folded);
	free(folded);
	sb_free(&big);
	compiler_free(c);

	/* nvcc, compile only: its host compiler's preprocessor reads /dev/zero */
	if (system("${KLOOP_NVCC:-nvcc} --version >/dev/null 2>&1") != 0) {
		printf("skip - a CUDA compile stopped by its memory limit: nvcc is not installed "
		       "(KLOOP_NVCC)\n");
	} else {
		char *dirCu = xasprintf("%s/cu", dir);
		struct cuda_target t90 = {.zName = "sm_90", .ccMajor = 9, .ccMinor = 0};
		c = compiler_new(l, dirCu, 1, &t90, err);
		CHECK(c != NULL, "a compiler service with nvcc (%s)", c ? "" : err);
		if (c)
			dev_zero(l, c, "zero.cu", 0, &g);
		/* with a kernel: a whole build in two stages, whose host and
		 * device halves run side by side; killed there, nvcc alone */
		if (c) {
			dev_zero(l, c, "zerok.cu", 1, &g);
			CHECK(g.zLog && strstr(g.zLog, "nvcc compiles alone"),
			      "... a kernel's source too, where nvcc's halves side by side were "
			      "stopped first and nvcc alone was tried (%s)",
			      g.zLog ? g.zLog : "");
		}
		compiler_free(c);
		free(dirCu);
	}
	mem_rule();

	/* the compiler's niceness, as a wrapper around cc sees it */
	char *wrap = xasprintf("%s/cc.sh", dir), *niceFile = xasprintf("%s/nice.txt", dir);
	char *script = xasprintf("#!/bin/sh\nnice >'%s'\nexec cc \"$@\"\n", niceFile);
	write_file_atomic(wrap, script, strlen(script), err);
	chmod(wrap, 0755);
	setenv("KLOOP_CC", wrap, 1);
	char *dir2 = xasprintf("%s/c2", dir);
	c = compiler_new(l, dir2, 1, NULL, err);
	int nBefore = g.n;
	compiled_check(l, c, good, "cand.c", 0, &g);
	unsetenv("KLOOP_CC");
	strbuf nb = STRBUF_INIT;
	read_file(niceFile, &nb, 64, err);
	int want = getpriority(PRIO_PROCESS, 0) + COMPILE_NICE;
	want = want > 19 ? 19 : want;
	CHECK(g.n == nBefore + 1 && g.ok && nb.buf && atoi(nb.buf) == want,
	      "the compiler runs %d nicer than kloop (it saw %d)", COMPILE_NICE,
	      nb.buf ? atoi(nb.buf) : -1);
	sb_free(&nb);
	compiler_free(c);
	free(wrap);
	free(niceFile);
	free(script);
	free(dir2);

	loop_free(l);
	compiled_free(&g);
	char *rm = xasprintf("rm -rf '%s'", dir);
	CHECK(system(rm) == 0, "remove the cache directory");
	free(rm);
	return check_done();
}
