/*
 * replay.c - stepping through a saved journal: its event lines are kept as
 * text and folded into a fresh state up to the chosen point.
 */
#include "replay.h"

#include "event.h"
#include "journal.h"
#include "result.h"

#include <cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* fold one more event (the r->k-th) into the state; a rejection is
 * reported the first time that event is folded */
static void apply(struct replay *r, const cJSON *ev)
{
	char err[KL_ERRLEN];
	if (ev && state_apply(&r->st, ev, err) < 0 && r->k >= r->nFolded) {
		sb_addf(&r->warnings, "%s:%d: event %d ignored: %s\n", r->zPath, r->aNo[r->k],
		        r->k + 1, err);
		r->nBad++;
	}
	r->k++;
	if (r->k > r->nFolded)
		r->nFolded = r->k;
}

/* the journal reader's callbacks: index each event's line and fold it */
struct scan {
	struct replay *r;
	size_t nAlloc, nAlloc2, nAlloc3;
};

static void on_event(const cJSON *ev, const char *zLine, size_t nLine, int line, void *arg)
{
	struct scan *sc = arg;
	struct replay *r = sc->r;
	xgrow((void **)&r->aLine, &sc->nAlloc, (size_t)r->nEv + 1, sizeof *r->aLine);
	xgrow((void **)&r->aLen, &sc->nAlloc2, (size_t)r->nEv + 1, sizeof *r->aLen);
	xgrow((void **)&r->aNo, &sc->nAlloc3, (size_t)r->nEv + 1, sizeof *r->aNo);
	r->aNo[r->nEv] = line;
	r->aLine[r->nEv] = r->text.len;
	r->aLen[r->nEv++] = nLine;
	sb_add(&r->text, zLine, nLine);
	sb_add(&r->text, "\n", 1);
	apply(r, ev);
}

static void on_bad(int line, const char *zWhy, int truncated, void *arg)
{
	struct scan *sc = arg;
	sb_addf(&sc->r->warnings, "%s:%d: %s; line ignored\n", sc->r->zPath, line,
	        truncated ? "a truncated last line" : zWhy);
	sc->r->nBad++;
}

