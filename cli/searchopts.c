/*
 * searchopts.c - flags, session and printing shared by `kloop search` and
 * `kloop translate`.
 */
#include "searchopts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "torchext.h"
#include "llm_config.h"
#include "util.h"

#define SOURCE_MAX (8u << 20)

/* a copy of z that a terminal shows and never obeys: control characters
 * shown escaped ("\e[2J", "\x07"), as in every other command; newlines and
 * tabs kept */
static char *terminal_safe(const char *z)
{
	return term_clean(z, TERM_KEEP_NL | TERM_KEEP_TAB);
}

int searchopts_parse(struct searchopts *o, int argc, char **argv, int bSearch)
{
	const struct cmd_entry *self = o->self;
	memset(o, 0, sizeof *o);
	o->self = self;
	o->search = bSearch;
	int rc = flags_parse(self, bSearch ? FL_SEARCH : FL_TRANSLATE, argc, argv, 0, 1, &o->f);
	if (rc)
		return rc;
	struct flags *f = &o->f;
	o->settings = f->settings ? f->settings : cJSON_CreateObject();
	f->settings = NULL;
	const cJSON *cx = search_setting_get(o->settings, SS_crossover);
	if (f->noCrossover && cJSON_IsNumber(cx) && cx->valuedouble != 0) {
		fprintf(stderr,
		        "kloop: %s: --no-crossover contradicts --crossover %g (give one of them)\n",
		        self->name, cx->valuedouble);
		return 2;
	}
	if (f->noCrossover)
		search_setting_put(o->settings, SS_crossover, 0);
	o->lo.zTask = f->nPos ? f->azPos[0] : NULL;
	o->lo.zSession = f->zSession;
	o->lo.zShapes = f->zShapes;
	o->lo.zReference = f->zReference;
	o->zFrom = f->zFrom;
	o->json = f->json;
	o->sweepOnly = f->sweepOnly;
	if (!o->lo.zTask && !o->lo.zSession) {
		fprintf(stderr, "kloop: %s: a TASK (or --session FILE) is needed\n", self->name);
		return cmd_usage(self);
	}
	/* a session to resume that is not there is a typo, not a new search
	 * on the default task */
	if (!o->lo.zTask && !path_exists(o->lo.zSession)) {
		fprintf(stderr,
		        "kloop: %s: %s: no such session file (to start a new search in it, give "
		        "the TASK too: kloop %s TASK --session %s)\n",
		        self->name, o->lo.zSession, self->name, o->lo.zSession);
		return 2;
	}
	const char *gate = cJSON_GetStringValue(search_setting_get(o->settings, SS_gate));
	/* kloop search asks a person on a terminal (cmd_search.c); translate
	 * has no gate to ask at, and a pipe no person */
	if (gate && !strcmp(gate, "human") && (!bSearch || !isatty(STDIN_FILENO))) {
		fprintf(stderr,
		        "kloop: --gate human needs a person at the keyboard: run kloop search on a "
		        "terminal, or use the workbench (`kloop TASK`, then :search start) or "
		        "`kloop shell`\n");
		return 2;
	}
	o->providerGiven = f->cfg.zProvider != NULL;
	if (bSearch && (o->sweepOnly || !o->providerGiven)) {
		if (!o->sweepOnly)
			fprintf(stderr,
			        "kloop: no LLM provider is configured: --sweep-only implied "
			        "(sweeps over tunables and crossover only; give --provider or "
			        "--command for LLM ideas)\n");
		search_setting_put(o->settings, SS_sweep_only, 1);
	}
	if (!bSearch && !o->providerGiven) {
		fprintf(stderr, "kloop: translate: no LLM provider: give --provider (with --model "
		                "and --base-url) or --command CMD\n");
		return 2;
	}
	/* an LLM that cannot be asked is said before anything runs (as kloop
	 * ideas does), not after the seeds' evaluation as a round's failure */
	struct llm_config lc;
	char err[KL_ERRLEN];
	if (o->providerGiven && !o->sweepOnly && llm_config_from(&lc, &f->cfg, err) < 0) {
		fprintf(stderr, "kloop: %s: %s\n", self->name, err);
		return 2;
	}
	return 0;
}

/* n's ideas are all new (none of them deduplicated), and there are some */
static int ideas_new(const struct driver *drv, const struct driver_note *n)
{
	for (int i = 0; i < n->nIdea; i++) {
		const struct state_idea *d = state_idea(driver_state(drv), n->aIdea[i]);
		if (d && d->duplicateOf)
			return 0;
	}
	return n->nIdea > 0;
}

