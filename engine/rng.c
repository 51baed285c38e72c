/*
 * rng.c - seeded random numbers and tensor filling, so that every trial's
 * inputs are reproducible from (seed, trial).
 */
#include "rng.h"

#include <math.h>
#include <string.h>

static uint64_t splitmix(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void rng_seed(struct rng *r, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix(&seed);
	r->hasSpare = 0;
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t rng_next(struct rng *r)
{
	uint64_t *s = r->s, res = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
	s[2] ^= s[0], s[3] ^= s[1], s[1] ^= s[2], s[0] ^= s[3], s[2] ^= t, s[3] = rotl(s[3], 45);
	return res;
}

double rng_uniform(struct rng *r)
{
	return (double)(rng_next(r) >> 11) * 0x1.0p-53;
}

double rng_normal(struct rng *r)
{
	if (r->hasSpare) {
		r->hasSpare = 0;
		return r->spare;
	}
	double u1 = rng_uniform(r), u2 = rng_uniform(r);
	if (u1 < 1e-300)
		u1 = 1e-300;
	double m = sqrt(-2 * log(u1)), sn, cs;
	sincos(2 * M_PI * u2, &sn, &cs);
	r->spare = m * sn;
	r->hasSpare = 1;
	return m * cs;
}

/* element i of a buffer of dtype d set to v (converted as a cast does) */
static void put_v(void *p, kl_dtype d, int64_t i, double v)
{
	switch (d) {
	case KL_F32:
		((float *)p)[i] = (float)v;
		break;
	case KL_F64:
		((double *)p)[i] = v;
		break;
	case KL_F16:
		((uint16_t *)p)[i] = kl_f32_to_f16((float)v);
		break;
	case KL_BF16:
		((uint16_t *)p)[i] = kl_f32_to_bf16((float)v);
		break;
	case KL_I32:
		((int32_t *)p)[i] = (int32_t)v;
		break;
	case KL_I64:
		((int64_t *)p)[i] = (int64_t)v;
		break;
	case KL_I8:
		((int8_t *)p)[i] = (int8_t)v;
		break;
	case KL_U8:
		((uint8_t *)p)[i] = (uint8_t)v;
		break;
	}
}

void rng_fill(struct rng *r, const struct task_tensor *t, void *p)
{
	int64_t n = task_numel(t);
	for (int64_t i = 0; i < n; i++) {
		double v;
		if (t->dist == DIST_NORMAL)
			v = t->a + t->b * rng_normal(r);
		else if (t->dist == DIST_RANDINT)
			v = t->a + (double)(rng_next(r) % (uint64_t)(t->b - t->a + 1));
		else
			v = t->a + (t->b - t->a) * rng_uniform(r);
		put_v(p, t->dtype, i, v);
	}
}

int rng_mix_bit(uint64_t seed, int64_t i)
{
	/* splitmix64 of the seed and the element's word of 64 */
	uint64_t z = seed + 0x9e3779b97f4a7c15ull * (uint64_t)(i / 64 + 1);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	return (int)((z >> (i % 64)) & 1);
}

#define MIX_LOOP(T)                                                                                \
	do {                                                                                       \
		T *d = dst;                                                                        \
		const T *x = a, *y = b;                                                            \
		for (int64_t i = 0; i < n; i++)                                                    \
			d[i] = rng_mix_bit(seed, i) ? x[i] : y[i];                                 \
	} while (0)

void rng_mix(void *dst, const void *a, const void *b, int64_t n, int es, uint64_t seed)
{
	switch (es) {
	case 8:
		MIX_LOOP(uint64_t);
		break;
	case 4:
		MIX_LOOP(uint32_t);
		break;
	case 2:
		MIX_LOOP(uint16_t);
		break;
	default:
		MIX_LOOP(uint8_t);
		break;
	}
}

void rng_vary(void *p, kl_dtype d, int64_t n, int flags, uint64_t seed)
{
	if (!task_dtype_is_float(d) || n <= 0 || !flags)
		return;
	struct rng r;
	rng_seed(&r, seed ^ 0x7661727931ull);
	double mean = 0, m2 = 0, amax = 0;
	for (int64_t i = 0; i < n; i++) { /* Welford: no cancellation */
		double v = task_dtype_get(p, d, i), dv = v - mean;
		mean += dv / (double)(i + 1);
		m2 += dv * (v - mean);
		amax = fabs(v) > amax ? fabs(v) : amax;
	}
	double sd = n > 1 ? sqrt(m2 / (double)(n - 1)) : fabs(mean);
	if (!(sd > 0))
		sd = amax > 0 ? amax : 1;
	if (flags & RNG_SCALED) {
		double a = exp2(-3 + 6 * rng_uniform(&r)), b = (4 * rng_uniform(&r) - 2) * a * sd;
		for (int64_t i = 0; i < n; i++)
			put_v(p, d, i, task_dtype_get(p, d, i) * a + b);
		amax = amax * a + fabs(b);
	}
	if (flags & RNG_HEAVY)
		for (int64_t i = 0; i < n; i++) {
			double g = rng_normal(&r);
			put_v(p, d, i, task_dtype_get(p, d, i) * exp(g));
			if (fabs(task_dtype_get(p, d, i)) > amax)
				amax = fabs(task_dtype_get(p, d, i));
		}
	if (flags & RNG_OUTLIERS) {
		int64_t m = n / 2048 > 0 ? n / 2048 : 1;
		double big = amax > 0 ? amax : 1;
		for (int64_t k = 0; k < m; k++) {
			int64_t i = (int64_t)(rng_next(&r) % (uint64_t)n);
			double v = (8 + 56 * rng_uniform(&r)) * big;
			put_v(p, d, i, rng_next(&r) & 1 ? v : -v);
		}
	}
}

const char *rng_vary_name(int flags)
{
	static const char *const names[8] = {
	    "plain",    "scaled",          "heavy-tailed",          "scaled+heavy-tailed",
	    "outliers", "scaled+outliers", "heavy-tailed+outliers", "scaled+heavy-tailed+outliers"};
	return names[flags & 7];
}
