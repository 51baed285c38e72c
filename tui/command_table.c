/*
 * command_table.c - every command of the `:` line and `kloop shell`, one
 * entry each: its name and alias, its arguments, its usage and help line,
 * and its handler (tui/verbs.h); and what reads the table as a whole: a
 * command found by name, the nearest to a typo, the help, and the help
 * command itself.  A `kloop` verb of the same name (cli/) takes its help
 * line from here.
 */
#include "verbs.h"

#include <stdio.h>
#include <string.h>

#include "actions.h"
#include "search_settings.h"
#include "suggest.h"

/* `help set`: the settings' keys, from their table (search_settings.h) */
static const char *set_keys(void)
{
	static char buf[1024];
	snprintf(buf, sizeof buf, "keys: %s (`kloop search --help` says each one's range)",
	         search_setting_keys());
	return buf;
}

const struct commands_def commands_table[] = {
    {
        .name = "ideas",
        .aArg = {ARG_COUNT},
        .usage = "ideas [N]",
        .help = "ask the LLM for N ideas (default 3), in natural language, for making a candidate "
                "faster: the TUI's selected one, the REPL's best (kloop ideas: SOURCE)",
        .run = verb_ideas,
    },
    {
        .name = "accept",
        .aArg = {ARG_IDEA},
        .nRequired = 1,
        .usage = "accept ID",
        .help = "accept idea ID (implement writes its code)",
        .run = verb_accept,
    },
    {
        .name = "reject",
        .aArg = {ARG_IDEA},
        .nRequired = 1,
        .usage = "reject ID",
        .help = "reject idea ID",
        .run = verb_reject,
    },
    {
        .name = "revise",
        .aArg = {ARG_IDEA, ARG_TEXT},
        .nRequired = 1,
        .usage = "revise ID [TEXT]",
        .help = "rewrite idea ID: with TEXT, that text; without, in $EDITOR",
        .run = verb_revise,
    },
    {
        .name = "implement",
        .aArg = {ARG_COUNT},
        .usage = "implement [B]",
        .help = "have the LLM write B implementations (default 1) of each accepted idea (kloop "
                "implement: of --idea) and evaluate them",
        .run = verb_implement,
    },
    {
        .name = "edit",
        .aArg = {ARG_CAND},
        .nRequired = 1,
        .usage = "edit ID",
        .help = "edit a copy of candidate ID in $EDITOR; when saved, it becomes a new human "
                "candidate and is benchmarked",
        .run = verb_edit,
    },
    {
        .name = "bench",
        .aArg = {ARG_CAND, ARG_TERMS},
        .nRequired = 1,
        .usage = "bench ID [--on W | --ab OTHER]",
        .help = "compile, check and time candidate ID again (--on W: on worker W only, as the "
                "Activity pane and `jobs` number them; --ab OTHER: then time it against "
                "candidate OTHER alternately, an interleaved A/B)",
        .run = verb_bench,
    },
    {
        .name = "show",
        .aArg = {ARG_CAND},
        .nRequired = 1,
        .usage = "show ID",
        .help = "the candidate's summary, results and source",
        .run = verb_show,
    },
    {
        .name = "diff",
        .aArg = {ARG_CAND, ARG_CAND},
        .nRequired = 1,
        .usage = "diff ID [ID]",
        .help = "what changed from the candidate's parent (or between two candidates), by function "
                "and line",
        .run = verb_diff,
    },
    {
        .name = "export",
        .aArg = {ARG_CAND, ARG_FILE, ARG_TERMS},
        .nRequired = 2,
        .usage = "export ID FILE",
        .help = "write a candidate as its plain source (to FILE, --source OUT or --cuda OUT.cu) "
                "or as a KernelBench ModelNew module (--kernelbench OUT.py [--problem "
                "PROBLEM.py])",
        .run = verb_export,
    },
    {
        .name = "add",
        .aArg = {ARG_FILE},
        .nRequired = 1,
        .usage = "add FILE",
        .help = "add the source in FILE (.c, .cpp or .cu) as a new human candidate and evaluate it",
        .run = verb_add,
    },
    {
        .name = "profile",
        .aArg = {ARG_CAND},
        .nRequired = 1,
        .usage = "profile ID",
        .help = "run Nsight Compute once on a candidate's kernels: bandwidth, occupancy and top "
                "stall join its results and the LLM's prompts (kloop profile: with --session)",
        .run = verb_profile,
    },
    {
        .name = "baseline",
        .aArg = {ARG_TEXT},
        .usage = "baseline [remeasure]",
        .help = "the session's baseline on each device, which every speedup is against, and "
                "what this run's workers timed the reference at; remeasure: time the reference "
                "again (the workers start afresh) and rescale every speedup (journaled)",
        .run = verb_baseline,
    },
    {
        .name = "sort",
        .aArg = {ARG_COLUMN, ARG_ORDER},
        .nRequired = 1,
        .usage = "sort COLUMN [asc|desc]",
        .help = "sort the population by id, parent, origin, status, time, speedup or idea",
        .run = verb_sort,
    },
    {
        .name = "filter",
        .aArg = {ARG_TERMS},
        .usage = "filter [EXPR...]",
        .help = "show only matching candidates: correct, origin=llm, speedup>1.5, idea~tile (all "
                "must match; no EXPR: show all)",
        .run = verb_filter,
    },
    {
        .name = "list",
        .alias = "ls",
        .usage = "list",
        .help = "the population table, as sorted and filtered",
        .run = verb_list,
    },
    {
        .name = "jobs",
        .usage = "jobs",
        .help = "the evaluations and LLM requests in flight",
        .run = verb_jobs,
    },
    {
        .name = "archive",
        .aArg = {ARG_TEXT},
        .usage = "archive QUERY | archive show|idea|cand ID",
        .help = "the innovation archive: wins and dead ends of every session, searchable across "
                "tasks; show an entry, or bring it into a session as an idea or a candidate",
        .run = verb_archive,
    },
    {
        .name = "step",
        .aArg = {ARG_INT},
        .usage = "step [N]",
        .help = "replay: go N events forward (negative: back; default 1)",
        .replayOnly = 1,
        .run = verb_step,
    },
    {
        .name = "goto",
        .aArg = {ARG_INT},
        .nRequired = 1,
        .usage = "goto K",
        .help = "replay: show the state after the first K events",
        .replayOnly = 1,
        .run = verb_goto,
    },
    {
        .name = "continue",
        .aArg = {ARG_FILE},
        .usage = "continue [FILE]",
        .help = "replay: continue from this point as a new live session (a new journal)",
        .replayOnly = 1,
        .run = verb_continue,
    },
    {
        .name = "help",
        .alias = "?",
        .aArg = {ARG_COMMAND},
        .usage = "help [COMMAND]",
        .help = "list the commands, or one command's help",
        .run = verb_help,
    },
    {
        .name = "quit",
        .alias = "q",
        .usage = "quit",
        .help = "quit (asks while jobs run; quit! does not)",
        .run = verb_quit,
    },
    /* the search (sessions/search/search.h) */
    {
        .name = "search",
        .aArg = {ARG_TEXT},
        .nRequired = 1,
        .usage = "search start|pause|resume|stop|step|status",
        .help = "the automatic search: rounds of parents, sweeps, crossover, LLM ideas and "
                "implementations; in a session, start it, pause or resume it (the key R does "
                "either), stop it, run one round (step), or show its rounds and why each parent "
                "was chosen (status)",
        .run = verb_search,
    },
    {
        .name = "pin",
        .aArg = {ARG_CAND},
        .nRequired = 1,
        .usage = "pin ID",
        .help = "search: candidate ID is a parent of the next round",
        .run = verb_pin,
    },
    {
        .name = "ban",
        .aArg = {ARG_TEXT},
        .nRequired = 1,
        .usage = "ban ID|CATEGORY",
        .help = "search: candidate ID is never a parent again, or the gate rejects ideas of "
                "CATEGORY",
        .run = verb_ban,
    },
    {
        .name = "unban",
        .aArg = {ARG_CAND},
        .nRequired = 1,
        .usage = "unban ID",
        .help = "search: candidate ID may be a parent again",
        .run = verb_unban,
    },
    {
        .name = "prefer",
        .aArg = {ARG_TEXT},
        .nRequired = 1,
        .usage = "prefer CATEGORY",
        .help = "search: the gate accepts ideas of CATEGORY over the others for the same parent",
        .run = verb_prefer,
    },
    {
        .name = "clear",
        .aArg = {ARG_CAND},
        .nRequired = 1,
        .usage = "clear ID",
        .help = "search: suspect ID (an implausible speedup) was checked by a person: it may be "
                "a parent and the best",
        .run = verb_clear,
    },
    {
        .name = "idea",
        .aArg = {ARG_TEXT},
        .nRequired = 1,
        .usage = "idea TEXT",
        .help = "search: an idea of your own, accepted and implemented in the search's round",
        .run = verb_idea,
    },
    {
        .name = "gate",
        .aArg = {ARG_TEXT},
        .nRequired = 1,
        .usage = "gate auto|human",
        .help = "search: ideas accepted by the search (auto) or waiting for you in the Ideas pane "
                "(human; the round waits until each is accepted or rejected)",
        .run = verb_gate,
    },
    {
        .name = "set",
        .aArg = {ARG_TEXT},
        .nRequired = 2,
        .usage = "set KEY VALUE",
        .help = "search: change a setting while it runs, or before it starts (its first round "
                "obeys it); `help set` lists the keys",
        .run = verb_set,
        .more = set_keys,
    },
    {
        .name = "cancel",
        .aArg = {ARG_TEXT},
        .nRequired = 1,
        .usage = "cancel ID|rN|all",
        .help = "stop the evaluation of candidate ID, LLM request N (rN, as `jobs` lists it), "
                "or all of them",
        .run = verb_cancel,
    },
    {
        .name = "compare",
        .aArg = {ARG_CAND, ARG_CAND},
        .nRequired = 2,
        .usage = "compare A B",
        .help = "two candidates side by side: their metrics, then the diff from A to B",
        .run = verb_compare,
    },
    {
        .name = "prompt",
        .aArg = {ARG_CAND},
        .nRequired = 1,
        .usage = "prompt ID",
        .help = "what the LLM was asked for candidate ID (its llm_request)",
        .run = verb_prompt,
    },
    {
        .name = "reply",
        .aArg = {ARG_CAND},
        .nRequired = 1,
        .usage = "reply ID",
        .help = "what the LLM answered for candidate ID, with its explanation of the change",
        .run = verb_reply,
    },
    {.name = NULL},
};

