/*
 * test_driver.c - the driver with a real kloop-worker on the host backend
 * and the softmax task: a new session adds and evaluates the seed; a
 * candidate added by hand is evaluated (and not twice at once); a batch
 * on a pool of two local workers is served by both; a
 * session reopened after an evaluation was cut short evaluates that one
 * again and nothing else; a one-shot driver in memory writes no journal; a
 * worker that cannot start answers from the loop; the notes carry ids
 * (finished candidates, proposed ideas through the command provider) and
 * driver_describe() makes the lines a front end prints.  With a scripted
 * worker: torch.compile's baseline compiled in the background (a search)
 * reaches the results that came before it through a compile_baseline
 * event, also when the journal is read again.
 */
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "unitenv.h"
#include "emit.h"
#include "driver.h"
#include "search.h"
#include "slurp.h"
#include "util.h"
#include "version.h"

struct notes {
	struct driver *drv;
	int inCall;   /* a driver call is on the stack */
	int syncDone; /* DRIVER_FINISHED came from inside one */
	int nFinished;
	int lastFinished;
	int nIdeas;
	int aIdea[8];
	char zLine[600]; /* driver_describe() of the last FINISHED or IDEAS note */
	char zLog[600];  /* the last DRIVER_LOG line */
	char zMsg[600];  /* the last DRIVER_MESSAGE line */
};

static void on_note(void *arg, const struct driver_note *n)
{
	struct notes *x = arg;
	if (n->kind == DRIVER_FINISHED) {
		x->nFinished++;
		x->lastFinished = n->cand;
		x->syncDone |= x->inCall;
	} else if (n->kind == DRIVER_LOG) {
		snprintf(x->zLog, sizeof x->zLog, "%s", n->zText ? n->zText : "");
		return;
	} else if (n->kind == DRIVER_MESSAGE) {
		snprintf(x->zMsg, sizeof x->zMsg, "%s", n->zText ? n->zText : "");
		return;
	} else if (n->kind == DRIVER_IDEAS) {
		for (int i = 0; i < n->nIdea && x->nIdeas < 8; i++)
			x->aIdea[x->nIdeas++] = n->aIdea[i];
	} else {
		return;
	}
	strbuf sb = STRBUF_INIT;
	if (x->drv)
		driver_describe(x->drv, n, &sb);
	snprintf(x->zLine, sizeof x->zLine, "%s", sb.buf ? sb.buf : "");
	sb_free(&sb);
}

static void run(struct loop *l, struct driver *drv)
{
	double t0 = now_s();
	while (driver_busy(drv) && now_s() - t0 < 600)
		loop_once(l, 0.5);
}

/* the journal zPath gets zLines appended (a session cut short), and is
 * reopened with x's notes cleared */
static struct driver *reopen_cut(struct loop *l, const struct config *cfg, const char *zPath,
                                 const char *zLines, struct notes *x, char *err)
{
	FILE *f = fopen(zPath, "a");
	fputs(zLines, f);
	fclose(f);
	struct driver_opts o = {.zSession = zPath};
	x->nFinished = 0;
	x->drv = driver_open(l, cfg, &o, on_note, x, err);
	return x->drv;
}

static const struct cand *cand(struct driver *drv, int id)
{
	return state_cand(driver_state(drv), id);
}

