/*
 * llm.c - the request machinery behind every provider: a queue with a
 * limit in flight, attempts over libcurl's multi interface (its sockets and
 * timers on kloop's loop) or a command's pipes, a watchdog per attempt
 * (deadline and stall), retries with backoff, cancellation, and the reply
 * with its usage, cost and latency, the key redacted from all of it.
 */
#include "llm.h"

#include <curl/curl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "llm_provider.h"
#include "proc.h"
#include "sse.h"

#define ERROR_BODY_MAX (64u << 10)
#define RETRY_AFTER_MAX_S 600.0

enum req_state { REQ_QUEUED, REQ_RUNNING, REQ_WAITING, REQ_DONE };

struct req {
	int id;
	struct llm *c;
	char *zSystem, *zPrompt;
	int maxTokens;
	struct llm_hooks h;
	void *arg;
	enum req_state state;
	int cancelled;   /* llm_cancel() was called */
	int attempts;    /* attempts started */
	double t0;       /* submission time */
	double tFirst;   /* first text (-1: none yet) */
	long long timer; /* the retry delay (WAITING) */
	/* the current attempt */
	CURL *easy;
	struct curl_slist *hdrs;
	char curlErr[CURL_ERROR_SIZE];
	struct llm_cmd *cmd;
	long long watchdog; /* deadline and stall timer */
	double tStart;      /* the attempt's start */
	double tLast;       /* the last bytes received */
	int decided;        /* the HTTP status and content type were read */
	int streaming;      /* the body is an event stream */
	long httpStatus;
	struct sse sse;
	struct llm_parse parse;
	strbuf raw;    /* a body that is not a stream (an error, a whole reply) */
	int failed;    /* our own error ended the attempt (zErr) */
	int retryable; /* ... and it may pass on a retry */
	char zErr[KL_ERRLEN];
	struct req *next;
};

struct llm {
	struct loop *l;
	struct llm_config cfg; /* strings below are owned copies */
	char *zProvider, *zModel, *zBaseUrl, *zApiKey, *zCommand, *zEndpoint;
	const struct llm_provider *prov; /* NULL for the command provider */
	CURLM *multi;
	long long curlTimer; /* libcurl's timeout on the loop (0: none) */
	long long kick;      /* pending pump (0: none) */
	struct req *reqs;    /* every request not finished, in submission order */
	int nextId;
	int running;   /* attempts running */
	unsigned seed; /* jitter */
};

/* ---- configuration ---- */

void llm_config_defaults(struct llm_config *lc)
{
	memset(lc, 0, sizeof *lc);
	lc->timeoutS = 600;
	lc->stallS = 120;
	lc->maxRetries = 3;
	lc->backoffS = 1;
	lc->backoffMaxS = 60;
	lc->maxInFlight = 4;
	lc->temperature = -1;
	lc->priceIn = lc->priceOut = -1;
}

int llm_config_from(struct llm_config *lc, const struct config *cfg, char *err)
{
	llm_config_defaults(lc);
	const char *p = cfg->zProvider;
	if (!p)
		return kl_err(err,
		              "no LLM provider: give --provider openai|anthropic|command or set "
		              "`provider = ...` in the config file");
	lc->zProvider = p;
	lc->zModel = cfg->zModel;
	lc->zBaseUrl = cfg->zBaseUrl;
	lc->zCommand = cfg->zCommand;
	lc->timeoutS = cfg->llmTimeoutS;
	lc->stallS = cfg->llmStallS;
	lc->maxRetries = cfg->llmRetries;
	lc->maxInFlight = cfg->llmMaxInFlight;
	lc->maxTokens = cfg->llmMaxTokens;
	lc->temperature = cfg->llmTemperature;
	lc->priceIn = cfg->priceIn;
	lc->priceOut = cfg->priceOut;
	if (!strcmp(p, "command")) {
		if (!cfg->zCommand || !*cfg->zCommand)
			return kl_err(err, "the command provider needs a command: set `command = "
			                   "PROGRAM ARGS` in the config file");
		return 0;
	}
	const struct llm_provider *prov = !strcmp(p, "openai")      ? &llm_openai
	                                  : !strcmp(p, "anthropic") ? &llm_anthropic
	                                                            : NULL;
	if (!prov)
		return kl_err(err, "provider: expected openai, anthropic or command, got '%s'", p);
	if (!cfg->zModel || !*cfg->zModel)
		return kl_err(err,
		              "no model for the %s provider: give --model NAME or set `model = "
		              "NAME` in the config file",
		              p);
	const char *var = cfg->zApiKeyEnv && *cfg->zApiKeyEnv ? cfg->zApiKeyEnv : prov->zKeyEnv;
	const char *key = getenv(var);
	lc->zApiKey = key;
	/* OpenAI-compatible local servers (vLLM, llama.cpp, Ollama) need no key */
	if ((!key || !*key) && (prov == &llm_anthropic || cfg->zApiKeyEnv))
		return kl_err(err, "no API key: the environment variable %s is not set", var);
	return 0;
}

