/*
 * cmd_eval.c - `kloop eval TASK SOURCE...`: compile, check and time
 * candidates through a worker, print the verdicts, and journal them when a
 * session is given.
 */
#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"
#include "cmd.h"
#include "compile.h"
#include "config.h"
#include "loop.h"
#include "opts.h"
#include "result.h"
#include "session.h"
#include "task.h"
#include "util.h"
#include "worker.h"

#define SOURCE_MAX (8u << 20)

struct src {
	char *zPath;    /* as given */
	char *zName;    /* base name */
	strbuf text;    /* contents */
	int job;        /* worker job id */
	int candId;     /* session candidate id, or 0 */
	cJSON *result;  /* the verdict */
	int isSeed;     /* one of the task's seeds */
};

struct run {
	struct src *a;
	int n;
	int done;
	struct loop *l;
	int tty;        /* progress lines on stderr */
	const char *zBackend;
};

static void on_done(int job, cJSON *result, void *arg)
{
	struct run *r = arg;
	for (int i = 0; i < r->n; i++)
		if (r->a[i].job == job) {
			r->a[i].result = cJSON_Duplicate(result, 1);
			r->done++;
		}
	if (r->done == r->n)
		loop_stop(r->l);
}

static void on_progress(int job, const char *zStage, int k, void *arg)
{
	struct run *r = arg;
	if (!r->tty)
		return;
	for (int i = 0; i < r->n; i++)
		if (r->a[i].job == job) {
			if (k > 0)
				fprintf(stderr, "\r\033[K%s: %s %d", r->a[i].zName, zStage, k);
			else
				fprintf(stderr, "\r\033[K%s: %s", r->a[i].zName, zStage);
		}
}

static const struct cmd_entry *self = &cmd_eval_entry;

static int read_source(struct src *s, const char *zBackend, char *err)
{
	s->zName = xstrdup(strrchr(s->zPath, '/') ? strrchr(s->zPath, '/') + 1 : s->zPath);
	int lang = compile_lang_from_name(s->zName);
	if (lang < 0)
		return kl_err(err, "%s: unknown source language (expected a .c, .cpp or .cu file)", s->zPath);
	if (lang == LANG_CUDA && strcmp(zBackend, "cuda"))
		return kl_err(err, "%s: a .cu candidate needs the cuda backend (--backend cuda), but the "
				   "backend is %s%s",
			      s->zPath, zBackend, backend_cuda_available() ? "" : " (no GPU here)");
	if (lang != LANG_CUDA && !strcmp(zBackend, "cuda"))
		return kl_err(err, "%s: the cuda backend runs .cu candidates; use --backend host for C/C++",
			      s->zPath);
	if (read_file(s->zPath, &s->text, SOURCE_MAX, err) < 0)
		return -1;
	if (s->text.len == 0)
		return kl_err(err, "%s: the source file is empty", s->zPath);
	if (looks_binary(s->text.buf, s->text.len))
		return kl_err(err, "%s: this looks like a binary file, not C, C++ or CUDA source", s->zPath);
	return 0;
}

