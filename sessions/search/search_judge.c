/*
 * search_judge.c - the search's verdicts judged (a new best only beyond
 * the noise and after an A/B, implausible speedups held as suspects) and
 * its budgets (what may still start, why it stops).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search_priv.h"
#include "policy.h"
#include "task.h"

/* ---- judging verdicts ---- */

int search_final(const struct cand *c)
{
	return status_finished(c->status);
}

/* the time a challenger's median must beat to unseat incumbent c: its
 * 10th-percentile time, and at least 2% below its median */
static double low_time(const struct cand *c)
{
	double p10 = c->v.timing.p10Ms, t = c->timeMs * 0.98;
	if (p10 > 0 && p10 < t)
		t = p10;
	return t;
}

/* the bytes a run must move at least: every input read, every output
 * written once (0 without a task) */
static double min_bytes(const struct search *s)
{
	const struct task *t = driver_task(s->drv);
	double b = 0;
	for (int i = 0; t && i < t->nIn; i++)
		b += (double)task_numel(&t->aIn[i]) * (double)task_dtype_size(t->aIn[i].dtype);
	for (int i = 0; t && i < t->nOut; i++)
		b += (double)task_numel(&t->aOut[i]) * (double)task_dtype_size(t->aOut[i].dtype);
	return b;
}

/* the share of the device's limit c's time reaches (its roofline's
 * "fraction", roofline.h), 0 when unknown */
static double roof_of(const struct cand *c)
{
	return c && !isnan(c->v.roofline.fraction) ? c->v.roofline.fraction : 0;
}

/* the HBM bandwidth in GB/s: the setting, else what the workers' GPU reports
 * (0: unknown) */
static double bandwidth(const struct search *s)
{
	double bw = OPT(s)->bandwidth_gbs;
	return bw > 0 ? bw : driver_bandwidth_gbs(s->drv);
}

/* why candidate c's time is implausible (into why), or 0 when it is not: a
 * speedup above suspect_x (IMPLAUSIBLE_RATIO), a time below what moving its
 * bytes at the bandwidth takes, or below what its FLOPs (the task's
 * "flops") take at peak_tflops (IMPLAUSIBLE_PHYSICS) */
enum { IMPLAUSIBLE_RATIO = 1, IMPLAUSIBLE_PHYSICS };
static int implausible(const struct search *s, const struct cand *c, char *why, size_t n)
{
	const struct task *t = driver_task(s->drv);
	double bw = bandwidth(s), bytes = min_bytes(s);
	double floorMs = bw > 0 && bytes > 0 ? bytes / (bw * 1e9) * 1e3 : 0;
	double peak = OPT(s)->peak_tflops, flops = t ? t->flops : 0;
	double flopMs = peak > 0 && flops > 0 ? flops / (peak * 1e12) * 1e3 : 0;
	if (c->speedup > OPT(s)->suspect_x) {
		snprintf(why, n, "%.3gx is above %gx", c->speedup, OPT(s)->suspect_x);
		return IMPLAUSIBLE_RATIO;
	} else if (c->timeMs < floorMs)
		snprintf(why, n,
		         "%.4g ms is below the %.4g ms that moving its %.3g MB at %g GB/s takes",
		         c->timeMs, floorMs, bytes / 1e6, bw);
	else if (c->timeMs < flopMs)
		snprintf(why, n,
		         "%.4g ms is below the %.4g ms that its %.4g GFLOP take at %g TFLOP/s",
		         c->timeMs, flopMs, flops / 1e9, peak);
	else
		return 0;
	return IMPLAUSIBLE_PHYSICS;
}

/* c challenges best: faster than its low time, or faster outside its noise
 * (as state_best() takes it); a copy of it does not */
static int challenges(const struct cand *c, const struct cand *best)
{
	return !state_same_code(c, best) &&
	       (c->timeMs < low_time(best) ||
	        (state_faster(c, best) && state_same_within_noise(c, best) == 0));
}

/* the A/B of a pair asked this many times in all, when each came back
 * unverified (its times not bounded by kloop's clock: a busy machine) */
#define AB_TRIES 2

/*
 * A challenger faster than the incumbent by their separate timings: the
 * A/B decides.  1 when it won one (state_ab); 0 when it lost, or when the
 * A/B was asked for now (it is judged again when that evaluation ends).
 * An unverified A/B settles nothing: it is asked again, AB_TRIES in all;
 * when every one came back unverified, the separate timings (each verified)
 * decide as state_best() has them (the one rule's best), and the new best
 * says so (1).
 */
