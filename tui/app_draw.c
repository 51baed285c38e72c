/*
 * app_draw.c - the TUI's screen: the title bar (what fits, the least
 * important dropped first), the panes, the command and message line.
 */
#include "app_priv.h"

#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobs.h"
#include "panes.h"
#include "replay.h"
#include "report.h"
#include "screen.h"
#include "search.h"
#include "status.h"

/* ---- drawing ---- */

/* n and the noun, plural unless n is 1: "1 candidate", "2 candidates" */
static const char *count_of(char *buf, size_t size, int n, const char *zNoun)
{
	snprintf(buf, size, "%d %s%s", n, zNoun, n == 1 ? "" : "s");
	return buf;
}

/* a path for the title bar: ~ for the home directory; when it does not fit
 * in room columns, …/ and its file name */
static void short_path(const char *zPath, int room, char *buf, size_t n)
{
	const char *home = getenv("HOME");
	size_t h = home ? strlen(home) : 0;
	if (h > 1 && !strncmp(zPath, home, h) && zPath[h] == '/')
		snprintf(buf, n, "~%s", zPath + h);
	else
		snprintf(buf, n, "%s", zPath);
	if ((int)strlen(buf) > room) {
		const char *b = strrchr(zPath, '/');
		snprintf(buf, n, "%s%s", screen_utf8() ? "\xe2\x80\xa6" : "...", b ? b : zPath);
	}
}

/* the search's fields for the title bar: its state and round (with the
 * short reason it ended), and the rest of its status line */
static void search_fields(const struct state *st, int bWhy, char *head, size_t nHead, char *rest,
                          size_t nRest)
{
	char ss[256];
	search_status_state(st, ss, sizeof ss); /* "search S, round R..., N cands, ..." */
	head[0] = rest[0] = 0;
	if (!ss[0])
		return;
	const char *r = strstr(ss, "round ");
	const char *cut = r ? strstr(r, ", ") : NULL;
	snprintf(head, nHead, "%.*s", cut ? (int)(cut - ss) : (int)strlen(ss), ss);
	if (cut)
		snprintf(rest, nRest, "%s", cut + 2);
	const char *why = st->search.zWhy;
	if (bWhy && search_state_ended(st->search.state) && why && *why) {
		/* "round 8 made no new candidate: nothing new to try": the part
		 * after the last colon; Activity and `:search status` say it whole */
		const char *c = strrchr(why, ':');
		size_t k = strlen(head);
		snprintf(head + k, nHead - k, " (%s)", c && c[1] == ' ' ? c + 2 : why);
	}
}

/* the best with its caveat in short, where the whole one leaves out
 * something else: "best 2.65x (#1, unconfirmed)", or bare ("best 2.65x
 * (#1)", and always narrower than 100 columns; the Population's marks and
 * Activity keep the caveat); 1 when it had a caveat to shorten */
static int best_short(const struct state_best_info *bi, int bare, char *buf, size_t n)
{
	if (!bi->best || (!bi->tie && !bi->abTie))
		return 0;
	snprintf(buf, n, "best %.3gx (#%d%s)", bi->best->speedup, bi->best->id,
	         bare || COLS < 100 ? ""
	         : bi->tie          ? ", unconfirmed"
	                            : ", A/B: within noise");
	return 1;
}

/* the title's fields fitted into COLS (screen_fit_fields()), the best's
 * caveat shortened, then left out, while the fields of priority want
 * would not fit (the counts stay in view); the priority kept */
static int fit_title(const char *const *az, const int *prio, int n, int want,
                     const struct state_best_info *bi, char *bestz, size_t nBest, char *t,
                     size_t nt)
{
	int keep = screen_fit_fields(az, prio, n, COLS, t, nt);
	for (int bare = 0; keep < want && bare < 2; bare++)
		if (best_short(bi, bare, bestz, nBest))
			keep = screen_fit_fields(az, prio, n, COLS, t, nt);
	return keep;
}

