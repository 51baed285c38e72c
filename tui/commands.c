/*
 * commands.c - the command table, the parser (libedit's tokenizer splits
 * the words, with sh-like quoting) and completion for kloop's command line.
 */
#include "commands.h"

#include <ctype.h>
#include <errno.h>
#include <histedit.h>
#include <stdlib.h>
#include <string.h>

const struct commands_def commands_table[] = {
    {
        .id = CMD_IDEAS,
        .name = "ideas",
        .aArg = {ARG_COUNT},
        .usage = "ideas [N]",
        .help = "ask the LLM for N ideas (default 3) to improve the selected (REPL: the best) "
                "candidate",
    },
    {
        .id = CMD_ACCEPT,
        .name = "accept",
        .aArg = {ARG_IDEA},
        .nRequired = 1,
        .usage = "accept ID",
        .help = "accept idea ID (implement writes its code)",
    },
    {
        .id = CMD_REJECT,
        .name = "reject",
        .aArg = {ARG_IDEA},
        .nRequired = 1,
        .usage = "reject ID",
        .help = "reject idea ID",
    },
    {
        .id = CMD_REVISE,
        .name = "revise",
        .aArg = {ARG_IDEA, ARG_TEXT},
        .nRequired = 1,
        .usage = "revise ID [TEXT]",
        .help = "rewrite idea ID: with TEXT, that text; without, in $EDITOR",
    },
    {
        .id = CMD_IMPLEMENT,
        .name = "implement",
        .aArg = {ARG_COUNT},
        .usage = "implement [B]",
        .help = "have the LLM implement every accepted idea, B branches each (default 1)",
    },
    {
        .id = CMD_EDIT,
        .name = "edit",
        .aArg = {ARG_CAND},
        .nRequired = 1,
        .usage = "edit ID",
        .help = "edit a copy of candidate ID in $EDITOR; when saved, it becomes a new human "
                "candidate and is benchmarked",
    },
    {
        .id = CMD_BENCH,
        .name = "bench",
        .aArg = {ARG_CAND, ARG_TERMS},
        .nRequired = 1,
        .usage = "bench ID [--on W | --ab OTHER]",
        .help = "compile, check and time candidate ID again (--on W: on worker W only, as the "
                "Activity pane and `jobs` number them; --ab OTHER: then time it against "
                "candidate OTHER alternately, an interleaved A/B)",
    },
    {
        .id = CMD_SHOW,
        .name = "show",
        .aArg = {ARG_CAND},
        .nRequired = 1,
        .usage = "show ID",
        .help = "the candidate's summary, results and source",
    },
    {
        .id = CMD_DIFF,
        .name = "diff",
        .aArg = {ARG_CAND, ARG_CAND},
        .nRequired = 1,
        .usage = "diff ID [ID]",
        .help = "what changed from the candidate's parent (or between two candidates), by function "
                "and line",
    },
    {
        .id = CMD_EXPORT,
        .name = "export",
        .aArg = {ARG_CAND, ARG_FILE},
        .nRequired = 2,
        .usage = "export ID FILE",
        .help = "write candidate ID's source to FILE",
    },
    {
        .id = CMD_ADD,
        .name = "add",
        .aArg = {ARG_FILE},
        .nRequired = 1,
        .usage = "add FILE",
        .help = "add the source in FILE (.c, .cpp or .cu) as a new human candidate and evaluate it",
    },
    {
        .id = CMD_PROFILE,
        .name = "profile",
        .aArg = {ARG_CAND},
        .nRequired = 1,
        .usage = "profile ID",
        .help = "run Nsight Compute once on candidate ID's kernels: bandwidth, occupancy and "
                "top stall join its results and the LLM's prompts",
    },
    {
        .id = CMD_SORT,
        .name = "sort",
        .aArg = {ARG_COLUMN, ARG_ORDER},
        .nRequired = 1,
        .usage = "sort COLUMN [asc|desc]",
        .help = "sort the population by id, parent, origin, status, time, speedup or idea",
    },
    {
        .id = CMD_FILTER,
        .name = "filter",
        .aArg = {ARG_TERMS},
        .usage = "filter [EXPR...]",
        .help = "show only matching candidates: correct, origin=llm, speedup>1.5, idea~tile (all "
                "must match; no EXPR: show all)",
    },
    {
        .id = CMD_LIST,
        .name = "list",
        .alias = "ls",
        .usage = "list",
        .help = "the population table, as sorted and filtered",
    },
    {
        .id = CMD_JOBS,
        .name = "jobs",
        .usage = "jobs",
        .help = "the evaluations and LLM requests in flight",
    },
    {
        .id = CMD_ARCHIVE,
        .name = "archive",
        .aArg = {ARG_TEXT},
        .usage = "archive QUERY | archive show|idea|cand ID",
        .help = "search the innovation archive of all sessions (wins and dead ends); show an "
                "entry, or bring it in as an idea or a candidate",
    },
    {
        .id = CMD_STEP,
        .name = "step",
        .aArg = {ARG_INT},
        .usage = "step [N]",
        .help = "replay: go N events forward (negative: back; default 1)",
        .replayOnly = 1,
    },
    {
        .id = CMD_GOTO,
        .name = "goto",
        .aArg = {ARG_INT},
        .nRequired = 1,
        .usage = "goto K",
        .help = "replay: show the state after the first K events",
        .replayOnly = 1,
    },
    {
        .id = CMD_CONTINUE,
        .name = "continue",
        .aArg = {ARG_FILE},
        .usage = "continue [FILE]",
        .help = "replay: continue from this point as a new live session (a new journal)",
        .replayOnly = 1,
    },
    {
        .id = CMD_HELP,
        .name = "help",
        .alias = "?",
        .aArg = {ARG_COMMAND},
        .usage = "help [COMMAND]",
        .help = "list the commands, or one command's help",
    },
    {
        .id = CMD_QUIT,
        .name = "quit",
        .alias = "q",
        .usage = "quit",
        .help = "quit (asks while jobs run; quit! does not)",
    },
    /* the search (sessions/search.h) */
    {
        .id = CMD_SEARCH,
        .name = "search",
        .aArg = {ARG_TEXT},
        .nRequired = 1,
        .usage = "search start|pause|resume|stop|step|status",
        .help = "the automatic search: start it, pause or resume it (the key R does either), "
                "stop it, run one round (step), or show its rounds and why each parent was "
                "chosen (status)",
    },
    {
        .id = CMD_PIN,
        .name = "pin",
        .aArg = {ARG_CAND},
        .nRequired = 1,
        .usage = "pin ID",
        .help = "search: candidate ID is a parent of the next round",
    },
    {
        .id = CMD_BAN,
        .name = "ban",
        .aArg = {ARG_TEXT},
        .nRequired = 1,
        .usage = "ban ID|CATEGORY",
        .help = "search: candidate ID is never a parent again, or the gate rejects ideas of "
                "CATEGORY",
    },
    {
        .id = CMD_UNBAN,
        .name = "unban",
        .aArg = {ARG_CAND},
        .nRequired = 1,
        .usage = "unban ID",
        .help = "search: candidate ID may be a parent again",
    },
    {
        .id = CMD_PREFER,
        .name = "prefer",
        .aArg = {ARG_TEXT},
        .nRequired = 1,
        .usage = "prefer CATEGORY",
        .help = "search: the gate accepts ideas of CATEGORY over the others for the same parent",
    },
    {
        .id = CMD_CLEAR,
        .name = "clear",
        .aArg = {ARG_CAND},
        .nRequired = 1,
        .usage = "clear ID",
        .help = "search: suspect ID (an implausible speedup) was checked by a person: it may be "
                "a parent and the best",
    },
    {
        .id = CMD_IDEA,
        .name = "idea",
        .aArg = {ARG_TEXT},
        .nRequired = 1,
        .usage = "idea TEXT",
        .help = "search: an idea of your own, accepted and implemented in the search's round",
    },
    {
        .id = CMD_GATE,
        .name = "gate",
        .aArg = {ARG_TEXT},
        .nRequired = 1,
        .usage = "gate auto|human",
        .help = "search: ideas accepted by the search (auto) or waiting for you in the Ideas pane "
                "(human; the round waits until each is accepted or rejected)",
    },
    {
        .id = CMD_SET,
        .name = "set",
        .aArg = {ARG_TEXT},
        .nRequired = 2,
        .usage = "set KEY VALUE",
        .help =
            "search: change a setting while it runs: ideas, branches, parents, translations, "
            "policy, seed, rounds, max_candidates, budget_usd, time_s, no_improve, target, "
            "sweep, sweep_points, crossover, sweep_only, suspect_x, bandwidth_gbs, peak_tflops, "
            "quick_stop_x, ab_pairs, target_roofline (percent), precision (faithful|any)",
    },
    {
        .id = CMD_CANCEL,
        .name = "cancel",
        .aArg = {ARG_TEXT},
        .nRequired = 1,
        .usage = "cancel ID|rN|all",
        .help = "stop the evaluation of candidate ID, LLM request N (rN, as `jobs` lists it), "
                "or all of them",
    },
    {
        .id = CMD_COMPARE,
        .name = "compare",
        .aArg = {ARG_CAND, ARG_CAND},
        .nRequired = 2,
        .usage = "compare A B",
        .help = "two candidates side by side: their metrics, then the diff from A to B",
    },
    {
        .id = CMD_PROMPT,
        .name = "prompt",
        .aArg = {ARG_CAND},
        .nRequired = 1,
        .usage = "prompt ID",
        .help = "what the LLM was asked for candidate ID (its llm_request)",
    },
    {
        .id = CMD_REPLY,
        .name = "reply",
        .aArg = {ARG_CAND},
        .nRequired = 1,
        .usage = "reply ID",
        .help = "what the LLM answered for candidate ID, with its explanation of the change",
    },
    {.id = CMD_COUNT},
};

