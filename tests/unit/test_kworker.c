/*
 * test_kworker.c - kloop-worker's task load with a PyTorch reference, as
 * the engine sees it through the protocol, with a stand-in for the PyTorch
 * helper (KLOOP_TORCHREF: a Python script of the standard library that
 * describes a problem y = 2x, fills its sets and draws a run's inputs): while the helper has not
 * described the problem yet, a second task request is refused and the
 * worker goes on (a candidate sent meanwhile compiles, and is evaluated
 * once the task is ready); a helper that sends nothing while computing a
 * set is stopped at the run timeout, and the task error says so; a helper
 * that cannot describe the problem is a task error with its own message;
 * a quit read while the task loads ends the worker and its helper.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "proc.h"
#include "protocol.h"
#include "slurp.h"
#include "util.h"

/* the stand-in helper: FAKE_GATE names a file it waits for before it
 * describes the problem, FAKE_PIDFILE where it writes its pid, FAKE_MODE
 * "hang" (no set is ever made) or "describe_error" */
static const char zHelper[] =
    "import json, os, struct, sys, time\n"
    "if '--check' in sys.argv:\n"
    "    print(json.dumps({'torch': '0-stand-in', 'cuda': False}))\n"
    "    sys.exit(0)\n"
    "mode = os.environ.get('FAKE_MODE', '')\n"
    "open(os.environ['FAKE_PIDFILE'], 'w').write(str(os.getpid()))\n"
    "gate = os.environ.get('FAKE_GATE', '')\n"
    "while gate and not os.path.exists(gate):\n"
    "    time.sleep(0.01)\n"
    "def send(o):\n"
    "    sys.stdout.write(json.dumps(o) + '\\n')\n"
    "    sys.stdout.flush()\n"
    "if mode == 'describe_error':\n"
    "    send({'ev': 'error', 'message': 'the stand-in cannot describe it'})\n"
    "    sys.exit(1)\n"
    "N = 4\n"
    "send({'ev': 'describe', 'torch': '0-stand-in', 'device': 'cpu', 'sizes': {},\n"
    "      'inputs': [{'name': 'x', 'dtype': 'f32', 'shape': [N], 'kind': 'input'}],\n"
    "      'outputs': [{'name': 'y', 'dtype': 'f32', 'shape': [N]}],\n"
    "      'seconds': {'import_torch': 0.0}})\n"
    "while True:\n"
    "    line = sys.stdin.readline()\n"
    "    if not line:\n"
    "        sys.exit(0)\n"
    "    q = json.loads(line)\n"
    "    if q['op'] in ('fill', 'fill64'):\n"
    "        if mode == 'hang':\n"
    "            time.sleep(3600)\n"
    "        x = [float(int(q['seed']) % 100 + i) for i in range(N)]\n"
    "        fmt = '<%dd' % N if q['op'] == 'fill64' else '<%df' % N\n"
    "        if q['op'] == 'fill':\n"
    "            t = q['inputs'][0]\n"
    "            os.pwrite(t['memfd'], struct.pack(fmt, *x), t['offset'])\n"
    "        t = q['outputs'][0]\n"
    "        os.pwrite(t['memfd'], struct.pack(fmt, *[2 * v for v in x]), t['offset'])\n"
    "        send({'ev': 'filled', 'set': q['set'], 'varied': 0, 'unsound': 0})\n"
    "    elif q['op'] == 'draw':\n"
    "        x = [float(int(q['seed']) % 100 + i) for i in range(N)]\n"
    "        t = q['inputs'][0]\n"
    "        os.pwrite(t['memfd'], struct.pack('<%df' % N, *x), t['offset'])\n"
    "        a = {'ev': 'drawn', 'seconds': 0.0005}\n"
    "        if q.get('parts'):\n"
    "            a['parts'] = {'seed': 0.0002, 'put': 0.0003}\n"
    "        send(a)\n"
    "    elif q['op'] == 'check':\n"
    "        send({'ev': 'checked'})\n"
    "    elif q['op'] == 'quit':\n"
    "        send({'ev': 'bye'})\n"
    "        sys.exit(0)\n";

/* the candidate: y = 2x */
static const char zDouble[] = "#include \"kloop.h\"\n"
                              "int kl_run(const kl_tensor *in, int n_in, kl_tensor *out, "
                              "int n_out, void *stream)\n"
                              "{\n"
                              "\t(void)n_in, (void)n_out, (void)stream;\n"
                              "\tconst float *x = in[0].data;\n"
                              "\tfloat *y = out[0].data;\n"
                              "\tfor (int64_t i = 0; i < kl_numel(&in[0]); i++)\n"
                              "\t\ty[i] = 2 * x[i];\n"
                              "\treturn 0;\n"
                              "}\n";

