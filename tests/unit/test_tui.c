/*
 * test_tui.c - the TUI's pure parts: the layout of the panes at the sizes
 * a terminal may have (tui/screen.c) and its title bar's fields, the
 * best-speedup series of the chart (tui/chart.c), the table rows, marks and
 * results report (tui/report.c), the follow mode's target and the stage
 * labels (tui/ui.c); a text view's rows, wrapped or not, and searching
 * them (tui/pane_text.c).
 */
#include <cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fverdict.h"
#include "panes.h"
#include "event.h"
#include "fold.h"
#include "report.h"
#include "screen.h"

/* candidate id's verdict f, made as the worker makes one, folded into st */
static void fold_fv(struct state *st, int id, const struct fv *f)
{
	char *e = fv_event(id, 2, fv_make(f));
	fold_event(st, e, NULL);
	free(e);
}

static int inside(const struct ui_rect *r, int w, int h)
{
	return r->h == 0 || (r->y >= 1 && r->x >= 0 && r->y + r->h <= h - 1 && r->x + r->w <= w);
}

static int overlap(const struct ui_rect *a, const struct ui_rect *b)
{
	if (!a->h || !b->h)
		return 0;
	return a->x < b->x + b->w && b->x < a->x + a->w && a->y < b->y + b->h && b->y < a->y + a->h;
}

/* the columns of a row as pane_code_line() draws it: tabs to 4-column
 * stops from the row's start */
static int row_cols(const struct pane_row *r)
{
	int col = 0;
	for (size_t i = 0; i < r->n; i++)
		col += r->p[i] == '\t' ? 4 - col % 4 : 1;
	return col;
}

/* a text view's rows and searching them: the Code pane's and the pages' */
static void test_find(void)
{
	const char *text = "int a = expf(x) + expf(y);\n\tz = EXPF;\n\nlongwordwithoutspaces\n";
	struct pane_rows r = {0};
	pane_rows_add(&r, text, 0);
	CHECK(r.n == 4 && r.a[0].n == 26 && r.a[1].line == 1 && r.a[2].n == 0 && !r.a[3].cont,
	      "unwrapped: a row per line (%d rows)", r.n);
	pane_rows_free(&r);

	pane_rows_add(&r, text, 10);
	int fits = 1, whole = 1, breaksAtSpace = 1;
	for (int i = 0; i < r.n; i++) {
		fits &= row_cols(&r.a[i]) <= 10;
		/* every byte of a line in one of its rows, in order */
		if (i + 1 < r.n && r.a[i + 1].cont)
			whole &= r.a[i].p + r.a[i].n == r.a[i + 1].p;
		if (i + 1 < r.n && r.a[i + 1].cont && r.a[i].line == 0)
			breaksAtSpace &= r.a[i].p[r.a[i].n - 1] == ' ';
	}
	CHECK(fits && whole && breaksAtSpace && r.a[0].n == 8 && r.a[1].cont && r.a[1].line == 0,
	      "wrapped at 10 columns: each row fits (tabs as 4), after a space, no byte lost "
	      "(first row '%.*s')",
	      (int)r.a[0].n, r.a[0].p);
	int last = r.n - 1;
	CHECK(r.a[last].cont && r.a[last - 1].n == 10 && r.a[last].line == 3,
	      "a word wider than the row is cut at the row's width");
	char other[4] = "x";
	CHECK(pane_rows_at(&r, text + 9) == 1 && pane_rows_at(&r, other) == -1,
	      "pane_rows_at: the row that holds a byte, -1 for another text's");
	pane_rows_free(&r);

	pane_rows_add(&r, text, 0);
	int row;
	size_t at;
	int rc = pane_find(&r, "expf", 0, 0, 1, &row, &at);
	CHECK(rc == 0 && row == 0 && at == 8, "/expf: the first match (%d %d:%zu)", rc, row, at);
	rc = pane_find(&r, "expf", 0, at + 1, 1, &row, &at);
	CHECK(rc == 0 && row == 0 && at == 18, "n: the next on the same line (%d %d:%zu)", rc, row,
	      at);
	rc = pane_find(&r, "expf", 0, at + 1, 1, &row, &at);
	CHECK(rc == 0 && row == 1 && at == 5,
	      "n: the next, EXPF: case is ignored for a pattern without capitals (%d %d:%zu)", rc,
	      row, at);
	rc = pane_find(&r, "expf", 1, at + 1, 1, &row, &at);
	CHECK(rc == 1 && row == 0 && at == 8,
	      "n past the last: round to the first, said (rc 1) (%d %d:%zu)", rc, row, at);
	rc = pane_find(&r, "expf", 0, 8, -1, &row, &at);
	CHECK(rc == 1 && row == 1 && at == 5,
	      "N before the first: round to the last, said (%d %d:%zu)", rc, row, at);
	rc = pane_find(&r, "expf", 1, 5, -1, &row, &at);
	CHECK(rc == 0 && row == 0 && at == 18, "N: the previous (%d %d:%zu)", rc, row, at);
	rc = pane_find(&r, "EXPF", 0, 0, 1, &row, &at);
	CHECK(rc == 0 && row == 1 && at == 5, "a capital makes case matter (%d %d:%zu)", rc, row,
	      at);
	rc = pane_find(&r, "EXPF", 1, 6, 1, &row, &at);
	CHECK(rc == 1 && row == 1 && at == 5, "the only match, from past it: itself, round (%d)",
	      rc);
	CHECK(pane_find(&r, "nowhere", 0, 0, 1, &row, &at) == -1 &&
	          pane_find(&r, "", 0, 0, 1, &row, &at) == -1,
	      "not found, and an empty pattern: -1");
	int nth, n = pane_find_count(&r, "expf", 0, 18, &nth);
	CHECK(n == 3 && nth == 2, "match 2 of 3 (%d of %d)", nth, n);
	pane_rows_free(&r);
}

