/*
 * test_search.c - the search's pure parts: sweep points over tunables
 * (allowed values, grid order, seeded random samples), the selection
 * policies (eligibility, the pin, exclusions, reproducibility from the
 * seed whatever the candidates' ids), the fold of the search's events
 * (rounds, reasons, bans, suspects, settings) and the settings' checks.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fverdict.h"
#include "emit.h"
#include "policy.h"
#include "search.h"
#include "session.h"
#include "sweep.h"
#include "util.h"

static const char *src =
    "#include \"kloop.h\"\n#define TILE 16\n#define N 1000\nconst int WARPS = 3;\n"
    "int kl_run(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *s)\n"
    "{\n\treturn TILE + N + WARPS;\n}\n";

static void test_sweep(void)
{
	struct sweep_list l;
	char err[KL_ERRLEN] = "";
	CHECK(sweep_points(src, strlen(src), "grid", 1, 100, &l, err) == 0, "grid sweep: %s", err);
	/* TILE 16 is swept (4, 8, 32, 64); N 1000 and WARPS 3 are not powers of two */
	CHECK(l.n == 4, "a power-of-two #define gets four points, other numbers none (%zu)", l.n);
	const char *want[] = {"TILE=4", "TILE=8", "TILE=32", "TILE=64"};
	int inOrder = l.n == 4;
	for (size_t i = 0; i < l.n && inOrder; i++)
		inOrder = !strcmp(l.v[i].zLabel, want[i]);
	CHECK(inOrder, "grid points in ascending order with their labels");
	CHECK(l.n && strstr(l.v[2].zSource, "#define TILE 32\n") &&
	          strstr(l.v[2].zSource, "#define N 1000"),
	      "a point rewrites only its literal");
	sweep_free(&l);
	CHECK(sweep_points(src, strlen(src), "grid", 1, 2, &l, err) == 0 && l.n == 2,
	      "maxPoints caps the points");
	sweep_free(&l);
	struct sweep_list a, b;
	sweep_points(src, strlen(src), "random", 42, 3, &a, err);
	sweep_points(src, strlen(src), "random", 42, 3, &b, err);
	int same = a.n == b.n && a.n > 0;
	for (size_t i = 0; i < a.n && same; i++)
		same = !strcmp(a.v[i].zSource, b.v[i].zSource);
	CHECK(same, "random points: the same seed, the same points (%zu)", a.n);
	int distinct = 1;
	for (size_t i = 0; i < a.n; i++)
		for (size_t k = i + 1; k < a.n; k++)
			distinct &= strcmp(a.v[i].zSource, a.v[k].zSource) != 0;
	CHECK(distinct, "random points are distinct from each other");
	sweep_free(&a);
	sweep_free(&b);
	CHECK(sweep_points(src, strlen(src), "spiral", 1, 4, &l, err) < 0 &&
	          strstr(err, "unknown sweep mode 'spiral'"),
	      "an unknown mode is an error naming it");
	sweep_free(&l);
	struct tunable t = {.name = "k.block", .value = 256, .kind = TUNABLE_LAUNCH_BLOCK};
	long long v[SWEEP_MAX_VALUES];
	int n = sweep_values(&t, v);
	CHECK(n == 4 && v[0] == 64 && v[3] == 1024, "a block size of 256: 64 to 1024");
	t.value = 1024;
	n = sweep_values(&t, v);
	CHECK(n == 2 && v[0] == 256 && v[1] == 512, "a block size of 1024 stays within 1024");
	t.kind = TUNABLE_LAUNCH_GRID;
	CHECK(sweep_values(&t, v) == 0, "grid sizes are not swept");
}

static int emit(struct session *s, const char *json)
{
	char err[KL_ERRLEN] = "";
	cJSON *e = cJSON_Parse(json);
	int rc = session_emit(s, e, err);
	if (rc < 0)
		printf("# %s: %s\n", json, err);
	return rc;
}

