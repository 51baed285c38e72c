/*
 * cmd_report.c - `kloop report SESSION [-o FILE]`: a session as one
 * self-contained HTML page (inline CSS and SVG; no scripts, nothing fetched):
 * the best speedup over time and through each generation, the lineage tree coloured
 * by origin and status with the winning path marked, the candidates' table,
 * and the best candidate's code with the diffs along its lineage.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "archive.h"
#include "cmd.h"
#include "flags.h"
#include "json.h"
#include "linediff.h"
#include "roofline.h"
#include "driver.h"
#include "session.h"

#define LINEAGE_MAX 64

/* text from a session, escaped for HTML (element content and attributes) */
static void esc(strbuf *sb, const char *z)
{
	for (const unsigned char *p = (const unsigned char *)(z ? z : ""); *p; p++) {
		switch (*p) {
		case '&':
			sb_adds(sb, "&amp;");
			break;
		case '<':
			sb_adds(sb, "&lt;");
			break;
		case '>':
			sb_adds(sb, "&gt;");
			break;
		case '"':
			sb_adds(sb, "&quot;");
			break;
		case '\'':
			sb_adds(sb, "&#39;");
			break;
		default:
			/* control characters (a candidate's, a compiler's) are shown, not kept */
			if ((*p < 0x20 && *p != '\n' && *p != '\t') || *p == 0x7f)
				sb_adds(sb, "\xef\xbf\xbd"); /* U+FFFD */
			else
				sb_add(sb, p, 1);
		}
	}
}

static const char *ORIGIN_COLOURS[][2] = {
    {"seed", "#4e79a7"},  {"llm", "#f28e2b"},       {"human", "#59a14f"},
    {"sweep", "#b07aa1"}, {"crossover", "#edc948"}, {NULL, "#9c9c9c"},
};

static const char *origin_colour(const char *z)
{
	int i = 0;
	while (ORIGIN_COLOURS[i][0] && strcmp(ORIGIN_COLOURS[i][0], z))
		i++;
	return ORIGIN_COLOURS[i][1];
}

static const char *status_colour(enum status s)
{
	switch (s) {
	case STATUS_CORRECT:
		return "#2e7d32";
	case STATUS_INCORRECT:
		return "#c62828";
	case STATUS_COMPILE_ERROR:
		return "#ef6c00";
	case STATUS_CRASHED:
	case STATUS_TIMEOUT:
		return "#6a1b9a";
	default:
		return "#757575";
	}
}

/* the report's view of a session */
struct rep {
	const struct state *st;
	int *aDepth;   /* by index in st->aCand: the generation (seeds and orphans 0) */
	int *aRow;     /* by index: its row within its generation */
	int *aOnPath;  /* by index: on the winning path */
	int maxDepth;  /* the largest generation */
	int maxRows;   /* the most candidates in one generation */
	int best;      /* index of the best (state_best()), or -1 */
	int confirmed; /* ... confirmed beyond the noise (else a leader, unconfirmed) */
	int *aPath;    /* the winning path, root first (indices) */
	int nPath;
};

static int index_of(const struct state *st, int id)
{
	const struct cand *c = state_cand(st, id);
	return c ? (int)(c - st->aCand) : -1;
}

