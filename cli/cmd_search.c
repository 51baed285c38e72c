/*
 * cmd_search.c - `kloop search TASK [flags]`: the automatic search
 * (sessions/search/search.h) without a screen: one line per event a person would
 * want (or one JSON object per event with --json), then the population and
 * the best candidate's lineage.  `--session F` on an unfinished search
 * resumes it.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cmd.h"
#include "report.h"
#include "searchopts.h"

static void summary(struct searchopts *o)
{
	const struct state *st = driver_state(o->drv);
	/* the session's best, as every front end names it (state_best()) */
	const struct cand *best = state_best(st, NULL, NULL);
	strbuf sb = STRBUF_INIT;
	if (best)
		search_lineage(st, best->id, &sb);
	if (o->json) {
		cJSON *e = cJSON_CreateObject();
		cJSON_AddStringToObject(e, "type", "summary");
		cJSON_AddStringToObject(e, "session", driver_path(o->drv));
		if (best)
			cJSON_AddItemToObject(e, "best", state_cand_json(best));
		else
			cJSON_AddNullToObject(e, "best");
		cJSON *lin = cJSON_AddArrayToObject(e, "lineage");
		for (const struct cand *c = best; c;
		     c = c->nParent ? state_cand(st, c->aParent[0]) : NULL)
			cJSON_AddItemToArray(lin, state_cand_json(c));
		cJSON *all = state_to_json(st);
		cJSON_AddItemToObject(e, "search", cJSON_DetachItemFromObject(all, "search"));
		cJSON_AddItemToObject(e, "candidates",
		                      cJSON_DetachItemFromObject(all, "candidates"));
		cJSON_AddItemToObject(e, "llm", cJSON_DetachItemFromObject(all, "llm"));
		cJSON_Delete(all);
		char *z = json_text(e, 0);
		printf("%s\n", z);
		free(z);
		cJSON_Delete(e);
	} else {
		printf("\n");
		searchopts_population(o);
		if (best)
			printf("\nbest: #%d %s, %.4g ms, %.3gx the baseline\nlineage: %s\n",
			       best->id, best->zName, best->timeMs, best->speedup, sb.buf);
		else
			printf(
			    "\nno candidate holds the best: none is correct with a trusted time\n");
		char bt[160];
		report_best_text(st, bt, sizeof bt);
		printf("session: %s\n", bt);
		char tok[160];
		state_llm_tokens_text(&st->llm, NULL, tok, sizeof tok);
		printf("LLM: %d requests, %s, $%.4f\n", st->llm.nRequests, tok, st->llm.cost);
	}
	sb_free(&sb);
}

/* torch.compile's baseline still compiling in the background when the
 * search ends: waited for, so that the results carry their speedup against
 * it, while a worker is there to finish it */
static void wait_baselines(struct searchopts *o)
{
	double t0 = now_s();
	int said = 0;
	while (driver_baselines_pending(o->drv) && now_s() - t0 < 900) {
		if (!said++)
			fprintf(stderr, "kloop: waiting for torch.compile's baseline (compiling in "
			                "the background)\n");
		loop_once(o->l, 1.0);
	}
}

/* the search waits at the human gate (a session resumed with its ideas
 * pending): no one here can decide them, so say how to go on rather than
 * wait silently; the session keeps them.  Returns 3. */
static int at_gate(struct searchopts *o)
{
	const struct state *st = driver_state(o->drv);
	int n = 0;
	for (int i = 0; i < st->nIdea; i++)
		n += st->aIdea[i].status == IDEA_PENDING;
	const char *z = driver_path(o->drv);
	fprintf(stderr,
	        "kloop: the search waits at the human gate: %d idea%s wait%s for a person to "
	        "accept or reject %s.\n"
	        "  go on in the workbench:  kloop open --session %s\n"
	        "  or in the shell:         kloop shell --session %s   (then: ideas, accept ID, "
	        "reject ID)\n"
	        "  or let the search decide: kloop search --session %s --gate auto\n",
	        n, n == 1 ? "" : "s", n == 1 ? "s" : "", n == 1 ? "it" : "them", z, z, z);
	return 3;
}

/* a person's answer at the gate: 'a', 'r' or 'q' for a, r, q or the word
 * (accept, reject, quit; any case, blanks around it), 0 for an empty line
 * (asked again), -1 for anything else (refused: never read by its first
 * letter, so that "rx" is not a reject) */
static int gate_answer(const char *zLine)
{
	static const char *const words[] = {"accept", "reject", "quit"};
	while (*zLine == ' ' || *zLine == '\t')
		zLine++;
	size_t n = strlen(zLine);
	while (n && strchr(" \t\r\n", zLine[n - 1]))
		n--;
	if (!n)
		return 0;
	for (size_t i = 0; i < sizeof words / sizeof *words; i++)
		if ((n == 1 && tolower((unsigned char)zLine[0]) == words[i][0]) ||
		    (n == strlen(words[i]) && !strncasecmp(zLine, words[i], n)))
			return words[i][0];
	return -1;
}

