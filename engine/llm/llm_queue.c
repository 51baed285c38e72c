/*
 * llm_queue.c - the client of llm.h: the request queue behind every
 * provider: requests in order with a limit in flight, an attempt per
 * request handed to the provider's transport (llm_transport.h), a watchdog per attempt (deadline
 * and stall), retries with backoff and jitter, cancellation, and the reply with its usage, cost and
 * latency, the key redacted from all of it.
 */
#include "llm.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "llm_transport.h"

#define RETRY_AFTER_MAX_S 600.0

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

/* ---- requests ---- */

static void pump(struct llm *c);
static void schedule(struct llm *c);

static void on_delta(void *arg, const char *z, size_t n)
{
	struct llm_req *r = arg;
	if (r->tFirst < 0)
		r->tFirst = now_s() - r->t0;
	if (r->h.delta && !r->cancelled)
		r->h.delta(r->id, z, n, r->arg);
}

static void reset_attempt(struct llm_req *r)
{
	sb_free(&r->parse.text);
	memset(&r->parse, 0, sizeof r->parse);
	r->parse.inTokens = r->parse.outTokens = -1;
	r->parse.maxText = r->c->cfg.maxReplyBytes;
	r->parse.delta = on_delta;
	r->parse.arg = r;
	r->decided = 0;
	r->httpStatus = 0;
	r->failed = r->retryable = 0;
	r->zErr[0] = 0;
}

/* stop the current attempt's transport (no callbacks) */
static void stop_attempt(struct llm_req *r)
{
	struct llm *c = r->c;
	if (r->watchdog)
		loop_del_timer(c->l, r->watchdog);
	r->watchdog = 0;
	c->prov->transport->stop(r);
	if (r->state == LLM_REQ_RUNNING) {
		c->running--;
		r->state = LLM_REQ_QUEUED;
	}
}

static void unlink_req(struct llm *c, struct llm_req *r)
{
	for (struct llm_req **pp = &c->reqs; *pp; pp = &(*pp)->next)
		if (*pp == r) {
			*pp = r->next;
			return;
		}
}

static void free_req(struct llm_req *r)
{
	sb_free(&r->parse.text);
	free(r->zSystem);
	free(r->zPrompt);
	free(r);
}

/* end request r: stop it, call done, free it */
static void finish(struct llm_req *r, const char *zStatus, const char *zWhy)
{
	struct llm *c = r->c;
	stop_attempt(r);
	if (r->timer)
		loop_del_timer(c->l, r->timer);
	r->timer = 0;
	r->state = LLM_REQ_DONE;
	unlink_req(c, r);
	strbuf why = STRBUF_INIT;
	if (zWhy)
		sb_adds(&why, zWhy);
	llm_redact(c, &why);
	llm_redact(c, &r->parse.text);
	struct llm_reply rep = {
	    .id = r->id,
	    .zStatus = zStatus,
	    .ok = strcmp(zStatus, "ok") == 0,
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
	struct llm_req *r = arg;
	r->timer = 0;
	r->state = LLM_REQ_QUEUED;
	pump(r->c);
}

/* the attempt failed with zWhy: retry it (after retryAfter seconds when the
 * server said so) or end the request */
static void attempt_failed(struct llm_req *r, int retryable, double retryAfter, const char *zWhy)
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
	r->state = LLM_REQ_WAITING;
	if (r->h.retry) {
		strbuf why = STRBUF_INIT;
		sb_adds(&why, zWhy);
		llm_redact(c, &why);
		r->h.retry(r->id, r->attempts + 1, delay, why.buf, r->arg);
		sb_free(&why);
	}
	r->timer = loop_add_timer(c->l, delay, on_retry_timer, r);
}

/* how the transports end an attempt (llm_transport.h): every client's */

static void attempt_ok(struct llm_req *r)
{
	finish(r, "ok", NULL);
}

static void attempt_cancelled(struct llm_req *r)
{
	finish(r, "cancelled", "cancelled");
}

static const struct llm_attempt_end attempt_end = {
    .ok = attempt_ok,
    .cancelled = attempt_cancelled,
    .failed = attempt_failed,
};

/* ---- the watchdog: an attempt's deadline and stall limit ---- */

static void on_watchdog(struct loop *l, long long id, void *arg)
{
	(void)id;
	struct llm_req *r = arg;
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
		attempt_failed(r, c->prov->transport->retryStalls, 0, why);
		return;
	}
	r->watchdog = loop_add_timer(l, left < quiet ? left : quiet, on_watchdog, r);
}

/* ---- the queue ---- */

static void start(struct llm_req *r)
{
	struct llm *c = r->c;
	char err[KL_ERRLEN];
	reset_attempt(r);
	r->attempts++;
	r->state = LLM_REQ_RUNNING;
	c->running++;
	r->tStart = r->tLast = now_s();
	r->watchdog =
	    loop_add_timer(c->l, c->cfg.stallS < c->cfg.timeoutS ? c->cfg.stallS : c->cfg.timeoutS,
	                   on_watchdog, r);
	if (c->prov->transport->start(r, err) < 0)
		attempt_failed(r, 0, 0, err);
}

