/*
 * funcdiff.h - a function-level diff of two C, C++ or CUDA sources: which
 * functions are the same token for token (layout and comments aside),
 * changed, added or removed, paired by qualified name.  The TUI's compare
 * view and the report show it.
 */
#ifndef KL_FUNCDIFF_H
#define KL_FUNCDIFF_H

#include <stddef.h>

enum funcdiff_status {
	FUNCDIFF_SAME,    /* same tokens (layout and comments may differ) */
	FUNCDIFF_CHANGED, /* in both, tokens differ */
	FUNCDIFF_ADDED,   /* only in b */
	FUNCDIFF_REMOVED, /* only in a */
};

struct funcdiff_entry {
	char *name; /* qualified name, owned */
	enum funcdiff_status status;
	unsigned a_line, a_end; /* lines in a (0 when added) */
	unsigned b_line, b_end; /* lines in b (0 when removed) */
	int layout_only;        /* SAME, but the text differs (whitespace, comments) */
};

struct funcdiff {
	struct funcdiff_entry *v; /* a's functions in a's order, then b's new ones; owned */
	size_t n;
};

/*
 * Compare the functions of a (an bytes) and b (bn bytes) by qualified name
 * (overloads paired in order).  Fills *out (freed with funcdiff_free())
 * and returns 0, or -1 with err when a source cannot be parsed at all
 * (too large, binary); syntax errors still give the functions found.
 */
int funcdiff_compare(const char *a, size_t an, const char *b, size_t bn, struct funcdiff *out,
                     char *err);
/* free d's entries; d may be reused */
void funcdiff_free(struct funcdiff *d);

/* "same", "changed", "added", "removed" */
const char *funcdiff_status_name(enum funcdiff_status s);

#endif
