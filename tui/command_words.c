/*
 * command_words.c - the words of kloop's command line: split as a shell
 * splits them (libedit's tokenizer, sh-like quoting), a parsed line's
 * words joined back and freed, and the common prefix completion extends a
 * word to.  Knows no command: the parser and the handlers call it.
 */
#include "commands.h"

#include <histedit.h>
#include <stdlib.h>
#include <string.h>

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

void commands_text(const struct commands_line *c, int from, strbuf *sb)
{
	sb_reset(sb);
	for (int i = from; i < c->nArg; i++)
		sb_addf(sb, "%s%s", i > from ? " " : "", c->azArg[i]);
}

void commands_line_free(struct commands_line *c)
{
	for (int i = 0; i < c->nArg; i++)
		free(c->azArg[i]);
	memset(c, 0, sizeof *c);
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
