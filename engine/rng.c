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
		switch (t->dtype) {
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