static int ab_decides(struct search *s, const struct cand *c, const struct cand *best)
{
	/* an A/B of either against the other's machine code counts too */
	const struct cand *win;
	const struct state_ab *ab = state_ab_between(ST(s), c, best, &win);
	char line[KL_ERRLEN + 100], err[KL_ERRLEN];
	int id = c->id, incId = best->id; /* the emitters below may move both */
	double ms = c->timeMs, incMs = best->timeMs;
	if (ab) {
		if (ab->failed) {
			snprintf(line, sizeof line,
			         "A/B: #%d against #%d could not be run (the journal's ab_compared "
			         "says why): #%d is not the best",
			         id, incId, id);
			note(s, line, NULL);
		} else if (win != c) {
			snprintf(
			    line, sizeof line,
			    "A/B: #%d is not faster than #%d beyond the noise (faster in %d of "
			    "%d pairs, %.3gx): #%d stays the best",
			    c->id, best->id, ab->wins, ab->pairs, ab->ratio, best->id);
			note(s, line, NULL);
		}
		return win == c;
	}
	int unv = state_ab_unverified(ST(s), c, best, NULL);
	if (unv >= AB_TRIES) {
		/* the one rule decides on the separate timings (no verified A/B
		 * between the two: state_best()), and judge() says so; else the
		 * incumbent stays, said once a pair */
		const struct cand *sb = state_best(ST(s), NULL, NULL);
		if (sb && state_same_code(sb, c))
			return 1;
		if (!pair_count(&s->abTied, id, incId)) {
			pair_add(&s->abTied, id, incId);
			snprintf(
			    line, sizeof line,
			    "#%d's A/B against #%d was unverified %d times, and by their separate "
			    "timings #%d is not the best: #%d stays",
			    id, incId, unv, id, incId);
			note(s, line, NULL);
		}
		return 0;
	}
	/* one ask a pair, and one more for each that came back unverified: a
	 * challenger whose A/B against one best came back after another took
	 * its place is asked again against the new one */
	if (pair_count(&s->abAsked, id, incId) > unv)
		return 0; /* asked already: no A/B against this incumbent came back */
	pair_add(&s->abAsked, id, incId);
	if (driver_bench_ab(s->drv, id, incId, err) < 0) {
		snprintf(line, sizeof line, "A/B of #%d against #%d: %s", id, incId, err);
		note(s, line, NULL);
		return 0;
	}
	if (unv)
		snprintf(line, sizeof line,
		         "A/B of #%d against #%d unverified (kloop's clock could not bound its "
		         "times: a busy machine): timed alternately again (%d of %d)",
		         id, incId, unv + 1, AB_TRIES);
	else
		snprintf(line, sizeof line,
		         "A/B: #%d (%.4g ms) against #%d (%.4g ms), timed alternately", id, ms,
		         incId, incMs);
	note(s, line, NULL);
	s->judged[id] = 0; /* judged again with the A/B */
	return 0;
}

/*
 * A new best, newId: the rivals judged before it that challenge it (faster
 * than it by their separate timings) with no A/B between the two are
 * judged again, so an A/B against it is asked.  A rival that lost an A/B to
 * the old best may still be faster than the new one: only an A/B between
 * the two settles which is (search_judge_all() takes them up).  Also when a
 * best hands it over (hand_over()).
 */
static void rejudge_against(struct search *s, int newId)
{
	const struct state *st = ST(s);
	const struct cand *nb = state_cand(st, newId), *win;
	for (int i = 0; nb && i < s->rivals.n; i++) {
		const struct cand *x = state_cand(st, s->rivals.a[i]);
		if (!x || x->id == newId || (size_t)x->id >= s->nJudged || !search_final(x) ||
		    !state_cand_competes(st, x) || !challenges(x, nb) ||
		    state_ab_between(st, x, nb, &win))
			continue;
		s->judged[x->id] = 0;
	}
}

/* why the search's best b no longer holds it, into buf */
static const char *lost_why(const struct state *st, const struct cand *b, char *buf, size_t n)
{
	const struct state_suspect *x = state_search_suspect(st, b->id);
	switch (state_cand_rank(st, b)) {
	case STATE_RANK_STATUS:
		snprintf(buf, n, "is %s now", b->zStatus ? b->zStatus : "not correct");
		break;
	case STATE_RANK_REDUCED:
		snprintf(buf, n,
		         "is of reduced precision, which the precision policy ranks no more");
		break;
	case STATE_RANK_SUSPECT:
		snprintf(buf, n, "is below the device's floor, held until a person clears it");
		break;
	case STATE_RANK_NO_SPEEDUP:
		snprintf(buf, n, "has no speedup now");
		break;
	case STATE_RANK_UNVERIFIED:
		snprintf(buf, n, "has an unverified time now");
		break;
	default:
		snprintf(buf, n, "%s", x && !x->cleared ? "is held as a suspect" : "is banned");
	}
	return buf;
}