/* ---- redaction ---- */

void llm_redact(const struct llm *c, strbuf *sb)
{
	if (!c->zApiKey || !*c->zApiKey || !sb->buf)
		return;
	size_t k = strlen(c->zApiKey);
	char *p;
	size_t from = 0;
	while (from < sb->len && (p = memmem(sb->buf + from, sb->len - from, c->zApiKey, k))) {
		size_t at = (size_t)(p - sb->buf);
		strbuf t = STRBUF_INIT;
		sb_add(&t, sb->buf, at);
		sb_adds(&t, "[redacted]");
		sb_add(&t, sb->buf + at + k, sb->len - at - k);
		sb_free(sb);
		*sb = t;
		from = at + 10;
	}
}

/* ---- the parse state shared with the providers ---- */

int llm_parse_text(struct llm_parse *p, const char *z, size_t n, char *err)
{
	if (p->text.len + n > p->maxText)
		return kl_err(err, "the reply is longer than the limit of %zu bytes", p->maxText);
	sb_add(&p->text, z, n);
	if (p->delta)
		p->delta(p->arg, z, n);
	return 0;
}

int llm_bad_json(char *err, const char *zEvent, long n, const char *z, size_t len)
{
	int show = (int)(len < 60 ? len : 60);
	const char *more = len > 60 ? "..." : "";
	int named = zEvent && *zEvent && strcmp(zEvent, "message");
	if (n > 0)
		return kl_err(err, "malformed JSON in event %ld%s%s%s of the stream: %.*s%s", n,
		              named ? " (" : "", named ? zEvent : "", named ? ")" : "", show, z,
		              more);
	return kl_err(err, "malformed JSON in the reply: %.*s%s", show, z, more);
}

void llm_parse_usage(struct llm_parse *p, const cJSON *u, const char *zIn, const char *zOut)
{
	const cJSON *in = cJSON_GetObjectItem(u, zIn);
	const cJSON *out = cJSON_GetObjectItem(u, zOut);
	if (cJSON_IsNumber(in))
		p->inTokens = (long)in->valuedouble;
	if (cJSON_IsNumber(out))
		p->outTokens = (long)out->valuedouble;
}

cJSON *llm_message(const char *zRole, const char *zContent)
{
	cJSON *m = cJSON_CreateObject();
	cJSON_AddStringToObject(m, "role", zRole);
	cJSON_AddStringToObject(m, "content", zContent);
	return m;
}

char *llm_body_finish(cJSON *o, const struct llm_config *lc)
{
	if (lc->temperature >= 0)
		cJSON_AddNumberToObject(o, "temperature", lc->temperature);
	cJSON_AddTrueToObject(o, "stream");
	char *z = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	return z;
}

struct curl_slist *llm_headers(struct curl_slist *h, const char *zKeyHeader, const char *zKey)
{
	h = curl_slist_append(h, "Content-Type: application/json");
	h = curl_slist_append(h, "Accept: text/event-stream");
	/* no "Expect: 100-continue" wait before sending a long prompt */
	h = curl_slist_append(h, "Expect:");
	if (zKey && *zKey) {
		char *a = xasprintf("%s%s", zKeyHeader, zKey);
		h = curl_slist_append(h, a);
		memset(a, 0, strlen(a));
		free(a);
	}
	return h;
}

