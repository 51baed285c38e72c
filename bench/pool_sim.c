/*
 * pool_sim.c - the pool with many workers that answer at once
 * (bench/fake_worker.c): jobs per second through the pool and the loop,
 * overhead per job, and the memory of the process that runs them.
 * Usage: pool_sim FAKE_WORKER NWORKERS NJOBS
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "pool.h"
#include "util.h"
#include "verdict.h"

static int nDone, nCorrect;

static void on_done(int job, cJSON *r, void *arg)
{
	(void)job, (void)arg;
	struct verdict v;
	verdict_decode(r, &v);
	nDone++;
	nCorrect += v.status == STATUS_CORRECT;
}

static long rss_kib(void)
{
	long kib = 0;
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	while (f && fgets(line, sizeof line, f))
		if (!strncmp(line, "VmRSS:", 6))
			kib = atol(line + 6);
	if (f)
		fclose(f);
	return kib;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: pool_sim FAKE_WORKER NWORKERS NJOBS\n");
		return 2;
	}
	int nw = atoi(argv[2]), nj = atoi(argv[3]);
	strbuf spec = STRBUF_INIT;
	for (int i = 0; i < nw; i++)
		sb_addf(&spec, "%scmd:%s", i ? ";" : "", argv[1]);
	struct loop *l = loop_new();
	struct worker_config wc = {.zBackend = "host", .zTaskDir = "tasks/softmax"};
	char err[KL_ERRLEN];
	long rss0 = rss_kib();
	struct pool *p = pool_new(l, &wc, spec.buf, on_done, NULL, NULL, err);
	if (!p) {
		fprintf(stderr, "pool_sim: %s\n", err);
		return 2;
	}
	const char *src = "int kl_run(void) { return 0; }\n";
	/* warm: every worker started and loaded */
	for (int i = 0; i < nw; i++)
		pool_submit(p, "warm.c", src, strlen(src));
	while (nDone < nw)
		loop_once(l, 0.1);
	long rssWarm = rss_kib();
	double t0 = now_s();
	for (int i = 0; i < nj; i++)
		pool_submit(p, "c.c", src, strlen(src));
	while (nDone < nw + nj)
		loop_once(l, 0.1);
	double dt = now_s() - t0;
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	printf("%d workers, %d jobs: %.2f s, %.0f jobs/s, %.1f us per job (wall), "
	       "%.1f us CPU of the runner per job; RSS %ld KiB before, %ld KiB with the workers "
	       "(%.1f KiB per worker), %ld KiB peak; %d correct\n",
	       nw, nj, dt, nj / dt, 1e6 * dt / nj,
	       1e6 *
	           (ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
	            ru.ru_stime.tv_usec / 1e6) /
	           (nj + nw),
	       rss0, rssWarm, (double)(rssWarm - rss0) / nw, ru.ru_maxrss, nCorrect - nw);
	pool_free(p);
	loop_free(l);
	sb_free(&spec);
	return 0;
}
