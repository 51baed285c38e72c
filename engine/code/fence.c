/*
 * fence.c - the fenced code blocks of an LLM reply (CommonMark's fences:
 * up to three spaces, then three or more backticks or tildes, closed by a
 * run of the same character at least as long).
 */
#include "fence.h"

#include <ctype.h>
#include <string.h>

#include "util.h"

/* is this info-string word C, C++ or CUDA (or none at all)? */
static int code_lang(const char *lang)
{
	static const char *const ok[] = {"",     "c",    "h",      "cpp",      "c++",      "cxx",
	                                 "cc",   "hpp",  "hxx",    "hh",       "cu",       "cuh",
	                                 "cuda", "nvcc", "cuda-c", "cuda-cpp", "cuda-c++", NULL};
	for (int i = 0; ok[i]; i++)
		if (!strcmp(lang, ok[i]))
			return 1;
	return 0;
}

size_t fence_blocks(const char *reply, size_t n, struct fence_block **out)
{
	struct fence_block *v = NULL;
	size_t nv = 0, alloc = 0;
	unsigned line = 1;
	int open = 0;
	char fch = 0;
	size_t fcount = 0;
	struct fence_block cur = {0};
	for (size_t i = 0; i < n;) {
		size_t ls = i;
		size_t le = i;
		while (le < n && reply[le] != '\n')
			le++;
		size_t next = le < n ? le + 1 : n;
		/* a fence: up to 3 spaces, then 3 or more ` or ~ */
		size_t p = ls, sp = 0;
		while (p < le && reply[p] == ' ' && sp < 3) {
			p++;
			sp++;
		}
		size_t k = p;
		char ch = p < le ? reply[p] : 0;
		while (k < le && reply[k] == ch && (ch == '`' || ch == '~'))
			k++;
		size_t run = (ch == '`' || ch == '~') ? k - p : 0;
		if (!open && run >= 3) {
			open = 1;
			fch = ch;
			fcount = run;
			memset(&cur, 0, sizeof cur);
			cur.line = line;
			cur.start = next;
			/* the info string's first word */
			while (k < le && (reply[k] == ' ' || reply[k] == '{' || reply[k] == '.'))
				k++;
			size_t w = 0;
			while (k < le && w + 1 < sizeof cur.lang &&
			       !isspace((unsigned char)reply[k]) && reply[k] != '}' &&
			       reply[k] != '`')
				cur.lang[w++] = (char)tolower((unsigned char)reply[k++]);
			cur.lang[w] = 0;
			cur.is_code = code_lang(cur.lang);
		} else if (open && ch == fch && run >= fcount) {
			size_t q = k;
			while (q < le && (reply[q] == ' ' || reply[q] == '\t' || reply[q] == '\r'))
				q++;
			if (q == le) {
				open = 0;
				cur.end = ls;
				xgrow((void **)&v, &alloc, nv + 1, sizeof *v);
				v[nv++] = cur;
			}
		}
		line++;
		i = next;
	}
	if (open) {
		cur.end = n;
		if (cur.start > n)
			cur.start = n;
		xgrow((void **)&v, &alloc, nv + 1, sizeof *v);
		v[nv++] = cur;
	}
	*out = v;
	return nv;
}
