/*
 * app_keys.c - the TUI's keys: the command line, an answer to a question,
 * the global bindings, replay's, the focused pane's (ideas, candidates),
 * the mouse; the help page that lists them.
 */
#include "app_priv.h"

#include <curses.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "panes.h"
#include "replay.h"
#include "report.h"
#include "screen.h"
#include "search.h"
#include "syntax.h"

/* ---- keys ---- */

static void help_page(struct app *a)
{
	strbuf sb = STRBUF_INIT;
	sb_adds(
	    &sb,
	    "keys\n"
	    "  Tab / Shift-Tab     next / previous pane (1-5 pick one: population, ideas, code, "
	    "results, activity)\n"
	    "  up/down, j/k        move the selection or scroll; PgUp/PgDn, g/G, Home/End\n"
	    "  Enter               zoom the selected candidate's code (Enter again: the panes); "
	    "an idea's text\n"
	    "  e                   population: edit a copy of the candidate in $EDITOR (a new "
	    "human candidate)\n"
	    "  B                   population: benchmark the selected candidate again\n"
	    "  s / S               population: sort by the next column / reverse the order\n"
	    "  *                   select the best candidate\n"
	    "  f                   follow the newest candidate, the best, or nothing (on, "
	    "following the newest, while a search runs; moving the selection turns it off)\n"
	    "  R                   the search: start it, pause it, resume it\n"
	    "  d                   code: toggle the diff against the parent (by function, then by "
	    "line)\n"
	    "  a / e / r           ideas: accept / revise / reject the selected idea (the cursor "
	    "goes to the next pending one; a decided idea asks before it flips)\n"
	    "  /                   filter the population; in Code, Results or a page: find a "
	    "text, marked\n"
	    "  n / N               the next / previous match of the text found (round the end)\n"
	    "  w                   wrap the long lines of the Code pane and the pages, and back\n"
	    "  :                   the command line (Tab completes, up/down walk the history)\n"
	    "  z                   zoom the focused pane to the whole screen, and back\n"
	    "  mouse               click a pane to focus it, a row to select it; the wheel "
	    "scrolls\n"
	    "  Ctrl-L              redraw the screen\n"
	    "  ?                   this help\n"
	    "  q                   quit (asks while jobs run: evaluations and LLM requests, "
	    "or while a search waits at the human gate); Ctrl-C quits at once\n"
	    "  :cancel ID|rN|all   stop an evaluation, an LLM request (rN, as Activity lists it) "
	    "or everything\n"
	    "marks before a candidate's id (Results says them in words)\n"
	    "  ");
	sb_adds(&sb, report_mark_legend());
	sb_adds(&sb,
	        "\n"
	        "idea states (the same words in every pane)\n"
	        "  pending             proposed, waiting for a person (or the gate) to decide\n"
	        "  accepted, implemented, nothing new   to be implemented; a candidate has it; "
	        "none came of it\n"
	        "  rejected, duplicate never to be implemented; proposed again for its parent\n"
	        "an evaluation's stages (Population, Activity, Results: `now`)\n"
	        "  compiling           the candidate's code is compiled\n"
	        "  small shapes N      checked against the reference at small shapes, trial N\n"
	        "  full shapes N       checked at the task's shapes, trial N\n"
	        "  quick timing / timing N   timed, run N; a/b N: timed against the best, "
	        "pair N\n"
	        "  setup               the worker starts: the reference is compiled and timed, "
	        "baselines made (the first candidates wait for it)\n");
	if (a->u.rp)
		sb_adds(
		    &sb,
		    "replay\n"
		    "  left/right, [ ]     one event back / forward\n"
		    "  { }                 ten events back / forward\n"
		    "  < >                 the start / the end of the journal\n"
		    "  ( )                 a search's previous / next round (its parents chosen)\n"
		    "  c                   continue from this point as a new live session\n");
	sb_adds(&sb, "\ncommands (type : first)\n");
	commands_help(&sb, NULL, a->u.rp != NULL);
	viewer_open(&a->u, "help", sb.buf);
	sb_free(&sb);
}

static void focus_step(struct app *a, int d)
{
	for (int i = 0; i < UI_NPANES; i++) {
		a->u.focus = (a->u.focus + d + UI_NPANES) % UI_NPANES;
		if (a->u.zoom || a->u.aRect[a->u.focus].h > 0)
			return;
	}
}