static void rep_init(struct rep *r, const struct state *st)
{
	memset(r, 0, sizeof *r);
	r->st = st;
	int n = st->nCand;
	r->aDepth = xcalloc((size_t)n + 1, sizeof *r->aDepth);
	r->aRow = xcalloc((size_t)n + 1, sizeof *r->aRow);
	r->aOnPath = xcalloc((size_t)n + 1, sizeof *r->aOnPath);
	r->aPath = xcalloc(LINEAGE_MAX, sizeof *r->aPath);
	r->best = -1;
	/* candidates come after their parents in a journal: one pass */
	for (int i = 0; i < n; i++) {
		const struct cand *c = &st->aCand[i];
		int d = 0;
		for (int k = 0; k < c->nParent; k++) {
			int p = index_of(st, c->aParent[k]);
			if (p >= 0 && p < i && r->aDepth[p] + 1 > d)
				d = r->aDepth[p] + 1;
		}
		r->aDepth[i] = d;
		if (d > r->maxDepth)
			r->maxDepth = d;
	}
	/* the one best (state_best()): the header's, the search's, the archive's */
	const struct cand *b = state_best(st, &r->confirmed, NULL);
	r->best = b ? index_of(st, b->id) : -1;
	int *rows = xcalloc((size_t)r->maxDepth + 1, sizeof *rows);
	for (int i = 0; i < n; i++) {
		r->aRow[i] = rows[r->aDepth[i]]++;
		if (rows[r->aDepth[i]] > r->maxRows)
			r->maxRows = rows[r->aDepth[i]];
	}
	free(rows);
	int chain[LINEAGE_MAX], m = 0;
	for (int i = r->best; i >= 0 && m < LINEAGE_MAX;) {
		int seen = 0;
		for (int k = 0; k < m; k++)
			seen |= chain[k] == i;
		if (seen)
			break;
		chain[m++] = i;
		const struct cand *c = &st->aCand[i];
		i = c->nParent ? index_of(st, c->aParent[0]) : -1;
	}
	for (int k = 0; k < m; k++) {
		r->aPath[k] = chain[m - 1 - k];
		r->aOnPath[chain[k]] = 1;
	}
	r->nPath = m;
}

static void rep_free(struct rep *r)
{
	free(r->aDepth);
	free(r->aRow);
	free(r->aOnPath);
	free(r->aPath);
}

static const char CSS[] =
    "body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;color:#222;max-width:"
    "1100px;margin:2em auto;padding:0 1em}\n"
    "h1{font-size:1.6em;margin-bottom:.2em}h2{font-size:1.25em;margin-top:1.6em;border-bottom:"
    "1px solid #ddd}\n"
    ".meta{color:#555}.best{font-size:1.15em}\n"
    "table{border-collapse:collapse;width:100%;font-size:12.5px}\n"
    "th,td{border-bottom:1px solid #e4e4e4;padding:3px 6px;text-align:left;vertical-align:top}\n"
    "td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}\n"
    "tr.onpath td{background:#fff8e1}\n"
    ".st-correct{color:#2e7d32}.st-incorrect{color:#c62828}.st-compile_error{color:#ef6c00}\n"
    ".st-crashed,.st-timeout{color:#6a1b9a}\n"
    "pre{background:#f7f7f7;border:1px solid #e4e4e4;padding:8px;overflow-x:auto;font-size:"
    "12px;line-height:1.35;tab-size:4}\n"
    ".add{color:#1b5e20;background:#e8f5e9}.del{color:#b71c1c;background:#ffebee}.hunk{color:"
    "#1565c0}\n"
    "svg{max-width:100%;height:auto}svg text{font:11px sans-serif;fill:#333}\n"
    ".legend span{display:inline-block;margin-right:1em}.sw{display:inline-block;width:.9em;"
    "height:.9em;border-radius:50%;vertical-align:middle;margin-right:.3em}\n"
    "@media print{body{max-width:none;margin:0;font-size:11px}h2{break-after:avoid}"
    "tr,svg,figure{break-inside:avoid}pre{white-space:pre-wrap;word-break:break-all;"
    "border:none}a{color:inherit;text-decoration:none}}\n";

