/*
 * test_rank.c - the rank rule (state_cand_rank(), its one home) clause by
 * clause, and what each clause rules: the best, a parent, `kloop eval`'s
 * exit status (state_cand_passes()).  First on the folded candidate's
 * fields, one changed at a time from one that ranks, so that dropping any
 * clause from the rule fails a check here; then on verdicts completed by
 * the engine's own constructors (result_complete_from(), roofline_json()),
 * folded as a session folds them, with the precision policy journaled as
 * `kloop eval --precision` journals it (search_set before any search).
 * Every number is given: none depends on a clock.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "event.h"
#include "fold.h"
#include "policy.h"
#include "result.h"
#include "roofline.h"
#include "state.h"
#include "util.h"

static const char *const rankNames[] = {
    [STATE_RANK_YES] = "yes",
    [STATE_RANK_STATUS] = "status",
    [STATE_RANK_REDUCED] = "reduced",
    [STATE_RANK_SUSPECT] = "suspect",
    [STATE_RANK_NO_SPEEDUP] = "no speedup",
    [STATE_RANK_UNVERIFIED] = "unverified",
};

static const char *rank_name(enum state_rank r)
{
	return (unsigned)r < sizeof rankNames / sizeof *rankNames ? rankNames[r] : "?";
}

static void add(struct state *st, int id)
{
	char e[160];
	snprintf(e, sizeof e,
	         "{\"type\":\"candidate_added\",\"id\":%d,\"source\":\"s%d\",\"name\":\"c%d.cu\","
	         "\"ts\":1}",
	         id, id, id);
	fold_check(st, e);
}

/* the rule's word on c, checked against want; the message says what it got */
static void rank_is(const struct state *st, const struct cand *c, enum state_rank want,
                    const char *zWhat)
{
	enum state_rank got = state_cand_rank(st, c);
	CHECK(got == want && state_cand_rankable(st, c) == (want == STATE_RANK_YES),
	      "%s: %s (got %s, rankable %d)", zWhat, rank_name(want), rank_name(got),
	      state_cand_rankable(st, c));
}

/* each clause on the folded fields: a candidate that ranks, one field
 * changed at a time */
