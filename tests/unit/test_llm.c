/*
 * test_llm.c - the LLM providers against tests/fake_llm/server.py (real HTTP
 * on 127.0.0.1): streamed replies in both wire formats, events cut mid-line
 * across TCP segments, 429 with Retry-After and 500 retried, a stalled
 * stream, a dropped connection (between events or mid-event, retried),
 * malformed JSON, empty choices, a 5 MB reply, server errors, the key sent
 * in its header and redacted from all that comes back, the limit in
 * flight, cancellation, and the command provider.  A timer ticks all along: the loop is never
 * blocked.
 */
#include <curl/curl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fake_llm.h"
#include "llm_config.h"

#define KEY "sk-test-SECRET-4242"

struct outcome {
	int done;
	char status[16];
	strbuf text;     /* the reply's text */
	strbuf streamed; /* what the delta hook saw (reset on retry) */
	char error[KL_ERRLEN];
	struct llm_reply r; /* numbers only (the strings are gone after done) */
	int retries;
	double retryDelay;
	int deltasAfterCancel;
	int cancelled;
	struct llm *c;
	int cancelAfterDelta; /* cancel on the first delta */
};

static struct loop *L;
static int ticks;
static long long tickTimer;

static void on_tick(struct loop *l, long long id, void *arg)
{
	(void)id, (void)arg;
	ticks++;
	tickTimer = loop_add_timer(l, 0.02, on_tick, NULL);
}

static void on_delta(int id, const char *z, size_t n, void *arg)
{
	struct outcome *o = arg;
	if (o->cancelled)
		o->deltasAfterCancel++;
	sb_add(&o->streamed, z, n);
	if (o->cancelAfterDelta && !o->cancelled) {
		o->cancelled = 1;
		llm_cancel(o->c, id);
	}
}

static void on_retry(int id, int attempt, double delay, const char *zWhy, void *arg)
{
	(void)id, (void)attempt, (void)zWhy;
	struct outcome *o = arg;
	o->retries++;
	o->retryDelay = delay;
	sb_reset(&o->streamed);
}

static void on_done(int id, const struct llm_reply *r, void *arg)
{
	(void)id;
	struct outcome *o = arg;
	o->done = 1;
	snprintf(o->status, sizeof o->status, "%s", r->zStatus);
	sb_add(&o->text, r->zText, r->nText);
	if (!o->text.buf)
		sb_adds(&o->text, "");
	snprintf(o->error, sizeof o->error, "%s", r->zError ? r->zError : "");
	o->r = *r;
	o->r.zText = o->r.zError = o->r.zStop = o->r.zStatus = NULL;
}

static const struct llm_hooks hooks = {on_delta, on_retry, on_done};

/* run the loop until every outcome is done or 30 s pass */
static void wait_all(struct outcome *o, int n)
{
	double t0 = now_s();
	for (;;) {
		int left = 0;
		for (int i = 0; i < n; i++)
			left += !o[i].done;
		if (!left || now_s() - t0 > 30)
			return;
		loop_once(L, 0.5);
	}
}

/* the test's usual settings: the key, a 20 s limit, fast backoff, prices */
static struct llm_config settings(const char *zProvider, const char *zBase)
{
	struct llm_config lc;
	llm_config_defaults(&lc);
	lc.zProvider = zProvider;
	lc.zModel = "fake-model";
	lc.zBaseUrl = zBase;
	lc.zApiKey = KEY;
	lc.timeoutS = 20;
	lc.backoffS = 0.05;
	lc.priceIn = 3;
	lc.priceOut = 15;
	return lc;
}

static struct llm *make(const struct llm_config *lc)
{
	char err[KL_ERRLEN];
	struct llm *c = llm_new(L, lc, err);
	if (!c)
		printf("# llm_new: %s\n", err);
	return c;
}

static struct llm *client(const char *zProvider, const char *zBase, double stall, int retries)
{
	struct llm_config lc = settings(zProvider, zBase);
	lc.stallS = stall;
	lc.maxRetries = retries;
	return make(&lc);
}