/* the best speedup so far against minutes since the session started */
static void chart_time(strbuf *o, const struct rep *r)
{
	const struct state *st = r->st;
	int n = st->nCand;
	int *ord = xcalloc((size_t)n + 1, sizeof *ord);
	int m = 0;
	for (int i = 0; i < n; i++)
		if (st->aCand[i].speedup > 0 && st->aCand[i].status == STATUS_CORRECT &&
		    st->aCand[i].tsEval > 0)
			ord[m++] = i;
	/* by evaluation time (insertion sort: sessions are mostly in order) */
	for (int i = 1; i < m; i++)
		for (int k = i; k > 0 && st->aCand[ord[k]].tsEval < st->aCand[ord[k - 1]].tsEval;
		     k--) {
			int t = ord[k];
			ord[k] = ord[k - 1];
			ord[k - 1] = t;
		}
	sb_adds(o, "<h2 id=\"progress\">Best speedup over time</h2>\n");
	if (!m) {
		sb_adds(o, "<p>No correct, timed candidate yet.</p>\n");
		free(ord);
		return;
	}
	double t0 = st->tsStarted > 0 ? st->tsStarted : st->aCand[ord[0]].tsEval;
	double tMax = (st->aCand[ord[m - 1]].tsEval - t0) / 60, sMax = 0;
	for (int i = 0; i < m; i++)
		if (st->aCand[ord[i]].speedup > sMax)
			sMax = st->aCand[ord[i]].speedup;
	if (tMax <= 0)
		tMax = 1.0 / 60;
	/* seconds for a short session, minutes for a longer one */
	int secs = tMax < 2;
	double unit = secs ? 60 : 1;
	sMax *= 1.1;
	const int W = 640, H = 240, L = 50, B = 30, T = 10, R = 10;
	double xs = (W - L - R) / tMax, ys = (H - T - B) / sMax;
	sb_addf(o,
	        "<figure><svg id=\"chart-time\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
	        "height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"best speedup over "
	        "time\">\n",
	        W, H, W, H);
	sb_addf(o, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#999\"/>\n", L, H - B,
	        W - R, H - B);
	sb_addf(o, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#999\"/>\n", L, T, L,
	        H - B);
	for (int k = 0; k <= 4; k++) {
		double v = sMax * k / 4;
		sb_addf(o, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%.2fx</text>\n", L - 4,
		        H - B - v * ys + 4, v);
		double tv = tMax * k / 4;
		sb_addf(o, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"%s\">%.3g %s</text>\n",
		        L + tv * xs, H - B + 16, k == 4 ? "end" : "middle", tv * unit,
		        secs ? "s" : "min");
	}
	if (1.0 < sMax)
		sb_addf(o,
		        "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#bbb\" "
		        "stroke-dasharray=\"4 3\"/>\n",
		        L, H - B - ys, W - R, H - B - ys);
	strbuf pts = STRBUF_INIT;
	double best = 0, lastX = L;
	for (int i = 0; i < m; i++) {
		const struct cand *c = &st->aCand[ord[i]];
		double x = L + (c->tsEval - t0) / 60 * xs;
		/* the session's best once its verdict was in (state_best(), as
		 * the page's head names it): an unverified or reduced-precision
		 * time, or one within the best's noise, moves no line */
		const struct cand *b =
		    state_cand_rankable(st, c) ? state_best_until(st, c->firstEval).best : NULL;
		if (b && b->speedup != best) {
			if (best > 0)
				sb_addf(&pts, "%.1f,%.1f ", x, H - B - best * ys);
			best = b->speedup;
			sb_addf(&pts, "%.1f,%.1f ", x, H - B - best * ys);
		}
		lastX = x;
	}
	sb_addf(&pts, "%.1f,%.1f", lastX, H - B - best * ys);
	sb_addf(o,
	        "<polyline class=\"best-line\" fill=\"none\" stroke=\"#e15759\" "
	        "stroke-width=\"2\" points=\"%s\"/>\n",
	        pts.buf);
	sb_free(&pts);
	for (int i = 0; i < m; i++) {
		const struct cand *c = &st->aCand[ord[i]];
		double x = L + (c->tsEval - t0) / 60 * xs, y = H - B - c->speedup * ys;
		if (state_cand_rankable(st, c))
			sb_addf(o,
			        "<circle class=\"eval\" cx=\"%.1f\" cy=\"%.1f\" r=\"3\" "
			        "fill=\"%s\"><title>",
			        x, y, origin_colour(c->zOrigin));
		else
			sb_addf(o,
			        "<circle class=\"eval-suspect\" cx=\"%.1f\" cy=\"%.1f\" r=\"3\" "
			        "fill=\"none\" stroke=\"%s\"><title>",
			        x, y, origin_colour(c->zOrigin));
		sb_addf(o, "%d ", c->id);
		esc(o, c->zName);
		sb_addf(o, ": %.3gx%s</title></circle>\n", c->speedup,
		        state_cand_rankable(st, c) ? ""
		        : c->unverified            ? " (unverified: not a win)"
		                                   : " (reduced precision: not a win)");
	}
	sb_adds(o, "</svg><figcaption>The line is the best speedup over the baseline so far; each "
	           "dot a correct candidate when its evaluation ended, hollow where its time is "
	           "unverified or its precision reduced (no win). Dashed: 1x.</figcaption>"
	           "</figure>\n");
	free(ord);
}

