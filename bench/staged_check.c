/*
 * staged_check.c - the staged CUDA build's claim over many sources (every
 * .cu given): each is compiled by kloop's compiler service, then edited
 * inside its first kernel (an empty asm statement at the start of the
 * body, on the same line) and compiled again by the same service, which
 * has kept the first build's host object; a second service, which kept
 * nothing, builds the edit whole.  A line per source: whether each
 * compiled, whether the edit was built device-only, and whether its object
 * is the whole build's, byte for byte.  Exit status 1 when one is not.
 * Usage: sh bench/staged_check.sh [FILE.cu ...]   (default: every .cu of the
 * repository with a host part; needs nvcc, no GPU; CUTLASS_DIR for CuTe)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile.h"
#include "cuda_target.h"
#include "loop.h"
#include "same_file.h"
#include "util.h"

struct got {
	int done, ok, deviceOnly;
	char *zSo;
};

static void got_done(struct compile_result *r, void *arg)
{
	struct got *g = arg;
	g->done = 1;
	g->ok = r->ok;
	g->deviceOnly = r->deviceOnly;
	g->zSo = r->zSo ? xstrdup(r->zSo) : NULL;
}

/* compile zSrc as zName with c into g, waiting */
static void build(struct loop *l, struct compiler *c, const char *zSrc, const char *zName,
                  int torch, struct got *g)
{
	char err[KL_ERRLEN];
	free(g->zSo);
	memset(g, 0, sizeof *g);
	struct compile_req rq = {zSrc, strlen(zSrc), LANG_CUDA, zName, torch};
	if (compiler_submit(c, &rq, got_done, g, err) < 0) {
		fprintf(stderr, "staged_check: %s\n", err);
		return;
	}
	while (!g->done)
		loop_once(l, 1.0);
}

int main(int argc, char **argv)
{
	char tmp[] = "/tmp/kloop-staged-check.XXXXXX";
	if (!mkdtemp(tmp))
		return 1;
	struct cuda_target t = {.zName = "sm_90a", .ccMajor = 9, .ccMinor = 0};
	struct loop *l = loop_new();
	char err[KL_ERRLEN];
	int nDev = 0, nSame = 0, nWhole = 0, nFail = 0;
	for (int i = 1; i < argc; i++) {
		strbuf sb = STRBUF_INIT;
		if (read_file(argv[i], &sb, 1 << 22, err) < 0) {
			printf("%-52s %s\n", argv[i], err);
			continue;
		}
		const char *k = strstr(sb.buf, "__global__"), *brace = k ? strchr(k, '{') : NULL;
		if (!brace) {
			printf("%-52s no kernel\n", argv[i]);
			sb_free(&sb);
			continue;
		}
		int torch = strstr(sb.buf, "torch/extension.h") != NULL;
		char *edit = xasprintf("%.*s asm volatile(\"\" ::: \"memory\");%s",
		                       (int)(brace + 1 - sb.buf), sb.buf, brace + 1);
		char *dA = xasprintf("%s/%d/kept", tmp, i), *dB = xasprintf("%s/%d/whole", tmp, i);
		struct compiler *a = compiler_new(l, dA, 1, &t, err);
		struct compiler *b = a ? compiler_new(l, dB, 1, &t, err) : NULL;
		if (!a || !b) {
			fprintf(stderr, "staged_check: %s\n", err);
			return 1;
		}
		compiler_set_timeout(a, 600);
		compiler_set_timeout(b, 600);
		const char *name = strrchr(argv[i], '/') ? strrchr(argv[i], '/') + 1 : argv[i];
		struct got g = {0}, w = {0};
		build(l, a, sb.buf, name, torch, &g);
		int ok0 = g.ok;
		build(l, a, edit, name, torch, &g);
		build(l, b, edit, name, torch, &w);
		int same = g.deviceOnly && same_file(g.zSo, w.zSo);
		nDev += g.deviceOnly;
		nSame += same;
		nWhole += g.ok && !g.deviceOnly;
		nFail += g.deviceOnly && !same;
		printf("%-52s compiled %s, edited %s: %s\n", argv[i], ok0 ? "yes" : "no",
		       g.ok ? "yes" : "no",
		       !g.ok           ? "-"
		       : !g.deviceOnly ? "built whole"
		       : same          ? "device only, the whole build's bytes"
		                       : "device only, NOT the whole build's bytes");
		fflush(stdout);
		free(g.zSo);
		free(w.zSo);
		compiler_free(a);
		compiler_free(b);
		free(dA);
		free(dB);
		free(edit);
		sb_free(&sb);
	}
	printf("%d built device-only, %d of them the whole build's bytes; %d built whole\n", nDev,
	       nSame, nWhole);
	loop_free(l);
	char *rm = xasprintf("rm -rf %s", tmp);
	(void)!system(rm);
	free(rm);
	return nFail ? 1 : 0;
}
