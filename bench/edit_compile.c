/*
 * edit_compile.c - issue 40's edit loop, its compile: the softmax CUDA
 * seed and 8 real edits inside its kernel (bench/edits/softmax_cu.json,
 * which bench/gpu/edit.sh makes in a session), each compiled R times three
 * ways by kloop's compiler service (compile.h) with the real nvcc:
 *   device  the seed's host object kept, the edit's device code alone
 *           (what a session does after the seed: hostpart.h), from the
 *           first edit on its #includes' device preprocessing kept too
 *           (compile_host.c: "#includes kept" says how often);
 *   staged  a whole build in kloop's two stages (nvcc -c, then the link),
 *           no host object kept (a fresh cache each time), nvcc -c by its
 *           own steps with the host and device halves side by side (a cold
 *           eval's build: compile_argv.c);
 *   alone   "staged" with nvcc -c as one command (KLOOP_NVCC_STEPS=0);
 *   nvcc    the one nvcc command kloop ran before (-shared, one step);
 *   sandbox "device" again in a compiler that runs nvcc in bubblewrap, as a
 *           worker's does (compiler_set_sandbox): what the sandbox adds to
 *           an edit (on an H200's host a session's compile took 0.15 s
 *           more than "device"); "-" where bwrap is not found.
 * Prints each edit's median wall seconds, whether the device build's object
 * was the whole build's byte for byte and whether it was written into the
 * shared object kept for the seed's host code ("no link", fatslot.h) or
 * linked, and the medians over the edits.
 * Usage: sh bench/edit_compile.sh [R]   (figures to bench/RESULTS.md by hand)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "compile.h"
#include "cuda_target.h"
#include "loop.h"
#include "same_file.h"
#include "util.h"

struct got {
	int done, ok, deviceOnly, noLink, sideBySide, prefixKept;
	char *zSo, *zCommand, *zLog;
};

static void got_done(struct compile_result *r, void *arg)
{
	struct got *g = arg;
	g->done = 1;
	g->noLink = r->noLink;
	g->sideBySide = r->sideBySide;
	g->prefixKept = r->prefixKept;
	g->ok = r->ok;
	g->deviceOnly = r->deviceOnly;
	g->zSo = r->zSo ? xstrdup(r->zSo) : NULL;
	g->zCommand = xstrdup(r->zCommand);
	g->zLog = xstrdup(r->zLog);
}

static void got_free(struct got *g)
{
	free(g->zSo);
	free(g->zCommand);
	free(g->zLog);
	memset(g, 0, sizeof *g);
}

/* compile zSrc with c, waiting; its wall seconds (-1: refused) */
static double compile_wait(struct loop *l, struct compiler *c, const char *zSrc, const char *zName,
                           struct got *g)
{
	char err[KL_ERRLEN];
	struct compile_req rq = {zSrc, strlen(zSrc), LANG_CUDA, zName, 0};
	memset(g, 0, sizeof *g);
	double t0 = now_s();
	if (compiler_submit(c, &rq, got_done, g, err) < 0) {
		fprintf(stderr, "edit_compile: %s\n", err);
		return -1;
	}
	while (!g->done)
		loop_once(l, 1.0);
	return now_s() - t0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* the edits (bench/edits/softmax_cu.json): each {what, from, to}, alone
 * on the seed */
struct edit {
	const char *zWhat, *zFrom, *zTo;
};
#define MAXEDITS 32

/* the edits of zPath into a (their strings in *pDoc); their number, or -1 */
static int read_edits(const char *zPath, cJSON **pDoc, struct edit *a, char *err)
{
	strbuf sb = STRBUF_INIT;
	if (read_file(zPath, &sb, 1 << 20, err) < 0)
		return -1;
	*pDoc = cJSON_Parse(sb.buf ? sb.buf : "");
	sb_free(&sb);
	const cJSON *v = cJSON_GetObjectItem(*pDoc, "edits"), *e;
	int n = 0;
	cJSON_ArrayForEach(e, v)
	{
		const char *w = cJSON_GetStringValue(cJSON_GetObjectItem(e, "what"));
		const char *f = cJSON_GetStringValue(cJSON_GetObjectItem(e, "from"));
		const char *t = cJSON_GetStringValue(cJSON_GetObjectItem(e, "to"));
		if (!w || !f || !t || n == MAXEDITS)
			return kl_err(err, "%s: edit %d is not {what, from, to} (or more than %d)",
			              zPath, n + 1, MAXEDITS);
		a[n++] = (struct edit){w, f, t};
	}
	return n ? n : kl_err(err, "%s: no \"edits\"", zPath);
}

int main(int argc, char **argv)
{
	int R = argc > 1 ? atoi(argv[1]) : 3;
	R = R < 1 ? 1 : R > 20 ? 20 : R;
	char tmp[] = "/tmp/kloop-bench-edit.XXXXXX";
	if (!mkdtemp(tmp))
		return 1;
	strbuf seed = STRBUF_INIT;
	char err[KL_ERRLEN];
	struct edit edits[MAXEDITS];
	cJSON *doc = NULL;
	int nEdits = read_edits("bench/edits/softmax_cu.json", &doc, edits, err);
	if (nEdits < 0 || read_file("tasks/softmax/seed.cu", &seed, 1 << 20, err) < 0) {
		fprintf(stderr, "edit_compile: %s\n", err);
		return 1;
	}
	struct cuda_target t = {.zName = "sm_90a", .ccMajor = 9, .ccMinor = 0};
	struct loop *l = loop_new();
	char *keptDir = xasprintf("%s/kept", tmp);
	struct compiler *kept = compiler_new(l, keptDir, 1, &t, err);
	if (!kept) {
		fprintf(stderr, "edit_compile: %s\n", err);
		return 1;
	}
	compiler_set_timeout(kept, 600);
	/* the same in a sandboxed compiler, with a host object of its own */
	char *sbDir = xasprintf("%s/sandboxed", tmp);
	struct compiler *sbx = NULL;
	struct got g, w;
	if (system("command -v bwrap >/dev/null 2>&1") == 0) {
		sbx = compiler_new(l, sbDir, 1, &t, err);
		compiler_set_sandbox(sbx, 1);
		compiler_set_timeout(sbx, 600);
		compile_wait(l, sbx, seed.buf, "cand.cu", &g);
		if (!g.ok) {
			fprintf(stderr,
			        "edit_compile: the seed did not compile in the sandbox:\n%s\n",
			        g.zLog);
			return 1;
		}
		got_free(&g);
	}
	double tSeed = compile_wait(l, kept, seed.buf, "cand.cu", &g);
	if (!g.ok) {
		fprintf(stderr, "edit_compile: the seed did not compile:\n%s\n", g.zLog);
		return 1;
	}
	/* the one-step command of before: "nvcc FLAGS -shared cand.cu -o out.so" */
	char *cut = strstr(g.zCommand, " -c cand.cu -o kl_host.o && ");
	char *flags = cut ? xstrndup(g.zCommand, (size_t)(cut - g.zCommand)) : xstrdup("nvcc");
	printf("# softmax seed.cu for sm_90a, R = %d; the seed %.2f s (%s)\n", R, tSeed,
	       g.deviceOnly ? "device only?" : "whole, two stages");
	got_free(&g);
	printf("%-32s %8s %8s %8s %8s %8s %s\n", "edit", "device", "staged", "alone", "nvcc",
	       "sandbox", "same bytes");
	double aDev[MAXEDITS], aSt[MAXEDITS], aAl[MAXEDITS], aNv[MAXEDITS], aSb[MAXEDITS];
	int nSame = 0, nDev = 0;
	for (int e = 0; e < nEdits; e++) {
		const char *at = strstr(seed.buf, edits[e].zFrom);
		if (!at) {
			fprintf(stderr, "edit_compile: edit %d does not apply\n", e);
			return 1;
		}
		char *src = xasprintf("%.*s%s%s", (int)(at - seed.buf), seed.buf, edits[e].zTo,
		                      at + strlen(edits[e].zFrom));
		/* each edit under a name of its own, as a session names it */
		char name[32];
		snprintf(name, sizeof name, "cand%d.cu", e + 2);
		double dev[20], st[20], al[20], nv[20], sb[20];
		int same = 1, onlyDev = 1, noLink = 1, pre = 0;
		for (int r = 0; r < R; r++) {
			/* device: the kept host object; the cache entry of the edit
			 * itself is removed first, so that it compiles again */
			char *rmSo = xasprintf("rm -f %s/*.so %s/*.so.sha256", keptDir, keptDir);
			(void)!system(rmSo);
			free(rmSo);
			dev[r] = compile_wait(l, kept, src, name, &g);
			onlyDev &= g.ok && g.deviceOnly;
			noLink &= g.noLink;
			pre += g.prefixKept;
			/* staged: a whole build, nothing kept */
			char *d = xasprintf("%s/whole.%d.%d", tmp, e, r);
			struct compiler *whole = compiler_new(l, d, 1, &t, err);
			compiler_set_timeout(whole, 600);
			st[r] = compile_wait(l, whole, src, name, &w);
			same &= g.ok && w.ok && same_file(g.zSo, w.zSo);
			compiler_free(whole);
			got_free(&w);
			/* alone: the same with nvcc -c as one command */
			char *da = xasprintf("%s/alone.%d.%d", tmp, e, r);
			const char *was = getenv("KLOOP_NVCC_STEPS");
			char *keep = was ? xstrdup(was) : NULL;
			setenv("KLOOP_NVCC_STEPS", "0", 1);
			struct compiler *alone = compiler_new(l, da, 1, &t, err);
			if (keep)
				setenv("KLOOP_NVCC_STEPS", keep, 1);
			else
				unsetenv("KLOOP_NVCC_STEPS");
			free(keep);
			compiler_set_timeout(alone, 600);
			al[r] = compile_wait(l, alone, src, name, &w);
			same &= w.ok && !w.sideBySide && same_file(g.zSo, w.zSo);
			compiler_free(alone);
			free(da);
			/* the one step of before */
			char *nd = xasprintf("%s/nvcc.%d.%d", tmp, e, r);
			char *f = xasprintf("%s/cand.cu", nd);
			mkdir_p(nd, err);
			write_file_atomic(f, src, strlen(src), err);
			char *cmd = xasprintf(
			    "cd %s && %s -shared cand.cu -o out.so >/dev/null 2>&1", nd, flags);
			double t0 = now_s();
			int rc = system(cmd);
			nv[r] = now_s() - t0;
			if (rc != 0)
				fprintf(stderr, "edit_compile: %s failed\n", cmd);
			free(cmd);
			free(f);
			free(nd);
			free(d);
			got_free(&g);
			got_free(&w);
			/* sandbox: "device" in bubblewrap */
			sb[r] = NAN;
			if (sbx) {
				char *rmSb =
				    xasprintf("rm -f %s/*.so %s/*.so.sha256", sbDir, sbDir);
				(void)!system(rmSb);
				free(rmSb);
				sb[r] = compile_wait(l, sbx, src, name, &g);
				onlyDev &= g.ok && g.deviceOnly;
				got_free(&g);
			}
		}
		aDev[e] = median(dev, R);
		aSt[e] = median(st, R);
		aAl[e] = median(al, R);
		aNv[e] = median(nv, R);
		aSb[e] = sbx ? median(sb, R) : NAN;
		nSame += same;
		nDev += onlyDev;
		printf("%-32s %8.3f %8.3f %8.3f %8.3f %8.3f %s%s%s, #includes kept %d of %d\n",
		       edits[e].zWhat, aDev[e], aSt[e], aAl[e], aNv[e], aSb[e], same ? "yes" : "NO",
		       onlyDev ? "" : " (not built device-only)", noLink ? ", no link" : ", linked",
		       pre, R);
		fflush(stdout);
		free(src);
	}
	printf("%-32s %8.3f %8.3f %8.3f %8.3f %8.3f %d of %d (device-only %d of %d)\n",
	       "median over the edits", median(aDev, nEdits), median(aSt, nEdits),
	       median(aAl, nEdits), median(aNv, nEdits), sbx ? median(aSb, nEdits) : NAN, nSame,
	       nEdits, nDev, nEdits);
	compiler_free(kept);
	compiler_free(sbx);
	free(sbDir);
	loop_free(l);
	char *rm = xasprintf("rm -rf %s", tmp);
	(void)!system(rm);
	free(rm);
	free(flags);
	free(keptDir);
	sb_free(&seed);
	cJSON_Delete(doc);
	return nSame == nEdits && nDev == nEdits ? 0 : 1;
}
