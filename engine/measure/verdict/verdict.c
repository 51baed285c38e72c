/*
 * verdict.c - a verdict's JSON decoded into its struct (verdict.h), and
 * the struct encoded into it: the one place its keys are read by name, and
 * the one place they are written.
 */
#include "verdict.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

#include "json.h"

static const char *str_or(const cJSON *o, const char *k, const char *zDefault)
{
	const char *z = cJSON_GetStringValue(cJSON_GetObjectItem(o, k));
	return z ? z : zDefault;
}

static double num(const cJSON *o, const char *k)
{
	return json_num(o, k, NAN);
}

static int count(const cJSON *o, const char *k)
{
	const cJSON *n = cJSON_GetObjectItem(o, k);
	return cJSON_IsNumber(n) ? n->valueint : -1;
}

/*
 * The verdict's typed keys, one table per object: each key, how it is kept
 * (and how its none is read and written), its member, and whether a
 * completed verdict always has it.  The decoder reads them by these tables
 * and the encoder writes them by the same: a key is named once.
 */
/* how a field is kept in the struct, and how its none is written */
enum kind {
	K_STR,     /* a string, NULL none: removed */
	K_STRE,    /* a string, "" none: written "" */
	K_NUM,     /* a number, NAN none: removed */
	K_NUMNULL, /* a number, NAN none: null */
	K_ID,      /* an int, 0 none: removed */
	K_COUNT,   /* an int, -1 none: removed */
	K_BOOL,    /* an int: true or false */
	K_NBOOL,   /* an int, 1: the key false (timing's "verified") */
};

struct field {
	const char *zKey;
	enum kind kind;
	size_t off;
	int complete; /* a completed verdict always has it (VERDICT_COMPLETE) */
};

#define F(key, kind, st, member, complete)                                                         \
	{                                                                                          \
		key, kind, offsetof(struct st, member), complete                                   \
	}

static const struct field aTop[] = {
    F("reason", K_STRE, verdict, zReason, 1),
    F("stage", K_STR, verdict, zStage, 0),
    F("task", K_STRE, verdict, zTask, 1),
    F("source", K_STRE, verdict, zSource, 1),
    F("backend", K_STRE, verdict, zBackend, 1),
    F("device", K_STR, verdict, zDevice, 0),
    F("code_hash", K_STR, verdict, zCodeHash, 0),
    F("time_ms", K_NUMNULL, verdict, timeMs, 1),
    F("baseline_ms", K_NUMNULL, verdict, baselineMs, 1),
    F("baseline", K_STRE, verdict, zBaseline, 1),
    F("speedup", K_NUMNULL, verdict, speedup, 1),
    F("speedup_time_ms", K_NUM, verdict, speedupTimeMs, 0),
    F("baseline_compile_ms", K_NUM, verdict, baselineCompileMs, 0),
    F("speedup_compile", K_NUM, verdict, speedupCompile, 0),
    F("baseline_compile_error", K_STR, verdict, zBaselineCompileError, 0),
    F("baseline_measured_ms", K_NUM, verdict, baselineMeasuredMs, 0),
    F("not_timed", K_STR, verdict, zNotTimed, 0),
    F("same_code_as", K_ID, verdict, sameCodeAs, 0),
    F("kept_state", K_STR, verdict, zKeptState, 0),
    F("stderr_tail", K_STR, verdict, zStderrTail, 0),
    F("rerun_abandoned", K_STR, verdict, zRerunAbandoned, 0),
};

/* the pool's worker ("worker"), in the order the pool writes them */
static const struct field aWorker[] = {
    F("label", K_STR, verdict, zWorker, 0),
    F("host", K_STR, verdict, zWorkerHost, 0),
    F("device", K_STR, verdict, zWorkerDevice, 0),
};

static const struct field aTiming[] = {
    F("median_ms", K_NUM, verdict_timing, medianMs, 0),
    F("p10_ms", K_NUM, verdict_timing, p10Ms, 0),
    F("p90_ms", K_NUM, verdict_timing, p90Ms, 0),
    F("count", K_COUNT, verdict_timing, count, 0),
    F("rse", K_NUM, verdict_timing, rse, 0),
    F("converged", K_BOOL, verdict_timing, converged, 1),
    F("verified", K_NBOOL, verdict_timing, unverified, 1),
    F("clock_bound", K_STR, verdict_timing, zClockBound, 0),
    F("bound", K_STR, verdict_timing, zBound, 0),
    F("method", K_STR, verdict_timing, zMethod, 0),
    F("clock_note", K_STR, verdict_timing, zClockNote, 0),
    F("throttle_reason", K_STR, verdict_timing, zThrottleReason, 0),
    F("sm_clock_mhz_after", K_NUM, verdict_timing, smClockMhzAfter, 0),
};

