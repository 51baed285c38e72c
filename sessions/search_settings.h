/*
 * search_settings.h - the search's settings (`kloop search` flags, `set KEY
 * VALUE` while it runs, the settings of search_started and search_set
 * events): their keys, defaults and ranges, one table for the flags, the
 * steering commands and the journal's fold.
 */
#ifndef KL_SEARCH_SETTINGS_H
#define KL_SEARCH_SETTINGS_H

#include <cJSON.h>

/* the settings' defaults as a fresh object (caller frees) */
cJSON *search_defaults(void);

/* a number setting's default (0 for a word or an unknown key) */
double search_setting_default(const char *zKey);

/*
 * Set key zKey of settings to the text zVal, checked: whole numbers in
 * range, a known policy, auto|human, grid|random.  0, or -1 + err naming
 * the key, the value and what was expected.
 */
int search_setting_parse(cJSON *settings, const char *zKey, const char *zVal, char *err);

/*
 * Check a setting's JSON value (a number, or a string for the words, as
 * journals hold them) by the same rules.  bKnown: an unknown key is an
 * error (a search_set); else it passes (a search_started of a kloop with
 * more settings).  0, or -1 + err.
 */
int search_setting_check(const char *zKey, const cJSON *v, int bKnown, char *err);

/* "ideas, branches, ..." (static): the keys search_setting_parse() knows */
const char *search_setting_keys(void);

#endif
