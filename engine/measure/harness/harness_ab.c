/*
 * harness_ab.c - the interleaved A/B of an incumbent and a challenger on
 * the same harness: pairs of timed runs, the sign test, each side's times
 * bounded by kloop's clock.
 */
#include "harness_priv.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "util.h"

/* P(X >= k) for X ~ Binomial(n, 1/2): the sign test's one-sided p-value */
static double sign_p(int k, int n)
{
	double p = 0, c = 1; /* C(n, i) / 2^n, built up in logs to stay finite */
	for (int i = 0; i <= n; i++) {
		c = lgamma(n + 1.0) - lgamma(i + 1.0) - lgamma(n - i + 1.0) - n * log(2.0);
		if (i >= k)
			p += exp(c);
	}
	return p > 1 ? 1 : p;
}

struct harness_ab_decision harness_ab_decide(const double *aInc, const double *aCand, int n,
                                             int verified)
{
	struct harness_ab_decision d = {.pairs = n > 0 ? n : 0, .ratio = NAN};
	double *ratio = xmalloc(sizeof *ratio * (size_t)(d.pairs + 1));
	for (int i = 0; i < d.pairs; i++) {
		ratio[i] = aCand[i] > 0 ? aInc[i] / aCand[i] : INFINITY;
		d.wins += aCand[i] < aInc[i];
	}
	d.p = sign_p(d.wins, d.pairs);
	if (d.pairs) {
		qsort(ratio, (size_t)d.pairs, sizeof *ratio, harness_cmp_double);
		d.ratio = harness_pct(ratio, d.pairs, 0.5);
	}
	free(ratio);
	d.won = verified && d.p < HARNESS_AB_ALPHA && d.ratio > 1.0;
	return d;
}

static void add_spread(cJSON *o, const char *zWho, struct samples *s)
{
	qsort(s->a, s->n, sizeof *s->a, harness_cmp_double);
	int n = (int)s->n;
	cJSON *t = cJSON_AddObjectToObject(o, zWho);
	if (!n)
		return;
	cJSON_AddNumberToObject(t, "median_ms", harness_pct(s->a, n, 0.5));
	cJSON_AddNumberToObject(t, "p10_ms", harness_pct(s->a, n, 0.1));
	cJSON_AddNumberToObject(t, "p90_ms", harness_pct(s->a, n, 0.9));
}

/* one side of an A/B: its runs' samples (as a timing's) and the clock
 * bound's word on them */
struct ab_side {
	struct harness_cand *c;
	double cal;             /* its calibrated strict frame, ms */
	struct samples ts;      /* its time in each pair, ms */
	struct samples wall;    /* each run's round trip by kloop's clock, ms */
	struct samples busy;    /* its busy time (harness_busy_of; NAN: unknown) */
	struct samples near;    /* the empty frame before it */
	struct samples cpus;    /* its CPU time */
	struct samples nearCpu; /* that of the frame before it */
	struct samples fOwn;    /* each frame, the runner's own */
	struct samples fTwin;   /* and the clock's twin's beside it */
	struct samples fOwnCpu; /* the CPU time of the runner's own */
	int inc;                /* the clock bound: 0 held, 1 inconsistent, 2 not applied */
	int byCpu;              /* bounded by CPU time */
	char bound[300];        /* why the bound failed or was not applied */
};

static void ab_side_free(struct ab_side *s)
{
	free(s->ts.a), free(s->wall.a), free(s->busy.a), free(s->near.a), free(s->cpus.a);
	free(s->nearCpu.a), free(s->fOwn.a), free(s->fTwin.a), free(s->fOwnCpu.a);
}

/* pair n: the frames (every second pair), then each side's run on the same
 * inputs in an unpredictable order, their times into pair[]; 0, -1 + err,
 * HC_* + why, *pWho the side that failed, or AB_VARIED: not a pair */
