/*
 * llm_openai.c - the OpenAI chat-completions wire format, as OpenAI, vLLM,
 * llama.cpp's server, Ollama and OpenRouter speak it: the request body, and
 * the streamed chunks (choices[0].delta.content, finish_reason, the usage
 * chunk, [DONE]) or a whole reply.
 */
#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llm_transport.h"

static char *body(const struct llm_config *lc, const struct llm_request *rq)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "model", lc->zModel ? lc->zModel : "");
	cJSON *msgs = cJSON_AddArrayToObject(o, "messages");
	if (rq->zSystem && *rq->zSystem)
		cJSON_AddItemToArray(msgs, llm_message("system", rq->zSystem));
	cJSON_AddItemToArray(msgs, llm_message("user", rq->zPrompt));
	int maxTokens = rq->maxTokens ? rq->maxTokens : lc->maxTokens;
	if (maxTokens > 0)
		cJSON_AddNumberToObject(o, "max_tokens", maxTokens);
	cJSON_AddTrueToObject(cJSON_AddObjectToObject(o, "stream_options"), "include_usage");
	return llm_body_finish(o, lc);
}

static struct curl_slist *headers(const struct llm_config *lc, struct curl_slist *h)
{
	return llm_headers(h, "Authorization: Bearer ", lc->zApiKey);
}

/* an {"error": ...} object in a stream or a body: its message */
static int error_object(const cJSON *o, char *err)
{
	const cJSON *e = cJSON_GetObjectItem(o, "error");
	if (!e)
		return 0;
	const char *m = cJSON_IsString(e) ? e->valuestring
	                                  : cJSON_GetStringValue(cJSON_GetObjectItem(e, "message"));
	kl_err(err, "the server reported an error: %s", m ? m : "(no message)");
	return -1;
}

/* one chunk (zKey "delta") or a whole reply (zKey "message"): its error,
 * its first choice's text and finish reason, its usage */
static int chunk(struct llm_parse *p, const cJSON *o, const char *zKey, char *err)
{
	int rc = error_object(o, err);
	const cJSON *c0 = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "choices"), 0);
	if (rc == 0 && c0) {
		p->sawChoice = 1;
		const char *t = cJSON_GetStringValue(
		    cJSON_GetObjectItem(cJSON_GetObjectItem(c0, zKey), "content"));
		if (t && *t)
			rc = llm_parse_text(p, t, strlen(t), err);
		const char *f = cJSON_GetStringValue(cJSON_GetObjectItem(c0, "finish_reason"));
		if (f)
			snprintf(p->zStop, sizeof p->zStop, "%s", f);
	}
	llm_parse_usage(p, cJSON_GetObjectItem(o, "usage"), "prompt_tokens", "completion_tokens");
	return rc;
}

static int event(struct llm_parse *p, const char *zEvent, const char *zData, size_t nData,
                 char *err)
{
	(void)zEvent;
	p->nEvents++;
	if (nData == 6 && !memcmp(zData, "[DONE]", 6)) {
		p->done = 1;
		return 0;
	}
	cJSON *o = cJSON_ParseWithLength(zData, nData);
	if (!o)
		return llm_bad_json(err, NULL, p->nEvents, zData, nData);
	int rc = chunk(p, o, "delta", err);
	cJSON_Delete(o);
	return rc;
}

static int whole(struct llm_parse *p, const char *z, size_t n, char *err)
{
	cJSON *o = cJSON_ParseWithLength(z, n);
	if (!o)
		return llm_bad_json(err, NULL, 0, z, n);
	int rc = chunk(p, o, "message", err);
	cJSON_Delete(o);
	p->done = 1;
	return rc;
}

static void error_message(const char *z, size_t len, char *buf, size_t n)
{
	cJSON *o = cJSON_ParseWithLength(z, len);
	const cJSON *e = cJSON_GetObjectItem(o, "error");
	const char *m = cJSON_IsString(e) ? e->valuestring
	                                  : cJSON_GetStringValue(cJSON_GetObjectItem(e, "message"));
	if (!m)
		m = cJSON_GetStringValue(cJSON_GetObjectItem(o, "detail"));
	if (!m)
		m = cJSON_GetStringValue(cJSON_GetObjectItem(o, "message"));
	if (m)
		snprintf(buf, n, "%s", m);
	else
		snprintf(buf, n, "%.*s", (int)(len < 200 ? len : 200), z);
	cJSON_Delete(o);
}

static int finish(struct llm_parse *p, char *err)
{
	if (!p->done && !p->zStop[0]) {
		p->retryable = 1;
		return kl_err(err,
		              "the stream ended before its end ([DONE]) after %ld events: the "
		              "connection dropped",
		              p->nEvents);
	}
	if (!p->sawChoice)
		return kl_err(err,
		              "the reply has no choices (the server sent %ld events and no text)",
		              p->nEvents);
	if (!p->text.len)
		return kl_err(err, "the reply is empty (finish reason: %s)",
		              p->zStop[0] ? p->zStop : "none");
	return 0;
}

const struct llm_provider llm_openai = {
    .zName = "openai",
    .transport = &llm_http,
    .needsModel = 1,
    .zDefaultBase = "https://api.openai.com/v1",
    .zPath = "/chat/completions",
    .zKeyEnv = "OPENAI_API_KEY",
    .body = body,
    .headers = headers,
    .event = event,
    .whole = whole,
    .error_message = error_message,
    .finish = finish,
};
