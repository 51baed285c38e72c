/*
 * chart.c - the speedups by candidate: a bar per candidate (in id order),
 * or in a search of more than one round a bar per round (its incumbent at
 * its end), from the seed's speedup to the best's, the y axis labelled with both, the
 * x axis with the candidates, the best candidate's lineage in bold; block
 * characters where the terminal speaks UTF-8.  chart_series() keeps the
 * best speedup over time for the tests and reports.
 */
#include <curses.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "panes.h"
#include "report.h"
#include "screen.h"
#include "status.h"

/* the speedup now (against the session's baseline) of the best at the end
 * of round rd (round_finished's), 0 when it had none */
static double round_best(const struct state *st, const struct state_round *rd)
{
	const struct cand *c = rd->finished && rd->bestId ? state_cand(st, rd->bestId) : NULL;
	return c && c->speedup > 0 ? c->speedup : 0;
}

/* a search's chart: the best at the end of each round, rounds spread over
 * the columns: the latest finished round's best up to each */
static double chart_rounds(const struct state *st, int n, double *out)
{
	const struct state_search *ss = &st->search;
	int last = 0;
	for (int i = 0; i < ss->nRound; i++)
		last = ss->aRound[i].round > last ? ss->aRound[i].round : last;
	double best = 0;
	for (int i = 0; i < n; i++) {
		int r = (int)((double)i * (last + 1) / n), at = -1;
		out[i] = 0;
		for (int k = 0; k < ss->nRound; k++)
			if (ss->aRound[k].round <= r && ss->aRound[k].finished &&
			    ss->aRound[k].bestId && ss->aRound[k].round > at) {
				at = ss->aRound[k].round;
				out[i] = round_best(st, &ss->aRound[k]);
			}
		best = out[i] > best ? out[i] : best;
	}
	return best;
}

double chart_series(const struct state *st, double tEnd, int n, double *out)
{
	if (st->search.nRound > 1 && n > 0)
		return chart_rounds(st, n, out);
	double t0 = st->tsStarted;
	for (int i = 0; i < st->nCand; i++) {
		double t = st->aCand[i].tsAdded;
		if (t > 0 && (t0 <= 0 || t < t0))
			t0 = t;
	}
	for (int i = 0; i < n; i++)
		out[i] = 0;
	double best = 0;
	if (n <= 0 || t0 <= 0)
		return 0;
	double span = tEnd - t0;
	if (span <= 0)
		span = 1e-9;
	for (int i = 0; i < st->nCand; i++) {
		const struct cand *c = &st->aCand[i];
		if (c->speedup < 0 || c->tsEval <= 0 || c->status != STATUS_CORRECT)
			continue;
		int col = (int)((c->tsEval - t0) / span * n);
		if (col < 0)
			col = 0;
		if (col >= n)
			col = n - 1;
		if (c->speedup > out[col])
			out[col] = c->speedup;
		if (c->speedup > best)
			best = c->speedup;
	}
	for (int i = 1; i < n; i++)
		if (out[i] < out[i - 1])
			out[i] = out[i - 1];
	return best;
}

int chart_lineage(const struct state *st, int best, int *aId, int max)
{
	int n = 0;
	/* marks by position in st->aCand: a cycle in a hand-made journal ends it */
	char *seen = xcalloc((size_t)st->nCand + 1, 1);
	const struct cand *c = state_cand(st, best);
	while (c && n < max && !seen[c - st->aCand]) {
		seen[c - st->aCand] = 1;
		aId[n++] = c->id;
		c = c->nParent ? state_cand(st, c->aParent[0]) : NULL;
	}
	free(seen);
	return n;
}

/* one bar of the chart: its speedup (-1: none), whether it is on the
 * best's lineage, whether what it stands for failed */
struct bar {
	double v;
	int inLine, failed;
};

/* candidate i (by position) */
static struct bar cand_bar(const struct state *st, int i, const char *inLineAt)
{
	const struct cand *c = &st->aCand[i];
	struct bar y = {c->status == STATUS_CORRECT ? c->speedup : -1, inLineAt[i],
	                status_failed(c->status)};
	return y;
}

/* round i of the search (by position): the best at its end (round_finished;
 * the open round: the session's best, bestId) with its speedup now, on the
 * lineage when that one is; failed when it made candidates and none was
 * correct */
static struct bar round_bar(const struct state *st, int i, int bestId, const char *inLineAt)
{
	const struct state_round *rd = &st->search.aRound[i];
	int id = rd->finished ? rd->bestId : bestId;
	const struct cand *c = id ? state_cand(st, id) : NULL;
	struct bar y = {-1, c ? inLineAt[c - st->aCand] : 0, 0};
	if (c)
		y.v = c->speedup;
	int made = 0, ok = 0;
	for (int k = 0; k < st->nCand; k++)
		if (st->aCand[k].round == rd->round) {
			made++;
			ok += st->aCand[k].status == STATUS_CORRECT;
		}
	y.failed = made && !ok;
	return y;
}

