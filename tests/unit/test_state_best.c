/*
 * test_state_best.c - honest numbers (issue 39), at the fold: one baseline
 * a session (the first result's on a device, or a re-measure's), so the
 * same machine code has the same speedup whatever the run timed the
 * reference at; and one best (state_best()), decided as the search decides
 * it: the first verdict holds it until an A/B win or a time outside its
 * noise takes it, a copy is no rival, an A/B that found two within the
 * noise says so and never "no A/B".  Each result here is constructed: no
 * number depends on a clock.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "fverdict.h"
#include "event.h"
#include "fold.h"
#include "report.h"
#include "state.h"
#include "util.h"

static void add(struct state *st, int id)
{
	char e[160];
	snprintf(e, sizeof e,
	         "{\"type\":\"candidate_added\",\"id\":%d,\"source\":\"s%d\",\"ts\":1}", id, id);
	fold_check(st, e);
}

/* a correct result on device zDev, as the worker makes one (fverdict.h):
 * median m (p10 lo, p90 hi), the baseline its run timed (base: the speedup
 * is base / m), its code hash and the candidate whose machine code it is
 * (zHash, sameAs; NULL, 0: none) */
static void timed(struct state *st, int id, const char *zDev, double base, double m, double lo,
                  double hi, const char *zHash, int sameAs)
{
	cJSON *r =
	    fv_make(&(struct fv){.median = m, .p10 = lo, .p90 = hi, .base = base, .zDevice = zDev});
	struct verdict v;
	verdict_decode(r, &v);
	v.zCodeHash = zHash;
	v.sameCodeAs = sameAs;
	verdict_encode(r, &v, 0);
	char *e = fv_event(id, 2, r);
	fold_check(st, e);
	free(e);
}

static void ab(struct state *st, int cand, int inc, int wins, double ratio, int won)
{
	char e[300];
	snprintf(e, sizeof e,
	         "{\"type\":\"ab_compared\",\"candidate\":%d,\"incumbent\":%d,\"pairs\":20,"
	         "\"wins\":%d,\"ratio\":%g,\"won\":%s,\"ts\":3}",
	         cand, inc, wins, ratio, won ? "true" : "false");
	fold_check(st, e);
}

static int near(double a, double b)
{
	return fabs(a - b) < 1e-9 * fabs(b);
}

