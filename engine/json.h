/*
 * json.h - a cJSON object's members read with a default: one place for the
 * getters every layer needs (a journal's events, a worker's messages, a
 * result's fields), where each file had its own.  Keys are matched as
 * cJSON_GetObjectItem() matches them, whatever their case: as the checks
 * that come before a journal's event is applied find them (a check that
 * found "Candidate" and an apply that did not met a NULL candidate in the
 * journal's fuzzer).
 */
#ifndef KL_JSON_H
#define KL_JSON_H

#include <cJSON.h>

/* member k of o as a number, or dflt where o has none or it is not a number */
double json_num(const cJSON *o, const char *k, double dflt);
/* ... as an int (cJSON's valueint: saturated at INT_MIN and INT_MAX) */
int json_int(const cJSON *o, const char *k, int dflt);
/* ... as a string, or dflt where it has none or it is not a string */
const char *json_str(const cJSON *o, const char *k, const char *dflt);

#endif