/* a candidate of generation <= *arg (the depth of struct rep's, by index) */
struct gen_upto {
	const struct rep *r;
	int k;
};
static int gen_upto(const struct cand *c, void *arg)
{
	const struct gen_upto *g = arg;
	return g->r->aDepth[c - g->r->st->aCand] <= g->k;
}

/* the session's best through each generation (a bar each): the best the
 * session names (state_best_among(), the head's rule) among the
 * candidates of that generation and the ones before it, so that the last
 * bar is the best the page's head names, and no bar stands above it for
 * a time within its noise that no A/B settled (issue 39) */
static void chart_rounds(strbuf *o, const struct rep *r)
{
	const struct state *st = r->st;
	int g = r->maxDepth + 1;
	const struct cand **best = xcalloc((size_t)g, sizeof *best);
	double sMax = 0;
	for (int k = 0; k < g; k++) {
		struct gen_upto u = {r, k};
		best[k] = state_best_among(st, gen_upto, &u).best;
		if (best[k] && best[k]->speedup > sMax)
			sMax = best[k]->speedup;
	}
	sb_adds(o, "<h2 id=\"rounds\">The best through each generation</h2>\n");
	if (sMax <= 0) {
		sb_adds(o, "<p>No correct, timed candidate yet.</p>\n");
		free(best);
		return;
	}
	const int H = 200, B = 30, T = 16, L = 50, bw = 46;
	int W = L + g * (bw + 10) + 10;
	double ys = (H - T - B) / (sMax * 1.05);
	sb_addf(
	    o,
	    "<figure><svg id=\"chart-rounds\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
	    "height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"the best through each "
	    "generation\">\n",
	    W, H, W, H);
	sb_addf(o, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#999\"/>\n", L, H - B,
	        W - 10, H - B);
	for (int k = 0; k < g; k++) {
		double x = L + 10 + k * (bw + 10), h = best[k] ? best[k]->speedup * ys : 0;
		if (best[k] && best[k]->speedup > 0) {
			sb_addf(o,
			        "<rect class=\"round\" x=\"%.1f\" y=\"%.1f\" width=\"%d\" "
			        "height=\"%.1f\" fill=\"#76b7b2\"><title>#%d</title></rect>\n",
			        x, H - B - h, bw, h, best[k]->id);
			sb_addf(o,
			        "<text class=\"round-best\" id=\"gen-best-%d\" x=\"%.1f\" "
			        "y=\"%.1f\" text-anchor=\"middle\">%.2fx</text>\n",
			        k, x + bw / 2.0, H - B - h - 3, best[k]->speedup);
		}
		sb_addf(o, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">gen %d</text>\n",
		        x + bw / 2.0, H - B + 16, k);
	}
	sb_adds(o, "</svg><figcaption>Each bar is the session's best among the candidates of "
	           "that generation and the ones before it, decided as the best named above (an "
	           "A/B's winner, or faster outside the noise): the last bar is that best. "
	           "Generation: seeds and hand-given candidates are 0, a child is one more than "
	           "its deepest parent.</figcaption></figure>\n");
	free(best);
}