enum { AB_VARIED = 100 };
static int ab_pair(struct harness *h, struct ab_side *s, int n, int strict, double *pair, int *pWho,
                   char *why, size_t nWhy, char *err)
{
	int first = (int)(harness_random64() & 1);
	uint64_t runs = h->nRuns;
	double nf[2], nc[2];
	for (int k = 0; k < 2; k++) {
		if (n % 2 == 0) {
			double tw;
			nf[k] = harness_frame_for(h, s[k].c, n, &tw, &nc[k]);
			harness_push(&s[k].fOwn, nf[k]);
			harness_push(&s[k].fTwin, tw);
			harness_push(&s[k].fOwnCpu, nc[k]);
		} else {
			nf[k] = s[k].near.a[s[k].near.n - 1];
			nc[k] = s[k].nearCpu.a[s[k].nearCpu.n - 1];
		}
	}
	double w[2], bz[2], cz[2];
	int varied = 0;
	for (int k = 0; k < 2; k++) {
		int who = k ? !first : first, rc, crc;
		*pWho = who;
		h->nRuns = runs;
		if ((crc = harness_timed_run(h, s[who].c, strict, s[who].cal, &pair[who], &w[who],
		                             &bz[who], &cz[who], &rc, why, nWhy, err)))
			return crc;
		if (rc) {
			harness_returned(s[who].c, rc, "", why, nWhy);
			return HC_MISBEHAVED;
		}
		varied |= h->lastVaried;
	}
	/* a side checked on varied inputs ran on other data than its
	 * opponent: the pair is checked, not counted (harness_timed_run) */
	if (varied)
		return AB_VARIED;
	for (int who = 0; who < 2; who++) {
		harness_push(&s[who].wall, w[who]);
		harness_push(&s[who].busy, bz[who]);
		harness_push(&s[who].near, nf[who]);
		harness_push(&s[who].cpus, cz[who]);
		harness_push(&s[who].nearCpu, nc[who]);
	}
	return 0;
}

/* each side's times bounded by kloop's clock, as in its timing: s->inc,
 * s->byCpu, s->bound */
static void ab_bound(struct harness *h, struct ab_side *s)
{
	struct harness_cand *c = s->c;
	int left = c->threads_left ? c->threads_left(c) : 0;
	int cpuOk = !gpu(h) && harness_cpu_all_known(h, c) && left == 0;
	int paired;
	s->inc = harness_timing_inconsistent(&s->ts, &s->wall, &s->busy, &s->near, &s->cpus,
	                                     &s->nearCpu, left > 0 ? HARNESS_CPU_NO_BOUND : cpuOk,
	                                     &s->byCpu, &paired, s->bound, sizeof s->bound);
	if (s->inc != 1 && !c->trusted &&
	    harness_frames_lengthened(c, &s->fOwn, &s->fTwin, &s->fOwnCpu, cpuOk, s->bound,
	                              sizeof s->bound))
		s->inc = 2, s->byCpu = 0;
}

/*
 * A side whose threads outlive kl_run is timed by kloop's clock
 * (harness_clock_times): its pair times are its round trips less their
 * frames, and only the pairs both sides have so are kept (each side's ts).
 * Returns which sides are (bit k: side k); clears *pVerified where the
 * time cannot be so had.
 */