/* one request: prompt "scenario: NAME" */
static void ask(struct llm *c, const char *zScenario, struct outcome *o)
{
	memset(o, 0, sizeof *o);
	o->c = c;
	char *prompt = xasprintf("Please answer. scenario: %s", zScenario);
	struct llm_request rq = {"You are a test.", prompt, 0};
	char err[KL_ERRLEN];
	if (llm_submit(c, &rq, &hooks, o, err) < 0) {
		o->done = 1;
		snprintf(o->error, sizeof o->error, "%s", err);
	}
	free(prompt);
}

static void outcome_free(struct outcome *o)
{
	sb_free(&o->text);
	sb_free(&o->streamed);
}

static int no_key(const struct outcome *o)
{
	return !strstr(o->text.buf ? o->text.buf : "", KEY) && !strstr(o->error, KEY);
}

/* ask for scenario and check the status and that the error (or, when ok,
 * the text) holds needle and not the key */
static void expect(struct llm *c, const char *zProv, const char *zScenario, const char *zStatus,
                   const char *zNeedle, const char *zWhat)
{
	struct outcome o;
	ask(c, zScenario, &o);
	wait_all(&o, 1);
	const char *got = !strcmp(zStatus, "ok") ? o.text.buf : o.error;
	CHECK(!strcmp(o.status, zStatus) && got && strstr(got, zNeedle) && no_key(&o), "%s: %s: %s",
	      zProv, zWhat, o.error);
	outcome_free(&o);
}

static void both_formats(const struct fake_llm *f)
{
	const char *hello = "Hello from the fake model. Hello from the fake model. Hello from the "
	                    "fake model. ";
	static const char *const provs[] = {"openai", "anthropic"};
	for (int k = 0; k < 2; k++) {
		const char *p = provs[k];
		/* anthropic's base URL has no /v1: kloop appends /v1/messages */
		char *base = k ? xasprintf("http://127.0.0.1:%d", f->port) : xstrdup(f->zBase);
		struct llm *c = client(p, base, 5, 0);
		free(base);
		struct outcome o;
		int t0 = ticks;
		ask(c, "normal", &o);
		wait_all(&o, 1);
		CHECK(!strcmp(o.status, "ok") && !strcmp(o.text.buf, hello) &&
		          !strcmp(o.streamed.buf, hello),
		      "%s: a streamed reply, whole and as deltas (%s)", p, o.error);
		CHECK(o.r.inTokens == 120 && o.r.outTokens == 45 && o.r.attempts == 1 &&
		          o.r.httpStatus == 200 && o.r.latencyS > 0 && o.r.firstTokenS >= 0 &&
		          o.r.firstTokenS <= o.r.latencyS,
		      "%s: usage 120 in / 45 out, one attempt, latency %.3f s, first token %.3f s",
		      p, o.r.latencyS, o.r.firstTokenS);
		CHECK(o.r.cost > 0.001034 && o.r.cost < 0.001036,
		      "%s: cost from the prices: 120 x $3 + 45 x $15 per million = $%.6f", p,
		      o.r.cost);
		outcome_free(&o);

		ask(c, "slow", &o);
		wait_all(&o, 1);
		CHECK(!strcmp(o.status, "ok") && !strcmp(o.text.buf, "slow and steady wins") &&
		          ticks - t0 >= 5,
		      "%s: the loop ticked while a slow reply streamed (%d ticks of 20 ms)", p,
		      ticks - t0);
		outcome_free(&o);

		ask(c, "split", &o);
		wait_all(&o, 1);
		CHECK(!strcmp(o.status, "ok") && !strcmp(o.text.buf, hello),
		      "%s: events cut mid-line across TCP segments parse the same (%s)", p,
		      o.error);
		outcome_free(&o);

		ask(c, "whole", &o);
		wait_all(&o, 1);
		CHECK(!strcmp(o.status, "ok") && !strcmp(o.text.buf, "not streamed at all"),
		      "%s: a server that ignores stream: true and sends one JSON body (%s)", p,
		      o.error);
		outcome_free(&o);

		expect(c, p, "drop", "error", "the connection dropped in the middle of the reply",
		       "a connection dropped mid-stream");
		expect(c, p, "no-end", "error", "connection dropped",
		       "a stream closed cleanly without its end marker");
		expect(c, p, "malformed", "error", "malformed JSON in event 3",
		       "malformed JSON in an event");
		expect(c, p, "leak", "error", "Incorrect API key provided: [redacted]. Check it.",
		       "a 401 that echoes the key: the key is redacted");
		llm_free(c);
	}
}