static void node_xy(const struct rep *r, int i, double *x, double *y)
{
	*x = 30 + r->aDepth[i] * 110.0;
	*y = 24 + r->aRow[i] * 26.0;
}

/* the population as a tree: generations left to right */
static void lineage(strbuf *o, const struct rep *r)
{
	const struct state *st = r->st;
	sb_adds(o, "<h2 id=\"lineage\">Lineage</h2>\n<p class=\"legend\">");
	for (int i = 0; ORIGIN_COLOURS[i][0]; i++)
		sb_addf(o, "<span><i class=\"sw\" style=\"background:%s\"></i>%s</span>",
		        ORIGIN_COLOURS[i][1], ORIGIN_COLOURS[i][0]);
	sb_adds(o, "<span>ring: status (green correct, red incorrect, orange compile error, purple "
	           "crashed or timeout, grey other)</span><span>thick gold: the path to the best "
	           "candidate</span></p>\n");
	if (!st->nCand) {
		sb_adds(o, "<p>No candidates.</p>\n");
		return;
	}
	int W = 30 + r->maxDepth * 110 + 120, H = 24 + r->maxRows * 26 + 10;
	sb_addf(
	    o,
	    "<figure><svg id=\"lineage-tree\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
	    "height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"lineage tree\">\n",
	    W, H, W, H);
	for (int i = 0; i < st->nCand; i++) {
		const struct cand *c = &st->aCand[i];
		for (int k = 0; k < c->nParent; k++) {
			int p = index_of(st, c->aParent[k]);
			if (p < 0)
				continue;
			double x1, y1, x2, y2;
			node_xy(r, p, &x1, &y1);
			node_xy(r, i, &x2, &y2);
			int win = k == 0 && r->aOnPath[i] && r->aOnPath[p];
			sb_addf(o,
			        "<path class=\"edge%s\" d=\"M%.1f %.1f C%.1f %.1f %.1f %.1f %.1f "
			        "%.1f\" "
			        "fill=\"none\" stroke=\"%s\" stroke-width=\"%s\"%s/>\n",
			        win ? " win" : "", x1, y1, (x1 + x2) / 2, y1, (x1 + x2) / 2, y2, x2,
			        y2, win ? "#d4a017" : "#bbb", win ? "3" : "1",
			        k ? " stroke-dasharray=\"3 2\"" : "");
		}
	}
	for (int i = 0; i < st->nCand; i++) {
		const struct cand *c = &st->aCand[i];
		double x, y;
		node_xy(r, i, &x, &y);
		sb_addf(
		    o,
		    "<g class=\"cand%s\"><circle class=\"node\" cx=\"%.1f\" cy=\"%.1f\" r=\"7\" "
		    "fill=\"%s\" stroke=\"%s\" stroke-width=\"%s\"><title>",
		    r->aOnPath[i] ? " win" : "", x, y, origin_colour(c->zOrigin),
		    r->aOnPath[i] ? "#d4a017" : status_colour(c->status),
		    r->aOnPath[i] ? "3.5" : "2.5");
		char v[600];
		driver_verdict(c, v, sizeof v);
		sb_addf(o, "%d ", c->id);
		esc(o, c->zName);
		sb_adds(o, " (");
		esc(o, c->zOrigin);
		sb_adds(o, "): ");
		esc(o, v);
		if (c->zIdea) {
			sb_adds(o, "; idea: ");
			esc(o, c->zIdea);
		}
		sb_addf(o, "</title></circle><text x=\"%.1f\" y=\"%.1f\">%d", x + 8, y - 9, c->id);
		if (c->speedup > 0)
			sb_addf(o, " %.2fx", c->speedup);
		sb_adds(o, "</text></g>\n");
	}
	sb_adds(o, "</svg></figure>\n");
}

static void num_cell(strbuf *o, double v, const char *zFmt)
{
	sb_adds(o, "<td class=\"n\">");
	if (isfinite(v) && v >= 0)
		sb_addf(o, zFmt, v);
	else
		sb_adds(o, "&#8211;");
	sb_adds(o, "</td>");
}