static int ab_by_clock(struct harness *h, struct ab_side *s, int *pVerified)
{
	int byClock = 0;
	for (int k = 0; k < 2; k++)
		if (s[k].c->threads_left && s[k].c->threads_left(s[k].c) > 0 && gpu(h)) {
			*pVerified = 0;
			snprintf(
			    s[k].bound, sizeof s[k].bound,
			    "the clock bound was not applied: the %s's threads outlived kl_run, "
			    "and on the GPU their work before the start event is in no time",
			    k ? "candidate" : "incumbent");
			s[k].inc = 2;
		} else if (s[k].c->threads_left && s[k].c->threads_left(s[k].c) > 0) {
			byClock |= 1 << k;
			for (size_t i = 0; i < s[k].ts.n; i++)
				s[k].ts.a[i] = isnan(s[k].busy.a[i]) || isnan(s[k].near.a[i])
				                   ? NAN
				                   : fmax(s[k].busy.a[i] - s[k].near.a[i], 0);
		}
	if (!byClock)
		return 0;
	struct samples *t0 = &s[0].ts, *t1 = &s[1].ts;
	size_t m = 0;
	for (size_t i = 0; i < t0->n && i < t1->n; i++) {
		if (isnan(t0->a[i]) || isnan(t1->a[i]))
			continue;
		t0->a[m] = t0->a[i], t1->a[m] = t1->a[i], m++;
	}
	t0->n = t1->n = m;
	if ((int)m < HARNESS_AB_MIN_PAIRS / 2) {
		*pVerified = 0;
		snprintf(s[1].bound, sizeof s[1].bound,
		         "the clock bound was not applied: a side's threads outlived kl_run, so "
		         "its A/B times are kloop's clock's, and only %d pairs could be "
		         "measured "
		         "by it",
		         (int)m);
		s[1].inc = 2;
	}
	return byClock;
}

/* the A/B's object (harness_ab): its decision from each side's pair times */
static cJSON *ab_json(const struct harness *h, struct ab_side *s, int strict, int verified,
                      int byClock)
{
	struct harness_ab_decision d =
	    harness_ab_decide(s[0].ts.a, s[1].ts.a, (int)s[1].ts.n, verified);
	char rule[160];
	snprintf(rule, sizeof rule,
	         "sign test: faster in %d of %d pairs (one-sided p %.3g, needs < %g) and the "
	         "median pair ratio %.3g above 1",
	         d.wins, d.pairs, d.p, HARNESS_AB_ALPHA, d.ratio);
	/* the typed facts (verdict.h), written by its encoder; then the rest */
	struct verdict_ab a = {.incumbent = -1,
	                       .pairs = d.pairs,
	                       .wins = d.wins,
	                       .ratio = isfinite(d.ratio) ? d.ratio : NAN,
	                       .won = d.won,
	                       .unverified = !verified,
	                       .zRule = rule};
	cJSON *o = cJSON_CreateObject();
	verdict_ab_encode(o, &a, VERDICT_COMPLETE);
	cJSON_AddNumberToObject(o, "p_value", d.p);
	add_spread(o, "incumbent", &s[0].ts);
	add_spread(o, "candidate", &s[1].ts);
	cJSON_AddStringToObject(o, "method", strict ? "device-wide" : "stream");
	cJSON_AddNumberToObject(o, "checked_runs", h->nChecked);
	cJSON_AddNumberToObject(o, "checked_after_runs", h->nAfter);
	cJSON_AddNumberToObject(o, "checked_after_seconds", h->afterS);
	if (verified)
		cJSON_AddStringToObject(o, "bound", s[0].byCpu || s[1].byCpu ? "cpu" : "clock");
	if (byClock)
		cJSON_AddStringToObject(o, "clock",
		                        byClock == 3 ? "kloop (both sides: threads outlived kl_run)"
		                        : byClock == 2
		                            ? "kloop for the candidate (its threads outlived "
		                              "kl_run)"
		                            : "kloop for the incumbent (its threads outlived "
		                              "kl_run)");
	if (!verified)
		cJSON_AddStringToObject(o, "clock_bound", s[s[1].inc == 2 ? 1 : 0].bound);
	return o;
}