/* ---- requests ---- */

static void pump(struct llm *c);
static void schedule(struct llm *c);

static void on_delta(void *arg, const char *z, size_t n)
{
	struct req *r = arg;
	if (r->tFirst < 0)
		r->tFirst = now_s() - r->t0;
	if (r->h.delta && !r->cancelled)
		r->h.delta(r->id, z, n, r->arg);
}

static void reset_attempt(struct req *r)
{
	sse_free(&r->sse);
	sse_init(&r->sse, r->c->cfg.maxReplyBytes + 4096);
	sb_free(&r->parse.text);
	memset(&r->parse, 0, sizeof r->parse);
	r->parse.inTokens = r->parse.outTokens = -1;
	r->parse.maxText = r->c->cfg.maxReplyBytes;
	r->parse.delta = on_delta;
	r->parse.arg = r;
	sb_reset(&r->raw);
	r->decided = r->streaming = 0;
	r->httpStatus = 0;
	r->failed = r->retryable = 0;
	r->zErr[0] = r->curlErr[0] = 0;
}

/* stop the current attempt's transport (no callbacks) */
static void stop_attempt(struct req *r)
{
	struct llm *c = r->c;
	if (r->watchdog)
		loop_del_timer(c->l, r->watchdog);
	r->watchdog = 0;
	if (r->easy) {
		curl_multi_remove_handle(c->multi, r->easy);
		curl_easy_cleanup(r->easy);
		r->easy = NULL;
	}
	if (r->hdrs)
		curl_slist_free_all(r->hdrs);
	r->hdrs = NULL;
	llm_cmd_free(r->cmd);
	r->cmd = NULL;
	if (r->state == REQ_RUNNING) {
		c->running--;
		r->state = REQ_QUEUED;
	}
}

static void unlink_req(struct llm *c, struct req *r)
{
	for (struct req **pp = &c->reqs; *pp; pp = &(*pp)->next)
		if (*pp == r) {
			*pp = r->next;
			return;
		}
}

static void free_req(struct req *r)
{
	sse_free(&r->sse);
	sb_free(&r->parse.text);
	sb_free(&r->raw);
	free(r->zSystem);
	free(r->zPrompt);
	free(r);
}

/* end request r: stop it, call done, free it */
static void finish(struct req *r, const char *zStatus, const char *zWhy)
{
	struct llm *c = r->c;
	stop_attempt(r);
	if (r->timer)
		loop_del_timer(c->l, r->timer);
	r->timer = 0;
	r->state = REQ_DONE;
	unlink_req(c, r);
	strbuf why = STRBUF_INIT;
	if (zWhy)
		sb_adds(&why, zWhy);
	llm_redact(c, &why);
	llm_redact(c, &r->parse.text);
	struct llm_reply rep = {
	    .id = r->id,
	    .zStatus = zStatus,
	    .zText = r->parse.text.buf ? r->parse.text.buf : "",
	    .nText = r->parse.text.len,
	    .zError = zWhy ? why.buf : NULL,
	    .zStop = r->parse.zStop,
	    .httpStatus = (int)r->httpStatus,
	    .inTokens = r->parse.inTokens,
	    .outTokens = r->parse.outTokens,
	    .cost = -1,
	    .latencyS = now_s() - r->t0,
	    .firstTokenS = r->tFirst,
	    .attempts = r->attempts,
	};
	if (c->cfg.priceIn >= 0 && c->cfg.priceOut >= 0 && rep.inTokens >= 0 && rep.outTokens >= 0)
		rep.cost = ((double)rep.inTokens * c->cfg.priceIn +
		            (double)rep.outTokens * c->cfg.priceOut) /
		           1e6;
	r->h.done(r->id, &rep, r->arg);
	sb_free(&why);
	free_req(r);
	schedule(c);
}

static void on_retry_timer(struct loop *l, long long id, void *arg)
{
	(void)l, (void)id;
	struct req *r = arg;
	r->timer = 0;
	r->state = REQ_QUEUED;
	pump(r->c);
}

