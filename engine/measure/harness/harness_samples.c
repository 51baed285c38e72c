/*
 * harness_samples.c - the samples a timing keeps (arrays of doubles that
 * grow) and their order statistics: quantiles, the median, a lower
 * confidence bound of it.
 */
#include "harness_priv.h"

#include <math.h>
#include <stdlib.h>

#include "util.h"

int harness_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

double harness_pct(const double *s, int n, double q)
{
	if (n < 1)
		return NAN;
	double pos = q * (n - 1);
	int lo = (int)pos;
	int hi = lo + 1 < n ? lo + 1 : lo;
	return s[lo] + (s[hi] - s[lo]) * (pos - lo);
}

double harness_median_of(double *a, int n)
{
	qsort(a, (size_t)n, sizeof *a, harness_cmp_double);
	return harness_pct(a, n, 0.5);
}

void harness_push(struct samples *s, double v)
{
	xgrow((void **)&s->a, &s->alloc, s->n + 1, sizeof *s->a);
	s->a[s->n++] = v;
}

double harness_median(const struct samples *s)
{
	if (!s->n)
		return 0;
	double *c = xmalloc(s->n * sizeof *c);
	memcpy(c, s->a, s->n * sizeof *c);
	double m = harness_median_of(c, (int)s->n);
	free(c);
	return m;
}

/*
 * A one-sided 99% lower confidence bound of the median of s: its k-th
 * smallest sample, k from the binomial (normal approximation: the number
 * of samples below the median is Binomial(n, 1/2)); the smallest for fewer
 * than 6 samples.
 */
double harness_lower_median(const struct samples *s)
{
	if (!s->n)
		return 0;
	double *c = xmalloc(s->n * sizeof *c);
	memcpy(c, s->a, s->n * sizeof *c);
	qsort(c, s->n, sizeof *c, harness_cmp_double);
	double k = floor(0.5 * (double)s->n - 2.326 * 0.5 * sqrt((double)s->n));
	double v = c[k > 0 ? (size_t)k : 0];
	free(c);
	return v;
}

/* the samples of s at the places where key (s itself when NULL) is known
 * (not NAN), into *out */
void harness_known_of(const struct samples *s, const struct samples *key, struct samples *out)
{
	out->n = 0;
	for (size_t i = 0; i < s->n; i++)
		if (!isnan((key ? key : s)->a[i]))
			harness_push(out, s->a[i]);
}

/* a number, or null when it is not finite (JSON has no inf or NaN) */

void harness_add_finite(cJSON *o, const char *k, double v)
{
	if (isfinite(v))
		cJSON_AddNumberToObject(o, k, v);
	else
		cJSON_AddNullToObject(o, k);
}