/* a session with candidates 1..n of the given speedups (<0: incorrect),
 * sources "src<k>" (key) */
static void population(struct session *s, const double *sp, const int *key, int n)
{
	emit(s, "{\"type\":\"session_started\",\"task\":\"t\",\"backend\":\"host\"}");
	for (int i = 0; i < n; i++) {
		char *e = xasprintf("{\"type\":\"candidate_added\",\"id\":%d,\"name\":\"c%d.c\","
		                    "\"origin\":\"%s\",\"parents\":[%s],\"source\":\"src%d\"}",
		                    i + 1, i + 1, i ? "llm" : "seed", i ? "1" : "", key[i]);
		emit(s, e);
		free(e);
		/* as the worker makes it: the reference at 1 ms, so speedup sp */
		if (sp[i] < 0)
			e = fv_event(i + 1, 2, fv_make(&(struct fv){.s = STATUS_INCORRECT}));
		else
			e = fv_event(i + 1, 2,
			             fv_make(&(struct fv){.median = 1 / sp[i], .base = 1}));
		emit(s, e);
		free(e);
	}
}

static int choose(const struct state *st, const char *pol, uint64_t seed, int k,
                  struct policy_pick *out)
{
	struct policy_ctx ctx = {.st = st,
	                         .pinned = st->search.pinned,
	                         .seed = seed,
	                         .round = 1,
	                         .excluded = state_search_excluded,
	                         .through = -1};
	return policy_choose(policy_find(pol), &ctx, k, out);
}

static void test_policy(void)
{
	double sp[] = {1.0, 2.0, -1, 3.0, 1.5};
	int key[] = {1, 2, 3, 4, 5};
	struct session *s = session_memory();
	population(s, sp, key, 5);
	struct policy_pick p[POLICY_MAX_PICKS];
	int n = choose(&s->st, "greedy", 1, 2, p);
	CHECK(n == 2 && p[0].cand == 4 && p[1].cand == 2, "greedy: the two fastest (4, 2)");
	n = choose(&s->st, "greedy", 1, 10, p);
	int sawBad = 0;
	for (int i = 0; i < n; i++)
		sawBad |= p[i].cand == 3;
	CHECK(n == 4 && !sawBad, "an incorrect candidate is never a parent (%d picks)", n);
	n = choose(&s->st, "islands", 1, 2, p);
	CHECK(n == 2 && p[0].cand != p[1].cand && *p[0].zReason && strstr(p[0].zReason, "island"),
	      "islands: two different parents, each with its island in the reason");
	/* #6: the machine code of #4, not timed again: #4 stands for it */
	emit(s, "{\"type\":\"candidate_added\",\"id\":6,\"name\":\"c6.c\",\"origin\":\"sweep\","
	        "\"parents\":[4],\"source\":\"src6\"}");
	emit(s, "{\"type\":\"eval_finished\",\"candidate\":6,\"result\":{\"status\":\"correct\","
	        "\"speedup\":3,\"timing\":{\"median_ms\":0.333},\"same_code_as\":4,"
	        "\"not_timed\":\"same machine code as #4, not timed again\"}}");
	int sawSame = 0;
	const char *pols[] = {"greedy", "islands", "random"};
	for (int i = 0; i < 3; i++) {
		n = choose(&s->st, pols[i], 7, 10, p);
		for (int k = 0; k < n; k++)
			sawSame |= p[k].cand == 6;
	}
	CHECK(!sawSame, "a candidate of the same machine code as another is no policy's parent");
	emit(s, "{\"type\":\"search_started\",\"settings\":{}}");
	emit(s, "{\"type\":\"ban\",\"candidate\":4}");
	emit(s, "{\"type\":\"pin\",\"candidate\":5}");
	n = choose(&s->st, "greedy", 1, 2, p);
	CHECK(n == 2 && p[0].cand == 5 && strstr(p[0].zReason, "pinned by a person") &&
	          p[1].cand == 2,
	      "the pin first, the banned #4 never (%d: %d %d)", n, p[0].cand, p[1].cand);
	emit(s, "{\"type\":\"suspect_flagged\",\"candidate\":2,\"speedup\":2,\"why\":\"w\"}");
	n = choose(&s->st, "greedy", 1, 3, p);
	sawBad = 0;
	for (int i = 0; i < n; i++)
		sawBad |= p[i].cand == 2 || p[i].cand == 4;
	CHECK(!sawBad, "a suspect is not a parent until it is cleared");
	emit(s, "{\"type\":\"suspect_cleared\",\"candidate\":2}");
	CHECK(!state_search_excluded(&s->st, 2) && state_search_excluded(&s->st, 4),
	      "cleared: #2 may be a parent again; #4 is still banned");
	session_close(s);

	/* the random policy draws by source, not by id: the same sources under
	 * other ids give the same parents */
	double sp2[] = {1, 1, 1, 1, 1, 1};
	int keyA[] = {1, 2, 3, 4, 5, 6}, keyB[] = {1, 6, 5, 4, 3, 2};
	struct session *a = session_memory(), *b = session_memory();
	population(a, sp2, keyA, 6);
	population(b, sp2, keyB, 6);
	struct policy_pick pa[4], pb[4];
	int na = choose(&a->st, "random", 99, 3, pa), nb = choose(&b->st, "random", 99, 3, pb);
	int same = na == 3 && nb == 3;
	for (int i = 0; i < na && same; i++)
		same = !strcmp(state_cand(&a->st, pa[i].cand)->zSource,
		               state_cand(&b->st, pb[i].cand)->zSource);
	CHECK(same, "random with one seed: the same sources chosen whatever their ids");
	session_close(a);
	session_close(b);
}