static void test_clauses(void)
{
	struct state st;
	state_init(&st);
	fold_check(&st, "{\"type\":\"session_started\",\"task\":\"t\",\"ts\":1}");
	for (int i = 1; i <= 3; i++)
		add(&st, i);
	struct cand *c = state_cand(&st, 1);
	struct cand ok = *c;
	ok.status = STATUS_CORRECT;
	ok.timeMs = 1.0;
	ok.speedup = 4.0;
	*c = ok;
	rank_is(&st, c, STATE_RANK_YES, "correct, 4x, verified, faithful, above the floor");
	CHECK(state_cand_passes(&st, c), "... and it passes (kloop eval exits 0)");
	rank_is(&st, NULL, STATE_RANK_STATUS, "no candidate");

	static const enum status bad[] = {STATUS_NEW, STATUS_INCORRECT, STATUS_CRASHED,
	                                  STATUS_TIMEOUT, STATUS_COMPILE_ERROR};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		*c = ok;
		c->status = bad[i];
		char what[120];
		snprintf(what, sizeof what, "%s, with a speedup of 4x kept from before",
		         status_name(bad[i]));
		rank_is(&st, c, STATE_RANK_STATUS, what);
		CHECK(!state_cand_passes(&st, c), "... it does not pass (got %d)",
		      state_cand_passes(&st, c));
	}

	*c = ok;
	c->unverified = 1;
	rank_is(&st, c, STATE_RANK_UNVERIFIED, "an unverified time, the fastest");
	CHECK(state_cand_passes(&st, c), "... its verdict passes: only its time is out (got %d)",
	      state_cand_passes(&st, c));

	*c = ok;
	c->speedup = -1;
	rank_is(&st, c, STATE_RANK_NO_SPEEDUP, "no speedup (no baseline)");
	c->speedup = 0;
	rank_is(&st, c, STATE_RANK_NO_SPEEDUP, "a speedup of 0");
	CHECK(state_cand_passes(&st, c), "... it passes (got %d)", state_cand_passes(&st, c));

	*c = ok;
	c->reduced = 1;
	CHECK(!state_precision_any(&st), "the policy of a session that journaled none: faithful");
	rank_is(&st, c, STATE_RANK_REDUCED, "reduced precision under `precision faithful`");
	CHECK(!state_cand_passes(&st, c), "... it does not pass (got %d)",
	      state_cand_passes(&st, c));

	*c = ok;
	c->belowFloor = 1;
	rank_is(&st, c, STATE_RANK_SUSPECT, "below the device's floor, not flagged yet");
	CHECK(!state_cand_passes(&st, c), "... it does not pass (got %d)",
	      state_cand_passes(&st, c));

	/* the reasons' order: the verdict's own before its time's */
	*c = ok;
	c->reduced = c->unverified = 1;
	rank_is(&st, c, STATE_RANK_REDUCED, "reduced and unverified: reduced said first");
	*c = ok;
	c->status = STATUS_INCORRECT;
	c->reduced = c->belowFloor = 1;
	rank_is(&st, c, STATE_RANK_STATUS, "incorrect, reduced, below the floor: the status");

	/* the policy, journaled before any search (kloop eval --precision) */
	fold_check(&st,
	           "{\"type\":\"search_set\",\"key\":\"precision\",\"value\":\"any\",\"ts\":2}");
	*c = ok;
	c->reduced = 1;
	CHECK(state_precision_any(&st), "search_set precision any, before any search: the policy");
	rank_is(&st, c, STATE_RANK_YES, "reduced precision under `precision any`");
	CHECK(state_cand_passes(&st, c), "... it passes (got %d)", state_cand_passes(&st, c));
	c->unverified = 1;
	rank_is(&st, c, STATE_RANK_UNVERIFIED, "... but not with an unverified time");

	/* a suspect: held until a person clears it */
	fold_check(&st,
	           "{\"type\":\"search_started\",\"settings\":{\"precision\":\"any\"},\"ts\":3}");
	fold_check(&st, "{\"type\":\"suspect_flagged\",\"candidate\":1,\"speedup\":4,\"why\":\"w\","
	                "\"ts\":4}");
	*c = ok;
	c->belowFloor = 1;
	rank_is(&st, c, STATE_RANK_SUSPECT, "below the floor, flagged, not cleared");
	fold_check(&st, "{\"type\":\"suspect_cleared\",\"candidate\":1,\"ts\":5}");
	rank_is(&st, c, STATE_RANK_YES, "below the floor, cleared by a person");
	CHECK(state_cand_passes(&st, c), "... it passes (got %d)", state_cand_passes(&st, c));
	c->unverified = 1;
	rank_is(&st, c, STATE_RANK_UNVERIFIED, "cleared, but unverified");
	/* a cleared suspect is that candidate's: another below the floor is not */
	struct cand *c2 = state_cand(&st, 2);
	struct cand keep = *c2;
	*c2 = ok;
	c2->id = 2;
	c2->belowFloor = 1;
	rank_is(&st, c2, STATE_RANK_SUSPECT, "another candidate below the floor");
	*c2 = keep;
	*c = ok; /* its strings are the fold's: state_free() frees them */
	state_free(&st);
}

/* ---- the same on verdicts the engine's constructors complete ---- */

#define BASE_MS 4.0 /* the reference's time */

/* a softmax 4096x8192 fp32, on a device of 4800 GB/s: its floor ~0.056 ms */
static struct task sm_task(void)
{
	struct task t = {.nIn = 1, .nOut = 1};
	struct task_tensor x = {.zName = "x", .dtype = KL_F32, .ndim = 2, .shape = {4096, 8192}};
	t.aIn[0] = x;
	t.aOut[0] = x;
	t.aOut[0].zName = "y";
	return t;
}

/*
 * Candidate id's verdict as a worker gives it (status; timing median ms,
 * p10 and p90 at 2% either side, verified or not; zPrecision the precision
 * verdict's word, or NULL; with the roofline of ms where bRoofline),
 * completed by result_complete_from() against a reference of BASE_MS on
 * "H200", journaled in eval_finished and folded.
 */
