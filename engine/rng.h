/*
 * rng.h - deterministic random inputs: a seeded generator (splitmix64 to
 * seed xoshiro256**) and filling a tensor's host buffer per its distribution.
 */
#ifndef KL_RNG_H
#define KL_RNG_H

#include <stdint.h>

#include "task.h"

struct rng {
	uint64_t s[4]; /* xoshiro256** state */
	double spare;  /* the second normal of the last Box-Muller pair */
	int hasSpare;  /* spare is valid */
};

void rng_seed(struct rng *r, uint64_t seed);
uint64_t rng_next(struct rng *r);
/* uniform in [0, 1) */
double rng_uniform(struct rng *r);
/* standard normal (Box-Muller) */
double rng_normal(struct rng *r);
/* fill p (task_numel(t) elements of t->dtype) from t's distribution */
void rng_fill(struct rng *r, const struct task_tensor *t, void *p);

/*
 * How a checked set's inputs are varied, so that no statistic of one known
 * distribution passes for the answer (issue 25: a constant written without
 * reading the inputs, a mean over every 64th element):
 *   RNG_SCALED   x a + b: a log-uniform in [1/8, 8], b uniform in [-2, 2]
 *                times a and the elements' standard deviation
 *   RNG_HEAVY    x e^g, g standard normal per element: heavy tails
 *   RNG_OUTLIERS one element in 2048 (at least one), at random places, set
 *                to +-(8..64) times the largest |x|
 * Flags, combined; integer types are left as they are.
 */
enum { RNG_PLAIN = 0, RNG_SCALED = 1, RNG_HEAVY = 2, RNG_OUTLIERS = 4 };
/* vary n elements of dtype d at p by the flags, reproducibly for seed (on
 * the threads the process may use; the same result however many) */
void rng_vary(void *p, kl_dtype d, int64_t n, int flags, uint64_t seed);
/* rng_vary's parts, for a backend that varies on its device (backend.h's
 * vary, the device's own normals for RNG_HEAVY): r seeded for seed, and the
 * x a + b of RNG_SCALED (a 1, b 0 without it) for n elements of that mean,
 * standard deviation and largest |x|; how many outliers n elements get, and
 * the next one's place and value where the largest |x| (after the other
 * variations) is amax */
void rng_vary_plan(struct rng *r, uint64_t seed, int flags, int64_t n, double mean, double sd,
                   double amax, double *pA, double *pB);
int64_t rng_vary_outliers(int64_t n);
void rng_vary_outlier(struct rng *r, int64_t n, double amax, int64_t *pI, double *pX);
/* at most n threads for rng_vary (0, the default: one per CPU, at most 16) */
void rng_vary_threads(int n);
/* "scaled+outliers", "plain" (static) */
const char *rng_vary_name(int flags);

/* the bit that rng_mix() takes element i by: a hash of (seed, i) */
int rng_mix_bit(uint64_t seed, int64_t i);

/* new inputs from two sets of them: dst[i] = a[i] where rng_mix_bit(seed,
 * i), else b[i], for n elements of es bytes (1, 2, 4 or 8).  The same
 * values, at the same places, as two sets drawn alike (so the same
 * distribution, and the same zeros or indices where the task has such
 * structure), in bytes never seen together before */
void rng_mix(void *dst, const void *a, const void *b, int64_t n, int es, uint64_t seed);

#endif