static const struct field aAb[] = {
    F("incumbent_id", K_COUNT, verdict_ab, incumbent, 0),
    F("pairs", K_COUNT, verdict_ab, pairs, 0),
    F("wins", K_COUNT, verdict_ab, wins, 0),
    F("ratio", K_NUM, verdict_ab, ratio, 0),
    F("won", K_BOOL, verdict_ab, won, 1),
    F("verified", K_NBOOL, verdict_ab, unverified, 1),
    F("error", K_STR, verdict_ab, zError, 0),
    F("rule", K_STRE, verdict_ab, zRule, 0),
};

/* a BLAS baseline ("library_baselines"' entries) */
static const struct field aLibrary[] = {
    F("key", K_STRE, verdict_library, zKey, 0),
    F("library", K_STRE, verdict_library, zLibrary, 0),
    F("median_ms", K_NUM, verdict_library, medianMs, 0),
    F("speedup", K_NUM, verdict_library, speedup, 0),
    F("error", K_STR, verdict_library, zError, 0),
};

#undef F

/* the fields of table a from o into out (a struct verdict, verdict_timing
 * or verdict_ab): a key missing, or of another JSON type, is its kind's none */
static void decode_fields(const struct field *a, int n, const cJSON *o, void *out)
{
	for (int i = 0; i < n; i++) {
		const struct field *f = &a[i];
		char *p = (char *)out + f->off;
		const cJSON *it = cJSON_GetObjectItem(o, f->zKey);
		switch (f->kind) {
		case K_STR:
		case K_STRE: {
			const char *z = cJSON_GetStringValue(it);
			*(const char **)p = z ? z : f->kind == K_STRE ? "" : NULL;
			break;
		}
		case K_NUM:
		case K_NUMNULL:
			*(double *)p = cJSON_IsNumber(it) ? it->valuedouble : NAN;
			break;
		case K_ID:
			*(int *)p = cJSON_IsNumber(it) && it->valueint > 0 ? it->valueint : 0;
			break;
		case K_COUNT:
			*(int *)p = cJSON_IsNumber(it) ? it->valueint : -1;
			break;
		case K_BOOL:
			*(int *)p = cJSON_IsTrue(it);
			break;
		case K_NBOOL:
			*(int *)p = cJSON_IsFalse(it);
			break;
		}
	}
}
#define DECODE(a, o, out) decode_fields(a, (int)(sizeof a / sizeof *a), o, out)

void verdict_timing_decode(const cJSON *tm, struct verdict_timing *t)
{
	t->present = cJSON_IsObject(tm);
	DECODE(aTiming, tm, t);
	/* "throttled": said where the throttle was read; "stopped": present,
	 * a string saying why */
	t->throttled = cJSON_IsTrue(cJSON_GetObjectItem(tm, "throttled"));
	t->throttleRead = cJSON_GetObjectItem(tm, "throttled") != NULL;
	t->stopped = cJSON_GetObjectItem(tm, "stopped") != NULL;
	t->zStopped = str_or(tm, "stopped", "");
}

void verdict_ab_decode(const cJSON *o, struct verdict_ab *a)
{
	a->present = o != NULL;
	DECODE(aAb, o, a);
}