/* the attempt failed with zWhy: retry it (after retryAfter seconds when the
 * server said so) or end the request */
static void attempt_failed(struct req *r, int retryable, double retryAfter, const char *zWhy)
{
	struct llm *c = r->c;
	stop_attempt(r);
	if (r->cancelled) {
		finish(r, "cancelled", "cancelled");
		return;
	}
	if (!retryable || r->attempts > c->cfg.maxRetries || retryAfter > RETRY_AFTER_MAX_S) {
		char *m = retryAfter > RETRY_AFTER_MAX_S
		              ? xasprintf("%s (the server asks to retry after %.0f s; not waiting)",
		                          zWhy, retryAfter)
		          : r->attempts > 1 ? xasprintf("%s (after %d attempts)", zWhy, r->attempts)
		                            : xstrdup(zWhy);
		finish(r, "error", m);
		free(m);
		return;
	}
	double b = c->cfg.backoffS * pow(2, r->attempts - 1);
	if (b > c->cfg.backoffMaxS)
		b = c->cfg.backoffMaxS;
	/* equal jitter: half the delay fixed, half random */
	double delay = b / 2 + b / 2 * ((double)rand_r(&c->seed) / RAND_MAX);
	if (retryAfter > delay)
		delay = retryAfter;
	r->state = REQ_WAITING;
	if (r->h.retry) {
		strbuf why = STRBUF_INIT;
		sb_adds(&why, zWhy);
		llm_redact(c, &why);
		r->h.retry(r->id, r->attempts + 1, delay, why.buf, r->arg);
		sb_free(&why);
	}
	r->timer = loop_add_timer(c->l, delay, on_retry_timer, r);
}

/* ---- the watchdog: an attempt's deadline and stall limit ---- */

static void on_watchdog(struct loop *l, long long id, void *arg)
{
	(void)id;
	struct req *r = arg;
	struct llm *c = r->c;
	r->watchdog = 0;
	double t = now_s();
	double left = r->tStart + c->cfg.timeoutS - t, quiet = c->cfg.stallS - (t - r->tLast);
	if (left <= 0 || quiet <= 0) {
		char why[160];
		if (left <= 0)
			snprintf(why, sizeof why, "timed out after %.3g s", c->cfg.timeoutS);
		else
			snprintf(why, sizeof why, "stalled: nothing received for %.3g s%s",
			         c->cfg.stallS, r->decided ? " in the middle of the reply" : "");
		/* a command is not retried: it is a local program, not a network */
		attempt_failed(r, c->prov != NULL, 0, why);
		return;
	}
	r->watchdog = loop_add_timer(l, left < quiet ? left : quiet, on_watchdog, r);
}

/* ---- HTTP attempts ---- */

static int on_sse(const char *zEvent, const char *zData, size_t nData, void *arg, char *err)
{
	struct req *r = arg;
	return r->c->prov->event(&r->parse, zEvent, zData, nData, err);
}

static size_t on_write(char *p, size_t size, size_t n, void *arg)
{
	struct req *r = arg;
	size_t len = size * n;
	if (r->cancelled || r->failed)
		return 0;
	r->tLast = now_s();
	if (!r->decided) {
		r->decided = 1;
		char *ct = NULL;
		curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &r->httpStatus);
		curl_easy_getinfo(r->easy, CURLINFO_CONTENT_TYPE, &ct);
		r->streaming = r->httpStatus / 100 == 2 && ct && strstr(ct, "text/event-stream");
	}
	if (r->streaming) {
		if (sse_feed(&r->sse, p, len, on_sse, r, r->zErr) < 0) {
			r->failed = 1;
			r->retryable = r->parse.retryable;
			return 0;
		}
		return len;
	}
	size_t max = r->httpStatus / 100 == 2 ? r->c->cfg.maxReplyBytes : ERROR_BODY_MAX;
	if (r->raw.len + len > max) {
		if (r->httpStatus / 100 == 2) {
			kl_err(r->zErr, "the reply is longer than the limit of %zu bytes", max);
			r->failed = 1;
			return 0;
		}
		len = max - r->raw.len; /* keep the start of an error body */
		sb_add(&r->raw, p, len);
		return size * n;
	}
	sb_add(&r->raw, p, len);
	return len;
}

