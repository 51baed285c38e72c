/*
 * llmrun.c - the setup `kloop ideas` and `kloop implement` share: flags,
 * task, parents, session, LLM client and pipeline, and the loop that runs
 * until the pipeline is idle.
 */
#include "llmrun.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"
#include "compile.h"

#define SOURCE_MAX (8u << 20)

/* flags that take a value and set a config key of the same meaning */
static const struct {
	const char *zFlag, *zKey;
} keyFlags[] = {
    {"--provider", "provider"},       {"--model", "model"},
    {"--base-url", "base_url"},       {"--backend", "backend"},
    {"--trials", "trials"},           {"--budget", "budget"},
    {"--timeout", "timeout"},         {"--jobs", "jobs"},
    {"--worker", "worker"},           {"--python", "python"},
    {"--llm-timeout", "llm_timeout"}, {"--fix", "fix_attempts"},
};

static int usage(struct llmrun *r, const char *zFmt, const char *zArg)
{
	fprintf(stderr, "kloop: %s: ", r->self->name);
	fprintf(stderr, zFmt, zArg);
	fprintf(stderr, "\n");
	return cmd_usage(r->self);
}

static int count(const char *z, int lo, int hi, int *pOut)
{
	char *end;
	long v = strtol(z, &end, 10);
	if (end == z || *end || v < lo || v > hi)
		return -1;
	*pOut = (int)v;
	return 0;
}

int llmrun_args(struct llmrun *r, int argc, char **argv, int bIdeas)
{
	char err[KL_ERRLEN];
	if (config_load(&r->cfg, err) < 0) {
		fprintf(stderr, "kloop: %s\n", err);
		return 2;
	}
	r->n = 5;
	r->b = 2;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--json")) {
			r->json = 1;
			continue;
		}
		if (!strcmp(a, "--no-eval")) {
			r->noEval = 1;
			continue;
		}
		if (a[0] != '-') {
			if (r->zTask)
				return usage(r, "unexpected argument %s", a);
			r->zTask = a;
			continue;
		}
		size_t k = 0;
		while (k < sizeof keyFlags / sizeof *keyFlags && strcmp(a, keyFlags[k].zFlag))
			k++;
		int known =
		    k < sizeof keyFlags / sizeof *keyFlags || !strcmp(a, "--from") ||
		    !strcmp(a, "--session") || !strcmp(a, "--shapes") ||
		    !strcmp(a, "--reference") || (bIdeas && !strcmp(a, "-n")) ||
		    (!bIdeas && (!strcmp(a, "-b") || !strcmp(a, "--idea") || !strcmp(a, "--with")));
		if (!known)
			return usage(r, "unknown option %s", a);
		if (!v)
			return usage(r, "%s needs a value", a);
		i++;
		if (k < sizeof keyFlags / sizeof *keyFlags) {
			if (config_set(&r->cfg, keyFlags[k].zKey, v, err) < 0) {
				fprintf(stderr, "kloop: %s: %s\n", a, err);
				return 2;
			}
		} else if (!strcmp(a, "--from")) {
			r->zFrom = v;
		} else if (!strcmp(a, "--with")) {
			r->zWith = v;
		} else if (!strcmp(a, "--idea")) {
			r->zIdea = v;
		} else if (!strcmp(a, "--session")) {
			r->zSession = v;
		} else if (!strcmp(a, "--shapes")) {
			r->zShapes = v;
		} else if (!strcmp(a, "--reference")) {
			r->zRef = v;
		} else if (count(v, 1, 64, !strcmp(a, "-n") ? &r->n : &r->b) < 0) {
			fprintf(stderr,
			        "kloop: %s: expected a whole number from 1 to 64, got '%s'\n", a,
			        v);
			return 2;
		}
	}
	if (!r->zTask)
		return usage(r, "%s", "a TASK is needed");
	if (!bIdeas && (!r->zIdea || !*r->zIdea))
		return usage(r, "%s", "--idea TEXT is needed");
	if (r->zRef && strcmp(r->zRef, "host") && strcmp(r->zRef, "cuda") &&
	    strcmp(r->zRef, "torch")) {
		fprintf(stderr, "kloop: --reference: expected host, cuda or torch, got '%s'\n",
		        r->zRef);
		return 2;
	}
	r->zBackend = r->cfg.zBackend            ? r->cfg.zBackend
	              : backend_cuda_available() ? "cuda"
	                                         : "host";
	return 0;
}