static void openai_only(const struct fake_llm *f)
{
	struct llm *c = client("openai", f->zBase, 5, 0);
	struct outcome o;
	ask(c, "empty-choices", &o);
	wait_all(&o, 1);
	CHECK(!strcmp(o.status, "error") && strstr(o.error, "no choices") && o.r.inTokens == 12,
	      "an empty choices stream: %s (usage still read)", o.error);
	outcome_free(&o);

	ask(c, "no-done", &o);
	wait_all(&o, 1);
	CHECK(!strcmp(o.status, "ok") && strstr(o.text.buf, "Hello from the fake model."),
	      "a stream with its finish_reason but no [DONE] is complete (%s)", o.error);
	outcome_free(&o);

	ask(c, "400", &o);
	wait_all(&o, 1);
	CHECK(!strcmp(o.status, "error") && strstr(o.error, "HTTP 400") &&
	          strstr(o.error, "max_tokens too large") && o.r.attempts == 1,
	      "a 400 is not retried and says why: %s", o.error);
	outcome_free(&o);

	ask(c, "echo-key", &o);
	wait_all(&o, 1);
	CHECK(!strcmp(o.status, "ok") && strstr(o.text.buf, "[redacted]") && no_key(&o),
	      "a reply that repeats the key is redacted: %s", o.text.buf);
	outcome_free(&o);

	ask(c, "big", &o);
	wait_all(&o, 1);
	CHECK(!strcmp(o.status, "ok") && o.text.len == 64u * 81920 && o.streamed.len == o.text.len,
	      "a 5 MB reply arrives whole (%zu bytes) %s", o.text.len, o.error);
	outcome_free(&o);
	llm_free(c);

	/* the limit on the reply's size */
	struct llm_config lc = settings("openai", f->zBase);
	lc.maxReplyBytes = 100000;
	c = make(&lc);
	ask(c, "big", &o);
	wait_all(&o, 1);
	CHECK(!strcmp(o.status, "error") &&
	          strstr(o.error, "longer than the limit of 100000 bytes"),
	      "a reply over the configured limit: %s", o.error);
	outcome_free(&o);
	llm_free(c);
}

