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

cJSON *harness_ab(struct harness *h, struct harness_cand *inc, struct harness_cand *cand,
                  const struct harness_ab_opts *ao, harness_progress_fn progress, void *arg,
                  int *pWho, cJSON **pFail)
{
	char err[KL_ERRLEN] = "", why[1024] = "", when[96];
	struct harness_cand *side[2] = {inc, cand};
	struct samples ts[2] = {{0}}, ratio = {0}, wall[2] = {{0}}, busy[2] = {{0}},
	               near[2] = {{0}}, fOwn[2] = {{0}}, fTwin[2] = {{0}}, cpus[2] = {{0}},
	               nearCpu[2] = {{0}}, fOwnCpu[2] = {{0}};
	double cal[2], t, w, bz, cz;
	int rc = 0, crc = 0, who = 0, wins = 0, n = 0;
	*pFail = NULL;
	*pWho = -1;
	harness_drop_timing(h);
	h->runSeed = harness_random64();
	h->nChecked = 0;
	h->nRuns = 0;
	h->pCheck = h->nPool > h->poolUsed
	                ? (double)(h->nPool - h->poolUsed) / (2.0 * (ao->nPairs + 2))
	                : 0;
	snprintf(when, sizeof when, "the empty frames before the A/B runs");
	for (who = 0; who < 2; who++)
		if (!side[who]->nPreFrame &&
		    (crc = harness_preload(h, side[who], why, sizeof why, err)))
			goto called;
	for (int k = 0; k < 2; k++)
		cal[k] = isnan(side[k]->preCal) ? 0 : side[k]->preCal;
	if (harness_prepare(h, h->o.nTrials, err) < 0)
		goto kloop;
	/* warm both up, alternately */
	for (int i = 0; i < 6; i++) {
		who = i % 2;
		snprintf(when, sizeof when, "warm-up before the A/B runs");
		if ((crc = harness_timed_run(h, side[who], ao->strict, cal[who], &t, &w, NULL, NULL,
		                             &rc, why, sizeof why, err)))
			goto called;
		if (rc)
			goto returned;
	}
	double start = now_s();
	for (n = 0; n < ao->nPairs;) {
		/* each pair on the same inputs, in an unpredictable order */
		int first = (int)(harness_random64() & 1);
		uint64_t runs = h->nRuns;
		double pair[2], nf[2], nc[2];
		for (int k = 0; k < 2; k++) {
			if (n % 2 == 0) {
				double tw;
				nf[k] = harness_frame_for(h, side[k], n, &tw, &nc[k]);
				harness_push(&fOwn[k], nf[k]);
				harness_push(&fTwin[k], tw);
				harness_push(&fOwnCpu[k], nc[k]);
			} else {
				nf[k] = near[k].a[near[k].n - 1];
				nc[k] = nearCpu[k].a[nearCpu[k].n - 1];
			}
		}
		for (int k = 0; k < 2; k++) {
			who = k ? !first : first;
			h->nRuns = runs;
			snprintf(when, sizeof when, "A/B pair %d", n + 1);
			if ((crc = harness_timed_run(h, side[who], ao->strict, cal[who], &pair[who],
			                             &w, &bz, &cz, &rc, why, sizeof why, err)))
				goto called;
			if (rc)
				goto returned;
			harness_push(&wall[who], w);
			harness_push(&busy[who], bz);
			harness_push(&near[who], nf[who]);
			harness_push(&cpus[who], cz);
			harness_push(&nearCpu[who], nc[who]);
		}
		harness_push(&ts[0], pair[0]);
		harness_push(&ts[1], pair[1]);
		harness_push(&ratio, pair[1] > 0 ? pair[0] / pair[1] : INFINITY);
		wins += pair[1] < pair[0];
		n++;
		if (progress)
			progress("a/b", n, arg);
		if (n >= HARNESS_AB_MIN_PAIRS && now_s() - start > ao->budgetS)
			break;
	}
	/* each side's times bounded by kloop's clock, as in its timing: a
	 * challenger that forges its A/B times is a liar, and an A/B whose
	 * times cannot be bounded confirms nothing */
	char bound[2][300] = {"", ""};
	int inc2[2], byCpu[2];
	for (int k = 0; k < 2; k++) {
		int left = side[k]->threads_left ? side[k]->threads_left(side[k]) : 0;
		int cpuOk = !gpu(h) && harness_cpu_all_known(h, side[k]) && left == 0;
		inc2[k] = harness_timing_inconsistent(&ts[k], &wall[k], &busy[k], &near[k],
		                                      &cpus[k], &nearCpu[k], cpuOk, &byCpu[k],
		                                      bound[k], sizeof bound[k]);
		if (inc2[k] != 1 && !side[k]->trusted &&
		    harness_frames_lengthened(side[k], &fOwn[k], &fTwin[k], &fOwnCpu[k], cpuOk,
		                              bound[k], sizeof bound[k]))
			inc2[k] = 2, byCpu[k] = 0;
	}
	for (who = 1; who >= 0; who--)
		if (inc2[who] == 1) {
			snprintf(when, sizeof when, "the A/B timing");
			snprintf(why, sizeof why, "%s", bound[who]);
			crc = HC_MISBEHAVED;
			goto called;
		}
	int verified = inc2[0] != 2 && inc2[1] != 2;
	/* a side whose threads outlive kl_run is timed by kloop's clock
	 * (harness_clock_times): its pair times are its round trips less their frames,
	 * and the pairs are counted again over the pairs both sides have */
	int byClock = 0;
	for (int k = 0; k < 2; k++)
		if (side[k]->threads_left && side[k]->threads_left(side[k]) > 0 && gpu(h)) {
			verified = 0;
			snprintf(
			    bound[k], sizeof bound[k],
			    "the clock bound was not applied: the %s's threads outlived kl_run, "
			    "and on the GPU their work before the start event is in no time",
			    k ? "candidate" : "incumbent");
			inc2[k] = 2;
		} else if (side[k]->threads_left && side[k]->threads_left(side[k]) > 0) {
			byClock |= 1 << k;
			for (size_t i = 0; i < ts[k].n; i++)
				ts[k].a[i] = isnan(busy[k].a[i]) || isnan(near[k].a[i])
				                 ? NAN
				                 : fmax(busy[k].a[i] - near[k].a[i], 0);
		}
	if (byClock) {
		ratio.n = 0;
		wins = 0;
		size_t m = 0;
		for (size_t i = 0; i < ts[0].n && i < ts[1].n; i++) {
			if (isnan(ts[0].a[i]) || isnan(ts[1].a[i]))
				continue;
			harness_push(&ratio, ts[1].a[i] > 0 ? ts[0].a[i] / ts[1].a[i] : INFINITY);
			wins += ts[1].a[i] < ts[0].a[i];
			ts[0].a[m] = ts[0].a[i], ts[1].a[m] = ts[1].a[i], m++;
		}
		ts[0].n = ts[1].n = m;
		n = (int)ratio.n;
		if (n < HARNESS_AB_MIN_PAIRS / 2) {
			verified = 0;
			snprintf(
			    bound[1], sizeof bound[1],
			    "the clock bound was not applied: a side's threads outlived kl_run, so "
			    "its A/B times are kloop's clock's, and only %d pairs could be "
			    "measured "
			    "by it",
			    n);
			inc2[1] = 2;
		}
	}
	double p = sign_p(wins, n);
	qsort(ratio.a, ratio.n, sizeof *ratio.a, harness_cmp_double);
	double med = harness_pct(ratio.a, n, 0.5);
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "pairs", n);
	cJSON_AddNumberToObject(o, "wins", wins);
	cJSON_AddNumberToObject(o, "p_value", p);
	harness_add_finite(o, "ratio", med);
	add_spread(o, "incumbent", &ts[0]);
	add_spread(o, "candidate", &ts[1]);
	cJSON_AddStringToObject(o, "method", ao->strict ? "device-wide" : "stream");
	cJSON_AddNumberToObject(o, "checked_runs", h->nChecked);
	cJSON_AddBoolToObject(o, "won", verified && p < HARNESS_AB_ALPHA && med > 1.0);
	cJSON_AddBoolToObject(o, "verified", verified);
	if (verified)
		cJSON_AddStringToObject(o, "bound", byCpu[0] || byCpu[1] ? "cpu" : "clock");
	if (byClock)
		cJSON_AddStringToObject(o, "clock",
		                        byClock == 3 ? "kloop (both sides: threads outlived kl_run)"
		                        : byClock == 2
		                            ? "kloop for the candidate (its threads outlived "
		                              "kl_run)"
		                            : "kloop for the incumbent (its threads outlived "
		                              "kl_run)");
	if (!verified)
		cJSON_AddStringToObject(o, "clock_bound", bound[inc2[1] == 2 ? 1 : 0]);
	char rule[160];
	snprintf(rule, sizeof rule,
	         "sign test: faster in %d of %d pairs (one-sided p %.3g, needs < %g) and the "
	         "median pair ratio %.3g above 1",
	         wins, n, p, HARNESS_AB_ALPHA, med);
	cJSON_AddStringToObject(o, "rule", rule);
	free(ts[0].a), free(ts[1].a), free(ratio.a);
	for (int k = 0; k < 2; k++)
		free(wall[k].a), free(busy[k].a), free(near[k].a), free(fOwn[k].a),
		    free(fTwin[k].a), free(cpus[k].a), free(nearCpu[k].a), free(fOwnCpu[k].a);
	return o;
returned:
	snprintf(why, sizeof why, "kl_run returned %d", rc);
	crc = HC_MISBEHAVED;
called:
	if (crc > 0) {
		char *z = xasprintf("%s: %s", when, why);
		*pFail = harness_verdict(crc == HC_CRASHED ? "crashed" : "incorrect", z);
		free(z);
		*pWho = who;
	} else {
	kloop:
		*pFail = harness_crashed(h, "the A/B timing", err);
	}
	free(ts[0].a), free(ts[1].a), free(ratio.a);
	for (int k = 0; k < 2; k++)
		free(wall[k].a), free(busy[k].a), free(near[k].a), free(fOwn[k].a),
		    free(fTwin[k].a), free(cpus[k].a), free(nearCpu[k].a), free(fOwnCpu[k].a);
	return NULL;
}