/* candidate id's result's number k (-1: none) */
static double res_num(struct driver *drv, int id, const char *k)
{
	const struct cand *c = state_cand(driver_state(drv), id);
	const cJSON *v = c ? cJSON_GetObjectItem(c->result, k) : NULL;
	return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

/* torch.compile's baseline compiled in the background: a scripted worker
 * (tests/fixtures/baselines_worker.py) is ready with it pending and sends
 * it after its second result */
static void test_background_baseline(struct loop *l, struct config *cfg, struct notes *x)
{
	char err[KL_ERRLEN];
	char *wk = xasprintf("python3 tests/fixtures/baselines_worker.py %s", KLOOP_VERSION);
	config_set(cfg, "worker", wk, err);
	free(wk);
	struct driver_opts o = {.zTask = "softmax", .bNoSeeds = 1, .bDeferCompile = 1};
	struct driver *drv = driver_open(l, cfg, &o, on_note, x, err);
	x->drv = drv;
	CHECK(drv != NULL, "a driver with the scripted worker (%s)", drv ? "" : err);
	if (!drv)
		return;
	for (int i = 1; i <= 3; i++) {
		int id = driver_add(drv, "human", NULL, 0, "c.c", "int x;", NULL, err);
		CHECK(id == i && driver_bench(drv, id, err) == 0, "candidate %d is queued", i);
	}
	run(l, drv);
	char *zPath = xstrdup(driver_path(drv));
	int ok = 1;
	for (int i = 1; i <= 3; i++)
		ok &= res_num(drv, i, "baseline_compile_ms") == 0.5 &&
		      res_num(drv, i, "speedup_compile") == 0.5 && res_num(drv, i, "speedup") == 2;
	CHECK(ok,
	      "all three results carry torch.compile's 0.5 ms and their 0.5x against it, "
	      "the two before it came as well (#1: %g)",
	      res_num(drv, 1, "speedup_compile"));
	CHECK(strstr(x->zLog, "torch.compile's baseline on Fake GPU: 0.5 ms (compiled in the "
	                      "background in 9.0 s, 3 benchmarks given the GPU") != NULL,
	      "a line says it came: %s", x->zLog);
	driver_close(drv);
	char *z = slurp(zPath, NULL);
	int nEv = 0, firstBare = 0;
	for (char *p = z; (p = strstr(p, "\"type\":\"compile_baseline\"")); p++)
		nEv++;
	char *e1 = strstr(z, "\"type\":\"eval_finished\",\"candidate\":1");
	char *nl = e1 ? strchr(e1, '\n') : NULL;
	if (nl) {
		*nl = 0;
		firstBare = !strstr(e1, "baseline_compile_ms");
		*nl = '\n';
	}
	CHECK(nEv == 1 && firstBare && strstr(z, "\"device\":\"Fake GPU\",\"compile\":{"),
	      "the journal has one compile_baseline event for Fake GPU, and #1's own verdict "
	      "came without it (%d events)",
	      nEv);
	free(z);
	struct session *s = session_open(zPath, 0, err);
	const cJSON *r1 = s ? state_cand(&s->st, 1)->result : NULL;
	const cJSON *sc = cJSON_GetObjectItem(r1, "speedup_compile");
	CHECK(cJSON_IsNumber(sc) && sc->valuedouble == 0.5,
	      "the journal read again gives #1 its speedup against torch.compile");
	session_close(s);
	unlink(zPath);
	free(zPath);

	/* not deferred (not a search): the worker is not asked, and no event */
	o = (struct driver_opts){.zTask = "softmax", .bNoSeeds = 1};
	x->zLog[0] = 0;
	drv = driver_open(l, cfg, &o, on_note, x, err);
	x->drv = drv;
	int id = drv ? driver_add(drv, "human", NULL, 0, "c.c", "int x;", NULL, err) : -1;
	if (drv && driver_bench(drv, id, err) == 0)
		run(l, drv);
	CHECK(drv && res_num(drv, id, "speedup_compile") == 0.5 && !x->zLog[0],
	      "without it the baselines are whole at once and no line is said");
	driver_close(drv);
}

static void put_file(const char *zPath, const char *z)
{
	FILE *f = fopen(zPath, "w");
	if (f) {
		fputs(z, f);
		fclose(f);
	}
}

/* one baseline a session (issue 39): a scripted worker whose reference
 * time is what a file says when it starts, so nothing depends on a clock */
static void test_one_baseline(struct loop *l, struct config *cfg, struct notes *x, const char *zDir)
{
	char err[KL_ERRLEN];
	char *eager = xasprintf("%s/eager_ms", zDir);
	char *zPath = xasprintf("%s/one_baseline.jsonl", zDir);
	char *wk =
	    xasprintf("python3 tests/fixtures/baselines_worker.py %s %s", KLOOP_VERSION, eager);
	config_set(cfg, "worker", wk, err);
	free(wk);
	put_file(eager, "2.0");
	struct driver_opts o = {.zTask = "softmax", .zSession = zPath, .bNoSeeds = 1};
	struct driver *drv = driver_open(l, cfg, &o, on_note, x, err);
	x->drv = drv;
	int id = drv ? driver_add(drv, "human", NULL, 0, "a.c", "int a;", NULL, err) : -1;
	if (drv && driver_bench(drv, id, err) == 0)
		run(l, drv);
	CHECK(drv && res_num(drv, 1, "speedup") == 2 && res_num(drv, 1, "baseline_ms") == 2,
	      "the session begins with the reference's 2 ms: #1 (1 ms) is 2x");
	driver_close(drv);
	/* reopened: this run's workers time the reference at 4 ms */
	put_file(eager, "4.0");
	o = (struct driver_opts){.zSession = zPath};
	drv = driver_open(l, cfg, &o, on_note, x, err);
	x->drv = drv;
	id = drv ? driver_add(drv, "human", NULL, 0, "b.c", "int b;", NULL, err) : -1;
	if (drv && driver_bench(drv, id, err) == 0)
		run(l, drv);
	CHECK(drv && res_num(drv, 2, "speedup") == 2 && res_num(drv, 2, "baseline_ms") == 2 &&
	          res_num(drv, 2, "baseline_measured_ms") == 4 && res_num(drv, 1, "speedup") == 2,
	      "reopened, the workers timed the reference at 4 ms: #2 (1 ms) is still 2x, against "
	      "the session's 2 ms, with the 4 ms beside it (%g)",
	      drv ? res_num(drv, 2, "speedup") : -1);
	char bt[600];
	strbuf sb = STRBUF_INIT;
	if (drv)
		driver_baseline_text(drv, &sb);
	CHECK(sb.buf && strstr(sb.buf, "baseline 2 ms on Fake GPU, timed when the session began") &&
	          strstr(sb.buf, "this run's workers timed the reference at 4 ms (2x)"),
	      "`baseline` says the session's and this run's: %s", sb.buf ? sb.buf : "");
	sb_reset(&sb);
	/* a re-measure: journaled, every speedup against it */
	x->zMsg[0] = 0;
	int rid = drv ? driver_remeasure(drv, err) : -1;
	if (rid > 0)
		run(l, drv);
	snprintf(bt, sizeof bt, "%s", x->zMsg);
	CHECK(rid == 1 && res_num(drv, 1, "speedup") == 4 && res_num(drv, 2, "speedup") == 4 &&
	          state_baseline(driver_state(drv), "Fake GPU") == 4,
	      "re-measured (evaluating the best, #%d): 4 ms, every speedup 4x now", rid);
	CHECK(strstr(bt, "baseline re-measured on Fake GPU: 4 ms (it was 2 ms): every speedup in "
	                 "the session is against it now, each 2 times what it was"),
	      "and it says so: %s", bt);
	if (drv)
		driver_baseline_text(drv, &sb);
	CHECK(sb.buf && strstr(sb.buf, "baseline 4 ms on Fake GPU, re-measured"),
	      "`baseline` says it was re-measured: %s", sb.buf ? sb.buf : "");
	sb_free(&sb);
	driver_close(drv);
	/* the journal holds it: read again, the same numbers */
	char *z = slurp(zPath, NULL);
	CHECK(strstr(z, "\"type\":\"baseline\",\"device\":\"Fake GPU\",\"median_ms\":4,"
	                "\"previous_ms\":2") != NULL,
	      "the journal has the re-measure as a baseline event");
	free(z);
	struct session *s = session_open(zPath, 0, err);
	CHECK(s && state_cand(&s->st, 1)->speedup == 4 && state_cand(&s->st, 2)->speedup == 4,
	      "read again, every speedup is against the re-measured baseline");
	session_close(s);
	unlink(zPath);
	unlink(eager);
	free(zPath);
	free(eager);
}

/* a search that starts on a session whose precision policy `kloop eval
 * --precision` journaled (search_set before any search) begins from it;
 * one given another policy takes that */
static void test_search_policy(struct loop *l, struct config *cfg, struct notes *x)
{
	static const char *const given[] = {NULL, "faithful"};
	for (int k = 0; k < 2; k++) {
		char err[KL_ERRLEN] = "";
		struct driver_opts o = {.zTask = "softmax", .bMemory = 1, .bNoSeeds = 1};
		struct driver *drv = driver_open(l, cfg, &o, on_note, x, err);
		x->drv = drv;
		CHECK(drv != NULL, "a driver in memory (%s)", drv ? "ok" : err);
		if (!drv)
			return;
		cJSON *any = cJSON_CreateString("any");
		int rc = ev_search_set(driver_session(drv), "precision", any, -1, err);
		cJSON_Delete(any);
		CHECK(rc == 0 && state_precision_any(driver_state(drv)),
		      "kloop eval's policy journaled before a search: any (%s)", rc ? err : "ok");
		cJSON *set = cJSON_CreateObject();
		if (given[k])
			cJSON_AddStringToObject(set, "precision", given[k]);
		struct search *s = search_new(drv, NULL, NULL);
		rc = search_start(s, set, err);
		const struct state *st = driver_state(drv);
		const char *z =
		    cJSON_GetStringValue(cJSON_GetObjectItem(st->search.settings, "precision"));
		const char *want = given[k] ? given[k] : "any";
		CHECK(rc == 0 && st->search.started && z && !strcmp(z, want) &&
		          state_precision_any(st) == !strcmp(want, "any"),
		      "a search started %s: its settings say precision %s (got %s; %s)",
		      given[k] ? "with --precision faithful" : "with no --precision", want,
		      z ? z : "none", rc ? err : "started");
		search_free(s);
		cJSON_Delete(set);
		driver_close(drv);
		x->drv = NULL;
	}
}

int main(void)
{
	char dir[] = "/tmp/kloop-test-driver.XXXXXX";
	char err[KL_ERRLEN];
	CHECK(unit_env(dir) == 0, "a directory");
	char *cwd = getcwd(NULL, 0);
	char *path = xasprintf("%s/bin:%s", cwd, getenv("PATH")); /* kloop-worker */
	setenv("PATH", path, 1);
	free(path);
	free(cwd);
	struct config cfg;
	CHECK(config_load(&cfg, err) == 0, "the default configuration");
	config_set(&cfg, "backend", "host", err);
	config_set(&cfg, "worker", "bin/kloop-worker --backend host --jobs 2", err);
	config_set(&cfg, "budget", "0.05", err);
	config_set(&cfg, "trials", "1", err);
	config_set(&cfg, "provider", "command", err);
	config_set(&cfg, "command", "cat tests/fake_llm/replies/ideas.txt", err);
	struct loop *l = loop_new();
	struct notes x = {0};

	/* a new session */
	struct driver_opts o = {.zTask = "softmax"};
	x.inCall = 1;
	struct driver *drv = driver_open(l, &cfg, &o, on_note, &x, err);
	x.inCall = 0;
	x.drv = drv;
	CHECK(drv != NULL, "a driver on a new session of softmax (%s)", drv ? "" : err);
	if (!drv)
		return check_done();
	CHECK(driver_state(drv)->nCand == 1 && driver_jobs(drv) == 1 && driver_job_of(drv, 1) &&
	          x.nFinished == 0,
	      "the seed is added and queued, not yet answered");
	char *zPath = xstrdup(driver_path(drv));
	char *pattern = xasprintf("%s/kloop/sessions/softmax-*.jsonl", dir);
	glob_t gl;
	CHECK(glob(pattern, 0, NULL, &gl) == 0 && gl.gl_pathc == 1,
	      "the journal is made under $XDG_STATE_HOME/kloop/sessions (%s)", zPath);
	globfree(&gl);
	free(pattern);
	run(l, drv);
	CHECK(x.nFinished == 1 && x.lastFinished == 1 && cand(drv, 1)->status == STATUS_CORRECT &&
	          !strncmp(x.zLine, "candidate 1 (seed.c): correct, ", 31),
	      "the seed's note carries its id, and the line reads the state: %s", x.zLine);

	/* a candidate by hand */
	strbuf zeros = STRBUF_INIT;
	read_file("tests/fixtures/host/zeros.c", &zeros, 1 << 20, err);
	int par = 1;
	int id = driver_add(drv, "human", &par, 1, NULL, zeros.buf, NULL, err);
	CHECK(id == 2 && !strcmp(cand(drv, 2)->zName, "cand2.c") && cand(drv, 2)->aParent[0] == 1,
	      "a candidate added by hand, named after its parent's language");
	x.inCall = 1;
	int rc = driver_bench(drv, id, err);
	x.inCall = 0;
	CHECK(rc == 0 && driver_bench(drv, id, err) < 0 && strstr(err, "being evaluated already"),
	      "a candidate is not evaluated twice at once (%s)", err);
	CHECK(driver_bench(drv, 99, err) < 0 && strstr(err, "no candidate 99"),
	      "there is no candidate 99 (%s)", err);
	run(l, drv);
	CHECK(cand(drv, 2)->status == STATUS_INCORRECT && !x.syncDone,
	      "its verdict came later, from the loop: %s", cand(drv, 2)->zStatus);

	/* a batch on a pool of two local CPU workers (kloop-worker from PATH) */
	driver_close(drv);
	x.drv = NULL;
	config_set(&cfg, "workers", "local:2", err);
	o = (struct driver_opts){.zSession = zPath};
	drv = driver_open(l, &cfg, &o, on_note, &x, err);
	x.drv = drv;
	CHECK(drv && driver_jobs(drv) == 0, "the session reopens with nothing to evaluate again");
	if (!drv)
		return check_done();
	strbuf seed = STRBUF_INIT;
	read_file("tasks/softmax/seed.c", &seed, 1 << 20, err);
	int first = 0, nMore = 6;
	x.nFinished = 0;
	for (int i = 0; i < nMore; i++) {
		char *z = xasprintf("%s/* variant %d */\n", seed.buf, i);
		int k = driver_add(drv, "human", NULL, 0, NULL, z, NULL, err);
		first = first ? first : k;
		driver_bench(drv, k, err);
		free(z);
	}
	CHECK(driver_jobs(drv) == nMore && x.nFinished == 0, "%d jobs queued, none answered yet",
	      nMore);
	run(l, drv);
	int allOk = 1, on0 = 0, on1 = 0;
	for (int i = 0; i < nMore; i++) {
		const struct cand *c = cand(drv, first + i);
		const char *w = cJSON_GetStringValue(
		    cJSON_GetObjectItem(cJSON_GetObjectItem(c->result, "worker"), "label"));
		allOk &= c->status == STATUS_CORRECT && c->speedup > 0;
		on0 += w && !strcmp(w, "local:0");
		on1 += w && !strcmp(w, "local:1");
	}
	CHECK(allOk && driver_jobs(drv) == 0 && on0 + on1 == nMore && on0 && on1,
	      "every job is correct with its speedup; both workers served the batch (%d, %d)", on0,
	      on1);

	/* pinned to one worker (bench ID --on W), and a worker it does not have */
	CHECK(driver_bench_on(drv, first, 5, err) < 0 && strstr(err, "no worker 5") &&
	          !driver_job_of(drv, first),
	      "no worker 5 in a pool of two, nothing journaled (%s)", err);
	CHECK(driver_bench_on(drv, first, 1, err) == 0, "bench on worker 1 (%s)", err);
	run(l, drv);
	const char *wl = cJSON_GetStringValue(
	    cJSON_GetObjectItem(cJSON_GetObjectItem(cand(drv, first)->result, "worker"), "label"));
	CHECK(wl && !strcmp(wl, "local:1") && cand(drv, first)->status == STATUS_CORRECT,
	      "the pinned evaluation ran on local:1 (%s)", wl ? wl : "no label");

	/* cancelled: the status is a real one, journaled, and the pool goes on */
	CHECK(driver_cancel_eval(drv, first, err) < 0 && strstr(err, "not being evaluated"),
	      "cancelling what is not evaluated is an error (%s)", err);
	x.nFinished = 0;
	driver_bench(drv, first, err);
	CHECK(driver_cancel_eval(drv, first, err) == 0, "cancel its evaluation (%s)", err);
	CHECK(cand(drv, first)->status == STATUS_CANCELLED && driver_jobs(drv) == 0 &&
	          x.nFinished == 1 && strstr(x.zLine, ": cancelled"),
	      "the candidate is cancelled, its note says so: %s", x.zLine);
	driver_bench(drv, first + 1, err);
	run(l, drv);
	CHECK(cand(drv, first + 1)->status == STATUS_CORRECT,
	      "the pool evaluates again after a cancel: %s", cand(drv, first + 1)->zStatus);
	config_set(&cfg, "workers", "", err);

	/* ideas through the command provider: the note carries the ideas' ids */
	x.nIdeas = 0;
	struct pipeline *p = driver_llm(drv, err);
	rc = p ? pipeline_ideas(p, 1, 2, 0, err) : -1;
	CHECK(rc == 0, "ask for two ideas (%s)", rc ? err : "the command provider");
	run(l, drv);
	CHECK(x.nIdeas == 2 && state_idea(driver_state(drv), x.aIdea[0]) &&
	          !strcmp(state_idea(driver_state(drv), x.aIdea[0])->zTitle,
	                  "One pass for the max and the sum") &&
	          !strncmp(x.zLine, "2 ideas from the LLM", 20),
	      "the ideas note carries their ids; the line: %.40s", x.zLine);
	driver_close(drv);
	x.drv = NULL;

	/* cut short: candidate 2's evaluation started and never finished */
	char *before = slurp(zPath, NULL);
	drv = reopen_cut(l, &cfg, zPath,
	                 "{\"type\":\"eval_started\",\"candidate\":2,\"backend\":\"host\",\"ts\":1,"
	                 "\"seq\":999}\n",
	                 &x, err);
	CHECK(drv && !strcmp(driver_task_name(drv), "softmax") && driver_jobs(drv) == 1 &&
	          driver_job_of(drv, 2) && cand(drv, 2)->status == STATUS_EVALUATING,
	      "reopened, the session evaluates again only what was cut short");
	if (drv)
		run(l, drv);
	CHECK(drv && x.nFinished == 1 && x.lastFinished == 2 &&
	          cand(drv, 2)->status == STATUS_INCORRECT &&
	          cand(drv, 1)->status == STATUS_CORRECT,
	      "... and it is finished again; the finished ones kept their verdicts");
	char *after = slurp(zPath, NULL);
	CHECK(!strncmp(after, before, strlen(before)) &&
	          strstr(after + strlen(before), "\"eval_finished\""),
	      "the journal only grew");
	free(before);
	free(after);
	driver_close(drv);

	/* cut short twice more (issue 14's poison pill): candidate 1 (correct)
	 * was running both times, evaluated again; candidate 2 only waited in
	 * the queue behind it.  A candidate that waited did nothing to the
	 * session: run again; one that ran keeps its earlier verdict */
	const char *cut = "{\"type\":\"eval_started\",\"candidate\":1,\"backend\":\"host\"}\n"
	                  "{\"type\":\"eval_started\",\"candidate\":2,\"backend\":\"host\"}\n"
	                  "{\"type\":\"eval_running\",\"candidate\":1}\n";
	char *twice = xasprintf("%s%s", cut, cut);
	drv = reopen_cut(l, &cfg, zPath, twice, &x, err);
	free(twice);
	CHECK(drv && cand(drv, 1)->status == STATUS_CORRECT && !driver_job_of(drv, 1) &&
	          cJSON_GetObjectItem(cand(drv, 1)->result, "rerun_abandoned"),
	      "reopened: #1, running when the session ended twice, is not run again and keeps "
	      "'correct' (%s)",
	      drv ? status_name(cand(drv, 1)->status) : "-");
	CHECK(drv && driver_job_of(drv, 2) && cand(drv, 2)->status == STATUS_EVALUATING &&
	          !cJSON_GetObjectItem(cand(drv, 2)->result, "abandoned"),
	      "... #2, which only waited behind it, is evaluated again, not abandoned");
	if (drv)
		run(l, drv);
	CHECK(drv && cand(drv, 2)->status == STATUS_INCORRECT, "... to its own verdict (%s)",
	      drv ? status_name(cand(drv, 2)->status) : "-");
	driver_close(drv);

	/* an A/B cut short (issue 24): run again once, as the A/B it was, not
	 * as a plain evaluation to be timed against the incumbent again */
	x.drv = NULL;
	o = (struct driver_opts){.zTask = "softmax", .bNoSeeds = 1};
	drv = driver_open(l, &cfg, &o, on_note, &x, err);
	x.drv = drv;
	int a1 = drv ? driver_add(drv, "human", NULL, 0, "a.c", seed.buf, NULL, err) : -1;
	/* other machine code than a.c's, so that it is timed (issue 11) */
	char *seedB = xasprintf("%s\nint kloop_variant_b = 2;\n", seed.buf);
	int a2 = drv ? driver_add(drv, "human", NULL, 0, "b.c", seedB, NULL, err) : -1;
	free(seedB);
	if (drv && driver_bench(drv, a1, err) == 0 && driver_bench(drv, a2, err) == 0)
		run(l, drv);
	char *abPath = drv ? xstrdup(driver_path(drv)) : xstrdup("");
	driver_close(drv);
	char *line = xasprintf("{\"type\":\"eval_started\",\"candidate\":%d,\"backend\":\"host\","
	                       "\"ab_with\":%d}\n",
	                       a2, a1);
	char *before2 = slurp(abPath, NULL);
	drv = reopen_cut(l, &cfg, abPath, line, &x, err);
	free(line);
	CHECK(drv && driver_job_of(drv, a2) && cand(drv, a2)->abWith == a1,
	      "reopened: the A/B of #%d against #%d cut short is under way again", a2, a1);
	if (drv)
		run(l, drv);
	const cJSON *abr = drv ? cJSON_GetObjectItem(cand(drv, a2)->result, "ab") : NULL;
	char *after2 = slurp(abPath, NULL);
	const char *tail = after2 + strlen(before2);
	int nStarted = 0;
	for (const char *q = tail; (q = strstr(q, "\"eval_started\"")); q++)
		nStarted++;
	CHECK(drv && cand(drv, a2)->status == STATUS_CORRECT && cJSON_IsObject(abr) &&
	          cJSON_GetObjectItem(abr, "pairs") && nStarted == 2 && strstr(tail, "\"ab_with\""),
	      "... as that A/B, once: its result has the A/B (%s); evaluations started: the "
	      "one cut short and %d more",
	      abr ? "yes" : "no", nStarted - 1);
	free(before2);
	free(after2);
	free(abPath);
	driver_close(drv);

	/* one shot, in memory */
	x.drv = NULL;
	o = (struct driver_opts){.zTask = "softmax", .bMemory = 1, .bNoSeeds = 1};
	drv = driver_open(l, &cfg, &o, on_note, &x, err);
	CHECK(drv && !driver_session(drv)->j && !strcmp(driver_path(drv), "(no journal)") &&
	          driver_state(drv)->nCand == 0 && !strcmp(driver_state(drv)->zTask, "softmax"),
	      "a one-shot driver keeps its session in memory, without seeds");
	driver_close(drv);

	test_background_baseline(l, &cfg, &x);
	test_one_baseline(l, &cfg, &x, dir);
	test_search_policy(l, &cfg, &x);

	/* a worker that cannot start */
	config_set(&cfg, "worker", "/nonexistent/kloop-worker", err);
	o = (struct driver_opts){.zTask = "softmax", .bMemory = 1, .bNoSeeds = 1};
	drv = driver_open(l, &cfg, &o, on_note, &x, err);
	x.drv = drv;
	id = drv ? driver_add(drv, "human", NULL, 0, "seed.c", seed.buf, NULL, err) : -1;
	x.nFinished = 0;
	x.inCall = 1;
	rc = drv ? driver_bench(drv, id, err) : -1;
	x.inCall = 0;
	CHECK(rc == 0 && x.nFinished == 0,
	      "a worker that cannot start: driver_bench() returns first");
	if (drv)
		run(l, drv);
	CHECK(drv && x.nFinished == 1 && !x.syncDone && cand(drv, id)->status == STATUS_ERROR &&
	          strstr(cand(drv, id)->zReason, "cannot run /nonexistent/kloop-worker"),
	      "... then the job fails from the loop, saying why: %.100s",
	      drv ? cand(drv, id)->zReason : "-");
	driver_close(drv);

	sb_free(&zeros);
	sb_free(&seed);
	free(zPath);
	loop_free(l);
	config_free(&cfg);
	CHECK(unit_env_remove(dir) == 0, "remove the directory");
	return check_done();
}