static int pane_key(struct app *a, int key)
{
	switch (a->u.focus) {
	case UI_POPULATION:
		return pane_population_key(&a->u, key);
	case UI_IDEAS:
		return pane_ideas_key(&a->u, key);
	case UI_CODE:
		return pane_code_key(&a->u, key);
	case UI_RESULTS:
		return pane_results_key(&a->u, key);
	case UI_ACTIVITY:
		return pane_activity_key(&a->u, key);
	}
	return 0;
}

static void on_mouse(struct app *a)
{
	MEVENT me;
	if (getmouse(&me) != OK)
		return;
	for (int p = 0; p < UI_NPANES; p++) {
		const struct ui_rect *r = &a->u.aRect[p];
		if (r->h <= 0 || me.y < r->y || me.y >= r->y + r->h || me.x < r->x ||
		    me.x >= r->x + r->w)
			continue;
		a->u.focus = p;
		if (me.bstate & (BUTTON4_PRESSED | BUTTON5_PRESSED)) {
			for (int i = 0; i < 3; i++)
				pane_key(a, (me.bstate & BUTTON4_PRESSED) ? KEY_UP : KEY_DOWN);
			return;
		}
		int row = me.y - r->y - 1;
		if (p == UI_POPULATION)
			pane_population_click(&a->u, row);
		else if (p == UI_IDEAS)
			pane_ideas_click(&a->u, row);
		if (p == UI_POPULATION && (me.bstate & BUTTON1_DOUBLE_CLICKED))
			a->u.focus = UI_CODE;
		return;
	}
}

static void replay_step(struct app *a, int k)
{
	app_run_fmt(a, "goto %d", k < 0 ? 0 : k);
}

/* y or n to a question on the message line (quit, flip an idea); 1 when
 * one was asked and the key answered it */
static int on_answer(struct app *a, int key, int isKey)
{
	int yes = !isKey && (key == 'y' || key == 'Y');
	if (a->askQuit) {
		a->askQuit = 0;
		if (yes)
			a->quit = 1;
		else
			app_message(a, 0, "not quitting");
		return 1;
	}
	if (a->zAsk[0]) {
		char line[64];
		snprintf(line, sizeof line, "%s", a->zAsk);
		a->zAsk[0] = 0;
		if (yes) {
			app_run_line(a, line);
			if (a->askNext)
				a->u.selIdea = a->askNext;
		} else {
			app_message(a, 0, "nothing changed");
		}
		return 1;
	}
	return 0;
}

/* a key for the `:` or `/` line while it is open */
static void on_cmdline_key(struct app *a, wint_t wch, int isKey)
{
	enum cmdline_result r = cmdline_key(&a->cl, wch, isKey, actions_words, &a->f);
	if (r != CMDLINE_DONE)
		return;
	if (a->cl.kind == CMDLINE_FILTER) {
		char *line = xasprintf("filter %s", a->cl.buf);
		app_run_line(a, line);
		free(line);
	} else if (a->cl.kind == CMDLINE_SEARCH) {
		app_find_line(a, a->cl.buf);
	} else {
		app_run_line(a, a->cl.buf);
	}
}

/* `*`: the best candidate selected; the follow mode goes off unless it
 * follows the best (else it would move the selection away at once) */
static void jump_best(struct app *a)
{
	popview_refresh(&a->u.pv, a->u.st);
	int id = ui_follow_target(&a->u, UI_FOLLOW_BEST);
	if (!id) {
		app_message(a, 0, "no candidate ranks yet: the best is the fastest correct one");
		return;
	}
	if (popview_row(&a->u.pv, a->u.st, id) < 0) {
		app_message(a, 0, "the best, #%d, is not shown by the filter (/ changes it)", id);
		return;
	}
	ui_select(&a->u, id);
	if (a->u.follow != UI_FOLLOW_BEST)
		a->u.follow = UI_FOLLOW_OFF;
	a->u.focus = a->u.zoom ? a->u.focus : UI_POPULATION;
	app_message(a, 0, "the best: #%d%s", id,
	            a->u.follow == UI_FOLLOW_BEST ? "" : " (f follows the newest or the best)");
}

/* f: the follow mode, newest -> best -> off; turned on, it acts also when
 * no search runs */
static void follow_cycle(struct app *a)
{
	struct ui *u = &a->u;
	u->follow = ui_following(u)
	                ? (u->follow == UI_FOLLOW_NEWEST ? UI_FOLLOW_BEST : UI_FOLLOW_OFF)
	                : UI_FOLLOW_NEWEST;
	u->followAlways = u->follow != UI_FOLLOW_OFF;
	ui_follow(u);
	app_message(a, 0, "%s",
	            u->follow == UI_FOLLOW_NEWEST ? "following the newest candidate (f: the best)"
	            : u->follow == UI_FOLLOW_BEST ? "following the best candidate (f: off)"
	                                          : "not following (f: the newest)");
}

