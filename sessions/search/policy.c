/*
 * policy.c - the selection policies of a search (islands, greedy, random)
 * and what they share: eligibility, a stable order, the pin.
 */
#include "policy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sha256.h"
#include "util.h"

/* splitmix64: a small generator whose whole state is one word */
static uint64_t next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static double uniform(uint64_t *s)
{
	return (double)(next(s) >> 11) / 9007199254740992.0;
}

int policy_eligible(const struct state *st, const struct cand *c)
{
	return state_cand_rankable(st, c) && c->timeMs > 0;
}

int policy_visible(const struct policy_ctx *ctx, const struct cand *c)
{
	return ctx->through < 0 || c->round <= ctx->through;
}

/* the children of id the snapshot holds */
static int children(const struct policy_ctx *ctx, int id)
{
	const struct state *st = ctx->st;
	int n = 0;
	for (int i = 0; i < st->nCand; i++)
		for (int k = 0; k < st->aCand[i].nParent; k++)
			n += st->aCand[i].aParent[k] == id && policy_visible(ctx, &st->aCand[i]);
	return n;
}

static int busy(const struct policy_ctx *ctx, int id)
{
	for (int i = 0; i < ctx->nBusy; i++)
		if (ctx->aBusy[i] == id)
			return 1;
	return 0;
}

/* the island of candidate id: its ancestor one below the root */
int policy_island(const struct state *st, int id)
{
	const struct cand *c = state_cand(st, id);
	int below = id;
	for (int guard = 0; c && c->nParent && guard < 100000; guard++) {
		const struct cand *p = state_cand(st, c->aParent[0]);
		if (!p)
			break;
		below = c->id;
		c = p;
	}
	return c && c->nParent == 0 && below != c->id ? below : c ? c->id : id;
}

static int picked(const struct policy_pick *out, int n, int id)
{
	for (int i = 0; i < n; i++)
		if (out[i].cand == id)
			return 1;
	return 0;
}

static int choose_greedy(const struct policy_ctx *ctx, const int *aElig, int nElig, int k,
                         uint64_t *rng, struct policy_pick *out)
{
	(void)rng;
	int n = 0;
	while (n < k) {
		const struct cand *best = NULL;
		for (int i = 0; i < nElig; i++) {
			const struct cand *c = state_cand(ctx->st, aElig[i]);
			if (!picked(out, n, c->id) && (!best || c->speedup > best->speedup))
				best = c;
		}
		if (!best)
			break;
		out[n].cand = best->id;
		snprintf(out[n].zReason, sizeof out[n].zReason, "the %s eligible candidate (%.3gx)",
		         n ? "next fastest" : "fastest", best->speedup);
		n++;
	}
	return n;
}

static int choose_random(const struct policy_ctx *ctx, const int *aElig, int nElig, int k,
                         uint64_t *rng, struct policy_pick *out)
{
	int n = 0, left = nElig;
	int *a = xmalloc(sizeof *a * (size_t)(nElig + 1));
	memcpy(a, aElig, sizeof *a * (size_t)nElig);
	while (n < k && left > 0) {
		int j = (int)(next(rng) % (uint64_t)left);
		const struct cand *c = state_cand(ctx->st, a[j]);
		a[j] = a[--left];
		out[n].cand = c->id;
		snprintf(out[n].zReason, sizeof out[n].zReason,
		         "drawn at random from %d eligible candidates (%.3gx)", nElig, c->speedup);
		n++;
	}
	free(a);
	return n;
}

