/*
 * sse.c - Server-Sent Events, parsed incrementally: lines end in LF, CRLF or
 * CR (a CRLF may arrive split across two chunks), data lines accumulate, a
 * blank line dispatches the event, comments and unknown fields are skipped.
 */
#include "sse.h"

#include <string.h>

#define SSE_DEFAULT_MAX (64u << 20)

void sse_init(struct sse *p, size_t maxEvent)
{
	memset(p, 0, sizeof *p);
	p->maxEvent = maxEvent ? maxEvent : SSE_DEFAULT_MAX;
}

void sse_free(struct sse *p)
{
	sb_free(&p->line);
	sb_free(&p->data);
	size_t m = p->maxEvent;
	memset(p, 0, sizeof *p);
	p->maxEvent = m;
}

static int dispatch(struct sse *p, sse_event_fn fn, void *arg, char *err)
{
	int had = p->hasData;
	char zEvent[sizeof p->zEvent];
	memcpy(zEvent, p->zEvent, sizeof zEvent);
	p->hasData = 0;
	p->zEvent[0] = 0;
	if (!had) {
		sb_reset(&p->data);
		return 0;
	}
	p->nEvents++;
	int rc = fn(zEvent[0] ? zEvent : "message", p->data.buf ? p->data.buf : "", p->data.len,
	            arg, err);
	sb_reset(&p->data);
	return rc < 0 ? -1 : 0;
}

/* one complete line (without its terminator) */
static int line(struct sse *p, const char *z, size_t n, sse_event_fn fn, void *arg, char *err)
{
	if (n == 0)
		return dispatch(p, fn, arg, err);
	if (z[0] == ':')
		return 0; /* a comment (keep-alive) */
	const char *colon = memchr(z, ':', n);
	size_t nName = colon ? (size_t)(colon - z) : n;
	const char *v = colon ? colon + 1 : z + n;
	size_t nv = (size_t)(z + n - v);
	if (nv && *v == ' ')
		v++, nv--;
	if (nName == 4 && !memcmp(z, "data", 4)) {
		if (p->data.len + nv + 1 > p->maxEvent)
			return kl_err(err, "an event is larger than %zu bytes", p->maxEvent);
		if (p->hasData)
			sb_add(&p->data, "\n", 1);
		sb_add(&p->data, v, nv);
		p->hasData = 1;
	} else if (nName == 5 && !memcmp(z, "event", 5)) {
		size_t k = nv < sizeof p->zEvent - 1 ? nv : sizeof p->zEvent - 1;
		memcpy(p->zEvent, v, k);
		p->zEvent[k] = 0;
	}
	/* id, retry and unknown fields are ignored */
	return 0;
}

int sse_feed(struct sse *p, const char *buf, size_t n, sse_event_fn fn, void *arg, char *err)
{
	/* a UTF-8 byte order mark may open the stream, itself cut in pieces */
	static const char bom[] = "\xEF\xBB\xBF";
	while (p->bom >= 0 && p->bom < 3 && n) {
		if (*buf != bom[p->bom]) {
			sb_add(&p->line, bom, (size_t)p->bom);
			p->bom = -1;
			break;
		}
		buf++, n--, p->bom++;
	}
	if (p->bom == 3)
		p->bom = -1;
	const char *end = buf + n;
	while (buf < end) {
		if (p->afterCR) {
			p->afterCR = 0;
			if (*buf == '\n') {
				buf++;
				continue;
			}
		}
		const char *nl = buf;
		while (nl < end && *nl != '\n' && *nl != '\r')
			nl++;
		if (nl == end) {
			if (p->line.len + (size_t)(end - buf) > p->maxEvent)
				return kl_err(err, "a line is longer than %zu bytes", p->maxEvent);
			sb_add(&p->line, buf, (size_t)(end - buf));
			break;
		}
		int rc;
		if (p->line.len) {
			sb_add(&p->line, buf, (size_t)(nl - buf));
			rc = line(p, p->line.buf, p->line.len, fn, arg, err);
			sb_reset(&p->line);
		} else {
			rc = line(p, buf, (size_t)(nl - buf), fn, arg, err);
		}
		if (rc < 0)
			return -1;
		p->afterCR = *nl == '\r';
		buf = nl + 1;
	}
	return 0;
}

int sse_partial(const struct sse *p)
{
	return p->line.len > 0;
}

int sse_finish(struct sse *p, sse_event_fn fn, void *arg, char *err)
{
	if (p->line.len) {
		int rc = line(p, p->line.buf, p->line.len, fn, arg, err);
		sb_reset(&p->line);
		if (rc < 0)
			return -1;
	}
	return dispatch(p, fn, arg, err);
}