/* a CUTLASS candidate's compile says why it takes a minute, with the
 * session's last such compile's seconds (issue 36) */
static void compile_note(void)
{
	struct state st;
	char b[96];
	state_init(&st);
	fold_event(&st, "{\"type\":\"session_started\",\"task\":\"t\",\"ts\":1000}", NULL);
	fold_event(&st,
	           "{\"type\":\"candidate_added\",\"id\":1,\"source\":\"#include "
	           "<cutlass/cutlass.h>\\n\",\"ts\":1000}",
	           NULL);
	fold_event(&st,
	           "{\"type\":\"candidate_added\",\"id\":2,\"source\":\"#include "
	           "\\\"cute/tensor.hpp\\\"\\n\",\"ts\":1000}",
	           NULL);
	fold_event(&st, "{\"type\":\"candidate_added\",\"id\":3,\"source\":\"int x;\",\"ts\":1000}",
	           NULL);
	state_compile_note(&st, state_cand(&st, 2), "compile", b, sizeof b);
	CHECK(strstr(b, "CUTLASS templates") && strstr(b, "about a minute"),
	      "a CUTLASS candidate compiling says why it takes a while (%s)", b);
	fold_event(&st,
	           "{\"type\":\"eval_finished\",\"candidate\":1,\"ts\":1060,\"result\":{\"status\":"
	           "\"correct\",\"compile\":{\"ok\":true,\"cached\":false,\"seconds\":57.4}}}",
	           NULL);
	state_compile_note(&st, state_cand(&st, 2), "compile", b, sizeof b);
	CHECK(strstr(b, "the last took 57 s"), "... with the last CUTLASS compile's seconds (%s)",
	      b);
	state_compile_note(&st, state_cand(&st, 3), "compile", b, sizeof b);
	CHECK(!b[0], "a plain candidate's compile gets no note (%s)", b);
	state_compile_note(&st, state_cand(&st, 2), "timing", b, sizeof b);
	CHECK(!b[0], "nor does a CUTLASS candidate once it is timed (%s)", b);
	state_free(&st);
}