void verdict_decode(const cJSON *r, struct verdict *v)
{
	memset(v, 0, sizeof *v);
	v->zStatus = str_or(r, "status", "");
	v->status = r ? status_from_name(v->zStatus) : STATUS_NEW;
	DECODE(aTop, r, v);
	DECODE(aWorker, cJSON_GetObjectItem(r, "worker"), v);
	if (v->zKeptState && !*v->zKeptState)
		v->zKeptState = NULL;
	v->timingJson = cJSON_GetObjectItem(r, "timing");
	verdict_timing_decode(v->timingJson, &v->timing);
	const cJSON *p = cJSON_GetObjectItem(r, "precision");
	v->precisionJson = p;
	v->precision.zClass = str_or(p, "verdict", NULL);
	v->precision.reduced = v->precision.zClass && !strcmp(v->precision.zClass, "reduced");
	v->precision.zCause = str_or(p, "cause", NULL);
	v->precision.zWhy = str_or(p, "why", NULL);
	v->precision.zMatches = str_or(p, "matches", NULL);
	const cJSON *roof = cJSON_GetObjectItem(r, "roofline");
	v->rooflineJson = roof;
	v->roofline.present = cJSON_IsObject(roof);
	v->roofline.fraction = num(roof, "fraction");
	v->roofline.zSuspect = str_or(roof, "suspect", NULL);
	v->abJson = cJSON_GetObjectItem(r, "ab");
	verdict_ab_decode(v->abJson, &v->ab);
	v->compile = cJSON_GetObjectItem(r, "compile");
	v->comp.present = v->compile != NULL;
	v->comp.seconds = num(v->compile, "seconds");
	v->comp.cached = cJSON_IsTrue(cJSON_GetObjectItem(v->compile, "cached"));
	v->comp.deviceOnly = cJSON_IsTrue(cJSON_GetObjectItem(v->compile, "device_only"));
	v->comp.noLink = cJSON_IsTrue(cJSON_GetObjectItem(v->compile, "no_link"));
	v->comp.sideBySide = cJSON_IsTrue(cJSON_GetObjectItem(v->compile, "side_by_side"));
	v->comp.prefixKept = cJSON_IsTrue(cJSON_GetObjectItem(v->compile, "prefix_kept"));
	v->comp.ok = cJSON_IsTrue(cJSON_GetObjectItem(v->compile, "ok"));
	v->comp.zCommand = str_or(v->compile, "command", "");
	v->comp.zLog = str_or(v->compile, "log", "");
	v->comp.resources = cJSON_GetObjectItem(v->compile, "resources");
	v->correctness = cJSON_GetObjectItem(r, "correctness");
	v->referenceData = cJSON_GetObjectItem(r, "reference_data");
	v->refData.seconds = num(v->referenceData, "seconds");
	v->refData.trials = count(v->referenceData, "trials");
	v->refData.zNote = str_or(v->referenceData, "note", NULL);
	v->refData.setup = cJSON_GetObjectItem(v->referenceData, "setup");
	v->profile = cJSON_GetObjectItem(r, "profile");
	v->form = cJSON_GetObjectItem(r, "candidate_form");
	v->stages = cJSON_GetObjectItem(r, "stages");
	v->libraries = cJSON_GetObjectItem(r, "library_baselines");
}

int verdict_library(const struct verdict *v, int i, struct verdict_library *out)
{
	const cJSON *l = cJSON_GetArrayItem(v->libraries, i);
	if (!l)
		return -1;
	DECODE(aLibrary, l, out);
	return 0;
}

const char *verdict_stage(const struct verdict *v, int i)
{
	const cJSON *s = cJSON_GetArrayItem(v->stages, i);
	return s ? str_or(s, "stage", "") : NULL;
}

const char *verdict_compile_how(const struct verdict_compile *c)
{
	return c->cached ? " (cached)"
	       : c->noLink && c->prefixKept
	           ? " (the device code only, its #includes' preprocessing kept, written into the "
	             "shared object kept for its host code: no link)"
	       : c->noLink
	           ? " (the device code only, written into the shared object kept for its host "
	             "code: no link)"
	       : c->deviceOnly && c->prefixKept
	           ? " (the device code only: the host object and its #includes' preprocessing "
	             "kept)"
	       : c->deviceOnly ? " (the device code only: the host object kept)"
	       : c->sideBySide ? " (whole, nvcc's host and device halves side by side)"
	                       : "";
}

int verdict_timed(const struct verdict *v)
{
	return v->status == STATUS_CORRECT && v->timing.present && !isnan(v->timing.medianMs);
}

/*
 * The encoder: the one place a verdict's typed keys are written.  Each
 * field is written only where it differs from what the JSON says now, so
 * that a verdict decoded, changed and encoded keeps the rest as it was (a
 * newer kloop's keys, the untyped ones, and the keys' order).
 */

