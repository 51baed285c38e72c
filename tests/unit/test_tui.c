/*
 * test_tui.c - the TUI's pure parts: the layout of the panes at the sizes
 * a terminal may have (tui/screen.c), the best-speedup series of the chart
 * (tui/chart.c), and the table rows and results report (tui/report.c).
 */
#include <cJSON.h>
#include <string.h>

#include "check.h"
#include "panes.h"
#include "report.h"
#include "screen.h"

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

static void event(struct state *st, const char *json)
{
	char err[KL_ERRLEN];
	cJSON *e = cJSON_Parse(json);
	state_apply(st, e, err);
	cJSON_Delete(e);
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
			ok &= inside(&r[i], w, h) && r[i].h >= 4 && r[i].w >= 20;
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
		screen_layout(w, h, UI_CODE, r);
		CHECK(r[UI_CODE].w == w && r[UI_CODE].h == h - 2 && r[UI_POPULATION].h == 0,
		      "%dx%d: a zoomed pane takes the body, the others none", w, h);
	}
	struct ui_rect r[UI_NRECTS];
	screen_layout(10, 3, -1, r);
	int none = 1;
	for (int i = 0; i < UI_NRECTS; i++)
		none &= r[i].h == 0;
	CHECK(none, "a screen too small to hold panes gets none (no negative sizes)");

	struct state st;
	state_init(&st);
	event(&st, "{\"type\":\"session_started\",\"task\":\"t\",\"ts\":1000}");
	double v[10];
	CHECK(chart_series(&st, 1010, 10, v) == 0 && v[9] == 0, "no candidate: an empty chart");
	event(&st, "{\"type\":\"candidate_added\",\"id\":1,\"source\":\"x\",\"ts\":1000}");
	event(&st, "{\"type\":\"candidate_added\",\"id\":2,\"source\":\"x\",\"ts\":1000}");
	event(&st, "{\"type\":\"candidate_added\",\"id\":3,\"source\":\"x\",\"ts\":1000}");
	event(&st, "{\"type\":\"eval_finished\",\"candidate\":1,\"ts\":1002,\"result\":{\"status\":"
	           "\"correct\","
	           "\"speedup\":1.5}}");
	event(&st, "{\"type\":\"eval_finished\",\"candidate\":2,\"ts\":1004,\"result\":{\"status\":"
	           "\"incorrect\","
	           "\"speedup\":9}}");
	event(&st, "{\"type\":\"eval_finished\",\"candidate\":3,\"ts\":1007,\"result\":{\"status\":"
	           "\"correct\","
	           "\"speedup\":3}}");
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
	return check_done();
}
