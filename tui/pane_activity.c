/*
 * pane_activity.c - the Activity pane: the jobs in flight with their
 * stage and elapsed time (compiling, checking, timing; LLM requests with
 * their token counts), the workers (host, device, state, job, jobs done,
 * utilisation), then the newest lines of the activity log; in a replay the
 * log is the journal's events up to the one shown, then the app's lines.
 */
#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobs.h"
#include "panes.h"
#include "screen.h"

/* the lines the pane shows, jobs first; returns how many (at most max) */
static int activity_lines(struct ui *u, char lines[][256], int *roles, int max)
{
	int n = 0;
	double now = now_s();
	if (u->setupT0 && n < max) {
		/* the setup, a step of its own: the first candidates wait for it */
		snprintf(lines[n], 256,
		         "setup: the worker starts, compiles and times the reference  %.1f s",
		         now - u->setupT0);
		roles[n++] = SR_BUSY;
	}
	const struct driver_job *aj = NULL;
	int nj = u->lv ? driver_evals(u->lv, &aj) : 0;
	for (int i = 0; i < nj && n < max; i++) {
		const struct driver_job *j = &aj[i];
		const struct cand *c = state_cand(u->st, j->cand);
		char stage[64], note[96];
		snprintf(lines[n], 256, "#%-4d %-14.14s %s  %.1f s%s", j->cand, c ? c->zName : "?",
		         ui_stage_text(j->zStage, j->k, stage, sizeof stage), now - j->tStart,
		         state_compile_note(u->st, c, j->zStage, note, sizeof note));
		roles[n++] = SR_BUSY;
	}
	/* the LLM requests: streaming, waiting for the reply or for a parent */
	char scratch[256];
	int nr = u->lv ? jobs_request_lines(u->lv, 0, scratch, sizeof scratch) : 0;
	for (int i = 0; i < nr && n < max; i++) {
		jobs_request_lines(u->lv, i, lines[n], 256);
		roles[n++] = SR_BUSY;
	}
	/* the workers: where the evaluations run (issue 13) */
	int nw = jobs_worker_line(u->lv, 0, scratch, sizeof scratch);
	for (int i = 0; i < nw && n < max; i++) {
		jobs_worker_line(u->lv, i, lines[n], 256);
		roles[n++] = SR_NORMAL;
	}
	if (u->rp && n < max) {
		char d[200];
		replay_describe(u->rp, u->rp->k - 1, d, sizeof d);
		snprintf(lines[n], 256, "replay: event %d of %d: %s", u->rp->k, u->rp->nEv,
		         u->rp->k ? d : "(start)");
		roles[n++] = SR_BUSY;
	}
	return n;
}

/* the lines of the log: in a replay, its first k events described as
 * `kloop replay` lists them, then the app's own lines (said now, after
 * them); else the app's lines */
static int log_count(const struct ui *u)
{
	return u->nLog + (u->rp ? u->rp->k : 0);
}

static const char *log_line(const struct ui *u, int e, char *buf, size_t n)
{
	int k = u->rp ? u->rp->k : 0;
	if (e >= k)
		return u->azLog[e - k];
	char d[240];
	replay_describe(u->rp, e, d, sizeof d);
	snprintf(buf, n, "%3d %s", e + 1, d);
	return buf;
}

void pane_activity_draw(struct ui *u, const struct ui_rect *r, int focused)
{
	if (r->h < 3)
		return;
	int rows = r->h - 2, w = r->w - 2;
	char lines[16][256];
	int roles[16];
	int nJobs = activity_lines(u, lines, roles, rows < 16 ? rows : 16);
	char title[96];
	int nj = jobs_count(u->lv);
	snprintf(title, sizeof title, "Activity - %d job%s%s", nj, nj == 1 ? "" : "s",
	         nj ? " (:cancel ID)" : "");
	screen_frame(r, title, focused);
	for (int i = 0; i < nJobs; i++)
		screen_put(r->y + 1 + i, r->x + 1, w, lines[i], screen_attr(roles[i]));
	/* the log, newest at the bottom, each line wrapped to the pane (an error
	 * is read whole); actTop scrolls back by lines of the log */
	int nAll = log_count(u);
	if (u->actTop > nAll - 1)
		u->actTop = nAll - 1;
	if (u->actTop < 0)
		u->actTop = 0;
	int y = r->y + 1 + rows; /* one past the last row, filled upwards */
	for (int e = nAll - 1 - u->actTop; e >= 0 && y > r->y + 1 + nJobs; e--) {
		char ev[256];
		const char *l = log_line(u, e, ev, sizeof ev);
		int role = strstr(l, "correct") && !strstr(l, "incorrect") ? SR_GOOD
		           : strstr(l, "error") || strstr(l, "incorrect") || strstr(l, "crashed") ||
		                   strstr(l, "timeout") || strstr(l, "cancelled")
		               ? SR_BAD
		               : SR_NORMAL;
		char *wr = pane_wrap(l, w);
		int n = pane_count_lines(wr);
		for (int i = n - 1; i >= 0 && y > r->y + 1 + nJobs; i--) {
			size_t len;
			const char *line = pane_line(wr, i, &len);
			y--;
			screen_putn(y, r->x + 1, w, line, len, screen_attr(role));
		}
		free(wr);
	}
}

int pane_activity_key(struct ui *u, int key)
{
	/* scrolling back through the log: up goes back in time */
	int back = u->actTop;
	int rows = u->aRect[UI_ACTIVITY].h - 2;
	switch (key) {
	case KEY_UP:
	case 'k':
		back++;
		break;
	case KEY_DOWN:
	case 'j':
		back--;
		break;
	case KEY_PPAGE:
		back += rows;
		break;
	case KEY_NPAGE:
		back -= rows;
		break;
	case KEY_END:
	case 'G':
		back = 0;
		break;
	default:
		return 0;
	}
	int nAll = log_count(u);
	u->actTop = back < 0 ? 0 : back > nAll ? nAll : back;
	return 1;
}
