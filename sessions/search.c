/*
 * search.c - the search's state machine: start a round (parents by
 * policy), submit its cheap work (sweeps, crossover) and its LLM work
 * (ideas, the gate, implementations), judge verdicts as they come, close
 * the round when nothing of it runs, stop on a budget.  All of it from a
 * timer on the session's loop, through runner_* and journal events.
 */
#include "search.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emit.h"
#include "funcdiff.h"
#include "ideas.h"
#include "policy.h"
#include "runner.h"
#include "sha256.h"
#include "splice.h"
#include "sweep.h"
#include "task.h"
#include "util.h"

#define TICK_S 0.05
#define CROSSOVER_MAX 2

struct intset {
	int *a;
	int n;
	size_t nAlloc;
};

static int set_has(const struct intset *x, int v)
{
	for (int i = 0; i < x->n; i++)
		if (x->a[i] == v)
			return 1;
	return 0;
}

/* add v; 1 when it was not there */
static int set_add(struct intset *x, int v)
{
	if (set_has(x, v))
		return 0;
	xgrow((void **)&x->a, &x->nAlloc, (size_t)x->n + 1, sizeof *x->a);
	x->a[x->n++] = v;
	return 1;
}

/* an open round's work done by this process (driven at least once: what
 * was cut short before it was asked again) */
struct work {
	int round;
	struct intset asked; /* parents whose ideas were asked for */
	int crossed;         /* the crossover was made */
	int llmCrossed;      /* the LLM crossover was asked for */
	int resumed;         /* its branches cut short were taken up */
};

struct search {
	struct runner *rn;
	search_note_fn notify;
	char zErr[KL_ERRLEN]; /* an emitter's error where the caller gave no err */
	void *arg;
	long long timer;    /* the tick's timer (0: none) */
	int inTick, again;  /* a tick is running; one more was asked for */
	int stepping;       /* one round, then pause */
	double tRun;        /* now_s() when it last began running (0: not running) */
	double base;        /* elapsed seconds before that */
	struct work *aWork; /* what was done for each open round (since opening) */
	int nWork;
	size_t nWorkAlloc;
	struct intset swept; /* candidates swept (any round) */
	struct intset impl;  /* ideas sent to be implemented */
	int translating;     /* round 0's translations were asked for */
	char *judged;        /* per candidate id: its verdict was judged */
	size_t nJudged;
	struct intset abAsked; /* candidates whose A/B the search asked for */
};

/* ---- settings: search_settings.c ---- */

static const struct state *ST(const struct search *s)
{
	return runner_state(s->rn);
}

static double num(const struct search *s, const char *zKey)
{
	const cJSON *v = cJSON_GetObjectItem(ST(s)->search.settings, zKey);
	return cJSON_IsNumber(v) ? v->valuedouble : search_setting_default(zKey);
}

static const char *word(const struct search *s, const char *zKey, const char *zDef)
{
	const char *z = cJSON_GetStringValue(cJSON_GetObjectItem(ST(s)->search.settings, zKey));
	return z ? z : zDef;
}

/* ---- events ---- */

double search_elapsed(const struct search *s)
{
	return s->base + (s->tRun > 0 ? now_s() - s->tRun : 0);
}

static void note(struct search *s, const char *zLine, const cJSON *ev)
{
	if (s->notify)
		s->notify(s->arg, zLine, ev);
}

/* the session, for the emitters (event.h) */
#define SES(s) runner_session((s)->rn)
/* the elapsed time the search's events carry (ms resolution) */
#define EL(s) (round(search_elapsed(s) * 1000) / 1000)
/* where an emitter writes its error: err, or the search's own buffer */
#define ERR(s, err) ((err) ? (err) : (s)->zErr)

/* after an emitter returned rc: tell people zLine with the journaled
 * event; when it failed and the caller gave no err, say why */
static int emitted(struct search *s, int rc, const char *zLine, char *err)
{
	if (rc < 0) {
		if (!err) {
			char msg[KL_ERRLEN + 16];
			snprintf(msg, sizeof msg, "journal: %s", s->zErr);
			note(s, msg, NULL);
		}
		return -1;
	}
	runner_changed(s->rn);
	note(s, zLine, session_last(SES(s)));
	return 0;
}

/* ---- judging verdicts ---- */

static int final(const struct cand *c)
{
	return status_finished(c->status);
}

/* the time a challenger's median must beat to unseat incumbent c: its
 * 10th-percentile time, and at least 2% below its median */
static double low_time(const struct cand *c)
{
	const cJSON *p10 = cJSON_GetObjectItem(cJSON_GetObjectItem(c->result, "timing"), "p10_ms");
	double t = c->timeMs * 0.98;
	if (cJSON_IsNumber(p10) && p10->valuedouble > 0 && p10->valuedouble < t)
		t = p10->valuedouble;
	return t;
}

/* the bytes a run must move at least: every input read, every output
 * written once (0 without a task) */
static double min_bytes(const struct search *s)
{
	const struct task *t = runner_task(s->rn);
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
	const cJSON *f =
	    cJSON_GetObjectItem(cJSON_GetObjectItem(c ? c->result : NULL, "roofline"), "fraction");
	return cJSON_IsNumber(f) ? f->valuedouble : 0;
}

/* the HBM bandwidth in GB/s: the setting, else what the workers' GPU reports
 * (0: unknown) */
static double bandwidth(const struct search *s)
{
	double bw = num(s, "bandwidth_gbs");
	return bw > 0 ? bw : runner_bandwidth_gbs(s->rn);
}

/* why candidate c's time is implausible (into why), or 0 when it is not: a
 * speedup above suspect_x (IMPLAUSIBLE_RATIO), a time below what moving its
 * bytes at the bandwidth takes, or below what its FLOPs (the task's
 * "flops") take at peak_tflops (IMPLAUSIBLE_PHYSICS) */