/* the detail objects, kept as JSON, copied whole */
static const struct {
	const char *zKey;
	size_t off;
} aDetail[] = {
    {"compile", offsetof(struct verdict, compile)},
    {"correctness", offsetof(struct verdict, correctness)},
    {"precision", offsetof(struct verdict, precisionJson)},
    {"roofline", offsetof(struct verdict, rooflineJson)},
    {"reference_data", offsetof(struct verdict, referenceData)},
    {"profile", offsetof(struct verdict, profile)},
    {"candidate_form", offsetof(struct verdict, form)},
    {"stages", offsetof(struct verdict, stages)},
    {"ab", offsetof(struct verdict, abJson)},
    {"library_baselines", offsetof(struct verdict, libraries)},
};

/* a change to make: key zKey of o becomes item (NULL: removed); made only
 * once every new item is built, since v may borrow from what they replace */
struct change {
	cJSON *o;
	const char *zKey;
	cJSON *item;
};

struct changes {
	struct change a[64];
	int n;
};

static void change(struct changes *c, cJSON *o, const char *zKey, cJSON *item)
{
	c->a[c->n++] = (struct change){o, zKey, item};
}

static void apply(struct changes *c)
{
	for (int i = 0; i < c->n; i++) {
		struct change *x = &c->a[i];
		if (!x->item)
			cJSON_DeleteItemFromObject(x->o, x->zKey);
		else if (cJSON_HasObjectItem(x->o, x->zKey))
			cJSON_ReplaceItemInObject(x->o, x->zKey, x->item);
		else
			cJSON_AddItemToObject(x->o, x->zKey, x->item);
	}
	c->n = 0;
}