static int load_task(struct llmrun *r, char *err)
{
	size_t la = strlen(r->zTask);
	if (la > 3 && !strcmp(r->zTask + la - 3, ".py")) {
		char *real = realpath(r->zTask, NULL);
		if (!real)
			return kl_err(err, "%s: no such problem file", r->zTask);
		r->zTaskDir = real;
		const char *b = strrchr(real, '/');
		r->zTaskName = xstrndup(b + 1, strlen(b + 1) - 3);
		return 0;
	}
	r->zTaskDir = task_resolve(r->zTask, err);
	if (!r->zTaskDir)
		return -1;
	r->task = task_load(r->zTaskDir, r->zBackend, r->zShapes, err);
	if (!r->task)
		return -1;
	r->zTaskName = xstrdup(r->task->zName);
	return 0;
}

/* a parent from a file (NULL: the task's first seed for the backend) */
static int add_parent(struct llmrun *r, const char *zPath, int *pId, char *err)
{
	const char *path = zPath;
	int seed = 0;
	if (!path) {
		int cuda = !strcmp(r->zBackend, "cuda");
		int n = !r->task ? 0 : cuda ? r->task->seeds.nCuda : r->task->seeds.nHost;
		if (!n)
			return kl_err(err, "%s has no %s seed: give --from SOURCE", r->zTaskName,
			              r->zBackend);
		path = cuda ? r->task->seeds.azCuda[0] : r->task->seeds.azHost[0];
		seed = 1;
	}
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	int lang = compile_lang_from_name(base);
	if (lang < 0)
		return kl_err(err, "%s: unknown source language (expected a .c, .cpp or .cu file)",
		              path);
	if ((lang == LANG_CUDA) != !strcmp(r->zBackend, "cuda"))
		return kl_err(err, "%s: the %s backend does not run %s candidates", path,
		              r->zBackend, lang == LANG_CUDA ? ".cu" : "C/C++");
	strbuf src = STRBUF_INIT;
	if (read_file(path, &src, SOURCE_MAX, err) < 0)
		return -1;
	if (!src.len || looks_binary(src.buf, src.len)) {
		sb_free(&src);
		return kl_err(err, "%s: not C, C++ or CUDA source", path);
	}
	*pId = pipeline_add_source(r->p, base, src.buf, seed ? "seed" : "human", err);
	sb_free(&src);
	return *pId < 0 ? -1 : 0;
}

int llmrun_start(struct llmrun *r, const struct pipeline_hooks *hooks, void *arg)
{
	char err[KL_ERRLEN];
	struct llm_config lc;
	r->tty = !r->json && isatty(2);
	if (load_task(r, err) < 0 || llm_config_from(&lc, &r->cfg, err) < 0)
		goto fail;
	r->ses = r->zSession ? session_open(r->zSession, 1, err) : session_memory();
	if (!r->ses)
		goto fail;
	if (r->ses->warnings.len)
		fprintf(stderr, "kloop: warning: %s", r->ses->warnings.buf);
	if (session_begin(r->ses, r->zTaskName, r->zTaskDir, r->zBackend, r->zShapes, err) < 0)
		goto fail;
	r->before = r->ses->st.llm;
	r->l = loop_new();
	if (!(r->llm = llm_new(r->l, &lc, err)))
		goto fail;
	r->argvLaunch = config_worker_argv(&r->cfg);
	r->wc = (struct worker_config){
	    .argvLaunch = r->argvLaunch,
	    .zBackend = r->zBackend,
	    .zTaskDir = r->zTaskDir,
	    .zShapes = r->zShapes,
	    .zReference = r->zRef,
	    .zPython = r->cfg.zPython,
	    .nTrials = r->cfg.nTrials,
	    .budgetS = r->cfg.budgetS,
	    .runTimeoutS = r->cfg.timeoutS,
	    .jobs = r->cfg.jobs,
	};
	struct pipeline_config pc = {
	    .l = r->l,
	    .ses = r->ses,
	    .llm = r->llm,
	    .wc = &r->wc,
	    .task = r->task,
	    .zProblem = r->task ? NULL : r->zTaskDir,
	    .zTaskName = r->zTaskName,
	    .zBackend = r->zBackend,
	    .fixAttempts = r->cfg.fixAttempts,
	    .evaluateParents = !r->noEval,
	    .hooks = hooks,
	    .arg = arg,
	};
	if (!(r->p = pipeline_new(&pc, err)))
		goto fail;
	if (add_parent(r, r->zFrom, &r->parent, err) < 0 ||
	    (r->zWith && add_parent(r, r->zWith, &r->parent2, err) < 0))
		goto fail;
	return 0;
fail:
	fprintf(stderr, "kloop: %s\n", err);
	return 2;
}

