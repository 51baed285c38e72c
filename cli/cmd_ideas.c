/*
 * cmd_ideas.c - `kloop ideas TASK [--from SOURCE] [-n N]`: ask the LLM for N
 * ideas, in natural language, for making SOURCE (default: the task's seed)
 * faster; print them, and journal them when a session is given.
 */
#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "llmrun.h"

struct ideas_run {
	struct llmrun r;
	int *aIdea; /* the ideas proposed */
	int nIdea;
	char *zError; /* why none came */
};

static void on_note(void *arg, const struct driver_note *n)
{
	struct ideas_run *x = arg;
	if (n->kind != DRIVER_IDEAS)
		return;
	if (!n->nIdea) {
		free(x->zError);
		x->zError = xstrdup(n->zText ? n->zText : "the reply held none");
		return;
	}
	x->aIdea = xrealloc(x->aIdea, sizeof *x->aIdea * (size_t)(x->nIdea + n->nIdea));
	memcpy(x->aIdea + x->nIdea, n->aIdea, sizeof *x->aIdea * (size_t)n->nIdea);
	x->nIdea += n->nIdea;
}

static void print(struct ideas_run *x)
{
	const struct state *st = driver_state(x->r.drv);
	const struct cand *parent = state_cand(st, x->r.parent);
	if (x->r.f.json) {
		cJSON *o = cJSON_CreateObject();
		cJSON *arr = cJSON_AddArrayToObject(o, "ideas");
		for (int i = 0; i < x->nIdea; i++) {
			const struct state_idea *d = state_idea(st, x->aIdea[i]);
			cJSON *y = cJSON_CreateObject();
			cJSON_AddNumberToObject(y, "id", d->id);
			cJSON_AddStringToObject(y, "title", d->zTitle);
			cJSON_AddStringToObject(y, "description", d->zDescription);
			cJSON_AddStringToObject(y, "category", d->zCategory);
			if (d->duplicateOf) /* proposed before for this parent */
				cJSON_AddNumberToObject(y, "duplicate_of", d->duplicateOf);
			cJSON_AddItemToArray(arr, y);
		}
		cJSON_AddStringToObject(o, "task", driver_task_name(x->r.drv));
		cJSON_AddStringToObject(o, "parent", parent->zName);
		cJSON_AddStringToObject(o, "parent_status", parent->zStatus);
		if (parent->zReason && *parent->zReason)
			cJSON_AddStringToObject(o, "parent_reason", parent->zReason);
		if (x->zError)
			cJSON_AddStringToObject(o, "error", x->zError);
		cJSON_AddItemToObject(o, "llm", llmrun_usage(&x->r));
		char *z = json_text(o, 0);
		printf("%s\n", z);
		free(z);
		cJSON_Delete(o);
		return;
	}
	enum status ps = parent->status;
	if (ps != STATUS_CORRECT && ps != STATUS_NEW && ps != STATUS_EVALUATING)
		/* say what went wrong instead of a bare status word */
		printf(
		    "the parent %s was not evaluated successfully (%s%s%s); the LLM was told so\n",
		    parent->zName, ps == STATUS_ERROR ? "its evaluation failed" : parent->zStatus,
		    parent->zReason && *parent->zReason ? ": " : "",
		    parent->zReason ? parent->zReason : "");
	printf("ideas for %s (%s, %s backend; %s", parent->zName, driver_task_name(x->r.drv),
	       driver_backend(x->r.drv),
	       ps == STATUS_ERROR ? "evaluation failed" : parent->zStatus);
	if (parent->timeMs >= 0)
		printf(", %.4g ms", parent->timeMs);
	if (parent->speedup >= 0)
		printf(", %.3gx the baseline", parent->speedup);
	printf(")\n");
	for (int i = 0; i < x->nIdea; i++) {
		const struct state_idea *d = state_idea(st, x->aIdea[i]);
		struct idea_why why = state_idea_why(st, d);
		printf("%2d. [%s] %s%s%s%s\n", d->id, d->zCategory, d->zTitle,
		       d->duplicateOf ? " (" : "", d->duplicateOf ? why.z : "",
		       d->duplicateOf ? ": deduplicated)" : "");
		/* the description, indented */
		for (const char *p = d->zDescription; *p;) {
			size_t k = strcspn(p, "\n");
			printf("    %.*s\n", (int)k, p);
			p += k + (p[k] == '\n');
		}
	}
	if (x->zError)
		printf("no ideas: %s\n", x->zError);
	llmrun_print_usage(&x->r);
}

static int exec_ideas(int argc, char **argv)
{
	struct ideas_run x = {0};
	x.r.self = &cmd_ideas_entry;
	x.r.cmd = FL_IDEAS;
	x.r.zDoing = "thinking of ideas";
	x.r.on = on_note;
	x.r.arg = &x;
	char err[KL_ERRLEN];
	int rc = llmrun_start(&x.r, argc, argv);
	struct pipeline *p = rc == 0 ? driver_llm(x.r.drv, err) : NULL;
	if (rc == 0 && (!p || pipeline_ideas(p, x.r.parent, x.r.f.n, 0, err) < 0)) {
		fprintf(stderr, "kloop: %s\n", err);
		rc = 2;
	}
	if (rc == 0) {
		llmrun_wait(&x.r);
		print(&x);
		rc = x.nIdea ? 0 : 1;
	}
	if (llmrun_free(&x.r) < 0)
		rc = 2; /* events lost: the journal could not be written */
	free(x.aIdea);
	free(x.zError);
	return rc;
}

const struct cmd_entry cmd_ideas_entry = {
    .name = "ideas",
    .usage = "TASK [--from SOURCE] [-n N] [--session FILE] [--json] [--provider "
             "openai|anthropic|command] "
             "[--model NAME] [--base-url URL] [--backend host|cuda] [--no-eval]",
    .help = "exit 0 with ideas, 1 without, 2 usage or setup error",
    .exec = exec_ideas,
};