static int same_str(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static int same_num(double a, double b)
{
	return a == b || (isnan(a) && isnan(b));
}

/* field f of want, where it differs from have's (or o lacks a key it must
 * have: complete), as the item to write, NULL to remove; 0 when the same */
static int encode_field(const struct field *f, const void *want, const void *have, int complete,
                        const cJSON *o, cJSON **pItem)
{
	const char *w = (const char *)want + f->off, *h = (const char *)have + f->off;
	int must = complete && f->complete && !cJSON_HasObjectItem(o, f->zKey);
	*pItem = NULL;
	switch (f->kind) {
	case K_STR:
	case K_STRE: {
		const char *zw = *(const char *const *)w, *zh = *(const char *const *)h;
		if (f->kind == K_STRE && !zw)
			zw = "";
		if (same_str(zw, zh) && !must)
			return 0;
		*pItem = zw ? cJSON_CreateString(zw) : NULL;
		return 1;
	}
	case K_NUM:
	case K_NUMNULL: {
		double dw = *(const double *)w;
		if (same_num(dw, *(const double *)h) && !must)
			return 0;
		*pItem = !isnan(dw)             ? cJSON_CreateNumber(dw)
		         : f->kind == K_NUMNULL ? cJSON_CreateNull()
		                                : NULL;
		return 1;
	}
	default: {
		int iw = *(const int *)w;
		if (iw == *(const int *)h && !must)
			return 0;
		if (f->kind == K_BOOL || f->kind == K_NBOOL)
			*pItem = cJSON_CreateBool(f->kind == K_BOOL ? iw : !iw);
		else if (iw != (f->kind == K_ID ? 0 : -1))
			*pItem = cJSON_CreateNumber(iw);
		return 1;
	}
	}
}

static void encode_fields(const struct field *a, int n, const void *want, const void *have,
                          int complete, cJSON *o, struct changes *c)
{
	for (int i = 0; i < n; i++) {
		cJSON *item;
		if (encode_field(&a[i], want, have, complete, o, &item))
			change(c, o, a[i].zKey, item);
	}
}

/* t's fields into tm, as changes */
static void timing_changes(cJSON *tm, const struct verdict_timing *t, int complete,
                           struct changes *c)
{
	struct verdict_timing have;
	verdict_timing_decode(tm, &have);
	encode_fields(aTiming, (int)(sizeof aTiming / sizeof *aTiming), t, &have, complete, tm, c);
	/* "throttled": said where the throttle was read, true or false */
	int said = t->throttleRead || t->throttled;
	if (said != have.throttleRead || (said && !t->throttled != !have.throttled))
		change(c, tm, "throttled", said ? cJSON_CreateBool(t->throttled) : NULL);
	/* "stopped": present, a string saying why */
	if (t->stopped != have.stopped || (t->stopped && !same_str(t->zStopped, have.zStopped)))
		change(c, tm, "stopped",
		       t->stopped ? cJSON_CreateString(t->zStopped ? t->zStopped : "") : NULL);
}

void verdict_timing_encode(cJSON *tm, const struct verdict_timing *t, int flags)
{
	struct changes c = {.n = 0};
	timing_changes(tm, t, flags & VERDICT_COMPLETE, &c);
	apply(&c);
}

void verdict_ab_encode(cJSON *ab, const struct verdict_ab *a, int flags)
{
	struct verdict_ab have;
	struct changes c = {.n = 0};
	verdict_ab_decode(ab, &have);
	encode_fields(aAb, (int)(sizeof aAb / sizeof *aAb), a, &have, flags & VERDICT_COMPLETE, ab,
	              &c);
	apply(&c);
}

/* v's timing into r: removed, written in r's own, or a copy of v's with
 * v's fields */
static void timing_into(cJSON *r, const struct verdict *v, const struct verdict *have,
                        struct changes *c)
{
	if (!v->timing.present) {
		if (have->timing.present)
			change(c, r, "timing", NULL);
		return;
	}
	cJSON *tm = (cJSON *)have->timingJson;
	if (!tm || v->timingJson != tm) {
		tm = v->timingJson ? cJSON_Duplicate(v->timingJson, 1) : cJSON_CreateObject();
		change(c, r, "timing", tm);
	}
	timing_changes(tm, &v->timing, 0, c);
}

/* the pool's worker's fields, in r's "worker" (made when there is none) */
static void worker_into(cJSON *r, const struct verdict *v, const struct verdict *have,
                        struct changes *c)
{
	cJSON *wk = cJSON_GetObjectItem(r, "worker");
	if (!cJSON_IsObject(wk)) {
		if (!v->zWorker && !v->zWorkerHost && !v->zWorkerDevice)
			return;
		wk = cJSON_CreateObject();
		change(c, r, "worker", wk);
	}
	encode_fields(aWorker, (int)(sizeof aWorker / sizeof *aWorker), v, have, 0, wk, c);
}

void verdict_encode(cJSON *r, const struct verdict *v, int flags)
{
	struct verdict have;
	struct changes c = {.n = 0};
	if (!cJSON_IsObject(r))
		return;
	verdict_decode(r, &have);
	const char *zs = v->zStatus ? v->zStatus : "";
	if (v->status != have.status || strcmp(zs, have.zStatus))
		change(&c, r, "status",
		       cJSON_CreateString(
		           *zs && status_from_name(zs) == v->status ? zs : status_name(v->status)));
	encode_fields(aTop, (int)(sizeof aTop / sizeof *aTop), v, &have, flags & VERDICT_COMPLETE,
	              r, &c);
	worker_into(r, v, &have, &c);
	for (size_t i = 0; i < sizeof aDetail / sizeof *aDetail; i++) {
		const cJSON *w = *(const cJSON *const *)((const char *)v + aDetail[i].off);
		const cJSON *h = *(const cJSON *const *)((const char *)&have + aDetail[i].off);
		if (w != h)
			change(&c, r, aDetail[i].zKey, w ? cJSON_Duplicate(w, 1) : NULL);
	}
	timing_into(r, v, &have, &c);
	apply(&c);
}

cJSON *verdict_library_new(const struct verdict_library *l)
{
	cJSON *o = cJSON_CreateObject();
	struct verdict_library none;
	struct changes c = {.n = 0};
	DECODE(aLibrary, o, &none);
	/* key and library are said always; the rest where they are some */
	none.zKey = none.zLibrary = NULL;
	encode_fields(aLibrary, (int)(sizeof aLibrary / sizeof *aLibrary), l, &none, 0, o, &c);
	apply(&c);
	return o;
}

cJSON *verdict_new(enum status s, const char *zReason)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "status", status_name(s));
	cJSON_AddStringToObject(o, "reason", zReason ? zReason : "");
	return o;
}

void verdict_put_timing(cJSON *r, cJSON *tm)
{
	struct changes c = {.n = 0};
	change(&c, r, "timing", tm);
	apply(&c);
}
