/*
 * test_round.c - the backends' rounding of inputs to fewer mantissa bits
 * (backend.h, round: the float64 reference's emulation sets, precision.c):
 * the host's is compare_round_mantissa(); the GPU's kernel (kld_round in
 * libkloop-cuda.so) gives the same bits for every element of f32, f64 and
 * f16 sets of random bit patterns (NaN, infinities, subnormals and ties
 * among them), to 10 and 7 bits, to nearest even and toward zero.  The GPU
 * half skips with one line where there is none.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "check.h"
#include "compare.h"
#include "rng.h"
#include "util.h"

#define N (1 << 20)

/* n elements of es bytes of random bits, a few made special (each dtype's
 * infinities and NaN, zero, ties at 7 and 10 bits) */
static void patterns(unsigned char *p, int es, uint64_t seed)
{
	struct rng r;
	rng_seed(&r, seed);
	for (size_t i = 0; i < (size_t)N * (size_t)es; i += 8) {
		uint64_t v = rng_next(&r);
		memcpy(p + i, &v, (size_t)N * (size_t)es - i < 8 ? (size_t)N * (size_t)es - i : 8);
	}
	static const uint32_t f32[] = {0x7f800000u, 0xff800000u, 0x7fc00001u,
	                               0,           0x80000000u, 0x3f801000u,
	                               0x3f808000u, 0x3f818000u, 0x00000001u};
	static const uint64_t f64[] = {0x7ff0000000000000ull, 0x7ff8000000000001ull, 0,
	                               0x3ff0000002000000ull, 0x3ff0000010000000ull, 1};
	static const uint16_t f16[] = {0x7c00, 0xfc00, 0x7e01, 0, 0x3c01, 0x3c04, 0x0001};
	if (es == 4)
		memcpy(p, f32, sizeof f32);
	else if (es == 8)
		memcpy(p, f64, sizeof f64);
	else
		memcpy(p, f16, sizeof f16);
}

int main(void)
{
	char err[KL_ERRLEN];
	struct backend *h = backend_host_new(err);
	CHECK(h && h->round, "the host backend rounds (%s)", h ? "" : err);
	/* the kernels of this tree's build (the tests run from its top) */
	setenv("KLOOP_CUDA_KERNELS", "bin/libkloop-cuda.so", 0);
	struct backend *g = backend_cuda_available() ? backend_cuda_new(0, err) : NULL;
	if (!g)
		printf("skip - the GPU's rounding: no GPU here\n");
	else
		CHECK(!strstr(g->zDevice, "checks on the CPU"),
		      "the GPU backend has kloop's kernels (%s)", g->zDevice);
	static const struct {
		kl_dtype d;
		int es;
		const char *name;
	} ty[] = {{KL_F32, 4, "f32"}, {KL_F64, 8, "f64"}, {KL_F16, 2, "f16"}};
	unsigned char *want = xmalloc((size_t)N * 8), *got = xmalloc((size_t)N * 8);
	for (size_t k = 0; k < sizeof ty / sizeof *ty; k++)
		for (int bits = 7; bits <= 10; bits += 3)
			for (int tr = 0; tr < 2; tr++) {
				size_t n = (size_t)N * (size_t)ty[k].es;
				patterns(want, ty[k].es,
				         7 + k * 31 + (uint64_t)bits * 3 + (uint64_t)tr);
				memcpy(got, want, n);
				compare_round_mantissa(want, ty[k].d, N, bits, tr);
				int ok = h && h->round(h, got, ty[k].d, N, bits, tr, err) == 0 &&
				         !memcmp(got, want, n);
				CHECK(ok,
				      "the host rounds %s to %d bits %s as compare_round_mantissa",
				      ty[k].name, bits, tr ? "toward zero" : "to nearest even");
				if (!g)
					continue;
				patterns(got, ty[k].es,
				         7 + k * 31 + (uint64_t)bits * 3 + (uint64_t)tr);
				void *dv = g->alloc(g, n, err);
				size_t bad = 0, first = 0;
				ok = dv && g->upload(g, dv, got, n, err) == 0 &&
				     g->round(g, dv, ty[k].d, N, bits, tr, err) == 0 &&
				     g->download(g, got, dv, n, err) == 0 && g->sync(g, err) == 0;
				for (size_t i = 0; ok && i < N; i++)
					if (memcmp(got + i * ty[k].es, want + i * ty[k].es,
					           (size_t)ty[k].es) &&
					    !bad++)
						first = i;
				CHECK(ok && !bad,
				      "the GPU rounds %d %s elements to %d bits %s as the host "
				      "does (%zu "
				      "differ, the first at %zu%s%s)",
				      N, ty[k].name, bits, tr ? "toward zero" : "to nearest even",
				      bad, first, ok ? "" : "; ", ok ? "" : err);
				if (dv)
					g->release(g, dv);
			}
	free(want);
	free(got);
	if (g)
		g->destroy(g);
	if (h)
		h->destroy(h);
	return check_done();
}
