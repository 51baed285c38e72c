/*
 * search_settings.h - the search's settings, one table (SEARCH_SETTINGS)
 * that makes everything else: struct search_settings (what the search
 * reads, one member each), the `kloop search` flags (cli/flags.c), `set
 * KEY VALUE` while it runs, the settings of search_started and search_set
 * events (the key is the member's name) and the help text.  Adding a
 * setting is one row; a misspelled one is a compile error.
 */
#ifndef KL_SEARCH_SETTINGS_H
#define KL_SEARCH_SETTINGS_H

#include <cJSON.h>
#include <stdio.h>

#include "harness.h"

#define SEARCH_PARENTS_MAX 16 /* parents a round may choose (policy.h's POLICY_MAX_PICKS) */

/* a setting's kind: a whole number, a number, or one of some words (the
 * first its default) */
enum search_kind { SK_INT, SK_NUM, SK_WORD };

/* the commands whose flags set it (besides `kloop search`) */
#define SS_SEARCH 0u
#define SS_TRANSLATE 1u /* kloop translate too */
#define SS_EVAL 2u      /* kloop eval too */

/*
 * X(key, kind, lo, hi, default, words, flag, alias, what, commands, group, help):
 * key the member and the journal's key; lo..hi the range of a number;
 * words "a|b|c" of a word (the first the default); flag and alias the
 * command line's (NULL: none); what is counted (messages); group, help:
 * `kloop search --help`.
 */
#define SEARCH_SETTINGS(X)                                                                         \
	X(parents, SK_INT, 1, SEARCH_PARENTS_MAX, 2, NULL, "--parents", NULL, "parents",           \
	  SS_SEARCH, "rounds", "parents chosen per round")                                         \
	X(ideas, SK_INT, 1, 16, 3, NULL, "--ideas", "-n", "ideas", SS_SEARCH, "rounds",            \
	  "LLM ideas asked per parent")                                                            \
	X(branches, SK_INT, 1, 16, 2, NULL, "--branches", "-b", "branches", SS_SEARCH, "rounds",   \
	  "implementations of each accepted idea")                                                 \
	X(translations, SK_INT, 1, 16, 2, NULL, "--translations", "-t", "translations",            \
	  SS_TRANSLATE, "rounds", "translations of the reference in round 0")                      \
	X(policy, SK_WORD, 0, 0, 0, "islands|greedy|random", "--policy", NULL, NULL, SS_SEARCH,    \
	  "rounds", "how parents are chosen")                                                      \
	X(seed, SK_INT, 0, 4294967295.0, 1, NULL, "--seed", NULL, "seed values", SS_SEARCH,        \
	  "rounds", "the seed of the policy and the random sweeps")                                \
	X(gate, SK_WORD, 0, 0, 0, "auto|human", "--gate", NULL, NULL, SS_SEARCH, "rounds",         \
	  "who accepts ideas (human: the workbench or kloop shell)")                               \
	X(sweep, SK_WORD, 0, 0, 0, "grid|random", "--sweep", NULL, NULL, SS_SEARCH, "rounds",      \
	  "how the tunables' values are swept")                                                    \
	X(sweep_points, SK_INT, 0, 256, 8, NULL, "--sweep-points", NULL, "points", SS_SEARCH,      \
	  "rounds", "sweep points per parent")                                                     \
	X(crossover, SK_INT, 0, 2, 1, NULL, "--crossover", NULL, "crossover level", SS_SEARCH,     \
	  "rounds", "0 none, 1 functions of two lineages, 2 also the LLM's")                       \
	X(sweep_only, SK_INT, 0, 1, 0, NULL, NULL, NULL, NULL, SS_SEARCH, "rounds",                \
	  "sweeps and crossover only, no LLM (--sweep-only)")                                      \
	X(overlap, SK_INT, 1, 8, 2, NULL, "--overlap", NULL, "rounds open at once", SS_SEARCH,     \
	  "rounds", "rounds open at once (1: one after another)")                                  \
	X(suspect_x, SK_NUM, 1, 1e6, 10, NULL, "--suspect", NULL, "speedup", SS_SEARCH, "judging", \
	  "a speedup above this is held as a suspect")                                             \
	X(bandwidth_gbs, SK_NUM, 0, 1e6, 0, NULL, "--bandwidth", NULL, "GB/s", SS_SEARCH,          \
	  "judging", "GB/s below whose byte time a verdict is a suspect (0: the GPU's own)")       \
	X(peak_tflops, SK_NUM, 0, 1e6, 0, NULL, "--peak-tflops", NULL, "TFLOP/s", SS_SEARCH,       \
	  "judging", "TFLOP/s below whose flop time a verdict is a suspect (0: none)")             \
	X(quick_stop_x, SK_NUM, 0, 1e6, 0, NULL, "--quick-stop", NULL, "times slower", SS_SEARCH,  \
	  "timing", "stop after the quick timing when this many times slower (0: off)")            \
	X(ab_pairs, SK_INT, HARNESS_AB_MIN_PAIRS, 1000, HARNESS_AB_PAIRS, NULL, "--ab-pairs",      \
	  NULL, "pairs", SS_SEARCH, "timing", "interleaved A/B pairs against the incumbent")       \
	X(rounds, SK_INT, 0, 100000, 0, NULL, "--rounds", NULL, "rounds", SS_SEARCH, "budgets",    \
	  "rounds (0: no limit)")                                                                  \
	X(max_candidates, SK_INT, 0, 1000000, 0, NULL, "--max-candidates", NULL, "candidates",     \
	  SS_SEARCH, "budgets", "candidates (0: no limit)")                                        \
	X(budget_usd, SK_NUM, 0, 1e9, 0, NULL, "--budget-usd", NULL, "dollars", SS_SEARCH,         \
	  "budgets", "LLM dollars (0: no limit)")                                                  \
	X(time_s, SK_NUM, 0, 1e9, 0, NULL, "--time", NULL, "seconds", SS_SEARCH, "budgets",        \
	  "seconds of search (0: no limit)")                                                       \
	X(no_improve, SK_INT, 0, 100000, 0, NULL, "--no-improve", NULL, "rounds", SS_SEARCH,       \
	  "budgets", "rounds without a new best (0: no limit)")                                    \
	X(target, SK_NUM, 0, 1e9, 0, NULL, "--target", NULL, "speedup", SS_SEARCH, "budgets",      \
	  "stop at this speedup (0: none)")                                                        \
	X(target_roofline, SK_NUM, 0, 100, 0, NULL, "--target-roofline", NULL,                     \
	  "percent of the roofline", SS_SEARCH, "budgets",                                         \
	  "stop at this percent of the roofline (0: none)")                                        \
	X(precision, SK_WORD, 0, 0, 0, "faithful|any", "--precision", NULL, NULL, SS_EVAL,         \
	  "judging", "whether reduced precision ranks")

