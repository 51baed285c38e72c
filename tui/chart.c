/*
 * chart.c - the best speedup over time: a bar per column from the
 * session's start to now (or to the replayed event), drawn with block
 * characters where the terminal speaks UTF-8.
 */
#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "panes.h"
#include "screen.h"

double chart_series(const struct state *st, double tEnd, int n, double *out)
{
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
		if (c->speedup < 0 || c->tsEval <= 0 || strcmp(c->zStatus, "correct"))
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

/* the time the chart ends: now when live, else the last event's */
static double chart_end(const struct ui *u)
{
	if (u->lv) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
	}
	double t = u->st->tsStarted;
	for (int i = 0; i < u->st->nCand; i++) {
		const struct cand *c = &u->st->aCand[i];
		if (c->tsEval > t)
			t = c->tsEval;
		if (c->tsAdded > t)
			t = c->tsAdded;
	}
	return t;
}

void chart_draw(struct ui *u, const struct ui_rect *r)
{
	if (r->h < 3 || r->w < 6)
		return;
	int w = r->w - 2, rows = r->h - 2;
	double *v = xcalloc((size_t)w, sizeof *v);
	double best = chart_series(u->st, chart_end(u), w, v);
	char title[80];
	if (best > 0)
		snprintf(title, sizeof title, "Best speedup %.3gx", best);
	else
		snprintf(title, sizeof title, "Best speedup -");
	screen_frame(r, title, 0);
	static const char *const blocks[] = {" ",
	                                     "\xe2\x96\x81",
	                                     "\xe2\x96\x82",
	                                     "\xe2\x96\x83",
	                                     "\xe2\x96\x84",
	                                     "\xe2\x96\x85",
	                                     "\xe2\x96\x86",
	                                     "\xe2\x96\x87",
	                                     "\xe2\x96\x88"};
	int utf8 = screen_utf8(), a = screen_attr(SR_CHART);
	for (int x = 0; best > 0 && x < w; x++) {
		/* height in eighths of a row */
		int h8 = (int)(v[x] / best * rows * 8 + 0.5);
		for (int row = 0; row < rows; row++) {
			int level = h8 - (rows - 1 - row) * 8;
			level = level < 0 ? 0 : level > 8 ? 8 : level;
			if (!level)
				continue;
			if (utf8)
				screen_put(r->y + 1 + row, r->x + 1 + x, 1, blocks[level], a);
			else
				screen_put(r->y + 1 + row, r->x + 1 + x, 1, level >= 4 ? "#" : ".",
				           a);
		}
	}
	if (best <= 0)
		screen_put(r->y + 1, r->x + 2, w - 1, "no correct candidate yet",
		           screen_attr(SR_DIM));
	free(v);
}
