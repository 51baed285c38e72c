/*
 * sweep.c - sweep points over a source's tunables: the allowed values of
 * each, one-at-a-time and pairwise grids, seeded random samples.
 */
#include "sweep.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rng.h"
#include "syntax.h"
#include "util.h"

static int pow2(long long v)
{
	return v >= 2 && v <= 4096 && (v & (v - 1)) == 0;
}

int sweep_values(const struct tunable *t, long long *out)
{
	long long lo = 1, hi = 4096;
	switch (t->kind) {
	case TUNABLE_LAUNCH_BLOCK:
		lo = 32, hi = 1024;
		break;
	case TUNABLE_LAUNCH_BOUNDS:
		if (strstr(t->name, ".min_blocks"))
			return 0;
		lo = 32, hi = 1024;
		break;
	case TUNABLE_DIM3:
		hi = 1024;
		break;
	case TUNABLE_LAUNCH_GRID:
	case TUNABLE_LAUNCH_SMEM:
		return 0;
	default:
		break;
	}
	if (!pow2(t->value))
		return 0;
	static const int shift[] = {-2, -1, 1, 2};
	int n = 0;
	for (int i = 0; i < 4; i++) {
		long long v = shift[i] < 0 ? t->value >> -shift[i] : t->value << shift[i];
		if (v >= lo && v <= hi && v != t->value)
			out[n++] = v;
	}
	return n;
}

/* the swept tunables of src and their values */
struct axis {
	const struct tunable *t;
	long long aVal[SWEEP_MAX_VALUES];
	int nVal;
};

static int has_source(const struct sweep_list *l, const char *z, const char *src)
{
	if (!strcmp(z, src))
		return 1;
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->v[i].zSource, z))
			return 1;
	return 0;
}

/* add the point for sets (a rewrite that fails or repeats is left out) */
static void add_point(struct sweep_list *l, size_t *alloc, const char *src, size_t n,
                      const struct tunable_set *sets, size_t nsets)
{
	char err[KL_ERRLEN];
	size_t len;
	char *z = tunables_rewrite(src, n, sets, nsets, &len, err);
	if (!z)
		return;
	if (has_source(l, z, src)) {
		free(z);
		return;
	}
	strbuf lab = STRBUF_INIT;
	for (size_t i = 0; i < nsets; i++)
		sb_addf(&lab, "%s%s=%lld", i ? " " : "", sets[i].name, sets[i].value);
	xgrow((void **)&l->v, alloc, l->n + 1, sizeof *l->v);
	l->v[l->n++] = (struct sweep_point){z, sb_detach(&lab)};
}

int sweep_points(const char *src, size_t n, const char *zMode, uint64_t seed, int maxPoints,
                 struct sweep_list *out, char *err)
{
	memset(out, 0, sizeof *out);
	int grid = !strcmp(zMode, "grid");
	if (!grid && strcmp(zMode, "random"))
		return kl_err(err, "unknown sweep mode '%s' (expected grid or random)", zMode);
	struct syntax_doc *d = syntax_parse(src, n, err);
	if (!d)
		return -1;
	struct tunable_list tl = {0};
	if (tunables_find(d, &tl, err) < 0) {
		tunables_free(&tl);
		syntax_free(d);
		return -1;
	}
	struct axis *ax = xcalloc(tl.n + 1, sizeof *ax);
	int nAx = 0;
	for (size_t i = 0; i < tl.n; i++) {
		ax[nAx].t = &tl.v[i];
		ax[nAx].nVal = sweep_values(&tl.v[i], ax[nAx].aVal);
		if (ax[nAx].nVal)
			nAx++;
	}
	size_t alloc = 0;
	int tries = 0;
	if (grid) {
		for (int a = 0; a < nAx && (int)out->n < maxPoints; a++)
			for (int k = 0; k < ax[a].nVal && (int)out->n < maxPoints; k++) {
				struct tunable_set s = {ax[a].t->name, ax[a].aVal[k]};
				add_point(out, &alloc, src, n, &s, 1);
			}
		for (int a = 0; a < nAx && (int)out->n < maxPoints; a++)
			for (int b = a + 1; b < nAx && (int)out->n < maxPoints; b++)
				for (int i = 0; i < ax[a].nVal && (int)out->n < maxPoints; i++)
					for (int k = 0; k < ax[b].nVal && (int)out->n < maxPoints;
					     k++) {
						struct tunable_set s[2] = {
						    {ax[a].t->name, ax[a].aVal[i]},
						    {ax[b].t->name, ax[b].aVal[k]}};
						add_point(out, &alloc, src, n, s, 2);
					}
	} else if (nAx) {
		struct rng r;
		rng_seed(&r, seed);
		struct tunable_set *s = xcalloc((size_t)nAx, sizeof *s);
		/* draws that repeat a point are retried a bounded number of times */
		while ((int)out->n < maxPoints && tries++ < maxPoints * 8) {
			size_t ns = 0;
			for (int a = 0; a < nAx; a++) {
				int k = (int)(rng_next(&r) % (uint64_t)(ax[a].nVal + 1));
				if (k < ax[a].nVal)
					s[ns++] =
					    (struct tunable_set){ax[a].t->name, ax[a].aVal[k]};
			}
			if (ns)
				add_point(out, &alloc, src, n, s, ns);
		}
		free(s);
	}
	free(ax);
	tunables_free(&tl);
	syntax_free(d);
	return 0;
}

void sweep_free(struct sweep_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].zSource);
		free(l->v[i].zLabel);
	}
	free(l->v);
	memset(l, 0, sizeof *l);
}