static double res_num(const struct cand *c, const char *k)
{
	const cJSON *v = cJSON_GetObjectItem(c->result, k);
	return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static void test_baseline(void)
{
	struct state st;
	state_init(&st);
	fold_check(&st, "{\"type\":\"session_started\",\"task\":\"t\",\"ts\":1}");
	for (int i = 1; i <= 5; i++)
		add(&st, i);
	/* the session began with 7.41 ms; a reopen timed the reference at
	 * 4.48 ms, and #4, the same machine code as #3, was not timed again */
	timed(&st, 1, "H200", 7.41, 3.0, 2.9, 3.1, NULL, 0);
	timed(&st, 3, "H200", 7.41, 1.59, 1.55, 1.62, "abc", 0);
	timed(&st, 4, "H200", 4.48, 1.59, 1.55, 1.62, "abc", 3);
	const struct cand *c3 = state_cand(&st, 3), *c4 = state_cand(&st, 4);
	CHECK(near(c3->speedup, 7.41 / 1.59) && near(c4->speedup, c3->speedup),
	      "the same machine code has the same speedup, against the session's baseline "
	      "(%.4g and %.4g; the reopen's own 4.48 ms would say 2.82x)",
	      c3->speedup, c4->speedup);
	CHECK(near(res_num(c4, "speedup"), c4->speedup) && near(res_num(c4, "baseline_ms"), 7.41) &&
	          near(res_num(c4, "baseline_measured_ms"), 4.48),
	      "its result says so (speedup, baseline_ms 7.41) and keeps what its run measured "
	      "(baseline_measured_ms 4.48)");
	CHECK(isnan(res_num(c3, "baseline_measured_ms")),
	      "a result against the session's own baseline has no measured one beside it");
	CHECK(near(st.baselineMs, 7.41) && near(state_baseline(&st, "H200"), 7.41) &&
	          state_baseline(&st, "B200") < 0,
	      "the session's baseline: the first result's, on its device; none elsewhere");
	/* another device model: its own baseline, the first from there */
	timed(&st, 5, "B200", 5.0, 1.0, 0.99, 1.01, NULL, 0);
	CHECK(near(state_cand(&st, 5)->speedup, 5.0) && near(state_baseline(&st, "B200"), 5.0),
	      "another GPU model has its own baseline (5x against 5 ms)");
	/* a re-measure: every speedup on that device against it, the others
	 * untouched */
	fold_check(&st, "{\"type\":\"baseline\",\"device\":\"H200\",\"median_ms\":6.0,"
	                "\"previous_ms\":7.41,\"ts\":5}");
	CHECK(near(c3->speedup, 6.0 / 1.59) && near(c4->speedup, 6.0 / 1.59) &&
	          near(state_cand(&st, 1)->speedup, 2.0) && near(res_num(c3, "baseline_ms"), 6.0),
	      "a re-measure rescales every speedup on its device (#1 2x, #3 and #4 %.4g)",
	      c3->speedup);
	CHECK(near(state_cand(&st, 5)->speedup, 5.0) && st.aBase[0].remeasured &&
	          !st.aBase[1].remeasured,
	      "... and no other device's; the baseline says it was re-measured");
	CHECK(near(res_num(c3, "baseline_measured_ms"), 7.41) &&
	          near(res_num(c4, "baseline_measured_ms"), 4.48),
	      "what each run measured stays beside it (7.41 and 4.48 ms)");
	/* a later result from H200 is against the re-measured one */
	timed(&st, 2, "H200", 7.41, 1.2, 1.1, 1.3, NULL, 0);
	CHECK(near(state_cand(&st, 2)->speedup, 5.0), "a result after it: against the new one");
	/* a hand-edited baseline is refused with its line */
	char err[KL_ERRLEN];
	cJSON *e = cJSON_Parse("{\"type\":\"baseline\",\"median_ms\":-1}");
	CHECK(state_apply(&st, e, err) < 0 && strstr(err, "positive"),
	      "a baseline of -1 ms is refused: %s", err);
	cJSON_Delete(e);
	/* an old journal's baseline (no device): the session's, every device's */
	fold_check(&st, "{\"type\":\"baseline\",\"median_ms\":3.0,\"ts\":6}");
	CHECK(near(state_cand(&st, 1)->speedup, 1.0) && near(state_cand(&st, 5)->speedup, 3.0),
	      "an old journal's baseline event, without a device, sets every device's");
	/* a result whose speedup divides its events' median (its time its
	 * kernels' durations, the baseline's events: result.c): so does the
	 * session's */
	add(&st, 6);
	cJSON *r6 = fv_make(
	    &(struct fv){.median = 1.0, .p10 = 1.0, .p90 = 1.0, .base = 3.0, .zDevice = "H200"});
	cJSON_AddNumberToObject(r6, "speedup_time_ms", 1.5);
	char *e6 = fv_event(6, 2, r6);
	fold_check(&st, e6);
	free(e6);
	CHECK(near(state_cand(&st, 6)->speedup, 2.0) &&
	          near(res_num(state_cand(&st, 6), "speedup"), 2.0),
	      "a result timed by its kernels against events: the session's speedup divides its "
	      "speedup_time_ms (3 / 1.5 = %g), its time stays %g ms",
	      state_cand(&st, 6)->speedup, state_cand(&st, 6)->timeMs);
	cJSON *j = state_to_json(&st);
	CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(j, "baselines")) == 3 &&
	          cJSON_IsObject(cJSON_GetObjectItem(j, "best")),
	      "the state's JSON has the baselines (H200, B200, and the old journal's) and the "
	      "best");
	cJSON_Delete(j);
	state_free(&st);
}

