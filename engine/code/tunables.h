/*
 * tunables.h - integer constants of a C, C++ or CUDA source that a
 * parameter sweep may rewrite: integer #defines, const/constexpr integer
 * constants, enumerators, template parameter defaults, integer template
 * arguments of kernel launches, literal launch configurations
 * (<<<grid, block, smem>>>), literal dim3 sizes and __launch_bounds__.
 * Found with the tunables query (grammars/queries/tunables.scm) and the
 * outline; rewriting changes only the literals' bytes, and the result must
 * still parse.
 *
 * Names: a file-scope constant is named as declared ("TILE_K",
 * "ln::kThreads"); a constant local to a function is "func.name"; a dim3
 * size is "func.var.x" (.y, .z); a template default is "func.PARAM"; a
 * launch's template arguments are "kernel.t0", "kernel.t1", ... and its
 * configuration "kernel.grid", "kernel.block", "kernel.smem" (the second
 * launch of the same kernel is "kernel#2.block"); __launch_bounds__ gives
 * "kernel.max_threads" and "kernel.min_blocks".  A name that repeats gets
 * "#2", "#3", ... in source order.
 */
#ifndef KL_TUNABLES_H
#define KL_TUNABLES_H

#include <cJSON.h>
#include <stddef.h>
#include <stdint.h>

#include "syntax.h"

enum tunable_kind {
	TUNABLE_DEFINE,           /* #define TILE 16 */
	TUNABLE_CONSTEXPR,        /* constexpr int TILE = 16; */
	TUNABLE_CONST,            /* const int TILE = 16; */
	TUNABLE_ENUM,             /* enum { TILE = 16 }; */
	TUNABLE_TEMPLATE_DEFAULT, /* template <int TILE = 16> */
	TUNABLE_TEMPLATE_ARG,     /* k<16><<<...>>>(...) */
	TUNABLE_LAUNCH_GRID,      /* k<<<64, ...>>> */
	TUNABLE_LAUNCH_BLOCK,     /* k<<<..., 256>>> */
	TUNABLE_LAUNCH_SMEM,      /* k<<<..., ..., 4096>>> (a literal 0 is not listed) */
	TUNABLE_DIM3,             /* dim3 block(32, 8); */
	TUNABLE_LAUNCH_BOUNDS,    /* __launch_bounds__(256, 2) */
};

struct tunable {
	char *name;      /* unique within the source, see above */
	long long value; /* the literal's value */
	enum tunable_kind kind;
	char *scope;           /* the enclosing function or launched kernel, or NULL */
	unsigned line, column; /* 1-based position of the literal */
	uint32_t start, end;   /* the literal's bytes (sign and suffix included) */
};

struct tunable_list {
	struct tunable *v; /* in source order */
	size_t n;
};

/* a value to write: the tunable called name gets value */
struct tunable_set {
	const char *name;
	long long value;
};

/*
 * Find the tunables of d into *out (freed by the caller with
 * tunables_free(), also on error).  Returns 0, or -1 with err when the
 * tunables query cannot be compiled.
 */
int tunables_find(const struct syntax_doc *d, struct tunable_list *out, char *err);
/* free what a list holds and zero it */
void tunables_free(struct tunable_list *l);

/* the kind's name: "define", "constexpr", "const", "enum", "template_default",
 * "template_arg", "launch_grid", "launch_block", "launch_smem", "dim3",
 * "launch_bounds" */
const char *tunable_kind_name(enum tunable_kind k);

/* the tunable called name in l, or NULL */
const struct tunable *tunables_get(const struct tunable_list *l, const char *name);

/*
 * Rewrite the tunables named in sets[0..nsets) of src (n bytes) to their
 * new values, keeping each literal's base (hex, octal) and suffix (u, l).
 * Returns a fresh NUL-terminated source (*out_len bytes) that the caller
 * frees, or NULL with err naming the unknown tunable, the value that does
 * not fit (a negative value for an unsigned or launch-configuration
 * literal), or the reason the source or the result does not parse.
 */
char *tunables_rewrite(const char *src, size_t n, const struct tunable_set *sets, size_t nsets,
                       size_t *out_len, char *err);

/*
 * Parse an integer literal as C writes it ("128", "0x80u", "-4", "1'024",
 * "(16)" and a trailing comment as in a #define) from s[0..n).  Returns 0
 * and fills *value and the literal's offsets [*lit_start, *lit_end) within
 * s (parentheses and comments excluded); -1 when the text is anything else
 * (a float, an expression, out of range).
 */
int tunables_parse_int(const char *s, size_t n, long long *value, size_t *lit_start,
                       size_t *lit_end);

/* the list as a JSON array of {name, value, kind, line, column, scope};
 * the caller owns it */
cJSON *tunables_json(const struct tunable_list *l);

#endif