const struct commands_def *commands_find(const char *z)
{
	for (const struct commands_def *d = commands_table; d->name; d++)
		if (!strcmp(d->name, z) || (d->alias && !strcmp(d->alias, z)))
			return d;
	return NULL;
}

int commands_words(const char *zLine, char ***pArgv, char *err)
{
	Tokenizer *t = tok_init(NULL);
	int ac = 0;
	const char **av = NULL;
	/* tok_str wants a line it may look past the end of: give it a newline */
	char *z = xasprintf("%s\n", zLine);
	int rc = tok_str(t, z, &ac, &av);
	free(z);
	if (rc != 0) {
		tok_end(t);
		*pArgv = NULL;
		return kl_err(err, "%s",
		              rc == 1   ? "a single quote is not closed"
		              : rc == 2 ? "a double quote is not closed"
		              : rc == 3 ? "the line ends in a backslash"
		                        : "the line cannot be split into words");
	}
	char **v = xcalloc((size_t)ac + 1, sizeof *v);
	for (int i = 0; i < ac; i++)
		v[i] = xstrdup(av[i]);
	tok_end(t);
	*pArgv = v;
	return ac;
}

void commands_free_words(char **av, int n)
{
	if (!av)
		return;
	for (int i = 0; n < 0 ? av[i] != NULL : i < n; i++)
		free(av[i]);
	free(av);
}