/* a kloop-worker and its protocol */
struct wk {
	pid_t pid;
	int to, from;   /* its stdin, its stdout */
	strbuf in;      /* what it sent, not yet a line */
	char *zProblem; /* the problem file */
};

static char *gDir; /* the test's directory */

static void wk_start(struct wk *w, const char *zMode, int gated)
{
	char *gate = path_join(gDir, "gate"), *pidf = path_join(gDir, "helper.pid");
	unlink(gate);
	unlink(pidf);
	setenv("FAKE_MODE", zMode, 1);
	setenv("FAKE_GATE", gated ? gate : "", 1);
	setenv("FAKE_PIDFILE", pidf, 1);
	free(gate);
	free(pidf);
	char *cache = path_join(gDir, "cache");
	char *argv[] = {"bin/kloop-worker", "--backend", "host", "--jobs", "1",
	                "--no-sandbox",     "--cache",   cache,  NULL};
	int p[2];
	char err[KL_ERRLEN] = "";
	memset(w, 0, sizeof *w);
	if (pipe(p) < 0)
		abort();
	struct proc_spec ps = {.argv = argv, .stdinFd = p[0], .stdoutFd = -1, .stderrFd = 2};
	w->pid = proc_spawn(&ps, &w->from, NULL, err);
	close(p[0]);
	w->to = p[1];
	w->zProblem = path_join(gDir, "double.py");
	free(cache);
	CHECK(w->pid > 0, "kloop-worker starts (%s)", err);
}

static void wk_send(struct wk *w, cJSON *o)
{
	char *z = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	char *line = xasprintf("%s\n", z);
	write_all(w->to, line, strlen(line));
	free(line);
	free(z);
}

/* the worker's next line (NULL: none within two minutes, or it ended) */
static cJSON *wk_line(struct wk *w)
{
	double end = now_s() + 120;
	for (;;) {
		char *nl = w->in.buf ? memchr(w->in.buf, '\n', w->in.len) : NULL;
		if (nl) {
			char *z = xstrndup(w->in.buf, (size_t)(nl - w->in.buf));
			sb_consume(&w->in, (size_t)(nl - w->in.buf) + 1);
			cJSON *o = cJSON_Parse(z);
			free(z);
			return o;
		}
		struct pollfd pf = {.fd = w->from, .events = POLLIN};
		double left = end - now_s();
		if (left <= 0 || poll(&pf, 1, (int)(left * 1000) + 1) == 0)
			return NULL;
		char buf[4096];
		ssize_t n = read(w->from, buf, sizeof buf);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n <= 0)
			return NULL;
		sb_add(&w->in, buf, (size_t)n);
	}
}

/* the next line whose "ev" is zEv (and whose progress stage is zStage,
 * unless NULL), the lines before it passed over; NULL: none came */
static cJSON *wk_until(struct wk *w, const char *zEv, const char *zStage)
{
	cJSON *o;
	while ((o = wk_line(w))) {
		const char *ev = cJSON_GetStringValue(cJSON_GetObjectItem(o, "ev"));
		const char *st = cJSON_GetStringValue(cJSON_GetObjectItem(o, "stage"));
		if (ev && !strcmp(ev, zEv) && (!zStage || (st && !strcmp(st, zStage))))
			return o;
		cJSON_Delete(o);
	}
	return NULL;
}

/* the worker's exit status (-1: it did not end within a minute) */
static int wk_end(struct wk *w)
{
	int st = -1;
	double end = now_s() + 60;
	while (waitpid(w->pid, &st, WNOHANG) == 0) {
		if (now_s() > end) {
			kill(w->pid, SIGKILL);
			waitpid(w->pid, NULL, 0);
			st = -1;
			break;
		}
		usleep(10000);
	}
	close(w->to);
	close(w->from);
	sb_free(&w->in);
	free(w->zProblem);
	return st;
}

static cJSON *task_request(const struct wk *w, double runTimeoutS)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "op", "task");
	cJSON_AddStringToObject(o, "dir", w->zProblem);
	cJSON_AddNumberToObject(o, "trials", 2);
	cJSON_AddNumberToObject(o, "budget_s", 0.05);
	cJSON_AddNumberToObject(o, "seed", 1);
	cJSON_AddNumberToObject(o, "run_timeout_s", runTimeoutS);
	return o;
}

