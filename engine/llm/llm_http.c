/*
 * llm_http.c - the HTTP transport: one attempt is a POST over libcurl's
 * multi interface, its sockets and timers on kloop's loop; a streamed
 * reply (text/event-stream) is fed through the SSE parser into the
 * provider's event reader, anything else is kept whole (a JSON reply, an
 * error body).  Also the helpers the wire formats share.
 */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llm_transport.h"
#include "sse.h"

#define ERROR_BODY_MAX (64u << 10)

/* a client's multi handle */
struct http_client {
	CURLM *multi;
	long long curlTimer; /* libcurl's timeout on the loop (0: none) */
};

/* one attempt */
struct http_attempt {
	CURL *easy;
	struct curl_slist *hdrs;
	char curlErr[CURL_ERROR_SIZE];
	int streaming;  /* the body is an event stream */
	struct sse sse; /* its parser */
	strbuf raw;     /* a body that is not a stream (an error, a whole reply) */
};

/* ---- helpers of the wire formats ---- */

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

/* ---- an attempt ---- */

static int on_sse(const char *zEvent, const char *zData, size_t nData, void *arg, char *err)
{
	struct llm_req *r = arg;
	return r->c->prov->event(&r->parse, zEvent, zData, nData, err);
}

static size_t on_write(char *p, size_t size, size_t n, void *arg)
{
	struct llm_req *r = arg;
	struct http_attempt *a = r->pAttempt;
	size_t len = size * n;
	if (r->cancelled || r->failed)
		return 0;
	r->tLast = now_s();
	if (!r->decided) {
		r->decided = 1;
		char *ct = NULL;
		curl_easy_getinfo(a->easy, CURLINFO_RESPONSE_CODE, &r->httpStatus);
		curl_easy_getinfo(a->easy, CURLINFO_CONTENT_TYPE, &ct);
		a->streaming = r->httpStatus / 100 == 2 && ct && strstr(ct, "text/event-stream");
	}
	if (a->streaming) {
		if (sse_feed(&a->sse, p, len, on_sse, r, r->zErr) < 0) {
			r->failed = 1;
			r->retryable = r->parse.retryable;
			return 0;
		}
		return len;
	}
	size_t max = r->httpStatus / 100 == 2 ? r->c->cfg.maxReplyBytes : ERROR_BODY_MAX;
	if (a->raw.len + len > max) {
		if (r->httpStatus / 100 == 2) {
			kl_err(r->zErr, "the reply is longer than the limit of %zu bytes", max);
			r->failed = 1;
			return 0;
		}
		len = max - a->raw.len; /* keep the start of an error body */
		sb_add(&a->raw, p, len);
		return size * n;
	}
	sb_add(&a->raw, p, len);
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

/* an attempt ended with curl's result rc */
static void http_done(struct llm_req *r, CURLcode rc)
{
	struct llm *c = r->c;
	struct http_attempt *a = r->pAttempt;
	char why[KL_ERRLEN];
	if (r->cancelled) {
		llm_attempt_cancelled(r);
		return;
	}
	if (!r->httpStatus)
		curl_easy_getinfo(a->easy, CURLINFO_RESPONSE_CODE, &r->httpStatus);
	curl_off_t ra = -1;
	curl_easy_getinfo(a->easy, CURLINFO_RETRY_AFTER, &ra);
	if (r->failed) {
		llm_attempt_failed(r, r->retryable, 0, r->zErr);
		return;
	}
	if (rc != CURLE_OK) {
		const char *m = a->curlErr[0] ? a->curlErr : curl_easy_strerror(rc);
		if (rc == CURLE_PARTIAL_FILE || rc == CURLE_RECV_ERROR)
			snprintf(why, sizeof why, "the connection dropped %s: %s",
			         r->decided ? "in the middle of the reply" : "before a reply", m);
		else
			snprintf(why, sizeof why, "cannot reach %s: %s", c->zEndpoint, m);
		llm_attempt_failed(r, retryable_curl(rc), 0, why);
		return;
	}
	if (r->httpStatus / 100 != 2) {
		char msg[400];
		c->prov->error_message(a->raw.buf ? a->raw.buf : "", a->raw.len, msg, sizeof msg);
		snprintf(why, sizeof why, "HTTP %ld from %s: %s", r->httpStatus, c->zEndpoint,
		         *msg ? msg : "(no message)");
		llm_attempt_failed(r, retryable_status(r->httpStatus), ra > 0 ? (double)ra : 0,
		                   why);
		return;
	}
	if (a->streaming && !r->parse.done && sse_partial(&a->sse)) {
		/* closed cleanly, but half a line in: a dropped stream */
		snprintf(why, sizeof why,
		         "the connection dropped in the middle of event %ld of the stream",
		         a->sse.nEvents + 1);
		llm_attempt_failed(r, 1, 0, why);
		return;
	}
	int bad = a->streaming
	              ? sse_finish(&a->sse, on_sse, r, why)
	              : c->prov->whole(&r->parse, a->raw.buf ? a->raw.buf : "", a->raw.len, why);
	if (bad == 0)
		bad = c->prov->finish(&r->parse, why);
	if (bad < 0) {
		llm_attempt_failed(r, r->parse.retryable, 0, why);
		return;
	}
	llm_attempt_ok(r);
}

static void check_multi(struct http_client *hc)
{
	CURLMsg *m;
	int left;
	while ((m = curl_multi_info_read(hc->multi, &left))) {
		if (m->msg != CURLMSG_DONE)
			continue;
		char *priv = NULL;
		curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, &priv);
		if (priv)
			http_done((struct llm_req *)priv, m->data.result);
	}
}

