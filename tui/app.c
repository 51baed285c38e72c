/*
 * app.c - the TUI's loop: the session or replay opened, the driver's notes,
 * the hooks the commands call back (say, page, edit, quit, continue), the
 * workers' setup watched, the frames drawn; app_run().
 */
#include "app_priv.h"

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
#include "jobs.h"
#include "panes.h"
#include "pool.h"
#include "replay.h"
#include "report.h"
#include "screen.h"
#include "search.h"
#include "status.h"
#include "syntax.h"

/* ---- the live session's notices ---- */

static void on_live(void *arg, const struct driver_note *n)
{
	struct app *a = arg;
	strbuf sb = STRBUF_INIT;
	if (a->u.lv)
		driver_describe(a->u.lv, n, &sb);
	else if (n->zText)
		sb_addf(&sb, "%s", n->zText); /* a warning while the session opens */
	if (n->kind == DRIVER_FINISHED || n->kind == DRIVER_LOG || n->kind == DRIVER_CANDIDATE ||
	    n->kind == DRIVER_BRANCH) {
		ui_log(&a->u, "%s", sb.buf ? sb.buf : "");
	} else if (n->kind == DRIVER_IDEAS) {
		/* one log line per idea; the message line says how many */
		const char *z = sb.buf ? sb.buf : "";
		for (const char *p = z; *p;) {
			size_t k = strcspn(p, "\n");
			char *line = xstrndup(p, k);
			ui_log(&a->u, "%s", line[0] == ' ' ? line + 2 : line);
			free(line);
			p += k + (p[k] == '\n');
		}
		app_message(a, 0, "%.*s", (int)strcspn(z, "\n"), z);
		a->u.focus = a->u.zoom ? a->u.focus : UI_IDEAS;
		/* the new ideas in view: pending ideas come first, the cursor on
		 * the first of them (not below them, which would scroll them off) */
		int first = pane_ideas_next_pending(&a->u, 0);
		const struct state_idea *sel = pane_ideas_selected(&a->u);
		if (first && (!sel || sel->status != IDEA_PENDING))
			a->u.selIdea = first, a->u.ideaTop = 0;
	} else if (n->kind == DRIVER_MESSAGE) {
		ui_log(&a->u, "%s", sb.buf ? sb.buf : "");
		app_message(a, 1, "%s", sb.buf ? sb.buf : "");
	}
	sb_free(&sb);
	a->dirty = 1;
}

/* ---- hooks for the actions ---- */

