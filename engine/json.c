/*
 * json.c - reading members with a default (json.h).
 */
#include "json.h"

double json_num(const cJSON *o, const char *k, double dflt)
{
	const cJSON *v = cJSON_GetObjectItem(o, k);
	return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

int json_int(const cJSON *o, const char *k, int dflt)
{
	const cJSON *v = cJSON_GetObjectItem(o, k);
	return cJSON_IsNumber(v) ? v->valueint : dflt;
}

const char *json_str(const cJSON *o, const char *k, const char *dflt)
{
	const char *z = cJSON_GetStringValue(cJSON_GetObjectItem(o, k));
	return z ? z : dflt;
}
