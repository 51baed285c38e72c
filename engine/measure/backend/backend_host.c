/*
 * backend_host.c - the CPU backend: device memory is host memory; between
 * timed runs the candidate's buffers are evicted line by line (clflush on
 * x86-64; elsewhere a buffer twice the last-level cache is written); the
 * timer is the monotonic clock.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <unistd.h>

#include "backend.h"
#include "rng.h"
#include "util.h"

struct host {
	char *pFlush;  /* buffer written to evict the caches */
	size_t nFlush; /* its size */
	int gen;       /* value written, changes each flush */
	struct timespec t0;
};

static void *h_alloc(struct backend *b, size_t n, char *err)
{
	(void)b;
	void *p = NULL;
	if (posix_memalign(&p, 4096, n ? n : 1) != 0)
		return kl_err(err, "cannot allocate %zu bytes of host memory", n), NULL;
	return p;
}

static void h_release(struct backend *b, void *p)
{
	(void)b;
	free(p);
}

static void *h_alloc_shared(struct backend *b, size_t n, struct kl_share *sh, char *err)
{
	(void)b;
	memset(sh, 0, sizeof *sh);
	sh->n = n ? n : 1;
	sh->fd = memfd_create("kloop-buffer", MFD_CLOEXEC);
	if (sh->fd < 0)
		return kl_err(err, "memfd_create: %s", strerror(errno)), NULL;
	if (ftruncate(sh->fd, (off_t)sh->n) < 0) {
		kl_err(err, "cannot size a shared buffer of %zu bytes: %s", sh->n, strerror(errno));
		close(sh->fd);
		return NULL;
	}
	void *p = mmap(NULL, sh->n, PROT_READ | PROT_WRITE, MAP_SHARED, sh->fd, 0);
	if (p == MAP_FAILED) {
		kl_err(err, "cannot map a shared buffer of %zu bytes: %s", sh->n, strerror(errno));
		close(sh->fd);
		return NULL;
	}
	return p;
}

static void h_release_shared(struct backend *b, void *p, struct kl_share *sh)
{
	(void)b;
	munmap(p, sh->n);
	close(sh->fd);
	sh->fd = -1;
}

static void *h_open_shared(struct backend *b, const struct kl_share *sh, int ro, char *err)
{
	(void)b;
	void *p = mmap(NULL, sh->n, ro ? PROT_READ : PROT_READ | PROT_WRITE, MAP_SHARED, sh->fd, 0);
	if (p == MAP_FAILED)
		return kl_err(err, "cannot map a shared buffer: %s", strerror(errno)), NULL;
	return p;
}

static int h_copy(struct backend *b, void *dst, const void *src, size_t n, char *err)
{
	(void)b, (void)err;
	memcpy(dst, src, n);
	return 0;
}

static int h_compare(struct backend *b, const void *out, const void *ref, kl_dtype d, int64_t n,
                     const struct task_tol *tol, struct compare_report *r, char *err)
{
	(void)b, (void)err;
	compare_buffers(out, ref, d, n, tol, r);
	return 0;
}

static int h_error64(struct backend *b, const void *out, kl_dtype d, const void *ref, int64_t n,
                     double *a, char *err)
{
	(void)b, (void)err;
	compare_error64(out, d, ref, n, a);
	return 0;
}

static int h_diff(struct backend *b, const void *x, const void *y, int64_t n, int es,
                  int64_t *pCount, int64_t *pFirst, char *err)
{
	(void)b, (void)err;
	compare_diff(x, y, n, es, pCount, pFirst);
	return 0;
}

static int h_random(struct backend *b, void *p, const struct task_tensor *t, uint64_t seed,
                    char *err)
{
	struct rng r;
	(void)b, (void)err;
	rng_seed(&r, seed);
	rng_fill(&r, t, p);
	return 0;
}

static int h_mix(struct backend *b, void *dst, const void *a, const void *src2, int64_t n, int es,
                 uint64_t seed, char *err)
{
	(void)b, (void)err;
	rng_mix(dst, a, src2, n, es, seed);
	return 0;
}

static int h_round(struct backend *b, void *p, kl_dtype d, int64_t n, int bits, int tr, char *err)
{
	(void)b, (void)err;
	compare_round_mantissa(p, d, n, bits, tr);
	return 0;
}

