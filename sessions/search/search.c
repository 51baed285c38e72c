/*
 * search.c - the search's state machine: start a round (parents by
 * policy), drive its cheap work (sweeps, crossover: search_propose.c) and
 * its LLM work (ideas, the gate, implementations), judge verdicts as they
 * come (search_judge.c), close the round when nothing of it runs, stop on
 * a budget; and the API to start, pause, resume, stop and step it.  All of
 * it from a timer on the session's loop, through driver_* and journal
 * events.
 */
#include "search.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search_priv.h"
#include "policy.h"
#include "sha256.h"

/* a round's parents, as many as the settings allow, fit what a policy chooses */
_Static_assert(SEARCH_PARENTS_MAX <= POLICY_MAX_PICKS, "a policy chooses every parent asked for");

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
			int t = (int)OPT(s)->translations;
			if (!have && search_llm_ok(s)) {
				char line[120];
				snprintf(line, sizeof line,
				         "translating the reference: %d translation%s", t,
				         t == 1 ? "" : "s");
				note(s, line, NULL);
				struct pipeline *p = driver_llm(s->drv, err);
				if (!p || pipeline_translate(p, t, err) < 0)
					note(s, err, NULL);
			}
		}
		return;
	}
	if (!r)
		return;
	int aPar[STATE_MAX_PARENTS], nPar = r->nParent;
	memcpy(aPar, r->aParent, sizeof aPar);
	/* what is made now belongs to round R (rounds overlap): every call
	 * below says so */
	/* cheap before dear: every parent's sweep and the crossover go first */
	for (int i = 0; i < nPar; i++)
		if (set_add(&s->swept, aPar[i]) && search_cand_ok(s))
			search_sweep(s, R, aPar[i]);
	if (!w->crossed && OPT(s)->crossover > 0 && nPar >= 2) {
		w->crossed = 1;
		search_crossover(s, R, aPar[0], aPar[1]);
	}
	if (!w->llmCrossed && OPT(s)->crossover >= 2 && nPar >= 2 && search_llm_ok(s)) {
		w->llmCrossed = 1;
		search_llm_crossover(s, R, aPar[0], aPar[1]);
	}
	for (int i = 0; i < nPar; i++) {
		if (!search_llm_ok(s) || set_has(&w->asked, aPar[i]))
			continue;
		set_add(&w->asked, aPar[i]);
		if (search_ideas_exist(ST(s), R, aPar[i]))
			continue; /* asked before a restart: not again */
		struct pipeline *p = driver_llm(s->drv, err);
		if (!p || pipeline_ideas(p, aPar[i], (int)OPT(s)->ideas, R, err) < 0) {
			char msg[KL_ERRLEN + 64];
			snprintf(msg, sizeof msg, "ideas for #%d: %s", aPar[i], err);
			note(s, msg, NULL);
		}
	}
	search_gate(s, R);
	search_implement(s, R);
	if (!w->resumed && search_llm_ok(s)) {
		/* a round reopened after kill -9: what its branches were waiting
		 * for is asked again (an implementation, a fix) */
		w->resumed = 1;
		int B = (int)OPT(s)->branches, nb = ST(s)->nBranch;
		for (int i = 0; i < nb; i++) {
			struct state_branch b = ST(s)->aBranch[i];
			const struct state_idea *d = state_idea(ST(s), b.idea);
			if (!d || (b.round ? b.round : d->round) != R)
				continue;
			struct pipeline *p = driver_llm(s->drv, err);
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
					if (!p || pipeline_branch_resume(p, &nbr, B, R, err) < 0)
						note(s, err, NULL);
				}
			if (!p || pipeline_branch_resume(p, &b, B, R, err) < 0) {
				char msg[KL_ERRLEN + 64];
				snprintf(msg, sizeof msg, "resuming: %s", err);
				note(s, msg, NULL);
			}
		}
	}
}

