/*
 * pane_activity.c - the Activity pane: the jobs in flight with their
 * stage and elapsed time (compiling, checking, timing; LLM requests with
 * their token counts), then the newest lines of the activity log.
 */
#include <curses.h>
#include <stdio.h>
#include <string.h>

#include "panes.h"
#include "screen.h"

/* the lines the pane shows, jobs first; returns how many (at most max) */
static int activity_lines(struct ui *u, char lines[][256], int *roles, int max)
{
	int n = 0;
	double now = now_s();
	for (int i = 0; u->lv && i < u->lv->nJob && n < max; i++) {
		const struct live_job *j = &u->lv->aJob[i];
		const struct cand *c = state_cand(u->st, j->cand);
		char k[16] = "";
		if (j->k > 0)
			snprintf(k, sizeof k, " %d", j->k);
		snprintf(lines[n], 256, "#%-4d %-14.14s %s%s  %.1f s", j->cand, c ? c->zName : "?",
		         j->zStage, k, now - j->tStart);
		roles[n++] = SR_BUSY;
	}
	if (u->lv) {
		const struct live_stream *a;
		int ns = live_streams(u->lv, &a);
		for (int i = 0; i < ns && n < max; i++) {
			snprintf(lines[n], 256,
			         "LLM request %d: streaming, %ld characters (~%ld tokens)  %.1f s",
			         a[i].request, a[i].nChars, (a[i].nChars + 3) / 4,
			         now - a[i].tStart);
			roles[n++] = SR_BUSY;
		}
		int busy = live_llm_busy(u->lv);
		if (busy && !ns && n < max) {
			snprintf(lines[n], 256,
			         "LLM: %d step%s waiting (a request or an evaluation)", busy,
			         busy == 1 ? "" : "s");
			roles[n++] = SR_BUSY;
		}
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

void pane_activity_draw(struct ui *u, const struct ui_rect *r, int focused)
{
	if (r->h < 3)
		return;
	int rows = r->h - 2, w = r->w - 2;
	char lines[16][256];
	int roles[16];
	int nJobs = activity_lines(u, lines, roles, rows < 16 ? rows : 16);
	char title[96];
	snprintf(title, sizeof title, "Activity - %d job%s", u->lv ? u->lv->nJob : 0,
	         u->lv && u->lv->nJob == 1 ? "" : "s");
	screen_frame(r, title, focused);
	for (int i = 0; i < nJobs; i++)
		screen_put(r->y + 1 + i, r->x + 1, w, lines[i], screen_attr(roles[i]));
	/* the log, newest at the bottom; actTop scrolls back */
	int room = rows - nJobs;
	if (u->actTop > u->nLog - room)
		u->actTop = u->nLog - room;
	if (u->actTop < 0)
		u->actTop = 0;
	int first = u->nLog - room - u->actTop;
	if (first < 0)
		first = 0;
	for (int i = 0; i < room && first + i < u->nLog; i++) {
		const char *l = u->azLog[first + i];
		int role = strstr(l, "correct") && !strstr(l, "incorrect") ? SR_GOOD
		           : strstr(l, "error") || strstr(l, "incorrect") || strstr(l, "crashed") ||
		                   strstr(l, "timeout")
		               ? SR_BAD
		               : SR_NORMAL;
		screen_put(r->y + 1 + nJobs + i, r->x + 1, w, l, screen_attr(role));
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
	u->actTop = back < 0 ? 0 : back > u->nLog ? u->nLog : back;
	return 1;
}