static void on_driver(void *arg, const struct driver_note *n)
{
	struct searchopts *o = arg;
	enum driver_note_kind kind = n->kind;
	int cand = n->cand;
	const char *zText = n->zText;
	if (kind == DRIVER_FINISHED && o->drv) {
		const struct cand *c = state_cand(driver_state(o->drv), cand);
		if (!c)
			return;
		if (o->json) {
			cJSON *e = cJSON_CreateObject();
			cJSON_AddStringToObject(e, "type", "verdict");
			cJSON_AddItemToObject(e, "candidate", state_cand_json(c));
			char *z = json_text(e, 0);
			printf("%s\n", z);
			free(z);
			cJSON_Delete(e);
		} else {
			char v[600];
			driver_verdict(c, v, sizeof v);
			char *safe = terminal_safe(v);
			char rnd[32] = "";
			if (c->round)
				snprintf(rnd, sizeof rnd, ", round %d", c->round);
			printf("  #%d %s (%s%s): %s\n", c->id, c->zName, c->zOrigin, rnd, safe);
			free(safe);
		}
		fflush(stdout);
	} else if ((kind == DRIVER_LOG || kind == DRIVER_MESSAGE) && zText) {
		char *safe = terminal_safe(zText);
		fprintf(stderr, "kloop: %s\n", safe);
		free(safe);
	} else if (kind == DRIVER_IDEAS && !o->json && o->drv && !ideas_new(o->drv, n)) {
		/* a request that brought no ideas, or some proposed before
		 * (deduplicated): which one, and why */
		strbuf sb = STRBUF_INIT;
		driver_describe(o->drv, n, &sb);
		char *safe = terminal_safe(sb.buf ? sb.buf : "");
		printf("%s\n", safe);
		free(safe);
		sb_free(&sb);
		fflush(stdout);
	}
	if (o->s && kind != DRIVER_CHANGED)
		search_poke(o->s);
}

void searchopts_note(void *arg, const char *zLine, const cJSON *ev)
{
	struct searchopts *o = arg;
	if (o->json) {
		char *z;
		if (ev) {
			z = json_text(ev, 0);
		} else {
			if (!zLine)
				return;
			cJSON *e = cJSON_CreateObject();
			cJSON_AddStringToObject(e, "type", "log");
			cJSON_AddStringToObject(e, "text", zLine);
			z = json_text(e, 0);
			cJSON_Delete(e);
		}
		printf("%s\n", z);
		free(z);
	} else if (zLine) {
		char *safe = terminal_safe(zLine);
		printf("%s\n", safe);
		free(safe);
	}
	fflush(stdout);
}

static int add_from(struct searchopts *o, char *err)
{
	const char *base = strrchr(o->zFrom, '/') ? strrchr(o->zFrom, '/') + 1 : o->zFrom;
	if (!torchext_known_name(base))
		return kl_err(err,
		              "%s: unknown source language (expected a .c, .cpp or .cu file, or a "
		              "KernelBench ModelNew .py)",
		              o->zFrom);
	strbuf src = STRBUF_INIT;
	if (read_file(o->zFrom, &src, SOURCE_MAX, err) < 0)
		return -1;
	int id = driver_add(o->drv, "seed", NULL, 0, base, src.buf ? src.buf : "", NULL, err);
	sb_free(&src);
	if (id < 0 || driver_bench(o->drv, id, err) < 0)
		return -1;
	o->first = id;
	return 0;
}

int searchopts_open(struct searchopts *o)
{
	char err[KL_ERRLEN];
	int fresh = !o->lo.zSession || !path_exists(o->lo.zSession);
	if (o->zFrom && !fresh) {
		fprintf(stderr, "kloop: --from starts a new session; %s exists already\n",
		        o->lo.zSession);
		return 2;
	}
	o->lo.bNoSeeds = o->zFrom != NULL || !o->search;
	/* a search's candidates run on the GPU while torch.compile's baseline
	 * compiles (waited for at its end) */
	o->lo.bDeferCompile = o->search;
	o->l = loop_new();
	o->drv = driver_open(o->l, &o->f.cfg, &o->lo, on_driver, o, err);
	if (!o->drv || (o->zFrom && add_from(o, err) < 0)) {
		fprintf(stderr, "kloop: %s\n", err);
		return 2;
	}
	if (!o->json)
		fprintf(stderr, "kloop: session %s\n", driver_path(o->drv));
	return 0;
}

void searchopts_population(const struct searchopts *o)
{
	const struct state *st = driver_state(o->drv);
	const struct cand *best = state_best(st, NULL, NULL);
	printf("%-5s %-22s %-10s %-8s %-6s %-14s %10s %9s  %s\n", "id", "name", "origin", "parents",
	       "round", "status", "time (ms)", "speedup", "idea");
	for (int i = 0; i < st->nCand; i++) {
		const struct cand *c = &st->aCand[i];
		char par[32] = "-", tm[32] = "-", sp[32] = "-";
		if (c->nParent == 1)
			snprintf(par, sizeof par, "%d", c->aParent[0]);
		else if (c->nParent == 2)
			snprintf(par, sizeof par, "%d,%d", c->aParent[0], c->aParent[1]);
		if (c->timeMs >= 0)
			snprintf(tm, sizeof tm, "%.4g", c->timeMs);
		if (c->speedup >= 0)
			snprintf(sp, sizeof sp, "%.3gx", c->speedup);
		const char *mark = c == best ? " *best*" : "";
		if (state_search_excluded(st, c->id))
			mark = state_search_suspect(st, c->id) ? " (suspect)" : " (banned)";
		char *idea = terminal_safe(c->zIdea ? c->zIdea : "");
		printf("%-5d %-22.22s %-10s %-8s %-6d %-14s %10s %9s  %.50s%s\n", c->id, c->zName,
		       c->zOrigin, par, c->round, c->zStatus, tm, sp, idea, mark);
		free(idea);
	}
}

int searchopts_free(struct searchopts *o)
{
	int rc = driver_saved(o->drv, NULL);
	search_free(o->s);
	driver_close(o->drv);
	loop_free(o->l);
	cJSON_Delete(o->settings);
	flags_free(&o->f);
	return rc;
}
