/*
 * test_rng.c - the checking sets' varied inputs (rng_vary): the same bytes
 * however many threads vary them, each variation what rng.h promises
 * (scaled is affine, heavy-tailed multiplies each element by e^g with g
 * standard normal, outliers put 1 element in 2048 at 8-64 times the
 * largest), integers left alone, and a tensor of several chunks.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "rng.h"

#define N ((int64_t)3 * (1 << 20) + 12345) /* over three of rng_vary's chunks */

static float *plain(void)
{
	struct rng r;
	rng_seed(&r, 42);
	float *p = malloc((size_t)N * sizeof *p);
	for (int64_t i = 0; i < N; i++)
		p[i] = (float)rng_normal(&r);
	return p;
}

static float *varied(int flags, uint64_t seed, int threads)
{
	float *p = plain();
	rng_vary_threads(threads);
	rng_vary(p, KL_F32, N, flags, seed);
	rng_vary_threads(0);
	return p;
}

int main(void)
{
	static const int kinds[] = {RNG_SCALED, RNG_HEAVY, RNG_OUTLIERS, RNG_SCALED | RNG_OUTLIERS,
	                            RNG_SCALED | RNG_HEAVY | RNG_OUTLIERS};
	for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
		float *one = varied(kinds[k], 7, 1), *two = varied(kinds[k], 7, 2),
		      *many = varied(kinds[k], 7, 5), *other = varied(kinds[k], 8, 0);
		size_t bytes = (size_t)N * sizeof *one;
		CHECK(!memcmp(one, two, bytes) && !memcmp(one, many, bytes),
		      "%s: the same bytes on 1, 2 and 5 threads", rng_vary_name(kinds[k]));
		CHECK(memcmp(one, other, bytes), "%s: another seed, other bytes",
		      rng_vary_name(kinds[k]));
		free(one), free(two), free(many), free(other);
	}

	float *x = plain(), *y = varied(RNG_SCALED, 3, 0);
	/* y = a x + b: a from two elements, then every element on that line */
	double a = (y[1] - y[0]) / (double)(x[1] - x[0]), b = y[0] - a * x[0], worst = 0;
	for (int64_t i = 0; i < N; i++) {
		double e = fabs(y[i] - (a * x[i] + b)) / (fabs(y[i]) + fabs(a));
		worst = e > worst ? e : worst;
	}
	CHECK(worst < 1e-5 && a >= 0.124 && a <= 8.01,
	      "scaled: every element a x + b, a = %.4g in [1/8, 8] (worst %.2g)", a, worst);
	free(y);

	y = varied(RNG_HEAVY, 3, 0);
	double s = 0, s2 = 0;
	int64_t flipped = 0;
	for (int64_t i = 0; i < N; i++) {
		if (x[i] == 0)
			continue;
		double g = log(fabs(y[i] / x[i]));
		flipped += (y[i] < 0) != (x[i] < 0);
		s += g, s2 += g * g;
	}
	double mean = s / N, sd = sqrt(s2 / N - mean * mean);
	CHECK(!flipped && fabs(mean) < 0.01 && fabs(sd - 1) < 0.01,
	      "heavy-tailed: each element times e^g, g normal (mean %.4f, sd %.4f, %lld signs "
	      "flipped)",
	      mean, sd, (long long)flipped);
	free(y);

	double big = 0;
	for (int64_t i = 0; i < N; i++)
		big = fabs(x[i]) > big ? fabs(x[i]) : big;
	y = varied(RNG_OUTLIERS, 3, 0);
	int64_t out = 0, changed = 0, wild = 0;
	for (int64_t i = 0; i < N; i++) {
		changed += y[i] != x[i];
		out += fabs(y[i]) >= 8 * big * (1 - 1e-6) && fabs(y[i]) <= 64 * big * (1 + 1e-6);
		wild += fabs(y[i]) > 64 * big * (1 + 1e-6);
	}
	/* N / 2048 places drawn at random: a few may coincide */
	CHECK(changed == out && out <= N / 2048 && out >= N / 2048 - 10 && !wild,
	      "outliers: %lld of %lld elements at 8-64 times the largest (%lld asked)",
	      (long long)out, (long long)N, (long long)(N / 2048));
	/* the parts a GPU's vary uses (backend_cuda.c c_vary) draw as rng_vary
	 * does: its plan, then its outliers' places and values, in order */
	struct rng pr;
	double pa, pb, mean0 = 0, m2 = 0;
	for (int64_t i = 0; i < N; i++)
		mean0 += x[i];
	mean0 /= N;
	for (int64_t i = 0; i < N; i++)
		m2 += (x[i] - mean0) * (x[i] - mean0);
	rng_vary_plan(&pr, 3, RNG_OUTLIERS, N, mean0, sqrt(m2 / (N - 1)), big, &pa, &pb);
	int64_t alike = 0, m = rng_vary_outliers(N);
	float *z = malloc((size_t)N * sizeof *z);
	memcpy(z, x, (size_t)N * sizeof *z);
	for (int64_t k = 0; k < m; k++) {
		int64_t i;
		double v;
		rng_vary_outlier(&pr, N, big, &i, &v);
		z[i] = (float)v;
	}
	for (int64_t i = 0; i < N; i++)
		alike += z[i] == y[i];
	CHECK(pa == 1 && pb == 0 && m == N / 2048 && alike == N,
	      "rng_vary's plan and outliers drawn apart are its own: the same %lld outliers, "
	      "every element alike (%lld of %lld)",
	      (long long)m, (long long)alike, (long long)N);
	free(z);
	free(y);
	free(x);

	int32_t ints[1000];
	for (int i = 0; i < 1000; i++)
		ints[i] = i - 500;
	rng_vary(ints, KL_I32, 1000, RNG_SCALED | RNG_HEAVY | RNG_OUTLIERS, 1);
	int same = 1;
	for (int i = 0; i < 1000; i++)
		same &= ints[i] == i - 500;
	CHECK(same, "integer inputs are left as they are");

	float one = 2.5f;
	rng_vary(&one, KL_F32, 1, RNG_OUTLIERS, 1);
	CHECK(fabsf(one) >= 8 * 2.5f && fabsf(one) <= 64 * 2.5f,
	      "a one-element tensor gets its one outlier (%g)", one);
	return check_done();
}