/* a roofline's fraction, its words (roofline_line) as the cell's title */
static void roof_cell(strbuf *o, const struct verdict *v)
{
	char line[400];
	roofline_line(v->rooflineJson, line, sizeof line);
	if (!line[0]) {
		num_cell(o, NAN, "");
		return;
	}
	sb_adds(o, "<td class=\"n\" title=\"");
	esc(o, line);
	sb_addf(o, "\">%.0f%%</td>",
	        (isnan(v->roofline.fraction) ? 0 : v->roofline.fraction) * 100);
}

static void table(strbuf *o, const struct rep *r)
{
	const struct state *st = r->st;
	sb_addf(o, "<h2 id=\"candidates\">Candidates (%d)</h2>\n", st->nCand);
	sb_adds(o, "<table id=\"cand-table\"><thead><tr><th class=\"n\">id</th><th>name</th>"
	           "<th>origin</th><th>parents</th><th>idea</th><th>verdict</th>"
	           "<th class=\"n\">time ms</th><th class=\"n\">p10&#8211;p90</th>"
	           "<th class=\"n\">speedup</th><th class=\"n\">roofline</th>"
	           "<th class=\"n\">vs compile</th>"
	           "<th class=\"n\">vs parent</th><th>resources</th></tr></thead><tbody>\n");
	for (int i = 0; i < st->nCand; i++) {
		const struct cand *c = &st->aCand[i];
		sb_addf(o, "<tr id=\"c%d\"%s><td class=\"n\">%d</td><td>", c->id,
		        r->aOnPath[i] ? " class=\"onpath\"" : "", c->id);
		esc(o, c->zName);
		sb_adds(o, "</td><td>");
		esc(o, c->zOrigin);
		sb_adds(o, "</td><td>");
		for (int k = 0; k < c->nParent; k++)
			sb_addf(o, "%s<a href=\"#c%d\">%d</a>", k ? ", " : "", c->aParent[k],
			        c->aParent[k]);
		sb_adds(o, "</td><td>");
		esc(o, c->zIdea ? c->zIdea : "");
		sb_adds(o, "</td><td class=\"st-");
		esc(o, c->zStatus);
		sb_adds(o, "\">");
		esc(o, c->zStatus);
		if (*c->zReason) {
			sb_adds(o, ": ");
			char *cut = xstrndup(c->zReason, strnlen(c->zReason, 160));
			esc(o, cut);
			free(cut);
		}
		sb_adds(o, "</td>");
		num_cell(o, c->timeMs, "%.4g");
		double p10 = c->v.timing.p10Ms, p90 = c->v.timing.p90Ms;
		sb_adds(o, "<td class=\"n\">");
		if (c->timeMs >= 0 && isfinite(p10) && isfinite(p90))
			sb_addf(o, "%.4g&#8211;%.4g", p10, p90);
		else
			sb_adds(o, "&#8211;");
		sb_adds(o, "</td>");
		/* the speedup, with what its time or its precision is worth */
		sb_adds(o, "<td class=\"n\">");
		if (c->speedup >= 0)
			sb_addf(o, "%.3gx%s%s%s", c->speedup,
			        c->unverified ? " <span title=\"its time unverified\">?</span>"
			                      : "",
			        c->reduced ? " <span title=\"reduced precision\">~</span>" : "",
			        c->belowFloor ? " <span title=\"below the device's floor: a "
			                        "suspect\">!</span>"
			                      : "");
		else
			sb_adds(o, "&#8211;");
		sb_adds(o, "</td>");
		/* the share of the device's limit its time reaches (roofline.h),
		 * which floor binds, of what type and at what clock in its title */
		roof_cell(o, &c->v);
		num_cell(o, c->v.speedupCompile, "%.3gx");
		const struct cand *p = c->nParent ? state_cand(st, c->aParent[0]) : NULL;
		num_cell(o, p && p->timeMs > 0 && c->timeMs > 0 ? p->timeMs / c->timeMs : NAN,
		         "%.3gx");
		sb_adds(o, "<td>");
		const cJSON *x;
		cJSON_ArrayForEach(x, c->v.comp.resources)
		{
			esc(o, cJSON_GetStringValue(cJSON_GetObjectItem(x, "kernel")));
			sb_addf(o, ": %g regs, %g B smem, %g B spill<br>",
			        json_num(x, "registers", NAN), json_num(x, "shared_bytes", NAN),
			        json_num(x, "spill_stores", NAN));
		}
		sb_adds(o, "</td></tr>\n");
	}
	sb_adds(o, "</tbody></table>\n");
}

