/*
 * app_cmd.c - the TUI's commands: a command line run (typed, or made from a
 * key) and its end (at once, or when the editor it waited for ended), the
 * message line that answers it, what the work it started came to and the
 * search's end, said when they come; asking to quit.  The rest of the app
 * calls it; it calls none of them (a command reaches the app through the
 * hooks app.c fills).
 */
#include "app_priv.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "jobs.h"
#include "search.h"

void app_message(struct app *a, int bError, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(a->zMsg, sizeof a->zMsg, fmt, ap);
	va_end(ap);
	for (char *p = a->zMsg; *p; p++)
		if (*p == '\n' || *p == '\t')
			*p = ' ';
	a->msgErr = bError;
	a->dirty = 1;
}

/* the pending ideas of a search that waits for a person at its gate (0:
 * it does not wait) */
int app_gate_waiting(const struct app *a)
{
	if (!a->f.search || !search_waiting(a->f.search))
		return 0;
	int n = 0;
	for (int i = 0; i < a->u.st->nIdea; i++)
		n += a->u.st->aIdea[i].status == IDEA_PENDING;
	return n ? n : 1;
}

void app_request_quit(struct app *a, int bForce)
{
	int n = jobs_count(a->u.lv), nReq = n - (a->u.lv ? driver_jobs(a->u.lv) : 0);
	int nGate = app_gate_waiting(a);
	if (!bForce && n > 0) {
		a->askQuit = 1;
		app_message(a, 0, "%d job%s running%s; quit anyway? (y/n)", n,
		            n == 1 ? " is" : "s are", nReq ? " (LLM requests are cancelled)" : "");
		return;
	}
	if (!bForce && nGate) {
		/* a search waiting for a person is work in progress too */
		a->askQuit = 1;
		app_message(
		    a, 0,
		    "quit? the search waits at the human gate: %d idea%s pending (y/n; Ideas: a "
		    "accept, r reject)",
		    nGate, nGate == 1 ? "" : "s");
		return;
	}
	a->quit = 1;
}

/* the work that jobs do: when the last one ends, the message line says
 * what it came to instead of what was asked (which would go stale) */
void app_work_check(struct app *a)
{
	int n = jobs_count(a->u.lv);
	if (n && !a->workBusy) {
		a->workBusy = 1;
	} else if (!n && a->workBusy) {
		a->workBusy = 0;
		strbuf sb = STRBUF_INIT;
		int nEvals = driver_finished(a->u.lv) - a->workEvals;
		if (jobs_summary(a->u.st, a->workFrom, nEvals, &sb)) {
			ui_log(&a->u, "done: %s", sb.buf);
			if (!a->msgErr)
				app_message(a, 0, "done: %s", sb.buf);
		}
		sb_free(&sb);
		a->zWork[0] = 0;
		a->dirty = 1;
	}
}

/* the end of a search is said in Activity, with its reason (the message
 * line goes stale; the header has room for its short form only) */
void app_search_check(struct app *a)
{
	const struct state_search *ss = &a->u.st->search;
	int now = ss->started ? (int)ss->state : SEARCH_NONE;
	if (now != a->searchWas && search_state_ended(now) && search_state_live(a->searchWas)) {
		ui_log(&a->u, "search %s after round %d: %s", search_state_name(now), ss->round,
		       ss->zWhy && *ss->zWhy ? ss->zWhy : "no reason was given");
		a->dirty = 1;
	}
	a->searchWas = now;
}

/* a command has come to its end (after the editor, where it waited for
 * it; before: the candidates there were when it started): what it started
 * is the work under way, and a candidate it made by hand is selected */
void app_line_done(struct app *a, int before)
{
	const struct state *st;
	if (a->u.lv && jobs_count(a->u.lv) && !a->msgErr)
		snprintf(a->zWork, sizeof a->zWork, "%s", a->zMsg);
	if (a->u.lv)
		app_work_check(a);
	app_search_check(a);
	st = a->u.st;
	/* a candidate made by hand is selected, to watch it being benchmarked */
	if (a->u.lv && st->nCand > before && !strcmp(st->aCand[st->nCand - 1].zOrigin, "human"))
		ui_select(&a->u, st->aCand[st->nCand - 1].id);
	a->keyDirty = 1;
}

void app_run_line(struct app *a, const char *zLine)
{
	const struct state *st = a->u.st;
	int before = st ? st->nCand : 0;
	a->f.selCand = a->u.selCand;
	a->zMsg[0] = 0;
	if (a->u.lv && !a->workBusy) {
		a->workFrom = state_next_id(st);
		a->workEvals = driver_finished(a->u.lv);
	}
	actions_run_line(&a->f, zLine);
	if (actions_editing(&a->f))
		a->editBefore = before; /* it goes on when the editor ends */
	else
		app_line_done(a, before);
}

/* run a command made from a key (so that keys and commands share one path) */
void app_run_fmt(struct app *a, const char *fmt, ...)
{
	char line[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	app_run_line(a, line);
}
