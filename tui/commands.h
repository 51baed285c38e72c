/*
 * commands.h - kloop's command language, shared by the TUI's `:` line and
 * the line REPL (`kloop shell`): the table of commands (one entry each,
 * with its arguments, help and handler), the parser (words split by
 * libedit's tokenizer, so quoting works as in a shell), help, and
 * completion.  The parser knows nothing of the engine: a parsed line says
 * what was asked, and actions_run() calls its entry's handler.
 */
#ifndef KL_COMMANDS_H
#define KL_COMMANDS_H

#include <stddef.h>

#include "util.h"

/* what an argument is */
enum commands_arg {
	ARG_NONE,
	ARG_CAND,   /* a candidate id: 3 or #3 */
	ARG_IDEA,   /* an idea id */
	ARG_COUNT,  /* a positive whole number */
	ARG_INT,    /* a whole number, maybe negative */
	ARG_FILE,   /* a path */
	ARG_COLUMN, /* a population column */
	ARG_ORDER,  /* asc or desc */
	ARG_TERMS,  /* filter terms: every remaining word */
	ARG_TEXT,   /* free text: every remaining word, joined by spaces */
	ARG_COMMAND /* a command name */
};

#define COMMANDS_MAX_ARGS 3
#define COMMANDS_MAX_WORDS 32

struct actions_front;
struct commands_line;

/*
 * One command: everything about it is this entry (as tmux's cmd_entry):
 * its names, its arguments (which the parser checks), its usage and help
 * line (for `help`, and for the `kloop` verb of the same name, cli/main.c),
 * and the function that does it (tui/verbs.h).  Adding a command is one
 * entry of commands_table (tui/command_table.c) and its handler.
 */
struct commands_def {
	const char *name;                          /* the word that names it */
	const char *alias;                         /* a short form, or NULL */
	enum commands_arg aArg[COMMANDS_MAX_ARGS]; /* its arguments, ARG_NONE-ended */
	int nRequired;                             /* how many of them must be given */
	const char *usage;                         /* "diff ID [ID]" */
	const char *help;                          /* one line */
	int replayOnly;                            /* only while replaying a journal */
	/* more that `help NAME` says, made when asked (the words it takes), or NULL */
	const char *(*more)(void);
	/* do it: 0, or -1 when it failed (the reason said through the front's hooks) */
	int (*run)(struct actions_front *f, const struct commands_line *c);
};

/* a parsed command line */
struct commands_line {
	const struct commands_def *def;  /* the command */
	int bang;                        /* written with a trailing ! (quit!: do not ask) */
	int nArg;                        /* arguments given (words for TERMS/TEXT) */
	char *azArg[COMMANDS_MAX_WORDS]; /* their text, owned */
	long aNum[COMMANDS_MAX_WORDS];   /* the value of CAND, IDEA, COUNT and INT arguments */
};

/* the table, ended by a NULL name */
extern const struct commands_def commands_table[];

/* the command named (or aliased) z, or NULL */
const struct commands_def *commands_find(const char *z);
/* the command (or alias) an unknown z is a typo of ("compar": "compare"),
 * by suggest.h's distance; NULL when none is near enough */
const char *commands_nearest(const char *z);

/*
 * Parse one line.  Returns 1 with *out filled (free with
 * commands_line_free()), 0 for a blank line or a comment (# ...), or -1
 * with err naming the word that is wrong and what was expected (an
 * unknown command, a missing or extra argument, an id that is not a
 * number, an unclosed quote).
 */
int commands_parse(const char *zLine, struct commands_line *out, char *err);
void commands_line_free(struct commands_line *c);
/* arguments from..nArg-1 of c joined by single spaces (a TEXT or TERMS
 * argument's words as one text), into sb (cleared first) */
void commands_text(const struct commands_line *c, int from, strbuf *sb);

/* the words of zLine split as the parser splits them; *pArgv (each word
 * and the array itself) is the caller's to free with commands_free_words().
 * Returns the count, or -1 + err for an unclosed quote. */
int commands_words(const char *zLine, char ***pArgv, char *err);
void commands_free_words(char **av, int n);

/*
 * Append the help to sb: every command (replay ones only when bReplay)
 * with its usage and help line, or, with zName, that one command's.
 * Returns 0, or -1 when zName names no command.
 */
int commands_help(strbuf *sb, const char *zName, int bReplay);

/* the words a front end offers for completing an argument of a kind
 * (candidate ids, idea ids, columns); NULL-ended, owned by the front end */
typedef const char *const *(*commands_words_fn)(enum commands_arg kind, void *arg);

/*
 * Complete the word that ends at byte `cursor` of zLine: command names
 * for the first word, then what the command's argument takes (asking
 * words() for ids and columns).  Fills *pMatches with a fresh NULL-ended
 * array of fresh strings (free with commands_free_words(m, -1)) and *pStart
 * with the byte where the word begins; returns the number of matches.
 */
int commands_complete(const char *zLine, size_t cursor, commands_words_fn words, void *arg,
                      char ***pMatches, size_t *pStart);

/* the longest common prefix of the n strings in a (fresh string) */
char *commands_common_prefix(char *const *a, int n);

#endif
