/*
 * cmdline.h - the TUI's command line at the bottom of the screen: a small
 * line editor that takes one key at a time from the event loop (so the
 * panes keep updating while a command is typed), with libedit's history
 * (shared with the REPL, persisted under $XDG_STATE_HOME/kloop/) and
 * completion from tui/commands.h.
 */
#ifndef KL_CMDLINE_H
#define KL_CMDLINE_H

#include <histedit.h>
#include <stddef.h>
#include <wchar.h>

#include "commands.h"

#define CMDLINE_MAX 2048

/* what a line is for: each has its prompt and its own history */
enum cmdline_kind {
	CMDLINE_COMMAND, /* ":" a command */
	CMDLINE_FILTER,  /* "/" in the population: a filter */
	CMDLINE_SEARCH,  /* "/" in a text view: the text to find */
};

struct cmdline {
	int active;              /* being edited */
	enum cmdline_kind kind;  /* what the line is for */
	char zPrompt[8];         /* ":" or "/" */
	char buf[CMDLINE_MAX];   /* the text, UTF-8, NUL-terminated */
	size_t len;              /* bytes in buf */
	size_t cur;              /* the cursor's byte offset */
	History *hist;           /* libedit history of the prompt being edited */
	char *zHistPath;         /* where it is saved, or NULL */
	History *histCmd;        /* the `:` commands' history (hist while `:` is open) */
	char *zCmdPath;          /* its file */
	History *histFilter;     /* the `/` filters' history, kept apart */
	char *zFilterPath;       /* its file (the commands' file + "-filter") */
	History *histSearch;     /* the `/` searches' history, apart too */
	char *zSearchPath;       /* its file (the commands' file + "-search") */
	int browsing;            /* walking the history with the arrows */
	char saved[CMDLINE_MAX]; /* the line being typed before browsing */
	char zHint[256];         /* completion candidates to show, or "" */
};

enum cmdline_result {
	CMDLINE_EDITING, /* the key was taken; keep editing */
	CMDLINE_DONE,    /* Enter: the line is in buf */
	CMDLINE_CANCEL,  /* Escape or Ctrl-C (or backspace on an empty line) */
};

/* the history file: $XDG_STATE_HOME/kloop/history (fresh string) */
char *cmdline_history_path(void);
/* a libedit History of up to 1000 lines, loaded from zPath if it exists */
History *cmdline_history_open(const char *zPath);
/* add a line to h (consecutive duplicates are kept once) and save h to
 * zPath (its directory created) when zPath is not NULL */
void cmdline_history_add(History *h, const char *zPath, const char *zLine);

/* set up c with the history file zPath (may be NULL: no persistence); the
 * filters typed after `/` have their own history, in zPath-filter, and the
 * searches theirs, in zPath-search */
void cmdline_init(struct cmdline *c, const char *zHistPath);
void cmdline_free(struct cmdline *c);

/* start editing a line of this kind (its prompt and history) with an
 * initial text and a dim hint shown until the first key (either may be
 * NULL) */
void cmdline_open(struct cmdline *c, enum cmdline_kind kind, const char *zInitial,
                  const char *zHint);

/*
 * One key: wch with isKey 0 is a character, with isKey 1 a curses KEY_*
 * code.  Tab completes through words/arg (see commands_complete()).
 */
enum cmdline_result cmdline_key(struct cmdline *c, wint_t wch, int isKey, commands_words_fn words,
                                void *arg);

/* draw the line at row y, w columns wide, and place the cursor there */
void cmdline_draw(const struct cmdline *c, int y, int w);

#endif