/* ---- libcurl's sockets and timer on the loop ---- */

static void on_socket_event(struct loop *l, int fd, int events, void *arg)
{
	(void)l;
	struct http_client *hc = arg;
	int flags = (events & LOOP_READ ? CURL_CSELECT_IN : 0) |
	            (events & LOOP_WRITE ? CURL_CSELECT_OUT : 0);
	int running;
	curl_multi_socket_action(hc->multi, fd, flags, &running);
	check_multi(hc);
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
	loop_add_fd(c->l, s, ev, on_socket_event, c->pTransport);
	return 0;
}

static void on_curl_timer(struct loop *l, long long id, void *arg)
{
	(void)l, (void)id;
	struct http_client *hc = arg;
	hc->curlTimer = 0;
	int running;
	curl_multi_socket_action(hc->multi, CURL_SOCKET_TIMEOUT, 0, &running);
	check_multi(hc);
}

static int curl_timer_cb(CURLM *m, long ms, void *userp)
{
	(void)m;
	struct llm *c = userp;
	struct http_client *hc = c->pTransport;
	if (hc->curlTimer)
		loop_del_timer(c->l, hc->curlTimer);
	hc->curlTimer = ms < 0 ? 0 : loop_add_timer(c->l, (double)ms / 1000.0, on_curl_timer, hc);
	return 0;
}

/* ---- the transport ---- */

static int http_init(struct llm *c, char *err)
{
	static int curlReady;
	if (!curlReady) {
		if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0)
			return kl_err(err, "cannot initialise libcurl");
		curlReady = 1;
	}
	struct http_client *hc = xcalloc(1, sizeof *hc);
	hc->multi = curl_multi_init();
	c->pTransport = hc;
	curl_multi_setopt(hc->multi, CURLMOPT_SOCKETFUNCTION, curl_socket_cb);
	curl_multi_setopt(hc->multi, CURLMOPT_SOCKETDATA, c);
	curl_multi_setopt(hc->multi, CURLMOPT_TIMERFUNCTION, curl_timer_cb);
	curl_multi_setopt(hc->multi, CURLMOPT_TIMERDATA, c);
	return 0;
}

static void http_fini(struct llm *c)
{
	struct http_client *hc = c->pTransport;
	if (!hc)
		return;
	if (hc->curlTimer)
		loop_del_timer(c->l, hc->curlTimer);
	curl_multi_cleanup(hc->multi);
	free(hc);
	c->pTransport = NULL;
}

static void http_stop(struct llm_req *r)
{
	struct http_attempt *a = r->pAttempt;
	if (!a)
		return;
	struct http_client *hc = r->c->pTransport;
	if (a->easy) {
		curl_multi_remove_handle(hc->multi, a->easy);
		curl_easy_cleanup(a->easy);
	}
	if (a->hdrs)
		curl_slist_free_all(a->hdrs);
	sse_free(&a->sse);
	sb_free(&a->raw);
	free(a);
	r->pAttempt = NULL;
}

static int http_start(struct llm_req *r, char *err)
{
	struct llm *c = r->c;
	struct http_client *hc = c->pTransport;
	struct llm_request rq = {r->zSystem, r->zPrompt, r->maxTokens};
	struct http_attempt *a = xcalloc(1, sizeof *a);
	r->pAttempt = a;
	sse_init(&a->sse, c->cfg.maxReplyBytes + 4096);
	a->easy = curl_easy_init();
	if (!a->easy)
		return kl_err(err, "cannot start an HTTP request (curl_easy_init failed)");
	char *body = c->prov->body(&c->cfg, &rq);
	a->hdrs = c->prov->headers(&c->cfg, NULL);
	CURL *e = a->easy;
	curl_easy_setopt(e, CURLOPT_URL, c->zEndpoint);
	curl_easy_setopt(e, CURLOPT_HTTPHEADER, a->hdrs);
	curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
	curl_easy_setopt(e, CURLOPT_COPYPOSTFIELDS, body);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_write);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(e, CURLOPT_PRIVATE, r);
	curl_easy_setopt(e, CURLOPT_ERRORBUFFER, a->curlErr);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_USERAGENT, "kloop/0.1");
	/* the watchdog is the limit; these only back it up */
	curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)(c->cfg.timeoutS * 1000) + 5000);
	curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, (long)(c->cfg.stallS * 1000) + 1000);
	free(body);
	CURLMcode mc = curl_multi_add_handle(hc->multi, e);
	if (mc != CURLM_OK) {
		curl_easy_cleanup(a->easy);
		a->easy = NULL;
		return kl_err(err, "cannot start an HTTP request: %s", curl_multi_strerror(mc));
	}
	return 0;
}

const struct llm_transport llm_http = {
    .init = http_init,
    .fini = http_fini,
    .start = http_start,
    .stop = http_stop,
    .retryStalls = 1,
};