static void diff_html(strbuf *o, const char *a, const char *b)
{
	strbuf d = STRBUF_INIT;
	linediff_unified(a, b, 3, 4000, &d);
	sb_adds(o, "<pre class=\"diff\">");
	for (const char *p = d.buf ? d.buf : ""; *p;) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		char *line = xstrndup(p, n);
		const char *cls = *p == '+' ? "add" : *p == '-' ? "del" : *p == '@' ? "hunk" : NULL;
		if (cls)
			sb_addf(o, "<span class=\"%s\">", cls);
		esc(o, line);
		sb_adds(o, cls ? "</span>\n" : "\n");
		free(line);
		p += n + (nl != NULL);
	}
	sb_adds(o, "</pre>\n");
	sb_free(&d);
}

static void best_code(strbuf *o, const struct rep *r)
{
	const struct state *st = r->st;
	sb_adds(o, "<h2 id=\"best-code\">The best candidate</h2>\n");
	if (r->best < 0) {
		sb_adds(o, "<p>No correct, timed candidate yet.</p>\n");
		return;
	}
	const struct cand *c = &st->aCand[r->best];
	sb_addf(o, "<p>Candidate %d, ", c->id);
	esc(o, c->zName);
	sb_adds(o, " (");
	esc(o, c->zOrigin);
	sb_addf(o, "), %.4g ms, %.2fx the baseline. Its lineage: ", c->timeMs, c->speedup);
	for (int k = 0; k < r->nPath; k++) {
		const struct cand *x = &st->aCand[r->aPath[k]];
		sb_addf(o, "%s<a href=\"#c%d\">%d</a>", k ? " &#8594; " : "", x->id, x->id);
	}
	sb_adds(o, ".</p>\n<pre class=\"code\">");
	esc(o, c->zSource);
	sb_adds(o, "</pre>\n<h2 id=\"diffs\">Along the lineage</h2>\n");
	if (r->nPath < 2)
		sb_adds(o, "<p>The best candidate has no parent in this session.</p>\n");
	for (int k = 1; k < r->nPath; k++) {
		const struct cand *p = &st->aCand[r->aPath[k - 1]], *x = &st->aCand[r->aPath[k]];
		sb_addf(o, "<h3>%d &#8594; %d ", p->id, x->id);
		esc(o, x->zName);
		if (x->zIdea) {
			sb_adds(o, ": ");
			esc(o, x->zIdea);
		}
		if (p->timeMs > 0 && x->timeMs > 0)
			sb_addf(o, " (%.4g &#8594; %.4g ms)", p->timeMs, x->timeMs);
		sb_adds(o, "</h3>\n");
		diff_html(o, p->zSource, x->zSource);
	}
}