enum { IMPLAUSIBLE_RATIO = 1, IMPLAUSIBLE_PHYSICS };
static int implausible(const struct search *s, const struct cand *c, char *why, size_t n)
{
	const struct task *t = runner_task(s->rn);
	double bw = bandwidth(s), bytes = min_bytes(s);
	double floorMs = bw > 0 && bytes > 0 ? bytes / (bw * 1e9) * 1e3 : 0;
	double peak = num(s, "peak_tflops"), flops = t ? t->flops : 0;
	double flopMs = peak > 0 && flops > 0 ? flops / (peak * 1e12) * 1e3 : 0;
	if (c->speedup > num(s, "suspect_x")) {
		snprintf(why, n, "%.3gx is above %gx", c->speedup, num(s, "suspect_x"));
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

/*
 * A challenger faster than the incumbent by their separate timings: the
 * A/B decides.  1 when it won one (state_ab); 0 when it lost, or when the
 * A/B was asked for now (it is judged again when that evaluation ends).
 */
static int ab_decides(struct search *s, const struct cand *c, const struct cand *best)
{
	const struct state_ab *ab = state_ab(ST(s), c->id, best->id);
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
		} else if (!ab->won) {
			snprintf(
			    line, sizeof line,
			    "A/B: #%d is not faster than #%d beyond the noise (faster in %d of "
			    "%d pairs, %.3gx)",
			    c->id, best->id, ab->wins, ab->pairs, ab->ratio);
			note(s, line, NULL);
		}
		return ab->won;
	}
	if (!set_add(&s->abAsked, id))
		return 0; /* asked once already: no A/B against this incumbent came back */
	if (runner_bench_ab(s->rn, id, incId, err) < 0) {
		snprintf(line, sizeof line, "A/B of #%d against #%d: %s", id, incId, err);
		note(s, line, NULL);
		return 0;
	}
	snprintf(line, sizeof line, "A/B: #%d (%.4g ms) against #%d (%.4g ms), timed alternately",
	         id, ms, incId, incMs);
	note(s, line, NULL);
	s->judged[id] = 0; /* judged again with the A/B */
	return 0;
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
	if (c->status == STATUS_CORRECT && c->reduced && !state_precision_any(st)) {
		/* correct within the tolerance, but less precise than the
		 * reference's arithmetic: not a win under `precision faithful` */
		char line[400];
		const char *cause = cJSON_GetStringValue(
		    cJSON_GetObjectItem(cJSON_GetObjectItem(c->result, "precision"), "cause"));
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
		         cJSON_GetStringValue(cJSON_GetObjectItem(
		             cJSON_GetObjectItem(c->result, "roofline"), "suspect")));
		snprintf(line, sizeof line, "suspect: #%d %s %s (clear %d)", c->id, c->zName, why,
		         c->id);
		emitted(s, ev_suspect_flagged(SES(s), c->id, c->speedup, why, EL(s), s->zErr), line,
		        NULL);
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
		emitted(s, ev_suspect_flagged(SES(s), id, c->speedup, why, EL(s), s->zErr), line,
		        NULL);
		return;
	}
	if (state_search_excluded(st, id))
		return;
	const struct cand *best = st->search.bestId ? state_cand(st, st->search.bestId) : NULL;
	if (best && (best->id == id || !(c->timeMs < low_time(best))))
		return;
	if (best && !ab_decides(s, c, best))
		return;
	st = ST(s);
	if (best) {
		const struct state_ab *ab = state_ab(st, id, best->id);
		snprintf(
		    line, sizeof line,
		    "new best #%d: %.3gx vs #%d in A/B over %d pairs (%s %.4g ms, %.3gx; faster "
		    "in %d)",
		    id, ab->ratio, best->id, ab->pairs, c->zName, c->timeMs, c->speedup, ab->wins);
	} else {
		snprintf(line, sizeof line, "best: #%d %s %.4g ms, %.3gx", id, c->zName, c->timeMs,
		         c->speedup);
	}
	emitted(s,
	        ev_new_best(SES(s), id, c->speedup, c->timeMs, best ? best->id : 0,
	                    best ? best->speedup : 0, EL(s), s->zErr),
	        line, NULL);
}

static void judge_all(struct search *s)
{
	const struct state *st = ST(s);
	if (s->nJudged < (size_t)st->maxId + 1) {
		s->judged = xrealloc(s->judged, (size_t)st->maxId + 1);
		memset(s->judged + s->nJudged, 0, (size_t)st->maxId + 1 - s->nJudged);
		s->nJudged = (size_t)st->maxId + 1;
	}
	for (int i = 0; i < ST(s)->nCand; i++) {
		const struct cand *c = &ST(s)->aCand[i];
		if (s->judged[c->id] || !final(c))
			continue;
		s->judged[c->id] = 1;
		judge(s, c);
	}
	/* what every evaluation from now on carries: the quick timing's stop,
	 * the A/B's pairs, and the incumbent to be timed against */
	cJSON *o = cJSON_CreateObject();
	if (num(s, "quick_stop_x") > 0)
		cJSON_AddNumberToObject(o, "quick_stop_x", num(s, "quick_stop_x"));
	cJSON_AddNumberToObject(o, "ab_pairs", num(s, "ab_pairs"));
	runner_set_eval_opts(s->rn, o);
	cJSON_Delete(o);
	runner_set_incumbent(s->rn, ST(s)->search.bestId);
}

/* ---- budgets ---- */

static int rounds_done(const struct state *st)
{
	int n = 0;
	for (int i = 0; i < st->search.nRound; i++)
		n += st->search.aRound[i].round >= 1 && st->search.aRound[i].finished;
	return n;
}

/* finished rounds at the end none of whose candidates became the best
 * (rounds close in order: the finished ones come first) */
static int rounds_flat(const struct state *st)
{
	int n = 0;
	for (int i = 0; i < st->search.nRound; i++) {
		const struct state_round *r = &st->search.aRound[i];
		if (r->round < 1 || !r->finished)
			continue;
		n = r->improved ? 0 : n + 1;
	}
	return n;
}

static int cands_used(const struct state *st)
{
	return st->nCand - st->search.nCandStart;
}

static double usd_used(const struct state *st)
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
	double v = num(s, "budget_usd");
	runner_usd(s->rn, pHeld, pNext);
	return v <= 0 || usd_used(ST(s)) + *pHeld + *pNext <= v;
}

/* why the search should stop now (a static string in buf), or NULL */
static const char *stop_reason(struct search *s, char *buf, size_t n)
{
	const struct state *st = ST(s);
	double v, held, next;
	if (SES(s)->nLost)
		snprintf(buf, n, "the session journal cannot be written (%s)",
		         SES(s)->zLost ? SES(s)->zLost : "?");
	else if ((v = num(s, "rounds")) > 0 && rounds_done(st) >= v)
		snprintf(buf, n, "%d rounds done", rounds_done(st));
	else if ((v = num(s, "max_candidates")) > 0 && cands_used(st) >= v)
		snprintf(buf, n, "the candidate budget is spent (%d of %g)", cands_used(st), v);
	else if ((v = num(s, "budget_usd")) > 0 && usd_used(st) >= v)
		snprintf(buf, n, "the LLM budget is spent ($%.4f of $%g)", usd_used(st), v);
	else if (v > 0 && !usd_room(s, &held, &next) && held <= 0)
		snprintf(buf, n,
		         "the LLM budget is spent ($%.4f of $%g; another request may cost about "
		         "$%.4f)",
		         usd_used(st), v, next);
	else if ((v = num(s, "time_s")) > 0 && search_elapsed(s) >= v)
		snprintf(buf, n, "the time budget is spent (%.0f of %g s)", search_elapsed(s), v);
	else if ((v = num(s, "target")) > 0 && st->search.bestId && st->search.bestSpeed >= v)
		snprintf(buf, n, "the target speedup is reached (%.3gx >= %gx)",
		         st->search.bestSpeed, v);
	else if ((v = num(s, "target_roofline")) > 0 && st->search.bestId &&
	         roof_of(state_cand(st, st->search.bestId)) * 100 >= v)
		snprintf(buf, n,
		         "the target is reached: the best is at %.0f%% of the roofline (>= %g%%)",
		         roof_of(state_cand(st, st->search.bestId)) * 100, v);
	else if ((v = num(s, "no_improve")) > 0 && rounds_flat(st) >= v)
		snprintf(buf, n, "no new best for %d rounds", rounds_flat(st));
	else if (st->search.nRound && st->search.aRound[st->search.nRound - 1].finished &&
	         st->search.aRound[st->search.nRound - 1].round >= 1 &&
	         !st->search.aRound[st->search.nRound - 1].nMade &&
	         !st->search.aRound[st->search.nRound - 1].lagged)
		snprintf(buf, n, "round %d made no new candidate: nothing new to try",
		         st->search.aRound[st->search.nRound - 1].round);
	else
		return NULL;
	return buf;
}