static void test_best(void)
{
	struct state st;
	char t[200];
	state_init(&st);
	fold_check(&st, "{\"type\":\"session_started\",\"task\":\"t\",\"ts\":1}");
	for (int i = 1; i <= 9; i++)
		add(&st, i);
	state_best_text(&st, t, sizeof t);
	CHECK(!strcmp(t, "best -"), "nothing ranks: %s", t);
	/* #1 first; #2 faster by its median, within #1's noise, no A/B */
	timed(&st, 1, "D", 10, 1.0, 0.95, 1.05, NULL, 0);
	timed(&st, 2, "D", 10, 0.97, 0.93, 1.01, NULL, 0);
	struct state_best_info b = state_best_info(&st);
	state_best_text(&st, t, sizeof t);
	CHECK(b.best && b.best->id == 1 && !b.confirmed && b.tie == 2 &&
	          !strcmp(t, "best 10x (#1, unconfirmed: #2 within noise, no A/B)"),
	      "within the noise, no A/B: the first keeps the best, unconfirmed (as the search "
	      "keeps its incumbent): %s",
	      t);
	/* the A/B finds them within the noise: #1 stays, and it says so */
	ab(&st, 2, 1, 11, 1.01, 0);
	b = state_best_info(&st);
	state_best_text(&st, t, sizeof t);
	CHECK(b.best && b.best->id == 1 && b.confirmed && b.abTie == 2 && !strstr(t, "no A/B") &&
	          !strcmp(t, "best 10x (#1, A/B: #2 within noise)"),
	      "an A/B that found #2 within the noise: #1 stays, never \"no A/B\": %s", t);
	/* #3 faster outside the noise by separate timings, but its A/B was
	 * not beyond the noise (a loaded machine): refuted, #1 stays */
	timed(&st, 3, "D", 10, 0.67, 0.6, 0.7, NULL, 0);
	b = state_best_info(&st);
	CHECK(b.best && b.best->id == 3 && b.confirmed,
	      "faster outside the noise, no A/B between them: #3 takes it (%d)",
	      b.best ? b.best->id : 0);
	ab(&st, 3, 1, 10, 1.01, 0);
	b = state_best_info(&st);
	state_best_text(&st, t, sizeof t);
	CHECK(b.best && b.best->id == 1 && !strcmp(t, "best 10x (#1, A/B: #2 within noise)"),
	      "... until its A/B against #1 was not beyond the noise: refuted, #1 stays: %s", t);
	/* #4, a copy of #1 (the same machine code, not timed again): no rival */
	timed(&st, 4, "D", 10, 1.0, 0.95, 1.05, "h1", 1);
	b = state_best_info(&st);
	CHECK(b.best && b.best->id == 1 && b.tie != 4 && b.abTie != 4,
	      "a copy of the best is not its rival");
	/* #5 beats #4 (#1's machine code) in an A/B: the best, confirmed, and
	 * #1 is no unconfirming tie (the A/B against its copy counts) */
	timed(&st, 5, "D", 10, 0.98, 0.9, 1.04, NULL, 0);
	ab(&st, 5, 4, 19, 1.62, 1);
	b = state_best_info(&st);
	state_best_text(&st, t, sizeof t);
	CHECK(b.best && b.best->id == 5 && b.tie != 1 && b.tie != 4,
	      "#5 won an A/B against #4, #1's copy: the best, #1 and #4 settled: %s", t);
	CHECK(!b.confirmed && b.tie == 2,
	      "... unconfirmed only by #2, within its noise and never timed against it: %s", t);
	strbuf sb = STRBUF_INIT;
	report_compare(&st, state_cand(&st, 1), state_cand(&st, 5), &sb);
	CHECK(strstr(sb.buf,
	             "A/B       #5 against #4: 1.62x over 20 interleaved pairs, faster in 19; "
	             "won, beyond the noise (of the same machine code as these)") &&
	          !strstr(sb.buf, "none run"),
	      ":compare #1 #5 shows the A/B against #1's copy, not \"none run\": %s", sb.buf);
	sb_free(&sb);
	/* a failed A/B takes nothing */
	timed(&st, 6, "D", 10, 0.5, 0.49, 0.51, NULL, 0);
	fold_check(&st, "{\"type\":\"ab_compared\",\"candidate\":6,\"incumbent\":5,\"pairs\":0,"
	                "\"error\":\"the incumbent failed\",\"ts\":4}");
	b = state_best_info(&st);
	CHECK(b.best && b.best->id == 5, "an A/B that could not run leaves the best where it was");
	/* banned and held suspects do not compete */
	timed(&st, 7, "D", 10, 0.2, 0.19, 0.21, NULL, 0);
	fold_check(&st, "{\"type\":\"search_started\",\"settings\":{},\"ts\":5}");
	fold_check(&st,
	           "{\"type\":\"suspect_flagged\",\"candidate\":7,\"speedup\":50,\"why\":\"w\","
	           "\"ts\":5}");
	CHECK(state_best(&st, NULL, NULL)->id == 5, "a held suspect is not the best");
	fold_check(&st, "{\"type\":\"suspect_cleared\",\"candidate\":7,\"ts\":6}");
	CHECK(state_best(&st, NULL, NULL)->id == 7, "... until a person clears it");
	fold_check(&st, "{\"type\":\"ban\",\"candidate\":7,\"ts\":7}");
	CHECK(state_best(&st, NULL, NULL)->id == 5, "a banned one is not the best");
	/* the search's own word (new_best) names nothing by itself: the one
	 * rule does, and the search follows the same */
	fold_check(&st, "{\"type\":\"new_best\",\"candidate\":1,\"speedup\":10,\"ts\":8}");
	CHECK(state_best(&st, NULL, NULL)->id == 5, "one rule, not the journal's latest new_best");
	/* the best over time: among the verdicts by then */
	CHECK(state_best_until(&st, state_cand(&st, 2)->firstEval).best->id == 1 &&
	          state_best_until(&st, state_cand(&st, 3)->firstEval).best->id == 1,
	      "the best when #2's and #3's verdicts came: #1 (the A/Bs that came later count)");
	/* an unverified A/B (kloop's clock could not bound its times: a busy
	 * machine) settles nothing: #9, faster outside #5's noise by its own
	 * verified timing, is no loser of it, whatever its "won" says */
	timed(&st, 9, "D", 10, 0.3, 0.29, 0.31, NULL, 0);
	fold_check(&st, "{\"type\":\"ab_compared\",\"candidate\":9,\"incumbent\":5,\"pairs\":12,"
	                "\"wins\":12,\"ratio\":2.3,\"won\":false,\"verified\":false,\"ts\":4}");
	const struct cand *w9;
	b = state_best_info(&st);
	CHECK(!state_ab_between(&st, state_cand(&st, 9), state_cand(&st, 5), &w9) &&
	          state_ab_unverified(&st, state_cand(&st, 9), state_cand(&st, 5), NULL) == 1 &&
	          state_ab_unverified(&st, state_cand(&st, 5), state_cand(&st, 9), NULL) == 1,
	      "an unverified A/B is no A/B between the two, counted as unverified either way");
	CHECK(b.best && b.best->id == 9 && b.abTie != 5,
	      "... so #9, faster outside #5's noise by its own timing, holds the best (#%d)",
	      b.best ? b.best->id : 0);
	fold_check(&st, "{\"type\":\"ab_compared\",\"candidate\":9,\"incumbent\":5,\"pairs\":20,"
	                "\"wins\":9,\"ratio\":1.01,\"won\":false,\"ts\":4}");
	b = state_best_info(&st);
	CHECK(b.best && b.best->id == 5,
	      "... until a verified A/B found it not beyond the noise: #5 holds it again");
	state_free(&st);

	/* the order is the verdicts', not the ids': #2's came first */
	state_init(&st);
	fold_check(&st, "{\"type\":\"session_started\",\"task\":\"t\",\"ts\":1}");
	add(&st, 1);
	add(&st, 2);
	timed(&st, 2, "D", 10, 1.0, 0.95, 1.05, NULL, 0);
	timed(&st, 1, "D", 10, 0.98, 0.94, 1.03, NULL, 0);
	b = state_best_info(&st);
	CHECK(b.best && b.best->id == 2 && b.tie == 1,
	      "within the noise, the one whose verdict came first holds it (#2)");
	/* on one device, the time decides, not a speedup rounded elsewhere */
	CHECK(state_faster(state_cand(&st, 1), state_cand(&st, 2)), "faster by time on one device");
	state_free(&st);
}

int main(void)
{
	test_baseline();
	test_best();
	return check_done();
}