static void retries(const struct fake_llm *f)
{
	struct llm *c = client("openai", f->zBase, 5, 2), *c2;
	struct outcome o;
	double t0 = now_s();
	ask(c, "429", &o);
	wait_all(&o, 1);
	double took = now_s() - t0;
	CHECK(!strcmp(o.status, "ok") && !strcmp(o.text.buf, "after the 429") &&
	          o.r.attempts == 2 && o.retries == 1 && o.retryDelay >= 1 && took >= 1,
	      "429 with Retry-After: 1, then success: retried after %.2f s (backoff alone: 0.05 s)",
	      took);
	outcome_free(&o);

	ask(c, "500", &o);
	wait_all(&o, 1);
	CHECK(!strcmp(o.status, "ok") && !strcmp(o.text.buf, "after the 500") &&
	          o.r.attempts == 2 && o.retryDelay < 0.2,
	      "500, then success on the second attempt (backoff %.3f s)", o.retryDelay);
	outcome_free(&o);

	ask(c, "drop-once", &o);
	wait_all(&o, 1);
	CHECK(!strcmp(o.status, "ok") && !strcmp(o.text.buf, "after the drop") &&
	          !strcmp(o.streamed.buf, "after the drop") && o.r.attempts == 2,
	      "a dropped stream is retried; the retry hook voids the partial text (%s)", o.error);
	outcome_free(&o);

	/* a connection closed in the middle of an event (half a data: line):
	 * a dropped stream like any other, retried */
	ask(c, "midevent-close-once", &o);
	wait_all(&o, 1);
	CHECK(!strcmp(o.status, "ok") && !strcmp(o.text.buf, "after the cut") &&
	          !strcmp(o.streamed.buf, "after the cut") && o.r.attempts == 2 && o.retries == 1,
	      "a close-delimited stream cut mid-event is retried and the reply arrives (%s)",
	      o.error);
	outcome_free(&o);
	ask(c, "midevent-chunked-once", &o);
	wait_all(&o, 1);
	CHECK(!strcmp(o.status, "ok") && !strcmp(o.text.buf, "after the cut") &&
	          o.r.attempts == 2 && o.retries == 1,
	      "a chunked stream cut mid-event is retried and the reply arrives (%s)", o.error);
	outcome_free(&o);
	llm_free(c);

	/* the attempts are bounded: with no retry left, the error says what happened */
	c = client("openai", f->zBase, 5, 0);
	ask(c, "midevent-close", &o);
	wait_all(&o, 1);
	CHECK(!strcmp(o.status, "error") && o.r.attempts == 1 &&
	          strstr(o.error, "the connection dropped in the middle of event 3"),
	      "without retries a stream cut mid-event fails with: %s", o.error);
	outcome_free(&o);
	c2 = client("openai", f->zBase, 5, 2);
	ask(c2, "midevent-close", &o);
	wait_all(&o, 1);
	CHECK(!strcmp(o.status, "error") && o.r.attempts == 3 && o.retries == 2 &&
	          strstr(o.error, "(after 3 attempts)"),
	      "a stream that is always cut mid-event gives up after 1 + 2 retries: %s", o.error);
	outcome_free(&o);
	llm_free(c2);
	llm_free(c);

	char *b = xasprintf("http://127.0.0.1:%d", f->port);
	c = client("anthropic", b, 5, 2);
	free(b);
	ask(c, "overloaded", &o);
	wait_all(&o, 1);
	CHECK(!strcmp(o.status, "ok") && !strcmp(o.text.buf, "after the overload") &&
	          o.r.attempts == 2,
	      "anthropic: an overloaded_error event is retried (%s)", o.error);
	outcome_free(&o);
	ask(c, "midevent-anthropic-once", &o);
	wait_all(&o, 1);
	CHECK(!strcmp(o.status, "ok") && !strcmp(o.text.buf, "after the cut") && o.r.attempts == 2,
	      "anthropic: a stream cut mid-event is retried (%s)", o.error);
	outcome_free(&o);
	ask(c, "invalid", &o);
	wait_all(&o, 1);
	CHECK(!strcmp(o.status, "error") &&
	          strstr(o.error, "invalid_request_error: prompt is too long") && o.r.attempts == 1,
	      "anthropic: an invalid_request_error event is not: %s", o.error);
	outcome_free(&o);
	llm_free(c);

	/* nothing listens: connection refused, retried, then a clear error */
	struct fake_llm dead;
	fake_llm_start(&dead, "tests/fake_llm/unit.json");
	char *deadBase = xstrdup(dead.zBase);
	fake_llm_stop(&dead);
	c = client("openai", deadBase, 5, 1);
	ask(c, "normal", &o);
	wait_all(&o, 1);
	CHECK(!strcmp(o.status, "error") && strstr(o.error, "cannot reach http://127.0.0.1:") &&
	          strstr(o.error, "after 2 attempts"),
	      "connection refused: %s", o.error);
	outcome_free(&o);
	llm_free(c);
	free(deadBase);
}

