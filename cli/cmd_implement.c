/*
 * cmd_implement.c - `kloop implement TASK --idea TEXT [--from SOURCE] [-b B]`:
 * ask the LLM for B implementations of one idea, evaluate each through a
 * worker (sending failures back with the fix prompt), and print each
 * candidate's verdict and time.
 */
#include <cJSON.h>
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "llmrun.h"

struct implement_run {
	struct llmrun r;
	int idea; /* the idea implemented */
	struct made {
		int cand, branch, attempt;
	} * aMade; /* the candidates made, in order */
	int nCand;
	cJSON *failures; /* [{"branch", "error"}] for branches that ended without code */
};

static void on_note(void *arg, const struct driver_note *n)
{
	struct implement_run *x = arg;
	if (n->kind == DRIVER_CANDIDATE) {
		x->aMade = xrealloc(x->aMade, sizeof *x->aMade * (size_t)(x->nCand + 1));
		x->aMade[x->nCand++] = (struct made){n->cand, n->branch, n->attempt};
	} else if (n->kind == DRIVER_BRANCH) {
		cJSON *f = cJSON_CreateObject();
		cJSON_AddNumberToObject(f, "branch", n->branch);
		cJSON_AddStringToObject(f, "error", n->zText);
		cJSON_AddItemToArray(x->failures, f);
		llmrun_log(&x->r, n->zText);
	}
}

/* a candidate with the baseline it was timed against */
static cJSON *cand_json(const struct cand *c)
{
	cJSON *y = state_cand_json(c);
	if (!isnan(c->v.baselineMs))
		cJSON_AddNumberToObject(y, "baseline_ms", c->v.baselineMs);
	else
		cJSON_AddNullToObject(y, "baseline_ms");
	return y;
}

static void print(struct implement_run *x)
{
	const struct state *st = driver_state(x->r.drv);
	const struct state_idea *d = state_idea(st, x->idea);
	const struct cand *parent = state_cand(st, x->r.parent);
	if (x->r.f.json) {
		cJSON *o = cJSON_CreateObject();
		cJSON *di = cJSON_AddObjectToObject(o, "idea");
		cJSON_AddNumberToObject(di, "id", d->id);
		cJSON_AddStringToObject(di, "title", d->zTitle);
		cJSON_AddStringToObject(di, "category", d->zCategory);
		cJSON_AddItemToObject(o, "parent", cand_json(parent));
		cJSON *arr = cJSON_AddArrayToObject(o, "candidates");
		for (int i = 0; i < x->nCand; i++) {
			cJSON *y = cand_json(state_cand(st, x->aMade[i].cand));
			cJSON_AddNumberToObject(y, "branch", x->aMade[i].branch);
			cJSON_AddNumberToObject(y, "attempt", x->aMade[i].attempt);
			cJSON_AddItemToArray(arr, y);
		}
		cJSON_AddItemToObject(o, "failures", cJSON_Duplicate(x->failures, 1));
		cJSON_AddItemToObject(o, "llm", llmrun_usage(&x->r));
		char *z = json_text(o, 0);
		printf("%s\n", z);
		free(z);
		cJSON_Delete(o);
		return;
	}
	printf("idea %d: %s [%s]\n", d->id, d->zTitle, d->zCategory);
	printf("  %-22s %-14s %10s %9s  %s\n", "candidate", "verdict", "time (ms)", "speedup", "");
	const struct cand *all[1 + 64 * 8];
	int n = 0;
	all[n++] = parent;
	/* by branch, then attempt */
	for (int b = 1; b <= x->r.f.b; b++)
		for (int i = 0; i < x->nCand && n < (int)(sizeof all / sizeof *all); i++)
			if (x->aMade[i].branch == b)
				all[n++] = state_cand(st, x->aMade[i].cand);
	for (int i = 0; i < n; i++) {
		const struct cand *c = all[i];
		char tm[32] = "-", sp[32] = "-";
		if (c->timeMs >= 0)
			snprintf(tm, sizeof tm, "%.4g", c->timeMs);
		if (c->speedup >= 0)
			snprintf(sp, sizeof sp, "%.3gx", c->speedup);
		printf("  %-22.22s %-14s %10s %9s  %s%s%s\n", c->zName, c->zStatus, tm, sp,
		       i ? "" : "(the parent)", i || !*c->zReason ? "" : " ", c->zReason);
	}
	const cJSON *f;
	cJSON_ArrayForEach(f, x->failures)
	{
		printf("  branch %g: %s\n", cJSON_GetNumberValue(cJSON_GetObjectItem(f, "branch")),
		       cJSON_GetStringValue(cJSON_GetObjectItem(f, "error")));
	}
	llmrun_print_usage(&x->r);
}

/* --idea N names idea N of the session; anything else is a new idea */
static int find_idea(struct implement_run *x, char *err)
{
	const char *z = x->r.f.zIdea;
	int digits = 1;
	for (const char *p = z; *p; p++)
		digits &= isdigit((unsigned char)*p) != 0;
	if (digits && state_idea(driver_state(x->r.drv), atoi(z)))
		return atoi(z);
	struct pipeline *p = driver_llm(x->r.drv, err);
	return p ? pipeline_idea_new(p, z, x->r.parent, err) : -1;
}

static int exec_implement(int argc, char **argv)
{
	struct implement_run x = {0};
	x.r.self = &cmd_implement_entry;
	x.r.cmd = FL_IMPLEMENT;
	x.r.zDoing = "writing code";
	x.r.on = on_note;
	x.r.arg = &x;
	x.failures = cJSON_CreateArray();
	char err[KL_ERRLEN];
	int rc = llmrun_start(&x.r, argc, argv);
	if (rc == 0 && ((x.idea = find_idea(&x, err)) < 0 ||
	                pipeline_implement(driver_pipeline(x.r.drv), x.idea, x.r.parent,
	                                   x.r.parent2, x.r.f.b, 0, err) < 0)) {
		fprintf(stderr, "kloop: %s\n", err);
		rc = 2;
	}
	if (rc == 0) {
		llmrun_wait(&x.r);
		print(&x);
		rc = 1;
		for (int i = 0; i < x.nCand; i++)
			if (state_cand(driver_state(x.r.drv), x.aMade[i].cand)->status ==
			    STATUS_CORRECT)
				rc = 0;
	}
	if (llmrun_free(&x.r) < 0)
		rc = 2; /* events lost: the journal could not be written */
	free(x.aMade);
	cJSON_Delete(x.failures);
	return rc;
}

const struct cmd_entry cmd_implement_entry = {
    .name = "implement",
    .usage = "TASK --idea TEXT [--from SOURCE] [--with SOURCE] [-b B] [--session FILE] [--json] "
             "[--fix N] [--provider openai|anthropic|command] [--model NAME] [--base-url URL] "
             "[--backend host|cuda]",
    .help = "exit 0 when one is correct, 1 otherwise, 2 usage or setup error",
    .exec = exec_implement,
};