static void print_human(const cJSON *r, const struct src *s)
{
	const char *st = cJSON_GetStringValue(cJSON_GetObjectItem(r, "status"));
	const char *why = cJSON_GetStringValue(cJSON_GetObjectItem(r, "reason"));
	const cJSON *comp = cJSON_GetObjectItem(r, "compile");
	const cJSON *cor = cJSON_GetObjectItem(r, "correctness");
	const cJSON *tm = cJSON_GetObjectItem(r, "timing");
	printf("%s  %s  [%s on %s]\n", s->zPath, cJSON_GetStringValue(cJSON_GetObjectItem(r, "task")),
	       cJSON_GetStringValue(cJSON_GetObjectItem(r, "backend")),
	       cJSON_GetStringValue(cJSON_GetObjectItem(r, "device")));
	if (comp)
		printf("  compile   %.2f s%s\n", result_num(comp, "seconds"),
		       cJSON_IsTrue(cJSON_GetObjectItem(comp, "cached")) ? " (cached)" : "");
	const cJSON *res;
	cJSON_ArrayForEach(res, cJSON_GetObjectItem(comp, "resources"))
	{
		printf("  kernel    %s: %g registers, %g B shared, %g B stack, %g B spill stores, %g B spill loads\n",
		       cJSON_GetStringValue(cJSON_GetObjectItem(res, "kernel")), result_num(res, "registers"),
		       result_num(res, "shared_bytes"), result_num(res, "stack_bytes"), result_num(res, "spill_stores"),
		       result_num(res, "spill_loads"));
	}
	printf("  verdict   %s%s%s\n", st ? st : "?", why && *why ? ": " : "", why ? why : "");
	if (st && !strcmp(st, "compile_error") && comp) {
		const char *log = cJSON_GetStringValue(cJSON_GetObjectItem(comp, "log"));
		if (log && *log)
			printf("%s%s", log, log[strlen(log) - 1] == '\n' ? "" : "\n");
	}
	if ((st && (!strcmp(st, "crashed") || !strcmp(st, "timeout")))) {
		const char *tail = cJSON_GetStringValue(cJSON_GetObjectItem(r, "stderr_tail"));
		if (tail && *tail)
			printf("  last output:\n%s%s", tail, tail[strlen(tail) - 1] == '\n' ? "" : "\n");
	}
	if (cor && cJSON_GetObjectItem(cor, "trials"))
		printf("  checked   %g/%g trials passed, max abs error %.3g, relative L2 error %.3g, %g mismatches\n",
		       result_num(cor, "trials_passed"), result_num(cor, "trials"), result_num(cor, "max_abs_error"),
		       result_num(cor, "rel_l2_error"), result_num(cor, "mismatches"));
	if (tm)
		printf("  time      %.4g ms median (p10 %.4g, p90 %.4g, %g runs, rse %.2f%%%s)\n",
		       result_num(tm, "median_ms"), result_num(tm, "p10_ms"), result_num(tm, "p90_ms"), result_num(tm, "count"),
		       result_num(tm, "rse") * 100, cJSON_IsTrue(cJSON_GetObjectItem(tm, "converged")) ? "" : ", not converged within the budget");
	if (tm && cJSON_IsTrue(cJSON_GetObjectItem(tm, "throttled")))
		printf("  warning   the GPU was throttling during the measurement: %s\n",
		       cJSON_GetStringValue(cJSON_GetObjectItem(tm, "throttle_reason")));
	double base = result_num(r, "baseline_ms"), sp = result_num(r, "speedup");
	if (!isnan(base))
		printf("  baseline  %s %.4g ms%s", cJSON_GetStringValue(cJSON_GetObjectItem(r, "baseline")), base,
		       isnan(sp) ? "\n" : "");
	if (!isnan(sp))
		printf(", speedup %.3gx\n", sp);
	const cJSON *bc = cJSON_GetObjectItem(r, "baseline_compile_ms");
	if (cJSON_IsNumber(bc) && !isnan(result_num(r, "speedup_compile")))
		printf("  baseline  torch.compile %.4g ms, speedup %.3gx\n", bc->valuedouble,
		       result_num(r, "speedup_compile"));
	else if (cJSON_IsNumber(bc))
		printf("  baseline  torch.compile %.4g ms\n", bc->valuedouble);
}

static int journal_result(struct session *ses, struct src *s, char *err)
{
	cJSON *e = cJSON_CreateObject();
	cJSON_AddStringToObject(e, "type", "eval_finished");
	cJSON_AddNumberToObject(e, "candidate", s->candId);
	cJSON_AddItemToObject(e, "result", cJSON_Duplicate(s->result, 1));
	return session_emit(ses, e, err);
}

static int open_session(const char *zPath, const char *zTask, const char *zTaskDir,
			const char *zBackend, const char *zShapes, struct session **pses, char *err)
{
	struct session *ses = session_open(zPath, 1, err);
	if (!ses)
		return -1;
	if (ses->warnings.len)
		fprintf(stderr, "kloop: warning: %s", ses->warnings.buf);
	if (session_begin(ses, zTask, zTaskDir, zBackend, zShapes, err) < 0) {
		session_close(ses);
		return -1;
	}
	*pses = ses;
	return 0;
}