/* the error line's message (fatal in *pFatal), or "" */
static const char *error_of(const cJSON *o, int *pFatal)
{
	*pFatal = cJSON_IsTrue(cJSON_GetObjectItem(o, "fatal"));
	const char *m = cJSON_GetStringValue(cJSON_GetObjectItem(o, "message"));
	return m ? m : "";
}

/* whether the helper whose pid the stand-in wrote is gone */
static int helper_gone(void)
{
	char *pidf = path_join(gDir, "helper.pid");
	char *z = slurp(pidf, NULL);
	int pid = atoi(z);
	free(z);
	free(pidf);
	/* dead, its group too (the helper leads one): a SIGKILL takes effect a
	 * moment after it is sent, and a zombie not yet reaped runs nothing
	 * (a fresh clone's suite on the 2-core VM once saw it still there) */
	return pid > 0 && proc_group_gone(pid, 10);
}

/* the count of the trace's spans named zWhat, each zMs milliseconds long
 * (-1 where one is not) */
static int trace_spans(const char *zTrace, const char *zWhat, const char *zMs)
{
	char *log = slurp(zTrace, NULL);
	int n = 0;
	char *want = xasprintf("\"what\":\"%s\",\"ms\":", zWhat);
	for (char *p = log; p && (p = strstr(p, want)); p += strlen(want), n++)
		if (zMs && strncmp(p + strlen(want), zMs, strlen(zMs)))
			n = -1000000;
	free(want);
	free(log);
	return n < 0 ? -1 : n;
}

/* each of the helper's draws traced as the helper timed it: its own 0.5
 * ms, its parts (seed 0.2 ms, put 0.3) and the request's way there and
 * back, once a draw */
static void check_draw_trace(const char *zTrace)
{
	int nOwn = trace_spans(zTrace, "a run's preparation: the draw: the helper's own", "0.500}"),
	    nSeed =
	        trace_spans(zTrace, "a run's preparation: the draw: the helper's seed", "0.200}"),
	    nPut = trace_spans(zTrace, "a run's preparation: the draw: the helper's put", "0.300}"),
	    nWay = trace_spans(zTrace, "a run's preparation: the draw: the request there and back",
	                       NULL);
	CHECK(nOwn >= 1 && nSeed == nOwn && nPut == nOwn && nWay == nOwn,
	      "the step trace splits each of the helper's draws as the helper timed it: its own "
	      "0.5 ms (%d), its seed 0.2 (%d) and put 0.3 (%d), the request's way (%d)",
	      nOwn, nSeed, nPut, nWay);
}

static void test_requests_while_loading(void)
{
	struct wk w;
	int fatal;
	/* the worker's step trace (KLOOP_STEP_TRACE), which splits each draw
	 * into the helper's own part, and its parts, and the request's way */
	char *trace = path_join(gDir, "steps.jsonl");
	unlink(trace);
	setenv("KLOOP_STEP_TRACE", trace, 1);
	wk_start(&w, "", 1);
	unsetenv("KLOOP_STEP_TRACE");
	cJSON_Delete(wk_until(&w, "hello", NULL));
	wk_send(&w, task_request(&w, 60));
	/* the helper waits at its gate: the task is still loading */
	wk_send(&w, task_request(&w, 60));
	cJSON *e = wk_until(&w, "error", NULL);
	const char *m = error_of(e, &fatal);
	CHECK(!strcmp(m, "a task is already loaded in this worker") && !fatal,
	      "a task request read while a task loads is refused, not fatally (got '%s')", m);
	cJSON_Delete(e);
	struct eval_request rq;
	eval_request_defaults(&rq);
	rq.job = 1;
	rq.zName = "double.c";
	rq.zSource = zDouble;
	rq.nSource = strlen(zDouble);
	wk_send(&w, protocol_eval(&rq));
	cJSON *c = wk_until(&w, "progress", "compiled");
	CHECK(c && cJSON_IsTrue(cJSON_GetObjectItem(c, "ok")),
	      "a candidate sent while the task loads compiles meanwhile");
	cJSON_Delete(c);
	/* the helper describes the problem and makes its sets */
	char *gate = path_join(gDir, "gate");
	write_file_atomic(gate, "", 0, NULL);
	free(gate);
	cJSON *r = wk_line(&w);
	const char *ev = r ? cJSON_GetStringValue(cJSON_GetObjectItem(r, "ev")) : NULL;
	CHECK(ev && !strcmp(ev, "task_ready"), "then the task is ready (got %s)",
	      ev ? ev : "nothing");
	const char *zRef = cJSON_GetStringValue(cJSON_GetObjectItem(r, "reference"));
	CHECK(zRef && !strcmp(zRef, "PyTorch eager (reference.py)"),
	      "... with the PyTorch reference (%s)", zRef ? zRef : "none");
	cJSON_Delete(r);
	r = wk_until(&w, "result", NULL);
	const char *st = cJSON_GetStringValue(cJSON_GetObjectItem(r, "status"));
	CHECK(st && !strcmp(st, "correct"),
	      "... and the candidate is evaluated against the helper's sets: correct (got %s)",
	      st ? st : "nothing");
	/* every timed run's inputs the helper's draw, any of them checked
	 * after its call by the helper's outputs of its seed (issue 37) */
	const cJSON *nAfter =
	    cJSON_GetObjectItem(cJSON_GetObjectItem(r, "timing"), "checked_after_runs");
	CHECK(cJSON_IsNumber(nAfter) && nAfter->valueint >= 1,
	      "... its timed runs on the helper's fresh draws, checked after their call (%d)",
	      cJSON_IsNumber(nAfter) ? nAfter->valueint : -1);
	cJSON_Delete(r);
	cJSON *q = cJSON_CreateObject();
	cJSON_AddStringToObject(q, "op", "quit");
	wk_send(&w, q);
	int rc = wk_end(&w);
	CHECK(rc == 0, "the worker quits (status %d)", rc);
	CHECK(helper_gone(), "... and its helper, kept to draw the runs' inputs, ended with it");
	check_draw_trace(trace);
	free(trace);
}