/*
 * The search's best, final, that no longer holds the best (banned, held as
 * a suspect, or a verdict or precision policy it no longer ranks under)
 * hands it to the one rule's best among the rest (state_best()), said and
 * journaled as its new_best, and the rivals that challenge that one are
 * judged again.  With none to hand it to, it is said once, and the first
 * candidate that ranks takes it (judge()).
 */
static void hand_over(struct search *s)
{
	const struct state *st = ST(s);
	const struct cand *b = st->search.bestId ? state_cand(st, st->search.bestId) : NULL;
	if (!b || !search_final(b) || state_cand_competes(st, b) || s->handedFrom == b->id)
		return;
	char why[120], line[400];
	int bId = b->id;
	lost_why(st, b, why, sizeof why);
	const struct cand *nb = state_best(st, NULL, NULL);
	if (!nb) {
		s->handedFrom = bId;
		snprintf(line, sizeof line, "#%d %s: no candidate holds the best", bId, why);
		note(s, line, NULL);
		return;
	}
	int nbId = nb->id;
	snprintf(line, sizeof line, "#%d %s: the best is #%d %s %.4g ms, %.3gx", bId, why, nbId,
	         nb->zName, nb->timeMs, nb->speedup);
	if (search_emitted(s,
	                   ev_new_best(SES(s), nbId, nb->speedup, nb->timeMs, 0, 0, EL(s), s->zErr),
	                   line, NULL) < 0)
		return;
	rejudge_against(s, nbId);
}

static void judge(struct search *s, const struct cand *c)
{
	const struct state *st = ST(s);
	if (c->status == STATUS_CORRECT && c->unverified) {
		/* correct, but its time could not be bounded by kloop's clock:
		 * shown as such, never a parent nor the best (issue 24) */
		char line[300];
		snprintf(
		    line, sizeof line,
		    "#%d %s: correct, but its time (%.4g ms) is unverified: kloop's clock could "
		    "not bound it; not a parent, not the best",
		    c->id, c->zName, c->timeMs);
		note(s, line, NULL);
		return;
	}
	if (state_cand_rank(st, c) == STATE_RANK_REDUCED) {
		/* correct within the tolerance, but less precise than the
		 * reference's arithmetic: not a win under `precision faithful` */
		char line[400];
		const char *cause = c->v.precision.zCause;
		snprintf(line, sizeof line,
		         "#%d %s: correct, but of reduced precision%s%s%s: not a parent, not the "
		         "best (set precision any to let it compete)",
		         c->id, c->zName, cause ? " (" : "", cause ? cause : "", cause ? ")" : "");
		note(s, line, NULL);
		return;
	}
	if (c->status == STATUS_CORRECT && c->belowFloor && !state_search_suspect(st, c->id)) {
		/* its time is below what the device can do: held until a person
		 * clears it (then state_cand_rankable() lets it rank) */
		char why[400], line[600];
		snprintf(why, sizeof why,
		         "%s: held back (not a parent, not the best) until a person clears it",
		         c->v.roofline.zSuspect);
		snprintf(line, sizeof line, "suspect: #%d %s %s (clear %d)", c->id, c->zName, why,
		         c->id);
		search_emitted(s,
		               ev_suspect_flagged(SES(s), c->id, c->speedup, why, EL(s), s->zErr),
		               line, NULL);
		return;
	}
	if (!policy_eligible(st, c))
		return;
	int id = c->id;
	const struct state_suspect *x = state_search_suspect(st, id);
	char line[600], what[200];
	int kind = x ? 0 : implausible(s, c, what, sizeof what);
	if (kind == IMPLAUSIBLE_RATIO && c->zOrigin && !strcmp(c->zOrigin, "seed")) {
		/* a seed is the person's own starting point (the task's, or
		 * --from): a large speedup over a naive baseline is no reason to
		 * hold it back; a time below the hardware's limits still is */
		snprintf(line, sizeof line,
		         "seed #%d %s: %s, not held back (a seed is not the search's own)", id,
		         c->zName, what);
		note(s, line, NULL);
		kind = 0;
	}
	if (kind) {
		char why[300];
		snprintf(why, sizeof why,
		         "%s: held back (not a parent, not the best) until a person clears it",
		         what);
		snprintf(line, sizeof line, "suspect: #%d %s %s (clear %d)", id, c->zName, why, id);
		search_emitted(s, ev_suspect_flagged(SES(s), id, c->speedup, why, EL(s), s->zErr),
		               line, NULL);
		return;
	}
	if (state_search_excluded(st, id))
		return;
	set_add(&s->rivals, id);
	hand_over(s); /* a best banned while this one was judged (a steer from a line) */
	st = ST(s);
	const struct cand *best = st->search.bestId ? state_cand(st, st->search.bestId) : NULL;
	if (best && search_final(best) && !state_cand_competes(st, best))
		best = NULL; /* it lost the best, and none holds it: the first that ranks */
	if (best && !challenges(c, best))
		return;
	if (best && !ab_decides(s, c, best))
		return;
	st = ST(s);
	const struct cand *win;
	const struct state_ab *ab = best ? state_ab_between(st, c, best, &win) : NULL;
	if (ab) {
		snprintf(
		    line, sizeof line,
		    "new best #%d: %.3gx vs #%d in A/B over %d pairs (%s %.4g ms, %.3gx; faster "
		    "in %d)",
		    id, ab->ratio, best->id, ab->pairs, c->zName, c->timeMs, c->speedup, ab->wins);
	} else if (best) {
		snprintf(
		    line, sizeof line,
		    "new best #%d %s %.4g ms, %.3gx, by the separate timings (#%d: %.4g ms): its "
		    "A/B was unverified %d times (kloop's clock could not bound its times: a busy "
		    "machine)",
		    id, c->zName, c->timeMs, c->speedup, best->id, best->timeMs,
		    state_ab_unverified(st, c, best, NULL));
	} else {
		snprintf(line, sizeof line, "best: #%d %s %.4g ms, %.3gx", id, c->zName, c->timeMs,
		         c->speedup);
	}
	if (search_emitted(s,
	                   ev_new_best(SES(s), id, c->speedup, c->timeMs, best ? best->id : 0,
	                               best ? best->speedup : 0, EL(s), s->zErr),
	                   line, NULL) < 0)
		return;
	rejudge_against(s, id);
}

