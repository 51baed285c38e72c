/*
 * unit.h - a C, C++ or CUDA source read into its top-level items, for the
 * merges of splice.c: functions (found by the outline, class members
 * aside), #includes, #defines and other declarations, each with its bytes,
 * the comments attached above it, and a key that matches the same item in
 * another source.  Internal to engine/code.
 */
#ifndef KL_UNIT_H
#define KL_UNIT_H

#include <stddef.h>
#include <stdint.h>

#include "outline.h"
#include "splice_item.h"
#include "syntax.h"

/* one top-level item */
struct unit_item {
	enum splice_item kind;
	char *key;      /* what matches across sources: qualified name, macro name, path; owned */
	char *name;     /* shown in the changes; owned */
	uint32_t start; /* the item's bytes */
	uint32_t end;
	uint32_t cstart;               /* start with the comments attached above it */
	const struct outline_func *fn; /* functions: the outline entry */
	int proto;                     /* a declaration of a function (no body) */
	TSNode node;                   /* the item's node */
};

/* a source and its items */
struct unit {
	struct syntax_doc *d;
	struct outline o;
	struct unit_item *items; /* in source order (functions first), owned */
	size_t n, alloc;
	uint32_t decl_at;    /* where new declarations go: before the first function */
	uint32_t include_at; /* where new #includes go: after the last one */
	size_t nerrors;      /* syntax errors of the source */
};

/*
 * Parse src (n bytes) and read its items into *u (freed with unit_free()).
 * Returns 0, or -1 with err "WHAT: reason" when the source is refused
 * (too large, binary); syntax errors still give the items found.
 */
int unit_load(struct unit *u, const char *src, size_t n, const char *what, char *err);
/* free u's items, outline and doc */
void unit_free(struct unit *u);
/* the item of u with this kind and key (a function by outline_find() name), or NULL */
const struct unit_item *unit_lookup(const struct unit *u, enum splice_item kind, const char *key);
/* node's tokens, space-separated, comments left out (caller frees) */
char *unit_tokens(const struct syntax_doc *d, TSNode node);

/* a set of names */
struct unit_names {
	char **v; /* owned strings */
	size_t n, alloc;
};
/* add the names (identifiers, type names, macro words) used in node's subtree to out */
void unit_names_used(const struct syntax_doc *d, TSNode node, struct unit_names *out);
/* 1 if x is in s */
int unit_names_has(const struct unit_names *s, const char *x);
/* free s's names; s may be reused */
void unit_names_free(struct unit_names *s);

/*
 * What item it of u shows its users, as tokens (a fresh string): a
 * function's declaration without its body, a function-like macro's
 * parameters, a prototype or a type's whole declaration; NULL for items
 * whose users do not depend on how they are written (a constant, a
 * variable, an object-like macro, an include).  Two sources whose items
 * differ here cannot lend each other the items' users.
 */
char *unit_interface(const struct unit *u, const struct unit_item *it);

/* which registration block of a PyTorch extension function item it is:
 * 0 PYBIND11_MODULE, 1 TORCH_LIBRARY, 2 TORCH_LIBRARY_IMPL, 3
 * TORCH_LIBRARY_FRAGMENT; -1 for anything else */
int unit_registration(const struct unit_item *it);
#define UNIT_REGISTRATIONS 4

/* the functions registration block it binds (m.def / m.impl of &f, f,
 * TORCH_FN(f), by their last name component) added to out */
void unit_bound(const struct unit *u, const struct unit_item *it, struct unit_names *out);

/* s's last name component: "f" of "ns::C::f" (a pointer into s) */
const char *unit_base_name(const char *s);

#endif