struct replay *replay_open(const char *zPath, char *err)
{
	struct replay *r = xcalloc(1, sizeof *r);
	r->zPath = xstrdup(zPath);
	state_init(&r->st);
	struct scan sc = {r, 0, 0, 0};
	if (journal_read(zPath, on_event, on_bad, &sc, err) < 0) {
		replay_close(r);
		return NULL;
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
	free(r->aNo);
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
			sb_addf(&r->warnings, "%s:%d: event %d ignored: %s\n", r->zPath,
			        r->aNo[r->k], r->k + 1, err);
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

/* a number field as an int: 0 when missing or not a number (a cast of the
 * NaN cJSON_GetNumberValue gives for those is undefined) */
static int num_int(const cJSON *o, const char *zKey)
{
	const cJSON *v = cJSON_GetObjectItem(o, zKey);
	return cJSON_IsNumber(v) ? v->valueint : 0;
}

void replay_describe(const struct replay *r, int i, char *buf, size_t n)
{
	cJSON *ev = i >= 0 && i < r->nEv ? parse_event(r, i) : NULL;
	const char *type = cJSON_GetStringValue(cJSON_GetObjectItem(ev, "type"));
	enum ev_type t = ev_type_of(ev);
	if (!type) {
		snprintf(buf, n, "-");
	} else if (t == EV_CANDIDATE_ADDED) {
		strbuf ps = STRBUF_INIT;
		const cJSON *p;
		cJSON_ArrayForEach(p, cJSON_GetObjectItem(ev, "parents"))
		    sb_addf(&ps, "%s%d", ps.len ? "," : "", p->valueint);
		const char *org = cJSON_GetStringValue(cJSON_GetObjectItem(ev, "origin"));
		snprintf(buf, n, "candidate_added #%d (%s%s%s)",
		         cJSON_IsNumber(cJSON_GetObjectItem(ev, "id"))
		             ? cJSON_GetObjectItem(ev, "id")->valueint
		             : 0,
		         org ? org : "?", ps.len ? ", parents " : "", ps.len ? ps.buf : "");
		sb_free(&ps);
	} else if (t == EV_EVAL_STARTED || t == EV_EVAL_FINISHED || t == EV_EVAL_RUNNING) {
		const cJSON *res = cJSON_GetObjectItem(ev, "result");
		struct verdict v;
		verdict_decode(res, &v);
		const char *st = res && *v.zStatus ? v.zStatus : NULL;
		/* the same machine code as a candidate timed before */
		const char *nt = v.zNotTimed;
		/* what its time and its precision are worth (issues 24, 25) */
		const char *flags = v.precision.reduced   ? ", reduced precision"
		                    : v.roofline.zSuspect ? ", below the device's floor: a suspect"
		                    : v.timing.unverified ? ", its time unverified"
		                                          : "";
		snprintf(buf, n, "%s #%d%s%s%s%s%s%s", type,
		         cJSON_IsNumber(cJSON_GetObjectItem(ev, "candidate"))
		             ? cJSON_GetObjectItem(ev, "candidate")->valueint
		             : 0,
		         st ? ": " : "", st ? st : "", st ? flags : "", nt ? " (" : "",
		         nt ? nt : "", nt ? ")" : "");
	} else if (t == EV_PARENTS_CHOSEN) {
		/* the search: each parent and the policy's reason */
		strbuf sb = STRBUF_INIT;
		const cJSON *p;
		cJSON_ArrayForEach(p, cJSON_GetObjectItem(ev, "parents"))
		{
			const char *why = cJSON_GetStringValue(cJSON_GetObjectItem(p, "reason"));
			sb_addf(&sb, "%s#%d (%s)", sb.len ? "; " : "", num_int(p, "id"),
			        why ? why : "");
		}
		/* a round that overlapped open ones saw a lagged snapshot */
		const cJSON *snap = cJSON_GetObjectItem(ev, "snapshot");
		const cJSON *th = cJSON_GetObjectItem(snap, "through");
		if (cJSON_IsNumber(th) && th->valuedouble >= 0) {
			int nb = cJSON_GetArraySize(cJSON_GetObjectItem(snap, "busy"));
			sb_addf(&sb,
			        " [overlapping open rounds: saw rounds to %d, left out %d former "
			        "parent%s]",
			        th->valueint, nb, nb == 1 ? "" : "s");
		}
		const char *pol = cJSON_GetStringValue(cJSON_GetObjectItem(ev, "policy"));
		snprintf(buf, n, "parents_chosen round %d by %s: %s", num_int(ev, "round"),
		         pol ? pol : "?", sb.len ? sb.buf : "none");
		sb_free(&sb);
	} else if (t == EV_ROUND_STARTED || t == EV_ROUND_FINISHED) {
		const cJSON *b = cJSON_GetObjectItem(ev, "best");
		const cJSON *bs = cJSON_GetObjectItem(ev, "best_speedup");
		if (cJSON_IsNumber(bs) && cJSON_IsNumber(b) && b->valueint)
			snprintf(buf, n, "%s %d: best #%d %.3gx", type, num_int(ev, "round"),
			         b->valueint, bs->valuedouble);
		else
			snprintf(buf, n, "%s %d", type, num_int(ev, "round"));
	} else if (t == EV_AB_COMPARED) {
		const char *e = cJSON_GetStringValue(cJSON_GetObjectItem(ev, "error"));
		int won = cJSON_IsTrue(cJSON_GetObjectItem(ev, "won"));
		int unv = cJSON_IsFalse(cJSON_GetObjectItem(ev, "verified"));
		snprintf(buf, n, "ab_compared #%d vs #%d: %s%.3gx over %d pairs, faster in %d%s%s",
		         num_int(ev, "candidate"), num_int(ev, "incumbent"),
		         unv   ? "unverified (kloop's clock could not bound its times), "
		         : won ? "won, "
		               : "not beyond the noise, ",
		         cJSON_GetNumberValue(cJSON_GetObjectItem(ev, "ratio")),
		         num_int(ev, "pairs"), num_int(ev, "wins"), e ? "; " : "", e ? e : "");
	} else if (cJSON_IsNumber(cJSON_GetObjectItem(ev, "candidate")) && t >= EV_SEARCH_STARTED &&
	           t < EV_COUNT) {
		/* new_best, suspect_flagged, pin, ban, ... */
		const char *why = cJSON_GetStringValue(cJSON_GetObjectItem(ev, "why"));
		const cJSON *sp = cJSON_GetObjectItem(ev, "speedup");
		char x[64] = "";
		if (cJSON_IsNumber(sp))
			snprintf(x, sizeof x, " %.3gx", sp->valuedouble);
		snprintf(buf, n, "%s #%d%s%s%s", type, num_int(ev, "candidate"), x, why ? ": " : "",
		         why ? why : "");
	} else if (t == EV_SEARCH_SET || t == EV_SEARCH_STOPPED || t == EV_SEARCH_FINISHED ||
	           t == EV_BAN_CATEGORY || t == EV_PREFER_CATEGORY) {
		const char *a = cJSON_GetStringValue(cJSON_GetObjectItem(ev, "key"));
		const char *b = cJSON_GetStringValue(cJSON_GetObjectItem(ev, "reason"));
		const char *c = cJSON_GetStringValue(cJSON_GetObjectItem(ev, "category"));
		char *v = json_text(cJSON_GetObjectItem(ev, "value"), 0);
		snprintf(buf, n, "%s%s%s%s%s%s%s", type, a ? " " : "", a ? a : "",
		         a && v ? " = " : "", a && v ? v : "", b || c ? ": " : "",
		         b   ? b
		         : c ? c
		             : "");
		free(v);
	} else if (t == EV_COMPILE_BASELINE) {
		/* torch.compile's baseline, compiled in the background of a search */
		const cJSON *cm = cJSON_GetObjectItem(ev, "compile");
		const char *d = cJSON_GetStringValue(cJSON_GetObjectItem(ev, "device"));
		const char *e = cJSON_GetStringValue(cJSON_GetObjectItem(cm, "error"));
		const cJSON *ms = cJSON_GetObjectItem(cm, "median_ms");
		const cJSON *cs = cJSON_GetObjectItem(cm, "compile_seconds");
		if (cJSON_IsNumber(ms))
			snprintf(
			    buf, n,
			    "compile_baseline on %s: torch.compile %.4g ms (compiled in %.1f s)",
			    d ? d : "?", ms->valuedouble, cJSON_IsNumber(cs) ? cs->valuedouble : 0);
		else
			snprintf(buf, n, "compile_baseline on %s: %s", d ? d : "?",
			         e ? e : "not measured");
	} else if (t == EV_SESSION_STARTED) {
		const char *t = cJSON_GetStringValue(cJSON_GetObjectItem(ev, "task"));
		const char *b = cJSON_GetStringValue(cJSON_GetObjectItem(ev, "backend"));
		snprintf(buf, n, "session_started (%s on %s)", t ? t : "?", b ? b : "?");
	} else if (t == EV_LLM_RESPONSE && num_int(ev, "same_as")) {
		/* a branch reply whose code the session has: no candidate */
		snprintf(buf, n, "llm_response r%d: the same code as #%d, not added again",
		         num_int(ev, "request"), num_int(ev, "same_as"));
	} else {
		/* an idea's event with its reason (the gate's, a duplicate's) */
		const cJSON *id = cJSON_GetObjectItem(ev, "id");
		const char *why = cJSON_GetStringValue(cJSON_GetObjectItem(ev, "reason"));
		if (cJSON_IsNumber(id))
			snprintf(buf, n, "%s #%d%s%s", type, id->valueint, why ? ": " : "",
			         why ? why : "");
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

int replay_find(const struct replay *r, int from, int dir, const char *zType)
{
	for (int i = from; i >= 0 && i < r->nEv; i += dir) {
		cJSON *ev = parse_event(r, i);
		const char *t = cJSON_GetStringValue(cJSON_GetObjectItem(ev, "type"));
		int hit = t && !strcmp(t, zType);
		cJSON_Delete(ev);
		if (hit)
			return i;
	}
	return -1;
}
