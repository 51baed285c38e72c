/*
 * app.c - the TUI's loop glue: one event loop for keys, workers and signal
 * flags; keys go to the command line, the viewer, the global bindings or
 * the focused pane; the screen is redrawn when something changed (at most
 * 30 times a second, at once after a key).
 */
#include "app.h"

#include <curses.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "actions.h"
#include "cmdline.h"
#include "editor.h"
#include "panes.h"
#include "pool.h"
#include "replay.h"
#include "report.h"
#include "screen.h"
#include "search.h"
#include "status.h"
#include "syntax.h"

#define FRAME_S (1.0 / 30)

struct app {
	struct ui u;            /* what the panes share */
	struct loop *l;         /* the one event loop */
	struct app_opts o;      /* how we were started */
	struct cmdline cl;      /* the `:` and `/` line */
	struct actions_front f; /* how commands reach us */
	char zMsg[1024];        /* the message line, or "" */
	int msgErr;             /* it is an error */
	int askQuit;            /* waiting for y/n to quit with jobs running */
	int searchWas;          /* the search's state at the last look (its end is logged) */
	char zAsk[64];          /* waiting for y/n to run this command (or "") */
	int workBusy;           /* jobs ran at the last look */
	int workFrom;           /* the first candidate id of the work running */
	int workEvals;          /* evaluations finished when it started */
	char zWork[1024];       /* the message of the command that started it */
	int askNext;            /* ... and then select this idea (0: none) */
	int quit;               /* leave the loop */
	int dirty;              /* something changed: redraw soon */
	int keyDirty;           /* a key arrived: redraw now */
	int editing;            /* $EDITOR has the terminal: do not draw */
	double lastDraw;        /* monotonic time of the last frame */
	double keyAt;           /* when the first key of this batch was read (0: none) */
	FILE *stats;            /* KLOOP_TUI_STATS: frame times for the benchmark */
};