static void test_fold(void)
{
	struct session *s = session_memory();
	double sp[] = {1.0, 2.0};
	int key[] = {1, 2};
	char err[KL_ERRLEN] = "";
	population(s, sp, key, 2);
	cJSON *e = cJSON_Parse("{\"type\":\"round_started\",\"round\":1}");
	CHECK(session_emit(s, e, err) < 0 && strstr(err, "before search_started"),
	      "a round before search_started is refused");
	emit(s, "{\"type\":\"search_started\",\"settings\":{\"ideas\":3,\"gate\":\"auto\"},"
	        "\"elapsed_s\":0}");
	emit(s, "{\"type\":\"round_started\",\"round\":1,\"best\":1}");
	emit(s, "{\"type\":\"parents_chosen\",\"round\":1,\"policy\":\"greedy\",\"parents\":"
	        "[{\"id\":2,\"reason\":\"the fastest\"}]}");
	emit(s, "{\"type\":\"candidate_added\",\"id\":3,\"name\":\"c3.c\",\"origin\":\"sweep\","
	        "\"parents\":[2],\"source\":\"s3\"}");
	emit(s, "{\"type\":\"eval_finished\",\"candidate\":3,\"result\":{\"status\":\"correct\","
	        "\"speedup\":4,\"timing\":{\"median_ms\":0.25}}}");
	emit(s, "{\"type\":\"new_best\",\"candidate\":3,\"speedup\":4}");
	emit(s, "{\"type\":\"round_finished\",\"round\":1,\"best\":3,\"best_speedup\":4,"
	        "\"elapsed_s\":12.5}");
	emit(s, "{\"type\":\"search_set\",\"key\":\"ideas\",\"value\":5}");
	emit(s, "{\"type\":\"ban_category\",\"category\":\"precision\"}");
	const struct state_search *ss = &s->st.search;
	CHECK(ss->nRound == 1 && ss->aRound[0].nParent == 1 && ss->aRound[0].aParent[0] == 2 &&
	          !strcmp(ss->aRound[0].azReason[0], "the fastest") && ss->aRound[0].finished,
	      "a round: its parents with their reasons, finished");
	CHECK(state_cand(&s->st, 3)->round == 1 && state_cand(&s->st, 1)->round == 0,
	      "candidates carry the round that made them");
	CHECK(ss->bestId == 3 && ss->bestSpeed == 4 && ss->elapsedS == 12.5,
	      "the best and the elapsed time are folded");
	CHECK(cJSON_GetNumberValue(cJSON_GetObjectItem(ss->settings, "ideas")) == 5,
	      "search_set changes a setting");
	CHECK(state_search_cat_banned(&s->st, "precision") &&
	          !state_search_cat_banned(&s->st, "fusion"),
	      "a banned idea category");
	e = cJSON_Parse("{\"type\":\"pin\",\"candidate\":9}");
	CHECK(session_emit(s, e, err) < 0 && strstr(err, "does not exist (9)"),
	      "pinning a candidate that does not exist is refused");
	cJSON *j = state_search_json(&s->st);
	CHECK(j && cJSON_GetArraySize(cJSON_GetObjectItem(j, "rounds")) == 1 &&
	          !strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(j, "state")), "running"),
	      "the search as JSON");
	cJSON_Delete(j);
	char line[200];
	search_status_state(&s->st, line, sizeof line);
	CHECK(strstr(line, "search running, round 1") && strstr(line, "best #3 4x") &&
	          !strstr(line, "same code"),
	      "the header's line: %s", line);
	/* a sweep point of the same machine code as its parent: not timed */
	emit(s, "{\"type\":\"candidate_added\",\"id\":4,\"name\":\"c4.c\",\"origin\":\"sweep\","
	        "\"parents\":[2],\"source\":\"s4\"}");
	emit(s, "{\"type\":\"eval_finished\",\"candidate\":4,\"result\":{\"status\":\"correct\","
	        "\"speedup\":2,\"timing\":{\"median_ms\":0.5},\"same_code_as\":2,"
	        "\"not_timed\":\"same machine code as #2, not timed again\"}}");
	search_status_state(&s->st, line, sizeof line);
	CHECK(strstr(line, "2 cands, 1 same code,"),
	      "the header counts the candidates not timed again: %s", line);
	session_close(s);
}

