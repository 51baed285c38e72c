/*
 * ideas.h - optimization ideas as an LLM proposes them: parsed from its reply
 * (the JSON kloop asks for, in or out of a fenced block, or a numbered
 * Markdown list), each with a title, a description and one of kloop's
 * categories.
 */
#ifndef KL_IDEAS_H
#define KL_IDEAS_H

#include <stddef.h>

/* the most ideas taken from one reply */
#define IDEAS_MAX 64

struct idea {
	char *zTitle;          /* short title, one line, never empty */
	char *zDescription;    /* what to change and why ("" if the reply gave none) */
	const char *zCategory; /* one of ideas_categories[] or "other" (static) */
};

struct idea_list {
	struct idea *a; /* the ideas, in the reply's order */
	int n;
	size_t nAlloc;
};

/* the categories, NULL-terminated: "memory access", "asynchrony and latency
 * hiding", "precision", "compute and instructions", "parallelism and
 * occupancy", "fusion", "algorithm" */
extern const char *const ideas_categories[];

/*
 * Parse the ideas in an LLM reply (n bytes): first as JSON ({"ideas": [...]}
 * or a bare array of {"title", "description", "category"}; in a fenced block
 * or anywhere in the text), else as a numbered list ("1. **Title**: what",
 * continuation lines, "Category: ..." or a [category] tag).  Fills *out
 * (which the caller frees with ideas_free(); it starts empty) and returns the
 * number of ideas, or -1 with err saying why none could be read.
 */
int ideas_parse(const char *zReply, size_t n, struct idea_list *out, char *err);
void ideas_free(struct idea_list *l);

/* append one idea (the strings are copied; the category is normalised with
 * ideas_category()).  A title of blanks is replaced by the description's
 * first words; with neither, nothing is added (so every idea has a title). */
void ideas_add(struct idea_list *l, const char *zTitle, const char *zDescription,
               const char *zCategory);

/*
 * kloop's category for an idea: from the name the model gave (zName, may be
 * NULL: "Memory", "memory_access", "latency hiding", ...), else guessed from
 * the idea's text (zText, may be NULL: "use float4 loads" is memory access).
 * Returns a static string from ideas_categories[], or "other".
 */
const char *ideas_category(const char *zName, const char *zText);

/*
 * The category a person names (to ban or prefer): one of ideas_categories[]
 * or "other", in any case, with '_' or '-' for spaces, or a prefix of one
 * and of no other ("memory", "async").  A static string, or NULL when zName
 * names none or several; ideas_category_list() is what to offer instead.
 */
const char *ideas_category_named(const char *zName);
const char *ideas_category_list(void);
/* the category a typo of zName names ("memry": "memory access"), by the
 * distance of suggest.h to each category's name and its words; a static
 * string, or NULL when none is near enough (or zName names one already) */
const char *ideas_category_nearest(const char *zName);

#endif