/* a task whose helper runs in zMode (the task's run timeout runTimeoutS)
 * ends in the fatal task error "PROBLEM: zWant"; the worker exits 1 */
static void task_error(const char *zMode, double runTimeoutS, const char *zWant, const char *zWhat)
{
	struct wk w;
	int fatal;
	wk_start(&w, zMode, 0);
	wk_send(&w, task_request(&w, runTimeoutS));
	cJSON *e = wk_until(&w, "error", NULL);
	const char *m = error_of(e, &fatal);
	char *want = xasprintf("%s: %s", w.zProblem, zWant);
	CHECK(!strcmp(m, want) && fatal, "%s (got '%s')", zWhat, m);
	free(want);
	cJSON_Delete(e);
	int rc = wk_end(&w);
	CHECK(WIFEXITED(rc) && WEXITSTATUS(rc) == 1, "... the worker exits 1 (status %d)", rc);
	CHECK(helper_gone(), "... and the helper is gone");
}

static void test_quit_while_loading(void)
{
	struct wk w;
	wk_start(&w, "", 1);
	cJSON_Delete(wk_until(&w, "hello", NULL));
	wk_send(&w, task_request(&w, 60));
	/* the helper has started (its pid written) before the quit */
	char *pidf = path_join(gDir, "helper.pid");
	for (double end = now_s() + 60; !path_exists(pidf) && now_s() < end;)
		usleep(10000);
	free(pidf);
	cJSON *q = cJSON_CreateObject();
	cJSON_AddStringToObject(q, "op", "quit");
	wk_send(&w, q);
	int rc = wk_end(&w);
	CHECK(WIFEXITED(rc) && WEXITSTATUS(rc) == 0,
	      "a quit read while the task loads ends the worker (status %d)", rc);
	CHECK(helper_gone(), "... and its PyTorch helper");
}

int main(void)
{
	setenv("KLOOP_INCLUDE", "include", 1);
	char tmpl[] = "/tmp/kloop-test-kworker-XXXXXX";
	gDir = mkdtemp(tmpl);
	char *helper = path_join(gDir, "helper.py"), *problem = path_join(gDir, "double.py");
	write_file_atomic(helper, zHelper, strlen(zHelper), NULL);
	/* the problem file's text: the stand-in reads none of it */
	write_file_atomic(problem, "# y = 2x\n", 9, NULL);
	setenv("KLOOP_TORCHREF", helper, 1);
	test_requests_while_loading();
	task_error("hang", 0.5,
	           "the PyTorch helper sent nothing for 0.5 s while computing set 0 (the forward) "
	           "(the --timeout limit): stopped; does the problem's forward return?",
	           "a helper that makes no set within the run timeout is stopped, and the task "
	           "error says so");
	task_error("describe_error", 60, "the stand-in cannot describe it",
	           "a helper that cannot describe the problem is a task error with its message");
	test_quit_while_loading();
	char *cmd = xasprintf("rm -rf '%s'", gDir);
	(void)!system(cmd);
	free(cmd);
	free(helper);
	free(problem);
	return check_done();
}
