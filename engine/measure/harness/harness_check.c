/*
 * harness_check.c - a run checked: its guard bands intact, its inputs as
 * given, its outputs within the tolerance of the expected ones (looser
 * for varied inputs), and the correctness object of the trials.
 */
#include "harness_priv.h"

#include <math.h>
#include <stdio.h>

#include "compare.h"
#include "rng.h"

/* a varied set's outputs pass within this relative L2 (or the task's, if
 * tighter) where an element is outside the tolerance: KernelBench's 1e-2,
 * far below what an answer that does not follow the data errs by (0.04 to
 * 0.8 in tests/e2e/stats.sh) */
#define VARIED_REL_L2 1e-2

/* check one guard band; on damage describe it into why */
static int check_band(struct harness *h, const char *base, const char *zWhere, const char *zName,
                      int after, char *why, size_t nWhy, char *err)
{
	if (h->b->download(h->b, h->pGuardRead, base, GUARD, err) < 0)
		return -1;
	if (!memcmp(h->pGuardRead, h->pGuard, GUARD))
		return 0;
	size_t first = 0, last = GUARD - 1;
	while (h->pGuardRead[first] == GUARD_BYTE)
		first++;
	while (h->pGuardRead[last] == GUARD_BYTE)
		last--;
	if (after)
		snprintf(why, nWhy,
		         "out-of-bounds write: %zu bytes after the end of %s %s were changed (from "
		         "byte %zu past the end)",
		         last - first + 1, zWhere, zName, first);
	else
		snprintf(why, nWhy,
		         "out-of-bounds write: bytes before the start of %s %s were changed (from "
		         "%zu bytes before it)",
		         zWhere, zName, (size_t)GUARD - first);
	return 1;
}

/* 1 (with why) if any guard band was damaged, 0 if none, -1 on error */
int harness_check_guards(struct harness *h, char *why, size_t nWhy, char *err)
{
	for (int k = 0; k < 2; k++) {
		int n = k ? h->t->nOut : h->t->nIn;
		for (int i = 0; i < n; i++) {
			struct gbuf *g = k ? &h->aOut[i] : &h->aIn[i];
			const char *zName = k ? h->t->aOut[i].zName : h->t->aIn[i].zName;
			const char *zWhere = k ? "output" : "input";
			int rc = check_band(h, g->base, zWhere, zName, 0, why, nWhy, err);
			if (rc)
				return rc;
			rc =
			    check_band(h, g->base + GUARD + g->n, zWhere, zName, 1, why, nWhy, err);
			if (rc)
				return rc;
		}
	}
	return 0;
}

/* 1 (with why) if an input differs from set s's copy, 0 if none, -1 on error */
int harness_check_inputs(struct harness *h, int s, char *why, size_t nWhy, char *err)
{
	void *now[TASK_MAX_TENSORS];
	for (int i = 0; i < h->t->nIn; i++)
		now[i] = payload(&h->aIn[i]);
	return harness_inputs_changed(h, now, h->aaIn[s], why, nWhy, err);
}

int harness_inputs_changed(struct harness *h, void *const *aNow, void *const *aWas, char *why,
                           size_t nWhy, char *err)
{
	for (int i = 0; i < h->t->nIn; i++) {
		const struct task_tensor *tt = &h->t->aIn[i];
		int es = (int)task_dtype_size(tt->dtype);
		int64_t count, first;
		if (h->b->diff(h->b, aNow[i], aWas[i], task_numel(tt), es, &count, &first, err) < 0)
			return -1;
		if (!count)
			continue;
		unsigned char now[8], was[8];
		if (h->b->download(h->b, now, (char *)aNow[i] + first * es, (size_t)es, err) < 0 ||
		    h->b->download(h->b, was, (char *)aWas[i] + first * es, (size_t)es, err) < 0)
			return -1;
		char idx[128];
		compare_index_str(tt, first, idx, sizeof idx);
		snprintf(
		    why, nWhy,
		    "input modified: %s%s was %g, is now %g after the run (%lld element%s changed)",
		    tt->zName, idx, task_dtype_get(was, tt->dtype, 0),
		    task_dtype_get(now, tt->dtype, 0), (long long)count, count == 1 ? "" : "s");
		return 1;
	}
	return 0;
}