/* the whole page */
static void page(strbuf *o, const struct state *st, const char *zJournal)
{
	struct rep r;
	rep_init(&r, st);
	sb_adds(o, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	           "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	           "<title>kloop report: ");
	esc(o, st->zTask);
	sb_addf(o, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<h1>", CSS);
	esc(o, st->zTask);
	sb_adds(o, "</h1>\n<p class=\"meta\">Session ");
	esc(o, zJournal);
	sb_adds(o, " &#183; backend ");
	esc(o, st->zBackend);
	int correct = 0;
	for (int i = 0; i < st->nCand; i++)
		correct += st->aCand[i].status == STATUS_CORRECT;
	sb_addf(o, " &#183; %d events &#183; %d candidates (%d correct) &#183; %d ideas",
	        st->nEvents, st->nCand, correct, st->nIdea);
	if (st->baselineMs >= 0)
		sb_addf(o, " &#183; baseline %.4g ms", st->baselineMs);
	if (st->llm.nRequests) {
		char tok[160];
		state_llm_tokens_text(&st->llm, NULL, tok, sizeof tok);
		sb_addf(o, " &#183; %d LLM requests, %s", st->llm.nRequests, tok);
	}
	sb_adds(o, "</p>\n<p class=\"best\" id=\"best\">");
	if (r.best >= 0) {
		const struct cand *b = &st->aCand[r.best];
		struct state_best_info bi = state_best_info(st);
		sb_addf(o, "Best: candidate %d (", b->id);
		esc(o, b->zName);
		sb_addf(o, "), <b id=\"best-speedup\">%.2fx</b> the baseline, %.4g ms", b->speedup,
		        b->timeMs);
		if (bi.tie)
			sb_addf(
			    o,
			    " (unconfirmed: candidate %d is within its timing noise and no A/B has "
			    "told them apart)",
			    bi.tie);
		else if (bi.abTie)
			sb_addf(o, " (an A/B found candidate %d within its timing noise)",
			        bi.abTie);
		sb_adds(o, ".");
		char line[400];
		roofline_line(b->v.rooflineJson, line, sizeof line);
		if (line[0]) {
			sb_adds(o, " <span id=\"best-roofline\">Roofline: ");
			esc(o, line);
			sb_adds(o, ".</span>");
		}
	} else {
		sb_adds(o, "No correct, timed candidate yet.");
	}
	sb_adds(o, "</p>\n");
	chart_time(o, &r);
	chart_rounds(o, &r);
	lineage(o, &r);
	table(o, &r);
	best_code(o, &r);
	sb_adds(o, "<p class=\"meta\">Made by <code>kloop report</code>.</p>\n</body>\n</html>\n");
	rep_free(&r);
}

static int exec_report(int argc, char **argv)
{
	struct flags f;
	int frc = flags_parse(&cmd_report_entry, FL_REPORT, argc, argv, 1, 1, &f);
	if (frc)
		return frc;
	const char *zOut = f.zOutput, *zIn = f.azPos[0];
	flags_free(&f);
	char err[KL_ERRLEN];
	struct session *s = session_open(zIn, 0, err);
	if (!s) {
		fprintf(stderr, "kloop: %s\n", err);
		return 1;
	}
	if (s->warnings.len)
		fprintf(stderr, "kloop: warning: %s", s->warnings.buf);
	if (!s->st.zTask) {
		fprintf(stderr,
		        "kloop: %s: not a kloop session journal (no session_started event)\n", zIn);
		session_close(s);
		return 1;
	}
	strbuf o = STRBUF_INIT;
	page(&o, &s->st, zIn);
	char *def = NULL;
	if (!zOut) {
		const char *b = strrchr(zIn, '/');
		b = b ? b + 1 : zIn;
		size_t n = strlen(b);
		if (n > 6 && !strcmp(b + n - 6, ".jsonl"))
			n -= 6;
		zOut = def = xasprintf("%.*s.html", (int)n, b);
	}
	int rc = write_file_atomic(zOut, o.buf, o.len, err);
	if (rc < 0)
		fprintf(stderr, "kloop: %s\n", err);
	else
		printf("%s: %d candidates, report written to %s\n", zIn, s->st.nCand, zOut);
	free(def);
	sb_free(&o);
	session_close(s);
	return rc < 0 ? 1 : 0;
}

const struct cmd_entry cmd_report_entry = {
    .name = "report",
    .usage = "SESSION [-o report.html]",
    .help = "the session as one self-contained HTML page: progress charts, lineage tree, "
            "candidates, the best code and its diffs",
    .exec = exec_report,
};