static void verdict(struct state *st, int id, const char *zStatus, double ms, int verified,
                    const char *zPrecision, int bRoofline)
{
	cJSON *r = cJSON_CreateObject();
	cJSON_AddStringToObject(r, "status", zStatus);
	cJSON *t = cJSON_AddObjectToObject(r, "timing");
	cJSON_AddNumberToObject(t, "median_ms", ms);
	cJSON_AddNumberToObject(t, "p10_ms", ms * 0.98);
	cJSON_AddNumberToObject(t, "p90_ms", ms * 1.02);
	cJSON_AddBoolToObject(t, "verified", verified);
	if (zPrecision)
		cJSON_AddStringToObject(cJSON_AddObjectToObject(r, "precision"), "verdict",
		                        zPrecision);
	if (bRoofline) {
		struct task sm = sm_task();
		struct roofline_dev d = {.bwGbs = 4800};
		cJSON_AddItemToObject(r, "roofline", roofline_json(&sm, &d, ms));
	}
	cJSON *rt = cJSON_CreateObject();
	cJSON_AddNumberToObject(rt, "median_ms", BASE_MS);
	result_complete_from(r, rt, NULL, NULL, "reference.cu", "H200", "softmax", "c.cu", "cuda");
	cJSON_Delete(rt);
	cJSON *ev = cJSON_CreateObject();
	cJSON_AddStringToObject(ev, "type", "eval_finished");
	cJSON_AddNumberToObject(ev, "candidate", id);
	cJSON_AddNumberToObject(ev, "ts", 2);
	cJSON_AddItemToObject(ev, "result", r);
	char err[KL_ERRLEN] = "";
	int rc = state_apply(st, ev, err);
	CHECK(rc == 0, "#%d's verdict folded: %s %g ms (%s)", id, zStatus, ms, rc ? err : "ok");
	cJSON_Delete(ev);
}

/* the greedy policy's parents, as a search chooses them: up to k ids into
 * a, how many returned */
static int parents(const struct state *st, int *a, int k)
{
	struct policy_ctx ctx = {.st = st, .seed = 1, .round = 1, .through = -1};
	ctx.excluded = state_search_excluded;
	struct policy_pick out[POLICY_MAX_PICKS];
	int n = policy_choose(policy_find("greedy"), &ctx, k, out);
	for (int i = 0; i < n; i++)
		a[i] = out[i].cand;
	return n;
}

static int has(const int *a, int n, int id)
{
	for (int i = 0; i < n; i++)
		if (a[i] == id)
			return 1;
	return 0;
}

/* the best's id, 0 for none */
static int best_id(const struct state *st)
{
	const struct cand *b = state_best(st, NULL, NULL);
	return b ? b->id : 0;
}