/* may more candidates be made, more LLM money spent? */
static int cand_ok(struct search *s)
{
	double v = num(s, "max_candidates"), t = num(s, "time_s");
	return !SES(s)->nLost && (v <= 0 || cands_used(ST(s)) < v) &&
	       (t <= 0 || search_elapsed(s) < t);
}

static int llm_ok(struct search *s)
{
	double v = num(s, "budget_usd"), held, next;
	return !num(s, "sweep_only") && cand_ok(s) && (v <= 0 || usd_used(ST(s)) < v) &&
	       usd_room(s, &held, &next);
}

/* the runner's limit while a search is on (running or paused): work in
 * flight (fixes, replies to requests sent before) stays within the budgets
 * of candidates, time and LLM dollars */
static const char *limit(void *arg, int bCandidate, double usd)
{
	struct search *s = arg;
	const struct state_search *ss = &ST(s)->search;
	if (!ss->started || !search_state_live(ss->state))
		return NULL;
	if (SES(s)->nLost)
		return "the session journal cannot be written";
	if (!cand_ok(s))
		return "the search's candidate or time budget is spent";
	double v = num(s, "budget_usd");
	if (!bCandidate && v > 0 && usd_used(ST(s)) >= v)
		return "the search's LLM budget is spent";
	if (!bCandidate && v > 0 && usd_used(ST(s)) + usd > v)
		return "the search's LLM budget cannot pay for it (what is spent, what the "
		       "requests in flight may cost and what it may cost would pass it)";
	return NULL;
}

/* ---- the mechanical proposers ---- */

static int has_source(const struct state *st, const char *z)
{
	return state_cand_by_source(st, z) != NULL;
}

static const char *ext_of(const struct cand *c)
{
	const char *d = strrchr(c->zName, '.');
	return d ? d : ".c";
}

/* add and evaluate a candidate made without an LLM; its id or -1 */
static int add_mechanical(struct search *s, const char *zOrigin, const int *aParent, int nParent,
                          const char *zStem, const char *zSource, const char *zWhat)
{
	const struct state *st = ST(s);
	char err[KL_ERRLEN];
	const struct cand *p = state_cand(st, aParent[0]);
	char *name = xasprintf("%s%d%s", zStem, state_next_id(st), ext_of(p));
	int id = runner_add(s->rn, zOrigin, aParent, nParent, name, zSource, zWhat, err);
	free(name);
	if (id < 0 || runner_bench(s->rn, id, err) < 0) {
		char msg[KL_ERRLEN + 64];
		snprintf(msg, sizeof msg, "%s: %s", zOrigin, err);
		note(s, msg, NULL);
		return -1;
	}
	return id;
}

static void sweep(struct search *s, int parent)
{
	const struct cand *c = state_cand(ST(s), parent);
	int max = (int)num(s, "sweep_points");
	if (!c || max <= 0)
		return;
	struct sweep_list l;
	char err[KL_ERRLEN];
	uint64_t seed = (uint64_t)num(s, "seed") * 1000003u + (uint64_t)parent;
	if (sweep_points(c->zSource, strlen(c->zSource), word(s, "sweep", "grid"), seed, max, &l,
	                 err) < 0) {
		char msg[KL_ERRLEN + 64];
		snprintf(msg, sizeof msg, "sweep of #%d: %s", parent, err);
		note(s, msg, NULL);
		sweep_free(&l);
		return;
	}
	int made = 0;
	for (size_t i = 0; i < l.n && cand_ok(s); i++) {
		if (has_source(ST(s), l.v[i].zSource))
			continue;
		char *what = xasprintf("sweep %s", l.v[i].zLabel);
		made += add_mechanical(s, "sweep", &parent, 1, "sweep", l.v[i].zSource, what) > 0;
		free(what);
	}
	if (made) {
		char line[200];
		c = state_cand(ST(s), parent);
		snprintf(line, sizeof line, "sweep of #%d %s: %d point%s", parent, c->zName, made,
		         made == 1 ? "" : "s");
		note(s, line, NULL);
	}
	sweep_free(&l);
}

/* take functions of b that differ into a: up to CROSSOVER_MAX candidates */
static void crossover(struct search *s, int ia, int ib)
{
	const struct state *st = ST(s);
	const struct cand *a = state_cand(st, ia), *b = state_cand(st, ib);
	if (!a || !b || policy_island(st, ia) == policy_island(st, ib))
		return;
	struct funcdiff d;
	char err[KL_ERRLEN];
	if (funcdiff_compare(a->zSource, strlen(a->zSource), b->zSource, strlen(b->zSource), &d,
	                     err) < 0) {
		funcdiff_free(&d);
		return;
	}
	int made = 0;
	for (size_t i = 0; i < d.n && made < CROSSOVER_MAX && cand_ok(s); i++) {
		if (d.v[i].status != FUNCDIFF_CHANGED && d.v[i].status != FUNCDIFF_ADDED)
			continue;
		a = state_cand(ST(s), ia), b = state_cand(ST(s), ib);
		struct splice_result r;
		memset(&r, 0, sizeof r);
		if (splice_crossover(a->zSource, strlen(a->zSource), b->zSource, strlen(b->zSource),
		                     d.v[i].name, &r, err) == 0 &&
		    !has_source(ST(s), r.src)) {
			char *what =
			    xasprintf("crossover: %s from #%d into #%d", d.v[i].name, ib, ia);
			int par[2] = {ia, ib};
			made += add_mechanical(s, "crossover", par, 2, "cross", r.src, what) > 0;
			free(what);
		}
		splice_result_free(&r);
	}
	funcdiff_free(&d);
	if (made) {
		char line[160];
		snprintf(line, sizeof line, "crossover of #%d and #%d: %d candidate%s", ia, ib,
		         made, made == 1 ? "" : "s");
		note(s, line, NULL);
	}
}

/* ---- the LLM proposers and the gate ---- */

static int idea_has_cands(const struct state *st, int idea)
{
	for (int i = 0; i < st->nCand; i++)
		if (st->aCand[i].ideaId == idea)
			return 1;
	return 0;
}

static int idea_has_branches(const struct state *st, int idea)
{
	for (int i = 0; i < st->nBranch; i++)
		if (st->aBranch[i].idea == idea)
			return 1;
	return 0;
}

static void gate(struct search *s, int round)
{
	const struct state *st = ST(s);
	if (strcmp(word(s, "gate", "auto"), "auto"))
		return;
	char err[KL_ERRLEN], line[400];
	for (int i = 0; i < st->nIdea; i++) {
		const struct state_idea *d = &ST(s)->aIdea[i];
		if (d->round != round || d->status != IDEA_PENDING || strcmp(d->zOrigin, "llm"))
			continue;
		const char *why = NULL;
		if (state_search_cat_banned(st, d->zCategory))
			why = "its category is banned";
		else if (ST(s)->search.nPreferCat &&
		         !state_search_cat_preferred(st, d->zCategory)) {
			/* another idea for the same parent in a preferred category wins */
			for (int k = 0; k < st->nIdea && !why; k++) {
				const struct state_idea *o = &st->aIdea[k];
				if (o->round == round && o->parent == d->parent &&
				    state_search_cat_preferred(st, o->zCategory))
					why = "another idea for this parent is in a preferred "
					      "category";
			}
		}
		int id = d->id, rc;
		if (why) {
			rc = runner_idea_reject_why(s->rn, id, why, err);
			snprintf(line, sizeof line, "gate: idea %d rejected [%s] %s: %s", id,
			         d->zCategory, d->zTitle, why);
		} else {
			rc = runner_idea_accept(s->rn, id, err);
			snprintf(line, sizeof line, "gate: idea %d accepted [%s] %s (for #%d)", id,
			         d->zCategory, d->zTitle, d->parent);
		}
		if (rc == 0)
			note(s, line, session_last(SES(s)));
		st = ST(s);
	}
}