int harness_check_outputs(struct harness *h, int s, struct agg *a, char *why, size_t nWhy,
                          const char *zWhen, char *err)
{
	void *out[TASK_MAX_TENSORS];
	for (int j = 0; j < h->t->nOut; j++)
		out[j] = payload(&h->aOut[j]);
	int varied = h->aVary && s >= 0 && s < h->nSets && h->aVary[s];
	return harness_check_against(h, out, h->aaExp[s], varied, a, why, nWhy, zWhen, err);
}

int harness_check_against(struct harness *h, void *const *aOut, void *const *aRef, int varied,
                          struct agg *a, char *why, size_t nWhy, const char *zWhen, char *err)
{
	int bad = 0;
	for (int j = 0; j < h->t->nOut; j++) {
		const struct task_tensor *tt = &h->t->aOut[j];
		struct compare_report r;
		if (h->b->compare(h->b, aOut[j], aRef[j], tt->dtype, task_numel(tt),
		                  &h->t->aTol[tt->dtype], &r, err) < 0)
			return -1;
		if (r.maxAbs > a->maxAbs)
			a->maxAbs = r.maxAbs;
		if (r.relL2 > a->relL2 || isnan(r.relL2))
			a->relL2 = r.relL2;
		const struct task_tol *tl = &h->t->aTol[tt->dtype];
		double l2f = tl->rel_l2 > 0 ? r.relL2 / tl->rel_l2 : (r.relL2 > 0 ? INFINITY : 0);
		if (a->tolDtype < 0 || r.tolFrac > a->tolFrac) {
			a->tolFrac = r.tolFrac;
			a->tolDtype = (int)tt->dtype;
		}
		if (l2f > a->relL2Frac)
			a->relL2Frac = l2f;
		/* varied inputs (heavy tails, outliers, a scale: harness_vary_of)
		 * make elements a faithful kernel cannot hold to a tolerance made
		 * for the plain ones (cancellation against an outlier-sized
		 * term); what they are for, an answer that does not follow the
		 * data, errs by far more than this relative L2 bound */
		int pass = r.pass;
		if (!pass && varied && !r.nNonFinite && !r.nRefNaN &&
		    r.relL2 <= (tl->rel_l2 < VARIED_REL_L2 ? tl->rel_l2 : VARIED_REL_L2))
			pass = 1;
		else
			a->mismatches += r.nMismatch;
		a->nonFinite += r.nNonFinite;
		a->refNaN += r.nRefNaN;
		if (pass || bad)
			continue;
		bad = 1;
		const struct task_tol *tol = &h->t->aTol[tt->dtype];
		if (r.nRefNaN > 0) {
			snprintf(why, nWhy,
			         "%s: the reference's output %s has %lld NaN of %lld elements: NaN "
			         "never passes, so no candidate can match it (the reference or its "
			         "inputs are at fault: fix the reference, or the inputs' init)",
			         zWhen, tt->zName, (long long)r.nRefNaN, (long long)r.n);
		} else if (r.firstBad >= 0) {
			char idx[128];
			compare_index_str(tt, r.firstBad, idx, sizeof idx);
			char got[96];
			if (isnan(r.firstActual))
				snprintf(got, sizeof got,
				         "NaN (left unwritten? outputs are poisoned with NaN "
				         "before each run)");
			/* enough digits to tell the two apart (with --atol 0 --rtol 0
			 * one ulp is a mismatch, and 6 digits print it as no
			 * difference): 6, else as many as a double needs */
			int dig = 6;
			char a1[40], a2[40];
			while (dig < 17 && !isnan(r.firstActual)) {
				snprintf(a1, sizeof a1, "%.*g", dig, r.firstExpected);
				snprintf(a2, sizeof a2, "%.*g", dig, r.firstActual);
				if (strcmp(a1, a2))
					break;
				dig++;
			}
			char exp[40];
			snprintf(exp, sizeof exp, "%.*g", dig, r.firstExpected);
			if (!isnan(r.firstActual))
				snprintf(got, sizeof got, "%.*g", dig, r.firstActual);
			snprintf(
			    why, nWhy,
			    "%s: output %s differs from the reference at %s: expected %s, got %s "
			    "(%lld of %lld elements mismatch; relative L2 error %.3g)",
			    zWhen, tt->zName, idx, exp, got, (long long)r.nMismatch, (long long)r.n,
			    r.relL2);
		} else {
			snprintf(
			    why, nWhy,
			    "%s: output %s has relative L2 error %.3g, over the tolerance %.3g "
			    "(every element is within atol %.3g + rtol %.3g, but not the whole)",
			    zWhen, tt->zName, r.relL2, tol->rel_l2, tol->atol, tol->rtol);
		}
	}
	return bad;
}

