/*
 * fence.h - Markdown fence scanning of LLM replies: where the fenced code
 * blocks are, in which language, and whether that language is C, C++ or
 * CUDA (the code kloop splices; see splice.h).
 */
#ifndef KL_FENCE_H
#define KL_FENCE_H

#include <stddef.h>

/* a fenced code block of an LLM reply */
struct fence_block {
	size_t start, end; /* the code's bytes within the reply (fences excluded) */
	unsigned line;     /* 1-based reply line of the opening fence */
	char lang[24];     /* the info string's first word, lowercased ("cuda", "") */
	int is_code;       /* 0 for languages that are not C, C++ or CUDA (python, bash, ...) */
};

/*
 * The fenced code blocks of reply (n bytes): fills *out with a fresh array
 * (caller frees; NULL when there is none) and returns how many.  An
 * unterminated fence runs to the end of the reply.
 */
size_t fence_blocks(const char *reply, size_t n, struct fence_block **out);

#endif