static int first_parent(const struct state *st, int round)
{
	for (int i = 0; i < st->search.nRound; i++)
		if (st->search.aRound[i].round == round && st->search.aRound[i].nParent)
			return st->search.aRound[i].aParent[0];
	return 0;
}

static void implement(struct search *s, int round)
{
	char err[KL_ERRLEN], line[400];
	for (int i = 0; i < ST(s)->nIdea && llm_ok(s); i++) {
		const struct state_idea *d = &ST(s)->aIdea[i];
		/* an idea whose branches were journaled before a restart goes on
		 * branch by branch (drive_round), each from where it was cut */
		if (d->status != IDEA_ACCEPTED || set_has(&s->impl, d->id) ||
		    !strcmp(d->zOrigin, "search") ||
		    (d->round != round && strcmp(d->zOrigin, "human")) ||
		    idea_has_cands(ST(s), d->id) || idea_has_branches(ST(s), d->id))
			continue;
		int parent = d->parent && state_cand(ST(s), d->parent) ? d->parent
		                                                       : first_parent(ST(s), round);
		if (!parent)
			continue;
		set_add(&s->impl, d->id);
		int id = d->id, b = (int)num(s, "branches");
		snprintf(line, sizeof line, "implementing idea %d on #%d in %d branch%s: %s", id,
		         parent, b, b == 1 ? "" : "es", d->zTitle);
		if (runner_implement(s->rn, id, parent, b, err) < 0)
			snprintf(line, sizeof line, "idea %d: %.300s", id, err);
		note(s, line, NULL);
	}
}

/* the crossover prompt on two parents of different islands: an idea of
 * the search's own (origin "search"), accepted, implemented as a crossover */
static void llm_crossover(struct search *s, int round, int a, int b)
{
	const struct state *st = ST(s);
	if (policy_island(st, a) == policy_island(st, b))
		return;
	for (int i = 0; i < st->nIdea; i++)
		if (st->aIdea[i].round == round && !strcmp(st->aIdea[i].zOrigin, "search"))
			return; /* asked before a restart */
	char err[KL_ERRLEN], title[120], line[300];
	int id = state_next_idea_id(st);
	snprintf(title, sizeof title, "Combine #%d and #%d", a, b);
	struct ev_idea d = {
	    .zTitle = title,
	    .zDescription = "Take what makes each parent fast and make one candidate of both.",
	    .zCategory = "other",
	    .zOrigin = "search",
	    .parent = a,
	};
	if (emitted(s, ev_idea_proposed(SES(s), &d, err), NULL, err) < 0 ||
	    runner_idea_accept(s->rn, id, err) < 0)
		return;
	set_add(&s->impl, id);
	int nb = (int)num(s, "branches");
	snprintf(line, sizeof line, "LLM crossover of #%d and #%d in %d branch%s (idea %d)", a, b,
	         nb, nb == 1 ? "" : "es", id);
	if (runner_crossover(s->rn, id, a, b, nb, err) < 0)
		snprintf(line, sizeof line, "LLM crossover of #%d and #%d: %.200s", a, b, err);
	note(s, line, NULL);
}

static int ideas_exist(const struct state *st, int round, int parent)
{
	for (int i = 0; i < st->nIdea; i++)
		if (st->aIdea[i].round == round && st->aIdea[i].parent == parent &&
		    !strcmp(st->aIdea[i].zOrigin, "llm"))
			return 1;
	return 0;
}

/* ---- rounds ---- */

static const struct state_round *round_at(const struct state *st, int round)
{
	for (int i = 0; i < st->search.nRound; i++)
		if (st->search.aRound[i].round == round)
			return &st->search.aRound[i];
	return NULL;
}

/* the oldest open round, or -1 */
static int oldest_open(const struct state *st)
{
	int r = -1;
	for (int i = 0; i < st->search.nRound; i++) {
		const struct state_round *x = &st->search.aRound[i];
		if (!x->finished && (r < 0 || x->round < r))
			r = x->round;
	}
	return r;
}

static struct work *work_of(struct search *s, int round, int make)
{
	for (int i = 0; i < s->nWork; i++)
		if (s->aWork[i].round == round)
			return &s->aWork[i];
	if (!make)
		return NULL;
	xgrow((void **)&s->aWork, &s->nWorkAlloc, (size_t)s->nWork + 1, sizeof *s->aWork);
	struct work *w = &s->aWork[s->nWork++];
	memset(w, 0, sizeof *w);
	w->round = round;
	return w;
}

static void work_drop(struct search *s, int round)
{
	struct work *w = work_of(s, round, 0);
	if (!w)
		return;
	free(w->asked.a);
	*w = s->aWork[--s->nWork];
}

static void drive_round(struct search *s, int R)
{
	const struct state *st = ST(s);
	const struct state_round *r = round_at(st, R);
	struct work *w = work_of(s, R, 1);
	char err[KL_ERRLEN];
	if (R == 0) {
		if (!s->translating) {
			s->translating = 1;
			int have = 0;
			for (int i = 0; i < st->nCand; i++)
				have |= !strcmp(st->aCand[i].zOrigin, "translation");
			int t = (int)num(s, "translations");
			if (!have && llm_ok(s)) {
				char line[120];
				snprintf(line, sizeof line,
				         "translating the reference: %d translation%s", t,
				         t == 1 ? "" : "s");
				note(s, line, NULL);
				if (runner_translate(s->rn, t, err) < 0)
					note(s, err, NULL);
			}
		}
		return;
	}
	if (!r)
		return;
	int aPar[STATE_MAX_PARENTS], nPar = r->nParent;
	memcpy(aPar, r->aParent, sizeof aPar);
	/* what is made now belongs to round R (rounds overlap) */
	runner_round(s->rn, R);
	/* cheap before dear: every parent's sweep and the crossover go first */
	for (int i = 0; i < nPar; i++)
		if (set_add(&s->swept, aPar[i]) && cand_ok(s))
			sweep(s, aPar[i]);
	if (!w->crossed && num(s, "crossover") > 0 && nPar >= 2) {
		w->crossed = 1;
		crossover(s, aPar[0], aPar[1]);
	}
	if (!w->llmCrossed && num(s, "crossover") >= 2 && nPar >= 2 && llm_ok(s)) {
		w->llmCrossed = 1;
		llm_crossover(s, R, aPar[0], aPar[1]);
	}
	for (int i = 0; i < nPar; i++) {
		if (!llm_ok(s) || set_has(&w->asked, aPar[i]))
			continue;
		set_add(&w->asked, aPar[i]);
		if (ideas_exist(ST(s), R, aPar[i]))
			continue; /* asked before a restart: not again */
		if (runner_ideas(s->rn, aPar[i], (int)num(s, "ideas"), err) < 0) {
			char msg[KL_ERRLEN + 64];
			snprintf(msg, sizeof msg, "ideas for #%d: %s", aPar[i], err);
			note(s, msg, NULL);
		}
	}
	gate(s, R);
	implement(s, R);
	if (!w->resumed && llm_ok(s)) {
		/* a round reopened after kill -9: what its branches were waiting
		 * for is asked again (an implementation, a fix) */
		w->resumed = 1;
		int B = (int)num(s, "branches"), nb = ST(s)->nBranch;
		for (int i = 0; i < nb; i++) {
			struct state_branch b = ST(s)->aBranch[i];
			const struct state_idea *d = state_idea(ST(s), b.idea);
			if (!d || (b.round ? b.round : d->round) != R)
				continue;
			/* a branch whose first request was never journaled (the
			 * kill came between its idea's branches) starts now */
			int first = 1;
			for (int j = 0; j < i; j++)
				first &= ST(s)->aBranch[j].idea != b.idea;
			for (int k = 1; k <= B && first; k++)
				if (!state_branch_of(ST(s), b.idea, k) &&
				    d->status == IDEA_ACCEPTED) {
					struct state_branch nbr = {.idea = b.idea,
					                           .branch = k,
					                           .parent = b.parent,
					                           .round = b.round};
					if (runner_branch_resume(s->rn, &nbr, B, err) < 0)
						note(s, err, NULL);
				}
			if (runner_branch_resume(s->rn, &b, B, err) < 0) {
				char msg[KL_ERRLEN + 64];
				snprintf(msg, sizeof msg, "resuming: %s", err);
				note(s, msg, NULL);
			}
		}
	}
	runner_round(s->rn, 0);
}

