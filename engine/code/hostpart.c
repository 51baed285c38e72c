/*
 * hostpart.c - the host part of a CUDA source (hostpart.h): the source with
 * its comments and the bodies of its device-only functions blanked, their
 * newlines kept (__LINE__ in the host code below them stays what it was).
 */
#include "hostpart.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "outline.h"
#include "syntax.h"

enum { KEEP, DROP, SPACE }; /* what becomes of a byte */

static int why(char *zWhy, size_t nWhy, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(zWhy, nWhy, fmt, ap);
	va_end(ap);
	return 0;
}

static int is_ident(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
	       ch == '_';
}

/* 1 when [s, e) of src holds zWord as a whole word */
static int has_word(const char *src, size_t s, size_t e, const char *zWord)
{
	size_t k = strlen(zWord);
	for (size_t i = s; i + k <= e; i++)
		if (!memcmp(src + i, zWord, k) && (i == s || !is_ident(src[i - 1])) &&
		    (i + k == e || !is_ident(src[i + k])))
			return 1;
	return 0;
}

/* 1 when a body's preprocessor lines cannot reach the code around it:
 * #pragma, and conditionals that open and close inside it */
static int body_directives_local(const char *src, size_t s, size_t e)
{
	int depth = 0;
	for (size_t i = s; i < e; i++) {
		if (i > s && src[i - 1] != '\n')
			continue;
		size_t p = i;
		while (p < e && (src[p] == ' ' || src[p] == '\t'))
			p++;
		if (p >= e || src[p] != '#')
			continue;
		p++;
		while (p < e && (src[p] == ' ' || src[p] == '\t'))
			p++;
		size_t w = p;
		while (w < e && is_ident(src[w]))
			w++;
		size_t k = w - p;
#define IS(x) (k == sizeof x - 1 && !memcmp(src + p, x, k))
		if (IS("pragma") || IS("elif") || IS("else"))
			continue;
		if (IS("if") || IS("ifdef") || IS("ifndef"))
			depth++;
		else if (IS("endif") && depth > 0)
			depth--;
		else
			return 0; /* #define, #undef, #include, #line, an #endif of outside */
#undef IS
	}
	return depth == 0;
}

/* what expands the source's line numbers or its file's name, and macros a
 * host line may call that do: glibc's, PyTorch's, CUB's and CUTLASS's (a
 * candidate's own are found by __LINE__ or __FILE__ themselves) */
static const char *const lineMacros[] = {"__LINE__",
                                         "__FILE__",
                                         "__BASE_FILE__",
                                         "__FILE_NAME__",
                                         "assert",
                                         "TORCH_CHECK",
                                         "TORCH_INTERNAL_ASSERT",
                                         "AT_ASSERT",
                                         "C10_CUDA_CHECK",
                                         "C10_CUDA_KERNEL_LAUNCH_CHECK",
                                         "CubDebug",
                                         "CUTLASS_CHECK",
                                         "CUTE_CHECK",
                                         "AT_ERROR",
                                         NULL};

/* the header an #include at line start i names is one whose macros a host
 * line could call without naming __LINE__: kloop.h, or a system header of
 * C, C++ or CUDA (no directory, or cuda/ and cooperative_groups/) */
static int include_known(const char *src, size_t i, size_t n)
{
	while (i < n && src[i] != '"' && src[i] != '<' && src[i] != '\n')
		i++;
	if (i >= n || src[i] == '\n')
		return 0; /* a macro names it */
	char close = src[i] == '"' ? '"' : '>';
	size_t s = ++i;
	while (i < n && src[i] != close && src[i] != '\n')
		i++;
	size_t k = i - s;
	if (close == '"')
		return k == 7 && !memcmp(src + s, "kloop.h", 7);
	const char *slash = memchr(src + s, '/', k);
	return !slash || !strncmp(src + s, "cuda/", 5) ||
	       !strncmp(src + s, "cooperative_groups/", 19);
}

/* 1 when the host part's lines and its file's name do not reach its
 * object: no __LINE__ or __FILE__ nor a macro known to expand them, and no
 * header but kloop.h and the system's (whose macros a host line might
 * call); then a kernel's body may change its number of lines, and the
 * source its name, and keep the host part */
