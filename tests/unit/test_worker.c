/*
 * test_worker.c - the engine's side of a real kloop-worker on the host
 * backend: the softmax seed is correct and timed, a wrong candidate is
 * incorrect, one that segfaults is crashed and the next job still runs on
 * a fresh worker process, a worker that cannot start fails its job from
 * the loop and never from inside worker_submit(), the same machine code
 * under another name is checked but not timed again (also when the engine
 * says so before the worker starts, and not for another device), and
 * worker_config_from() copies the configuration's settings.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "config.h"
#include "util.h"
#include "worker.h"

#define MAX_JOBS 8

struct got {
	int n;                    /* results received */
	char *azStatus[MAX_JOBS]; /* each job's status, by job id */
	char *azReason[MAX_JOBS];
	double timeMs[MAX_JOBS];    /* its median time, or -1 */
	char *azCode[MAX_JOBS];     /* its code hash */
	char *azNotTimed[MAX_JOBS]; /* its "not_timed" note */
	cJSON *timing[MAX_JOBS];    /* its timing */
	double timeS[MAX_JOBS];     /* seconds it was timed */
	int lost[MAX_JOBS];         /* it ended with the worker lost (worker_end) */
	int inSubmit;               /* a worker_submit() call is on the stack */
	int doneInSubmit;           /* done was called from inside it */
};

static void on_done(int job, const struct worker_end *e, void *arg)
{
	cJSON *result = e->result;
	struct got *g = arg;
	g->n++;
	g->doneInSubmit |= g->inSubmit;
	if (job < 0 || job >= MAX_JOBS)
		return;
	const char *st = cJSON_GetStringValue(cJSON_GetObjectItem(result, "status"));
	const char *why = cJSON_GetStringValue(cJSON_GetObjectItem(result, "reason"));
	g->azStatus[job] = xstrdup(st ? st : "?");
	g->lost[job] = e->lost;
	g->azReason[job] = xstrdup(why ? why : "");
	const cJSON *tm = cJSON_GetObjectItem(cJSON_GetObjectItem(result, "timing"), "median_ms");
	g->timeMs[job] = cJSON_IsNumber(tm) ? tm->valuedouble : -1;
	const char *code = cJSON_GetStringValue(cJSON_GetObjectItem(result, "code_hash"));
	const char *nt = cJSON_GetStringValue(cJSON_GetObjectItem(result, "not_timed"));
	g->azCode[job] = code ? xstrdup(code) : NULL;
	g->azNotTimed[job] = nt ? xstrdup(nt) : NULL;
	g->timing[job] = cJSON_Duplicate(cJSON_GetObjectItem(result, "timing"), 1);
	g->timeS[job] = cJSON_GetNumberValue(
	    cJSON_GetObjectItem(cJSON_GetObjectItem(result, "seconds"), "time"));
}

/* submit zSource as zName */
static int submit_as(struct worker *w, const char *zName, const char *zPath)
{
	strbuf sb = STRBUF_INIT;
	read_file(zPath, &sb, 1 << 20, NULL);
	int id = worker_submit(w, zName, sb.buf ? sb.buf : "", sb.len);
	sb_free(&sb);
	return id;
}

static void got_free(struct got *g)
{
	for (int i = 0; i < MAX_JOBS; i++) {
		free(g->azStatus[i]);
		free(g->azReason[i]);
		free(g->azCode[i]);
		free(g->azNotTimed[i]);
		cJSON_Delete(g->timing[i]);
	}
}

static int submit_file(struct worker *w, struct got *g, const char *zPath)
{
	strbuf sb = STRBUF_INIT;
	char err[KL_ERRLEN];
	if (read_file(zPath, &sb, 1 << 20, err) < 0) {
		CHECK(0, "read %s: %s", zPath, err);
		return -1;
	}
	const char *b = strrchr(zPath, '/');
	g->inSubmit = 1;
	int id = worker_submit(w, b ? b + 1 : zPath, sb.buf, sb.len);
	g->inSubmit = 0;
	sb_free(&sb);
	return id;
}

static void wait_for(struct loop *l, struct got *g, int n)
{
	double t0 = now_s();
	while (g->n < n && now_s() - t0 < 300)
		loop_once(l, 0.5);
}

