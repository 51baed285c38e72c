/*
 * runner_baseline.c - the session's baseline (issue 39): every result is
 * completed against the baseline the session began with on its device,
 * whatever this run's workers timed the reference at, until a re-measure
 * (runner_remeasure(), runner.c: an evaluation) journals a new one.
 */
#include "runner.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "emit.h"
#include "pool.h"
#include "result.h"
#include "runner_priv.h"

/* a re-measure under way: the first result from a device after it (its
 * workers started afresh and timed the reference) journals the session's
 * new baseline there, once */
static void remeasured(struct runner *rn, const char *zDevice, const cJSON *rt)
{
	const char *key = zDevice ? zDevice : "";
	double ms = result_num(rt, "median_ms");
	const struct state *st = &rn->ses->st;
	double was = state_baseline(st, key);
	if (!rn->remeasure || !(ms > 0) || !(was > 0))
		return; /* none asked for, or the session's first from there */
	const cJSON *x;
	cJSON_ArrayForEach(x, rn->remeasure) if (!strcmp(x->valuestring, key)) return;
	cJSON_AddItemToArray(rn->remeasure, cJSON_CreateString(key));
	char err[KL_ERRLEN], msg[KL_ERRLEN + 400];
	if (ev_baseline(rn->ses, key, ms, was, err) < 0) {
		snprintf(msg, sizeof msg, "journal: %s", err);
		note_simple(rn, RUNNER_MESSAGE, 0, msg);
		return;
	}
	snprintf(msg, sizeof msg,
	         "baseline re-measured%s%s: %.4g ms (it was %.4g ms): every speedup in the session "
	         "is against it now, each %.3g times what it was",
	         *key ? " on " : "", key, ms, was, ms / was);
	note_simple(rn, RUNNER_MESSAGE, 0, msg);
}

void runner_result_complete(struct runner *rn, const struct cand *c, cJSON *r, const char *zDevice)
{
	const cJSON *rt = pool_reference_timing(rn->pool, zDevice);
	remeasured(rn, zDevice, rt);
	double base = state_baseline(&rn->ses->st, zDevice ? zDevice : "");
	double own = result_num(rt, "median_ms");
	cJSON *sb = NULL;
	if (base > 0) {
		sb = cJSON_CreateObject();
		cJSON_AddNumberToObject(sb, "median_ms", base);
	}
	result_complete_from(r, sb ? sb : rt, pool_baselines(rn->pool, zDevice),
	                     pool_reference_data(rn->pool, zDevice), pool_reference_name(rn->pool),
	                     zDevice, rn->zTaskName, c ? c->zName : "", rn->zBackend);
	/* what this run's workers timed the reference at, where it differs */
	if (sb && own > 0 && fabs(own - base) > 1e-9 * base)
		cJSON_AddNumberToObject(r, "baseline_measured_ms", own);
	cJSON_Delete(sb);
}

void runner_baseline_text(const struct runner *rn, strbuf *sb)
{
	const struct state *st = &rn->ses->st;
	if (!st->nBase)
		sb_adds(sb, "the session has no baseline yet: its first evaluation times it");
	for (int i = 0; i < st->nBase; i++) {
		const struct state_baseline *b = &st->aBase[i];
		sb_addf(sb, "%sbaseline %.4g ms%s%s, %s", i ? "\n" : "", b->ms,
		        *b->zDevice ? " on " : "", b->zDevice,
		        b->remeasured ? "re-measured" : "timed when the session began");
		const cJSON *rt = pool_reference_timing(rn->pool, *b->zDevice ? b->zDevice : NULL);
		double now = result_num(rt, "median_ms");
		if (now > 0 && fabs(now - b->ms) > 1e-9 * b->ms)
			sb_addf(sb, "; this run's workers timed the reference at %.4g ms (%.3gx)",
			        now, now / b->ms);
	}
	sb_adds(sb, "\nevery speedup in the session is against it; `baseline remeasure` times the "
	            "reference again and rescales them all");
}