static void draw_title(struct app *a)
{
	const struct state *st = a->u.st;
	char t[1024], nc[32], jobs[32];
	int nOk = 0;
	for (int i = 0; i < st->nCand; i++)
		nOk += st->aCand[i].status == STATUS_CORRECT;
	char bestz[128];
	report_best_text(st, bestz, sizeof bestz);
	struct state_best_info bi = state_best_info(st);
	count_of(nc, sizeof nc, st->nCand, "candidate");
	char cands[64], head[256], rest[256];
	snprintf(cands, sizeof cands, "%s, %d correct", nc, nOk);
	search_fields(st, 1, head, sizeof head, rest, sizeof rest);
	int nGate = a->u.lv ? app_gate_waiting(a) : 0;
	if (nGate) /* running, but nothing moves until a person decides */
		snprintf(head + strlen(head), sizeof head - strlen(head), ", waits at the gate");
	if (a->u.rp) {
		/* before the first event the journal has not said its task yet */
		const char *b = strrchr(a->u.rp->zPath, '/');
		char what[256], ev[64];
		if (st->zTask)
			snprintf(what, sizeof what, "%s (%s)", st->zTask,
			         st->zBackend ? st->zBackend : "backend not said yet");
		else
			snprintf(what, sizeof what, "%s", b ? b + 1 : a->u.rp->zPath);
		snprintf(ev, sizeof ev, "event %d of %d", a->u.rp->k, a->u.rp->nEv);
		const char *az[] = {" kloop replay", what, ev,   cands,
		                    bestz,           head, rest, "[ ] step, c continue, ? help"};
		/* the task, the search's state and the best at every event (issue
		 * 39): shortened (the reason it ended, the best's caveat) rather
		 * than left out */
		const int prio[] = {0, 0, 0, 3, 0, 0, 4, 5};
		fit_title(az, prio, 8, 3, &bi, bestz, sizeof bestz, t, sizeof t);
		if (screen_width(t, strlen(t)) > COLS) {
			search_fields(st, 0, head, sizeof head, rest, sizeof rest);
			best_short(&bi, 1, bestz, sizeof bestz);
			screen_fit_fields(az, prio, 8, COLS, t, sizeof t);
		}
		if (screen_width(t, strlen(t)) > COLS) {
			/* narrower still: the task without its backend, the event as
			 * K/N, the state before the best */
			if (st->zTask)
				snprintf(what, sizeof what, "%s", st->zTask);
			snprintf(ev, sizeof ev, "%d/%d", a->u.rp->k, a->u.rp->nEv);
			const char *az2[] = {" kloop replay", what, ev, head, bestz};
			const int prio2[] = {0, 0, 0, 0, 0};
			screen_fit_fields(az2, prio2, 5, COLS, t, sizeof t);
		}
	} else {
		int nj = jobs_count(a->u.lv);
		count_of(jobs, sizeof jobs, nj, "job");
		char task[256], path[512];
		snprintf(task, sizeof task, "%s (%s)", st->zTask ? st->zTask : "?",
		         driver_backend(a->u.lv));
		/* what matters most stays on a narrow screen: the search's state
		 * (never cut first), then the best, then the task and the jobs,
		 * the rest of the search's status, the counts, the path (…/name,
		 * or left out: the log has it) */
		const char *az[] = {" kloop", task, head, cands, jobs, bestz, rest, path};
		const int prio[] = {0, 3, 0, 5, 3, 2, 4, 6};
		path[0] = 0;
		/* the reason an ended search gives, where it leaves room for the
		 * best and the jobs (Activity and `:search status` say it whole) */
		int keep = fit_title(az, prio, 7, 5, &bi, bestz, sizeof bestz, t, sizeof t);
		if (keep < 3) {
			search_fields(st, 0, head, sizeof head, rest, sizeof rest);
			if (nGate)
				snprintf(head + strlen(head), sizeof head - strlen(head),
				         ", waits at the gate");
			screen_fit_fields(az, prio, 7, COLS, t, sizeof t);
		}
		int used = screen_width(t, strlen(t)) + 3;
		short_path(driver_path(a->u.lv), COLS - used, path, sizeof path);
		if (screen_width(path, strlen(path)) > COLS - used)
			path[0] = 0;
		screen_fit_fields(az, prio, 8, COLS, t, sizeof t);
	}
	screen_fill(0, 0, COLS, screen_attr(SR_TITLE));
	screen_put(0, 0, COLS, t, screen_attr(SR_TITLE));
}

