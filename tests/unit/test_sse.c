/*
 * test_sse.c - the Server-Sent Events parser: the events of a stream come out
 * the same however the bytes are cut (one byte at a time, a CRLF split in
 * two, every cut point), with LF, CRLF and CR line ends, multi-line data,
 * comments, event names, a BOM, a pending event at the end, a stream cut
 * inside a line, and limits.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "sse.h"

struct got {
	strbuf log; /* "name=data|" per event */
	int n;
	int failAt; /* return -1 at this event (1-based), 0: never */
};

static int on_event(const char *zEvent, const char *zData, size_t nData, void *arg, char *err)
{
	struct got *g = arg;
	g->n++;
	sb_addf(&g->log, "%s=", zEvent);
	sb_add(&g->log, zData, nData);
	sb_adds(&g->log, "|");
	if (strlen(zData) != nData)
		sb_adds(&g->log, "(length mismatch)");
	if (g->failAt && g->n == g->failAt)
		return kl_err(err, "stopped at event %d", g->n);
	return 0;
}

/* feed s in pieces of `step` bytes (0: all at once), then finish */
static char *parse(const char *s, size_t step, int *pRc)
{
	struct sse p;
	struct got g = {STRBUF_INIT, 0, 0};
	char err[KL_ERRLEN];
	sse_init(&p, 0);
	size_t n = strlen(s);
	int rc = 0;
	if (!step)
		step = n ? n : 1;
	for (size_t i = 0; i < n && rc == 0; i += step)
		rc = sse_feed(&p, s + i, i + step <= n ? step : n - i, on_event, &g, err);
	if (rc == 0)
		rc = sse_finish(&p, on_event, &g, err);
	sse_free(&p);
	if (pRc)
		*pRc = rc;
	if (!g.log.buf)
		sb_adds(&g.log, "");
	return sb_detach(&g.log);
}

static void same_for_every_cut(const char *name, const char *s, const char *want)
{
	int bad = 0;
	for (size_t step = 0; step <= 7; step++) {
		char *got = parse(s, step, NULL);
		if (strcmp(got, want)) {
			printf("# step %zu: got %s\n", step, got);
			bad++;
		}
		free(got);
	}
	/* every single cut point, as two chunks */
	size_t n = strlen(s);
	for (size_t cut = 1; cut < n; cut++) {
		struct sse p;
		struct got g = {STRBUF_INIT, 0, 0};
		char err[KL_ERRLEN];
		sse_init(&p, 0);
		sse_feed(&p, s, cut, on_event, &g, err);
		sse_feed(&p, s + cut, n - cut, on_event, &g, err);
		sse_finish(&p, on_event, &g, err);
		if (strcmp(g.log.buf ? g.log.buf : "", want)) {
			printf("# cut at %zu: got %s\n", cut, g.log.buf ? g.log.buf : "");
			bad++;
		}
		sse_free(&p);
		sb_free(&g.log);
	}
	CHECK(bad == 0, "%s: the same events however the stream is cut", name);
}

