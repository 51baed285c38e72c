/*
 * driver_baseline.c - the session's baseline (issue 39): every result is
 * completed against the baseline the session began with on its device,
 * whatever this run's workers timed the reference at, until a re-measure
 * (driver_remeasure(), driver.c: an evaluation) journals a new one.
 */
#include "driver.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "emit.h"
#include "pool.h"
#include "result.h"
#include "driver_priv.h"

/* the reference's median in timing object rt (NAN: none) */
static double ref_ms(const cJSON *rt)
{
	struct verdict_timing t;
	verdict_timing_decode(rt, &t);
	return t.medianMs;
}

/* a re-measure under way: the first result from a device after it (its
 * workers started afresh and timed the reference) journals the session's
 * new baseline there, once */
static void remeasured(struct driver *drv, const char *zDevice, const cJSON *rt)
{
	const char *key = zDevice ? zDevice : "";
	double ms = ref_ms(rt);
	const struct state *st = &drv->ses->st;
	double was = state_baseline(st, key);
	if (!drv->remeasure || !(ms > 0) || !(was > 0))
		return; /* none asked for, or the session's first from there */
	const cJSON *x;
	cJSON_ArrayForEach(x, drv->remeasure) if (!strcmp(x->valuestring, key)) return;
	cJSON_AddItemToArray(drv->remeasure, cJSON_CreateString(key));
	char err[KL_ERRLEN], msg[KL_ERRLEN + 400];
	if (ev_baseline(drv->ses, key, ms, was, err) < 0) {
		snprintf(msg, sizeof msg, "journal: %s", err);
		note_simple(drv, DRIVER_MESSAGE, 0, msg);
		return;
	}
	snprintf(msg, sizeof msg,
	         "baseline re-measured%s%s: %.4g ms (it was %.4g ms): every speedup in the session "
	         "is against it now, each %.3g times what it was",
	         *key ? " on " : "", key, ms, was, ms / was);
	note_simple(drv, DRIVER_MESSAGE, 0, msg);
}

void driver_result_complete(struct driver *drv, const struct cand *c, cJSON *r, const char *zDevice)
{
	const cJSON *rt = pool_reference_timing(drv->pool, zDevice);
	remeasured(drv, zDevice, rt);
	double base = state_baseline(&drv->ses->st, zDevice ? zDevice : "");
	double own = ref_ms(rt);
	cJSON *sb = NULL;
	if (base > 0) { /* the session's baseline, as a timing */
		struct verdict_timing t;
		sb = cJSON_CreateObject();
		verdict_timing_decode(sb, &t);
		t.present = 1;
		t.medianMs = base;
		verdict_timing_encode(sb, &t, 0);
	}
	result_complete_from(r, sb ? sb : rt, pool_baselines(drv->pool, zDevice),
	                     pool_reference_data(drv->pool, zDevice),
	                     pool_reference_name(drv->pool), zDevice, drv->zTaskName,
	                     c ? c->zName : "", drv->zBackend);
	/* what this run's workers timed the reference at, where it differs */
	if (sb && own > 0 && fabs(own - base) > 1e-9 * base) {
		struct verdict v;
		verdict_decode(r, &v);
		v.baselineMeasuredMs = own;
		verdict_encode(r, &v, 0);
	}
	cJSON_Delete(sb);
}

void driver_baseline_text(const struct driver *drv, strbuf *sb)
{
	const struct state *st = &drv->ses->st;
	if (!st->nBase)
		sb_adds(sb, "the session has no baseline yet: its first evaluation times it");
	for (int i = 0; i < st->nBase; i++) {
		const struct state_baseline *b = &st->aBase[i];
		sb_addf(sb, "%sbaseline %.4g ms%s%s, %s", i ? "\n" : "", b->ms,
		        *b->zDevice ? " on " : "", b->zDevice,
		        b->remeasured ? "re-measured" : "timed when the session began");
		const cJSON *rt = pool_reference_timing(drv->pool, *b->zDevice ? b->zDevice : NULL);
		double now = ref_ms(rt);
		if (now > 0 && fabs(now - b->ms) > 1e-9 * b->ms)
			sb_addf(sb, "; this run's workers timed the reference at %.4g ms (%.3gx)",
			        now, now / b->ms);
	}
	sb_adds(sb, "\nevery speedup in the session is against it; `baseline remeasure` times the "
	            "reference again and rescales them all");
}