/* the fake server's /stats (its first line) into buf */
static void server_stats(const char *zUrl, char *buf, size_t n)
{
	CURL *e = curl_easy_init();
	FILE *mem = fmemopen(NULL, 8192, "w+");
	curl_easy_setopt(e, CURLOPT_URL, zUrl);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, mem);
	curl_easy_perform(e);
	curl_easy_cleanup(e);
	rewind(mem);
	if (!fgets(buf, (int)n, mem))
		buf[0] = 0;
	fclose(mem);
}

static void stall_and_cancel(const struct fake_llm *f)
{
	struct llm *c = client("openai", f->zBase, 1, 0);
	struct outcome o;
	int t0 = ticks;
	double s0 = now_s();
	ask(c, "stall", &o);
	wait_all(&o, 1);
	double took = now_s() - s0;
	CHECK(!strcmp(o.status, "error") && strstr(o.error, "stalled: nothing received for 1 s") &&
	          took >= 1 && took < 5 && o.text.len > 0,
	      "a stream that stalls past the limit ends in %.2f s: %s (the partial text kept: %zu "
	      "bytes)",
	      took, o.error, o.text.len);
	CHECK(ticks - t0 >= 30,
	      "the loop kept running while the stream stalled (%d ticks of 20 ms)", ticks - t0);
	outcome_free(&o);

	ask(c, "slow", &o);
	o.cancelAfterDelta = 1;
	s0 = now_s();
	wait_all(&o, 1);
	CHECK(!strcmp(o.status, "cancelled") && o.deltasAfterCancel == 0 && now_s() - s0 < 1,
	      "a request cancelled from its delta hook ends at once, with no more deltas");
	outcome_free(&o);
	llm_free(c);

	/* at most two in flight: the server never sees three at once */
	struct llm_config lc = settings("openai", f->zBase);
	lc.maxInFlight = 2;
	c = make(&lc);
	struct outcome many[5];
	int maxRunning = 0;
	for (int i = 0; i < 5; i++)
		ask(c, "limit", &many[i]);
	CHECK(llm_pending(c) == 5 && llm_running(c) == 0,
	      "submitting starts nothing until the loop runs (5 pending)");
	double t1 = now_s();
	for (;;) {
		int left = 0;
		for (int i = 0; i < 5; i++)
			left += !many[i].done;
		if (!left || now_s() - t1 > 30)
			break;
		loop_once(L, 0.5);
		if (llm_running(c) > maxRunning)
			maxRunning = llm_running(c);
	}
	int ok = 0;
	for (int i = 0; i < 5; i++) {
		ok += !strcmp(many[i].status, "ok");
		outcome_free(&many[i]);
	}
	/* the server counts a request as ended after it has written the reply,
	 * so the client may ask before it did: asked again until none is in
	 * flight there (at most 10 s) */
	char *url = xasprintf("http://127.0.0.1:%d/stats", f->port), line[4096] = "";
	const char *seen = NULL, *done = NULL;
	for (double t2 = now_s(); !done && now_s() - t2 < 10;) {
		if (seen)
			loop_once(L, 0.1);
		server_stats(url, line, sizeof line);
		seen = strstr(line, "\"scenario: limit\": ");
		done = seen ? strstr(seen, "\"concurrent\": 0,") : NULL;
	}
	CHECK(ok == 5 && maxRunning == 2 && seen &&
	          strstr(seen, "{\"requests\": 5, \"concurrent\": 0, \"max_concurrent\": 2}") ==
	              strchr(seen, '{'),
	      "five requests with two in flight: all done, at most two running (%d; server: %.74s)",
	      maxRunning, seen ? seen : line);
	free(url);
	llm_free(c);
}