static int h_fill(struct backend *b, void *dst, int byte, size_t n, char *err)
{
	(void)b, (void)err;
	memset(dst, byte, n);
	return 0;
}

#if defined(__x86_64__)
static void h_evict(struct backend *b, const void *p, size_t n)
{
	(void)b;
	const char *c = p;
	for (size_t i = 0; i < n; i += 64)
		__builtin_ia32_clflush(c + i);
	if (n)
		__builtin_ia32_clflush(c + n - 1);
	__builtin_ia32_mfence();
}
#endif

static int h_flush(struct backend *b, char *err)
{
	struct host *h = b->priv;
	(void)err;
	if (b->evict)
		return 0; /* the buffers themselves are evicted */
	h->gen++;
	memset(h->pFlush, h->gen & 0xff, h->nFlush);
	/* read it back so the writes cannot be elided */
	volatile unsigned char sink = 0;
	for (size_t i = 0; i < h->nFlush; i += 4096)
		sink ^= (unsigned char)h->pFlush[i];
	(void)sink;
	return 0;
}

static int h_timer_start(struct backend *b, char *err)
{
	struct host *h = b->priv;
	(void)err;
	clock_gettime(CLOCK_MONOTONIC, &h->t0);
	return 0;
}

static int h_timer_stop(struct backend *b, double *pStream, double *pDevice, char *err)
{
	struct host *h = b->priv;
	struct timespec t1;
	(void)err;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	*pStream =
	    (double)(t1.tv_sec - h->t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - h->t0.tv_nsec) * 1e-6;
	*pDevice = *pStream;
	return 0;
}

static int h_sync(struct backend *b, char *err)
{
	(void)b, (void)err;
	return 0;
}

static int h_reset(struct backend *b, char *err)
{
	(void)b, (void)err;
	return 0;
}

static int h_clock(struct backend *b)
{
	(void)b;
	return -1;
}

static void h_destroy(struct backend *b)
{
	struct host *h = b->priv;
	free(h->pFlush);
	free(h);
	free(b);
}

static size_t __attribute__((unused)) llc_size(void)
{
	long n = sysconf(_SC_LEVEL3_CACHE_SIZE);
	if (n <= 0)
		n = sysconf(_SC_LEVEL2_CACHE_SIZE);
	if (n <= 0)
		n = 32L << 20;
	return (size_t)n;
}

static void cpu_name(char *buf, size_t n)
{
	strbuf sb = STRBUF_INIT;
	snprintf(buf, n, "cpu");
	if (read_file("/proc/cpuinfo", &sb, 1 << 22, NULL) == 0) {
		char *p = strstr(sb.buf, "model name");
		char *colon = p ? strchr(p, ':') : NULL;
		if (colon) {
			colon += 2;
			size_t k = strcspn(colon, "\n");
			snprintf(buf, n, "%.*s", (int)k, colon);
		}
	}
	sb_free(&sb);
}

struct backend *backend_host_new(char *err)
{
	(void)err;
	struct backend *b = xcalloc(1, sizeof *b);
	struct host *h = xcalloc(1, sizeof *h);
	b->zName = "host";
	b->roShared = 1;
	cpu_name(b->zDevice, sizeof b->zDevice);
	b->priv = h;
#if defined(__x86_64__)
	b->evict = h_evict;
#else
	h->nFlush = 2 * llc_size();
	if (h->nFlush < (8u << 20))
		h->nFlush = 8u << 20;
	h->pFlush = xmalloc(h->nFlush);
#endif
	b->alloc = h_alloc;
	b->release = h_release;
	b->alloc_shared = h_alloc_shared;
	b->release_shared = h_release_shared;
	b->open_shared = h_open_shared;
	b->upload = h_copy;
	b->download = h_copy;
	b->fill = h_fill;
	b->copy = h_copy;
	b->compare = h_compare;
	b->diff = h_diff;
	b->error64 = h_error64;
	b->random = h_random;
	b->mix = h_mix;
	b->round = h_round;
	b->flush = h_flush;
	b->timer_start = h_timer_start;
	b->timer_stop = h_timer_stop;
	b->sync = h_sync;
	b->reset = h_reset;
	b->clock_mhz = h_clock;
	b->destroy = h_destroy;
	return b;
}
