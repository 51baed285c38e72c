/*
 * llm_anthropic.c - Anthropic's Messages API: the request body, and the
 * streamed events (message_start, content_block_start / _delta / _stop,
 * message_delta, message_stop, ping, error) or a whole reply.
 */
#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llm_transport.h"

#define DEFAULT_MAX_TOKENS 8192

static char *body(const struct llm_config *lc, const struct llm_request *rq)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "model", lc->zModel ? lc->zModel : "");
	int maxTokens = rq->maxTokens ? rq->maxTokens : lc->maxTokens;
	cJSON_AddNumberToObject(o, "max_tokens", maxTokens > 0 ? maxTokens : DEFAULT_MAX_TOKENS);
	if (rq->zSystem && *rq->zSystem)
		cJSON_AddStringToObject(o, "system", rq->zSystem);
	cJSON_AddItemToArray(cJSON_AddArrayToObject(o, "messages"),
	                     llm_message("user", rq->zPrompt));
	return llm_body_finish(o, lc);
}

static struct curl_slist *headers(const struct llm_config *lc, struct curl_slist *h)
{
	h = curl_slist_append(h, "anthropic-version: 2023-06-01");
	return llm_headers(h, "x-api-key: ", lc->zApiKey);
}

static void usage(struct llm_parse *p, const cJSON *u)
{
	llm_parse_usage(p, u, "input_tokens", "output_tokens");
}

/* an error object {"type", "message"}: overloaded and API errors may pass */
static int model_error(struct llm_parse *p, const cJSON *e, char *err)
{
	const char *type = cJSON_GetStringValue(cJSON_GetObjectItem(e, "type"));
	const char *m = cJSON_GetStringValue(cJSON_GetObjectItem(e, "message"));
	p->retryable = type && (!strcmp(type, "overloaded_error") || !strcmp(type, "api_error") ||
	                        !strcmp(type, "rate_limit_error"));
	return kl_err(err, "the server reported an error: %s%s%s", type ? type : "error",
	              m ? ": " : "", m ? m : "");
}

static int event(struct llm_parse *p, const char *zEvent, const char *zData, size_t nData,
                 char *err)
{
	p->nEvents++;
	cJSON *o = cJSON_ParseWithLength(zData, nData);
	if (!o)
		return llm_bad_json(err, zEvent, p->nEvents, zData, nData);
	const char *type = cJSON_GetStringValue(cJSON_GetObjectItem(o, "type"));
	if (!type)
		type = zEvent;
	int rc = 0;
	if (!strcmp(type, "message_start")) {
		usage(p, cJSON_GetObjectItem(cJSON_GetObjectItem(o, "message"), "usage"));
	} else if (!strcmp(type, "content_block_start")) {
		const cJSON *b = cJSON_GetObjectItem(o, "content_block");
		const char *t = cJSON_GetStringValue(cJSON_GetObjectItem(b, "text"));
		if (t && *t)
			rc = llm_parse_text(p, t, strlen(t), err);
	} else if (!strcmp(type, "content_block_delta")) {
		const cJSON *d = cJSON_GetObjectItem(o, "delta");
		const char *dt = cJSON_GetStringValue(cJSON_GetObjectItem(d, "type"));
		const char *t = cJSON_GetStringValue(cJSON_GetObjectItem(d, "text"));
		/* thinking and tool-input deltas are not the answer */
		if (t && *t && (!dt || !strcmp(dt, "text_delta")))
			rc = llm_parse_text(p, t, strlen(t), err);
	} else if (!strcmp(type, "message_delta")) {
		const char *s = cJSON_GetStringValue(
		    cJSON_GetObjectItem(cJSON_GetObjectItem(o, "delta"), "stop_reason"));
		if (s)
			snprintf(p->zStop, sizeof p->zStop, "%s", s);
		usage(p, cJSON_GetObjectItem(o, "usage"));
	} else if (!strcmp(type, "message_stop")) {
		p->done = 1;
	} else if (!strcmp(type, "error")) {
		rc = model_error(p, cJSON_GetObjectItem(o, "error"), err);
	}
	/* ping, content_block_stop and event types added later: nothing to do */
	cJSON_Delete(o);
	return rc;
}

static int whole(struct llm_parse *p, const char *z, size_t n, char *err)
{
	cJSON *o = cJSON_ParseWithLength(z, n);
	if (!o)
		return llm_bad_json(err, NULL, 0, z, n);
	int rc = 0;
	const char *type = cJSON_GetStringValue(cJSON_GetObjectItem(o, "type"));
	if (type && !strcmp(type, "error"))
		rc = model_error(p, cJSON_GetObjectItem(o, "error"), err);
	const cJSON *b;
	cJSON_ArrayForEach(b, cJSON_GetObjectItem(o, "content"))
	{
		const char *bt = cJSON_GetStringValue(cJSON_GetObjectItem(b, "type"));
		const char *t = cJSON_GetStringValue(cJSON_GetObjectItem(b, "text"));
		if (rc == 0 && t && bt && !strcmp(bt, "text"))
			rc = llm_parse_text(p, t, strlen(t), err);
	}
	const char *s = cJSON_GetStringValue(cJSON_GetObjectItem(o, "stop_reason"));
	if (s)
		snprintf(p->zStop, sizeof p->zStop, "%s", s);
	usage(p, cJSON_GetObjectItem(o, "usage"));
	cJSON_Delete(o);
	p->done = 1;
	return rc;
}

static void error_message(const char *z, size_t len, char *buf, size_t n)
{
	cJSON *o = cJSON_ParseWithLength(z, len);
	const cJSON *e = cJSON_GetObjectItem(o, "error");
	const char *t = cJSON_GetStringValue(cJSON_GetObjectItem(e, "type"));
	const char *m = cJSON_GetStringValue(cJSON_GetObjectItem(e, "message"));
	if (m)
		snprintf(buf, n, "%s%s%s", t ? t : "", t ? ": " : "", m);
	else
		snprintf(buf, n, "%.*s", (int)(len < 200 ? len : 200), z);
	cJSON_Delete(o);
}

static int finish(struct llm_parse *p, char *err)
{
	if (!p->done) {
		p->retryable = 1;
		return kl_err(err,
		              "the stream ended before message_stop after %ld events: the "
		              "connection dropped",
		              p->nEvents);
	}
	if (!p->text.len)
		return kl_err(err, "the reply is empty (stop reason: %s)",
		              p->zStop[0] ? p->zStop : "none");
	return 0;
}

const struct llm_provider llm_anthropic = {
    .zName = "anthropic",
    .transport = &llm_http,
    .needsModel = 1,
    .keyRequired = 1,
    .zDefaultBase = "https://api.anthropic.com",
    .zPath = "/v1/messages",
    .zKeyEnv = "ANTHROPIC_API_KEY",
    .body = body,
    .headers = headers,
    .event = event,
    .whole = whole,
    .error_message = error_message,
    .finish = finish,
};