static void headers(const struct fake_llm *f)
{
	strbuf log = STRBUF_INIT;
	char err[KL_ERRLEN];
	read_file(f->zLog, &log, 64u << 20, err);
	CHECK(log.buf && strstr(log.buf, "\"Authorization\": \"Bearer " KEY "\"") &&
	          strstr(log.buf, "\"x-api-key\": \"" KEY "\"") &&
	          strstr(log.buf, "\"anthropic-version\": \"2023-06-01\""),
	      "the key goes in Authorization (openai) and x-api-key (anthropic) headers");
	CHECK(log.buf && strstr(log.buf, "\"path\": \"/v1/chat/completions\"") &&
	          strstr(log.buf, "\"path\": \"/v1/messages\"") &&
	          strstr(log.buf, "\"stream\": true") &&
	          strstr(log.buf, "\"include_usage\": true") &&
	          strstr(log.buf, "\"max_tokens\": 8192") &&
	          strstr(log.buf, "\"system\": \"You are a test.\""),
	      "the endpoints, stream: true, usage asked for, anthropic's max_tokens and system");
	sb_free(&log);
}

static void command(void)
{
	struct llm_config lc;
	llm_config_defaults(&lc);
	lc.zProvider = "command";
	lc.zModel = "local-7b";
	lc.zCommand = "printf 'model=%s\\n' \"$KLOOP_MODEL\"; cat";
	char err[KL_ERRLEN];
	struct llm *c = llm_new(L, &lc, err);
	struct outcome o;
	ask(c, "cmd", &o);
	wait_all(&o, 1);
	CHECK(!strcmp(o.status, "ok") &&
	          !strcmp(o.text.buf,
	                  "model=local-7b\nYou are a test.\n\nPlease answer. scenario: cmd") &&
	          o.r.inTokens == -1 && o.r.cost == -1,
	      "command: the prompt on stdin, the reply on stdout, $KLOOP_MODEL set (%s)", o.error);
	outcome_free(&o);
	llm_free(c);

	lc.zCommand = "cat >/dev/null; echo 'model not found: local-7b' >&2; exit 3";
	c = llm_new(L, &lc, err);
	ask(c, "cmd", &o);
	wait_all(&o, 1);
	CHECK(!strcmp(o.status, "error") &&
	          strstr(o.error, "exited with status 3: model not found") && o.r.attempts == 1,
	      "command: a program that exits non-zero: %s", o.error);
	outcome_free(&o);
	llm_free(c);

	lc.zCommand = "exit 0";
	c = llm_new(L, &lc, err);
	ask(c, "cmd", &o);
	wait_all(&o, 1);
	CHECK(!strcmp(o.status, "error") && strstr(o.error, "printed nothing"),
	      "command: a program that does not read its stdin and prints nothing: %s", o.error);
	outcome_free(&o);
	llm_free(c);

	lc.zCommand = "sleep 30";
	lc.stallS = 0.5;
	c = llm_new(L, &lc, err);
	int t0 = ticks;
	double s0 = now_s();
	ask(c, "cmd", &o);
	wait_all(&o, 1);
	CHECK(!strcmp(o.status, "error") && strstr(o.error, "stalled") && now_s() - s0 < 3 &&
	          ticks > t0,
	      "command: a program that hangs is killed after the stall limit: %s", o.error);
	outcome_free(&o);
	llm_free(c);

	lc.zCommand = "";
	CHECK(!llm_new(L, &lc, err) && strstr(err, "needs a command"), "command: none given: %s",
	      err);
	lc.zProvider = "gemini";
	CHECK(!llm_new(L, &lc, err) &&
	          strstr(err, "expected openai, anthropic or command, got 'gemini'"),
	      "an unknown provider: %s", err);
}