static int retryable_status(long s)
{
	return s == 408 || s == 409 || s == 429 || s / 100 == 5;
}

static int retryable_curl(CURLcode rc)
{
	switch (rc) {
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_CONNECT:
	case CURLE_OPERATION_TIMEDOUT:
	case CURLE_SEND_ERROR:
	case CURLE_RECV_ERROR:
	case CURLE_GOT_NOTHING:
	case CURLE_PARTIAL_FILE:
	case CURLE_HTTP2:
	case CURLE_HTTP2_STREAM:
	case CURLE_SSL_CONNECT_ERROR:
		return 1;
	default:
		return 0;
	}
}

/* an HTTP attempt ended with curl's result rc */
static void http_done(struct req *r, CURLcode rc)
{
	struct llm *c = r->c;
	char why[KL_ERRLEN];
	if (r->cancelled) {
		stop_attempt(r);
		finish(r, "cancelled", "cancelled");
		return;
	}
	if (!r->httpStatus)
		curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &r->httpStatus);
	curl_off_t ra = -1;
	curl_easy_getinfo(r->easy, CURLINFO_RETRY_AFTER, &ra);
	if (r->failed) {
		attempt_failed(r, r->retryable, 0, r->zErr);
		return;
	}
	if (rc != CURLE_OK) {
		const char *m = r->curlErr[0] ? r->curlErr : curl_easy_strerror(rc);
		if (rc == CURLE_PARTIAL_FILE || rc == CURLE_RECV_ERROR)
			snprintf(why, sizeof why, "the connection dropped %s: %s",
			         r->decided ? "in the middle of the reply" : "before a reply", m);
		else
			snprintf(why, sizeof why, "cannot reach %s: %s", c->zEndpoint, m);
		attempt_failed(r, retryable_curl(rc), 0, why);
		return;
	}
	if (r->httpStatus / 100 != 2) {
		char msg[400];
		c->prov->error_message(r->raw.buf ? r->raw.buf : "", r->raw.len, msg, sizeof msg);
		snprintf(why, sizeof why, "HTTP %ld from %s: %s", r->httpStatus, c->zEndpoint,
		         *msg ? msg : "(no message)");
		attempt_failed(r, retryable_status(r->httpStatus), ra > 0 ? (double)ra : 0, why);
		return;
	}
	int bad = r->streaming
	              ? sse_finish(&r->sse, on_sse, r, why)
	              : c->prov->whole(&r->parse, r->raw.buf ? r->raw.buf : "", r->raw.len, why);
	if (bad == 0)
		bad = c->prov->finish(&r->parse, why);
	if (bad < 0) {
		attempt_failed(r, r->parse.retryable, 0, why);
		return;
	}
	finish(r, "ok", NULL);
}

static void check_multi(struct llm *c)
{
	CURLMsg *m;
	int left;
	while ((m = curl_multi_info_read(c->multi, &left))) {
		if (m->msg != CURLMSG_DONE)
			continue;
		char *priv = NULL;
		curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, &priv);
		if (priv)
			http_done((struct req *)priv, m->data.result);
	}
}

static void on_socket_event(struct loop *l, int fd, int events, void *arg)
{
	(void)l;
	struct llm *c = arg;
	int flags = (events & LOOP_READ ? CURL_CSELECT_IN : 0) |
	            (events & LOOP_WRITE ? CURL_CSELECT_OUT : 0);
	int running;
	curl_multi_socket_action(c->multi, fd, flags, &running);
	check_multi(c);
}

static int curl_socket_cb(CURL *e, curl_socket_t s, int what, void *userp, void *socketp)
{
	(void)e, (void)socketp;
	struct llm *c = userp;
	if (what == CURL_POLL_REMOVE) {
		loop_del_fd(c->l, s);
		return 0;
	}
	int ev = (what == CURL_POLL_IN || what == CURL_POLL_INOUT ? LOOP_READ : 0) |
	         (what == CURL_POLL_OUT || what == CURL_POLL_INOUT ? LOOP_WRITE : 0);
	loop_add_fd(c->l, s, ev, on_socket_event, c);
	return 0;
}

