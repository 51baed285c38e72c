/*
 * search_settings.c - the search's settings: the table's rows, defaults,
 * checks and help (search_settings.h).
 */
#include "search_settings.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "suggest.h"
#include "util.h"

const struct search_setting_info search_setting_info[SS_COUNT] = {
#define SS_ROW(key, kind, lo, hi, def, words, flag, alias, what, cmds, group, help)                \
	{#key, kind, lo, hi, def, words, flag, alias, what, cmds, group, help},
    SEARCH_SETTINGS(SS_ROW)
#undef SS_ROW
};

/* the first word of "a|b|c" into w (n bytes) */
static void first_word(const char *zWords, char *w, size_t n)
{
	snprintf(w, n, "%.*s", (int)strcspn(zWords, "|"), zWords);
}

void search_settings_default(struct search_settings *set)
{
	search_settings_from_json(set, NULL);
}

void search_settings_from_json(struct search_settings *set, const cJSON *o)
{
	const cJSON *v;
#define SS_GET_SK_INT(key)                                                                         \
	set->key = cJSON_IsNumber(v) ? v->valuedouble : search_setting_info[SS_##key].def;
#define SS_GET_SK_NUM(key) SS_GET_SK_INT(key)
#define SS_GET_SK_WORD(key)                                                                        \
	if (cJSON_IsString(v))                                                                     \
		snprintf(set->key, sizeof set->key, "%s", v->valuestring);                         \
	else                                                                                       \
		first_word(search_setting_info[SS_##key].zWords, set->key, sizeof set->key);
#define SS_GET(key, kind, ...)                                                                     \
	v = search_setting_get(o, SS_##key);                                                       \
	SS_GET_##kind(key)
	SEARCH_SETTINGS(SS_GET)
#undef SS_GET
#undef SS_GET_SK_WORD
#undef SS_GET_SK_NUM
#undef SS_GET_SK_INT
}

double search_settings_num(const struct search_settings *set, enum search_setting id)
{
	switch (id) {
#define SS_NUM_SK_INT(key) return set->key;
#define SS_NUM_SK_NUM(key) return set->key;
#define SS_NUM_SK_WORD(key) return 0;
#define SS_NUM(key, kind, ...)                                                                     \
	case SS_##key:                                                                             \
		SS_NUM_##kind(key)
		SEARCH_SETTINGS(SS_NUM)
#undef SS_NUM
#undef SS_NUM_SK_WORD
#undef SS_NUM_SK_NUM
#undef SS_NUM_SK_INT
	case SS_COUNT:
		break;
	}
	return 0;
}

cJSON *search_defaults(void)
{
	cJSON *o = cJSON_CreateObject();
	for (int i = 0; i < SS_COUNT; i++) {
		const struct search_setting_info *t = &search_setting_info[i];
		if (t->kind == SK_WORD) {
			char w[SEARCH_WORD_MAX];
			first_word(t->zWords, w, sizeof w);
			cJSON_AddStringToObject(o, t->zKey, w);
		} else {
			cJSON_AddNumberToObject(o, t->zKey, t->def);
		}
	}
	return o;
}

int search_setting_find(const char *zKey)
{
	for (int i = 0; i < SS_COUNT; i++)
		if (!strcmp(search_setting_info[i].zKey, zKey))
			return i;
	return -1;
}

const cJSON *search_setting_get(const cJSON *o, enum search_setting id)
{
	return o ? cJSON_GetObjectItem(o, search_setting_info[id].zKey) : NULL;
}

void search_setting_put(cJSON *o, enum search_setting id, double v)
{
	cJSON_DeleteItemFromObjectCaseSensitive(o, search_setting_info[id].zKey);
	cJSON_AddNumberToObject(o, search_setting_info[id].zKey, v);
}

const char *search_setting_keys(void)
{
	static char buf[SS_COUNT * 24];
	if (!buf[0])
		for (int i = 0; i < SS_COUNT; i++)
			snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%s", i ? ", " : "",
			         search_setting_info[i].zKey);
	return buf;
}

/* search_setting_parse, its errors about the value naming the key where
 * bNamed, else saying only what was wrong with the value */
static int setting_parse(cJSON *o, const char *zKey, const char *zVal, int bNamed, char *err)
{
	const char *zAt = bNamed ? zKey : "", *zSep = bNamed ? ": " : "";
	int id = search_setting_find(zKey);
	if (id < 0) {
		const char *az[SS_COUNT];
		for (int i = 0; i < SS_COUNT; i++)
			az[i] = search_setting_info[i].zKey;
		const char *near = suggest_nearest(zKey, az, SS_COUNT);
		if (near)
			return kl_err(err,
			              "unknown search setting '%s': did you mean '%s'? (one of %s)",
			              zKey, near, search_setting_keys());
		return kl_err(err, "unknown search setting '%s' (one of %s)", zKey,
		              search_setting_keys());
	}
	const struct search_setting_info *t = &search_setting_info[id];
	cJSON *v;
	if (t->kind == SK_WORD) {
		size_t k = strlen(zVal);
		const char *p = strstr(t->zWords, zVal);
		int ok = k && p && (p == t->zWords || p[-1] == '|') && (p[k] == '|' || !p[k]);
		if (!ok) {
			/* the nearest of the words to a typo of one */
			char words[128], *az[16], *save = NULL;
			int n = 0;
			snprintf(words, sizeof words, "%s", t->zWords);
			for (char *w = strtok_r(words, "|", &save); w && n < 16;
			     w = strtok_r(NULL, "|", &save))
				az[n++] = w;
			const char *near =
			    suggest_nearest(zVal, (const char *const *)az, (size_t)n);
			if (near)
				return kl_err(
				    err, "%s%sexpected one of %s, got '%s': did you mean '%s'?",
				    zAt, zSep, t->zWords, zVal, near);
			return kl_err(err, "%s%sexpected one of %s, got '%s'", zAt, zSep, t->zWords,
			              zVal);
		}
		v = cJSON_CreateString(zVal);
	} else {
		double d = 0;
		int bad = num_parse(zVal, &d) < 0;
		int whole = t->kind == SK_INT;
		if (bad || !isfinite(d) || d < t->lo || d > t->hi || (whole && d != floor(d)))
			return kl_err(err, "%s%sexpected %s from %g to %g, got '%s'", zAt, zSep,
			              whole ? "a whole number" : "a number", t->lo, t->hi, zVal);
		v = cJSON_CreateNumber(d);
	}
	cJSON_DeleteItemFromObjectCaseSensitive(o, zKey);
	cJSON_AddItemToObject(o, zKey, v);
	return 0;
}

int search_setting_parse(cJSON *o, const char *zKey, const char *zVal, char *err)
{
	return setting_parse(o, zKey, zVal, 1, err);
}

int search_setting_parse_value(cJSON *o, const char *zKey, const char *zVal, char *err)
{
	return setting_parse(o, zKey, zVal, 0, err);
}

int search_setting_check(const char *zKey, const cJSON *v, int bKnown, char *err)
{
	int id = search_setting_find(zKey);
	if (id < 0)
		return bKnown ? kl_err(err, "unknown search setting '%s' (one of %s)", zKey,
		                       search_setting_keys())
		              : 0;
	const struct search_setting_info *t = &search_setting_info[id];
	char buf[64];
	const char *z = NULL;
	if (t->kind == SK_WORD && cJSON_IsString(v))
		z = v->valuestring;
	else if (t->kind != SK_WORD && cJSON_IsNumber(v) &&
	         snprintf(buf, sizeof buf, "%.17g", v->valuedouble))
		z = buf;
	else
		return kl_err(err, "%s: expected %s", zKey,
		              t->kind == SK_WORD ? "a word" : "a number");
	cJSON *o = cJSON_CreateObject();
	int rc = search_setting_parse(o, zKey, z, err);
	cJSON_Delete(o);
	return rc;
}

void search_settings_help(FILE *f, unsigned only)
{
	const char *zGroup = NULL;
	for (int pass = 0; pass < SS_COUNT; pass++) {
		/* the groups in the order they first appear */
		const char *g = search_setting_info[pass].zGroup;
		int seen = 0;
		for (int k = 0; k < pass; k++)
			seen |= !strcmp(search_setting_info[k].zGroup, g);
		if (seen)
			continue;
		for (int i = pass; i < SS_COUNT; i++) {
			const struct search_setting_info *t = &search_setting_info[i];
			if (strcmp(t->zGroup, g) || !t->zFlag || (only && !(t->cmds & only)))
				continue;
			if (zGroup != g)
				fprintf(f, "\nsearch settings, %s%s:\n", g,
				        only ? "" : " (`set KEY VALUE` while a search runs)");
			zGroup = g;
			char name[64], range[128];
			snprintf(name, sizeof name, "%s%s%s %s", t->zFlag, t->zAlias ? ", " : "",
			         t->zAlias ? t->zAlias : "", t->kind == SK_WORD ? "WORD" : "N");
			if (t->kind == SK_WORD) {
				char w[SEARCH_WORD_MAX];
				first_word(t->zWords, w, sizeof w);
				snprintf(range, sizeof range, "%s, default %s", t->zWords, w);
			} else {
				snprintf(range, sizeof range, "%s%.15g..%.15g, default %g",
				         t->kind == SK_INT ? "" : "number ", t->lo, t->hi, t->def);
			}
			fprintf(f, "  %-24s %s [%s; set %s]\n", name, t->zHelp, range, t->zKey);
		}
	}
}