void search_judge_all(struct search *s)
{
	const struct state *st = ST(s);
	if (s->nJudged < (size_t)st->maxId + 1) {
		s->judged = xrealloc(s->judged, (size_t)st->maxId + 1);
		memset(s->judged + s->nJudged, 0, (size_t)st->maxId + 1 - s->nJudged);
		s->nJudged = (size_t)st->maxId + 1;
	}
	/* until a pass judges none: a new best has the rivals that challenge
	 * it judged again (rejudge_against()) before a round can close */
	for (int any = 1; any;) {
		any = 0;
		hand_over(s);
		for (int i = 0; i < ST(s)->nCand; i++) {
			const struct cand *c = &ST(s)->aCand[i];
			if (s->judged[c->id] || !search_final(c))
				continue;
			s->judged[c->id] = 1;
			any = 1;
			judge(s, c);
		}
	}
	/* what every evaluation from now on carries: the quick timing's stop,
	 * the A/B's pairs, and the incumbent to be timed against */
	struct eval_request rq = {.quickStopX = OPT(s)->quick_stop_x,
	                          .abPairs = (int)OPT(s)->ab_pairs,
	                          .inc.id = ST(s)->search.bestId};
	driver_set_eval_request(s->drv, &rq);
}

/* ---- budgets ---- */

int search_rounds_done(const struct state *st)
{
	int n = 0;
	for (int i = 0; i < st->search.nRound; i++)
		n += st->search.aRound[i].round >= 1 && st->search.aRound[i].finished;
	return n;
}

/* the first round whose end can stop the search for what it came to (no
 * new best, nothing new made): after a finished search went on with a new
 * budget, the rounds before do not (issue 39) */
static int first_round(const struct state *st)
{
	return st->search.continued ? st->search.contRound + 1 : 1;
}

/* finished rounds at the end none of whose candidates became the best
 * (rounds close in order: the finished ones come first) */
static int rounds_flat(const struct state *st)
{
	int n = 0;
	for (int i = 0; i < st->search.nRound; i++) {
		const struct state_round *r = &st->search.aRound[i];
		if (r->round < first_round(st) || !r->finished)
			continue;
		n = r->improved ? 0 : n + 1;
	}
	return n;
}

int search_cands_used(const struct state *st)
{
	return st->nCand - st->search.nCandStart;
}

double search_usd_used(const struct state *st)
{
	return st->llm.cost - st->search.costStart;
}

/* may one more LLM request go out within budget_usd: what was spent, what
 * the requests in flight may cost (*pHeld) and what the latest request
 * might have cost (*pNext, llm_cost_estimate()) stay within it.  With none
 * in flight and no room, the budget is spent: no request is sent that could
 * pass it */