static void on_curl_timer(struct loop *l, long long id, void *arg)
{
	(void)l, (void)id;
	struct llm *c = arg;
	c->curlTimer = 0;
	int running;
	curl_multi_socket_action(c->multi, CURL_SOCKET_TIMEOUT, 0, &running);
	check_multi(c);
}

static int curl_timer_cb(CURLM *m, long ms, void *userp)
{
	(void)m;
	struct llm *c = userp;
	if (c->curlTimer)
		loop_del_timer(c->l, c->curlTimer);
	c->curlTimer = ms < 0 ? 0 : loop_add_timer(c->l, (double)ms / 1000.0, on_curl_timer, c);
	return 0;
}

static int start_http(struct req *r, char *err)
{
	struct llm *c = r->c;
	struct llm_request rq = {r->zSystem, r->zPrompt, r->maxTokens};
	r->easy = curl_easy_init();
	if (!r->easy)
		return kl_err(err, "cannot start an HTTP request (curl_easy_init failed)");
	char *body = c->prov->body(&c->cfg, &rq);
	r->hdrs = c->prov->headers(&c->cfg, NULL);
	CURL *e = r->easy;
	curl_easy_setopt(e, CURLOPT_URL, c->zEndpoint);
	curl_easy_setopt(e, CURLOPT_HTTPHEADER, r->hdrs);
	curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
	curl_easy_setopt(e, CURLOPT_COPYPOSTFIELDS, body);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_write);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(e, CURLOPT_PRIVATE, r);
	curl_easy_setopt(e, CURLOPT_ERRORBUFFER, r->curlErr);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_USERAGENT, "kloop/0.1");
	/* the watchdog is the limit; these only back it up */
	curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)(c->cfg.timeoutS * 1000) + 5000);
	curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, (long)(c->cfg.stallS * 1000) + 1000);
	free(body);
	CURLMcode mc = curl_multi_add_handle(c->multi, e);
	if (mc != CURLM_OK)
		return kl_err(err, "cannot start an HTTP request: %s", curl_multi_strerror(mc));
	return 0;
}

/* ---- command attempts ---- */

static void on_cmd_out(void *arg, const char *z, size_t n)
{
	struct req *r = arg;
	r->tLast = now_s();
	if (r->failed)
		return;
	/* past the limit the rest is read and dropped until the child ends */
	if (llm_parse_text(&r->parse, z, n, r->zErr) < 0)
		r->failed = 1;
}

static void on_cmd_end(void *arg, int status, const char *zStderr)
{
	struct req *r = arg;
	struct llm *c = r->c;
	if (r->cancelled) {
		finish(r, "cancelled", "cancelled");
		return;
	}
	if (r->failed) {
		attempt_failed(r, 0, 0, r->zErr);
		return;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		char st[80];
		proc_describe_status(status, st, sizeof st);
		/* the last line of its stderr says why */
		size_t n = strlen(zStderr);
		while (n && (zStderr[n - 1] == '\n' || zStderr[n - 1] == '\r'))
			n--;
		size_t b = n;
		while (b && zStderr[b - 1] != '\n')
			b--;
		char *m = xasprintf("the command `%s` %s%s%.*s", c->zCommand, st, n ? ": " : "",
		                    (int)(n - b), zStderr + b);
		attempt_failed(r, 0, 0, m);
		free(m);
		return;
	}
	r->parse.done = 1;
	if (!r->parse.text.len) {
		attempt_failed(r, 0, 0, "the command printed nothing");
		return;
	}
	finish(r, "ok", NULL);
}

static int start_command(struct req *r, char *err)
{
	struct llm *c = r->c;
	strbuf in = STRBUF_INIT;
	if (r->zSystem && *r->zSystem) {
		sb_adds(&in, r->zSystem);
		sb_adds(&in, "\n\n");
	}
	sb_adds(&in, r->zPrompt);
	r->cmd = llm_cmd_start(c->l, c->zCommand, c->zModel, in.buf, in.len, on_cmd_out, on_cmd_end,
	                       r, err);
	sb_free(&in);
	return r->cmd ? 0 : -1;
}