static int lines_unused(const char *src, size_t n, const unsigned char *act)
{
	char *keep = xmalloc(n + 1);
	size_t m = 0;
	for (size_t i = 0; i < n; i++)
		if (act[i] == KEEP)
			keep[m++] = src[i];
	keep[m] = 0;
	int ok = 1;
	for (int i = 0; ok && lineMacros[i]; i++)
		ok = !has_word(keep, 0, m, lineMacros[i]);
	for (size_t i = 0; ok && i < m; i++) {
		if (i > 0 && keep[i - 1] != '\n')
			continue;
		size_t p = i;
		while (p < m && (keep[p] == ' ' || keep[p] == '\t'))
			p++;
		if (p < m && keep[p] == '#') {
			p++;
			while (p < m && (keep[p] == ' ' || keep[p] == '\t'))
				p++;
			if (!strncmp(keep + p, "include", 7))
				ok = include_known(keep, p + 7, m);
		}
	}
	free(keep);
	return ok;
}

/* mark every comment of the tree under node n */
static void mark_comments(TSNode n, unsigned char *act)
{
	if (!strcmp(ts_node_type(n), "comment")) {
		uint32_t s = ts_node_start_byte(n), e = ts_node_end_byte(n);
		if (e > s) {
			act[s] = SPACE;
			memset(act + s + 1, DROP, e - s - 1);
		}
		return;
	}
	uint32_t k = ts_node_child_count(n);
	for (uint32_t i = 0; i < k; i++)
		mark_comments(ts_node_child(n, i), act);
}

int cuda_host_part(const char *src, size_t n, char **pzOut, size_t *pnOut, char *zWhy, size_t nWhy)
{
	*pzOut = NULL;
	*pnOut = 0;
	if (has_word(src, 0, n, "__COUNTER__"))
		return why(zWhy, nWhy, "it uses __COUNTER__, which device code advances too");
	char err[KL_ERRLEN];
	struct syntax_doc *d = syntax_parse(src, n, err);
	if (!d)
		return why(zWhy, nWhy, "%s", err);
	if (!syntax_is_clean(d)) {
		syntax_free(d);
		return why(zWhy, nWhy, "it does not parse cleanly");
	}
	struct outline o;
	outline_build(d, &o, err);
	unsigned char *act = xcalloc(n ? n : 1, 1);
	mark_comments(syntax_root(d), act);
	int nKernels = 0;
	for (size_t i = 0; i < o.n_funcs; i++) {
		const struct outline_func *f = &o.funcs[i];
		nKernels += f->kind == OUTLINE_KERNEL;
		if (f->kind == OUTLINE_HOST || f->host_device || f->member ||
		    f->body_end < f->body_start + 2 || f->body_end > n)
			continue;
		/* what the host may evaluate or deduce from the body */
		if (has_word(src, f->item_start, f->body_start, "constexpr") ||
		    has_word(src, f->item_start, f->body_start, "consteval") ||
		    has_word(src, f->item_start, f->body_start, "auto") ||
		    !body_directives_local(src, f->body_start, f->body_end))
			continue;
		/* the braces stay, what is between them goes (newlines kept) */
		memset(act + f->body_start + 1, DROP, f->body_end - f->body_start - 2);
	}
	outline_free(&o);
	syntax_free(d);
	if (!nKernels) {
		free(act);
		return why(zWhy, nWhy, "it defines no kernel");
	}
	/* a blanked body keeps its newlines where the host's lines count: the
	 * first line says which (a different host part either way) */
	int keepLines = !lines_unused(src, n, act);
	char *out = xmalloc(n + 64);
	size_t m = (size_t)snprintf(out, 64, "// kloop host part: lines %s\n",
	                            keepLines ? "counted" : "not counted");
	for (size_t i = 0; i < n; i++) {
		if (act[i] == KEEP)
			out[m++] = src[i];
		else if (act[i] == SPACE)
			out[m++] = src[i] == '\n' && keepLines ? '\n' : ' ';
		else if (src[i] == '\n' && keepLines)
			out[m++] = '\n';
	}
	out[m] = 0;
	free(act);
	*pzOut = out;
	*pnOut = m;
	zWhy[0] = 0;
	return 1;
}
