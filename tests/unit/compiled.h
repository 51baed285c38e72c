/*
 * compiled.h - a candidate compiled by the compiler service (compile.h)
 * with the real compilers, the test waiting in the loop for the result:
 * for the unit tests of the compiler, its cache and sandbox, code hashes
 * and the PyTorch extensions' stand-in.
 */
#ifndef KL_TEST_COMPILED_H
#define KL_TEST_COMPILED_H

#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "compile.h"
#include "loop.h"
#include "util.h"

/* what the compiles into one struct compiled have given; {0} to start */
struct compiled {
	int n;                    /* results received */
	int ok, cached;           /* the last one's */
	int deviceOnly;           /* its device code alone was compiled (compile.h) */
	int noLink;               /* ... into the kept shared object, no link */
	int sideBySide;           /* built whole by nvcc's steps side by side */
	int prefixKept;           /* device code only, its #includes' preprocessing kept */
	char zKey[65];            /* its cache key */
	char zCode[65];           /* its code hash ("" when not ok) */
	char *zSo, *zLog, *zWhy;  /* its shared object (NULL when not ok), log, reason */
	char *zCommand;           /* its command, for people */
	unsigned long long memMb; /* the memory limit that stopped it, else 0 */
};

/* compile_done_fn: the result into arg, a struct compiled (fresh copies) */
static inline void compiled_done(struct compile_result *r, void *arg)
{
	struct compiled *g = arg;
	g->n++;
	g->ok = r->ok;
	g->cached = r->cached;
	g->deviceOnly = r->deviceOnly;
	g->noLink = r->noLink;
	g->sideBySide = r->sideBySide;
	g->prefixKept = r->prefixKept;
	memcpy(g->zKey, r->zKey, sizeof g->zKey);
	memcpy(g->zCode, r->zCodeHash, sizeof g->zCode);
	free(g->zSo);
	free(g->zLog);
	free(g->zWhy);
	free(g->zCommand);
	g->zCommand = xstrdup(r->zCommand ? r->zCommand : "");
	g->zSo = r->zSo ? xstrdup(r->zSo) : NULL;
	g->zLog = xstrdup(r->zLog ? r->zLog : "");
	g->zWhy = xstrdup(r->zWhy);
	g->memMb = r->memLimitMb;
}

/* compile zSrc as zName (its language from the name's extension: .c, .cpp
 * or .cu; torch 1: a PyTorch extension, against kloop's ATen stand-in) with
 * c, and run loop l until the result is in g (g->n counts it, g->ok says
 * whether it compiled) or 600 s have passed: by the clock, as a compiler
 * that writes much wakes the loop many times a second.  0 once submitted,
 * or -1 with err when the service refused it (the compiler is not
 * installed, say): g->ok is then 0 and g->n as it was. */
static inline int compiled_wait(struct loop *l, struct compiler *c, const char *zSrc,
                                const char *zName, int torch, struct compiled *g, char *err)
{
	int lang = compile_lang_from_name(zName), before = g->n;
	g->ok = 0;
	if (lang < 0)
		return kl_err(err, "%s: no language from its name", zName);
	struct compile_req rq = {zSrc, strlen(zSrc), (enum compile_lang)lang, zName, torch};
	if (compiler_submit(c, &rq, compiled_done, g, err) < 0)
		return -1;
	for (double t0 = now_s(); g->n == before && now_s() - t0 < 600;)
		loop_once(l, 0.1);
	return 0;
}

/* the same, for a test whose compiler is there: a refusal is a failed
 * check, "compiler_submit: " and why */
static inline void compiled_check(struct loop *l, struct compiler *c, const char *zSrc,
                                  const char *zName, int torch, struct compiled *g)
{
	char err[KL_ERRLEN];
	if (compiled_wait(l, c, zSrc, zName, torch, g, err) < 0)
		CHECK(0, "compiler_submit: %s", err);
}

/* free g's strings */
static inline void compiled_free(struct compiled *g)
{
	free(g->zSo);
	free(g->zLog);
	free(g->zWhy);
	free(g->zCommand);
	g->zSo = g->zLog = g->zWhy = g->zCommand = NULL;
}

#endif
