/*
 * tswalk.h - a pre-order walk over the visible nodes of a tree-sitter tree
 * within a byte range, several times cheaper per node than TSTreeCursor:
 * it reads the runtime's subtrees directly (the pinned tree-sitter 0.25.1;
 * see tswalk.c).  It visits the nodes a TSTreeCursor walk visits, with the
 * same symbols, fields and child indexes (tests/unit/test_hlmatch.c checks
 * that on every fixture).
 *
 * A walk keeps no state outside its struct tswalk, so threads may walk
 * different trees (or the same one) at once.
 */
#ifndef KL_TSWALK_H
#define KL_TSWALK_H

#include <stdint.h>
#include <tree_sitter/api.h>

/* a visible node the walk reached */
struct tswalk_node {
	TSNode node;
	TSSymbol sym;        /* its public symbol, as ts_node_symbol() gives it */
	uint32_t depth;      /* 0 for the root, 1 for its visible children, ... */
	uint32_t index;      /* its index among its visible parent's visible children */
	uint32_t start, end; /* its bytes */
};

struct tswalk;

/*
 * A walk over root and its visible descendants that overlap bytes
 * [start, end), in source order, parents before children.  A node that
 * does not overlap the range is neither reported nor entered.
 */
struct tswalk *tswalk_new(TSNode root, uint32_t start, uint32_t end);
/* the next node: 1 with *out filled, or 0 when the walk is over */
int tswalk_next(struct tswalk *w, struct tswalk_node *out);
/* the field the node tswalk_next() reported last hangs on (0 for none), as
 * ts_tree_cursor_current_field_id() gives it */
TSFieldId tswalk_field(const struct tswalk *w);
void tswalk_free(struct tswalk *w);

#endif