/* the typed emitters (event.h) write the journal format the search always
 * wrote, and each is an entry of the event table that folds it */
static void test_emitters(void)
{
	struct session *s = session_memory();
	double sp[] = {1.0, 2.0};
	int key[] = {1, 2};
	char err[KL_ERRLEN] = "";
	population(s, sp, key, 2);
	cJSON *set = cJSON_Parse("{\"ideas\":3}");
	CHECK(ev_search_started(s, set, 0, err) == 0, "search_started: %s", err);
	cJSON_Delete(set);
	const cJSON *last = session_last(s);
	CHECK(!strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(last, "type")), "search_started") &&
	          cJSON_GetNumberValue(
	              cJSON_GetObjectItem(cJSON_GetObjectItem(last, "settings"), "ideas")) == 3 &&
	          cJSON_IsNumber(cJSON_GetObjectItem(last, "elapsed_s")) &&
	          cJSON_IsNumber(cJSON_GetObjectItem(last, "seq")),
	      "session_last: the journaled search_started with its settings, elapsed_s and seq");
	CHECK(ev_round_started(s, 1, 2, 1.5, err) == 0, "round_started: %s", err);
	struct ev_parent par = {2, "c2.c", 2.0, "00ff", "the fastest"};
	CHECK(ev_parents_chosen(s, 1, "greedy", 7, &par, 1, NULL, 2, err) == 0,
	      "parents_chosen: %s", err);
	last = session_last(s);
	const cJSON *p0 = cJSON_GetArrayItem(cJSON_GetObjectItem(last, "parents"), 0);
	CHECK(cJSON_GetNumberValue(cJSON_GetObjectItem(p0, "id")) == 2 &&
	          !strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(p0, "source_sha256")), "00ff") &&
	          cJSON_GetNumberValue(cJSON_GetObjectItem(last, "seed")) == 7,
	      "parents_chosen carries each parent's id, hash and reason, and the seed");
	CHECK(ev_new_best(s, 2, 2.0, 0.5, 1, 1.0, 3, err) == 0 &&
	          cJSON_GetNumberValue(cJSON_GetObjectItem(session_last(s), "previous")) == 1,
	      "new_best names the incumbent it unseats");
	CHECK(ev_pin(s, 1, 3, err) == 0 && s->st.search.pinned == 1, "pin folds");
	CHECK(ev_ban(s, 1, 3, err) == 0 && s->st.search.pinned == 0 &&
	          state_search_excluded(&s->st, 1),
	      "ban folds (and drops the pin)");
	CHECK(ev_unban(s, 1, 3, err) == 0 && !state_search_excluded(&s->st, 1), "unban folds");
	CHECK(ev_prefer_category(s, "fusion", 3, err) == 0 &&
	          state_search_cat_preferred(&s->st, "fusion"),
	      "prefer_category folds");
	CHECK(ev_suspect_flagged(s, 2, 50, "too fast", 3, err) == 0 &&
	          state_search_excluded(&s->st, 2) && ev_suspect_cleared(s, 2, 3, err) == 0 &&
	          !state_search_excluded(&s->st, 2),
	      "suspect_flagged holds a candidate back, suspect_cleared lets it go");
	CHECK(ev_round_finished(s, 1, 2, 2.0, 0, 4, err) == 0 && !s->st.search.roundOpen &&
	          s->st.search.aRound[0].finished,
	      "round_finished closes the round");
	struct ev_search_budget b = {1, 0, 0, 0.25};
	CHECK(ev_search_budget(s, &b, 4.5, err) == 0 && s->st.search.elapsedS == 4.5 &&
	          cJSON_GetNumberValue(cJSON_GetObjectItem(session_last(s), "usd")) == 0.25,
	      "search_budget: the spending and the elapsed time");
	CHECK(ev_search_paused(s, 5, err) == 0 && s->st.search.state == SEARCH_PAUSED &&
	          ev_search_resumed(s, 5, 0, err) == 0 && s->st.search.state == SEARCH_RUNNING,
	      "paused, resumed");
	CHECK(ev_search_finished(s, "1 rounds done", &b, 6, err) == 0 &&
	          s->st.search.state == SEARCH_FINISHED &&
	          !strcmp(s->st.search.zWhy, "1 rounds done"),
	      "search_finished with its reason");
	cJSON *v4 = cJSON_CreateNumber(4);
	CHECK(ev_search_set(s, "rounds", v4, 6, err) == 0 && s->st.search.setSinceEnd &&
	          !s->st.search.continued,
	      "a setting changed after it finished is remembered (search start goes on with it)");
	cJSON_Delete(v4);
	CHECK(ev_search_resumed(s, 7, 1, err) == 0 && s->st.search.continued &&
	          s->st.search.contRound == s->st.search.round && !s->st.search.setSinceEnd &&
	          cJSON_IsTrue(cJSON_GetObjectItem(session_last(s), "continued")),
	      "a finished search that goes on: search_resumed says continued, and the fold "
	      "keeps the round it went on after (%d)",
	      s->st.search.contRound);
	cJSON *ab = cJSON_Parse("{\"pairs\": 20, \"wins\": 18, \"p_value\": 0.0002, \"ratio\": "
	                        "1.31, \"won\": true, \"rule\": \"sign test\", \"candidate\": "
	                        "{\"median_ms\": 1.0}, \"incumbent\": {\"median_ms\": 1.31}}");
	const struct state_ab *sa;
	CHECK(ev_ab_compared(s, 2, 1, ab, err) == 0 && (sa = state_ab(&s->st, 2, 1)) &&
	          sa->pairs == 20 && sa->wins == 18 && sa->won && sa->ratio == 1.31 &&
	          !state_ab(&s->st, 1, 2) &&
	          cJSON_GetNumberValue(cJSON_GetObjectItem(session_last(s), "incumbent_ms")) ==
	              1.31,
	      "ab_compared folds the pairs, the wins and the verdict of candidate 2 against 1");
	CHECK(ev_ab_compared(s, 2, 9, ab, err) < 0 && strstr(err, "must both exist"),
	      "ab_compared against a candidate that does not exist is refused (%s)", err);
	cJSON_Delete(ab);
	CHECK(ev_pin(s, 9, 6, err) < 0 && strstr(err, "does not exist (9)") && !session_last(s),
	      "a refused event: an error naming it, and no last event");
	session_close(s);
}