cJSON *harness_correctness_json(const struct harness *h, const struct agg *a, int nTrials)
{
	cJSON *c = cJSON_CreateObject();
	cJSON_AddNumberToObject(c, "trials", nTrials);
	cJSON_AddNumberToObject(c, "trials_run", a->trials);
	cJSON_AddNumberToObject(c, "trials_passed", a->passed);
	cJSON_AddNumberToObject(c, "max_abs_error", a->maxAbs);
	harness_add_finite(c, "rel_l2_error", a->relL2);
	cJSON_AddNumberToObject(c, "mismatches", (double)a->mismatches);
	/* max_abs_error is over finite pairs: these are the others */
	cJSON_AddNumberToObject(c, "non_finite", (double)a->nonFinite);
	if (a->refNaN)
		cJSON_AddNumberToObject(c, "reference_nan", (double)a->refNaN);
	if (h->aVary) {
		/* which trials' inputs were varied, and how many checking sets */
		cJSON *v = cJSON_AddObjectToObject(c, "inputs");
		cJSON *tr = cJSON_AddArrayToObject(v, "trials");
		int nPool = 0;
		for (int s = 0; s < h->nSets; s++)
			if (s < h->o.nTrials)
				cJSON_AddItemToArray(
				    tr, cJSON_CreateString(rng_vary_name(h->aVary[s])));
			else
				nPool += s > h->o.nTrials && h->aVary[s];
		cJSON_AddNumberToObject(v, "varied_checking_sets", nPool);
		if (h->varyUnsound)
			cJSON_AddStringToObject(v, "unsound", rng_vary_name(h->varyUnsound));
	}
	if (a->trials && a->tolDtype >= 0) {
		harness_add_finite(c, "tol_fraction", a->tolFrac);
		harness_add_finite(c, "rel_l2_fraction", a->relL2Frac);
		const struct task_tol *tl = &h->t->aTol[a->tolDtype];
		cJSON *t = cJSON_AddObjectToObject(c, "tolerance");
		cJSON_AddStringToObject(t, "dtype", task_dtype_name((kl_dtype)a->tolDtype));
		cJSON_AddNumberToObject(t, "atol", tl->atol);
		cJSON_AddNumberToObject(t, "rtol", tl->rtol);
		harness_add_finite(t, "rel_l2", tl->rel_l2);
		const char *from = h->t->zTolFrom;
		if (!task_dtype_is_float((kl_dtype)a->tolDtype) && h->t->zTolFromInt)
			from = h->t->zTolFromInt; /* flags and KernelBench set floats only */
		cJSON_AddStringToObject(t, "from", from ? from : "default");
	}
	return c;
}
