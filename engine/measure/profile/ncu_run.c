/*
 * ncu_run.c - Nsight Compute on one candidate, in the background: ncu
 * around a kloop-worker of its own (worker.h), which evaluates the
 * candidate once; when the worker has answered and exited, ncu has written
 * its CSV, which is read (ncu.c) into the profile.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ncu.h"
#include "outline.h"
#include "syntax.h"
#include "verdict.h"

struct ncu_run {
	struct loop *l;
	struct worker *w;
	char **argv;     /* the launch command: ncu's arguments, then the worker's */
	char *zDir;      /* the temporary directory of ncu's log */
	char *zLog;      /* ncu's CSV */
	char *zVerdict;  /* the evaluation's status and reason, once it answered */
	char *zError;    /* why nothing could start (said from the loop) */
	long long timer; /* waiting for the worker (and ncu) to exit */
	ncu_done_fn done;
	void *arg;
};

char *ncu_kernel_regex(const char *zSrc, size_t n)
{
	char err[KL_ERRLEN];
	struct syntax_doc *d = syntax_parse(zSrc, n, err);
	if (!d)
		return NULL;
	struct outline o = {0};
	outline_build(d, &o, err);
	strbuf sb = STRBUF_INIT;
	for (size_t i = 0; i < o.n_funcs; i++) {
		if (o.funcs[i].kind != OUTLINE_KERNEL)
			continue;
		const char *name = strrchr(o.funcs[i].name, ':');
		sb_addf(&sb, "%s%s", sb.len ? "|" : "regex:^(", name ? name + 1 : o.funcs[i].name);
	}
	outline_free(&o);
	syntax_free(d);
	if (!sb.len) {
		sb_free(&sb);
		return NULL;
	}
	sb_adds(&sb, ")(<.*)?$");
	return sb_detach(&sb);
}

int ncu_argv(const char **argv, const char *zNcu, const char *zLog, const char *zKernels)
{
	const char *a[] = {zNcu,
	                   "--csv",
	                   "--page",
	                   "raw",
	                   "--log-file",
	                   zLog,
	                   "--target-processes",
	                   "all",
	                   "--metrics",
	                   ncu_metrics(),
	                   "--launch-count",
	                   "4"};
	int n = 0;
	for (size_t i = 0; i < sizeof a / sizeof *a; i++)
		argv[n++] = a[i];
	if (zKernels) {
		argv[n++] = "--kernel-name-base";
		argv[n++] = "function";
		argv[n++] = "--kernel-name";
		argv[n++] = zKernels;
	}
	return n;
}

void ncu_run_free(struct ncu_run *r)
{
	if (!r)
		return;
	if (r->timer)
		loop_del_timer(r->l, r->timer);
	worker_free(r->w); /* kills ncu and the worker, if they still run */
	for (int i = 0; r->argv && r->argv[i]; i++)
		free(r->argv[i]);
	free(r->argv);
	if (r->zLog)
		unlink(r->zLog);
	if (r->zDir)
		rmdir(r->zDir);
	free(r->zLog);
	free(r->zDir);
	free(r->zVerdict);
	free(r->zError);
	free(r);
}

/* the worker and ncu have exited: the CSV, or why there is none */
static void finish(struct ncu_run *r)
{
	char err[KL_ERRLEN];
	strbuf csv = STRBUF_INIT;
	cJSON *prof = NULL;
	if (read_file(r->zLog, &csv, 16 << 20, err) < 0 || !(prof = ncu_parse_csv(csv.buf, err))) {
		char *m = xasprintf("%s (the evaluation under ncu: %s)", err,
		                    r->zVerdict ? r->zVerdict : "no answer");
		kl_err(err, "%s", m);
		free(m);
	}
	sb_free(&csv);
	strbuf line = STRBUF_INIT;
	if (prof)
		ncu_summary(prof, &line);
	r->done(prof, prof ? line.buf : NULL, prof ? NULL : err, r->arg); /* may free r */
	sb_free(&line);
	cJSON_Delete(prof);
}

static void poll_exit(struct loop *l, long long id, void *arg)
{
	struct ncu_run *r = arg;
	(void)id;
	r->timer = 0;
	if (r->zError) {
		r->done(NULL, NULL, r->zError, r->arg); /* may free r */
		return;
	}
	if (worker_pid(r->w) > 0) {
		r->timer = loop_add_timer(l, 0.05, poll_exit, r);
		return;
	}
	finish(r);
}

static void on_done(int job, const struct worker_end *e, void *arg)
{
	struct ncu_run *r = arg;
	(void)job;
	struct verdict v;
	verdict_decode(e->result, &v);
	const char *st = *v.zStatus ? v.zStatus : NULL, *why = v.zReason, *tail = v.zStderrTail;
	free(r->zVerdict);
	r->zVerdict =
	    xasprintf("%s%s%.300s%s%.1500s", st ? st : "?", why && *why ? ": " : "", why ? why : "",
	              tail && *tail ? "; its last output:\n" : "", tail ? tail : "");
	/* the worker exits once its input closes, and ncu, which waits for it,
	 * writes its report */
	worker_end(r->w);
	if (!r->timer)
		r->timer = loop_add_timer(r->l, 0.05, poll_exit, r);
}

struct ncu_run *ncu_run_start(struct loop *l, const struct ncu_spec *s, ncu_done_fn done, void *arg,
                              char *err)
{
	const char *zNcu = s->zNcu ? s->zNcu : "ncu";
	char tmpl[] = "/tmp/kloop-ncu-XXXXXX";
	if (!mkdtemp(tmpl))
		return kl_err(err, "cannot make a temporary directory: %s", strerror(errno)), NULL;
	struct ncu_run *r = xcalloc(1, sizeof *r);
	r->l = l;
	r->done = done;
	r->arg = arg;
	r->zDir = xstrdup(tmpl);
	/* without ncu the profile fails from the loop, as any failure of it does */
	char *found = strchr(zNcu, '/') ? (access(zNcu, X_OK) == 0 ? xstrdup(zNcu) : NULL)
	                                : path_search(zNcu);
	int have = found != NULL;
	free(found);
	if (!have) {
		r->zError = xasprintf(
		    "Nsight Compute (%s) cannot be run: install it or give --ncu PATH", zNcu);
		r->timer = loop_add_timer(l, 0, poll_exit, r);
		return r;
	}
	r->zLog = path_join(tmpl, "ncu.csv");
	struct worker_config wc = *s->wc;
	wc.nTrials = 1;
	wc.budgetS = 0.05;
	wc.noSandbox = 1;
	wc.deferCompile = 0;
	wc.warmS = 0; /* ncu waits for the worker: it must not linger */
	wc.onBaselines = NULL;
	wc.shipTask = 0;
	wc.argvLaunch = NULL;
	/* ncu's arguments, then the worker's command line */
	char *re = ncu_kernel_regex(s->zSource, strlen(s->zSource));
	const char *pre[NCU_ARGS];
	int n = ncu_argv(pre, zNcu, r->zLog, re);
	char **wv = worker_launch_argv(&wc, NULL);
	int nw = 0;
	while (wv[nw])
		nw++;
	r->argv = xcalloc((size_t)(n + nw + 1), sizeof *r->argv);
	for (int i = 0; i < n; i++)
		r->argv[i] = xstrdup(pre[i]);
	memcpy(r->argv + n, wv, (size_t)nw * sizeof *wv);
	free(wv);
	free(re);
	wc.argvLaunch = r->argv;
	r->w = worker_new(l, &wc, on_done, NULL, r);
	worker_submit(r->w, s->zName, s->zSource, strlen(s->zSource));
	return r;
}