static int exec_eval(int argc, char **argv)
{
	char err[KL_ERRLEN];
	struct opts o;
	int rc = opts_parse(self, argc, argv, OPTS_JSON, 2, OPTS_MAX_POS, &o);
	if (rc)
		return rc;
	struct config *cfg = &o.cfg;
	int json = o.json;
	const char *zSession = o.lo.zSession, *zShapes = o.lo.zShapes, *zRef = o.lo.zReference;
	const char **args = o.azPos;
	int nArgs = o.nPos;
	rc = 2; /* until the candidates have run */
	const char *zBackend = cfg->zBackend ? cfg->zBackend : backend_cuda_available() ? "cuda" : "host";
	/* the task */
	char *zTaskDir = NULL, *zTaskName = NULL;
	struct task *t = NULL;
	size_t la = strlen(args[0]);
	if (la > 3 && !strcmp(args[0] + la - 3, ".py")) {
		if (!path_exists(args[0])) {
			fprintf(stderr, "kloop: %s: no such problem file\n", args[0]);
			opts_free(&o);
			return 2;
		}
		char *real = realpath(args[0], NULL);
		zTaskDir = real ? real : xstrdup(args[0]);
		const char *b = strrchr(zTaskDir, '/');
		zTaskName = xstrndup(b ? b + 1 : zTaskDir, strlen(b ? b + 1 : zTaskDir) - 3);
	} else {
		zTaskDir = task_resolve(args[0], err);
		if (zTaskDir)
			t = task_load(zTaskDir, zBackend, zShapes, err);
		if (!t) {
			fprintf(stderr, "kloop: %s\n", err);
			free(zTaskDir);
			opts_free(&o);
			return 2;
		}
		zTaskName = xstrdup(t->zName);
	}
	/* the sources */
	int nSrc = nArgs - 1;
	struct src *aSrc = xcalloc((size_t)nSrc + 1, sizeof *aSrc);
	for (int i = 1; i < nArgs; i++)
		aSrc[i - 1].zPath = xstrdup(args[i]);
	for (int i = 0; i < nSrc; i++) {
		if (read_source(&aSrc[i], zBackend, err) < 0) {
			fprintf(stderr, "kloop: %s\n", err);
			goto out;
		}
		for (int k = 0; t && !aSrc[i].isSeed && k < t->seeds.nHost + t->seeds.nCuda; k++) {
			const char *sp = k < t->seeds.nHost ? t->seeds.azHost[k] : t->seeds.azCuda[k - t->seeds.nHost];
			char *real = realpath(aSrc[i].zPath, NULL);
			aSrc[i].isSeed = real && !strcmp(real, sp);
			free(real);
		}
	}
	struct session *ses = NULL;
	if (zSession && open_session(zSession, zTaskName, zTaskDir, zBackend, zShapes, &ses, err) < 0) {
		fprintf(stderr, "kloop: %s\n", err);
		goto out;
	}
	for (int i = 0; ses && i < nSrc; i++) {
		aSrc[i].candId = state_next_id(&ses->st);
		cJSON *e = cJSON_CreateObject();
		cJSON_AddStringToObject(e, "type", "candidate_added");
		cJSON_AddNumberToObject(e, "id", aSrc[i].candId);
		cJSON_AddStringToObject(e, "name", aSrc[i].zName);
		cJSON_AddStringToObject(e, "origin", aSrc[i].isSeed ? "seed" : "human");
		cJSON_AddArrayToObject(e, "parents");
		cJSON_AddStringToObject(e, "source", aSrc[i].text.buf);
		cJSON *e2 = cJSON_CreateObject();
		cJSON_AddStringToObject(e2, "type", "eval_started");
		cJSON_AddNumberToObject(e2, "candidate", aSrc[i].candId);
		cJSON_AddStringToObject(e2, "backend", zBackend);
		if (session_emit(ses, e, err) < 0 || session_emit(ses, e2, err) < 0) {
			fprintf(stderr, "kloop: %s\n", err);
			session_close(ses);
			goto out;
		}
	}
	struct loop *l = loop_new();
	struct run r = {aSrc, nSrc, 0, l, !json && isatty(2), zBackend};
	char **launch = config_worker_argv(cfg);
	struct worker_config wc = {
		.argvLaunch = launch,
		.zBackend = zBackend,
		.zTaskDir = zTaskDir,
		.zShapes = zShapes,
		.zReference = zRef,
		.zPython = cfg->zPython,
		.nTrials = cfg->nTrials,
		.budgetS = cfg->budgetS,
		.runTimeoutS = cfg->timeoutS,
		.jobs = cfg->jobs,
	};
	struct worker *w = worker_new(l, &wc, on_done, on_progress, &r);
	for (int i = 0; i < nSrc; i++)
		aSrc[i].job = worker_submit(w, aSrc[i].zName, aSrc[i].text.buf, aSrc[i].text.len);
	if (r.done < nSrc)
		loop_run(l);
	if (r.tty)
		fprintf(stderr, "\r\033[K");
	rc = 0;
	if (worker_task_error(w)) {
		fprintf(stderr, "kloop: %s\n", worker_task_error(w));
		rc = 2;
	}
	for (int i = 0; rc != 2 && i < nSrc; i++) {
		result_complete(aSrc[i].result, w, zTaskName, aSrc[i].zPath, zBackend);
		const cJSON *bl = NULL;
		(void)bl;
		if (json) {
			char *z = cJSON_PrintUnformatted(aSrc[i].result);
			printf("%s\n", z);
			free(z);
		} else {
			print_human(aSrc[i].result, &aSrc[i]);
		}
		const char *st = cJSON_GetStringValue(cJSON_GetObjectItem(aSrc[i].result, "status"));
		if (!st || strcmp(st, "correct"))
			rc = 1;
		if (ses && journal_result(ses, &aSrc[i], err) < 0) {
			fprintf(stderr, "kloop: %s\n", err);
			rc = 2;
		}
	}
	fflush(stdout);
	worker_free(w);
	loop_free(l);
	config_argv_free(launch);
	session_close(ses);
out:
	for (int i = 0; i < nSrc; i++) {
		free(aSrc[i].zPath);
		free(aSrc[i].zName);
		sb_free(&aSrc[i].text);
		cJSON_Delete(aSrc[i].result);
	}
	free(aSrc);
	task_free(t);
	free(zTaskDir);
	free(zTaskName);
	opts_free(&o);
	return rc;
}

const struct cmd_entry cmd_eval_entry = {
	.name = "eval",
	.usage = "TASK SOURCE... [--backend host|cuda] [--json] [--session FILE] [--shapes SET] "
		 "[--reference host|cuda|torch] [--trials N] [--budget SECONDS] [--timeout SECONDS] "
		 "[--python PATH] [--jobs N]",
	.help = "compile, check and time candidates (exit 0 correct, 1 otherwise, 2 usage or task error)",
	.exec = exec_eval,
};