static int usd_room(struct search *s, double *pHeld, double *pNext)
{
	double v = OPT(s)->budget_usd;
	pipeline_usd(driver_pipeline(s->drv), pHeld, pNext);
	return v <= 0 || search_usd_used(ST(s)) + *pHeld + *pNext <= v;
}

/* why the search should stop now (a static string in buf), or NULL */
const char *search_stop_reason(struct search *s, char *buf, size_t n)
{
	const struct state *st = ST(s);
	double v, held, next;
	if (SES(s)->nLost)
		snprintf(buf, n, "the session journal cannot be written (%s)",
		         SES(s)->zLost ? SES(s)->zLost : "?");
	else if ((v = OPT(s)->rounds) > 0 && search_rounds_done(st) >= v)
		snprintf(buf, n, "%d rounds done", search_rounds_done(st));
	else if ((v = OPT(s)->max_candidates) > 0 && search_cands_used(st) >= v)
		snprintf(buf, n, "the candidate budget is spent (%d of %g)", search_cands_used(st),
		         v);
	else if ((v = OPT(s)->budget_usd) > 0 && search_usd_used(st) >= v)
		snprintf(buf, n, "the LLM budget is spent ($%.4f of $%g)", search_usd_used(st), v);
	else if (v > 0 && !usd_room(s, &held, &next) && held <= 0)
		snprintf(buf, n,
		         "the LLM budget is spent ($%.4f of $%g; another request may cost about "
		         "$%.4f)",
		         search_usd_used(st), v, next);
	else if ((v = OPT(s)->time_s) > 0 && search_elapsed(s) >= v)
		snprintf(buf, n, "the time budget is spent (%.0f of %g s)", search_elapsed(s), v);
	else if ((v = OPT(s)->target) > 0 && st->search.bestId && st->search.bestSpeed >= v)
		snprintf(buf, n, "the target speedup is reached (%.3gx >= %gx)",
		         st->search.bestSpeed, v);
	else if ((v = OPT(s)->target_roofline) > 0 && st->search.bestId &&
	         roof_of(state_cand(st, st->search.bestId)) * 100 >= v)
		snprintf(buf, n,
		         "the target is reached: the best is at %.0f%% of the roofline (>= %g%%)",
		         roof_of(state_cand(st, st->search.bestId)) * 100, v);
	else if ((v = OPT(s)->no_improve) > 0 && rounds_flat(st) >= v)
		snprintf(buf, n, "no new best for %d rounds", rounds_flat(st));
	else if (st->search.nRound && st->search.aRound[st->search.nRound - 1].finished &&
	         st->search.aRound[st->search.nRound - 1].round >= first_round(st) &&
	         !st->search.aRound[st->search.nRound - 1].nMade &&
	         !st->search.aRound[st->search.nRound - 1].lagged)
		snprintf(buf, n, "round %d made no new candidate: nothing new to try",
		         st->search.aRound[st->search.nRound - 1].round);
	else
		return NULL;
	return buf;
}

/* may more candidates be made, more LLM money spent? */
int search_cand_ok(struct search *s)
{
	double v = OPT(s)->max_candidates, t = OPT(s)->time_s;
	return !SES(s)->nLost && (v <= 0 || search_cands_used(ST(s)) < v) &&
	       (t <= 0 || search_elapsed(s) < t);
}

int search_llm_ok(struct search *s)
{
	double v = OPT(s)->budget_usd, held, next;
	return !OPT(s)->sweep_only && search_cand_ok(s) && (v <= 0 || search_usd_used(ST(s)) < v) &&
	       usd_room(s, &held, &next);
}

/* the driver's limit while a search is on (running or paused): work in
 * flight (fixes, replies to requests sent before) stays within the budgets
 * of candidates, time and LLM dollars */
const char *search_limit(void *arg, int bCandidate, double usd)
{
	struct search *s = arg;
	const struct state_search *ss = &ST(s)->search;
	if (!ss->started || !search_state_live(ss->state))
		return NULL;
	if (SES(s)->nLost)
		return "the session journal cannot be written";
	if (!search_cand_ok(s))
		return "the search's candidate or time budget is spent";
	double v = OPT(s)->budget_usd;
	if (!bCandidate && v > 0 && search_usd_used(ST(s)) >= v)
		return "the search's LLM budget is spent";
	if (!bCandidate && v > 0 && search_usd_used(ST(s)) + usd > v)
		return "the search's LLM budget cannot pay for it (what is spent, what the "
		       "requests in flight may cost and what it may cost would pass it)";
	return NULL;
}