int main(void)
{
	setenv("KLOOP_INCLUDE", "include", 1);
	struct loop *l = loop_new();
	struct got g = {0};
	char *launch[] = {"bin/kloop-worker", "--backend", "host", "--jobs", "2", NULL};
	struct config cfg = {0};
	cfg.zPython = "python3";
	cfg.nTrials = 2;
	cfg.budgetS = 0.05;
	cfg.timeoutS = 60;
	cfg.jobs = 2;
	struct worker_config wc = {0};
	worker_config_from(&wc, &cfg);
	CHECK(wc.nTrials == 2 && wc.budgetS == 0.05 && wc.runTimeoutS == 60 && wc.jobs == 2 &&
	          wc.zPython == cfg.zPython,
	      "worker_config_from() copies trials, budget, timeout, jobs and python");
	struct config cfgOff = cfg;
	cfgOff.noSandbox = 1;
	struct worker_config wcOff = {0};
	worker_config_from(&wcOff, &cfgOff);
	CHECK(wcOff.noSandbox == 1 && wc.noSandbox == 0,
	      "worker_config_from() carries sandbox = off, and the sandbox is on by default");
	struct worker_config wh = {.zBackend = "host"}, wg = {.zBackend = "cuda"},
	                     whOff = {.zBackend = "host", .noSandbox = 1},
	                     wgOff = {.zBackend = "cuda", .noSandbox = 1};
	CHECK(worker_sandboxed(&wh) && !worker_sandboxed(&whOff),
	      "host backend: sandboxed unless sandbox = off");
	CHECK(worker_sandboxed(&wg) && !worker_sandboxed(&wgOff),
	      "cuda backend: sandboxed too, unless sandbox = off");
	int noFlag[2] = {0, 0};
	for (int k = 0; k < 2; k++) {
		char **av = worker_launch_argv(k ? &wgOff : &wg, "kloop-worker");
		for (int i = 0; av[i]; i++)
			noFlag[k] |= !strcmp(av[i], "--no-sandbox"), free(av[i]);
		free(av);
	}
	CHECK(!noFlag[0] && noFlag[1], "a cuda worker gets --no-sandbox only when sandbox = off");
	wc.argvLaunch = launch;
	wc.zBackend = "host";
	wc.zTaskDir = "tasks/softmax";
	struct worker *w = worker_new(l, &wc, on_done, NULL, &g);

	int seed = submit_file(w, &g, "tasks/softmax/seed.c");
	int wrong = submit_file(w, &g, "tests/fixtures/host/zeros.c");
	int crash = submit_file(w, &g, "tests/fixtures/host/segfault.c");
	int after = submit_file(w, &g, "tasks/softmax/seed.c");
	CHECK(g.n == 0 && worker_pending(w) == 4, "four jobs queued, none answered yet");
	wait_for(l, &g, 4);
	CHECK(g.n == 4, "every job answered (%d of 4)", g.n);
	CHECK(g.n == 4 && !strcmp(g.azStatus[seed], "correct") && g.timeMs[seed] > 0,
	      "the softmax seed is correct and timed (%s %s)",
	      g.azStatus[seed] ? g.azStatus[seed] : "-", g.azReason[seed] ? g.azReason[seed] : "");
	CHECK(g.n == 4 && !strcmp(g.azStatus[wrong], "incorrect"),
	      "a candidate writing zeros is incorrect (%s)",
	      g.azReason[wrong] ? g.azReason[wrong] : "-");
	CHECK(g.n == 4 && !strcmp(g.azStatus[crash], "crashed") &&
	          strstr(g.azReason[crash], "SIGSEGV"),
	      "a segfault is crashed, with the signal (%s)",
	      g.azReason[crash] ? g.azReason[crash] : "-");
	CHECK(g.n == 4 && !g.lost[crash] && !g.lost[seed] && !g.lost[wrong],
	      "a candidate's own crash is its verdict, not a lost worker (not run elsewhere)");
	/* the candidate crashed in its own runner process (issue 14), not in the worker */
	CHECK(g.n == 4 && !strcmp(g.azStatus[after], "correct") && worker_starts(w) == 1,
	      "the worker lives through the crash: the job after it runs on it (%d started)",
	      worker_starts(w));
	CHECK(worker_reference_timing(w) != NULL && worker_device(w) != NULL,
	      "the worker reported its device and the reference's timing");
	CHECK(g.n == 4 && g.azCode[seed] && strlen(g.azCode[seed]) == 64 &&
	          !strcmp(g.azCode[seed], g.azCode[after]) && !g.azNotTimed[after] &&
	          g.timeS[after] > 0,
	      "the same candidate again (the same name) is timed again, with the same code hash");
	/* issue 11: the same machine code under another name is not timed again */
	int same = submit_as(w, "same.c", "tasks/softmax/seed.c");
	wait_for(l, &g, 5);
	CHECK(g.n == 5 && !strcmp(g.azStatus[same], "correct") && g.azNotTimed[same] &&
	          !strcmp(g.azNotTimed[same], "same machine code as seed.c, not timed again") &&
	          g.timeS[same] == 0 && cJSON_Compare(g.timing[same], g.timing[seed], 1),
	      "another name, the same code: checked, not timed, with seed.c's timing (%s)",
	      g.azNotTimed[same] ? g.azNotTimed[same] : "timed");
	char *dev = xstrdup(worker_device(w));
	worker_free(w);

	/* what the engine says was timed reaches a worker that starts later, for
	 * its own device only */
	struct got g3 = {0};
	w = worker_new(l, &wc, on_done, NULL, &g3);
	cJSON *tm = cJSON_Parse("{\"median_ms\":123.5,\"p10_ms\":120,\"p90_ms\":130}");
	worker_code_measured(w, dev, g.azCode[seed], "cand1.c", tm);
	int told = submit_as(w, "cand2.c", "tasks/softmax/seed.c");
	wait_for(l, &g3, 1);
	CHECK(g3.n == 1 && g3.azNotTimed[told] &&
	          !strcmp(g3.azNotTimed[told], "same machine code as cand1.c, not timed again") &&
	          cJSON_Compare(g3.timing[told], tm, 1) && g3.timeS[told] == 0,
	      "a worker told before it started does not time that code (%s)",
	      g3.azNotTimed[told] ? g3.azNotTimed[told] : "timed");
	worker_free(w);
	struct got g4 = {0};
	w = worker_new(l, &wc, on_done, NULL, &g4);
	worker_code_measured(w, "another device", g.azCode[seed], "cand1.c", tm);
	int other = submit_as(w, "cand2.c", "tasks/softmax/seed.c");
	wait_for(l, &g4, 1);
	CHECK(g4.n == 1 && !g4.azNotTimed[other] && g4.timeS[other] > 0 &&
	          !cJSON_Compare(g4.timing[other], tm, 1),
	      "code timed on another device is timed here");
	worker_free(w);
	cJSON_Delete(tm);
	free(dev);
	got_free(&g3);
	got_free(&g4);

	/* a worker that cannot start answers later, from the loop */
	struct got g2 = {0};
	char *none[] = {"/nonexistent/kloop-worker", NULL};
	wc.argvLaunch = none;
	w = worker_new(l, &wc, on_done, NULL, &g2);
	g2.inSubmit = 1;
	int job = worker_submit(w, "seed.c", "int x;", 6);
	g2.inSubmit = 0;
	CHECK(g2.n == 0, "a worker that cannot start does not answer inside worker_submit()");
	wait_for(l, &g2, 1);
	CHECK(g2.n == 1 && !g2.doneInSubmit && job == 1 && !strcmp(g2.azStatus[job], "error") &&
	          strstr(g2.azReason[job], "cannot run /nonexistent/kloop-worker"),
	      "... it fails the job from the loop with why (%s)",
	      g2.azReason[job] ? g2.azReason[job] : "-");
	CHECK(g2.n == 1 && g2.lost[job],
	      "... as a lost worker (job control, which a pool reruns elsewhere), not the "
	      "candidate's verdict");
	g2.inSubmit = 1;
	int job2 = worker_submit(w, "again.c", "int x;", 6);
	g2.inSubmit = 0;
	wait_for(l, &g2, 2);
	CHECK(g2.n == 2 && !g2.doneInSubmit && !strcmp(g2.azStatus[job2], "error"),
	      "and so does the next submit, later too");
	worker_free(w);

	got_free(&g);
	got_free(&g2);
	loop_free(l);
	return check_done();
}