/* the keys that mean the same in every pane; 1 when key was one */
static int on_global_key(struct app *a, int key)
{
	switch (key) {
	case '\t':
		focus_step(a, 1);
		return 1;
	case ':':
		cmdline_open(&a->cl, CMDLINE_COMMAND, NULL, NULL);
		return 1;
	case '/': {
		/* (a text view's `/` finds a text: app_find_key()) the filter so
		 * far and a space: what is typed is one more term */
		const char *z = a->u.pv.zFilter;
		char *init = z && *z ? xasprintf("%s ", z) : xstrdup("");
		cmdline_open(&a->cl, CMDLINE_FILTER, init,
		             *init ? NULL
		                   : "filter the population: correct, origin=llm, speedup>1.5, "
		                     "idea~tile");
		free(init);
		return 1;
	}
	case '?':
		help_page(a);
		return 1;
	case 'q':
		app_request_quit(a, 0);
		return 1;
	case 'z':
		a->u.zoom = !a->u.zoom;
		return 1;
	case '*':
		jump_best(a);
		return 1;
	case 'f':
		follow_cycle(a);
		return 1;
	case 'R': /* the search: run (start), pause, resume */
		if (a->u.lv) {
			const struct state_search *ss = &a->u.st->search;
			app_run_line(a, !ss->started || ss->state == SEARCH_NONE ? "search start"
			                : ss->state == SEARCH_RUNNING            ? "search pause"
			                                                         : "search resume");
		}
		return 1;
	case 12: /* Ctrl-L */
		clearok(curscr, TRUE);
		return 1;
	case '1':
	case '2':
	case '3':
	case '4':
	case '5':
		/* picking a pane shows the panes with it focused */
		a->u.focus = key - '1';
		a->u.zoom = 0;
		return 1;
	}
	return 0;
}

/* a replay's keys: step through the journal; 1 when key was one */
static int on_replay_key(struct app *a, int key)
{
	static const struct {
		int key, d;
	} steps[] = {{'[', -1}, {']', 1}, {'{', -10}, {'}', 10}}; /* events back / forward */
	int k = a->u.rp->k;
	for (size_t i = 0; i < sizeof steps / sizeof *steps; i++)
		if (key == steps[i].key) {
			replay_step(a, k + steps[i].d);
			return 1;
		}
	switch (key) {
	case '<':
		replay_step(a, 0);
		return 1;
	case '>':
		replay_step(a, a->u.rp->nEv);
		return 1;
	case 'c':
		app_run_line(a, "continue");
		return 1;
	case '(': /* a search's previous / next round (after its parents_chosen) */
	case ')': {
		int i = replay_find(a->u.rp, key == ')' ? k : k - 3, key == ')' ? 1 : -1,
		                    "round_started");
		if (i >= 0)
			replay_step(a, i + 2);
		return 1;
	}
	}
	return 0;
}

/* idea d's status for a sentence ("idea 4 is ..."): "accepted", with the
 * word of the panes after it where that differs ("accepted (nothing new)") */
static const char *idea_said(const struct state *st, const struct state_idea *d, char *buf,
                             size_t n)
{
	const char *z = idea_status_name(d->status), *w = state_idea_word(st, d);
	if (strcmp(z, w))
		snprintf(buf, n, "%s (%s)", z, w);
	else
		snprintf(buf, n, "%s", z);
	return buf;
}

