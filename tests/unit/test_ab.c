/*
 * test_ab.c - the interleaved A/B's decision (harness_ab_decide()) as a
 * pure function of its pairs' times, on fixed numbers: a challenger faster
 * in most pairs wins, one slower loses, one within the noise does not win,
 * the sign test's line (10 of 12 wins, 9 of 12 does not), an unverified A/B
 * never wins.  The p-values are the binomial tail's exact fractions.
 */
#include <math.h>
#include <stdio.h>

#include "check.h"
#include "harness.h"

#define NP 12

/* the decision on inc[] and cand[] (n pairs), checked: wins, p (exact to
 * 1e-12), the median ratio (to 1e-9; NAN: none), won; the message says
 * what it got */
static void decides(const char *zWhat, const double *inc, const double *cand, int n, int verified,
                    int wins, double p, double ratio, int won)
{
	struct harness_ab_decision d = harness_ab_decide(inc, cand, n, verified);
	int okRatio = isnan(ratio) ? isnan(d.ratio) : fabs(d.ratio - ratio) < 1e-9;
	CHECK(d.pairs == n && d.wins == wins && fabs(d.p - p) < 1e-12 && okRatio && d.won == won,
	      "%s: %d of %d pairs won, p %.6g, ratio %.6g, %s (got %d of %d, p %.6g, ratio %.6g, "
	      "won %d)",
	      zWhat, wins, n, p, ratio, won ? "won" : "not won", d.wins, d.pairs, d.p, d.ratio,
	      d.won);
}

/* pairs where the challenger takes fast ms in the first k and slow ms in
 * the rest, the incumbent 1 ms in each */
static void pairs(double *inc, double *cand, int k, double fast, double slow)
{
	for (int i = 0; i < NP; i++) {
		inc[i] = 1.0;
		cand[i] = i < k ? fast : slow;
	}
}

int main(void)
{
	double inc[NP], cand[NP];

	/* a win: faster in 11 of 12 pairs, by 1.25x; p = C(12,11)+C(12,12)
	 * over 2^12 */
	pairs(inc, cand, 11, 0.8, 1.1);
	decides("faster in 11 of 12 by 1.25x", inc, cand, NP, 1, 11, 13.0 / 4096, 1.25, 1);
	decides("... the same pairs, its times unverified", inc, cand, NP, 0, 11, 13.0 / 4096, 1.25,
	        0);

	/* a loss: slower in every pair */
	pairs(inc, cand, 0, 0.8, 1.25);
	decides("slower in all 12 pairs", inc, cand, NP, 1, 0, 1.0, 0.8, 0);

	/* within the noise: a hair faster in half the pairs, a hair slower in
	 * the rest; the median ratio is above 1 by a hair, the sign test says
	 * chance (p = 2510/4096) */
	pairs(inc, cand, 6, 0.99, 1.01);
	decides("within the noise: 6 of 12, 1% either way", inc, cand, NP, 1, 6, 2510.0 / 4096,
	        (1 / 0.99 + 1 / 1.01) / 2, 0);

	/* the line: 10 of 12 wins (p = 79/4096 < 0.05), 9 of 12 does not
	 * (299/4096), whatever the margin */
	pairs(inc, cand, 10, 0.8, 1.1);
	decides("faster in 10 of 12", inc, cand, NP, 1, 10, 79.0 / 4096, 1.25, 1);
	pairs(inc, cand, 9, 0.5, 1.1);
	decides("faster in 9 of 12, by 2x", inc, cand, NP, 1, 9, 299.0 / 4096, 2.0, 0);

	/* a tie is no win */
	pairs(inc, cand, 0, 1.0, 1.0);
	decides("as fast in every pair", inc, cand, NP, 1, 0, 1.0, 1.0, 0);

	/* a challenger timed at 0 in a pair (a clock time less its frame):
	 * that pair a win, its ratio infinite */
	pairs(inc, cand, 11, 0.8, 0.0);
	decides("faster in 11 pairs by 1.25x, timed at 0 in one", inc, cand, NP, 1, 12, 1.0 / 4096,
	        1.25, 1);

	/* no pairs: nothing decided */
	decides("no pairs", inc, cand, 0, 1, 0, 1.0, NAN, 0);
	return check_done();
}
