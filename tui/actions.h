/*
 * actions.h - the commands of the command language (tui/commands.h) run
 * for either front end: each command's entry has its handler (tui/verbs.h),
 * written once for both.  A front end (the TUI or the REPL) describes
 * itself with a struct actions_front: the live session or the replay it
 * shows, its population view, and hooks for what only it knows how to do
 * (show a page of text, run the editor on the terminal, quit, switch from
 * replay to live).  Changes to the session go through sessions/driver/driver.h,
 * i.e. as events.
 */
#ifndef KL_ACTIONS_H
#define KL_ACTIONS_H

#include "commands.h"
#include "config.h"
#include "driver.h"
#include "popview.h"
#include "replay.h"

/* what only a front end knows how to do; arg is the front's actions_front.arg */
struct actions_hooks {
	/* a one-line answer (bError: it is an error) */
	void (*say)(void *arg, const char *zText, int bError);
	/* a long answer: zTitle and text (the TUI's viewer, the REPL prints);
	 * cand: the candidate it is about, or 0 */
	void (*page)(void *arg, const char *zTitle, const char *zText, int cand);
	/* start the editor on zPath with the terminal and return: 0, or -1 +
	 * err when it could not be started; when it ends, the front gives
	 * back the terminal and calls actions_edited() with its exit status
	 * (or -1 + err) */
	int (*edit)(void *arg, const char *zPath, char *err);
	/* quit (bForce: without asking about running jobs) */
	void (*quit)(void *arg, int bForce);
	/* continue the replay from its current point as a live session written to
	 * zFile (NULL: a fresh default path); 0 or -1 + err */
	int (*cont)(void *arg, const char *zFile, char *err);
};

struct actions_front;
/* a command that handed a text to the editor goes on (actions_edit_text):
 * rc is the editor's exit status (when 0, zText is the copy as the editor
 * left it, nText bytes, changed when it is not the text given), or -1 and
 * zErr says why (the editor failed, or the copy could not be read back);
 * returns what the command came to (0, or -1 when it failed: said) */
typedef int (*actions_edited_fn)(struct actions_front *f, void *ctx, int rc, const char *zText,
                                 size_t nText, int changed, const char *zErr);
struct actions_edit;

struct actions_front {
	struct driver *lv;             /* the live session, or NULL while replaying */
	struct replay *rp;             /* the journal being replayed, or NULL */
	struct popview *pv;            /* the view `sort` and `filter` change */
	const struct config *cfg;      /* for the LLM provider's settings */
	int selCand;                   /* the TUI's selected candidate (0: none) */
	const struct actions_hooks *h; /* the front end's hooks */
	void *arg;                     /* their argument */
	struct search *search;         /* the search (sessions/search/search.h), made by the first
	                                * search command or by actions_search_open() */
	struct actions_edit *edit;     /* the command that waits for the editor, or NULL */
};

/* ---- what the command handlers (tui/verbs.h) share ---- */

/* say the formatted text as an error; returns -1 */
int actions_fail(struct actions_front *f, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* say the formatted text as an answer */
void actions_say(struct actions_front *f, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* the candidate argument i of c, or NULL after saying there is none */
const struct cand *actions_cand(struct actions_front *f, const struct commands_line *c, int i);
/* 0 with a live session; -1 after saying a replay is read-only */
int actions_need_live(struct actions_front *f, const struct commands_line *c);
/* the LLM pipeline of a live session (driver_llm()); NULL after saying why
 * there is none */
struct pipeline *actions_need_llm(struct actions_front *f, const struct commands_line *c);

/* the state the commands act on: the live session's or the replay's fold */
const struct state *actions_state(const struct actions_front *f);

/*
 * Do the parsed command c (its entry's handler).  Returns 0, or -1 when it
 * failed (the reason was said through f->say with bError set).
 */
int actions_run(struct actions_front *f, const struct commands_line *c);

/* parse zLine and run it: 0, 1 for a blank line, -1 for an error (said) */
int actions_run_line(struct actions_front *f, const char *zLine);

/*
 * The editor, a state of the front: a command hands zText to it as a copy
 * named zName (in a private temporary directory, editor_tempfile(): the
 * name's extension tells the editor the language) through the front's edit
 * hook, and returns.  When the editor ends, the front calls
 * actions_edited(): the copy is read back (at most maxBytes) and removed,
 * and done(f, ctx, ...) goes on with the command; actions_edited() returns
 * what done returns.  While it runs, actions_editing() is 1: the front
 * draws nothing and reads no keys, and a front that waits for each command
 * (the REPL) waits for it.  0, or -1 + err when the copy could not be
 * written or the editor started (done is not called).
 */
int actions_edit_text(struct actions_front *f, const char *zName, const char *zText,
                      size_t maxBytes, actions_edited_fn done, void *ctx, char *err);
int actions_editing(const struct actions_front *f);
int actions_edited(struct actions_front *f, int rc, const char *zErr);

/*
 * Hand candidate id to the editor (a copy, in a private temp directory)
 * and return 0, or -1 + err when it could not be started.  When the editor
 * exits normally with the text changed, the copy is added as a `human`
 * candidate with id as parent and evaluated; what came of it is said then
 * ("edit: ..." when nothing was added).
 */
int actions_edit(struct actions_front *f, int id, char *err);

/* the words completion offers for an argument kind (candidate ids, columns),
 * for commands_complete(); arg is the struct actions_front */
const char *const *actions_words(enum commands_arg kind, void *arg);

/* ---- the search ---- */

/*
 * The front's search: made when missing (with its lines said through the
 * hooks); a session whose journaled search was running when it stopped is
 * resumed (bResume).  NULL while replaying.
 */
struct search *actions_search_open(struct actions_front *f, int bResume);

/* free the front's search (before the live session is closed) */
void actions_search_close(struct actions_front *f);

/* 1 while the search runs a round or has work in flight (a REPL reading a
 * pipe waits for it) */
int actions_search_busy(const struct actions_front *f);

#endif