static const char *arg_name(enum commands_arg a)
{
	switch (a) {
	case ARG_CAND:
		return "a candidate id";
	case ARG_IDEA:
		return "an idea id";
	case ARG_COUNT:
		return "a positive whole number";
	case ARG_INT:
		return "a whole number";
	case ARG_FILE:
		return "a file name";
	case ARG_COLUMN:
		return "a column";
	case ARG_ORDER:
		return "asc or desc";
	case ARG_COMMAND:
		return "a command";
	default:
		return "text";
	}
}

/* parse a number argument: ids may be written #3 */
static int parse_num(enum commands_arg a, const char *z, long *out)
{
	const char *p = z;
	if ((a == ARG_CAND || a == ARG_IDEA) && *p == '#')
		p++;
	if (!*p || isspace((unsigned char)*p))
		return -1;
	char *end;
	errno = 0;
	long v = strtol(p, &end, 10);
	if (*end || errno)
		return -1;
	if (a == ARG_INT)
		return *out = v, 0;
	if (v < 1 || v > 1000000000L)
		return -1;
	return *out = v, 0;
}

int commands_parse(const char *zLine, struct commands_line *out, char *err)
{
	memset(out, 0, sizeof *out);
	const char *p = zLine;
	while (isspace((unsigned char)*p))
		p++;
	if (!*p || *p == '#')
		return 0;
	char **av;
	int ac = commands_words(p, &av, err);
	if (ac < 0)
		return -1;
	if (ac == 0) {
		commands_free_words(av, ac);
		return 0;
	}
	size_t n0 = strlen(av[0]);
	int bang = n0 > 1 && av[0][n0 - 1] == '!';
	if (bang)
		av[0][n0 - 1] = 0;
	const struct commands_def *d = commands_find(av[0]);
	if (!d) {
		kl_err(err, "unknown command '%s' (help lists them)", av[0]);
		commands_free_words(av, ac);
		return -1;
	}
	out->def = d;
	out->bang = bang;
	int nDecl = 0;
	while (nDecl < COMMANDS_MAX_ARGS && d->aArg[nDecl] != ARG_NONE)
		nDecl++;
	int rest = nDecl && (d->aArg[nDecl - 1] == ARG_TERMS || d->aArg[nDecl - 1] == ARG_TEXT);
	int given = ac - 1;
	if (given < d->nRequired) {
		kl_err(err, "%s: missing %s (usage: %s)", d->name, arg_name(d->aArg[given]),
		       d->usage);
		goto fail;
	}
	if (!rest && given > nDecl) {
		kl_err(err, "%s: unexpected '%s' (usage: %s)", d->name, av[nDecl + 1], d->usage);
		goto fail;
	}
	if (given > COMMANDS_MAX_WORDS) {
		kl_err(err, "%s: more than %d words", d->name, COMMANDS_MAX_WORDS);
		goto fail;
	}
	for (int i = 0; i < given; i++) {
		enum commands_arg a = d->aArg[i < nDecl ? i : nDecl - 1];
		out->azArg[i] = xstrdup(av[i + 1]);
		out->nArg++;
		if ((a == ARG_CAND || a == ARG_IDEA || a == ARG_COUNT || a == ARG_INT) &&
		    parse_num(a, av[i + 1], &out->aNum[i]) < 0) {
			kl_err(err, "%s: expected %s, got '%s' (usage: %s)", d->name, arg_name(a),
			       av[i + 1], d->usage);
			goto fail;
		}
		if (a == ARG_ORDER && strcmp(av[i + 1], "asc") && strcmp(av[i + 1], "desc")) {
			kl_err(err, "%s: expected asc or desc, got '%s'", d->name, av[i + 1]);
			goto fail;
		}
		if (a == ARG_FILE && !*av[i + 1]) {
			kl_err(err, "%s: the file name is empty", d->name);
			goto fail;
		}
	}
	commands_free_words(av, ac);
	return 1;
fail:
	commands_free_words(av, ac);
	commands_line_free(out);
	return -1;
}

