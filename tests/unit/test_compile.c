/*
 * test_compile.c - the compiler service with the real C compiler: a
 * candidate compiles into a shared object, the same source again is a
 * cache hit under the same key (by hash, no compiler run), a changed
 * source gets another key, and a broken one fails with the compiler's
 * message and why; the compiler runs COMPILE_NICE nicer than kloop.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "compile.h"
#include "util.h"

struct got {
	int n;                   /* results received */
	int ok, cached;          /* the last one's */
	char zKey[65];           /* its cache key */
	char *zSo, *zLog, *zWhy; /* its shared object, log, reason (fresh copies) */
};

static void on_done(struct compile_result *r, void *arg)
{
	struct got *g = arg;
	g->n++;
	g->ok = r->ok;
	g->cached = r->cached;
	memcpy(g->zKey, r->zKey, sizeof g->zKey);
	free(g->zSo);
	free(g->zLog);
	free(g->zWhy);
	g->zSo = r->zSo ? xstrdup(r->zSo) : NULL;
	g->zLog = xstrdup(r->zLog ? r->zLog : "");
	g->zWhy = xstrdup(r->zWhy);
}

/* compile zSource as cand.c and wait for the result */
static void compile(struct loop *l, struct compiler *c, const char *zSource, struct got *g)
{
	char err[KL_ERRLEN];
	struct compile_req rq = {zSource, strlen(zSource), LANG_C, "cand.c"};
	int before = g->n;
	if (compiler_submit(c, &rq, on_done, g, err) < 0) {
		CHECK(0, "compiler_submit: %s", err);
		return;
	}
	for (int i = 0; i < 3000 && g->n == before; i++)
		loop_once(l, 0.1);
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
	struct got g = {0};

	compile(l, c, good, &g);
	char key[65];
	memcpy(key, g.zKey, sizeof key);
	CHECK(g.n == 1 && g.ok && !g.cached && g.zSo && path_exists(g.zSo),
	      "a candidate compiles into a shared object (%s)", g.zSo ? g.zSo : g.zWhy);

	compile(l, c, good, &g);
	CHECK(g.n == 2 && g.ok && g.cached && !strcmp(g.zKey, key),
	      "the same source again is a cache hit under the same key");

	char *other = xasprintf("%s/* another */\n", good);
	compile(l, c, other, &g);
	CHECK(g.n == 3 && g.ok && !g.cached && strcmp(g.zKey, key),
	      "a changed source has another key and is compiled");
	free(other);

	compile(l, c, "int kl_run(void) { return undefined_name; }\n", &g);
	CHECK(g.n == 4 && !g.ok && strstr(g.zLog, "undefined_name") && *g.zWhy,
	      "a broken source fails with the compiler's message (%s)", g.zWhy);
	CHECK(compiler_pending(c) == 0, "nothing left pending");
	compiler_free(c);

	/* the compiler's niceness, as a wrapper around cc sees it */
	char *wrap = xasprintf("%s/cc.sh", dir), *niceFile = xasprintf("%s/nice.txt", dir);
	char *script = xasprintf("#!/bin/sh\nnice >'%s'\nexec cc \"$@\"\n", niceFile);
	write_file_atomic(wrap, script, strlen(script), err);
	chmod(wrap, 0755);
	setenv("KLOOP_CC", wrap, 1);
	char *dir2 = xasprintf("%s/c2", dir);
	c = compiler_new(l, dir2, 1, NULL, err);
	compile(l, c, good, &g);
	unsetenv("KLOOP_CC");
	strbuf nb = STRBUF_INIT;
	read_file(niceFile, &nb, 64, err);
	int want = getpriority(PRIO_PROCESS, 0) + COMPILE_NICE;
	want = want > 19 ? 19 : want;
	CHECK(g.n == 5 && g.ok && nb.buf && atoi(nb.buf) == want,
	      "the compiler runs %d nicer than kloop (it saw %d)", COMPILE_NICE,
	      nb.buf ? atoi(nb.buf) : -1);
	sb_free(&nb);
	compiler_free(c);
	free(wrap);
	free(niceFile);
	free(script);
	free(dir2);

	loop_free(l);
	free(g.zSo);
	free(g.zLog);
	free(g.zWhy);
	char *rm = xasprintf("rm -rf '%s'", dir);
	CHECK(system(rm) == 0, "remove the cache directory");
	free(rm);
	return check_done();
}
