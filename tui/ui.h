/*
 * ui.h - what the TUI's panes share: the pane ids, their rectangles, and
 * struct ui, the front end's own view state (selection, scroll positions,
 * sort and filter, the activity log).  The panes read the engine's state
 * through u->st and never change it; each pane is a module
 * (tui/pane_<name>.c) exporting pane_<name>_draw() and pane_<name>_key().
 */
#ifndef KL_UI_H
#define KL_UI_H

#include <time.h>

#include "driver.h"
#include "popview.h"
#include "replay.h"
#include "state.h"

enum ui_pane {
	UI_POPULATION,
	UI_IDEAS,
	UI_CODE,
	UI_RESULTS,
	UI_ACTIVITY,
	UI_NPANES,
	UI_CHART = UI_NPANES, /* the chart has a rectangle but takes no keys */
	UI_NRECTS,
	UI_VIEWER = UI_NRECTS /* the page over the panes (where a search is) */
};

struct ui_rect {
	int y, x; /* top left corner (screen cells) */
	int h, w; /* height and width; 0 when not shown */
};

#define UI_LOG_MAX 64

enum { VIEW_TEXT, VIEW_SHOW, VIEW_DIFF };

/* what the selection follows: nothing (a person put it), the newest
 * candidate, the best */
enum { UI_FOLLOW_OFF, UI_FOLLOW_NEWEST, UI_FOLLOW_BEST };

struct syntax_doc;
struct pane_rows;

struct pane_code_cache; /* tui/pane_code.c */

struct ui {
	const struct state *st; /* what the panes show (live: the session's; replay: a fold) */
	struct driver *lv;      /* the live session, or NULL while replaying */
	struct replay *rp;      /* the journal being replayed, or NULL */
	struct popview pv;      /* the population's filter and order */
	int focus;              /* the pane that takes the keys */
	int zoom;               /* the focused pane fills the body */
	struct ui_rect aRect[UI_NRECTS]; /* where each pane is, from screen_layout() */
	int selCand;                     /* the selected candidate's id (0: none) */
	int follow;                      /* UI_FOLLOW_*: what the selection follows */
	int followAlways;                /* follow also when no search runs (f turned it on);
	                                  * else only while a search runs */
	double setupT0;     /* monotonic time a worker was first seen setting up (its start,
	                     * the reference's compile and timing, the baselines), 0: none */
	double setupS;      /* how long the latest setup took (0: none seen) */
	int aSetupCand[32]; /* candidates whose evaluation ran beside a setup: their compile
	                     * time includes the wait (Results says so) */
	int nSetupCand;
	int popTop;                   /* first population row shown */
	int selIdea;                  /* the selected idea's id (0: none) */
	int ideaTop;                  /* first idea row shown */
	int codeTop;                  /* first code line shown */
	int codeDiff;                 /* the code pane shows the diff against the parent */
	int resTop;                   /* first results line shown */
	int actTop;                   /* first activity line shown */
	struct pane_code_cache *code; /* highlighted source of the candidate shown */
	char *azLog[UI_LOG_MAX];      /* the activity log, oldest first */
	int nLog;
	char *zViewTitle; /* the viewer's title while it is open, else NULL */
	char *zViewText;  /* the text it shows (help, show, diff, list) */
	int viewTop;      /* its first line shown */
	int viewKind;     /* VIEW_TEXT (wrapped), VIEW_SHOW (a source at the end,
	                   * highlighted), VIEW_DIFF (diff colours, tabs expanded) */
	char *zViewLines; /* the text as drawn: wrapped to viewW, or tabs expanded */
	int viewW;        /* the width zViewLines was made for (0: none yet) */
	int viewSrcLine;  /* VIEW_SHOW: the first line of the source in zViewLines */
	char *zViewSrc;   /* VIEW_SHOW: the source, and its parse (or NULL) */
	struct syntax_doc *viewDoc;
	struct pane_rows *viewRows; /* the page's rows as drawn (zViewLines, zViewSrc) */
	int viewRowsWrap;           /* u->wrap when they were made */
	int wrap;                   /* w: long lines wrap in the Code pane and the pages */
	char *zFind;                /* the text `/` searched for in a text view, or NULL */
	int findIn;                 /* where: UI_CODE, UI_RESULTS or UI_VIEWER */
	int findRow;                /* the match n and N go on from: its row in that view */
	size_t findAt;              /* and its byte in the row */
};

/* append a line to the activity log (stamped with the time of day) */
void ui_log(struct ui *u, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* free what u owns (not the state, session or replay; the viewer's page
 * is the panes' to close first: viewer_close) */
void ui_free(struct ui *u);

/* the selected candidate, or NULL */
const struct cand *ui_selected(const struct ui *u);
/* select candidate id, scrolling the population to it (the code and results
 * panes follow) */
void ui_select(struct ui *u, int id);
/* a job's stage for people: "full shapes, trial 4", "timing, run 12",
 * "a/b, pair 3" (the Population's column says "full shapes 4") */
const char *ui_stage_text(const char *zStage, int k, char *buf, size_t n);
/* candidate id's evaluation ran beside the workers' setup */
int ui_setup_beside(const struct ui *u, int id);
/* the follow mode acts now: on, and a search runs or f turned it on */
int ui_following(const struct ui *u);
/* the candidate the follow mode would select: the newest shown in the
 * population, or the best (state_best()); 0 when none.  Pure, for the tests */
int ui_follow_target(const struct ui *u, int mode);
/* select what the follow mode follows, if it acts and that changed */
void ui_follow(struct ui *u);

#endif