int main(void)
{
	static const int sizes[][2] = {{80, 24},  {100, 30}, {120, 40},
	                               {200, 60}, {80, 60},  {250, 24}};
	for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
		int w = sizes[s][0], h = sizes[s][1];
		struct ui_rect r[UI_NRECTS];
		screen_layout(w, h, -1, r);
		int ok = 1, area = 0;
		for (int i = 0; i < UI_NRECTS; i++) {
			/* every pane; the chart may be left out on a narrow screen */
			ok &= inside(&r[i], w, h) &&
			      ((r[i].h >= 4 && r[i].w >= 20) || (i == UI_CHART && !r[i].h));
			area += r[i].h * r[i].w;
			for (int k = i + 1; k < UI_NRECTS; k++)
				ok &= !overlap(&r[i], &r[k]);
		}
		CHECK(
		    ok,
		    "%dx%d: every pane is shown, at least 20x4, inside the body, none overlapping",
		    w, h);
		CHECK(area == w * (h - 2), "%dx%d: the panes fill the body (%d of %d cells)", w, h,
		      area, w * (h - 2));
		CHECK(r[UI_POPULATION].w - 2 >= 48,
		      "%dx%d: the population table's columns fit (%d)", w, h,
		      r[UI_POPULATION].w - 2);
		CHECK(r[UI_POPULATION].w == screen_population_width(w) || r[UI_CODE].w == w,
		      "%dx%d: Population is as wide as its columns need (%d), or the panes stack "
		      "and Code has the whole width",
		      w, h, r[UI_POPULATION].w);
		CHECK(r[UI_CODE].w >= r[UI_POPULATION].w || r[UI_CODE].w >= SCREEN_CODE_MIN,
		      "%dx%d: Code gets the rest (%d columns, Population %d)", w, h, r[UI_CODE].w,
		      r[UI_POPULATION].w);
		screen_layout(w, h, UI_CODE, r);
		CHECK(r[UI_CODE].w == w && r[UI_CODE].h == h - 2 && r[UI_POPULATION].h == 0,
		      "%dx%d: a zoomed pane takes the body, the others none", w, h);
	}
	struct ui_rect r[UI_NRECTS];
	screen_layout(200, 50, -1, r);
	CHECK(r[UI_CODE].w > 100 && r[UI_POPULATION].w < 90,
	      "200x50: Code gets most of the width (%d), Population what it needs (%d)",
	      r[UI_CODE].w, r[UI_POPULATION].w);
	screen_layout(80, 24, -1, r);
	CHECK(r[UI_CODE].w == 80 && r[UI_CODE].y > r[UI_POPULATION].y,
	      "80x24: the panes stack, Code below Population across all 80 columns");
	screen_layout(10, 3, -1, r);
	int none = 1;
	for (int i = 0; i < UI_NRECTS; i++)
		none &= r[i].h == 0;
	CHECK(none, "a screen too small to hold panes gets none (no negative sizes)");

	struct state st;
	state_init(&st);
	fold_event(&st, "{\"type\":\"session_started\",\"task\":\"t\",\"ts\":1000}", NULL);
	double v[10];
	CHECK(chart_series(&st, 1010, 10, v) == 0 && v[9] == 0, "no candidate: an empty chart");
	fold_event(&st, "{\"type\":\"candidate_added\",\"id\":1,\"source\":\"x\",\"ts\":1000}",
	           NULL);
	fold_event(&st, "{\"type\":\"candidate_added\",\"id\":2,\"source\":\"x\",\"ts\":1000}",
	           NULL);
	fold_event(&st, "{\"type\":\"candidate_added\",\"id\":3,\"source\":\"x\",\"ts\":1000}",
	           NULL);
	fold_event(&st,
	           "{\"type\":\"eval_finished\",\"candidate\":1,\"ts\":1002,\"result\":{\"status\":"
	           "\"correct\","
	           "\"speedup\":1.5}}",
	           NULL);
	fold_event(&st,
	           "{\"type\":\"eval_finished\",\"candidate\":2,\"ts\":1004,\"result\":{\"status\":"
	           "\"incorrect\","
	           "\"speedup\":9}}",
	           NULL);
	fold_event(&st,
	           "{\"type\":\"eval_finished\",\"candidate\":3,\"ts\":1007,\"result\":{\"status\":"
	           "\"correct\","
	           "\"speedup\":3}}",
	           NULL);
	double best = chart_series(&st, 1010, 10, v);
	CHECK(best == 3, "the best correct speedup is 3 (the incorrect 9 does not count)");
	CHECK(v[0] == 0 && v[1] == 0 && v[2] == 1.5 && v[6] == 1.5 && v[7] == 3 && v[9] == 3,
	      "the series steps up when a better candidate is evaluated and stays");

	strbuf h = STRBUF_INIT, row = STRBUF_INIT;
	report_table_header(&h);
	report_table_row(state_cand(&st, 3), NULL, &row);
	CHECK(strstr(row.buf, "   3") == row.buf && strstr(row.buf, "correct") &&
	          strstr(row.buf, "3x"),
	      "a row: %s", row.buf);
	CHECK(strstr(h.buf, "status") - h.buf == strstr(row.buf, "correct") - row.buf,
	      "the status lines up with its header");
	sb_reset(&row);
	report_table_row(state_cand(&st, 3), "timing 12", &row);
	CHECK(strstr(row.buf, "timing 12"), "a running job's stage replaces the status");
	sb_free(&h);
	sb_free(&row);

	strbuf rs = STRBUF_INIT;
	report_results(&st, state_cand(&st, 3), &rs);
	CHECK(strstr(rs.buf, "verdict   correct"), "the results report starts with the verdict");
	state_free(&st);
	sb_free(&rs);

	/* honest comparisons: a faster median inside the other's p10-p90 is the
	 * same within noise, not a new best; one outside it is */
	state_init(&st);
	fold_event(&st, "{\"type\":\"session_started\",\"task\":\"t\",\"ts\":1000}", NULL);
	fold_event(&st,
	           "{\"type\":\"candidate_added\",\"id\":1,\"origin\":\"seed\","
	           "\"source\":\"a\"}",
	           NULL);
	fold_event(&st,
	           "{\"type\":\"candidate_added\",\"id\":2,\"origin\":\"llm\","
	           "\"parents\":[1],\"source\":\"b\"}",
	           NULL);
	fold_event(&st,
	           "{\"type\":\"candidate_added\",\"id\":3,\"origin\":\"llm\","
	           "\"parents\":[2],\"source\":\"c\"}",
	           NULL);
	/* as the worker makes them (fverdict.h): the reference at 0.9583 ms */
	fold_fv(&st, 1, &(struct fv){.median = 0.9583, .p10 = 0.95, .p90 = 1.11, .base = 0.9583});
	fold_fv(&st, 2, &(struct fv){.median = 0.9576, .p10 = 0.94, .p90 = 0.99, .base = 0.9583});
	int tie = 0;
	const struct cand *b = report_best(&st, &tie);
	CHECK(b && b->id == 1 && tie == 2,
	      "0.9576 vs 0.9583 ms with overlapping spreads: #2 is not claimed to beat #1, the "
	      "same within noise: #1 keeps the best, unconfirmed (best %d, tie %d)",
	      b ? b->id : 0, tie);
	CHECK(report_same_within_noise(state_cand(&st, 1), state_cand(&st, 2)) == 1,
	      "overlapping p10-p90 intervals are the same within noise");
	fold_fv(&st, 3, &(struct fv){.median = 0.53, .p10 = 0.52, .p90 = 0.55, .base = 0.9583});
	b = report_best(&st, &tie);
	CHECK(b && b->id == 3 && tie == 0, "a time outside the noise is a new best (%d)",
	      b ? b->id : 0);
	int lin[8];
	CHECK(chart_lineage(&st, 3, lin, 8) == 3 && lin[0] == 3 && lin[1] == 2 && lin[2] == 1,
	      "the best's lineage goes back to the seed: 3, 2, 1");
	sb_reset(&rs);
	report_results(&st, state_cand(&st, 3), &rs);
	CHECK(strstr(rs.buf, "versus    parent #2: 1.81x (faster, outside the noise); seed #1: "),
	      "results compare with the parent and the seed: %s", rs.buf);
	sb_reset(&rs);
	report_table_row(state_cand(&st, 3), NULL, &rs);
	CHECK(strstr(rs.buf, "0.53±3%"), "the table shows the spread next to the time: %s", rs.buf);
	sb_reset(&rs);
	report_compare(&st, state_cand(&st, 1), state_cand(&st, 2), &rs);
	CHECK(strstr(rs.buf, "0.9583 ms (p10-p90 0.95-1.11)") &&
	          strstr(rs.buf, "#2 against #1: 1x, same within noise") &&
	          strstr(rs.buf, "diff #1"),
	      "compare puts the metrics side by side, says same within noise, then the diff: %s",
	      rs.buf);
	state_free(&st);
	sb_free(&rs);

	/* steering (issue 27): marks, the Results' order, the A/B in compare,
	 * the follow mode's target */
	state_init(&st);
	fold_event(&st, "{\"type\":\"session_started\",\"task\":\"t\",\"ts\":1000}", NULL);
	for (int i = 1; i <= 4; i++) {
		char ev[200];
		snprintf(ev, sizeof ev,
		         "{\"type\":\"candidate_added\",\"id\":%d,\"origin\":\"%s\",%s\"source\":"
		         "\"s%d\"}",
		         i, i == 1 ? "seed" : "llm", i == 1 ? "" : "\"parents\":[1],", i);
		fold_event(&st, ev, NULL);
	}
	/* as the worker makes them (fverdict.h): the reference at 2 ms */
	cJSON *r1 = fv_make(&(struct fv){.median = 2, .p10 = 1.9, .p90 = 2.1, .base = 2});
	fv_detail(r1, "compile",
	          "{\"seconds\":0.3,\"device_only\":true,\"command\":\"cc -O3 -shared "
	          "a-long-command\"}");
	char *e1 = fv_event(1, 2, r1);
	fold_event(&st, e1, NULL);
	free(e1);
	fold_fv(&st, 2, &(struct fv){.median = 1, .p10 = 0.99, .p90 = 1.01, .base = 2});
	fold_event(&st, "{\"type\":\"search_started\",\"settings\":{},\"ts\":1001}", NULL);
	fold_event(&st, "{\"type\":\"ban\",\"candidate\":3,\"ts\":1002}", NULL);
	fold_event(&st, "{\"type\":\"pin\",\"candidate\":2,\"ts\":1002}", NULL);
	fold_event(&st,
	           "{\"type\":\"suspect_flagged\",\"candidate\":4,\"speedup\":90,\"why\":\"90x is "
	           "more than the suspect limit\",\"ts\":1002}",
	           NULL);
	fold_event(&st,
	           "{\"type\":\"ab_compared\",\"candidate\":2,\"incumbent\":1,\"pairs\":20,"
	           "\"wins\":19,\"ratio\":1.9,\"won\":true,\"ts\":1003}",
	           NULL);
	const struct cand *top = state_best(&st, NULL, NULL);
	CHECK(report_mark(&st, state_cand(&st, 1), top) == ' ' &&
	          report_mark(&st, state_cand(&st, 2), top) == 'P' &&
	          report_mark(&st, state_cand(&st, 3), top) == 'B' &&
	          report_mark(&st, state_cand(&st, 4), top) == '!' &&
	          report_mark(&st, state_cand(&st, 2), NULL) == 'P' &&
	          report_mark(&st, state_cand(&st, 1), state_cand(&st, 1)) == '*',
	      "marks: none, pinned (#2, the best too: pinned says more), banned, suspect; the "
	      "best's row *");
	CHECK(strstr(report_mark_legend(), "* the best") &&
	          strstr(report_mark_legend(), "B banned") &&
	          strstr(report_mark_legend(), "P pinned") &&
	          strstr(report_mark_legend(), "! suspect"),
	      "the legend says each mark");
	sb_reset(&h);
	sb_reset(&row);
	report_table_header(&h);
	report_table_row_marked(state_cand(&st, 2), NULL, 'P', &row);
	CHECK(!strncmp(row.buf, "P  2", 4) &&
	          strstr(h.buf, "status") - h.buf == strstr(row.buf, "correct") - row.buf,
	      "a marked row: the mark in the id's column, the columns still line up: %s", row.buf);
	sb_reset(&rs);
	report_results(&st, state_cand(&st, 2), &rs);
	CHECK(strstr(rs.buf, "verdict   correct, 2x (1 ms)\nPINNED") != NULL,
	      "Results: the verdict with the speedup and time first, then the steering: %s",
	      rs.buf);
	sb_reset(&rs);
	report_results(&st, state_cand(&st, 3), &rs);
	CHECK(strstr(rs.buf, "BANNED    never a parent"), "Results say banned: %s", rs.buf);
	sb_reset(&rs);
	report_results(&st, state_cand(&st, 1), &rs);
	const char *pv = strstr(rs.buf, "verdict"), *pt = strstr(rs.buf, "time      median 2 ms");
	const char *pc = strstr(rs.buf,
	                        "compile   0.30 s (the device code only: the host object kept)"),
	           *pcmd = strstr(rs.buf, "command   cc");
	CHECK(pv == rs.buf && pt && pc && pcmd && pv < pt && pt < pc && pc < pcmd &&
	          !strchr(pcmd, '\n')[1],
	      "Results: verdict, time, then the compile, the compiler's command last: %s", rs.buf);
	sb_reset(&rs);
	report_compare(&st, state_cand(&st, 1), state_cand(&st, 2), &rs);
	CHECK(strstr(rs.buf, "A/B       #2 against #1: 1.9x over 20 interleaved pairs, faster in "
	                     "19; won"),
	      "compare shows the A/B that was run: %s", rs.buf);
	sb_reset(&rs);
	report_compare(&st, state_cand(&st, 1), state_cand(&st, 3), &rs);
	CHECK(strstr(rs.buf, "A/B       none run between #1 and #3"), "... or that none was: %s",
	      rs.buf);
	struct ui u;
	memset(&u, 0, sizeof u);
	popview_init(&u.pv);
	u.st = &st;
	popview_refresh(&u.pv, &st);
	CHECK(ui_follow_target(&u, UI_FOLLOW_NEWEST) == 4, "follow: the newest is #4");
	CHECK(ui_follow_target(&u, UI_FOLLOW_BEST) == 2, "follow: the best is #2 (%d)",
	      ui_follow_target(&u, UI_FOLLOW_BEST));
	u.follow = UI_FOLLOW_NEWEST;
	CHECK(ui_following(&u), "a running search: the follow mode acts");
	fold_event(&st,
	           "{\"type\":\"search_finished\",\"reason\":\"round 3 made no new candidate: "
	           "nothing new to try\",\"ts\":1004}",
	           NULL);
	CHECK(!ui_following(&u), "... not once it ended (unless f turned it on)");
	u.followAlways = 1;
	CHECK(ui_following(&u), "... f turned it on: it acts");
	popview_free(&u.pv);
	state_free(&st);
	sb_free(&h);
	sb_free(&row);
	sb_free(&rs);
	char stage[64];
	CHECK(
	    !strcmp(ui_stage_text("full shapes", 4, stage, sizeof stage), "full shapes, trial 4") &&
	        !strcmp(ui_stage_text("timing", 12, stage, sizeof stage), "timing, run 12") &&
	        !strcmp(ui_stage_text("compiling", -1, stage, sizeof stage), "compiling"),
	    "stage labels say what the number counts: %s", stage);
	CHECK(!strcmp(pane_ideas_status_short("pending"), "pend") &&
	          !strcmp(pane_ideas_status_short("implemented"), "impl") &&
	          !strcmp(pane_ideas_status_short("accepted"), "acc") &&
	          !strcmp(pane_ideas_status_short("rejected"), "rej"),
	      "the Ideas pane's short statuses map one for one to the words");
	CHECK(!strcmp(pane_ideas_status_short("nothing new"), "none") &&
	          !strcmp(pane_ideas_status_short("duplicate"), "dup"),
	      "... made nothing and duplicate too (none, dup)");
	/* the title bar: what matters most is never cut first */
	const char *az[] = {" kloop",
	                    "softmax (host)",
	                    "search finished, round 8",
	                    "7 candidates, 7 correct",
	                    "0 jobs",
	                    "best 1.2x (#5)",
	                    "path"};
	const int prio[] = {0, 1, 0, 4, 2, 2, 5};
	char t[256];
	screen_fit_fields(az, prio, 7, 80, t, sizeof t);
	CHECK(!strcmp(t, " kloop | softmax (host) | search finished, round 8 | 0 jobs | best 1.2x "
	                 "(#5)"),
	      "80 columns: the counts and the path go, the search state stays: '%s'", t);
	screen_fit_fields(az, prio, 7, 200, t, sizeof t);
	CHECK(strstr(t, "7 candidates") && strstr(t, "| path"), "200 columns: all of it: '%s'", t);
	screen_fit_fields(az, prio, 7, 30, t, sizeof t);
	CHECK(!strcmp(t, " kloop | search finished, round 8"), "30 columns: the search state: '%s'",
	      t);

	/* wrapping: at spaces, continuation lines indented, tabs as 4 columns */
	char *wr =
	    pane_wrap("          output 0 mismatch: 12 of 4096 elements differ, max abs error "
	              "1.5 at index [3, 17]\n\tx\n",
	              30);
	int tooWide = 0;
	for (int i = 0, n = pane_count_lines(wr); i < n; i++) {
		size_t k;
		const char *l = pane_line(wr, i, &k);
		tooWide |= screen_width(l, k) > 30;
	}
	CHECK(!tooWide && strstr(wr, "          output 0 mismatch:\n") &&
	          strstr(wr, "\n            12 of 4096\n") &&
	          strstr(wr, "\n            elements differ,\n") && strstr(wr, "\n    x\n"),
	      "pane_wrap wraps at spaces (no word cut), indents the rest, expands tabs:\n%s", wr);
	free(wr);
	test_find();
	compile_note();
	return check_done();
}
