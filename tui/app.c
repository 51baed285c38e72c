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
#include "replay.h"
#include "screen.h"

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

static void on_live(void *arg, enum live_note kind, int cand, const char *zText)
{
	struct app *a = arg;
	(void)cand;
	if (kind == LIVE_FINISHED || kind == LIVE_LOG) {
		ui_log(&a->u, "%s", zText);
	} else if (kind == LIVE_IDEAS) {
		/* one log line per idea; the message line says how many */
		for (const char *p = zText; *p;) {
			size_t k = strcspn(p, "\n");
			char *line = xstrndup(p, k);
			ui_log(&a->u, "%s", line[0] == ' ' ? line + 2 : line);
			free(line);
			p += k + (p[k] == '\n');
		}
		message(a, 0, "%.*s", (int)strcspn(zText, "\n"), zText);
		a->u.focus = a->u.zoom ? a->u.focus : UI_IDEAS;
	} else if (kind == LIVE_MESSAGE) {
		ui_log(&a->u, "%s", zText);
		message(a, 1, "%s", zText);
	}
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

static void request_quit(struct app *a, int bForce)
{
	int n = a->u.lv ? live_jobs(a->u.lv) : 0;
	if (!bForce && n > 0) {
		a->askQuit = 1;
		message(a, 0, "%d job%s running; quit anyway? (y/n)", n, n == 1 ? " is" : "s are");
		return;
	}
	a->quit = 1;
}

static void hook_quit(void *arg, int bForce)
{
	request_quit(arg, bForce);
}

static void set_live(struct app *a, struct live *lv)
{
	a->u.lv = lv;
	a->u.st = live_state(lv);
	a->f.lv = lv;
}

static int hook_cont(void *arg, const char *zFile, char *err)
{
	struct app *a = arg;
	struct replay *rp = a->u.rp;
	char *path =
	    zFile ? xstrdup(zFile) : live_default_path(rp->st.zTask ? rp->st.zTask : "session");
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
	struct live_opts lo = a->o.lo;
	lo.zSession = path;
	lo.zTask = NULL;
	struct live *lv = live_open(a->l, a->o.cfg, &lo, on_live, a, err);
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
	ui_log(&a->u, "continuing after event %d as a new session: %s", k, path);
	message(a, 0, "continuing after event %d as a new session: %s", k, path);
	free(path);
	return 0;
}

/* ---- commands ---- */

static void run_line(struct app *a, const char *zLine)
{
	const struct state *st = a->u.st;
	int before = st ? st->nCand : 0;
	a->f.selCand = a->u.selCand;
	a->zMsg[0] = 0;
	actions_run_line(&a->f, zLine);
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
	    "  Enter               open: the selected candidate's code; an idea's text\n"
	    "  e                   population: edit a copy of the candidate in $EDITOR (a new "
	    "human candidate)\n"
	    "  B                   population: benchmark the selected candidate again\n"
	    "  s / S               population: sort by the next column / reverse the order\n"
	    "  d                   code: toggle the diff against the parent (by function, then by "
	    "line)\n"
	    "  a / e / r           ideas: accept / revise / reject the selected idea\n"
	    "  /                   filter the population (e.g. correct, origin=llm, speedup>1.5)\n"
	    "  :                   the command line (Tab completes, up/down walk the history)\n"
	    "  z                   zoom the focused pane to the whole screen, and back\n"
	    "  mouse               click a pane to focus it, a row to select it; the wheel "
	    "scrolls\n"
	    "  Ctrl-L              redraw the screen\n"
	    "  ?                   this help\n"
	    "  q                   quit (asks while jobs run); Ctrl-C quits at once\n");
	if (a->u.rp)
		sb_adds(&sb,
		        "replay\n"
		        "  left/right, [ ]     one event back / forward\n"
		        "  { }                 ten events back / forward\n"
		        "  < >                 the start / the end of the journal\n"
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

static void on_key(struct app *a, wint_t wch, int isKey)
{
	int key = (int)wch;
	if (a->askQuit) {
		a->askQuit = 0;
		if (!isKey && (key == 'y' || key == 'Y'))
			a->quit = 1;
		else
			message(a, 0, "not quitting");
		return;
	}
	if (a->cl.active) {
		enum cmdline_result r = cmdline_key(&a->cl, wch, isKey, actions_words, &a->f);
		if (r == CMDLINE_DONE) {
			if (!strcmp(a->cl.zPrompt, "/")) {
				char *line = xasprintf("filter %s", a->cl.buf);
				run_line(a, line);
				free(line);
			} else {
				run_line(a, a->cl.buf);
			}
		}
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
		switch (key) {
		case '\t':
			focus_step(a, 1);
			return;
		case ':':
			cmdline_open(&a->cl, ":", NULL);
			return;
		case '/':
			cmdline_open(&a->cl, "/", a->u.pv.zFilter);
			return;
		case '?':
			help_page(a);
			return;
		case 'q':
			request_quit(a, 0);
			return;
		case 'z':
			a->u.zoom = !a->u.zoom;
			return;
		case 12: /* Ctrl-L */
			clearok(curscr, TRUE);
			return;
		case '1':
		case '2':
		case '3':
		case '4':
		case '5':
			a->u.focus = key - '1';
			return;
		}
		if (a->u.rp) {
			int k = a->u.rp->k;
			switch (key) {
			case '[':
				replay_step(a, k - 1);
				return;
			case ']':
				replay_step(a, k + 1);
				return;
			case '{':
				replay_step(a, k - 10);
				return;
			case '}':
				replay_step(a, k + 10);
				return;
			case '<':
				replay_step(a, 0);
				return;
			case '>':
				replay_step(a, a->u.rp->nEv);
				return;
			case 'c':
				run_line(a, "continue");
				return;
			}
		}
	} else {
		if (key == KEY_BTAB) {
			focus_step(a, -1);
			return;
		}
		if (a->u.rp && (key == KEY_LEFT || key == KEY_RIGHT)) {
			replay_step(a, a->u.rp->k + (key == KEY_LEFT ? -1 : 1));
			return;
		}
	}
	int k = isKey ? key : key == '\r' || key == '\n' ? KEY_ENTER : key;
	if (pane_key(a, k))
		return;
	/* keys about the selected idea, on the ideas pane */
	const struct state_idea *d = a->u.focus == UI_IDEAS ? pane_ideas_selected(&a->u) : NULL;
	if (a->u.focus == UI_IDEAS && (k == 'a' || k == 'e' || k == 'r' || k == KEY_ENTER)) {
		if (!d) {
			message(a, 0, "no idea is selected: `:ideas 3` asks the LLM for three");
		} else if (k == KEY_ENTER) {
			strbuf sb = STRBUF_INIT;
			sb_addf(&sb, "idea %d: %s\n\ncategory  %s\nstatus    %s%s\norigin    %s\n",
			        d->id, d->zTitle, d->zCategory, d->zStatus,
			        d->edited ? " (revised)" : "", d->zOrigin);
			if (d->parent)
				sb_addf(&sb, "for       candidate %d\n", d->parent);
			sb_addf(&sb, "\n%s\n", d->zDescription);
			viewer_open(&a->u, "idea", sb.buf);
			sb_free(&sb);
		} else {
			run_fmt(a, "%s %d",
			        k == 'a'   ? "accept"
			        : k == 'e' ? "revise"
			                   : "reject",
			        d->id);
		}
		return;
	}
	/* keys about the selected candidate, from any pane that did not use them */
	const struct cand *c = ui_selected(&a->u);
	if (k == KEY_ENTER) {
		if (a->u.focus == UI_POPULATION && c)
			a->u.focus = UI_CODE;
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
	(void)l, (void)fd, (void)events, (void)arg;
	screen_drain();
}

/* ---- drawing ---- */

static void draw_title(struct app *a)
{
	const struct state *st = a->u.st;
	char t[512];
	int nOk = 0, best = 0;
	double bs = -1;
	for (int i = 0; i < st->nCand; i++) {
		const struct cand *c = &st->aCand[i];
		nOk += !strcmp(c->zStatus, "correct");
		if (!strcmp(c->zStatus, "correct") && c->speedup > bs)
			bs = c->speedup, best = c->id;
	}
	char bestz[64] = "best -";
	if (best)
		snprintf(bestz, sizeof bestz, "best %.3gx (#%d)", bs, best);
	if (a->u.rp)
		snprintf(t, sizeof t,
		         " kloop replay | %s (%s) | event %d of %d | %d candidates, %d correct | "
		         "%s | [ ] step, c continue, ? help",
		         st->zTask ? st->zTask : "?", st->zBackend ? st->zBackend : "?", a->u.rp->k,
		         a->u.rp->nEv, st->nCand, nOk, bestz);
	else
		snprintf(t, sizeof t,
		         " kloop | %s (%s) | %d candidates, %d correct | %s | %d job%s | %s",
		         st->zTask ? st->zTask : "?", a->u.lv->zBackend, st->nCand, nOk, bestz,
		         live_jobs(a->u.lv), live_jobs(a->u.lv) == 1 ? "" : "s",
		         a->u.lv->ses->zPath);
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
	draw_title(a);
	struct ui *u = &a->u;
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
		if (a->zMsg[0])
			screen_put(y, 0, COLS, a->zMsg,
			           a->msgErr ? screen_attr(SR_BAD) | A_BOLD : A_BOLD);
		else if (u->zViewText)
			screen_put(y, 0, COLS, "up/down scroll  q close", screen_attr(SR_DIM));
		else
			screen_put(y, 0, COLS,
			           u->rp ? "Tab pane  up/down move  [ ] step  c continue  / filter "
			                   " : command  ? help  q quit"
			                 : "Tab pane  up/down move  Enter open  e edit  B bench  d "
			                   "diff  / filter  : command  ? help  q quit",
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
	struct live *lv = live_open(a->l, a->o.cfg, &a->o.lo, on_live, a, err);
	if (!lv)
		return -1;
	set_live(a, lv);
	ui_log(&a->u, "session %s: %s on %s", lv->ses->zPath, lv->zTaskName, lv->zBackend);
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
	loop_add_fd(a->l, STDIN_FILENO, LOOP_READ, on_stdin, a);
	loop_add_fd(a->l, screen_wakeup_fd(), LOOP_READ, on_wake, a);
	draw(a);
	while (!a->quit) {
		double now = now_s();
		int busy = a->u.lv && live_jobs(a->u.lv) > 0;
		double wait = a->dirty ? FRAME_S - (now - a->lastDraw) : busy ? 0.25 : 1.0;
		loop_once(a->l, wait < 0 ? 0 : wait);
		if (screen_take_resize())
			a->keyDirty = 1;
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
	if (a->u.lv)
		printf("kloop: session saved in %s\n", a->u.lv->ses->zPath);
out:
	live_close(a->u.lv);
	replay_close(a->u.rp);
	pane_code_free(&a->u);
	ui_free(&a->u);
	loop_free(a->l);
	free(a);
	return rc;
}