void commands_line_free(struct commands_line *c)
{
	for (int i = 0; i < c->nArg; i++)
		free(c->azArg[i]);
	memset(c, 0, sizeof *c);
}

int commands_help(strbuf *sb, const char *zName, int bReplay)
{
	if (zName) {
		const struct commands_def *d = commands_find(zName);
		if (!d)
			return -1;
		sb_addf(sb, "%s\n    %s\n", d->usage, d->help);
		if (d->alias)
			sb_addf(sb, "    (also: %s)\n", d->alias);
		return 0;
	}
	for (const struct commands_def *d = commands_table; d->name; d++)
		if (bReplay || !d->replayOnly)
			sb_addf(sb, "  %-24s %s\n", d->usage, d->help);
	return 0;
}

char *commands_common_prefix(char *const *a, int n)
{
	if (n <= 0)
		return xstrdup("");
	size_t k = strlen(a[0]);
	for (int i = 1; i < n; i++) {
		size_t j = 0;
		while (j < k && a[i][j] == a[0][j])
			j++;
		k = j;
	}
	return xstrndup(a[0], k);
}

static void add_match(char ***pv, int *pn, size_t *pAlloc, const char *z)
{
	for (int i = 0; i < *pn; i++)
		if (!strcmp((*pv)[i], z))
			return;
	xgrow((void **)pv, pAlloc, (size_t)*pn + 2, sizeof **pv);
	(*pv)[(*pn)++] = xstrdup(z);
	(*pv)[*pn] = NULL;
}