/* ideas of round R waiting for a decision */
int search_pending_ideas(const struct state *st, int R)
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
	if (!work_of(s, R, 0) || pipeline_round_busy(driver_pipeline(s->drv), R, NULL))
		return 0;
	/* round 0's work (the translations) is not marked: all of it */
	if (R == 0 && (driver_jobs(s->drv) || pipeline_busy(driver_pipeline(s->drv))))
		return 0;
	for (int i = 0; i < st->nCand; i++)
		if (st->aCand[i].round == R && !search_final(&st->aCand[i]))
			return 0;
	return strcmp(OPT(s)->gate, "human") || !search_pending_ideas(st, R);
}

static struct ev_search_budget budget(struct search *s)
{
	const struct state *st = ST(s);
	struct ev_search_budget b = {
	    .rounds = search_rounds_done(st),
	    .candidates = search_cands_used(st),
	    .usd = search_usd_used(st),
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
	/* the session's best (state_best(): the search's incumbent, unless a
	 * person's work since took it) with its speedup now */
	const struct cand *b = state_best(st, NULL, NULL);
	if (b)
		snprintf(line, sizeof line, "round %d done: %d candidate%s made; best #%d %s %.3gx",
		         R, made, made == 1 ? "" : "s", b->id, b->zName, b->speedup);
	else
		snprintf(line, sizeof line,
		         "round %d done: %d candidate%s made; no correct candidate yet", R, made,
		         made == 1 ? "" : "s");
	search_emitted(
	    s,
	    ev_round_finished(SES(s), R, b ? b->id : 0, b ? b->speedup : -1, made, EL(s), s->zErr),
	    line, NULL);
	work_drop(s, R);
	snprintf(line, sizeof line, "budget: %d rounds, %d candidates, $%.4f, %.0f s",
	         search_rounds_done(ST(s)), search_cands_used(ST(s)), search_usd_used(ST(s)),
	         search_elapsed(s));
	struct ev_search_budget spent = budget(s);
	search_emitted(s, ev_search_budget(SES(s), &spent, EL(s), s->zErr), line, NULL);
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
	search_emitted(s, ev_search_finished(SES(s), zWhy, &b, EL(s), s->zErr), line, NULL);
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
	double rounds = OPT(s)->rounds;
	char buf[200];
	const struct work *w = work_of(s, R, 0);
	if (OPT(s)->overlap <= 1 || s->stepping || st->search.roundOpen >= OPT(s)->overlap ||
	    R < 1 || !w || !w->asked.n || !search_llm_ok(s) ||
	    (rounds > 0 && rounds_started(st) >= rounds) || search_stop_reason(s, buf, sizeof buf))
		return 0;
	pipeline_round_busy(driver_pipeline(s->drv), R, &unsent);
	return !unsent && !search_pending_ideas(st, R) && driver_llm_room(s->drv);
}

/*
 * A start (a seed, or a translation of round 0: a candidate with no
 * parent) whose verdict is about its time and not its output (correct but
 * unverified, or a timing its bounds contradicted: issue 35) is timed again
 * before the search gives up on it and translates or stops: a busy machine
 * makes both, and the starts are what the search goes on from.  At most
 * SEARCH_SEED_RETIMES evaluations more a start.  Returns 1 when one was
 * asked for (the search waits for it), 0 when none is left to time.
 */
#define SEARCH_SEED_RETIMES 2
static int retime_start(struct search *s)
{
	const struct state *st = ST(s);
	for (int i = 0; i < st->nCand; i++) {
		const struct cand *c = &st->aCand[i];
		int byTime = (c->status == STATUS_CORRECT && c->unverified) ||
		             (c->status == STATUS_INCORRECT && c->zReason &&
		              !strncmp(c->zReason, "timing inconsistent", 19));
		int start = c->zOrigin &&
		            (!strcmp(c->zOrigin, "seed") || !strcmp(c->zOrigin, "translation"));
		if (!byTime || !start || c->nEvals > SEARCH_SEED_RETIMES ||
		    driver_job_of(s->drv, c->id))
			continue;
		char err[KL_ERRLEN], line[400];
		const char *zWhy = c->zReason;
		if (c->status == STATUS_CORRECT) {
			zWhy = c->v.timing.zClockBound;
			if (!zWhy)
				zWhy = "its bound could not be applied";
		}
		snprintf(line, sizeof line,
		         "round 0: %s #%d's time was %s (%.200s): timing it again (%d of %d) "
		         "before the search gives up on it",
		         c->zOrigin, c->id,
		         c->status == STATUS_CORRECT ? "unverified" : "contradicted", zWhy,
		         c->nEvals, SEARCH_SEED_RETIMES);
		if (driver_bench(s->drv, c->id, err) < 0) {
			note(s, err, NULL);
			continue;
		}
		note(s, line, NULL);
		return 1;
	}
	return 0;
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
		if (!anyEligible && retime_start(s))
			return 1;
		if (!anyEligible) {
			int translated = 0;
			for (int i = 0; i < st->search.nRound; i++)
				translated |= st->search.aRound[i].round == 0;
			char err[KL_ERRLEN];
			if (!translated && st->search.round == 0 && search_llm_ok(s) &&
			    driver_llm(s->drv, err)) {
				search_emitted(
				    s, ev_round_started(SES(s), 0, 0, EL(s), s->zErr),
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
	const struct policy *pol = policy_find(OPT(s)->policy);
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
	    .seed = (uint64_t)OPT(s)->seed,
	    .round = R,
	    .excluded = state_search_excluded,
	    .through = lagged ? R - (int)OPT(s)->overlap : -1,
	    .aBusy = busy.a,
	    .nBusy = busy.n,
	};
	struct policy_pick pick[POLICY_MAX_PICKS];
	int n = policy_choose(pol, &ctx, (int)OPT(s)->parents, pick);
	if (lagged && !n) {
		free(busy.a);
		return 0;
	}
	snprintf(line, sizeof line, "round %d%s", R,
	         lagged ? " (overlapping the open rounds)" : "");
	if (search_emitted(s, ev_round_started(SES(s), R, st->search.bestId, EL(s), s->zErr), line,
	                   NULL) < 0) {
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
	search_emitted(
	    s, ev_parents_chosen(SES(s), R, pol->zName, OPT(s)->seed, ap, n, snap, EL(s), s->zErr),
	    sb.buf, NULL);
	cJSON_Delete(snap);
	sb_free(&sb);
	return 1;
}

/* ---- the tick ---- */

void search_tick(struct search *s)
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
		/* a search that stopped or finished judges nothing: a setting
		 * changed then (`set bandwidth_gbs 20`) evaluates nothing again,
		 * and waits for it to go on (issue 39) */
		if (search_state_live(st->search.state))
			search_judge_all(s);
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
		search_judge_all(s); /* the policy sees every verdict judged */
		st = ST(s);
		if (st->search.roundOpen) {
			if (may_overlap(s) && start_round(s, 1))
				s->again = 1;
			continue;
		}
		char buf[200];
		const char *why = search_stop_reason(s, buf, sizeof buf);
		if (why) {
			finish(s, why);
			break;
		}
		int waiting = 0;
		for (int i = 0; i < st->nCand; i++)
			waiting |= !search_final(&st->aCand[i]);
		if (waiting || driver_jobs(s->drv) || pipeline_busy(driver_pipeline(s->drv)))
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
	search_tick(s);
}

void search_poke(struct search *s)
{
	if (s)
		search_tick(s);
}

/* ---- the API ---- */

struct search *search_new(struct driver *drv, search_note_fn notify, void *arg)
{
	struct search *s = xcalloc(1, sizeof *s);
	s->drv = drv;
	s->notify = notify;
	s->arg = arg;
	driver_limit(drv, search_limit, s);
	return s;
}

void search_free(struct search *s)
{
	if (!s)
		return;
	if (s->timer)
		loop_del_timer(driver_loop(s->drv), s->timer);
	driver_limit(s->drv, NULL, NULL);
	while (s->nWork)
		work_drop(s, s->aWork[0].round);
	free(s->aWork);
	free(s->swept.a);
	free(s->impl.a);
	free(s->judged);
	free(s->abAsked.a);
	free(s->abTied.a);
	free(s->rivals.a);
	cJSON_Delete(s->preset);
	free(s);
}

static void describe(struct search *s, strbuf *sb)
{
	sb_addf(sb, "policy %s, seed %g, %g parents, %g ideas, %g branches, gate %s%s",
	        OPT(s)->policy, OPT(s)->seed, OPT(s)->parents, OPT(s)->ideas, OPT(s)->branches,
	        OPT(s)->gate, OPT(s)->sweep_only ? ", sweeps only" : "");
	static const enum search_setting budgets[] = {
	    SS_rounds,     SS_max_candidates, SS_budget_usd,     SS_time_s,
	    SS_no_improve, SS_target,         SS_target_roofline};
	for (size_t i = 0; i < sizeof budgets / sizeof *budgets; i++)
		if (search_settings_num(OPT(s), budgets[i]) > 0)
			sb_addf(sb, ", %s %g", search_setting_info[budgets[i]].zKey,
			        search_settings_num(OPT(s), budgets[i]));
}

/* each setting of from (NULL: none) into o, in place of o's */
static void settings_over(cJSON *o, const cJSON *from)
{
	const cJSON *it;
	cJSON_ArrayForEach(it, from)
	{
		cJSON_DeleteItemFromObjectCaseSensitive(o, it->string);
		cJSON_AddItemToObject(o, it->string, cJSON_Duplicate(it, 1));
	}
}

int search_start(struct search *s, const cJSON *set, char *err)
{
	const struct state *st = ST(s);
	const struct state_search *ss = &st->search;
	int bContinue = 0;
	if (ss->started && ss->state == SEARCH_FINISHED) {
		/* a finished search goes on with a budget given (the same
		 * again goes on too: what its rounds came to no longer stops
		 * it, issue 39), another setting changed now, or one set since
		 * it finished */
		int changed = ss->setSinceEnd;
		const cJSON *it;
		cJSON_ArrayForEach(it, set)
		{
			const cJSON *old = cJSON_GetObjectItem(ss->settings, it->string);
			int k = search_setting_find(it->string);
			changed |= !old || !cJSON_Compare(old, it, 1) ||
			           (k >= 0 && !strcmp(search_setting_info[k].zGroup, "budgets"));
		}
		if (!changed)
			return kl_err(err,
			              "the search in this session has finished (%s); give a new "
			              "budget (e.g. --rounds) to go on",
			              ss->zWhy ? ss->zWhy : "done");
		/* a budget counts the whole search: one spent already would
		 * end it again at once */
		cJSON_ArrayForEach(it, set)
		{
			double v = cJSON_GetNumberValue(it), used = -1;
			const char *what = "";
			if (!strcmp(it->string, "rounds"))
				used = search_rounds_done(st), what = "rounds done";
			else if (!strcmp(it->string, "max_candidates"))
				used = search_cands_used(st), what = "candidates made";
			else if (!strcmp(it->string, "budget_usd"))
				used = search_usd_used(st), what = "dollars spent";
			else if (!strcmp(it->string, "time_s"))
				used = ss->elapsedS, what = "seconds spent";
			if (v > 0 && used >= v)
				return kl_err(
				    err,
				    "the search in this session has finished (%s), with %g %s: "
				    "a budget counts the whole search (give more than %g to go "
				    "on)",
				    ss->zWhy ? ss->zWhy : "done", used, what, used);
		}
		bContinue = 1;
	}
	if (!ss->started) {
		/* the defaults, the session's settings journaled before it
		 * (`kloop eval --precision`), the ones given, and what a person
		 * set before it started, the latest word: from its first round on
		 * (the gate, a budget) */
		cJSON *o = search_defaults();
		settings_over(o, ss->settings);
		settings_over(o, set);
		settings_over(o, s->preset);
		cJSON_Delete(s->preset);
		s->preset = NULL;
		s->base = 0;
		s->tRun = now_s();
		int rc = search_emitted(s, ev_search_started(SES(s), o, EL(s), ERR(s, err)),
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
			if (search_emitted(
			        s, ev_search_set(SES(s), it->string, it, EL(s), ERR(s, err)), NULL,
			        err) < 0)
				return -1;
		}
		char line[300];
		if (bContinue)
			snprintf(line, sizeof line,
			         "search goes on after round %d (it had finished: %s)",
			         ST(s)->search.round,
			         ST(s)->search.zWhy ? ST(s)->search.zWhy : "done");
		else
			snprintf(line, sizeof line,
			         "search resumed from the journal at round %d (%.0f s spent)",
			         ST(s)->search.round, s->base);
		if (search_emitted(s, ev_search_resumed(SES(s), EL(s), bContinue, ERR(s, err)),
		                   line, err) < 0)
			return -1;
	}
	char e2[KL_ERRLEN];
	struct pipeline *p = OPT(s)->sweep_only ? NULL : driver_llm(s->drv, e2);
	if (p) /* without an LLM, there is nothing to repeat */
		pipeline_no_repeats(p, 1);
	strbuf sb = STRBUF_INIT;
	describe(s, &sb);
	note(s, sb.buf, NULL);
	sb_free(&sb);
	if (!s->timer)
		s->timer = loop_add_timer(driver_loop(s->drv), TICK_S, on_timer, s);
	search_tick(s);
	return 0;
}

/* a search was started and (unless want is SEARCH_NONE) is in state want */
int search_need(const struct search *s, enum search_state want, char *err)
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
	if (search_need(s, SEARCH_RUNNING, err) < 0)
		return -1;
	s->stepping = 0;
	int rc = search_emitted(s, ev_search_paused(SES(s), EL(s), ERR(s, err)),
	                        "search paused (what runs finishes; `search resume` goes on)", err);
	s->base = search_elapsed(s);
	s->tRun = 0;
	return rc;
}

int search_resume(struct search *s, char *err)
{
	const struct state_search *ss = &ST(s)->search;
	if (search_need(s, SEARCH_NONE, err) < 0)
		return -1;
	if (!s->timer && ss->state != SEARCH_FINISHED)
		return search_start(s, NULL, err); /* a journal's search, not yet running here */
	if (ss->state == SEARCH_RUNNING || ss->state == SEARCH_FINISHED)
		return kl_err(err, "the search is %s", search_state_name(ss->state));
	s->tRun = now_s();
	if (search_emitted(s, ev_search_resumed(SES(s), EL(s), 0, ERR(s, err)), "search resumed",
	                   err) < 0)
		return -1;
	if (!s->timer)
		s->timer = loop_add_timer(driver_loop(s->drv), TICK_S, on_timer, s);
	search_tick(s);
	return 0;
}

int search_stop(struct search *s, const char *zWhy, char *err)
{
	const struct state_search *ss = &ST(s)->search;
	if (search_need(s, SEARCH_NONE, err) < 0)
		return -1;
	if (search_state_ended(ss->state))
		return kl_err(err, "the search is %s already", search_state_name(ss->state));
	const char *why = zWhy ? zWhy : "stopped by a person";
	char line[200];
	snprintf(line, sizeof line, "search stopped: %s", why);
	int rc = search_emitted(s, ev_search_stopped(SES(s), why, EL(s), ERR(s, err)), line, err);
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