/* ideas of round R waiting for a decision */
static int pending_ideas(const struct state *st, int R)
{
	int n = 0;
	for (int i = 0; i < st->nIdea; i++)
		n += st->aIdea[i].round == R && st->aIdea[i].status == IDEA_PENDING;
	return n;
}

/* round R's work is all done: nothing of it runs or waits (its LLM steps,
 * its candidates' evaluations, under the human gate its ideas) */
static int round_complete(struct search *s, int R)
{
	const struct state *st = ST(s);
	if (!work_of(s, R, 0) || runner_round_busy(s->rn, R, NULL))
		return 0;
	/* round 0's work (the translations) is not marked: all of it */
	if (R == 0 && (runner_jobs(s->rn) || runner_llm_busy(s->rn)))
		return 0;
	for (int i = 0; i < st->nCand; i++)
		if (st->aCand[i].round == R && !final(&st->aCand[i]))
			return 0;
	return strcmp(word(s, "gate", "auto"), "human") || !pending_ideas(st, R);
}

static struct ev_search_budget budget(struct search *s)
{
	const struct state *st = ST(s);
	struct ev_search_budget b = {
	    .rounds = rounds_done(st),
	    .candidates = cands_used(st),
	    .usd = usd_used(st),
	    .llmRequests = st->llm.nRequests,
	};
	return b;
}

static void finish_round(struct search *s, int R)
{
	const struct state *st = ST(s);
	int made = 0;
	for (int i = 0; i < st->nCand; i++)
		made += st->aCand[i].round == R;
	char line[300];
	const struct cand *b = state_cand(st, st->search.bestId);
	if (b)
		snprintf(line, sizeof line, "round %d done: %d candidate%s made; best #%d %s %.3gx",
		         R, made, made == 1 ? "" : "s", b->id, b->zName, b->speedup);
	else
		snprintf(line, sizeof line,
		         "round %d done: %d candidate%s made; no correct candidate yet", R, made,
		         made == 1 ? "" : "s");
	emitted(s,
	        ev_round_finished(SES(s), R, st->search.bestId,
	                          st->search.bestId ? st->search.bestSpeed : -1, made, EL(s),
	                          s->zErr),
	        line, NULL);
	work_drop(s, R);
	snprintf(line, sizeof line, "budget: %d rounds, %d candidates, $%.4f, %.0f s",
	         rounds_done(ST(s)), cands_used(ST(s)), usd_used(ST(s)), search_elapsed(s));
	struct ev_search_budget spent = budget(s);
	emitted(s, ev_search_budget(SES(s), &spent, EL(s), s->zErr), line, NULL);
	if (s->stepping) {
		s->stepping = 0;
		search_pause(s, NULL);
	}
}

static void finish(struct search *s, const char *zWhy)
{
	char line[300];
	snprintf(line, sizeof line, "search finished: %s", zWhy);
	struct ev_search_budget b = budget(s);
	emitted(s, ev_search_finished(SES(s), zWhy, &b, EL(s), s->zErr), line, NULL);
	s->base = search_elapsed(s);
	s->tRun = 0;
}

/* rounds started (round 0 aside) */
static int rounds_started(const struct state *st)
{
	int n = 0;
	for (int i = 0; i < st->search.nRound; i++)
		n += st->search.aRound[i].round >= 1;
	return n;
}

/*
 * May round R + 1 start while the latest round R is open?  Only with
 * `overlap` > 1 rounds allowed open and fewer open, when R (>= 1) asked for
 * its ideas and all of its LLM requests are out (no ideas reply awaited, no
 * idea undecided, no implementation waiting to be sent), the LLM client has
 * room for one more request, and no budget or stopping rule (counted on the
 * closed rounds, and the rounds budget on the rounds started) says stop.
 */
static int may_overlap(struct search *s)
{
	const struct state *st = ST(s);
	int R = st->search.round, unsent = 0;
	double rounds = num(s, "rounds");
	char buf[200];
	const struct work *w = work_of(s, R, 0);
	if (num(s, "overlap") <= 1 || s->stepping || st->search.roundOpen >= num(s, "overlap") ||
	    R < 1 || !w || !w->asked.n || !llm_ok(s) ||
	    (rounds > 0 && rounds_started(st) >= rounds) || stop_reason(s, buf, sizeof buf))
		return 0;
	runner_round_busy(s->rn, R, &unsent);
	return !unsent && !pending_ideas(st, R) && runner_llm_room(s->rn);
}

/*
 * Start round R = the latest + 1: choose its parents and journal them.
 * With rounds open (lagged), the policy sees the snapshot of round R -
 * overlap and before (all closed and complete: at most `overlap` rounds
 * are open, R among them, and they close in order) without any
 * candidate that was a parent already; when that snapshot holds no
 * eligible parent nothing starts (0), and the round waits until the open
 * ones close.  Else it sees
 * every candidate.  Either way the choice depends only on journaled facts.
 * Returns 1 when a round started (or the search finished).
 */