/* rounds that overlap: several open at once, work told apart by its
 * "round", the rounds that improved, and the policy's snapshot */
static void test_overlap(void)
{
	struct session *s = session_memory();
	double sp[] = {1.0, 2.0, 3.0};
	int key[] = {1, 2, 3};
	population(s, sp, key, 3);
	emit(s, "{\"type\":\"search_started\",\"settings\":{\"overlap\":2}}");
	emit(s, "{\"type\":\"round_started\",\"round\":1,\"best\":3}");
	emit(s, "{\"type\":\"parents_chosen\",\"round\":1,\"policy\":\"greedy\",\"parents\":"
	        "[{\"id\":3,\"reason\":\"r\"}],\"snapshot\":{\"through\":-1,\"busy\":[]}}");
	emit(s, "{\"type\":\"round_started\",\"round\":2,\"best\":3}");
	emit(s, "{\"type\":\"parents_chosen\",\"round\":2,\"policy\":\"greedy\",\"parents\":"
	        "[{\"id\":2,\"reason\":\"r\"}],\"snapshot\":{\"through\":0,\"busy\":[3]}}");
	const struct state_search *ss = &s->st.search;
	CHECK(ss->roundOpen == 2 && ss->round == 2, "two rounds open, the latest is 2 (%d, %d)",
	      ss->roundOpen, ss->round);
	char line[200];
	search_status_state(&s->st, line, sizeof line);
	CHECK(strstr(line, "search running, round 2 (2 open), 0 cands"), "the header's line: %s",
	      line);
	CHECK(!ss->aRound[0].lagged && ss->aRound[1].lagged,
	      "round 2's parents came from a lagged snapshot, round 1's did not");
	/* round 1's reply arrives while round 2 is the latest */
	emit(s, "{\"type\":\"idea_proposed\",\"id\":1,\"title\":\"t\",\"origin\":\"llm\","
	        "\"parent\":3,\"round\":1}");
	emit(s, "{\"type\":\"candidate_added\",\"id\":4,\"name\":\"c4.c\",\"origin\":\"llm\","
	        "\"parents\":[3],\"source\":\"src4\",\"idea_id\":1,\"round\":1}");
	emit(s, "{\"type\":\"candidate_added\",\"id\":5,\"name\":\"c5.c\",\"origin\":\"human\","
	        "\"parents\":[2],\"source\":\"src5\"}");
	CHECK(state_idea(&s->st, 1)->round == 1 && state_cand(&s->st, 4)->round == 1,
	      "an idea and a candidate carrying \"round\": 1 belong to round 1, not the latest");
	CHECK(state_cand(&s->st, 5)->round == 2,
	      "a candidate without \"round\" belongs to the latest open round");
	emit(s, "{\"type\":\"eval_finished\",\"candidate\":4,\"result\":{\"status\":"
	        "\"correct\",\"speedup\":5,\"timing\":{\"median_ms\":0.2}}}");
	emit(s, "{\"type\":\"new_best\",\"candidate\":4,\"speedup\":5}");
	emit(s, "{\"type\":\"round_finished\",\"round\":1,\"best\":4,\"made\":1}");
	CHECK(ss->roundOpen == 1 && ss->aRound[0].finished && !ss->aRound[1].finished,
	      "round 1 closes while round 2 stays open");
	CHECK(ss->aRound[0].improved && !ss->aRound[1].improved,
	      "the round whose candidate became the best improved, not the one open when it "
	      "did");

	/* the policy's snapshot: through 0 sees no candidate of a round */
	struct policy_pick p[POLICY_MAX_PICKS];
	struct policy_ctx ctx = {
	    .st = &s->st, .seed = 1, .round = 3, .excluded = state_search_excluded, .through = -1};
	int n = policy_choose(policy_find("greedy"), &ctx, 1, p);
	CHECK(n == 1 && p[0].cand == 4, "every round seen: #4 (5x) is the fastest");
	ctx.through = 0;
	n = policy_choose(policy_find("greedy"), &ctx, 1, p);
	CHECK(n == 1 && p[0].cand == 3, "through 0: round 1's #4 is not seen, #3 is the fastest");
	int busy[] = {3, 2};
	ctx.aBusy = busy;
	ctx.nBusy = 2;
	n = policy_choose(policy_find("greedy"), &ctx, 3, p);
	CHECK(n == 1 && p[0].cand == 1, "busy parents are not chosen again: only #1 (%d)", n);
	session_close(s);
}