static void test_session(void)
{
	struct state st;
	state_init(&st);
	char err[KL_ERRLEN] = "";
	fold_check(&st, "{\"type\":\"session_started\",\"task\":\"softmax\",\"ts\":1}");
	for (int i = 1; i <= 5; i++)
		add(&st, i);
	verdict(&st, 1, "correct", 1.0, 1, "faithful", 0);   /* 4x */
	verdict(&st, 2, "correct", 0.5, 0, "faithful", 0);   /* 8x, unverified */
	verdict(&st, 3, "correct", 0.6, 1, "reduced", 0);    /* 6.7x, reduced */
	verdict(&st, 4, "correct", 0.02, 1, "faithful", 1);  /* 200x, below the floor */
	verdict(&st, 5, "incorrect", 0.4, 1, "faithful", 0); /* incorrect */
	const struct cand *c[6] = {NULL};
	for (int i = 1; i <= 5; i++)
		c[i] = state_cand(&st, i);
	CHECK(fabs(c[1]->speedup - 4) < 1e-9 && fabs(c[2]->speedup - 8) < 1e-9,
	      "the constructor's speedups: reference over time (#1 %g, #2 %g)", c[1]->speedup,
	      c[2]->speedup);
	CHECK(c[2]->unverified && c[3]->reduced && c[4]->belowFloor && !c[1]->unverified &&
	          !c[1]->reduced && !c[1]->belowFloor,
	      "the fold decodes the flags (#2 unverified %d, #3 reduced %d, #4 below the floor %d)",
	      c[2]->unverified, c[3]->reduced, c[4]->belowFloor);
	rank_is(&st, c[1], STATE_RANK_YES, "#1");
	rank_is(&st, c[2], STATE_RANK_UNVERIFIED, "#2");
	rank_is(&st, c[3], STATE_RANK_REDUCED, "#3");
	rank_is(&st, c[4], STATE_RANK_SUSPECT, "#4");
	rank_is(&st, c[5], STATE_RANK_STATUS, "#5");

	/* the unverified time is the fastest: never the best, never a parent */
	int a[POLICY_MAX_PICKS], n = parents(&st, a, 4);
	CHECK(best_id(&st) == 1, "the best is #1 (4x), not the faster unverified #2 (got #%d)",
	      best_id(&st));
	CHECK(n == 1 && a[0] == 1, "the greedy policy's parents: #1 alone (got %d: #%d %s)", n,
	      n ? a[0] : 0, n > 1 ? "and more" : "");
	CHECK(!policy_eligible(&st, c[2]) && !policy_eligible(&st, c[3]) &&
	          !policy_eligible(&st, c[4]) && !policy_eligible(&st, c[5]) &&
	          policy_eligible(&st, c[1]),
	      "a parent only if it ranks (eligible: #1 %d, #2 %d, #3 %d, #4 %d, #5 %d)",
	      policy_eligible(&st, c[1]), policy_eligible(&st, c[2]), policy_eligible(&st, c[3]),
	      policy_eligible(&st, c[4]), policy_eligible(&st, c[5]));
	CHECK(state_cand_passes(&st, c[1]) && state_cand_passes(&st, c[2]) &&
	          !state_cand_passes(&st, c[3]) && !state_cand_passes(&st, c[4]) &&
	          !state_cand_passes(&st, c[5]),
	      "kloop eval's exit status: #1 and #2 pass, #3 #4 #5 do not (got %d %d %d %d %d)",
	      state_cand_passes(&st, c[1]), state_cand_passes(&st, c[2]),
	      state_cand_passes(&st, c[3]), state_cand_passes(&st, c[4]),
	      state_cand_passes(&st, c[5]));

	/* kloop eval --precision any journals its policy before any search:
	 * a setting eval takes is the session's; the search's own are not */
	int rc = fold_event(&st, "{\"type\":\"search_set\",\"key\":\"parents\",\"value\":3}", err);
	CHECK(rc < 0 && strstr(err, "before search_started"),
	      "search_set of a search-only setting before a search: refused (%s)",
	      rc < 0 ? err : "taken");
	rc = fold_event(&st, "{\"type\":\"search_set\",\"key\":\"precision\",\"value\":\"some\"}",
	                err);
	CHECK(rc < 0 && strstr(err, "faithful"), "... a policy that does not exist: refused (%s)",
	      rc < 0 ? err : "taken");
	fold_check(&st,
	           "{\"type\":\"search_set\",\"key\":\"precision\",\"value\":\"any\",\"ts\":3}");
	CHECK(!st.search.started && state_precision_any(&st),
	      "search_set precision any before a search: the session's policy, no search (started "
	      "%d)",
	      st.search.started);
	rank_is(&st, c[3], STATE_RANK_YES, "#3, reduced, under `precision any`");
	CHECK(best_id(&st) == 3, "#3 (6.7x) is the best under `precision any` (got #%d)",
	      best_id(&st));
	CHECK(state_cand_passes(&st, c[3]), "... and passes kloop eval (got %d)",
	      state_cand_passes(&st, c[3]));
	n = parents(&st, a, 4);
	CHECK(n == 2 && has(a, n, 3) && has(a, n, 1) && !has(a, n, 2),
	      "the parents: #3 and #1, never the unverified #2 (got %d: #%d #%d)", n, n ? a[0] : 0,
	      n > 1 ? a[1] : 0);

	/* a suspect ranks once a person cleared it */
	fold_check(&st,
	           "{\"type\":\"search_started\",\"settings\":{\"precision\":\"any\"},\"ts\":4}");
	fold_check(&st,
	           "{\"type\":\"suspect_flagged\",\"candidate\":4,\"speedup\":200,\"why\":\"w\","
	           "\"ts\":5}");
	CHECK(best_id(&st) == 3, "a flagged suspect is not the best (got #%d)", best_id(&st));
	fold_check(&st, "{\"type\":\"suspect_cleared\",\"candidate\":4,\"ts\":6}");
	rank_is(&st, c[4], STATE_RANK_YES, "#4, cleared");
	CHECK(best_id(&st) == 4, "cleared, it is the best (got #%d)", best_id(&st));
	fold_check(&st, "{\"type\":\"search_set\",\"key\":\"precision\",\"value\":\"faithful\","
	                "\"elapsed_s\":1,\"ts\":7}");
	rank_is(&st, c[3], STATE_RANK_REDUCED, "#3 after `set precision faithful`");
	n = parents(&st, a, 4);
	CHECK(n == 2 && has(a, n, 4) && has(a, n, 1), "the parents: #4 and #1 (got %d: #%d #%d)", n,
	      n ? a[0] : 0, n > 1 ? a[1] : 0);
	state_free(&st);
}

int main(void)
{
	test_clauses();
	test_session();
	return check_done();
}