static void message(struct app *a, int bError, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void message(struct app *a, int bError, const char *fmt, ...)
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

/* ---- the live session's notices ---- */

static void on_live(void *arg, const struct runner_note *n)
{
	struct app *a = arg;
	strbuf sb = STRBUF_INIT;
	if (a->u.lv)
		runner_describe(a->u.lv, n, &sb);
	else if (n->zText)
		sb_addf(&sb, "%s", n->zText); /* a warning while the session opens */
	if (n->kind == RUNNER_FINISHED || n->kind == RUNNER_LOG || n->kind == RUNNER_CANDIDATE ||
	    n->kind == RUNNER_BRANCH) {
		ui_log(&a->u, "%s", sb.buf ? sb.buf : "");
	} else if (n->kind == RUNNER_IDEAS) {
		/* one log line per idea; the message line says how many */
		const char *z = sb.buf ? sb.buf : "";
		for (const char *p = z; *p;) {
			size_t k = strcspn(p, "\n");
			char *line = xstrndup(p, k);
			ui_log(&a->u, "%s", line[0] == ' ' ? line + 2 : line);
			free(line);
			p += k + (p[k] == '\n');
		}
		message(a, 0, "%.*s", (int)strcspn(z, "\n"), z);
		a->u.focus = a->u.zoom ? a->u.focus : UI_IDEAS;
		/* the new ideas in view: pending ideas come first, the cursor on
		 * the first of them (not below them, which would scroll them off) */
		int first = pane_ideas_next_pending(&a->u, 0);
		const struct state_idea *sel = pane_ideas_selected(&a->u);
		if (first && (!sel || sel->status != IDEA_PENDING))
			a->u.selIdea = first, a->u.ideaTop = 0;
	} else if (n->kind == RUNNER_MESSAGE) {
		ui_log(&a->u, "%s", sb.buf ? sb.buf : "");
		message(a, 1, "%s", sb.buf ? sb.buf : "");
	}
	sb_free(&sb);
	a->dirty = 1;
}

/* ---- hooks for the actions ---- */

static void hook_say(void *arg, const char *zText, int bError)
{
	struct app *a = arg;
	message(a, bError, "%s", zText);
	if (bError)
		ui_log(&a->u, "%s", zText);
}

static void hook_page(void *arg, const char *zTitle, const char *zText, int cand)
{
	struct app *a = arg;
	if (cand)
		ui_select(&a->u, cand);
	viewer_open(&a->u, zTitle, zText);
	a->dirty = 1;
}

static void on_stdin(struct loop *l, int fd, int events, void *arg);

static int hook_edit(void *arg, const char *zPath, char *err)
{
	struct app *a = arg;
	a->editing = 1;
	loop_del_fd(a->l, STDIN_FILENO);
	screen_suspend();
	int rc = editor_run(a->l, zPath, err);
	screen_resume();
	loop_add_fd(a->l, STDIN_FILENO, LOOP_READ, on_stdin, a);
	screen_take_interrupt(); /* a Ctrl-C meant for the editor */
	a->editing = 0;
	a->keyDirty = 1;
	return rc;
}

/* the pending ideas of a search that waits for a person at its gate (0:
 * it does not wait) */
static int gate_waiting(const struct app *a)
{
	if (!a->f.search || !search_waiting(a->f.search))
		return 0;
	int n = 0;
	for (int i = 0; i < a->u.st->nIdea; i++)
		n += a->u.st->aIdea[i].status == IDEA_PENDING;
	return n ? n : 1;
}

static void request_quit(struct app *a, int bForce)
{
	int n = actions_jobs_count(a->u.lv), nReq = n - (a->u.lv ? runner_jobs(a->u.lv) : 0);
	int nGate = gate_waiting(a);
	if (!bForce && n > 0) {
		a->askQuit = 1;
		message(a, 0, "%d job%s running%s; quit anyway? (y/n)", n, n == 1 ? " is" : "s are",
		        nReq ? " (LLM requests are cancelled)" : "");
		return;
	}
	if (!bForce && nGate) {
		/* a search waiting for a person is work in progress too */
		a->askQuit = 1;
		message(
		    a, 0,
		    "quit? the search waits at the human gate: %d idea%s pending (y/n; Ideas: a "
		    "accept, r reject)",
		    nGate, nGate == 1 ? "" : "s");
		return;
	}
	a->quit = 1;
}

static void hook_quit(void *arg, int bForce)
{
	request_quit(arg, bForce);
}

static void set_live(struct app *a, struct runner *lv)
{
	a->u.lv = lv;
	a->u.st = runner_state(lv);
	a->f.lv = lv;
}

static int hook_cont(void *arg, const char *zFile, char *err)
{
	struct app *a = arg;
	struct replay *rp = a->u.rp;
	char *path =
	    zFile ? xstrdup(zFile) : runner_default_path(rp->st.zTask ? rp->st.zTask : "session");
	const char *slash = strrchr(path, '/');
	if (slash && slash != path) {
		char *dir = xstrndup(path, (size_t)(slash - path));
		int rc = path_exists(dir) ? 0 : mkdir_p(dir, err);
		free(dir);
		if (rc < 0) {
			free(path);
			return -1;
		}
	}
	if (replay_write_prefix(rp, rp->k, path, err) < 0) {
		free(path);
		return -1;
	}
	struct runner_opts lo = a->o.lo;
	lo.zSession = path;
	lo.zTask = NULL;
	struct runner *lv = runner_open(a->l, a->o.cfg, &lo, on_live, a, err);
	if (!lv) {
		free(path);
		return -1;
	}
	int k = rp->k;
	int sel = a->u.selCand;
	replay_close(rp);
	a->u.rp = a->f.rp = NULL;
	set_live(a, lv);
	pane_code_free(&a->u);
	a->u.selCand = state_cand(a->u.st, sel) ? sel : 0;
	actions_search_open(&a->f, 1); /* a search running at that event goes on */
	ui_log(&a->u, "continuing after event %d as a new session: %s", k, path);
	message(a, 0, "continuing after event %d as a new session: %s", k, path);
	free(path);
	return 0;
}

/* ---- commands ---- */

/* the work that jobs do: when the last one ends, the message line says
 * what it came to instead of what was asked (which would go stale) */
static void work_check(struct app *a)
{
	int n = actions_jobs_count(a->u.lv);
	if (n && !a->workBusy) {
		a->workBusy = 1;
	} else if (!n && a->workBusy) {
		a->workBusy = 0;
		strbuf sb = STRBUF_INIT;
		int nEvals = a->u.lv->nFinished - a->workEvals;
		if (actions_summary(a->u.st, a->workFrom, nEvals, &sb)) {
			ui_log(&a->u, "done: %s", sb.buf);
			if (!a->msgErr)
				message(a, 0, "done: %s", sb.buf);
		}
		sb_free(&sb);
		a->zWork[0] = 0;
		a->dirty = 1;
	}
}

/* the workers' setup (a worker's start, the reference's compile and
 * timing, the baselines) is a step of its own: Activity shows it while it
 * runs and logs how long it took; the candidates evaluated beside it are
 * remembered, their compile time includes the wait (Results says so) */
static void setup_check(struct app *a)
{
	struct ui *u = &a->u;
	int nw = u->lv && u->lv->pool ? pool_size(u->lv->pool) : 0, starting = 0;
	for (int i = 0; i < nw; i++) {
		struct pool_info pi;
		pool_info(u->lv->pool, i, &pi);
		starting |= pi.state == POOL_W_STARTING;
	}
	if (starting) {
		if (!u->setupT0)
			u->setupT0 = now_s();
		for (int k = 0; k < u->lv->nJob; k++)
			if (!ui_setup_beside(u, u->lv->aJob[k].cand) &&
			    u->nSetupCand < (int)(sizeof u->aSetupCand / sizeof *u->aSetupCand))
				u->aSetupCand[u->nSetupCand++] = u->lv->aJob[k].cand;
	} else if (u->setupT0) {
		u->setupS = now_s() - u->setupT0;
		u->setupT0 = 0;
		ui_log(
		    u,
		    "setup done in %.1f s: the worker started, compiled and timed the reference, "
		    "made the baselines (the compile times of the candidates beside it include "
		    "the wait)",
		    u->setupS);
		a->dirty = 1;
	}
}

/* the end of a search is said in Activity, with its reason (the message
 * line goes stale; the header has room for its short form only) */
static void search_check(struct app *a)
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

static void run_line(struct app *a, const char *zLine)
{
	const struct state *st = a->u.st;
	int before = st ? st->nCand : 0;
	a->f.selCand = a->u.selCand;
	a->zMsg[0] = 0;
	if (a->u.lv && !a->workBusy) {
		a->workFrom = state_next_id(st);
		a->workEvals = a->u.lv->nFinished;
	}
	actions_run_line(&a->f, zLine);
	if (a->u.lv && actions_jobs_count(a->u.lv) && !a->msgErr)
		snprintf(a->zWork, sizeof a->zWork, "%s", a->zMsg);
	if (a->u.lv)
		work_check(a);
	search_check(a);
	st = a->u.st;
	/* a candidate made by hand is selected, to watch it being benchmarked */
	if (a->u.lv && st->nCand > before && !strcmp(st->aCand[st->nCand - 1].zOrigin, "human"))
		ui_select(&a->u, st->aCand[st->nCand - 1].id);
	a->keyDirty = 1;
}

/* run a command made from a key (so that keys and commands share one path) */
static void run_fmt(struct app *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void run_fmt(struct app *a, const char *fmt, ...)
{
	char line[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	run_line(a, line);
}

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
	    "  /                   filter the population (e.g. correct, origin=llm, speedup>1.5)\n"
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
	run_fmt(a, "goto %d", k < 0 ? 0 : k);
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
			message(a, 0, "not quitting");
		return 1;
	}
	if (a->zAsk[0]) {
		char line[64];
		snprintf(line, sizeof line, "%s", a->zAsk);
		a->zAsk[0] = 0;
		if (yes) {
			run_line(a, line);
			if (a->askNext)
				a->u.selIdea = a->askNext;
		} else {
			message(a, 0, "nothing changed");
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
	if (!strcmp(a->cl.zPrompt, "/")) {
		char *line = xasprintf("filter %s", a->cl.buf);
		run_line(a, line);
		free(line);
	} else {
		run_line(a, a->cl.buf);
	}
}

/* `*`: the best candidate selected; the follow mode goes off unless it
 * follows the best (else it would move the selection away at once) */
static void jump_best(struct app *a)
{
	popview_refresh(&a->u.pv, a->u.st);
	int id = ui_follow_target(&a->u, UI_FOLLOW_BEST);
	if (!id) {
		message(a, 0, "no candidate ranks yet: the best is the fastest correct one");
		return;
	}
	if (popview_row(&a->u.pv, a->u.st, id) < 0) {
		message(a, 0, "the best, #%d, is not shown by the filter (/ changes it)", id);
		return;
	}
	ui_select(&a->u, id);
	if (a->u.follow != UI_FOLLOW_BEST)
		a->u.follow = UI_FOLLOW_OFF;
	a->u.focus = a->u.zoom ? a->u.focus : UI_POPULATION;
	message(a, 0, "the best: #%d%s", id,
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
	message(a, 0, "%s",
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
		cmdline_open(&a->cl, ":", NULL);
		return 1;
	case '/': {
		/* the filter so far and a space: what is typed is one more term */
		const char *z = a->u.pv.zFilter;
		char *init = z && *z ? xasprintf("%s ", z) : xstrdup("");
		cmdline_open(&a->cl, "/", init);
		free(init);
		return 1;
	}
	case '?':
		help_page(a);
		return 1;
	case 'q':
		request_quit(a, 0);
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
			run_line(a, !ss->started || ss->state == SEARCH_NONE ? "search start"
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
		run_line(a, "continue");
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
		message(a, 0, "no idea is selected: `:ideas 3` asks the LLM for three");
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
			message(a, 0, "idea %d is %s; %s it? (y/n)", id,
			        idea_said(a->u.st, d, said, sizeof said), cmd);
			return;
		}
		if (k != 'e' && d->status == (k == 'a' ? IDEA_ACCEPTED : IDEA_REJECTED)) {
			message(a, 0, "idea %d is %s already", id,
			        idea_said(a->u.st, d, said, sizeof said));
			return;
		}
		run_fmt(a, "%s %d", cmd, id);
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
		run_fmt(a, "edit %d", c->id);
	else if (k == 'B')
		run_fmt(a, "bench %d", c->id);
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

static void on_stdin(struct loop *l, int fd, int events, void *arg)
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

static void on_wake(struct loop *l, int fd, int events, void *arg)
{
	(void)l, (void)fd, (void)events;
	screen_drain();
	((struct app *)arg)->dirty = 1; /* a signal, or the highlight query is ready */
}

/* on the query-warming thread: only wake the loop */
static void on_query_ready(void *arg)
{
	(void)arg;
	screen_wake();
}

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

static void draw_title(struct app *a)
{
	const struct state *st = a->u.st;
	char t[1024], nc[32], jobs[32];
	int nOk = 0;
	for (int i = 0; i < st->nCand; i++)
		nOk += st->aCand[i].status == STATUS_CORRECT;
	char bestz[128];
	report_best_text(st, bestz, sizeof bestz);
	int confirmed;
	const struct cand *best = state_best(st, &confirmed, NULL);
	if (best && !confirmed && COLS < 200) /* the leader's caveat in short: it stays in view */
		snprintf(bestz, sizeof bestz, "leader %.3gx (#%d%s)", best->speedup, best->id,
		         COLS < 100 ? "" : ", unconfirmed");
	count_of(nc, sizeof nc, st->nCand, "candidate");
	char cands[64], head[256], rest[256];
	snprintf(cands, sizeof cands, "%s, %d correct", nc, nOk);
	search_fields(st, 1, head, sizeof head, rest, sizeof rest);
	int nGate = a->u.lv ? gate_waiting(a) : 0;
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
		const int prio[] = {0, 1, 0, 3, 2, 1, 4, 5};
		screen_fit_fields(az, prio, 8, COLS, t, sizeof t);
	} else {
		int nj = actions_jobs_count(a->u.lv);
		count_of(jobs, sizeof jobs, nj, "job");
		char task[256], path[512];
		snprintf(task, sizeof task, "%s (%s)", st->zTask ? st->zTask : "?",
		         a->u.lv->zBackend);
		/* what matters most stays on a narrow screen: the search's state
		 * (never cut first), then the best, then the task and the jobs,
		 * the rest of the search's status, the counts, the path (…/name,
		 * or left out: the log has it) */
		const char *az[] = {" kloop", task, head, cands, jobs, bestz, rest, path};
		const int prio[] = {0, 3, 0, 5, 3, 2, 4, 6};
		path[0] = 0;
		/* the reason an ended search gives, where it leaves room for the
		 * best and the jobs (Activity and `:search status` say it whole) */
		if (screen_fit_fields(az, prio, 7, COLS, t, sizeof t) < 3) {
			search_fields(st, 0, head, sizeof head, rest, sizeof rest);
			if (nGate)
				snprintf(head + strlen(head), sizeof head - strlen(head),
				         ", waits at the gate");
			screen_fit_fields(az, prio, 7, COLS, t, sizeof t);
		}
		int used = screen_width(t, strlen(t)) + 3;
		short_path(a->u.lv->ses->zPath, COLS - used, path, sizeof path);
		if (screen_width(path, strlen(path)) > COLS - used)
			path[0] = 0;
		screen_fit_fields(az, prio, 8, COLS, t, sizeof t);
	}
	screen_fill(0, 0, COLS, screen_attr(SR_TITLE));
	screen_put(0, 0, COLS, t, screen_attr(SR_TITLE));
}

static void draw(struct app *a)
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
			int nj = actions_jobs_count(u->lv);
			char line[1400];
			snprintf(line, sizeof line,
			         "%s - %d job%s running, %d new candidate%s, %d evaluated", a->zMsg,
			         nj, nj == 1 ? "" : "s", nNew, nNew == 1 ? "" : "s", nDone);
			screen_put(y, 0, COLS, line, A_BOLD);
		} else if (a->zMsg[0])
			screen_put(y, 0, COLS, a->zMsg,
			           a->msgErr ? screen_attr(SR_BAD) | A_BOLD : A_BOLD);
		else if (u->zViewText)
			screen_put(y, 0, COLS, "up/down scroll  q close", screen_attr(SR_DIM));
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

/* ---- the run ---- */

static int open_model(struct app *a, char *err)
{
	if (a->o.zReplay) {
		struct replay *rp = replay_open(a->o.zReplay, err);
		if (!rp)
			return -1;
		if (a->o.at >= 0)
			replay_seek(rp, a->o.at);
		a->u.rp = a->f.rp = rp;
		a->u.st = &rp->st;
		if (rp->warnings.len)
			ui_log(&a->u, "%s", rp->warnings.buf);
		ui_log(&a->u, "replaying %s: %d events", a->o.zReplay, rp->nEv);
		return 0;
	}
	struct runner *lv = runner_open(a->l, a->o.cfg, &a->o.lo, on_live, a, err);
	if (!lv)
		return -1;
	set_live(a, lv);
	ui_log(&a->u, "session %s: %s on %s", lv->ses->zPath, lv->zTaskName, lv->zBackend);
	actions_search_open(&a->f, 1); /* a search cut short goes on */
	return 0;
}

static const struct actions_hooks hooks = {
    .say = hook_say,
    .page = hook_page,
    .edit = hook_edit,
    .quit = hook_quit,
    .cont = hook_cont,
};

int app_run(const struct app_opts *o)
{
	struct app *a = xcalloc(1, sizeof *a);
	a->o = *o;
	a->l = loop_new();
	popview_init(&a->u.pv);
	a->f = (struct actions_front){.pv = &a->u.pv, .cfg = o->cfg, .h = &hooks, .arg = a};
	char err[KL_ERRLEN];
	int rc = 0;
	signal(SIGPIPE, SIG_IGN);
	const char *nc = getenv("NO_COLOR");
	if (screen_init(nc && *nc, err) < 0) {
		fprintf(stderr, "kloop: %s\n", err);
		rc = 2;
		goto out;
	}
	/* the code pane's highlight query (51 ms to compile) is made on a thread
	 * while the session opens; a frame drawn before it is ready shows the
	 * code plain, and its end wakes the loop to draw it highlighted */
	syntax_query_warm(on_query_ready, NULL);
	/* the session opens (and its seeds start) with the screen up */
	if (open_model(a, err) < 0) {
		screen_end();
		fprintf(stderr, "kloop: %s\n", err);
		rc = 2;
		goto out;
	}
	const char *zStats = getenv("KLOOP_TUI_STATS");
	if (zStats && *zStats)
		a->stats = fopen(zStats, "a");
	char *hist = cmdline_history_path();
	cmdline_init(&a->cl, hist);
	free(hist);
	if (a->u.st->nCand)
		a->u.selCand = a->u.st->aCand[0].id;
	a->u.follow = UI_FOLLOW_NEWEST; /* while a search runs; f changes it */
	a->searchWas = a->u.st->search.started ? (int)a->u.st->search.state : SEARCH_NONE;
	loop_add_fd(a->l, STDIN_FILENO, LOOP_READ, on_stdin, a);
	loop_add_fd(a->l, screen_wakeup_fd(), LOOP_READ, on_wake, a);
	draw(a);
	while (!a->quit) {
		double now = now_s();
		int busy = actions_jobs_count(a->u.lv) > 0;
		double wait = a->dirty ? FRAME_S - (now - a->lastDraw) : busy ? 0.25 : 1.0;
		loop_once(a->l, wait < 0 ? 0 : wait);
		if (screen_take_resize())
			a->keyDirty = 1;
		if (a->u.lv) {
			work_check(a);
			setup_check(a);
		}
		search_check(a);
		if (screen_take_interrupt())
			a->quit = 1;
		now = now_s();
		if (busy && now - a->lastDraw >= 0.25)
			a->dirty = 1; /* elapsed times in the activity pane */
		if (!a->quit && (a->keyDirty || (a->dirty && now - a->lastDraw >= FRAME_S)))
			draw(a);
	}
	screen_end();
	cmdline_free(&a->cl);
	if (a->stats)
		fclose(a->stats);
	if (a->u.lv && session_saved(a->u.lv->ses, stdout) < 0)
		rc = 2;
out:
	actions_search_close(&a->f);
	runner_close(a->u.lv);
	replay_close(a->u.rp);
	pane_code_free(&a->u);
	ui_free(&a->u);
	loop_free(a->l);
	free(a);
	return rc;
}