cJSON *harness_ab(struct harness *h, struct harness_cand *inc, struct harness_cand *cand,
                  const struct harness_ab_opts *ao, harness_progress_fn progress, void *arg,
                  int *pWho, cJSON **pFail)
{
	char err[KL_ERRLEN] = "", why[1024] = "", when[96];
	struct ab_side s[2] = {{.c = inc}, {.c = cand}};
	double pair[2];
	int crc = 0, who = 0, n = 0;
	cJSON *o = NULL;
	*pFail = NULL;
	*pWho = -1;
	harness_drop_timing(h);
	h->judged = cand; /* the challenger's checked runs are judged, as in its timing */
	h->runSeed = harness_random64();
	h->nChecked = h->nAfter = 0;
	h->afterS = 0;
	h->nRuns = 0;
	h->pCheck = h->nPool > h->poolUsed
	                ? (double)(h->nPool - h->poolUsed) / (2.0 * (ao->nPairs + 2))
	                : 0;
	/* and runs checked after their call, each side's as many whatever the
	 * pairs' number */
	harness_after_begin(h, 2);
	snprintf(when, sizeof when, "the empty frames before the A/B runs");
	for (who = 0; who < 2; who++)
		if (!s[who].c->nPreFrame &&
		    (crc = harness_preload(h, s[who].c, why, sizeof why, err)))
			goto called;
	for (int k = 0; k < 2; k++)
		s[k].cal = isnan(s[k].c->preCal) ? 0 : s[k].c->preCal;
	if (harness_prepare(h, h->o.nTrials, err) < 0)
		goto kloop;
	/* warm both up, alternately */
	for (int i = 0; i < 6; i++) {
		int rc;
		double t, w;
		who = i % 2;
		snprintf(when, sizeof when, "warm-up before the A/B runs");
		if ((crc = harness_timed_run(h, s[who].c, ao->strict, s[who].cal, &t, &w, NULL,
		                             NULL, &rc, why, sizeof why, err)))
			goto called;
		if (rc) {
			harness_returned(s[who].c, rc, "", why, sizeof why);
			crc = HC_MISBEHAVED;
			goto called;
		}
	}
	double start = now_s();
	for (n = 0; n < ao->nPairs;) {
		snprintf(when, sizeof when, "A/B pair %d", n + 1);
		if ((crc = ab_pair(h, s, n, ao->strict, pair, &who, why, sizeof why, err)) ==
		    AB_VARIED)
			continue; /* checked on varied inputs: not a pair */
		if (crc)
			goto called;
		harness_push(&s[0].ts, pair[0]);
		harness_push(&s[1].ts, pair[1]);
		n++;
		if (progress)
			progress("a/b", n, arg);
		if (n >= HARNESS_AB_MIN_PAIRS && now_s() - start > ao->budgetS)
			break;
	}
	/* the runs each side kept checked, now that its calls are over */
	const struct harness_cand *bad = NULL;
	snprintf(when, sizeof when, "the A/B runs");
	if ((crc = harness_after_end(h, &bad, why, sizeof why, err))) {
		who = bad == s[0].c ? 0 : 1;
		goto called;
	}
	/* each side's times bounded by kloop's clock, as in its timing: a
	 * challenger that forges its A/B times is a liar, and an A/B whose
	 * times cannot be bounded confirms nothing */
	for (int k = 0; k < 2; k++)
		ab_bound(h, &s[k]);
	for (who = 1; who >= 0; who--)
		if (s[who].inc == 1) {
			snprintf(when, sizeof when, "the A/B timing");
			snprintf(why, sizeof why, "%s", s[who].bound);
			crc = HC_MISBEHAVED;
			goto called;
		}
	int verified = s[0].inc != 2 && s[1].inc != 2;
	int byClock = ab_by_clock(h, s, &verified);
	o = ab_json(h, s, ao->strict, verified, byClock);
	goto out;
called:
	if (crc > 0) {
		char *z = xasprintf("%s: %s", when, why);
		*pFail = verdict_new(crc == HC_CRASHED ? STATUS_CRASHED : STATUS_INCORRECT, z);
		free(z);
		*pWho = who;
	} else {
	kloop:
		*pFail = harness_crashed(h, "the A/B timing", err);
	}
out:
	h->judged = NULL;
	ab_side_free(&s[0]);
	ab_side_free(&s[1]);
	return o;
}
