/*
 * state_best.c - one best for every front end (issues 25 and 39): how two
 * candidates compare (their noise, their machine code, their A/B) and the
 * candidate that holds the best, decided the way the search decides it.
 */
#include "state.h"

#include <limits.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

int state_cand_spread(const struct cand *c, double *p10, double *p90)
{
	if (c->timeMs < 0 || isnan(c->v.timing.p10Ms) || isnan(c->v.timing.p90Ms)) {
		*p10 = *p90 = -1;
		return 0;
	}
	*p10 = c->v.timing.p10Ms;
	*p90 = c->v.timing.p90Ms;
	return 1;
}

int state_same_within_noise(const struct cand *a, const struct cand *b)
{
	double a10, a90, b10, b90;
	if (!state_cand_spread(a, &a10, &a90) || !state_cand_spread(b, &b10, &b90))
		return -1;
	return a10 <= b90 && b10 <= a90;
}

static int same_str(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

int state_same_code(const struct cand *a, const struct cand *b)
{
	if (a == b)
		return 1;
	if ((a->v.sameCodeAs && a->v.sameCodeAs == b->id) ||
	    (b->v.sameCodeAs && b->v.sameCodeAs == a->id))
		return 1;
	const char *ha = a->v.zCodeHash, *hb = b->v.zCodeHash;
	return ha && hb && !strcmp(ha, hb) && same_str(a->v.zDevice, b->v.zDevice);
}

int state_faster(const struct cand *a, const struct cand *b)
{
	/* on one device both are against the session's one baseline there:
	 * the time says it, whatever a speedup was rounded to */
	const char *da = a->v.zDevice, *db = b->v.zDevice;
	if (da && db && !strcmp(da, db) && a->timeMs > 0 && b->timeMs > 0)
		return a->timeMs < b->timeMs;
	return a->speedup > b->speedup;
}

/* whether the A/B x was between a's and b's machine code, either way
 * round: 1 with a the challenger, 2 with b, 0 neither */
static int ab_of(const struct state *st, const struct state_ab *x, const struct cand *a,
                 const struct cand *b)
{
	const struct cand *ch = state_cand(st, x->cand), *in = state_cand(st, x->incumbent);
	if (!ch || !in)
		return 0;
	if (state_same_code(ch, a) && state_same_code(in, b))
		return 1;
	return state_same_code(ch, b) && state_same_code(in, a) ? 2 : 0;
}

const struct state_ab *state_ab_between(const struct state *st, const struct cand *a,
                                        const struct cand *b, const struct cand **pWinner)
{
	*pWinner = NULL;
	for (int i = st->search.nAb - 1; i >= 0; i--) {
		const struct state_ab *x = &st->search.aAb[i];
		int w = x->unverified ? 0 : ab_of(st, x, a, b);
		if (!w)
			continue;
		*pWinner = x->won && !x->failed ? (w == 1 ? a : b) : NULL;
		return x;
	}
	return NULL;
}

int state_ab_unverified(const struct state *st, const struct cand *a, const struct cand *b,
                        const struct state_ab **pLast)
{
	int n = 0;
	if (pLast)
		*pLast = NULL;
	for (int i = 0; i < st->search.nAb; i++) {
		const struct state_ab *x = &st->search.aAb[i];
		if (!x->unverified || !ab_of(st, x, a, b))
			continue;
		n++;
		if (pLast)
			*pLast = x;
	}
	return n;
}

int state_cand_competes(const struct state *st, const struct cand *c)
{
	return state_cand_rankable(st, c) && !state_search_excluded(st, c->id);
}

/* the order the verdicts came in (the order a search judged them) */
static int by_verdict(const void *x, const void *y)
{
	const struct cand *a = *(const struct cand *const *)x, *b = *(const struct cand *const *)y;
	if (a->firstEval != b->firstEval)
		return a->firstEval < b->firstEval ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

struct state_best_info state_best_info(const struct state *st)
{
	return state_best_until(st, INT_MAX);
}

static int eval_by(const struct cand *c, void *arg)
{
	return c->firstEval <= *(const int *)arg;
}

struct state_best_info state_best_until(const struct state *st, int firstEvalMax)
{
	return state_best_among(st, eval_by, &firstEvalMax);
}

struct state_best_info state_best_among(const struct state *st,
                                        int (*keep)(const struct cand *c, void *arg), void *arg)
{
	struct state_best_info r = {0};
	const struct cand **v = xmalloc(sizeof *v * (size_t)(st->nCand + 1));
	int n = 0;
	for (int i = 0; i < st->nCand; i++)
		if (keep(&st->aCand[i], arg) && state_cand_competes(st, &st->aCand[i]))
			v[n++] = &st->aCand[i];
	qsort(v, (size_t)n, sizeof *v, by_verdict);
	/* the first verdict holds the best until a later one takes it: by
	 * winning an A/B against it, or, with no A/B between them, by being
	 * faster outside its noise.  A copy (the same machine code) is the
	 * same candidate; an A/B that did not find the later one faster, or
	 * could not be run, leaves the best where it was */
	const struct cand *best = n ? v[0] : NULL, *win;
	/* then again while the best moves, by A/Bs alone: a rival judged
	 * before a new best takes it by winning an A/B against it (the search
	 * judges such a rival again, and asks for that A/B); never more passes
	 * than candidates, whatever a circle of A/Bs says */
	for (int pass = 0, moved = 1; moved && pass <= n; pass++) {
		moved = 0;
		for (int k = 0; k < n; k++) {
			const struct cand *x = v[k];
			if (state_same_code(x, best))
				continue;
			int byAb = state_ab_between(st, x, best, &win) != NULL;
			if (byAb ? win == x
			         : !pass && state_faster(x, best) &&
			               state_same_within_noise(x, best) != 1) {
				best = x;
				moved = 1;
			}
		}
	}
	/* the rivals it did not settle: within its noise with no A/B (it is
	 * unconfirmed), or found within the noise by one */
	for (int k = 0; best && k < n; k++) {
		const struct cand *y = v[k];
		if (state_same_code(y, best))
			continue;
		const struct state_ab *ab = state_ab_between(st, y, best, &win);
		if (ab && !ab->failed) {
			if (win != best && !r.abTie)
				r.abTie = y->id;
		} else if (state_same_within_noise(y, best) == 1 && !r.tie) {
			r.tie = y->id;
		}
	}
	free(v);
	r.best = best;
	r.confirmed = best && !r.tie;
	return r;
}

const struct cand *state_best(const struct state *st, int *pConfirmed, int *pTie)
{
	struct state_best_info b = state_best_info(st);
	if (pConfirmed)
		*pConfirmed = b.confirmed;
	if (pTie)
		*pTie = b.tie;
	return b.best;
}

void state_best_text(const struct state *st, char *buf, size_t n)
{
	struct state_best_info b = state_best_info(st);
	if (!b.best)
		snprintf(buf, n, "best -");
	else if (b.tie)
		snprintf(buf, n, "best %.3gx (#%d, unconfirmed: #%d within noise, no A/B)",
		         b.best->speedup, b.best->id, b.tie);
	else if (b.abTie)
		snprintf(buf, n, "best %.3gx (#%d, A/B: #%d within noise)", b.best->speedup,
		         b.best->id, b.abTie);
	else
		snprintf(buf, n, "best %.3gx (#%d)", b.best->speedup, b.best->id);
}