static int choose_islands(const struct policy_ctx *ctx, const int *aElig, int nElig, int k,
                          uint64_t *rng, struct policy_pick *out)
{
	const struct state *st = ctx->st;
	/* the islands, in order of their best speedup */
	int *aIsl = xmalloc(sizeof *aIsl * (size_t)(nElig + 1));
	double *aBest = xmalloc(sizeof *aBest * (size_t)(nElig + 1));
	int nIsl = 0;
	for (int i = 0; i < nElig; i++) {
		const struct cand *c = state_cand(st, aElig[i]);
		int is = policy_island(st, c->id), j;
		for (j = 0; j < nIsl && aIsl[j] != is; j++)
			;
		if (j == nIsl) {
			aIsl[nIsl] = is;
			aBest[nIsl++] = c->speedup;
		} else if (c->speedup > aBest[j]) {
			aBest[j] = c->speedup;
		}
	}
	for (int i = 1; i < nIsl; i++)
		for (int j = i; j > 0 && aBest[j] > aBest[j - 1]; j--) {
			double tb = aBest[j];
			aBest[j] = aBest[j - 1], aBest[j - 1] = tb;
			int ti = aIsl[j];
			aIsl[j] = aIsl[j - 1], aIsl[j - 1] = ti;
		}
	int n = 0;
	for (int round = 0; n < k && round < k; round++) {
		int before = n;
		for (int r = 0; r < nIsl && n < k; r++) {
			/* the island's best and its least explored, not yet picked */
			const struct cand *best = NULL, *least = NULL;
			int leastKids = 0;
			for (int i = 0; i < nElig; i++) {
				const struct cand *c = state_cand(st, aElig[i]);
				if (policy_island(st, c->id) != aIsl[r] || picked(out, n, c->id))
					continue;
				int kids = children(ctx, c->id);
				if (!best || c->speedup > best->speedup)
					best = c;
				if (!least || kids < leastKids)
					least = c, leastKids = kids;
			}
			if (!best)
				continue;
			int explore = least != best && uniform(rng) < 0.25;
			const struct cand *c = explore ? least : best;
			out[n].cand = c->id;
			if (explore)
				snprintf(out[n].zReason, sizeof out[n].zReason,
				         "island %d (rank %d of %d): its least explored candidate "
				         "(%d children, %.3gx) by the 1-in-4 exploration draw",
				         aIsl[r], r + 1, nIsl, leastKids, c->speedup);
			else
				snprintf(out[n].zReason, sizeof out[n].zReason,
				         "island %d (rank %d of %d): its best candidate (%.3gx, %d "
				         "children)",
				         aIsl[r], r + 1, nIsl, c->speedup, children(ctx, c->id));
			n++;
		}
		if (n == before)
			break;
	}
	free(aIsl);
	free(aBest);
	return n;
}

const struct policy policy_table[] = {
    {"islands", "several lineages kept alive: each island's best, sometimes its least explored",
     choose_islands},
    {"greedy", "the fastest eligible candidates", choose_greedy},
    {"random", "eligible candidates drawn uniformly", choose_random},
    {NULL, NULL, NULL},
};

const struct policy *policy_find(const char *zName)
{
	for (const struct policy *p = policy_table; p->zName; p++)
		if (!strcmp(p->zName, zName))
			return p;
	return NULL;
}

const char *policy_names(void)
{
	return "islands, greedy, random";
}

struct keyed {
	int id;
	char zKey[65];
};

static int cmp_keyed(const void *a, const void *b)
{
	return strcmp(((const struct keyed *)a)->zKey, ((const struct keyed *)b)->zKey);
}

int policy_choose(const struct policy *pol, const struct policy_ctx *ctx, int k,
                  struct policy_pick *out)
{
	const struct state *st = ctx->st;
	if (k > POLICY_MAX_PICKS)
		k = POLICY_MAX_PICKS;
	int n = 0;
	const struct cand *pin = ctx->pinned ? state_cand(st, ctx->pinned) : NULL;
	if (pin && k > 0 && (!ctx->excluded || !ctx->excluded(st, pin->id)) &&
	    policy_eligible(st, pin)) {
		out[n].cand = pin->id;
		snprintf(out[n].zReason, sizeof out[n].zReason, "pinned by a person (%.3gx)",
		         pin->speedup);
		n++;
	}
	struct keyed *a = xmalloc(sizeof *a * (size_t)(st->nCand + 1));
	int na = 0;
	for (int i = 0; i < st->nCand; i++) {
		const struct cand *c = &st->aCand[i];
		/* the same machine code as an earlier candidate (not timed again,
		 * issue 11): that one stands for it */
		if (!policy_eligible(st, c) || (ctx->excluded && ctx->excluded(st, c->id)) ||
		    (pin && c->id == pin->id) || c->v.sameCodeAs || !policy_visible(ctx, c) ||
		    busy(ctx, c->id))
			continue;
		struct sha256 h;
		sha256_init(&h);
		sha256_update(&h, c->zSource, strlen(c->zSource));
		a[na].id = c->id;
		sha256_hex(&h, a[na].zKey);
		na++;
	}
	qsort(a, (size_t)na, sizeof *a, cmp_keyed);
	int *ids = xmalloc(sizeof *ids * (size_t)(na + 1));
	for (int i = 0; i < na; i++)
		ids[i] = a[i].id;
	uint64_t rng = ctx->seed * 0x100000001b3ull + (uint64_t)ctx->round;
	if (k > n)
		n += pol->choose(ctx, ids, na, k - n, &rng, out + n);
	free(ids);
	free(a);
	return n;
}