const struct commands_def *commands_find(const char *z)
{
	for (const struct commands_def *d = commands_table; d->name; d++)
		if (!strcmp(d->name, z) || (d->alias && !strcmp(d->alias, z)))
			return d;
	return NULL;
}

const char *commands_nearest(const char *z)
{
	const char *az[256];
	size_t n = 0;
	for (const struct commands_def *d = commands_table; d->name && n + 2 <= 256; d++) {
		az[n++] = d->name;
		if (d->alias)
			az[n++] = d->alias;
	}
	return suggest_nearest(z, az, n);
}

int commands_help(strbuf *sb, const char *zName, int bReplay)
{
	if (zName) {
		const struct commands_def *d = commands_find(zName);
		if (!d)
			return -1;
		sb_addf(sb, "%s\n    %s\n", d->usage, d->help);
		if (d->more)
			sb_addf(sb, "    %s\n", d->more());
		if (d->alias)
			sb_addf(sb, "    (also: %s)\n", d->alias);
		return 0;
	}
	for (const struct commands_def *d = commands_table; d->name; d++)
		if (bReplay || !d->replayOnly)
			sb_addf(sb, "  %-24s %s\n", d->usage, d->help);
	return 0;
}

/* help [NAME]: the table, or one command of it, on a page */
int verb_help(struct actions_front *f, const struct commands_line *c)
{
	strbuf sb = STRBUF_INIT;
	if (commands_help(&sb, c->nArg ? c->azArg[0] : NULL, f->rp != NULL) < 0) {
		sb_free(&sb);
		return actions_fail(f, "help: unknown command '%s'", c->azArg[0]);
	}
	f->h->page(f->arg, "help", sb.buf, 0);
	sb_free(&sb);
	return 0;
}
