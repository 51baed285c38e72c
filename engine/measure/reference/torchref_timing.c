/*
 * torchref_timing.c - the baselines' timing (eager PyTorch, torch.compile),
 * cached per problem, device and PyTorch; torch.compile compiled in the
 * background while the search goes on, held while candidates are timed.
 */
#include "torchref_priv.h"

#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* cache the baselines' timing (a cache: failing to write it loses nothing) */
static void save_timing(struct torchref *r)
{
	char e2[KL_ERRLEN];
	char *z = cJSON_PrintUnformatted(r->timing);
	char *dir = xstrdup(r->zTimingPath);
	*strrchr(dir, '/') = 0;
	if (mkdir_p(dir, e2) == 0)
		write_file_atomic(r->zTimingPath, z, strlen(z), e2);
	free(dir);
	free(z);
}

/* the baselines' reply (torchref_await) */
static int time_reply(struct torchref *r, cJSON *a, char *err);

int torchref_timing_begin(struct torchref *r, struct harness *h, int defer, char *err)
{
	if (r->timing)
		return 1;
	strbuf sb = STRBUF_INIT;
	char e2[KL_ERRLEN];
	if (path_exists(r->zTimingPath) && read_file(r->zTimingPath, &sb, 1 << 20, e2) == 0) {
		r->timing = cJSON_Parse(sb.buf);
		sb_free(&sb);
		if (cJSON_IsObject(r->timing)) {
			r->timingCached = 1;
			return 1;
		}
		cJSON_Delete(r->timing);
		r->timing = NULL;
	}
	sb_free(&sb);
	cJSON *q = cJSON_CreateObject();
	cJSON_AddStringToObject(q, "op", "time");
	/* the timing set's */
	r->timeSeed = (double)(r->o.seed + 1 + (uint64_t)(harness_nsets(h) - 1));
	cJSON_AddNumberToObject(q, "seed", r->timeSeed);
	cJSON_AddNumberToObject(q, "budget_ms", r->o.budgetS * 1000);
	if (defer)
		cJSON_AddStringToObject(q, "compile", "defer");
	if (torchref_send(r, q, err) < 0)
		return -1;
	torchref_await(r, STEP_TIME, time_reply, 0, NULL);
	return 0;
}

static int time_reply(struct torchref *r, cJSON *a, char *err)
{
	cJSON *tm = cJSON_DetachItemFromObject(a, "timing");
	cJSON_Delete(a);
	if (!cJSON_IsObject(tm)) {
		cJSON_Delete(tm);
		return kl_err(err, "%s: the PyTorch helper sent no timing", r->zProblem);
	}
	r->timing = tm;
	const cJSON *cm = cJSON_GetObjectItem(tm, "compile");
	if (!cJSON_IsTrue(cJSON_GetObjectItem(cm, "pending"))) {
		save_timing(r);
		return 1;
	}
	/* the eager model alone was timed: torch.compile compiles from now on,
	 * in the background (torchref_service), and is timed later.  From here
	 * the helper is served between the caller's own work, from its loop */
	cJSON *q = cJSON_CreateObject();
	cJSON_AddStringToObject(q, "op", "compile");
	cJSON_AddNumberToObject(q, "seed", r->timeSeed);
	if (torchref_send(r, q, err) < 0)
		return -1;
	r->compile = COMPILE_RUNNING;
	return 1;
}

const cJSON *torchref_baselines(const struct torchref *r)
{
	return r->timing;
}

int torchref_compile_pending(const struct torchref *r)
{
	return r && (r->compile == COMPILE_RUNNING || r->compile == COMPILE_OVER);
}

void torchref_hold(struct torchref *r, int hold)
{
	if (!r || r->pid <= 0 || r->compile != COMPILE_RUNNING || r->held == !!hold)
		return;
	/* the helper's own process only: torch.compile's compile workers go on
	 * with their CPU work, and only the helper touches the GPU */
	kill(r->pid, hold ? SIGSTOP : SIGCONT);
	r->held = !!hold;
}

/* the background compile's record in the baselines: rec (taken) */
static void set_compile(struct torchref *r, cJSON *rec)
{
	if (cJSON_IsObject(rec)) {
		cJSON_AddNumberToObject(rec, "benchmarks", r->nGpu);
		cJSON_AddNumberToObject(rec, "benchmark_seconds", r->gpuS);
		cJSON_AddBoolToObject(rec, "background", 1);
	}
	cJSON_ReplaceItemInObject(r->timing, "compile", rec);
}

