/*
 * replay.c - stepping through a saved journal: its event lines are kept as
 * text and folded into a fresh state up to the chosen point.
 */
#include "replay.h"

#include <cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define JOURNAL_MAX ((size_t)1 << 34)

/* fold one more event (the r->k-th) into the state; a rejection is
 * reported the first time that event is folded */
static void apply(struct replay *r, const cJSON *ev)
{
	char err[KL_ERRLEN];
	if (ev && state_apply(&r->st, ev, err) < 0 && r->k >= r->nFolded) {
		sb_addf(&r->warnings, "%s: event %d ignored: %s\n", r->zPath, r->k + 1, err);
		r->nBad++;
	}
	r->k++;
	if (r->k > r->nFolded)
		r->nFolded = r->k;
}

struct replay *replay_open(const char *zPath, char *err)
{
	struct replay *r = xcalloc(1, sizeof *r);
	r->zPath = xstrdup(zPath);
	state_init(&r->st);
	if (read_file(zPath, &r->text, JOURNAL_MAX, err) < 0) {
		replay_close(r);
		return NULL;
	}
	/* one pass: index each event's line and fold it */
	size_t nAlloc = 0, nAlloc2 = 0;
	const char *p = r->text.buf, *end = r->text.buf + r->text.len;
	int line = 0;
	while (p && p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
		line++;
		if (len) {
			cJSON *o = cJSON_ParseWithLength(p, len);
			if (o && cJSON_IsObject(o)) {
				xgrow((void **)&r->aLine, &nAlloc, (size_t)r->nEv + 1,
				      sizeof *r->aLine);
				xgrow((void **)&r->aLen, &nAlloc2, (size_t)r->nEv + 1,
				      sizeof *r->aLen);
				r->aLine[r->nEv] = (size_t)(p - r->text.buf);
				r->aLen[r->nEv++] = len;
				apply(r, o);
			} else {
				sb_addf(&r->warnings, "%s:%d: %s; line ignored\n", zPath, line,
				        !nl ? "a truncated last line"
				        : o ? "not a JSON object"
				            : "not valid JSON");
				r->nBad++;
			}
			cJSON_Delete(o);
		}
		p += len + 1;
	}
	if (!r->nEv) {
		kl_err(err, "%s: the journal holds no events", zPath);
		replay_close(r);
		return NULL;
	}
	return r;
}

void replay_close(struct replay *r)
{
	if (!r)
		return;
	free(r->zPath);
	sb_free(&r->text);
	free(r->aLine);
	free(r->aLen);
	sb_free(&r->warnings);
	state_free(&r->st);
	free(r);
}

static cJSON *parse_event(const struct replay *r, int i)
{
	return cJSON_ParseWithLength(r->text.buf + r->aLine[i], r->aLen[i]);
}

void replay_seek(struct replay *r, int k)
{
	if (k < 0)
		k = 0;
	if (k > r->nEv)
		k = r->nEv;
	if (k < r->k) {
		state_free(&r->st);
		r->k = 0;
	}
	char err[KL_ERRLEN];
	for (; r->k < k; r->k++) {
		cJSON *ev = parse_event(r, r->k);
		/* a rejected event was reported when the journal was opened */
		if (ev && state_apply(&r->st, ev, err) < 0 && r->k >= r->nFolded) {
			sb_addf(&r->warnings, "%s: event %d ignored: %s\n", r->zPath, r->k + 1,
			        err);
			r->nBad++;
		}
		if (r->k >= r->nFolded)
			r->nFolded = r->k + 1;
		cJSON_Delete(ev);
	}
}

char *replay_event_text(const struct replay *r, int i)
{
	if (i < 0 || i >= r->nEv)
		return NULL;
	return xstrndup(r->text.buf + r->aLine[i], r->aLen[i]);
}

void replay_describe(const struct replay *r, int i, char *buf, size_t n)
{
	cJSON *ev = i >= 0 && i < r->nEv ? parse_event(r, i) : NULL;
	const char *type = cJSON_GetStringValue(cJSON_GetObjectItem(ev, "type"));
	if (!type) {
		snprintf(buf, n, "-");
	} else if (!strcmp(type, "candidate_added")) {
		strbuf ps = STRBUF_INIT;
		const cJSON *p;
		cJSON_ArrayForEach(p, cJSON_GetObjectItem(ev, "parents"))
		    sb_addf(&ps, "%s%d", ps.len ? "," : "", p->valueint);
		const char *org = cJSON_GetStringValue(cJSON_GetObjectItem(ev, "origin"));
		snprintf(buf, n, "candidate_added #%d (%s%s%s)",
		         (int)cJSON_GetNumberValue(cJSON_GetObjectItem(ev, "id")), org ? org : "?",
		         ps.len ? ", parents " : "", ps.len ? ps.buf : "");
		sb_free(&ps);
	} else if (!strcmp(type, "eval_started") || !strcmp(type, "eval_finished")) {
		const cJSON *res = cJSON_GetObjectItem(ev, "result");
		const char *st = cJSON_GetStringValue(cJSON_GetObjectItem(res, "status"));
		snprintf(buf, n, "%s #%d%s%s", type,
		         (int)cJSON_GetNumberValue(cJSON_GetObjectItem(ev, "candidate")),
		         st ? ": " : "", st ? st : "");
	} else if (!strcmp(type, "session_started")) {
		const char *t = cJSON_GetStringValue(cJSON_GetObjectItem(ev, "task"));
		const char *b = cJSON_GetStringValue(cJSON_GetObjectItem(ev, "backend"));
		snprintf(buf, n, "session_started (%s on %s)", t ? t : "?", b ? b : "?");
	} else {
		const cJSON *id = cJSON_GetObjectItem(ev, "id");
		if (cJSON_IsNumber(id))
			snprintf(buf, n, "%s #%d", type, id->valueint);
		else
			snprintf(buf, n, "%s", type);
	}
	cJSON_Delete(ev);
}

int replay_write_prefix(const struct replay *r, int k, const char *zPath, char *err)
{
	if (k < 0 || k > r->nEv)
		return kl_err(err, "event %d is outside the journal (0 to %d)", k, r->nEv);
	int fd = open(zPath, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return kl_err(err, "%s: cannot create the new journal: %s", zPath, strerror(errno));
	int rc = 0;
	for (int i = 0; i < k && rc == 0; i++) {
		rc = write_all(fd, r->text.buf + r->aLine[i], r->aLen[i]);
		if (rc == 0)
			rc = write_all(fd, "\n", 1);
	}
	if (rc < 0)
		kl_err(err, "%s: cannot write the new journal: %s", zPath, strerror(errno));
	if (close(fd) < 0 && rc == 0)
		rc = kl_err(err, "%s: cannot write the new journal: %s", zPath, strerror(errno));
	return rc;
}
