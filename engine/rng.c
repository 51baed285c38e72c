/*
 * rng.c - seeded random numbers and tensor filling, so that every trial's
 * inputs are reproducible from (seed, trial).
 */
#include "rng.h"

#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

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
	case KL_E4M3: /* saturating: a draw beyond +-448 is 448 */
		((uint8_t *)p)[i] = kl_f32_to_e4m3((float)v);
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

/*
 * rng_vary's passes go over chunks of VARY_CHUNK elements, each with its own
 * statistics and its own stream of normals (seeded by the chunk's index),
 * on as many threads as the process has CPUs (at most VARY_THREADS): the
 * result is the same however many threads ran.  A KernelBench-sized input
 * (softmax's 32M floats) took 0.2-1.2 s a set on one core, and a GPU task
 * varies ten sets when its worker starts: most of a lone `kloop eval`.
 */
#define VARY_CHUNK ((int64_t)1 << 20)
#define VARY_THREADS 16

static int gVaryThreads; /* rng_vary_threads(); 0: one per CPU */

void rng_vary_threads(int n)
{
	gVaryThreads = n < 0 ? 0 : n;
}

struct vary_chunk {
	double cnt, mean, m2, amax; /* its elements' statistics (Welford) */
};

struct vary {
	void *p;
	kl_dtype d;
	int64_t n, nCh;
	uint64_t seed;
	int stats; /* 1: the statistics pass; 0: scaled and heavy */
	int flags;
	double a, b;           /* RNG_SCALED's x a + b */
	struct vary_chunk *ch; /* nCh of them */
	int64_t next;          /* the next chunk to take (atomic) */
};

static void vary_chunk(struct vary *v, int64_t c)
{
	int64_t lo = c * VARY_CHUNK, hi = v->n - lo < VARY_CHUNK ? v->n : lo + VARY_CHUNK;
	struct vary_chunk *k = &v->ch[c];
	double amax = 0;
	if (v->stats) {
		double mean = 0, m2 = 0;
		for (int64_t i = lo; i < hi; i++) { /* Welford: no cancellation */
			double x = task_dtype_get(v->p, v->d, i), dx = x - mean;
			mean += dx / (double)(i - lo + 1);
			m2 += dx * (x - mean);
			amax = fabs(x) > amax ? fabs(x) : amax;
		}
		*k = (struct vary_chunk){(double)(hi - lo), mean, m2, amax};
		return;
	}
	struct rng r;
	rng_seed(&r, v->seed ^ 0x6865617679ull ^ ((uint64_t)(c + 1) * 0x9e3779b97f4a7c15ull));
	for (int64_t i = lo; i < hi; i++) {
		double x = task_dtype_get(v->p, v->d, i);
		if (v->flags & RNG_SCALED)
			x = x * v->a + v->b;
		if (v->flags & RNG_HEAVY)
			x *= exp(rng_normal(&r));
		put_v(v->p, v->d, i, x);
		/* as stored, rounded to the dtype */
		x = fabs(task_dtype_get(v->p, v->d, i));
		amax = x > amax ? x : amax;
	}
	k->amax = amax;
}

static void *vary_worker(void *arg)
{
	struct vary *v = arg;
	int64_t c;
	while ((c = __atomic_fetch_add(&v->next, 1, __ATOMIC_RELAXED)) < v->nCh)
		vary_chunk(v, c);
	return NULL;
}

/* every chunk of v, on the threads the process may use; a thread that
 * cannot be started leaves its chunks to the others */
static void vary_pass(struct vary *v)
{
	int nT = gVaryThreads;
	if (!nT) {
		cpu_set_t cs;
		nT = sched_getaffinity(0, sizeof cs, &cs) == 0 ? CPU_COUNT(&cs)
		                                               : (int)sysconf(_SC_NPROCESSORS_ONLN);
	}
	nT = nT > VARY_THREADS ? VARY_THREADS : nT < 1 ? 1 : nT;
	nT = (int64_t)nT > v->nCh ? (int)v->nCh : nT;
	pthread_t t[VARY_THREADS];
	int made = 0;
	v->next = 0;
	for (int i = 1; i < nT; i++)
		made += pthread_create(&t[made], NULL, vary_worker, v) == 0;
	vary_worker(v);
	for (int i = 0; i < made; i++)
		pthread_join(t[i], NULL);
}

void rng_vary_plan(struct rng *r, uint64_t seed, int flags, int64_t n, double mean, double sd,
                   double amax, double *pA, double *pB)
{
	rng_seed(r, seed ^ 0x7661727931ull);
	if (!(n > 1))
		sd = fabs(mean);
	if (!(sd > 0))
		sd = amax > 0 ? amax : 1;
	*pA = 1, *pB = 0;
	if (flags & RNG_SCALED) {
		*pA = exp2(-3 + 6 * rng_uniform(r));
		*pB = (4 * rng_uniform(r) - 2) * *pA * sd;
	}
}

int64_t rng_vary_outliers(int64_t n)
{
	return n / 2048 > 0 ? n / 2048 : 1;
}

void rng_vary_outlier(struct rng *r, int64_t n, double amax, int64_t *pI, double *pX)
{
	double big = amax > 0 ? amax : 1;
	*pI = (int64_t)(rng_next(r) % (uint64_t)n);
	double x = (8 + 56 * rng_uniform(r)) * big;
	*pX = rng_next(r) & 1 ? x : -x;
}

void rng_vary(void *p, kl_dtype d, int64_t n, int flags, uint64_t seed)
{
	if (!task_dtype_is_float(d) || n <= 0 || !flags)
		return;
	struct rng r;
	struct vary v = {.p = p,
	                 .d = d,
	                 .n = n,
	                 .nCh = (n + VARY_CHUNK - 1) / VARY_CHUNK,
	                 .seed = seed,
	                 .stats = 1,
	                 .flags = flags};
	v.ch = xcalloc((size_t)v.nCh, sizeof *v.ch);
	vary_pass(&v);
	/* the chunks' statistics merged in their order (Chan et al.) */
	double cnt = 0, mean = 0, m2 = 0, amax = 0;
	for (int64_t c = 0; c < v.nCh; c++) {
		const struct vary_chunk *k = &v.ch[c];
		double all = cnt + k->cnt, dm = k->mean - mean;
		mean += dm * k->cnt / all;
		m2 += k->m2 + dm * dm * cnt * k->cnt / all;
		cnt = all;
		amax = k->amax > amax ? k->amax : amax;
	}
	double sd = n > 1 ? sqrt(m2 / (double)(n - 1)) : fabs(mean);
	rng_vary_plan(&r, seed, flags, n, mean, sd, amax, &v.a, &v.b);
	if (flags & (RNG_SCALED | RNG_HEAVY)) {
		v.stats = 0;
		vary_pass(&v);
		amax = 0;
		for (int64_t c = 0; c < v.nCh; c++)
			amax = v.ch[c].amax > amax ? v.ch[c].amax : amax;
	}
	free(v.ch);
	if (flags & RNG_OUTLIERS) {
		for (int64_t k = 0, m = rng_vary_outliers(n); k < m; k++) {
			int64_t i;
			double x;
			rng_vary_outlier(&r, n, amax, &i, &x);
			put_v(p, d, i, x);
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