int commands_complete(const char *zLine, size_t cursor, commands_words_fn words, void *arg,
                      char ***pMatches, size_t *pStart)
{
	size_t len = strlen(zLine);
	if (cursor > len)
		cursor = len;
	/* the word under the cursor starts after the last blank before it */
	size_t start = cursor;
	while (start > 0 && !isspace((unsigned char)zLine[start - 1]))
		start--;
	/* which word it is */
	int idx = 0;
	for (size_t i = 0; i < start;) {
		while (i < start && isspace((unsigned char)zLine[i]))
			i++;
		if (i >= start)
			break;
		while (i < start && !isspace((unsigned char)zLine[i]))
			i++;
		idx++;
	}
	char *prefix = xstrndup(zLine + start, cursor - start);
	size_t np = strlen(prefix);
	char **v = xcalloc(1, sizeof *v);
	size_t nAlloc = 1;
	int n = 0;
	enum commands_arg kind = ARG_NONE;
	if (idx == 0) {
		kind = ARG_COMMAND;
	} else {
		/* the command is the first word */
		size_t a = 0;
		while (a < len && isspace((unsigned char)zLine[a]))
			a++;
		size_t b = a;
		while (b < len && !isspace((unsigned char)zLine[b]))
			b++;
		char *cmd = xstrndup(zLine + a, b - a);
		const struct commands_def *d = commands_find(cmd);
		free(cmd);
		int nDecl = 0;
		while (d && nDecl < COMMANDS_MAX_ARGS && d->aArg[nDecl] != ARG_NONE)
			nDecl++;
		if (d && idx - 1 < nDecl)
			kind = d->aArg[idx - 1];
		else if (d && nDecl && d->aArg[nDecl - 1] == ARG_TERMS)
			kind = ARG_TERMS;
	}
	if (kind == ARG_COMMAND) {
		for (const struct commands_def *d = commands_table; d->name; d++)
			if (!strncmp(d->name, prefix, np))
				add_match(&v, &n, &nAlloc, d->name);
	} else if (kind == ARG_ORDER) {
		static const char *const ord[] = {"asc", "desc"};
		for (int i = 0; i < 2; i++)
			if (!strncmp(ord[i], prefix, np))
				add_match(&v, &n, &nAlloc, ord[i]);
	} else if (kind != ARG_NONE && words) {
		const char *const *w = words(kind, arg);
		const char *pre = prefix[0] == '#' ? prefix + 1 : prefix;
		for (int i = 0; w && w[i]; i++)
			if (!strncmp(w[i], pre, strlen(pre)))
				add_match(&v, &n, &nAlloc, w[i]);
		if (pre != prefix)
			start++;
	}
	free(prefix);
	*pMatches = v;
	*pStart = start;
	return n;
}
