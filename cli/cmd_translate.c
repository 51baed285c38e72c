/*
 * cmd_translate.c - `kloop translate PROBLEM [-b T]`: round 0 of a search
 * alone: T translations of the task's reference (a KernelBench problem's
 * PyTorch module) into candidates, in parallel, each sent back with the
 * fix prompt on failure, and their verdicts.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "searchopts.h"

static int exec_translate(int argc, char **argv)
{
	struct searchopts o = {.self = &cmd_translate_entry};
	int rc = searchopts_parse(&o, argc, argv, 0);
	if (rc == 0)
		rc = searchopts_open(&o);
	char err[KL_ERRLEN];
	int before = rc == 0 ? driver_state(o.drv)->maxId : 0;
	struct search_settings set;
	search_settings_from_json(&set, o.settings);
	struct pipeline *p = rc == 0 ? driver_llm(o.drv, err) : NULL;
	if (rc == 0 && (!p || pipeline_translate(p, (int)set.translations, err) < 0)) {
		fprintf(stderr, "kloop: %s\n", err);
		rc = 2;
	}
	if (rc == 0) {
		while (pipeline_busy(p) || driver_jobs(o.drv))
			loop_once(o.l, 1.0);
		const struct state *st = driver_state(o.drv);
		rc = 1;
		cJSON *arr = cJSON_CreateArray();
		for (int i = 0; i < st->nCand; i++) {
			const struct cand *c = &st->aCand[i];
			if (c->id <= before)
				continue;
			rc = c->status == STATUS_CORRECT ? 0 : rc;
			cJSON_AddItemToArray(arr, state_cand_json(c));
		}
		if (o.json) {
			cJSON *e = cJSON_CreateObject();
			cJSON_AddStringToObject(e, "type", "summary");
			cJSON_AddStringToObject(e, "session", driver_path(o.drv));
			cJSON_AddItemToObject(e, "candidates", arr);
			char *z = json_text(e, 0);
			printf("%s\n", z);
			free(z);
			cJSON_Delete(e);
		} else {
			cJSON_Delete(arr);
			printf("\n");
			searchopts_population(&o);
		}
	}
	if (searchopts_free(&o) < 0)
		rc = 2; /* events lost: the journal could not be written */
	return rc;
}

static void more_help(FILE *f)
{
	search_settings_help(f, SS_TRANSLATE);
}

const struct cmd_entry cmd_translate_entry = {
    .name = "translate",
    .usage = "PROBLEM [-b T] [--session F] [--json] [--provider openai|anthropic|command] "
             "[--model NAME] [--base-url URL] [--command CMD] [--fix N] [--backend host|cuda] "
             "[...]",
    .help = "translate a task's reference (a KernelBench problem file) into T candidates with "
            "the LLM and evaluate them (exit 0 when one is correct, 1 otherwise, 2 usage or "
            "task error)",
    .exec = exec_translate,
    .more_help = more_help,
};
