/*
 * test_search_ab.c - the search's judging of A/Bs that come back in the
 * order a loaded machine gives, with a scripted worker
 * (tests/fixtures/ab_worker.py: times and A/B verdicts from the source's
 * CHUNK, so nothing depends on a clock).  A sweep of the seed (CHUNK 16,
 * 1 ms) makes CHUNK 32 (0.4 ms, the fastest) and CHUNK 64 (0.5 ms):
 *  - lose: CHUNK 32 loses its A/B against the seed (noise), CHUNK 64 wins
 *    its own and becomes the best; CHUNK 32, faster than the new best by
 *    their separate timings, gets an A/B against it and wins;
 *  - late: CHUNK 32's evaluation runs no A/B, the one the search asks
 *    against the seed comes back after CHUNK 64 became the best; it is
 *    asked again against the new best and wins;
 *  - unban: a person bans CHUNK 32 while the sweep runs, CHUNK 64 becomes
 *    the best, and the unban has CHUNK 32 judged again: its A/B against
 *    CHUNK 64 is asked, and it wins;
 *  - banbest: CHUNK 32 is banned as it becomes the best: CHUNK 64 holds
 *    it, and the search says so;
 *  - reduced: CHUNK 32 is of reduced precision, the best under `precision
 *    any`; the policy made faithful hands the best to CHUNK 64, said so;
 *  - unverified: CHUNK 32's first A/B comes back unverified (a busy
 *    machine's): it settles nothing, is asked again, and the second wins;
 *  - unverified2: every A/B of CHUNK 32 comes back unverified: asked twice,
 *    then the separate timings decide, and the new best says so;
 *  - unverified_tie: the same with CHUNK 32's timing spread over CHUNK
 *    64's (p90 0.6 ms): the one rule has it take the best from the seed,
 *    and CHUNK 64 within its noise leaves it there, unconfirmed.
 * The best is the fastest not banned, the one state_best() shows (the
 * header, the round's line, the report), and no correct candidate faster
 * than the best outside its noise is left without an A/B between the two.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "unitenv.h"
#include "driver.h"
#include "search.h"
#include "util.h"
#include "version.h"

static const char *seedSrc =
    "#include \"kloop.h\"\n#define CHUNK 16\n"
    "int kl_run(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *s)\n"
    "{\n\treturn CHUNK - 16;\n}\n";

/* the id of the candidate whose source has "#define CHUNK n" (0: none) */
static int with_chunk(const struct state *st, int n)
{
	char want[40];
	snprintf(want, sizeof want, "#define CHUNK %d\n", n);
	for (int i = 0; i < st->nCand; i++)
		if (strstr(st->aCand[i].zSource, want))
			return st->aCand[i].id;
	return 0;
}

/* the number of A/Bs journaled between candidates a and b (either way) */
static int abs_between(const struct state *st, int a, int b)
{
	int n = 0;
	for (int i = 0; i < st->search.nAb; i++) {
		const struct state_ab *x = &st->search.aAb[i];
		n += (x->cand == a && x->incumbent == b) || (x->cand == b && x->incumbent == a);
	}
	return n;
}

/* the candidates that may hold the best (correct, verified, of the
 * precision the policy ranks, not banned), faster than the best outside
 * the noise (p90 below its p10) with no A/B between the two, as a count */
static int outranked(const struct state *st, int best)
{
	const struct cand *b = state_cand(st, best);
	int n = 0;
	for (int i = 0; b && i < st->nCand; i++) {
		const struct cand *c = &st->aCand[i];
		n += c->id != best && state_cand_competes(st, c) &&
		     c->v.timing.p90Ms < b->v.timing.p10Ms && !abs_between(st, c->id, best);
	}
	return n;
}

/* a search under way, steered from its own lines in mode "unban" */
struct steer {
	struct search *s;
	const char *zMode;
	int banned, unbanned;
	int again, byTiming, refuted; /* lines seen: asked again, a best by its own
	                               * timing, "not faster ... beyond the noise" */
};

/* the search's lines, as TAP comments; in mode "unban" the sweep's CHUNK 32
 * (#4) is banned as the sweep is made, and unbanned once CHUNK 64 (#5) is
 * the best */
static void on_line(void *arg, const char *zLine, const cJSON *ev)
{
	struct steer *x = arg;
	char err[KL_ERRLEN];
	(void)ev;
	printf("# %s\n", zLine);
	x->again +=
	    strstr(zLine, "unverified") && strstr(zLine, "timed alternately again (2 of 2)");
	x->byTiming +=
	    strstr(zLine, "by the separate timings") && strstr(zLine, "unverified 2 times");
	x->refuted += strstr(zLine, "beyond the noise") != NULL;
	if (!strcmp(x->zMode, "reduced")) {
		/* the policy made faithful once the reduced CHUNK 32 is the best */
		if (!x->banned && !strncmp(zLine, "new best #4", 11)) {
			x->banned = 1;
			x->banned = search_set(x->s, "precision", "faithful", err) == 0;
		}
		x->unbanned |= x->banned && !strncmp(zLine, "#4 is of reduced precision", 26) &&
		               strstr(zLine, ": the best is #5");
		return;
	}
	if (!strcmp(x->zMode, "banbest")) {
		if (!x->banned && !strncmp(zLine, "new best #4", 11)) {
			x->banned = 1; /* its lines come before it returns */
			x->banned = search_ban(x->s, 4, err) == 0;
		}
		x->unbanned |= x->banned && !strncmp(zLine, "#4 is banned: the best is #5", 28);
		return;
	}
	if (strcmp(x->zMode, "unban"))
		return;
	if (!x->banned && !strncmp(zLine, "sweep of #1", 11))
		x->banned = search_ban(x->s, 4, err) == 0;
	else if (x->banned && !x->unbanned && !strncmp(zLine, "new best #5", 11))
		x->unbanned = search_unban(x->s, 4, err) == 0;
}