static int start_round(struct search *s, int lagged)
{
	const struct state *st = ST(s);
	char line[400];
	if (!lagged) {
		int anyEligible = 0;
		for (int i = 0; i < st->nCand && !anyEligible; i++)
			anyEligible = policy_eligible(st, &st->aCand[i]) &&
			              !state_search_excluded(st, st->aCand[i].id);
		if (!anyEligible) {
			int translated = 0;
			for (int i = 0; i < st->search.nRound; i++)
				translated |= st->search.aRound[i].round == 0;
			char err[KL_ERRLEN];
			if (!translated && st->search.round == 0 && llm_ok(s) &&
			    runner_llm(s->rn, err) == 0) {
				emitted(s, ev_round_started(SES(s), 0, 0, EL(s), s->zErr),
				        "round 0: no correct candidate to start from, translating",
				        NULL);
				return 1;
			}
			/* correct ones held back: say which and what frees them */
			char why[300] = "";
			for (int i = 0, n = 0; i < st->nCand && n < 3; i++) {
				const struct cand *c = &st->aCand[i];
				const struct state_suspect *x = state_search_suspect(st, c->id);
				if (!policy_eligible(st, c))
					continue;
				size_t u = strlen(why);
				if (x && !x->cleared)
					snprintf(why + u, sizeof why - u,
					         "%s#%d is a suspect, %s (clear %d)",
					         n ? "; " : ": ", c->id, x->zWhy ? x->zWhy : "?",
					         c->id);
				else
					snprintf(why + u, sizeof why - u, "%s#%d is banned",
					         n ? "; " : ": ", c->id);
				n++;
			}
			snprintf(line, sizeof line, "%s%s",
			         st->nCand ? "no correct candidate to be a parent"
			                   : "no candidate to start from (no seed, and no LLM to "
			                     "translate)",
			         why);
			finish(s, line);
			return 1;
		}
	}
	int R = st->search.round + 1;
	const struct policy *pol = policy_find(word(s, "policy", "islands"));
	if (!pol)
		pol = &policy_table[0];
	/* lagged, only candidates never a parent: a parent of an open round
	 * is being worked on, and one of a closed round had its ideas asked
	 * for on a view no older than this one (it waits for the full view) */
	struct intset busy = {0};
	for (int i = 0; lagged && i < st->search.nRound; i++)
		for (int k = 0; k < st->search.aRound[i].nParent; k++)
			set_add(&busy, st->search.aRound[i].aParent[k]);
	struct policy_ctx ctx = {
	    .st = st,
	    .pinned = st->search.pinned,
	    .seed = (uint64_t)num(s, "seed"),
	    .round = R,
	    .excluded = state_search_excluded,
	    .through = lagged ? R - (int)num(s, "overlap") : -1,
	    .aBusy = busy.a,
	    .nBusy = busy.n,
	};
	struct policy_pick pick[POLICY_MAX_PICKS];
	int n = policy_choose(pol, &ctx, (int)num(s, "parents"), pick);
	if (lagged && !n) {
		free(busy.a);
		return 0;
	}
	snprintf(line, sizeof line, "round %d%s", R,
	         lagged ? " (overlapping the open rounds)" : "");
	if (emitted(s, ev_round_started(SES(s), R, st->search.bestId, EL(s), s->zErr), line, NULL) <
	    0) {
		free(busy.a);
		return 1;
	}
	st = ST(s);
	struct ev_parent ap[POLICY_MAX_PICKS];
	char hexes[POLICY_MAX_PICKS][65];
	strbuf sb = STRBUF_INIT;
	sb_addf(&sb, "round %d parents (%s):", R, pol->zName);
	for (int i = 0; i < n; i++) {
		const struct cand *c = state_cand(st, pick[i].cand);
		struct sha256 h;
		sha256_init(&h);
		sha256_update(&h, c->zSource, strlen(c->zSource));
		sha256_hex(&h, hexes[i]);
		ap[i] = (struct ev_parent){
		    .id = c->id,
		    .zName = c->zName,
		    .speedup = c->speedup,
		    .zSha256 = hexes[i],
		    .zReason = pick[i].zReason,
		};
		sb_addf(&sb, "\n  #%d %s: %s", c->id, c->zName, pick[i].zReason);
	}
	/* the snapshot the policy saw, for replay */
	cJSON *snap = cJSON_CreateObject();
	cJSON_AddNumberToObject(snap, "through", ctx.through);
	cJSON *b = cJSON_AddArrayToObject(snap, "busy");
	for (int i = 0; i < busy.n; i++)
		cJSON_AddItemToArray(b, cJSON_CreateNumber(busy.a[i]));
	free(busy.a);
	emitted(
	    s,
	    ev_parents_chosen(SES(s), R, pol->zName, num(s, "seed"), ap, n, snap, EL(s), s->zErr),
	    sb.buf, NULL);
	cJSON_Delete(snap);
	sb_free(&sb);
	return 1;
}

/* ---- the tick ---- */

static void tick(struct search *s)
{
	if (s->inTick) {
		s->again = 1;
		return;
	}
	s->inTick = 1;
	do {
		s->again = 0;
		const struct state *st = ST(s);
		if (!st->search.started)
			break;
		judge_all(s);
		st = ST(s);
		if (st->search.state != SEARCH_RUNNING)
			break;
		/* every open round moves on, the oldest first; they close in order */
		for (int r = oldest_open(st); r >= 0 && r <= ST(s)->search.round; r++) {
			const struct state_round *x = round_at(ST(s), r);
			if (x && !x->finished)
				drive_round(s, r);
		}
		int r;
		while ((r = oldest_open(ST(s))) >= 0 && round_complete(s, r) &&
		       ST(s)->search.state == SEARCH_RUNNING) {
			finish_round(s, r);
			s->again = 1;
		}
		st = ST(s);
		if (st->search.state != SEARCH_RUNNING)
			break;
		judge_all(s); /* the policy sees every verdict judged */
		st = ST(s);
		if (st->search.roundOpen) {
			if (may_overlap(s) && start_round(s, 1))
				s->again = 1;
			continue;
		}
		char buf[200];
		const char *why = stop_reason(s, buf, sizeof buf);
		if (why) {
			finish(s, why);
			break;
		}
		int waiting = 0;
		for (int i = 0; i < st->nCand; i++)
			waiting |= !final(&st->aCand[i]);
		if (waiting || runner_jobs(s->rn) || runner_llm_busy(s->rn))
			break; /* the seeds (or a hand edit) are being evaluated */
		start_round(s, 0);
		s->again = 1;
	} while (s->again);
	s->inTick = 0;
}

static void on_timer(struct loop *l, long long id, void *arg)
{
	(void)id;
	struct search *s = arg;
	s->timer = loop_add_timer(l, TICK_S, on_timer, s);
	tick(s);
}

void search_poke(struct search *s)
{
	if (s)
		tick(s);
}

/* ---- the API ---- */

struct search *search_new(struct runner *rn, search_note_fn notify, void *arg)
{
	struct search *s = xcalloc(1, sizeof *s);
	s->rn = rn;
	s->notify = notify;
	s->arg = arg;
	runner_limit(rn, limit, s);
	return s;
}

void search_free(struct search *s)
{
	if (!s)
		return;
	if (s->timer)
		loop_del_timer(runner_loop(s->rn), s->timer);
	runner_limit(s->rn, NULL, NULL);
	while (s->nWork)
		work_drop(s, s->aWork[0].round);
	free(s->aWork);
	free(s->swept.a);
	free(s->impl.a);
	free(s->judged);
	free(s->abAsked.a);
	free(s);
}

static void describe(struct search *s, strbuf *sb)
{
	sb_addf(sb, "policy %s, seed %g, %g parents, %g ideas, %g branches, gate %s%s",
	        word(s, "policy", "islands"), num(s, "seed"), num(s, "parents"), num(s, "ideas"),
	        num(s, "branches"), word(s, "gate", "auto"),
	        num(s, "sweep_only") ? ", sweeps only" : "");
	static const char *const budgets[] = {
	    "rounds",     "max_candidates", "budget_usd",      "time_s",
	    "no_improve", "target",         "target_roofline", NULL};
	for (int i = 0; budgets[i]; i++)
		if (num(s, budgets[i]) > 0)
			sb_addf(sb, ", %s %g", budgets[i], num(s, budgets[i]));
}