void app_draw(struct app *a)
{
	if (a->editing)
		return;
	double t0 = now_s();
	erase();
	screen_layout(COLS, LINES, a->u.zoom ? a->u.focus : -1, a->u.aRect);
	if (a->u.zoom && a->u.aRect[a->u.focus].h == 0)
		a->u.zoom = 0, screen_layout(COLS, LINES, -1, a->u.aRect);
	struct ui *u = &a->u;
	ui_follow(u); /* the newest or the best, while a search runs */
	draw_title(a);
	if (u->aRect[UI_POPULATION].h)
		pane_population_draw(u, &u->aRect[UI_POPULATION], u->focus == UI_POPULATION);
	if (u->aRect[UI_IDEAS].h)
		pane_ideas_draw(u, &u->aRect[UI_IDEAS], u->focus == UI_IDEAS);
	if (u->aRect[UI_CODE].h)
		pane_code_draw(u, &u->aRect[UI_CODE], u->focus == UI_CODE);
	if (u->aRect[UI_RESULTS].h)
		pane_results_draw(u, &u->aRect[UI_RESULTS], u->focus == UI_RESULTS);
	if (u->aRect[UI_ACTIVITY].h)
		pane_activity_draw(u, &u->aRect[UI_ACTIVITY], u->focus == UI_ACTIVITY);
	if (u->aRect[UI_CHART].h)
		chart_draw(u, &u->aRect[UI_CHART]);
	if (u->zViewText)
		viewer_draw(u, LINES, COLS);
	int y = LINES - 1;
	if (a->cl.active) {
		cmdline_draw(&a->cl, y, COLS);
		curs_set(1);
	} else {
		curs_set(0);
		screen_fill(y, 0, COLS, 0);
		if (a->zMsg[0] && a->workBusy && a->zWork[0] && !strcmp(a->zMsg, a->zWork)) {
			/* the command's answer with how far its work has come */
			const struct state *st = u->st;
			int nNew = 0, nDone = 0;
			for (int i = 0; i < st->nCand; i++)
				if (st->aCand[i].id >= a->workFrom) {
					nNew++;
					nDone += status_finished(st->aCand[i].status);
				}
			int nj = jobs_count(u->lv);
			char line[1400];
			snprintf(line, sizeof line,
			         "%s - %d job%s running, %d new candidate%s, %d evaluated", a->zMsg,
			         nj, nj == 1 ? "" : "s", nNew, nNew == 1 ? "" : "s", nDone);
			screen_put(y, 0, COLS, line, A_BOLD);
		} else if (a->zMsg[0])
			screen_put(y, 0, COLS, a->zMsg,
			           a->msgErr ? screen_attr(SR_BAD) | A_BOLD : A_BOLD);
		else if (u->zViewText)
			screen_put(y, 0, COLS,
			           "up/down scroll  q close  / find  n/N next/previous  w wrap",
			           screen_attr(SR_DIM));
		else if (u->focus == UI_CODE || u->focus == UI_RESULTS)
			/* a text view: `/` finds in it */
			screen_put(y, 0, COLS,
			           u->rp
			               ? "? help  q quit  Tab pane  [ ] step  c continue  / find  "
			                 "n/N next/previous  w wrap  : command"
			               : "? help  q quit  Tab pane  : command  / find  n/N "
			                 "next/previous  w wrap  d diff  up/down scroll",
			           screen_attr(SR_DIM));
		else
			/* help and quit first: a narrow screen cuts the others */
			screen_put(
			    y, 0, COLS,
			    u->rp ? "? help  q quit  Tab pane  [ ] step  c continue  / filter  "
			            ": command  up/down move"
			          : "? help  q quit  Tab pane  Enter zoom code  : command  / "
			            "filter  e edit  B bench  d diff  up/down move",
			    screen_attr(SR_DIM));
	}
	refresh();
	double t1 = now_s();
	if (a->stats) {
		fprintf(a->stats, "frame %.3f ms%s", (t1 - t0) * 1e3, a->keyAt ? "" : "\n");
		if (a->keyAt)
			fprintf(a->stats, " key %.3f ms\n", (t1 - a->keyAt) * 1e3);
		fflush(a->stats);
	}
	a->keyAt = 0;
	a->lastDraw = t1;
	a->dirty = a->keyDirty = 0;
}