static void config(void)
{
	struct config cfg;
	char err[KL_ERRLEN];
	struct llm_config lc;
	memset(&cfg, 0, sizeof cfg);
	CHECK(llm_config_from(&lc, &cfg, err) < 0 && strstr(err, "no LLM provider"), "%s", err);
	cfg.zProvider = "anthropic";
	CHECK(llm_config_from(&lc, &cfg, err) < 0 && strstr(err, "no model for the anthropic"),
	      "%s", err);
	cfg.zModel = "claude";
	unsetenv("ANTHROPIC_API_KEY");
	CHECK(llm_config_from(&lc, &cfg, err) < 0 && strstr(err, "ANTHROPIC_API_KEY is not set"),
	      "%s", err);
	setenv("MY_KEY_VAR", "k-123", 1);
	cfg.zApiKeyEnv = "MY_KEY_VAR";
	cfg.llmRetries = 5;
	cfg.priceIn = 1;
	CHECK(llm_config_from(&lc, &cfg, err) == 0 && !strcmp(lc.zApiKey, "k-123") &&
	          lc.maxRetries == 5 && lc.priceIn == 1,
	      "the key from the variable the config names; the llm_* settings carried");
	cfg.zProvider = "openai";
	cfg.zApiKeyEnv = NULL;
	unsetenv("OPENAI_API_KEY");
	CHECK(llm_config_from(&lc, &cfg, err) == 0 && !lc.zApiKey,
	      "openai without a key is allowed (local servers need none)");
	cfg.zProvider = "command";
	CHECK(llm_config_from(&lc, &cfg, err) < 0 && strstr(err, "needs a command"), "%s", err);
}

/* what a request may cost before it is sent: what a budget is held against */
static void estimate(void)
{
	struct llm_config lc;
	llm_config_defaults(&lc);
	lc.zProvider = "command";
	lc.zCommand = "cat";
	char err[KL_ERRLEN];
	struct llm *c = llm_new(L, &lc, err);
	CHECK(c && llm_cost_estimate(c, 4000, 500) == -1,
	      "no estimate without prices (nothing is counted against a budget)");
	llm_free(c);
	lc.priceIn = 3;   /* USD per million tokens */
	lc.priceOut = 15; /* 4000 bytes: 1000 tokens in */
	c = llm_new(L, &lc, err);
	CHECK(fabs(llm_cost_estimate(c, 4000, 500) - (1000 * 3 + 500 * 15) / 1e6) < 1e-12,
	      "a token per 4 bytes in, the longest reply seen out ($%g)",
	      llm_cost_estimate(c, 4000, 500));
	CHECK(fabs(llm_cost_estimate(c, 4000, 0) - (1000 * 3 + 1024 * 15) / 1e6) < 1e-12,
	      "before any reply: 1024 tokens out ($%g)", llm_cost_estimate(c, 4000, 0));
	llm_free(c);
	lc.maxTokens = 8192;
	c = llm_new(L, &lc, err);
	CHECK(fabs(llm_cost_estimate(c, 4000, 500) - (1000 * 3 + 8192 * 15) / 1e6) < 1e-12,
	      "with max_tokens set, a reply may be that long ($%g)",
	      llm_cost_estimate(c, 4000, 500));
	llm_free(c);
}

int main(void)
{
	/* the fake server is on 127.0.0.1: no proxy in between */
	static const char *const proxies[] = {"http_proxy",  "https_proxy", "HTTP_PROXY",
	                                      "HTTPS_PROXY", "all_proxy",   "ALL_PROXY"};
	for (size_t i = 0; i < sizeof proxies / sizeof *proxies; i++)
		unsetenv(proxies[i]);
	L = loop_new();
	tickTimer = loop_add_timer(L, 0.02, on_tick, NULL);
	struct fake_llm f;
	if (fake_llm_start(&f, "tests/fake_llm/unit.json") < 0) {
		CHECK(0, "the fake LLM server starts (python3 tests/fake_llm/server.py)");
		return check_done();
	}
	both_formats(&f);
	openai_only(&f);
	retries(&f);
	stall_and_cancel(&f);
	headers(&f);
	fake_llm_stop(&f);
	command();
	estimate();
	config();
	loop_del_timer(L, tickTimer);
	loop_free(L);
	return check_done();
}