/* the background compile failed with err: the baselines say so, and the
 * helper is ended */
static int compile_lost(struct torchref *r, const char *err)
{
	cJSON *rec = cJSON_CreateObject();
	char *z = xasprintf("torch.compile failed: %s", err);
	cJSON_AddStringToObject(rec, "error", z);
	free(z);
	set_compile(r, rec);
	r->compile = COMPILE_TIMED;
	torchref_kill(r);
	return -1;
}

/* a complete line the helper has sent, reading only what is there; NULL
 * when none (*pGone: it ended) */
static cJSON *line_now(struct torchref *r, int *pGone, char *err)
{
	*pGone = 0;
	struct pollfd pf = {.fd = r->from, .events = POLLIN};
	if (!(r->in.buf && memchr(r->in.buf, '\n', r->in.len)) && poll(&pf, 1, 0) <= 0)
		return NULL;
	cJSON *o = torchref_recv_line(r, 0, NULL, err);
	*pGone = !o;
	return o;
}

int torchref_service(struct torchref *r, char *err)
{
	if (r->compile != COMPILE_RUNNING)
		return r->compile == COMPILE_NONE ? 0 : 1;
	torchref_hold(r, 0);
	int rc = 0, gone;
	cJSON *o;
	while (rc == 0 && (o = line_now(r, &gone, err))) {
		const char *ev = cJSON_GetStringValue(cJSON_GetObjectItem(o, "ev"));
		if (ev && !strcmp(ev, "gpu")) {
			/* a benchmark of inductor's: the GPU is the helper's until it says done */
			double t0 = now_s(), limit = r->o.timeoutS > 600 ? r->o.timeoutS : 600;
			cJSON *done = NULL;
			if (torchref_send(r, cJSON_Parse("{\"op\":\"go\"}"), err) == 0)
				done = torchref_recv_line(
				    r, limit, "benchmarking a kernel for torch.compile", err);
			const char *dv = cJSON_GetStringValue(cJSON_GetObjectItem(done, "ev"));
			if (!done || !dv || strcmp(dv, "gpu_done")) {
				if (done)
					kl_err(err,
					       "the PyTorch helper sent \"%s\" instead of gpu_done",
					       dv ? dv : "?");
				rc = compile_lost(r, err);
			} else {
				r->nGpu++;
				r->gpuS += now_s() - t0;
			}
			cJSON_Delete(done);
		} else if (ev && !strcmp(ev, "compiled")) {
			r->compile = COMPILE_OVER;
			if (cJSON_GetObjectItem(o, "error")) {
				cJSON *rec = cJSON_CreateObject();
				cJSON_AddItemToObject(rec, "error",
				                      cJSON_DetachItemFromObject(o, "error"));
				set_compile(r, rec);
				r->compile = COMPILE_TIMED;
				save_timing(r); /* as a compile that fails in the foreground */
			}
			rc = 1;
		} else {
			kl_err(err, "the PyTorch helper sent \"%s\" while compiling",
			       ev ? ev : "?");
			rc = compile_lost(r, err);
		}
		cJSON_Delete(o);
	}
	if (rc == 0 && gone)
		rc = compile_lost(r, err);
	return rc;
}

const cJSON *torchref_time_compile(struct torchref *r, char *err)
{
	if (r->compile != COMPILE_OVER)
		return r->timing;
	cJSON *q = cJSON_CreateObject();
	cJSON_AddStringToObject(q, "op", "time_compile");
	cJSON_AddNumberToObject(q, "budget_ms", r->o.budgetS * 1000);
	cJSON *a = torchref_send(r, q, err) == 0 ? torchref_recv_line(r, 0, NULL, err) : NULL;
	if (!a) {
		compile_lost(r, err);
		return r->timing;
	}
	cJSON *rec = cJSON_DetachItemFromObject(a, "compile");
	cJSON_Delete(a);
	if (!cJSON_IsObject(rec)) {
		cJSON_Delete(rec);
		compile_lost(r, "the PyTorch helper sent no timing of the compiled model");
		return r->timing;
	}
	set_compile(r, rec);
	r->compile = COMPILE_TIMED;
	save_timing(r);
	return r->timing;
}

int torchref_timing_cached(const struct torchref *r)
{
	return r->timingCached;
}