static void test_settings(void)
{
	char err[KL_ERRLEN] = "";
	cJSON *o = search_defaults();
	CHECK(!strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(o, "policy")), "islands") &&
	          cJSON_GetNumberValue(cJSON_GetObjectItem(o, "ideas")) == 3,
	      "defaults: islands, 3 ideas");
	CHECK(search_setting_parse(o, "branches", "4", err) == 0 &&
	          cJSON_GetNumberValue(cJSON_GetObjectItem(o, "branches")) == 4,
	      "branches 4");
	CHECK(search_setting_parse(o, "branches", "0", err) < 0 &&
	          strstr(err, "branches: expected a whole number from 1 to 16, got '0'"),
	      "branches 0 is refused: %s", err);
	CHECK(search_setting_parse(o, "gate", "maybe", err) < 0 &&
	          strstr(err, "expected one of auto|human"),
	      "gate maybe is refused");
	/* `set gate humn` names the key; `gate humn`, whose command is the
	 * key, says what is wrong with the value alone (nothing edited after) */
	CHECK(
	    search_setting_parse(o, "gate", "humn", err) < 0 &&
	        !strcmp(err, "gate: expected one of auto|human, got 'humn': did you mean 'human'?"),
	    "set gate humn: the key named (%s)", err);
	CHECK(search_setting_parse_value(o, "gate", "humn", err) < 0 &&
	          !strcmp(err, "expected one of auto|human, got 'humn': did you mean 'human'?"),
	      "gate humn: the value's fault alone (%s)", err);
	CHECK(search_setting_parse_value(o, "branches", "0", err) < 0 &&
	          !strcmp(err, "expected a whole number from 1 to 16, got '0'"),
	      "a number's range without the key (%s)", err);
	CHECK(search_setting_parse(o, "budget_usd", "2.5", err) == 0, "a budget in dollars");
	CHECK(search_setting_parse(o, "speed", "1", err) < 0 &&
	          strstr(err, "unknown search setting 'speed'"),
	      "an unknown key is named");
	CHECK(cJSON_GetNumberValue(cJSON_GetObjectItem(o, "overlap")) == 2 &&
	          search_setting_parse(o, "overlap", "9", err) < 0 &&
	          strstr(err, "overlap: expected a whole number from 1 to 8, got '9'"),
	      "overlap: 2 rounds open at once by default, at most 8 (%s)", err);
	cJSON_Delete(o);
}

int main(void)
{
	test_sweep();
	test_policy();
	test_fold();
	test_emitters();
	test_overlap();
	test_settings();
	return check_done();
}