#define SEARCH_WORD_MAX 16 /* a word setting's longest word, with its NUL */

/* the settings' ids: SS_parents, SS_ideas, ... */
enum search_setting {
#define SS_ID(key, ...) SS_##key,
	SEARCH_SETTINGS(SS_ID)
#undef SS_ID
	    SS_COUNT
};

/* numbers are doubles (as journals hold them), words their text */
#define SS_MEMBER_SK_INT(key) double key;
#define SS_MEMBER_SK_NUM(key) double key;
#define SS_MEMBER_SK_WORD(key) char key[SEARCH_WORD_MAX];
struct search_settings {
#define SS_MEMBER(key, kind, ...) SS_MEMBER_##kind(key)
	SEARCH_SETTINGS(SS_MEMBER)
#undef SS_MEMBER
};

/* a row of the table */
struct search_setting_info {
	const char *zKey;
	enum search_kind kind;
	double lo, hi, def;
	const char *zWords; /* SK_WORD: "a|b|c" */
	const char *zFlag, *zAlias;
	const char *zWhat;
	unsigned cmds; /* SS_ bits */
	const char *zGroup, *zHelp;
};

extern const struct search_setting_info search_setting_info[SS_COUNT];

/* the settings' defaults */
void search_settings_default(struct search_settings *set);

/* the settings of a journal's settings object o (NULL: none): each key
 * of the table with a value of its kind, the defaults else */
void search_settings_from_json(struct search_settings *set, const cJSON *o);

/* number setting id of set (0 for a word) */
double search_settings_num(const struct search_settings *set, enum search_setting id);

/* the settings' defaults as a fresh object (caller frees), the keys in
 * the table's order */
cJSON *search_defaults(void);

/* the id of key zKey, or -1 */
int search_setting_find(const char *zKey);

/* setting id's JSON value in o (a settings object), or NULL when absent */
const cJSON *search_setting_get(const cJSON *o, enum search_setting id);

/* set setting id of o to number v (replacing what was there) */
void search_setting_put(cJSON *o, enum search_setting id, double v);

/*
 * Set key zKey of settings to the text zVal, checked: whole numbers in
 * range, a known policy, auto|human, grid|random.  0, or -1 + err naming
 * the key, the value and what was expected.
 */
int search_setting_parse(cJSON *settings, const char *zKey, const char *zVal, char *err);
/* the same, its error about the value not naming the key (`gate humn`:
 * the command is the key) */
int search_setting_parse_value(cJSON *settings, const char *zKey, const char *zVal, char *err);

/*
 * Check a setting's JSON value (a number, or a string for the words, as
 * journals hold them) by the same rules.  bKnown: an unknown key is an
 * error (a search_set); else it passes (a search_started of a kloop with
 * more settings).  0, or -1 + err.
 */
int search_setting_check(const char *zKey, const cJSON *v, int bKnown, char *err);

/* "parents, ideas, ..." (static): the keys search_setting_parse() knows */
const char *search_setting_keys(void);

/* the flags of the settings (only: those of rows with one of these SS_
 * bits; 0: all, `kloop search`'s), one a line, grouped, with range and
 * default */
void search_settings_help(FILE *f, unsigned only);

#endif