static void hook_say(void *arg, const char *zText, int bError)
{
	struct app *a = arg;
	app_message(a, bError, "%s", zText);
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

/* the terminal back from the editor */
static void edit_over(struct app *a)
{
	screen_resume();
	loop_add_fd(a->l, STDIN_FILENO, LOOP_READ, app_on_stdin, a);
	screen_take_interrupt(); /* a Ctrl-C meant for the editor */
	a->editing = 0;
	a->keyDirty = 1;
}

/* the editor ended: the command that started it goes on */
static void on_edited(void *arg, int rc, const char *zErr)
{
	struct app *a = arg;
	edit_over(a);
	actions_edited(&a->f, rc, zErr);
	app_line_done(a, a->editBefore);
}

/* the editor has the terminal until it ends (on_edited): no key is read
 * and nothing drawn meanwhile */
static int hook_edit(void *arg, const char *zPath, char *err)
{
	struct app *a = arg;
	a->editing = 1;
	loop_del_fd(a->l, STDIN_FILENO);
	screen_suspend();
	if (editor_start(a->l, zPath, on_edited, a, err) == 0)
		return 0;
	edit_over(a);
	return -1;
}

static void hook_quit(void *arg, int bForce)
{
	app_request_quit(arg, bForce);
}

static void set_live(struct app *a, struct driver *lv)
{
	a->u.lv = lv;
	a->u.st = driver_state(lv);
	a->f.lv = lv;
}

static int hook_cont(void *arg, const char *zFile, char *err)
{
	struct app *a = arg;
	struct replay *rp = a->u.rp;
	char *path =
	    zFile ? xstrdup(zFile) : driver_default_path(rp->st.zTask ? rp->st.zTask : "session");
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
	struct driver_opts lo = a->o.lo;
	lo.zSession = path;
	lo.zTask = NULL;
	struct driver *lv = driver_open(a->l, a->o.cfg, &lo, on_live, a, err);
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
	app_message(a, 0, "continuing after event %d as a new session: %s", k, path);
	free(path);
	return 0;
}

/* the workers' setup (a worker's start, the reference's compile and
 * timing, the baselines) is a step of its own: Activity shows it while it
 * runs and logs how long it took; the candidates evaluated beside it are
 * remembered, their compile time includes the wait (Results says so) */
static void setup_check(struct app *a)
{
	struct ui *u = &a->u;
	int nw = u->lv ? driver_workers(u->lv) : 0, starting = 0;
	double said = -1; /* the longest setup a worker said it took */
	for (int i = 0; i < nw; i++) {
		struct pool_info pi;
		driver_worker(u->lv, i, &pi);
		starting |= pi.setup;
		if (pi.setupS > said)
			said = pi.setupS;
	}
	if (starting) {
		if (!u->setupT0)
			u->setupT0 = now_s();
		const struct driver_job *aj;
		int nj = driver_evals(u->lv, &aj);
		for (int k = 0; k < nj; k++)
			if (!ui_setup_beside(u, aj[k].cand) &&
			    u->nSetupCand < (int)(sizeof u->aSetupCand / sizeof *u->aSetupCand))
				u->aSetupCand[u->nSetupCand++] = aj[k].cand;
	} else if (u->setupT0) {
		/* the worker's own count, as `kloop eval` says it (it started
		 * before the loop first saw it); else the time seen */
		u->setupS = said >= 0 ? said : now_s() - u->setupT0;
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
	struct driver *lv = driver_open(a->l, a->o.cfg, &a->o.lo, on_live, a, err);
	if (!lv)
		return -1;
	set_live(a, lv);
	ui_log(&a->u, "session %s: %s on %s", driver_path(lv), driver_task_name(lv),
	       driver_backend(lv));
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
	syntax_query_warm(app_on_query_ready, NULL);
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
	loop_add_fd(a->l, STDIN_FILENO, LOOP_READ, app_on_stdin, a);
	loop_add_fd(a->l, screen_wakeup_fd(), LOOP_READ, app_on_wake, a);
	app_draw(a);
	while (!a->quit) {
		double now = now_s();
		int busy = jobs_count(a->u.lv) > 0;
		double wait = a->dirty && !a->editing ? FRAME_S - (now - a->lastDraw)
		              : busy                  ? 0.25
		                                      : 1.0;
		loop_once(a->l, wait < 0 ? 0 : wait);
		/* the editor has the terminal: its end (on_edited) gives it back */
		if (a->editing)
			continue;
		if (screen_take_resize())
			a->keyDirty = 1;
		if (a->u.lv) {
			app_work_check(a);
			setup_check(a);
		}
		app_search_check(a);
		if (screen_take_interrupt())
			a->quit = 1;
		now = now_s();
		if (busy && now - a->lastDraw >= 0.25)
			a->dirty = 1; /* elapsed times in the activity pane */
		if (!a->quit && (a->keyDirty || (a->dirty && now - a->lastDraw >= FRAME_S)))
			app_draw(a);
	}
	screen_end();
	cmdline_free(&a->cl);
	if (a->stats)
		fclose(a->stats);
	if (a->u.lv && driver_saved(a->u.lv, stdout) < 0)
		rc = 2;
out:
	actions_search_close(&a->f);
	driver_close(a->u.lv);
	replay_close(a->u.rp);
	pane_code_free(&a->u);
	viewer_close(&a->u);
	ui_free(&a->u);
	loop_free(a->l);
	free(a);
	return rc;
}
