/*
 * llmrun.c - the setup `kloop ideas` and `kloop implement` share: flags,
 * a driver with the parents, progress on stderr, and the loop that runs
 * until the driver is idle.
 */
#include "llmrun.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"
#include "torchext.h"
#include "llm_config.h"

#define SOURCE_MAX (8u << 20)

/* a parent from a file (NULL: the task's first seed for the backend) */
static int add_parent(struct llmrun *r, const char *zPath, int *pId, char *err)
{
	const struct driver *drv = r->drv;
	const char *path = zPath, *be = driver_backend(drv);
	int seed = 0;
	if (!path) {
		char *const *az;
		int nz = driver_seeds(drv, &az), k = 0;
		while (k < nz && !driver_seed_usable(drv, k, NULL, 0))
			k++;
		if (k == nz)
			return kl_err(err, "%s has no %s seed: give --from SOURCE",
			              driver_task_name(drv), be);
		path = az[k];
		seed = 1;
	}
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	if (!torchext_known_name(base))
		return kl_err(err,
		              "%s: unknown source language (expected a .c, .cpp or .cu file, or a "
		              "KernelBench ModelNew .py)",
		              path);
	strbuf src = STRBUF_INIT;
	if (read_file(path, &src, SOURCE_MAX, err) < 0)
		return -1;
	if (!src.len || looks_binary(src.buf, src.len)) {
		sb_free(&src);
		return kl_err(err, "%s: not C, C++ or CUDA source", path);
	}
	if (torchext_check_backend(path, src.buf, src.len, be, err) < 0) {
		sb_free(&src);
		return -1;
	}
	*pId = driver_add_source(r->drv, seed ? "seed" : "human", base, src.buf, err);
	sb_free(&src);
	return *pId < 0 ? -1 : 0;
}

static void on_note(void *arg, const struct driver_note *n)
{
	struct llmrun *r = arg;
	if (n->kind == DRIVER_CHANGED && n->request) {
		const struct driver_stream *a;
		int k = driver_streams(r->drv, &a);
		long total = 0;
		for (int i = 0; i < k; i++)
			total += a[i].nChars;
		r->streamed = total > r->streamed ? total : r->streamed;
		if (r->tty)
			term_ctl(stderr, "\r\033[K"),
			    fprintf(stderr, "%s: %ld bytes", r->zDoing, r->streamed);
	} else if (n->kind == DRIVER_FINISHED && r->tty) {
		const struct cand *c = state_cand(driver_state(r->drv), n->cand);
		if (c)
			term_ctl(stderr, "\r\033[K"),
			    fprintf(stderr, "%s: %s\n", c->zName, c->zStatus);
	} else if (n->kind == DRIVER_LOG) {
		llmrun_log(r, n->zText);
	} else if (n->kind == DRIVER_MESSAGE) {
		if (r->tty)
			term_ctl(stderr, "\r\033[K");
		fprintf(stderr, "kloop: warning: %s", n->zText);
	}
	if (r->on)
		r->on(r->arg, n);
}

int llmrun_start(struct llmrun *r, int argc, char **argv)
{
	char err[KL_ERRLEN];
	struct llm_config lc;
	int rc = flags_parse(r->self, r->cmd, argc, argv, 1, 1, &r->f);
	if (rc)
		return rc;
	r->l = loop_new();
	if (r->cmd == FL_IMPLEMENT && (!r->f.zIdea || !*r->f.zIdea)) {
		fprintf(stderr, "kloop: %s: --idea TEXT is needed\n", r->self->name);
		return cmd_usage(r->self);
	}
	r->tty = !r->f.json && isatty(2);
	/* an LLM that cannot be asked is said before anything is journaled */
	if (llm_config_from(&lc, &r->f.cfg, err) < 0)
		goto fail;
	struct driver_opts ro = {
	    .zTask = r->f.azPos[0],
	    .zSession = r->f.zSession,
	    .zShapes = r->f.zShapes,
	    .zReference = r->f.zReference,
	    .bNoSeeds = 1,
	    .bMemory = 1,
	    .bNoResume = 1,
	    .bNoEvalParents = r->f.noEval,
	};
	if (!(r->drv = driver_open(r->l, &r->f.cfg, &ro, on_note, r, err)))
		goto fail;
	r->before = driver_state(r->drv)->llm;
	if (!driver_llm(r->drv, err) || add_parent(r, r->f.zFrom, &r->parent, err) < 0 ||
	    (r->f.zWith && add_parent(r, r->f.zWith, &r->parent2, err) < 0))
		goto fail;
	return 0;
fail:
	fprintf(stderr, "kloop: %s\n", err);
	return 2;
}

void llmrun_print_usage(const struct llmrun *r)
{
	cJSON *u = llmrun_usage(r);
	char tok[160];
	state_llm_tokens_text(&driver_state(r->drv)->llm, &r->before, tok, sizeof tok);
	const char *zModel = cJSON_GetStringValue(cJSON_GetObjectItem(u, "model"));
	printf("%s%s%s: %g requests, %s", cJSON_GetStringValue(cJSON_GetObjectItem(u, "provider")),
	       zModel && *zModel ? " " : "", zModel ? zModel : "",
	       cJSON_GetNumberValue(cJSON_GetObjectItem(u, "requests")), tok);
	const cJSON *cost = cJSON_GetObjectItem(u, "cost");
	if (cJSON_IsNumber(cost))
		printf(", $%.4f", cost->valuedouble);
	printf("\n");
	cJSON_Delete(u);
}

void llmrun_wait(struct llmrun *r)
{
	while (driver_busy(r->drv))
		loop_once(r->l, -1);
	if (r->tty && r->streamed)
		term_ctl(stderr, "\r\033[K");
}

void llmrun_log(struct llmrun *r, const char *zLine)
{
	if (r->tty)
		term_ctl(stderr, "\r\033[K");
	fprintf(stderr, "kloop: %s\n", zLine);
}

cJSON *llmrun_usage(const struct llmrun *r)
{
	const struct state_llm *u = &driver_state(r->drv)->llm, *b = &r->before;
	const char *zProvider, *zModel;
	driver_llm_model(r->drv, &zProvider, &zModel);
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "provider", zProvider);
	cJSON_AddStringToObject(o, "model", zModel);
	cJSON_AddNumberToObject(o, "requests", u->nRequests - b->nRequests);
	cJSON_AddNumberToObject(o, "failed", u->nFailed - b->nFailed);
	cJSON_AddNumberToObject(o, "input_tokens", (double)(u->inTokens - b->inTokens));
	cJSON_AddNumberToObject(o, "output_tokens", (double)(u->outTokens - b->outTokens));
	if (r->f.cfg.priceIn >= 0 && r->f.cfg.priceOut >= 0)
		cJSON_AddNumberToObject(o, "cost", u->cost - b->cost);
	else
		cJSON_AddNullToObject(o, "cost");
	return o;
}

int llmrun_free(struct llmrun *r)
{
	int rc = driver_saved(r->drv, NULL);
	driver_close(r->drv);
	if (r->l)
		loop_free(r->l);
	flags_free(&r->f);
	return rc;
}