/* ---- the queue ---- */

static void start(struct req *r)
{
	struct llm *c = r->c;
	char err[KL_ERRLEN];
	reset_attempt(r);
	r->attempts++;
	r->state = REQ_RUNNING;
	c->running++;
	r->tStart = r->tLast = now_s();
	r->watchdog =
	    loop_add_timer(c->l, c->cfg.stallS < c->cfg.timeoutS ? c->cfg.stallS : c->cfg.timeoutS,
	                   on_watchdog, r);
	if ((c->prov ? start_http(r, err) : start_command(r, err)) < 0)
		attempt_failed(r, 0, 0, err);
}

static void pump(struct llm *c)
{
	for (;;) {
		struct req *r = NULL;
		for (struct req *q = c->reqs; q && !r; q = q->next)
			if (q->cancelled && q->state != REQ_RUNNING)
				r = q;
		if (r) {
			finish(r, "cancelled", "cancelled");
			continue;
		}
		for (struct req *q = c->reqs; q && !r; q = q->next)
			if (q->cancelled && q->state == REQ_RUNNING)
				r = q;
		if (r) {
			finish(r, "cancelled", "cancelled");
			continue;
		}
		if (c->running >= c->cfg.maxInFlight)
			return;
		for (struct req *q = c->reqs; q && !r; q = q->next)
			if (q->state == REQ_QUEUED)
				r = q;
		if (!r)
			return;
		start(r);
	}
}

static void on_kick(struct loop *l, long long id, void *arg)
{
	(void)l, (void)id;
	struct llm *c = arg;
	c->kick = 0;
	pump(c);
}

/* pump from the loop, soon (never from inside a caller's call or curl's) */
static void schedule(struct llm *c)
{
	if (!c->kick)
		c->kick = loop_add_timer(c->l, 0, on_kick, c);
}

/* ---- the client ---- */

static char *dup_or_null(const char *z)
{
	return z ? xstrdup(z) : NULL;
}

struct llm *llm_new(struct loop *l, const struct llm_config *lc, char *err)
{
	const struct llm_provider *prov = NULL;
	const char *p = lc->zProvider ? lc->zProvider : "";
	if (!strcmp(p, "openai"))
		prov = &llm_openai;
	else if (!strcmp(p, "anthropic"))
		prov = &llm_anthropic;
	else if (strcmp(p, "command"))
		return kl_err(err, "provider: expected openai, anthropic or command, got '%s'", p),
		       NULL;
	if (!prov && (!lc->zCommand || !*lc->zCommand))
		return kl_err(err, "the command provider needs a command"), NULL;
	static int curlReady;
	if (prov && !curlReady) {
		if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0)
			return kl_err(err, "cannot initialise libcurl"), NULL;
		curlReady = 1;
	}
	struct sigaction sa;
	if (sigaction(SIGPIPE, NULL, &sa) == 0 && sa.sa_handler == SIG_DFL)
		signal(SIGPIPE, SIG_IGN);
	struct llm *c = xcalloc(1, sizeof *c);
	c->l = l;
	c->cfg = *lc;
	c->prov = prov;
	c->zProvider = xstrdup(p);
	c->zModel = dup_or_null(lc->zModel);
	c->zApiKey = dup_or_null(lc->zApiKey);
	c->zCommand = dup_or_null(lc->zCommand);
	const char *base = lc->zBaseUrl && *lc->zBaseUrl ? lc->zBaseUrl
	                   : prov                        ? prov->zDefaultBase
	                                                 : "";
	c->zBaseUrl = xstrdup(base);
	size_t bn = strlen(base);
	while (bn && base[bn - 1] == '/')
		bn--;
	c->zEndpoint = prov ? xasprintf("%.*s%s", (int)bn, base, prov->zPath) : xstrdup("");
	c->cfg.zProvider = c->zProvider;
	c->cfg.zModel = c->zModel;
	c->cfg.zBaseUrl = c->zBaseUrl;
	c->cfg.zApiKey = c->zApiKey;
	c->cfg.zCommand = c->zCommand;
	if (c->cfg.timeoutS <= 0)
		c->cfg.timeoutS = 600;
	if (c->cfg.stallS <= 0)
		c->cfg.stallS = 120;
	if (c->cfg.maxInFlight <= 0)
		c->cfg.maxInFlight = 4;
	if (c->cfg.maxRetries < 0)
		c->cfg.maxRetries = 0;
	if (c->cfg.backoffMaxS <= 0)
		c->cfg.backoffMaxS = 60;
	if (!c->cfg.maxReplyBytes)
		c->cfg.maxReplyBytes = 32u << 20;
	c->seed = (unsigned)time(NULL) ^ (unsigned)getpid();
	if (prov) {
		c->multi = curl_multi_init();
		curl_multi_setopt(c->multi, CURLMOPT_SOCKETFUNCTION, curl_socket_cb);
		curl_multi_setopt(c->multi, CURLMOPT_SOCKETDATA, c);
		curl_multi_setopt(c->multi, CURLMOPT_TIMERFUNCTION, curl_timer_cb);
		curl_multi_setopt(c->multi, CURLMOPT_TIMERDATA, c);
	}
	return c;
}