static void search_in(struct loop *l, struct config *cfg, const char *zMode)
{
	char err[KL_ERRLEN] = "";
	char *wk = xasprintf("python3 tests/fixtures/ab_worker.py %s %s", KLOOP_VERSION, zMode);
	config_set(cfg, "worker", wk, err);
	free(wk);
	struct driver_opts o = {.zTask = "softmax", .bMemory = 1, .bNoSeeds = 1};
	struct driver *drv = driver_open(l, cfg, &o, NULL, NULL, err);
	CHECK(drv != NULL, "%s: a driver with the scripted worker (%s)", zMode, drv ? "ok" : err);
	if (!drv)
		return;
	int id = driver_add(drv, "seed", NULL, 0, "chunked.c", seedSrc, NULL, err);
	CHECK(id == 1 && driver_bench(drv, id, err) == 0, "%s: the seed is #1, evaluated (%s)",
	      zMode, id == 1 ? "ok" : err);
	cJSON *set = cJSON_Parse("{\"rounds\": 1, \"sweep_only\": 1, \"crossover\": 0, "
	                         "\"precision\": \"any\"}");
	struct steer x = {.zMode = zMode};
	struct search *s = search_new(drv, on_line, &x);
	x.s = s;
	int rc = search_start(s, set, err);
	cJSON_Delete(set);
	CHECK(rc == 0, "%s: the search starts (%s)", zMode, rc ? err : "ok");
	double t0 = now_s();
	while (rc == 0 && !search_done(s) && now_s() - t0 < 120)
		loop_once(l, 0.2);
	const struct state *st = driver_state(drv);
	int c32 = with_chunk(st, 32), c64 = with_chunk(st, 64), best = st->search.bestId;
	CHECK(search_done(s) && c32 && c64,
	      "%s: the search ended, its sweep made CHUNK 32 (#%d) and CHUNK 64 (#%d)", zMode, c32,
	      c64);
	const struct cand *shown = state_best(st, NULL, NULL);
	if (!strcmp(zMode, "banbest") || !strcmp(zMode, "reduced"))
		CHECK(x.banned && x.unbanned && best && best == c64 && shown && shown->id == best,
		      "%s: CHUNK 32 %s as it became the best: CHUNK 64 holds it (#%d), said "
		      "so; the best every front end shows is the same (#%d)",
		      zMode,
		      zMode[0] == 'b' ? "banned" : "of reduced precision, the policy made faithful",
		      best, shown ? shown->id : 0);
	else
		CHECK(best && best == c32 && shown && shown->id == best,
		      "%s: the best is CHUNK 32, the fastest (#%d; CHUNK 64 is #%d), after an A/B "
		      "against CHUNK 64 (%d); the best every front end shows is the same (#%d)",
		      zMode, best, c64, abs_between(st, c32, c64), shown ? shown->id : 0);
	CHECK(best && !outranked(st, best),
	      "%s: no correct candidate is faster than the best outside its noise without an A/B "
	      "between the two (%d)",
	      zMode, best ? outranked(st, best) : -1);
	if (!strncmp(zMode, "unverified", 10))
		CHECK(
		    x.again >= 1 && !x.refuted && (zMode[10] ? x.byTiming >= 1 : !x.byTiming) &&
		        state_ab_unverified(st, state_cand(st, c32), state_cand(st, 1), NULL) >= 1,
		    "%s: CHUNK 32's unverified A/B was asked again (%d), never called a loss (%d), "
		    "%s (%d)",
		    zMode, x.again, x.refuted,
		    zMode[10] ? "and after two the separate timings decided, said so"
		              : "and the second decided",
		    x.byTiming);
	if (!strcmp(zMode, "unban"))
		CHECK(x.banned && x.unbanned,
		      "%s: CHUNK 32 was banned while the sweep ran, and unbanned once CHUNK 64 was "
		      "the best",
		      zMode);
	search_free(s);
	driver_close(drv);
}

int main(void)
{
	char dir[] = "/tmp/kloop-test-search-ab.XXXXXX";
	char err[KL_ERRLEN];
	CHECK(unit_env(dir) == 0, "a directory");
	struct config cfg;
	CHECK(config_load(&cfg, err) == 0, "the default configuration");
	config_set(&cfg, "backend", "host", err);
	struct loop *l = loop_new();
	search_in(l, &cfg, "lose");
	search_in(l, &cfg, "late");
	search_in(l, &cfg, "unban");
	search_in(l, &cfg, "banbest");
	search_in(l, &cfg, "reduced");
	search_in(l, &cfg, "unverified");
	search_in(l, &cfg, "unverified2");
	search_in(l, &cfg, "unverified_tie");
	loop_free(l);
	config_free(&cfg);
	CHECK(unit_env_remove(dir) == 0, "remove the directory");
	return check_done();
}