static void pump(struct llm *c)
{
	for (;;) {
		struct llm_req *r = NULL;
		for (struct llm_req *q = c->reqs; q && !r; q = q->next)
			if (q->cancelled && q->state != LLM_REQ_RUNNING)
				r = q;
		if (r) {
			finish(r, "cancelled", "cancelled");
			continue;
		}
		for (struct llm_req *q = c->reqs; q && !r; q = q->next)
			if (q->cancelled && q->state == LLM_REQ_RUNNING)
				r = q;
		if (r) {
			finish(r, "cancelled", "cancelled");
			continue;
		}
		if (c->running >= c->cfg.maxInFlight)
			return;
		for (struct llm_req *q = c->reqs; q && !r; q = q->next)
			if (q->state == LLM_REQ_QUEUED)
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
	const char *p = lc->zProvider ? lc->zProvider : "";
	const struct llm_provider *prov = llm_provider_find(p);
	if (!prov)
		return llm_provider_unknown(err, p), NULL;
	if (prov->needsCommand && (!lc->zCommand || !*lc->zCommand))
		return kl_err(err, "the %s provider needs a command", p), NULL;
	struct sigaction sa;
	if (sigaction(SIGPIPE, NULL, &sa) == 0 && sa.sa_handler == SIG_DFL)
		signal(SIGPIPE, SIG_IGN);
	struct llm *c = xcalloc(1, sizeof *c);
	c->l = l;
	c->cfg = *lc;
	c->prov = prov;
	c->end = &attempt_end;
	if (prov->transport->init && prov->transport->init(c, err) < 0) {
		free(c);
		return NULL;
	}
	c->zProvider = xstrdup(p);
	c->zModel = dup_or_null(lc->zModel);
	c->zApiKey = dup_or_null(lc->zApiKey);
	c->zCommand = dup_or_null(lc->zCommand);
	const char *base = lc->zBaseUrl && *lc->zBaseUrl ? lc->zBaseUrl
	                   : prov->zDefaultBase          ? prov->zDefaultBase
	                                                 : "";
	c->zBaseUrl = xstrdup(base);
	size_t bn = strlen(base);
	while (bn && base[bn - 1] == '/')
		bn--;
	c->zEndpoint = prov->zPath ? xasprintf("%.*s%s", (int)bn, base, prov->zPath) : xstrdup("");
	c->cfg.zProvider = c->zProvider;
	c->cfg.zModel = c->zModel;
	c->cfg.zBaseUrl = c->zBaseUrl;
	c->cfg.zApiKey = c->zApiKey;
	c->cfg.zCommand = c->zCommand;
	/* what a zeroed config leaves out: the defaults */
	struct llm_config def;
	llm_config_defaults(&def);
	if (c->cfg.timeoutS <= 0)
		c->cfg.timeoutS = def.timeoutS;
	if (c->cfg.stallS <= 0)
		c->cfg.stallS = def.stallS;
	if (c->cfg.maxInFlight <= 0)
		c->cfg.maxInFlight = def.maxInFlight;
	if (c->cfg.maxRetries < 0)
		c->cfg.maxRetries = 0;
	if (c->cfg.backoffMaxS <= 0)
		c->cfg.backoffMaxS = def.backoffMaxS;
	if (!c->cfg.maxReplyBytes)
		c->cfg.maxReplyBytes = 32u << 20;
	c->seed = (unsigned)time(NULL) ^ (unsigned)getpid();
	return c;
}

void llm_free(struct llm *c)
{
	if (!c)
		return;
	while (c->reqs) {
		struct llm_req *r = c->reqs;
		stop_attempt(r);
		if (r->timer)
			loop_del_timer(c->l, r->timer);
		c->reqs = r->next;
		free_req(r);
	}
	if (c->kick)
		loop_del_timer(c->l, c->kick);
	if (c->prov->transport->fini)
		c->prov->transport->fini(c);
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
	struct llm_req *r = xcalloc(1, sizeof *r);
	r->id = ++c->nextId;
	r->c = c;
	r->zSystem = dup_or_null(rq->zSystem);
	r->zPrompt = xstrdup(rq->zPrompt);
	r->maxTokens = rq->maxTokens;
	r->h = *h;
	r->arg = arg;
	r->state = LLM_REQ_QUEUED;
	r->t0 = now_s();
	r->tFirst = -1;
	struct llm_req **pp = &c->reqs;
	while (*pp)
		pp = &(*pp)->next;
	*pp = r;
	schedule(c);
	return r->id;
}

int llm_cancel(struct llm *c, int id)
{
	for (struct llm_req *r = c->reqs; r; r = r->next)
		if (r->id == id && !r->cancelled) {
			r->cancelled = 1;
			schedule(c);
			return 0;
		}
	return -1;
}

int llm_drop(struct llm *c, int id)
{
	for (struct llm_req *r = c->reqs; r; r = r->next)
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
	for (const struct llm_req *r = c->reqs; r; r = r->next)
		n++;
	return n;
}

int llm_max_in_flight(const struct llm *c)
{
	return c->cfg.maxInFlight;
}

double llm_cost_estimate(const struct llm *c, size_t nPromptBytes, long outGuess)
{
	if (c->cfg.priceIn < 0 || c->cfg.priceOut < 0)
		return -1;
	long out = c->cfg.maxTokens > 0 ? c->cfg.maxTokens : outGuess > 0 ? outGuess : 1024;
	return ((double)nPromptBytes / 4 * c->cfg.priceIn + (double)out * c->cfg.priceOut) / 1e6;
}

int llm_max_tokens(const struct llm *c)
{
	return c->cfg.maxTokens > 0 ? c->cfg.maxTokens : 0;
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