int main(void)
{
	same_for_every_cut("OpenAI-style data lines",
	                   "data: {\"a\":1}\n\ndata: {\"b\":2}\n\ndata: [DONE]\n\n",
	                   "message={\"a\":1}|message={\"b\":2}|message=[DONE]|");
	same_for_every_cut("Anthropic-style named events",
	                   "event: message_start\ndata: {\"x\":1}\n\nevent: ping\ndata: {}\n\n",
	                   "message_start={\"x\":1}|ping={}|");
	same_for_every_cut("CRLF line ends", "event: e\r\ndata: one\r\n\r\ndata: two\r\n\r\n",
	                   "e=one|message=two|");
	same_for_every_cut("CR line ends", "data: one\r\rdata: two\r\r",
	                   "message=one|message=two|");
	same_for_every_cut("multi-line data joined by newlines",
	                   "data: line 1\ndata: line 2\ndata:\ndata:no space\n\n",
	                   "message=line 1\nline 2\n\nno space|");
	same_for_every_cut("comments, ids, retries and unknown fields are skipped",
	                   ": keep-alive\nid: 7\nretry: 10\nfoo: bar\ndata: x\n\n: bye\n\n",
	                   "message=x|");
	same_for_every_cut("an event name without data dispatches nothing and is reset",
	                   "event: lonely\n\ndata: y\n\n", "message=y|");
	same_for_every_cut("a leading BOM is dropped",
	                   "\xEF\xBB\xBF"
	                   "data: z\n\n",
	                   "message=z|");
	same_for_every_cut("a field without a colon is a field with an empty value", "data\n\n",
	                   "message=|");

	int rc;
	char *got = parse("data: a\n\ndata: pending", 0, &rc);
	CHECK(rc == 0 && !strcmp(got, "message=a|message=pending|"),
	      "an event pending at the end is dispatched by sse_finish (%s)", got);
	free(got);
	got = parse("data: {\"x\":\"a: b\"}\n\n", 0, &rc);
	CHECK(!strcmp(got, "message={\"x\":\"a: b\"}|"), "a colon inside the value stays (%s)",
	      got);
	free(got);

	/* where the bytes stop: inside a line (a cut stream) or after one */
	struct sse p;
	struct got g = {STRBUF_INIT, 0, 0};
	char err[KL_ERRLEN] = "";
	sse_init(&p, 0);
	sse_feed(&p, "data: {\"a\":1}\n\ndata: {\"b\"", 25, on_event, &g, err);
	CHECK(sse_partial(&p) && g.n == 1, "bytes that end inside a line are a partial event");
	sse_feed(&p, ":2}\n", 4, on_event, &g, err);
	CHECK(!sse_partial(&p) && g.n == 1,
	      "once the line ends it is not partial (the event waits for its blank line)");
	sse_free(&p);
	sb_free(&g.log);
	g = (struct got){STRBUF_INIT, 0, 0};

	/* limits */
	sse_init(&p, 16);
	rc = sse_feed(&p, "data: 0123456789\ndata: 0123456789\n\n", 36, on_event, &g, err);
	CHECK(rc == -1 && strstr(err, "larger than 16 bytes") && g.n == 0,
	      "an event over the limit is refused: %s", err);
	sse_free(&p);
	sse_init(&p, 16);
	rc = sse_feed(&p, "data: 01234567890123456789", 26, on_event, &g, err);
	CHECK(rc == -1 && strstr(err, "longer than 16 bytes"),
	      "a line over the limit, before its end arrives, is refused: %s", err);
	sse_free(&p);

	/* the callback stops the feed */
	sse_init(&p, 0);
	g.failAt = 2;
	g.n = 0;
	rc = sse_feed(&p, "data: 1\n\ndata: 2\n\ndata: 3\n\n", 27, on_event, &g, err);
	CHECK(rc == -1 && g.n == 2 && !strcmp(err, "stopped at event 2"),
	      "an error from the callback stops the feed at that event (%d events)", g.n);
	sse_free(&p);
	sb_free(&g.log);

	/* a large stream fed in odd-sized chunks: linear, every event intact */
	strbuf big = STRBUF_INIT;
	for (int i = 0; i < 20000; i++)
		sb_addf(&big, "data: {\"i\":%d,\"pad\":\"%0200d\"}\n\n", i, 0);
	sse_init(&p, 0);
	struct got g2 = {STRBUF_INIT, 0, 0};
	rc = 0;
	for (size_t i = 0; i < big.len && rc == 0; i += 4093)
		rc = sse_feed(&p, big.buf + i, i + 4093 <= big.len ? 4093 : big.len - i, on_event,
		              &g2, err);
	CHECK(rc == 0 && g2.n == 20000 && strstr(g2.log.buf, "{\"i\":19999,"),
	      "a 4 MB stream in 4093-byte chunks gives its 20000 events");
	sse_free(&p);
	sb_free(&g2.log);
	sb_free(&big);
	return check_done();
}
