/*
 * commands.c - the parser and completion of kloop's command line, over the
 * table of tui/command_table.c (its entries found there); the words are
 * split and joined by tui/command_words.c.
 */
#include "commands.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

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
		const char *near = commands_nearest(av[0]);
		kl_err(err, "unknown command '%.80s'%s%s%s (help lists them)", av[0],
		       near ? ": did you mean '" : "", near ? near : "", near ? "'?" : "");
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