/* a, e, r and Enter on the Ideas pane: about the selected idea */
static void on_idea_key(struct app *a, int k)
{
	char said[64];
	const struct state_idea *d = pane_ideas_selected(&a->u);
	if (!d) {
		app_message(a, 0, "no idea is selected: `:ideas 3` asks the LLM for three");
	} else if (k == KEY_ENTER) {
		strbuf sb = STRBUF_INIT;
		struct idea_why why = state_idea_why(a->u.st, d);
		sb_addf(&sb, "idea %d: %s\n\ncategory  %s\nstatus    %s%s%s%s\norigin    %s\n",
		        d->id, d->zTitle, d->zCategory, state_idea_word(a->u.st, d),
		        d->edited ? " (revised)" : "", *why.z ? ": " : "", why.z, d->zOrigin);
		if (d->parent)
			sb_addf(&sb, "for       candidate %d\n", d->parent);
		sb_addf(&sb, "\n%s\n", d->zDescription);
		viewer_open(&a->u, "idea", sb.buf);
		sb_free(&sb);
	} else {
		const char *cmd = k == 'a' ? "accept" : k == 'e' ? "revise" : "reject";
		/* the cursor goes to the next pending idea, not with the idea
		 * that moved down the list; a decided idea is not flipped by
		 * one stray key */
		int id = d->id, next = k == 'e' ? id : pane_ideas_next_pending(&a->u, id);
		if (next == id || !next)
			next = 0;
		int flip = (k == 'r' && d->status != IDEA_REJECTED && d->status != IDEA_PENDING) ||
		           (k == 'a' && d->status == IDEA_REJECTED);
		if (flip) {
			snprintf(a->zAsk, sizeof a->zAsk, "%s %d", cmd, id);
			a->askNext = next;
			app_message(a, 0, "idea %d is %s; %s it? (y/n)", id,
			            idea_said(a->u.st, d, said, sizeof said), cmd);
			return;
		}
		if (k != 'e' && d->status == (k == 'a' ? IDEA_ACCEPTED : IDEA_REJECTED)) {
			app_message(a, 0, "idea %d is %s already", id,
			            idea_said(a->u.st, d, said, sizeof said));
			return;
		}
		app_run_fmt(a, "%s %d", cmd, id);
		if (next)
			a->u.selIdea = next;
	}
}

/* Enter, e, B and d about the selected candidate, from any pane that did
 * not use them */
static void on_cand_key(struct app *a, int k)
{
	const struct cand *c = ui_selected(&a->u);
	if (k == KEY_ENTER) {
		/* Enter zooms the code: the selected candidate's source takes the
		 * screen; Enter (or z) on the code gives the panes back */
		if (a->u.focus == UI_POPULATION && c) {
			a->u.focus = UI_CODE;
			a->u.zoom = 1;
		} else if (a->u.focus == UI_CODE) {
			a->u.zoom = !a->u.zoom;
		}
		return;
	}
	if (!c)
		return;
	if (k == 'e')
		app_run_fmt(a, "edit %d", c->id);
	else if (k == 'B')
		app_run_fmt(a, "bench %d", c->id);
	else if (k == 'd') {
		a->u.focus = UI_CODE;
		pane_code_key(&a->u, 'd');
	}
}

/* a key: an answer, the command line, the viewer, the global and replay
 * bindings, the focused pane, then the selected idea or candidate */
static void on_key(struct app *a, wint_t wch, int isKey)
{
	int key = (int)wch;
	if (on_answer(a, key, isKey))
		return;
	if (a->cl.active) {
		on_cmdline_key(a, wch, isKey);
		return;
	}
	a->zMsg[0] = 0;
	if (isKey && key == KEY_MOUSE) {
		on_mouse(a);
		return;
	}
	if (isKey && key == KEY_RESIZE)
		return;
	if (!isKey && key >= KEY_MIN)
		key = 0; /* a character whose code is a curses key's */
	if (!isKey && app_find_key(a, key))
		return;
	if (a->u.zViewText && viewer_key(&a->u, key))
		return;
	if (!isKey) {
		if (on_global_key(a, key) || (a->u.rp && on_replay_key(a, key)))
			return;
	} else if (key == KEY_BTAB) {
		focus_step(a, -1);
		return;
	} else if (a->u.rp && (key == KEY_LEFT || key == KEY_RIGHT)) {
		replay_step(a, a->u.rp->k + (key == KEY_LEFT ? -1 : 1));
		return;
	}
	int k = isKey ? key : key == '\r' || key == '\n' ? KEY_ENTER : key;
	if (pane_key(a, k))
		return;
	if (a->u.focus == UI_IDEAS && (k == 'a' || k == 'e' || k == 'r' || k == KEY_ENTER))
		on_idea_key(a, k);
	else
		on_cand_key(a, k);
}

void app_on_stdin(struct loop *l, int fd, int events, void *arg)
{
	struct app *a = arg;
	(void)l, (void)fd, (void)events;
	wint_t wch;
	int rc;
	while (!a->quit && !a->editing && (rc = get_wch(&wch)) != ERR) {
		if (!a->keyAt)
			a->keyAt = now_s();
		on_key(a, wch, rc == KEY_CODE_YES);
	}
	a->keyDirty = 1;
}

void app_on_wake(struct loop *l, int fd, int events, void *arg)
{
	(void)l, (void)fd, (void)events;
	screen_drain();
	((struct app *)arg)->dirty = 1; /* a signal, or the highlight query is ready */
}

/* on the query-warming thread: only wake the loop */
void app_on_query_ready(void *arg)
{
	(void)arg;
	screen_wake();
}