int search_start(struct search *s, const cJSON *set, char *err)
{
	const struct state *st = ST(s);
	const struct state_search *ss = &st->search;
	if (ss->started && ss->state == SEARCH_FINISHED) {
		/* a finished search goes on only when a setting changes (a new budget) */
		int changed = 0;
		const cJSON *it;
		cJSON_ArrayForEach(it, set)
		{
			const cJSON *old = cJSON_GetObjectItem(ss->settings, it->string);
			changed |= !old || !cJSON_Compare(old, it, 1);
		}
		if (!changed)
			return kl_err(err,
			              "the search in this session has finished (%s); give a new "
			              "budget (e.g. --rounds) to go on",
			              ss->zWhy ? ss->zWhy : "done");
	}
	if (!ss->started) {
		cJSON *o = search_defaults();
		const cJSON *it;
		cJSON_ArrayForEach(it, set)
		{
			cJSON_DeleteItemFromObjectCaseSensitive(o, it->string);
			cJSON_AddItemToObject(o, it->string, cJSON_Duplicate(it, 1));
		}
		s->base = 0;
		s->tRun = now_s();
		int rc = emitted(s, ev_search_started(SES(s), o, EL(s), ERR(s, err)),
		                 "search started", err);
		cJSON_Delete(o);
		if (rc < 0)
			return -1;
	} else {
		/* the time spent after the last search event, until the session
		 * ended (kill -9 mid-round: the evaluations' and replies' events
		 * say how long it went on), counts against a time budget too */
		double after = ss->state == SEARCH_RUNNING && ss->tsElapsed > 0
		                   ? ST(s)->tsLast - ss->tsElapsed
		                   : 0;
		s->base = ss->elapsedS + (after > 0 ? after : 0);
		s->tRun = now_s();
		const cJSON *it;
		cJSON_ArrayForEach(it, set)
		{
			const cJSON *old = cJSON_GetObjectItem(ss->settings, it->string);
			if (old && cJSON_Compare(old, it, 1))
				continue;
			if (emitted(s, ev_search_set(SES(s), it->string, it, EL(s), ERR(s, err)),
			            NULL, err) < 0)
				return -1;
		}
		char line[200];
		snprintf(line, sizeof line,
		         "search resumed from the journal at round %d (%.0f s spent)",
		         ST(s)->search.round, s->base);
		if (emitted(s, ev_search_resumed(SES(s), EL(s), ERR(s, err)), line, err) < 0)
			return -1;
	}
	char e2[KL_ERRLEN];
	if (!num(s, "sweep_only"))
		runner_no_repeats(s->rn, e2); /* without an LLM, there is nothing to repeat */
	strbuf sb = STRBUF_INIT;
	describe(s, &sb);
	note(s, sb.buf, NULL);
	sb_free(&sb);
	if (!s->timer)
		s->timer = loop_add_timer(runner_loop(s->rn), TICK_S, on_timer, s);
	tick(s);
	return 0;
}

/* a search was started and (unless want is SEARCH_NONE) is in state want */
static int need(const struct search *s, enum search_state want, char *err)
{
	const struct state_search *ss = &ST(s)->search;
	if (!ss->started)
		return kl_err(err, "no search is running (start one with `search start`)");
	if (want != SEARCH_NONE && ss->state != want)
		return kl_err(err, "the search is %s, not %s", search_state_name(ss->state),
		              search_state_name(want));
	return 0;
}

int search_pause(struct search *s, char *err)
{
	if (need(s, SEARCH_RUNNING, err) < 0)
		return -1;
	s->stepping = 0;
	int rc = emitted(s, ev_search_paused(SES(s), EL(s), ERR(s, err)),
	                 "search paused (what runs finishes; `search resume` goes on)", err);
	s->base = search_elapsed(s);
	s->tRun = 0;
	return rc;
}

int search_resume(struct search *s, char *err)
{
	const struct state_search *ss = &ST(s)->search;
	if (need(s, SEARCH_NONE, err) < 0)
		return -1;
	if (!s->timer && ss->state != SEARCH_FINISHED)
		return search_start(s, NULL, err); /* a journal's search, not yet running here */
	if (ss->state == SEARCH_RUNNING || ss->state == SEARCH_FINISHED)
		return kl_err(err, "the search is %s", search_state_name(ss->state));
	s->tRun = now_s();
	if (emitted(s, ev_search_resumed(SES(s), EL(s), ERR(s, err)), "search resumed", err) < 0)
		return -1;
	if (!s->timer)
		s->timer = loop_add_timer(runner_loop(s->rn), TICK_S, on_timer, s);
	tick(s);
	return 0;
}

int search_stop(struct search *s, const char *zWhy, char *err)
{
	const struct state_search *ss = &ST(s)->search;
	if (need(s, SEARCH_NONE, err) < 0)
		return -1;
	if (search_state_ended(ss->state))
		return kl_err(err, "the search is %s already", search_state_name(ss->state));
	const char *why = zWhy ? zWhy : "stopped by a person";
	char line[200];
	snprintf(line, sizeof line, "search stopped: %s", why);
	int rc = emitted(s, ev_search_stopped(SES(s), why, EL(s), ERR(s, err)), line, err);
	s->base = search_elapsed(s);
	s->tRun = 0;
	return rc;
}

int search_step(struct search *s, const cJSON *settings, char *err)
{
	const struct state_search *ss = &ST(s)->search;
	if (!ss->started) {
		s->stepping = 1;
		if (search_start(s, settings, err) < 0)
			return -1;
		s->stepping = 1;
		return 0;
	}
	if (ss->state == SEARCH_RUNNING)
		return kl_err(err, "the search is running: pause it first");
	s->stepping = 1;
	return search_resume(s, err);
}

/* a candidate id from "12" or "#12" */
static int cand_arg(const struct search *s, const char *z, char *err)
{
	if (!z)
		return kl_err(err, "a candidate id is needed");
	if (*z == '#')
		z++;
	char *end;
	long v = strtol(z, &end, 10);
	if (end == z || *end || !state_cand(ST(s), (int)v))
		return kl_err(err, "there is no candidate '%s'", z);
	return (int)v;
}

static int is_number(const char *z)
{
	if (*z == '#')
		z++;
	if (!*z)
		return 0;
	for (; *z; z++)
		if (*z < '0' || *z > '9')
			return 0;
	return 1;
}

