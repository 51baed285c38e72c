/*
 * test_commands.c - the command language (tui/commands.c): parsing with
 * quoting, argument checks and their messages, help, and completion.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "commands.h"
#include "search_settings.h"

static int parse(const char *z, struct commands_line *c, char *err)
{
	err[0] = 0;
	return commands_parse(z, c, err);
}

static const char *const *words(enum commands_arg kind, void *arg)
{
	static const char *const ids[] = {"1", "2", "12", "13", NULL};
	static const char *const cols[] = {"id", "parent", "speedup", "status", NULL};
	(void)arg;
	return kind == ARG_CAND ? ids : kind == ARG_COLUMN ? cols : NULL;
}

static int complete(const char *line, char ***m, size_t *start)
{
	return commands_complete(line, strlen(line), words, NULL, m, start);
}

int main(void)
{
	struct commands_line c;
	char err[KL_ERRLEN];

	CHECK(parse("", &c, err) == 0, "an empty line is not a command");
	CHECK(parse("   \t ", &c, err) == 0, "a blank line is not a command");
	CHECK(parse("# a comment", &c, err) == 0, "a comment line is not a command");

	CHECK(parse("bench 3", &c, err) == 1 && !strcmp(c.def->name, "bench") && c.nArg == 1 &&
	          c.aNum[0] == 3,
	      "bench 3 parses with the id");
	commands_line_free(&c);
	CHECK(parse("  show   #12  ", &c, err) == 1 && !strcmp(c.def->name, "show") &&
	          c.aNum[0] == 12,
	      "ids may be written #12, blanks around are ignored");
	commands_line_free(&c);
	CHECK(parse("bench", &c, err) < 0 && strstr(err, "bench: missing a candidate id") &&
	          strstr(err, "usage: bench ID"),
	      "a missing id says which and gives the usage (%s)", err);
	CHECK(parse("bench x3", &c, err) < 0 && strstr(err, "expected a candidate id, got 'x3'"),
	      "a word where an id goes is named (%s)", err);
	CHECK(parse("bench 0", &c, err) < 0, "id 0 is refused");
	CHECK(parse("bench -2", &c, err) < 0, "a negative id is refused");
	CHECK(parse("bench 99999999999999999999", &c, err) < 0, "an id that overflows is refused");
	CHECK(parse("show 3 4", &c, err) < 0 && strstr(err, "unexpected '4'"),
	      "an extra argument is named (%s)", err);
	CHECK(parse("bench 3 --on 1", &c, err) == 1 && c.nArg == 3 && c.aNum[0] == 3 &&
	          !strcmp(c.azArg[1], "--on") && !strcmp(c.azArg[2], "1"),
	      "bench ID --on W: the id, then the words for the worker");
	commands_line_free(&c);
	CHECK(parse("frobnicate 1", &c, err) < 0 && strstr(err, "unknown command 'frobnicate'"),
	      "an unknown command is named (%s)", err);

	CHECK(parse("diff 3", &c, err) == 1 && c.nArg == 1, "diff takes one id");
	commands_line_free(&c);
	CHECK(parse("diff 3 5", &c, err) == 1 && c.nArg == 2 && c.aNum[1] == 5, "or two");
	commands_line_free(&c);

	CHECK(parse("export 2 'my kernel.cu'", &c, err) == 1 && !strcmp(c.azArg[1], "my kernel.cu"),
	      "single quotes keep a file name with a blank in one word");
	commands_line_free(&c);
	CHECK(parse("export 2 \"a\\\"b.c\"", &c, err) == 1 && !strcmp(c.azArg[1], "a\"b.c"),
	      "double quotes and a backslash-escaped quote");
	commands_line_free(&c);
	CHECK(parse("export 2 out\\ file.c", &c, err) == 1 && !strcmp(c.azArg[1], "out file.c"),
	      "a backslash-escaped blank");
	commands_line_free(&c);
	CHECK(parse("export 2 'unclosed", &c, err) < 0 && strstr(err, "single quote is not closed"),
	      "an unclosed single quote is an error (%s)", err);
	CHECK(parse("export 2 \"unclosed", &c, err) < 0 &&
	          strstr(err, "double quote is not closed"),
	      "an unclosed double quote is an error (%s)", err);
	CHECK(parse("export 2", &c, err) < 0 && strstr(err, "missing a file name"),
	      "export needs a file (%s)", err);

	CHECK(parse("filter correct speedup>1.5 'idea~shared memory'", &c, err) == 1 &&
	          c.nArg == 3 && !strcmp(c.azArg[2], "idea~shared memory"),
	      "filter takes every word as a term, quotes keep one together");
	commands_line_free(&c);
	CHECK(parse("filter", &c, err) == 1 && c.nArg == 0, "filter alone clears");
	commands_line_free(&c);
	CHECK(parse("sort speedup desc", &c, err) == 1 && !strcmp(c.azArg[1], "desc"),
	      "sort with an order");
	commands_line_free(&c);
	CHECK(parse("sort speedup sideways", &c, err) < 0 && strstr(err, "asc or desc"),
	      "a wrong order is named (%s)", err);
	CHECK(parse("ideas", &c, err) == 1 && c.nArg == 0, "ideas without N");
	commands_line_free(&c);
	CHECK(parse("ideas 5", &c, err) == 1 && c.aNum[0] == 5, "ideas 5");
	commands_line_free(&c);
	CHECK(parse("ideas five", &c, err) < 0 && strstr(err, "positive whole number"),
	      "ideas five (%s)", err);
	CHECK(parse("revise 2 use shared memory tiles", &c, err) == 1 && c.nArg == 5 &&
	          c.aNum[0] == 2,
	      "revise takes the idea id and the new text's words");
	commands_line_free(&c);
	CHECK(parse("step -3", &c, err) == 1 && c.aNum[0] == -3, "step takes a negative count");
	commands_line_free(&c);

	CHECK(parse("quit", &c, err) == 1 && !strcmp(c.def->name, "quit") && !c.bang, "quit");
	commands_line_free(&c);
	CHECK(parse("quit!", &c, err) == 1 && !strcmp(c.def->name, "quit") && c.bang,
	      "quit! is quit without asking");
	commands_line_free(&c);
	CHECK(parse("q", &c, err) == 1 && !strcmp(c.def->name, "quit"), "q is an alias of quit");
	commands_line_free(&c);
	CHECK(parse("ls", &c, err) == 1 && !strcmp(c.def->name, "list"), "ls is an alias of list");
	commands_line_free(&c);
	CHECK(parse("?", &c, err) == 1 && !strcmp(c.def->name, "help"), "? is help");
	commands_line_free(&c);

	/* every command in the table has a usage and help, and parses by name */
	int nCmd = 0, allOk = 1;
	for (const struct commands_def *d = commands_table; d->name; d++, nCmd++) {
		allOk &= d->usage && d->help && !strncmp(d->usage, d->name, strlen(d->name));
		allOk &= commands_find(d->name) == d;
	}
	CHECK(allOk, "each of the %d commands has a usage starting with its name, and help", nCmd);
	static const char *const required[] = {"ideas",  "accept", "reject", "implement", "edit",
	                                       "bench",  "show",   "diff",   "export",    "sort",
	                                       "filter", "help",   "quit",   NULL};
	int have = 1;
	for (int i = 0; required[i]; i++)
		have &= commands_find(required[i]) != NULL;
	CHECK(have, "the issue's commands all exist");

	strbuf sb = STRBUF_INIT;
	commands_help(&sb, NULL, 0);
	CHECK(strstr(sb.buf, "export ID FILE") && !strstr(sb.buf, "goto K"),
	      "help lists the commands, without the replay ones outside a replay");
	sb_reset(&sb);
	commands_help(&sb, NULL, 1);
	CHECK(strstr(sb.buf, "goto K") && strstr(sb.buf, "continue [FILE]"),
	      "and with them while replaying");
	sb_reset(&sb);
	CHECK(commands_help(&sb, "diff", 0) == 0 && strstr(sb.buf, "diff ID [ID]"), "help diff");
	CHECK(commands_help(&sb, "nope", 0) < 0, "help of an unknown command fails");
	sb_reset(&sb);
	CHECK(commands_help(&sb, "set", 0) == 0 && strstr(sb.buf, search_setting_keys()) &&
	          strstr(sb.buf, "overlap") && strstr(sb.buf, "gate"),
	      "help set lists every key of the settings' table (%s)", sb.buf);

	/* one entry per command: each has its handler, and `help` lists each
	 * once, on one line with its usage and its help line */
	int allRun = 1, allOnce = 1;
	sb_reset(&sb);
	commands_help(&sb, NULL, 1);
	for (const struct commands_def *d = commands_table; d->name; d++) {
		allRun &= d->run != NULL;
		int nLine = 0, nName = 0;
		for (const char *p = sb.buf; *p;) {
			size_t k = strcspn(p, "\n"), n = strlen(d->name);
			char *line = xstrndup(p, k);
			if (!strncmp(line, "  ", 2) && !strncmp(line + 2, d->name, n) &&
			    (line[2 + n] == ' ' || line[2 + n] == '|' || line[2 + n] == '['))
				nName++, nLine += strstr(line, d->usage) && strstr(line, d->help);
			free(line);
			p += k + (p[k] == '\n');
		}
		if (nName != 1 || nLine != 1)
			allOnce = 0, printf("# %s: %d lines, %d with its usage and help\n", d->name,
			                    nName, nLine);
	}
	CHECK(allRun, "every entry of the table has its handler");
	CHECK(allOnce, "help lists each of the %d commands once, with its usage and help line",
	      nCmd);
	sb_free(&sb);

	/* completion */
	char **m;
	size_t start;
	int n = complete("be", &m, &start);
	CHECK(n == 1 && !strcmp(m[0], "bench") && start == 0, "be completes to bench");
	commands_free_words(m, -1);
	n = complete("e", &m, &start);
	CHECK(n == 2 && !strcmp(m[0], "edit") && !strcmp(m[1], "export"),
	      "e offers edit and export");
	char *pre = commands_common_prefix(m, n);
	CHECK(!strcmp(pre, "e"), "whose common prefix is e");
	free(pre);
	commands_free_words(m, -1);
	n = complete("show 1", &m, &start);
	CHECK(n == 3 && start == 5, "show 1 offers the ids starting with 1 (%d)", n);
	commands_free_words(m, -1);
	n = complete("show #1", &m, &start);
	CHECK(n == 3 && start == 6, "an id's # is kept (%d, start %zu)", n, start);
	commands_free_words(m, -1);
	n = complete("sort sp", &m, &start);
	CHECK(n == 1 && !strcmp(m[0], "speedup"), "sort completes columns");
	commands_free_words(m, -1);
	n = complete("sort speedup d", &m, &start);
	CHECK(n == 1 && !strcmp(m[0], "desc"), "and the order");
	commands_free_words(m, -1);
	n = complete("help ex", &m, &start);
	CHECK(n == 1 && !strcmp(m[0], "export"), "help completes command names");
	commands_free_words(m, -1);
	n = complete("zz", &m, &start);
	CHECK(n == 0 && m && !m[0], "nothing for an unknown prefix");
	commands_free_words(m, -1);
	n = complete("", &m, &start);
	CHECK(n == nCmd, "an empty line offers every command (%d)", n);
	commands_free_words(m, -1);

	/* the words the parser sees */
	char **av;
	int ac = commands_words("a 'b c' \"d\"e", &av, err);
	CHECK(ac == 3 && !strcmp(av[1], "b c") && !strcmp(av[2], "de"),
	      "words split like a shell's");
	commands_free_words(av, ac);
	/* did you mean: a typo of a command or an alias */
	const char *near = commands_nearest("compar");
	CHECK(near && !strcmp(near, "compare"), "compar: did you mean compare (got %s)",
	      near ? near : "none");
	CHECK(commands_nearest("zzzzzz") == NULL, "nothing near: no suggestion");
	CHECK(parse("benhc 1", &c, err) < 0 && strstr(err, "did you mean 'bench'?"),
	      "the parser's error suggests it (%s)", err);
	return check_done();
}
