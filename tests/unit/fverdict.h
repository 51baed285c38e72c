/*
 * fverdict.h - verdicts for the unit tests, made the way kloop's worker
 * makes them (issue 41): verdict_new, the timing encoded
 * (verdict_timing_encode, verdict_put_timing), then result_complete_from
 * with the reference's time, which computes the speedup, the time and the
 * keys every verdict has.  A fixture that writes "speedup" by hand cannot
 * see a wrong speedup in result.c, nor a key the encoder stopped writing;
 * one made here does.  fv_event wraps one in its eval_finished event.
 */
#ifndef KL_TEST_FVERDICT_H
#define KL_TEST_FVERDICT_H

#include <cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "result.h"
#include "util.h"
#include "verdict.h"

/* what a fixture's verdict says; 0 (or NULL) is none for each */
struct fv {
	enum status s;             /* STATUS_CORRECT unless set (STATUS_NEW is 0) */
	const char *zReason;       /* "" */
	double median;             /* its median time, ms */
	double p10, p90;           /* its spread, ms (none: the median's) */
	int unverified;            /* kloop's clock could not bound its time */
	double base;               /* the reference's median, ms: the speedup is base / median */
	const char *zDevice;       /* where it ran */
	const char *zRef;          /* the reference's name ("reference.c") */
	double baseCompile;        /* torch.compile's median, ms */
	const char *zCompileError; /* why torch.compile has none */
	int count;                 /* the timed runs */
	double rse;                /* their relative standard error */
	int converged;             /* the timing converged within its budget */
	const char *zClockBound;   /* why kloop's clock could not bound the time */
};

/* the verdict f says, as the worker completes one (a fresh object) */
static inline cJSON *fv_make(const struct fv *f)
{
	cJSON *r = verdict_new(f->s ? f->s : STATUS_CORRECT, f->zReason ? f->zReason : "");
	if (f->median > 0) {
		cJSON *tm = cJSON_CreateObject();
		struct verdict_timing t;
		verdict_timing_decode(tm, &t);
		t.present = 1;
		t.medianMs = f->median;
		t.p10Ms = f->p10 > 0 ? f->p10 : f->median;
		t.p90Ms = f->p90 > 0 ? f->p90 : f->median;
		t.unverified = f->unverified;
		t.count = f->count > 0 ? f->count : -1;
		t.rse = f->rse > 0 ? f->rse : NAN;
		t.converged = f->converged;
		t.zClockBound = f->zClockBound;
		verdict_timing_encode(tm, &t, VERDICT_COMPLETE);
		verdict_put_timing(r, tm);
	}
	cJSON *rt = NULL;
	if (f->base > 0) {
		rt = cJSON_CreateObject();
		struct verdict_timing b;
		verdict_timing_decode(rt, &b);
		b.present = 1;
		b.medianMs = f->base;
		verdict_timing_encode(rt, &b, 0);
	}
	/* the PyTorch baselines: torch.compile's time, or why it has none */
	cJSON *bl = NULL;
	if (f->baseCompile > 0 || f->zCompileError) {
		bl = cJSON_CreateObject();
		cJSON *cm = cJSON_AddObjectToObject(bl, "compile");
		if (f->baseCompile > 0)
			cJSON_AddNumberToObject(cm, "median_ms", f->baseCompile);
		else
			cJSON_AddStringToObject(cm, "error", f->zCompileError);
	}
	result_complete_from(r, rt, bl, NULL, f->zRef ? f->zRef : "reference.c", f->zDevice, "t",
	                     "cand.c", "host");
	cJSON_Delete(rt);
	cJSON_Delete(bl);
	return r;
}

/* detail object zKey of verdict r ("compile", "correctness", "precision",
 * "roofline") set to JSON text zJson through the encoder */
static inline void fv_detail(cJSON *r, const char *zKey, const char *zJson)
{
	struct verdict v;
	cJSON *d = cJSON_Parse(zJson);
	verdict_decode(r, &v);
	if (!strcmp(zKey, "compile"))
		v.compile = d;
	else if (!strcmp(zKey, "correctness"))
		v.correctness = d;
	else if (!strcmp(zKey, "precision"))
		v.precisionJson = d;
	else if (!strcmp(zKey, "roofline"))
		v.rooflineJson = d;
	verdict_encode(r, &v, 0);
	cJSON_Delete(d);
}

/* candidate id's eval_finished event at ts carrying verdict r (consumed):
 * a fresh JSON line */
static inline char *fv_event(int id, double ts, cJSON *r)
{
	cJSON *e = cJSON_CreateObject();
	cJSON_AddStringToObject(e, "type", "eval_finished");
	cJSON_AddNumberToObject(e, "candidate", id);
	cJSON_AddNumberToObject(e, "ts", ts);
	cJSON_AddItemToObject(e, "result", r);
	char *z = cJSON_PrintUnformatted(e);
	cJSON_Delete(e);
	return z;
}

#endif
