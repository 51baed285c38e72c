/*
 * doctor_workers.c - `kloop doctor --workers`: start every configured
 * worker, have each evaluate the bundled softmax seed, and print one line
 * per worker (its host, device and version, or why it cannot be used).
 */
#include "doctor_workers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pool.h"
#include "status.h"
#include "task.h"
#include "util.h"
#include "verdict.h"
#include "version.h"

struct dw {
	int n, nDone;
	cJSON **aRes; /* by worker */
	int *aJob;
	double *aT;
	double t0;
};

static void on_done(int job, cJSON *r, void *arg)
{
	struct dw *d = arg;
	for (int i = 0; i < d->n; i++)
		if (d->aJob[i] == job) {
			d->aRes[i] = cJSON_Duplicate(r, 1);
			d->aT[i] = now_s() - d->t0;
			d->nDone++;
		}
}

int doctor_workers(const char *zSpec, const char *zBackend, int nJobs, const char *zPython,
                   cJSON *json)
{
	char err[KL_ERRLEN];
	struct loop *l = loop_new();
	char *dir = path_join(task_bundled_dir(), "softmax");
	struct worker_config wc = {
	    .zBackend = zBackend,
	    .zTaskDir = dir,
	    .zPython = zPython,
	    .nTrials = 1,
	    .budgetS = 0.05,
	    .runTimeoutS = 60,
	    .setupTimeoutS = 300,
	    .jobs = nJobs,
	};
	struct dw d = {0};
	struct pool *p = pool_new(l, &wc, zSpec, on_done, NULL, &d, err);
	if (!p) {
		fprintf(stderr, "kloop: %s\n", err);
		free(dir);
		loop_free(l);
		return 2;
	}
	char *seed = path_join(dir, strcmp(zBackend, "cuda") ? "seed.c" : "seed.cu");
	strbuf src = STRBUF_INIT;
	if (read_file(seed, &src, 1 << 20, err) < 0) {
		fprintf(stderr, "kloop: %s\n", err);
		pool_free(p);
		loop_free(l);
		free(seed);
		free(dir);
		return 2;
	}
	d.n = pool_size(p);
	d.aRes = xcalloc((size_t)d.n, sizeof *d.aRes);
	d.aJob = xcalloc((size_t)d.n, sizeof *d.aJob);
	d.aT = xcalloc((size_t)d.n, sizeof *d.aT);
	d.t0 = now_s();
	for (int i = 0; i < d.n; i++)
		d.aJob[i] = pool_submit_on(p, i, strrchr(seed, '/') + 1, src.buf, src.len, err);
	while (d.nDone < d.n)
		loop_once(l, 0.2);
	int bad = 0;
	cJSON *arr = json ? cJSON_AddArrayToObject(json, "workers") : NULL;
	for (int i = 0; i < d.n; i++) {
		struct pool_info pi;
		pool_info(p, i, &pi);
		cJSON *r = d.aRes[i];
		struct verdict v;
		verdict_decode(r, &v);
		const char *st = r && *v.zStatus ? v.zStatus : NULL, *why = v.zReason;
		const char *host = v.zWorkerHost, *dev = v.zWorkerDevice;
		int ok = st && v.status == STATUS_CORRECT;
		bad += !ok;
		char *detail =
		    ok ? xasprintf("%s on %s, kloop-worker %s, the softmax seed is correct "
		                   "(%.1f s from start)",
		                   dev && *dev ? dev : "?", host && *host ? host : "?",
		                   KLOOP_VERSION, d.aT[i])
		       : xasprintf("%s: %s", st ? st : "no answer", why ? why : "");
		for (char *c = detail; *c; c++)
			if (*c == '\n' || *c == '\r' || (unsigned char)*c < 0x20)
				*c = ' ';
		if (arr) {
			cJSON *o = cJSON_CreateObject();
			cJSON_AddStringToObject(o, "worker", pi.zLabel);
			cJSON_AddBoolToObject(o, "ok", ok);
			cJSON_AddStringToObject(o, "detail", detail);
			cJSON_AddItemToArray(arr, o);
		} else {
			printf("%-11s %s  %s\n", pi.zLabel, ok ? "ok " : "-- ", detail);
		}
		free(detail);
		cJSON_Delete(r);
	}
	free(d.aRes);
	free(d.aJob);
	free(d.aT);
	sb_free(&src);
	free(seed);
	free(dir);
	pool_free(p);
	loop_free(l);
	return bad ? 1 : 0;
}