static void on_delta(int request, const char *z, size_t n, void *arg)
{
	(void)request, (void)z;
	struct llmrun *r = arg;
	r->streamed += (long)n;
	if (r->tty)
		fprintf(stderr, "\r\033[K%s: %ld bytes", r->zDoing, r->streamed);
}

static void on_verdict(int candId, const cJSON *result, void *arg)
{
	struct llmrun *r = arg;
	const struct cand *c = state_cand(&r->ses->st, candId);
	const char *st = cJSON_GetStringValue(cJSON_GetObjectItem(result, "status"));
	if (r->tty && c)
		fprintf(stderr, "\r\033[K%s: %s\n", c->zName, st ? st : "?");
}

static void on_log(const char *zLine, void *arg)
{
	llmrun_log(arg, zLine);
}

void llmrun_hooks(struct llmrun *r, struct pipeline_hooks *h, const char *zDoing)
{
	r->zDoing = zDoing;
	h->delta = on_delta;
	h->verdict = on_verdict;
	h->log = on_log;
}

void llmrun_print_usage(const struct llmrun *r)
{
	cJSON *u = llmrun_usage(r);
	printf("%s %s: %g requests, %g input and %g output tokens",
	       cJSON_GetStringValue(cJSON_GetObjectItem(u, "provider")),
	       cJSON_GetStringValue(cJSON_GetObjectItem(u, "model")),
	       cJSON_GetNumberValue(cJSON_GetObjectItem(u, "requests")),
	       cJSON_GetNumberValue(cJSON_GetObjectItem(u, "input_tokens")),
	       cJSON_GetNumberValue(cJSON_GetObjectItem(u, "output_tokens")));
	const cJSON *cost = cJSON_GetObjectItem(u, "cost");
	if (cJSON_IsNumber(cost))
		printf(", $%.4f", cost->valuedouble);
	printf("\n");
	cJSON_Delete(u);
}

void llmrun_wait(struct llmrun *r)
{
	while (pipeline_busy(r->p))
		loop_once(r->l, -1);
	if (r->tty && r->streamed)
		fprintf(stderr, "\r\033[K");
}

void llmrun_log(struct llmrun *r, const char *zLine)
{
	fprintf(stderr, "%skloop: %s\n", r->tty ? "\r\033[K" : "", zLine);
}

cJSON *llmrun_usage(const struct llmrun *r)
{
	const struct state_llm *u = &r->ses->st.llm, *b = &r->before;
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "provider", llm_provider_name(r->llm));
	cJSON_AddStringToObject(o, "model", llm_model(r->llm));
	cJSON_AddNumberToObject(o, "requests", u->nRequests - b->nRequests);
	cJSON_AddNumberToObject(o, "failed", u->nFailed - b->nFailed);
	cJSON_AddNumberToObject(o, "input_tokens", (double)(u->inTokens - b->inTokens));
	cJSON_AddNumberToObject(o, "output_tokens", (double)(u->outTokens - b->outTokens));
	if (r->cfg.priceIn >= 0 && r->cfg.priceOut >= 0)
		cJSON_AddNumberToObject(o, "cost", u->cost - b->cost);
	else
		cJSON_AddNullToObject(o, "cost");
	return o;
}

void llmrun_free(struct llmrun *r)
{
	pipeline_free(r->p);
	llm_free(r->llm);
	loop_free(r->l);
	session_close(r->ses);
	config_argv_free(r->argvLaunch);
	task_free(r->task);
	free(r->zTaskDir);
	free(r->zTaskName);
	config_free(&r->cfg);
}