void llm_free(struct llm *c)
{
	if (!c)
		return;
	while (c->reqs) {
		struct req *r = c->reqs;
		stop_attempt(r);
		if (r->timer)
			loop_del_timer(c->l, r->timer);
		c->reqs = r->next;
		free_req(r);
	}
	if (c->kick)
		loop_del_timer(c->l, c->kick);
	if (c->curlTimer)
		loop_del_timer(c->l, c->curlTimer);
	if (c->multi)
		curl_multi_cleanup(c->multi);
	if (c->zApiKey)
		memset(c->zApiKey, 0, strlen(c->zApiKey));
	free(c->zProvider);
	free(c->zModel);
	free(c->zBaseUrl);
	free(c->zApiKey);
	free(c->zCommand);
	free(c->zEndpoint);
	free(c);
}

int llm_submit(struct llm *c, const struct llm_request *rq, const struct llm_hooks *h, void *arg,
               char *err)
{
	if (!rq->zPrompt || !*rq->zPrompt)
		return kl_err(err, "an LLM request needs a prompt");
	if (!h || !h->done)
		return kl_err(err, "an LLM request needs a done hook");
	struct req *r = xcalloc(1, sizeof *r);
	r->id = ++c->nextId;
	r->c = c;
	r->zSystem = dup_or_null(rq->zSystem);
	r->zPrompt = xstrdup(rq->zPrompt);
	r->maxTokens = rq->maxTokens;
	r->h = *h;
	r->arg = arg;
	r->state = REQ_QUEUED;
	r->t0 = now_s();
	r->tFirst = -1;
	sse_init(&r->sse, 0);
	struct req **pp = &c->reqs;
	while (*pp)
		pp = &(*pp)->next;
	*pp = r;
	schedule(c);
	return r->id;
}

int llm_cancel(struct llm *c, int id)
{
	for (struct req *r = c->reqs; r; r = r->next)
		if (r->id == id && !r->cancelled) {
			r->cancelled = 1;
			schedule(c);
			return 0;
		}
	return -1;
}

int llm_drop(struct llm *c, int id)
{
	for (struct req *r = c->reqs; r; r = r->next)
		if (r->id == id) {
			stop_attempt(r);
			if (r->timer)
				loop_del_timer(c->l, r->timer);
			unlink_req(c, r);
			free_req(r);
			schedule(c);
			return 0;
		}
	return -1;
}

int llm_pending(const struct llm *c)
{
	int n = 0;
	for (const struct req *r = c->reqs; r; r = r->next)
		n++;
	return n;
}

int llm_running(const struct llm *c)
{
	return c->running;
}

const char *llm_provider_name(const struct llm *c)
{
	return c->zProvider;
}

const char *llm_model(const struct llm *c)
{
	return c->zModel ? c->zModel : "";
}

const char *llm_endpoint(const struct llm *c)
{
	return c->zEndpoint;
}