int search_steer(struct search *s, const char *zVerb, const char *zArg, char *err)
{
	if (need(s, SEARCH_NONE, err) < 0)
		return -1;
	char line[400];
	int id;
	if (!strcmp(zVerb, "pin") || !strcmp(zVerb, "clear") || !strcmp(zVerb, "unban") ||
	    (!strcmp(zVerb, "ban") && zArg && is_number(zArg))) {
		if ((id = cand_arg(s, zArg, err)) < 0)
			return -1;
		const struct cand *c = state_cand(ST(s), id);
		if (!strcmp(zVerb, "clear")) {
			const struct state_suspect *x = state_search_suspect(ST(s), id);
			if (!x || x->cleared)
				return kl_err(err, "candidate %d is not a suspect", id);
			snprintf(line, sizeof line,
			         "suspect #%d cleared by a person: it may be a "
			         "parent and the best",
			         id);
			if (emitted(s, ev_suspect_cleared(SES(s), id, EL(s), ERR(s, err)), line,
			            err) < 0)
				return -1;
			if ((size_t)id < s->nJudged)
				s->judged[id] = 0; /* judged again as the best */
		} else {
			if (!strcmp(zVerb, "pin") && !policy_eligible(ST(s), c))
				return kl_err(err,
				              "candidate %d is %s: only a correct, timed candidate "
				              "can be a parent",
				              id, c->zStatus);
			snprintf(line, sizeof line, "%s #%d %s", zVerb, id, c->zName);
			int rc = !strcmp(zVerb, "pin")   ? ev_pin(SES(s), id, EL(s), ERR(s, err))
			         : !strcmp(zVerb, "ban") ? ev_ban(SES(s), id, EL(s), ERR(s, err))
			                                 : ev_unban(SES(s), id, EL(s), ERR(s, err));
			if (emitted(s, rc, line, err) < 0)
				return -1;
		}
	} else if (!strcmp(zVerb, "ban") || !strcmp(zVerb, "prefer")) {
		if (!zArg || !*zArg)
			return kl_err(err, "%s needs a candidate id or an idea category", zVerb);
		const char *zCat = ideas_category_named(zArg);
		if (!zCat) {
			char *z = term_clean(zArg, 0);
			kl_err(err,
			       "'%.80s' is neither a candidate id nor an idea category (one of: "
			       "%s; a prefix of just one will do)",
			       z, ideas_category_list());
			free(z);
			return -1;
		}
		zArg = zCat;
		snprintf(line, sizeof line, "%s ideas of category '%s'",
		         !strcmp(zVerb, "ban") ? "the gate rejects" : "the gate prefers", zArg);
		int rc = !strcmp(zVerb, "ban")
		             ? ev_ban_category(SES(s), zArg, EL(s), ERR(s, err))
		             : ev_prefer_category(SES(s), zArg, EL(s), ERR(s, err));
		if (emitted(s, rc, line, err) < 0)
			return -1;
	} else if (!strcmp(zVerb, "idea")) {
		if (!zArg || !*zArg)
			return kl_err(err, "idea needs some text");
		int pin = ST(s)->search.pinned;
		if ((id = runner_idea_new(s->rn, zArg, pin, err)) < 0 ||
		    runner_idea_accept(s->rn, id, err) < 0)
			return -1;
		snprintf(line, sizeof line,
		         "idea %d injected by a person: implemented in the %s round", id,
		         ST(s)->search.roundOpen ? "current" : "next");
		if (emitted(s, ev_idea_injected(SES(s), id, EL(s), ERR(s, err)), line, err) < 0)
			return -1;
	} else if (!strcmp(zVerb, "gate") || !strcmp(zVerb, "set")) {
		char key[64];
		const char *val = zArg ? zArg : "";
		if (!strcmp(zVerb, "gate")) {
			snprintf(key, sizeof key, "gate");
		} else {
			size_t k = strcspn(val, " ");
			if (!k || k >= sizeof key || !val[k])
				return kl_err(err, "set needs a KEY and a VALUE (keys: %s)",
				              search_setting_keys());
			snprintf(key, sizeof key, "%.*s", (int)k, val);
			val += k + strspn(val + k, " ");
		}
		cJSON *tmp = cJSON_CreateObject();
		if (search_setting_parse(tmp, key, val, err) < 0) {
			cJSON_Delete(tmp);
			return -1;
		}
		snprintf(line, sizeof line, "search setting %s = %s", key, val);
		int rc =
		    ev_search_set(SES(s), key, cJSON_GetObjectItem(tmp, key), EL(s), ERR(s, err));
		cJSON_Delete(tmp);
		if (emitted(s, rc, line, err) < 0)
			return -1;
	} else {
		return kl_err(err,
		              "unknown search command '%s' (pin, ban, unban, prefer, clear, "
		              "idea, gate, set)",
		              zVerb);
	}
	tick(s);
	return 0;
}

int search_waiting(const struct search *s)
{
	const struct state *st = ST(s);
	if (!st->search.roundOpen || strcmp(word(s, "gate", "auto"), "human") ||
	    runner_jobs(s->rn) || runner_llm_busy(s->rn))
		return 0;
	for (int i = 0; i < st->search.nRound; i++)
		if (!st->search.aRound[i].finished && pending_ideas(st, st->search.aRound[i].round))
			return 1;
	return 0;
}

int search_done(const struct search *s)
{
	const struct state_search *ss = &ST(s)->search;
	if (!ss->started || ss->state == SEARCH_NONE)
		return 1;
	if (search_state_live(ss->state))
		return 0;
	return !runner_jobs(s->rn) && !runner_llm_busy(s->rn);
}

void search_status_state(const struct state *st, char *buf, size_t n)
{
	const struct state_search *ss = &st->search;
	if (!ss->started) {
		snprintf(buf, n, "%s", "");
		return;
	}
	const cJSON *set = ss->settings;
	double usd = cJSON_GetNumberValue(cJSON_GetObjectItem(set, "budget_usd"));
	double rounds = cJSON_GetNumberValue(cJSON_GetObjectItem(set, "rounds"));
	double maxc = cJSON_GetNumberValue(cJSON_GetObjectItem(set, "max_candidates"));
	char r[32] = "", c[32] = "", u[32] = "", b[64] = "none";
	if (rounds > 0)
		snprintf(r, sizeof r, "/%g", rounds);
	if (maxc > 0)
		snprintf(c, sizeof c, "/%g", maxc);
	if (usd > 0)
		snprintf(u, sizeof u, "/$%g", usd);
	const struct cand *best = state_cand(st, ss->bestId);
	if (best)
		snprintf(b, sizeof b, "#%d %.3gx", best->id, ss->bestSpeed);
	int nSus = 0, nSame = 0;
	for (int i = 0; i < ss->nSuspect; i++)
		nSus += !ss->aSuspect[i].cleared;
	/* candidates of the same machine code as one timed before: not timed */
	char same[48] = "", open[24] = "";
	for (int i = ss->nCandStart; i < st->nCand; i++)
		nSame += cJSON_GetObjectItem(st->aCand[i].result, "not_timed") != NULL;
	if (nSame)
		snprintf(same, sizeof same, ", %d same code", nSame);
	if (ss->roundOpen > 1)
		snprintf(open, sizeof open, " (%d open)", ss->roundOpen);
	snprintf(buf, n, "search %s, round %d%s%s, %d%s cands%s, $%.2f%s, best %s%s%s",
	         search_state_name(ss->state), ss->round, r, open, st->nCand - ss->nCandStart, c,
	         same, st->llm.cost - ss->costStart, u, b, nSus ? ", suspects " : "",
	         nSus ? "!" : "");
}

void search_status(const struct search *s, char *buf, size_t n)
{
	search_status_state(ST(s), buf, n);
	size_t k = strlen(buf);
	if (k && k + 16 < n)
		snprintf(buf + k, n - k, ", %.0f s", search_elapsed(s));
}

void search_lineage(const struct state *st, int id, strbuf *sb)
{
	int chain[256], n = 0;
	for (const struct cand *c = state_cand(st, id); c && n < 256;
	     c = c->nParent ? state_cand(st, c->aParent[0]) : NULL)
		chain[n++] = c->id;
	for (int i = n - 1; i >= 0; i--) {
		const struct cand *c = state_cand(st, chain[i]);
		sb_addf(sb, "%s#%d %s (%s", i == n - 1 ? "" : " -> ", c->id, c->zName, c->zOrigin);
		if (c->round)
			sb_addf(sb, ", round %d", c->round);
		if (c->zIdea)
			sb_addf(sb, ": %s", c->zIdea);
		if (c->speedup > 0)
			sb_addf(sb, "; %.3gx", c->speedup);
		sb_addf(sb, ")");
	}
}