void chart_draw(struct ui *u, const struct ui_rect *r)
{
	if (r->h < 4 || r->w < 16)
		return;
	const struct state *st = u->st;
	const struct cand *best = report_best(st, NULL);
	/* y from the seed's speedup (the slowest seed) to the best's */
	double lo = -1, hi = best ? best->speedup : 0;
	for (int i = 0; i < st->nCand; i++) {
		const struct cand *c = &st->aCand[i];
		if (!strcmp(c->zOrigin, "seed") && c->speedup > 0 && (lo < 0 || c->speedup < lo))
			lo = c->speedup;
	}
	if (lo < 0 || lo > hi)
		lo = 0;
	/* a search of more than one round: a bar per round */
	int byRound = st->search.nRound > 1;
	const char *by = byRound ? "round" : "candidate";
	char title[96];
	int confirmed = 1;
	state_best(st, &confirmed, NULL);
	/* a bar above the best's (a rival within its noise, a round's best an
	 * A/B winner slower by its median took over from) is not cut */
	for (int i = 0; !byRound && i < st->nCand; i++)
		if (st->aCand[i].status == STATUS_CORRECT && st->aCand[i].speedup > hi)
			hi = st->aCand[i].speedup;
	for (int i = 0; byRound && i < st->search.nRound; i++)
		if (round_best(st, &st->search.aRound[i]) > hi)
			hi = round_best(st, &st->search.aRound[i]);
	/* how far the best is from the device's limit (roofline.h) */
	double fr = best ? best->v.roofline.fraction : NAN;
	char roof[32] = "";
	if (!isnan(fr))
		snprintf(roof, sizeof roof, ", %.0f%% of roofline", fr * 100);
	if (best) {
		snprintf(title, sizeof title, "Best speedup %.3gx (#%d%s%s) by %s", best->speedup,
		         best->id, confirmed ? "" : ", unconfirmed", roof, by);
		/* a narrow pane keeps the best and what the bars are */
		if (screen_width(title, strlen(title)) > r->w - 4)
			snprintf(title, sizeof title, "Best speedup %.3gx (#%d) by %s",
			         best->speedup, best->id, by);
	} else
		snprintf(title, sizeof title, "Best speedup - by %s", by);
	screen_frame(r, title, 0);
	if (!best) {
		screen_put(r->y + 1, r->x + 2, r->w - 3, "no correct candidate yet",
		           screen_attr(SR_DIM));
		return;
	}
	/* the y axis: labels on the left; the x axis (candidates) on the last row */
	char top[16], bot[16];
	snprintf(top, sizeof top, "%.3gx", hi);
	snprintf(bot, sizeof bot, "%.3gx", lo);
	int lw = (int)(strlen(top) > strlen(bot) ? strlen(top) : strlen(bot)) + 1;
	int rows = r->h - 3, w = r->w - 2 - lw;
	int x0 = r->x + 1 + lw, dim = screen_attr(SR_DIM);
	if (rows < 1 || w < 4)
		return;
	screen_put(r->y + 1, r->x + 1, lw, top, dim);
	screen_put(r->y + rows, r->x + 1, lw, bot, dim);
	int *line = xcalloc((size_t)st->nCand + 1, sizeof *line);
	int nLine = chart_lineage(st, best->id, line, st->nCand + 1);
	/* the lineage as marks by position, for the columns */
	char *inLineAt = xcalloc((size_t)st->nCand + 1, 1);
	for (int k = 0; k < nLine; k++) {
		const struct cand *lc = state_cand(st, line[k]);
		if (lc)
			inLineAt[lc - st->aCand] = 1;
	}
	/* one column per candidate, in id order, or per round; more than
	 * columns share a column (its fastest shown) */
	int n = byRound ? st->search.nRound : st->nCand, cols = n < w ? n : w;
	static const char *const blocks[] = {" ",
	                                     "\xe2\x96\x81",
	                                     "\xe2\x96\x82",
	                                     "\xe2\x96\x83",
	                                     "\xe2\x96\x84",
	                                     "\xe2\x96\x85",
	                                     "\xe2\x96\x86",
	                                     "\xe2\x96\x87",
	                                     "\xe2\x96\x88"};
	int utf8 = screen_utf8();
	for (int x = 0; x < cols; x++) {
		int a = x * n / cols, b = (x + 1) * n / cols;
		double v = -1;
		int inLine = 0, failed = 0;
		for (int i = a; i < b; i++) {
			struct bar y = byRound ? round_bar(st, i, best->id, inLineAt)
			                       : cand_bar(st, i, inLineAt);
			if (y.v > v)
				v = y.v;
			failed |= y.failed;
			inLine |= y.inLine;
		}
		int attr = inLine ? screen_attr(SR_GOOD) | A_BOLD : screen_attr(SR_CHART) | A_DIM;
		if (v < 0) {
			if (failed)
				screen_put(r->y + rows, x0 + x, 1, "x", screen_attr(SR_BAD));
			continue;
		}
		/* the bar from the seed's level (one eighth at least) */
		double f = hi > lo ? (v - lo) / (hi - lo) : 1;
		int h8 = (int)(f * (rows - 1) * 8 + 0.5) + 8;
		for (int row = 0; row < rows; row++) {
			int level = h8 - (rows - 1 - row) * 8;
			level = level < 0 ? 0 : level > 8 ? 8 : level;
			if (!level)
				continue;
			screen_put(r->y + 1 + row, x0 + x, 1,
			           utf8         ? blocks[level]
			           : level >= 4 ? (inLine ? "*" : "#")
			                        : ".",
			           attr);
		}
	}
	/* the x axis: which candidates or rounds the columns are */
	char xl[96];
	if (byRound)
		snprintf(xl, sizeof xl, "round %d..%d  bold: the best's lineage",
		         st->search.aRound[0].round, st->search.aRound[n - 1].round);
	else
		snprintf(xl, sizeof xl, "#%d..#%d  bold: the best's lineage", st->aCand[0].id,
		         st->aCand[n - 1].id);
	screen_put(r->y + rows + 1, x0, r->w - 2 - lw, xl, dim);
	free(line);
	free(inLineAt);
}
