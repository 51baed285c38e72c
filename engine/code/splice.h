/*
 * splice.h - function-level edits of C, C++ and CUDA sources, by syntax
 * tree rather than by text patterns: find a function by name, replace it,
 * merge the functions an LLM reply's fenced blocks define (fence.h) into a
 * candidate (keeping the rest), and take a function from a second parent
 * (crossover).  The function-level diff is funcdiff.h's.
 *
 * Names: "row_var" finds the function whose unqualified name is row_var
 * when only one has it; "ln::row_var" matches the qualified name (with the
 * namespaces and classes around it).  Every edit is checked: the result
 * must parse (when the input did), else the call fails and says where; and
 * it must keep the input's form: a PyTorch extension keeps its registration
 * blocks (PYBIND11_MODULE, TORCH_LIBRARY, TORCH_LIBRARY_IMPL,
 * TORCH_LIBRARY_FRAGMENT: as many of each, one way of registering, once),
 * defines or declares every function they bind and gets no kl_run (kloop's
 * ATen stand-in defines it); a source without them (a kernel) gets no
 * registration block and no PyTorch header.  Otherwise the call fails
 * saying which.
 *
 * Results are fresh heap memory owned by the caller, freed with the
 * matching *_free().
 */
#ifndef KL_SPLICE_H
#define KL_SPLICE_H

#include <stddef.h>
#include <stdint.h>

#include "splice_item.h"

/* where a function is */
struct splice_span {
	uint32_t start, end;     /* its bytes: template<> and a direct extern "C" included */
	unsigned line, end_line; /* 1-based lines */
	char *text;              /* src[start..end), owned */
	char *qualname;          /* the name found, qualified, owned */
};

/* what one splice did to one top-level item */
enum splice_action {
	SPLICE_REPLACED,  /* an existing definition got the new text */
	SPLICE_ADDED,     /* a new definition was inserted */
	SPLICE_UNCHANGED, /* the new text is the same, tokens for tokens */
	SPLICE_SKIPPED,   /* left out on purpose (a main(), say) */
};

struct splice_change {
	enum splice_item item;
	enum splice_action action;
	char *name; /* the function or macro name, the include path, or the declaration */
};

struct splice_result {
	char *src;  /* the new source, NUL-terminated */
	size_t len; /* its length */
	struct splice_change *changes;
	size_t n_changes;
};

/*
 * Find the function `name` in src (n bytes).  Fills *out (freed with
 * splice_span_free()) and returns 0, or -1 with err when the source
 * cannot be parsed at all, no function has that name, or the name is
 * ambiguous (the candidates are listed).
 */
int splice_find(const char *src, size_t n, const char *name, struct splice_span *out, char *err);
/* free s's text and name; s may be reused */
void splice_span_free(struct splice_span *s);

/*
 * Replace the function `name` in src with the definition of the same name
 * in text (which may carry leading comments; other functions in text are
 * an error).  A replaced extern "C" function keeps its C linkage.  Fills
 * *res and returns 0, or -1 with err: the function is not there, text
 * does not parse or does not define it, or the result does not parse.
 */
int splice_replace(const char *src, size_t n, const char *name, const char *text, size_t tn,
                   struct splice_result *res, char *err);

/*
 * Splice an LLM reply into src: every fenced code block (```cuda, ```cpp,
 * ```c, ``` ...; python, bash and other languages are ignored) is parsed;
 * each function it defines replaces the function of the same name or is
 * added (before the first function that uses it, else at the end); its
 * #includes are added when missing, its #defines and other top-level
 * declarations replace those of the same name or are added before the
 * first function.  A main() is skipped.  A reply without fences is taken
 * as code when all of it parses and defines a function.  Fills *res and
 * returns 0, or -1 with err saying why: no code block, a block that does
 * not parse (with the reply line), no definitions, or a result that does
 * not parse.
 */
int splice_reply(const char *src, size_t n, const char *reply, size_t rn, struct splice_result *res,
                 char *err);

/*
 * Crossover: take function `name` from source b into source a (replacing
 * a's version or adding it), together with what it needs from b that a
 * lacks: functions it calls, macros and declarations it names, and b's
 * #includes.  What a has written otherwise for its users (a function's
 * signature, a function-like macro's parameters, a type, a prototype)
 * comes from b as well when the items taken use it, and so do b's versions
 * of a's items that use what changed (callers of a function whose
 * signature differs), to a fixed point.  Fills *res and returns 0, or -1
 * with err: no such function in b, a source that cannot be parsed, an item
 * of a that uses what changed and that b lacks (named), a result that does
 * not parse or does not keep a's form.
 */
int splice_crossover(const char *a, size_t an, const char *b, size_t bn, const char *name,
                     struct splice_result *res, char *err);

/* free r's source and changes; r may be reused */
void splice_result_free(struct splice_result *r);

/* "replaced", "added", "unchanged", "skipped" */
const char *splice_action_name(enum splice_action a);

#endif
