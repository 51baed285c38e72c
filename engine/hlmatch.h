/*
 * hlmatch.h - kloop's own matcher for the highlight query: reads the
 * subset of tree-sitter's query language that grammars/queries/
 * highlights.scm uses and finds its captures in one depth-first walk of a
 * tree, giving the captures tree-sitter's query cursor gives (same pattern
 * indices, same capture ids) at a fraction of the cost.
 *
 * The subset: `;` comments; node patterns `(type child...)` with
 * `field: child`; anonymous nodes `"text"`; alternations `[a b ...]`
 * (alternatives may be node patterns; a capture after `]` applies to each);
 * captures `@name`; groupings `((pattern) (#pred ...))` holding one
 * pattern; predicates #eq?, #any-of?, #match? and their not- forms on one
 * capture and literal strings (other directives, #set! etc., are ignored
 * as syntax.c does).  Quantifiers, anchors, negated fields, wildcards,
 * supertypes, ERROR/MISSING patterns, groupings of sibling patterns and
 * predicates comparing two captures are refused by hlm_compile().
 */
#ifndef KL_HLMATCH_H
#define KL_HLMATCH_H

#include <stddef.h>
#include <stdint.h>
#include <tree_sitter/api.h>

/* a compiled query: read-only once made, so shareable between threads */
struct hlm;

/*
 * Compile the query text scm[0..len) against lang.  Returns a new matcher
 * that the caller frees with hlm_free(), or NULL with err ("NAME: line L:
 * what was found") when the text does not parse, names a node type or
 * field the grammar lacks, holds a bad regular expression or uses a
 * construct outside the subset.  name is the query's name for messages
 * ("highlights.scm").
 */
struct hlm *hlm_compile(const TSLanguage *lang, const char *name, const char *scm, size_t len,
                        char *err);

/* free m; NULL is allowed */
void hlm_free(struct hlm *m);

/* called for each capture found: the node, its pattern's index, the capture's id */
typedef void (*hlm_capture_fn)(void *ctx, TSNode node, uint32_t pattern, uint32_t capture);

/*
 * Find the matches of m's patterns in the tree below (and including) root,
 * whose source is src[0..len), and call cb(ctx, ...) for every capture of
 * a match whose captured node overlaps bytes [start, end).  A capture may
 * be reported more than once; the order is the walk's.  Holds no state in
 * m: several threads may run the same m at once (on different trees, or
 * on the same tree, which tree-sitter allows to be read concurrently).
 */
void hlm_run(const struct hlm *m, TSNode root, const char *src, size_t len, uint32_t start,
             uint32_t end, hlm_capture_fn cb, void *ctx);

/* the name of capture id `capture` (without the @), owned by m; NULL if out of range */
const char *hlm_capture_name(const struct hlm *m, uint32_t capture);

/* how many captures and patterns m has (tree-sitter's counts for the same text) */
uint32_t hlm_capture_count(const struct hlm *m);
uint32_t hlm_pattern_count(const struct hlm *m);

#endif
