/*
 * search_settings.c - the search's settings: keys, defaults, ranges, and
 * their checks (search_settings.h).
 */
#include "search_settings.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "policy.h"
#include "util.h"

static const struct setting {
	const char *zKey;
	double def, lo, hi; /* numbers; lo > hi: a word */
	const char *zWords; /* the words allowed, "|"-separated */
} settings[] = {
    {"parents", 2, 1, POLICY_MAX_PICKS, NULL},
    {"ideas", 3, 1, 16, NULL},
    {"branches", 2, 1, 16, NULL},
    {"translations", 2, 1, 16, NULL},
    {"policy", 0, 1, 0, "islands|greedy|random"},
    {"seed", 1, 0, 4294967295.0, NULL},
    {"gate", 0, 1, 0, "auto|human"},
    {"sweep", 0, 1, 0, "grid|random"},
    {"sweep_points", 8, 0, 256, NULL},
    {"crossover", 1, 0, 2, NULL},
    {"sweep_only", 0, 0, 1, NULL},
    {"overlap", 2, 1, 8, NULL},
    {"suspect_x", 10, 1, 1e6, NULL},
    {"bandwidth_gbs", 0, 0, 1e6, NULL},
    {"peak_tflops", 0, 0, 1e6, NULL},
    {"quick_stop_x", 0, 0, 1e6, NULL},
    {"ab_pairs", HARNESS_AB_PAIRS, HARNESS_AB_MIN_PAIRS, 1000, NULL},
    {"rounds", 0, 0, 100000, NULL},
    {"max_candidates", 0, 0, 1000000, NULL},
    {"budget_usd", 0, 0, 1e9, NULL},
    {"time_s", 0, 0, 1e9, NULL},
    {"no_improve", 0, 0, 100000, NULL},
    {"target", 0, 0, 1e9, NULL},
    {"target_roofline", 0, 0, 100, NULL},
    {"precision", 0, 1, 0, "faithful|any"},
};
#define N_SETTINGS (sizeof settings / sizeof *settings)

const char *search_setting_keys(void)
{
	return "parents, ideas, branches, translations, policy, seed, gate, sweep, sweep_points, "
	       "crossover, sweep_only, overlap, suspect_x, bandwidth_gbs, peak_tflops, "
	       "quick_stop_x, "
	       "ab_pairs, rounds, max_candidates, "
	       "budget_usd, time_s, no_improve, target, target_roofline, precision";
}

cJSON *search_defaults(void)
{
	cJSON *o = cJSON_CreateObject();
	for (size_t i = 0; i < N_SETTINGS; i++) {
		const struct setting *t = &settings[i];
		if (t->zWords) {
			char w[32];
			snprintf(w, sizeof w, "%.*s", (int)strcspn(t->zWords, "|"), t->zWords);
			cJSON_AddStringToObject(o, t->zKey, w);
		} else {
			cJSON_AddNumberToObject(o, t->zKey, t->def);
		}
	}
	return o;
}

int search_setting_parse(cJSON *o, const char *zKey, const char *zVal, char *err)
{
	const struct setting *t = NULL;
	for (size_t i = 0; i < N_SETTINGS; i++)
		if (!strcmp(settings[i].zKey, zKey))
			t = &settings[i];
	if (!t)
		return kl_err(err, "unknown search setting '%s' (one of %s)", zKey,
		              search_setting_keys());
	cJSON *v;
	if (t->zWords) {
		size_t k = strlen(zVal);
		const char *p = strstr(t->zWords, zVal);
		int ok = k && p && (p == t->zWords || p[-1] == '|') && (p[k] == '|' || !p[k]);
		if (!ok)
			return kl_err(err, "%s: expected one of %s, got '%s'", zKey, t->zWords,
			              zVal);
		v = cJSON_CreateString(zVal);
	} else {
		double d = 0;
		int bad = num_parse(zVal, &d) < 0;
		int whole = strcmp(zKey, "budget_usd") && strcmp(zKey, "time_s") &&
		            strcmp(zKey, "target") && strcmp(zKey, "target_roofline") &&
		            strcmp(zKey, "suspect_x") && strcmp(zKey, "bandwidth_gbs") &&
		            strcmp(zKey, "peak_tflops") && strcmp(zKey, "quick_stop_x");
		if (bad || !isfinite(d) || d < t->lo || d > t->hi || (whole && d != floor(d)))
			return kl_err(err, "%s: expected %s from %g to %g, got '%s'", zKey,
			              whole ? "a whole number" : "a number", t->lo, t->hi, zVal);
		v = cJSON_CreateNumber(d);
	}
	cJSON_DeleteItemFromObjectCaseSensitive(o, zKey);
	cJSON_AddItemToObject(o, zKey, v);
	return 0;
}

double search_setting_default(const char *zKey)
{
	for (size_t i = 0; i < N_SETTINGS; i++)
		if (!strcmp(settings[i].zKey, zKey))
			return settings[i].def;
	return 0;
}

int search_setting_check(const char *zKey, const cJSON *v, int bKnown, char *err)
{
	const struct setting *t = NULL;
	for (size_t i = 0; i < N_SETTINGS; i++)
		if (!strcmp(settings[i].zKey, zKey))
			t = &settings[i];
	if (!t)
		return bKnown ? kl_err(err, "unknown search setting '%s' (one of %s)", zKey,
		                       search_setting_keys())
		              : 0;
	char buf[64];
	const char *z = NULL;
	if (t->zWords && cJSON_IsString(v))
		z = v->valuestring;
	else if (!t->zWords && cJSON_IsNumber(v) &&
	         snprintf(buf, sizeof buf, "%.17g", v->valuedouble))
		z = buf;
	else
		return kl_err(err, "%s: expected %s", zKey, t->zWords ? "a word" : "a number");
	cJSON *o = cJSON_CreateObject();
	int rc = search_setting_parse(o, zKey, z, err);
	cJSON_Delete(o);
	return rc;
}