/* the human gate on a terminal: each pending idea put to the person, who
 * accepts it (a), rejects it (r) or leaves the rest for later (q, or the
 * end of input: the search stops there, its ideas kept for the workbench,
 * the shell or a later kloop search).  0 to go on, else at_gate()'s 3. */
static int gate_prompt(struct searchopts *o)
{
	const struct state *st = driver_state(o->drv);
	int n = 0, *ids = xcalloc((size_t)st->nIdea + 1, sizeof *ids);
	for (int i = 0; i < st->nIdea; i++)
		if (st->aIdea[i].status == IDEA_PENDING)
			ids[n++] = st->aIdea[i].id;
	char err[KL_ERRLEN], *line = NULL;
	size_t cap = 0;
	int rc = 0;
	for (int k = 0; k < n && !rc; k++) {
		const struct state_idea *d = state_idea(driver_state(o->drv), ids[k]);
		if (!d || d->status != IDEA_PENDING)
			continue;
		char *t = term_clean(d->zTitle, 0), *ds = term_clean(d->zDescription, TERM_KEEP_NL);
		fprintf(stderr, "\nidea %d [%s] for #%d: %s\n  %s\n", d->id, d->zCategory,
		        d->parent, t, ds);
		free(t);
		free(ds);
		for (;;) {
			fprintf(stderr, "accept, reject, or quit (the ideas wait)? [a/r/q] ");
			fflush(stderr);
			int ans = getline(&line, &cap, stdin) < 0 ? 'q' : gate_answer(line);
			if (ans == 'q') {
				rc = at_gate(o);
				break;
			}
			if (ans < 0) {
				line[strcspn(line, "\r\n")] = 0;
				char *z = term_clean(line, 0);
				fprintf(
				    stderr,
				    "kloop: '%.40s' is not an answer: a (accept), r (reject) or q "
				    "(quit, the ideas wait)\n",
				    z);
				free(z);
			}
			int r = 1;
			if (ans == 'a' || ans == 'r') {
				struct pipeline *p = driver_llm(o->drv, err);
				r = !p           ? -1
				    : ans == 'a' ? pipeline_idea_accept(p, ids[k], err)
				                 : pipeline_idea_reject(p, ids[k], NULL, err);
			}
			if (r < 0)
				fprintf(stderr, "kloop: %s\n", err);
			if (r <= 0)
				break;
		}
	}
	free(line);
	free(ids);
	if (!rc)
		search_poke(o->s);
	return rc;
}

static int exec_search(int argc, char **argv)
{
	struct searchopts o = {.self = &cmd_search_entry};
	int rc = searchopts_parse(&o, argc, argv, 1);
	if (rc == 0)
		rc = searchopts_open(&o);
	char err[KL_ERRLEN];
	if (rc == 0) {
		o.s = search_new(o.drv, searchopts_note, &o);
		if (search_start(o.s, o.settings, err) < 0) {
			fprintf(stderr, "kloop: %s\n", err);
			rc = 2;
		}
	}
	/* at the human gate: a person on the terminal decides; with no one
	 * there, say how to go on */
	int person = isatty(STDIN_FILENO) && isatty(STDERR_FILENO);
	while (rc == 0 && !search_done(o.s)) {
		if (search_waiting(o.s))
			rc = person ? gate_prompt(&o) : at_gate(&o);
		else
			loop_once(o.l, 1.0);
	}
	if (rc == 0) {
		wait_baselines(&o);
		summary(&o);
		const struct state *st = driver_state(o.drv);
		const struct cand *best = state_best(st, NULL, NULL);
		rc = best && best->speedup > 1 ? 0 : 1;
	}
	if (searchopts_free(&o) < 0)
		rc = 2; /* events lost: the journal could not be written */
	return rc;
}

static void more_help(FILE *f)
{
	search_settings_help(f, 0);
}

const struct cmd_entry cmd_search_entry = {
    .name = "search",
    .usage = "TASK [--rounds R] [--ideas N] [--branches B] [--translations T] [--parents P] "
             "[--policy islands|greedy|random] [--seed S] [--gate auto|human] [--budget-usd X] "
             "[--max-candidates M] [--time SECONDS] [--target SPEEDUP] [--no-improve R] "
             "[--sweep-only] [--sweep grid|random] [--sweep-points K] [--crossover 0|1|2] "
             "[--no-crossover] [--overlap N] "
             "[--suspect X] [--bandwidth GBS] [--peak-tflops T] [--quick-stop X] [--ab-pairs N] "
             "[--from SOURCE] [--session F] [--json] [--provider openai|anthropic|command] "
             "[--model NAME] [--base-url URL] [--command CMD] [--fix N] [--backend host|cuda] "
             "[--budget S] [--trials N] [...]",
    .help = "exit 0 when a correct candidate faster than the baseline was found, 1 "
            "otherwise, 2 usage or task error, 3 when a resumed search waits for a person at "
            "the human gate; --session F resumes; a budget of 0 (--rounds 0, --time 0, "
            "--max-candidates 0, --budget-usd 0) is no limit",
    .exec = exec_search,
    .more_help = more_help,
};
