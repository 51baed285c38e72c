/*
 * tswalk.c - the visible nodes of a tree in pre-order, read straight from
 * the runtime's subtrees.  TSTreeCursor does the same walk through three
 * layers of calls per step and keeps bookkeeping kloop does not need
 * (descendant indexes, a stack that is searched again for each node's
 * alias and field); over the 78,000 nodes of a 5,000-line .cu file it was
 * more than half of the highlighting time.  This reads the internal
 * headers of the tree-sitter runtime that `make deps` pins (0.25.1), and
 * follows what its tree_cursor.c does: hidden nodes are entered but not
 * reported, a child's alias comes from its parent's production, a field is
 * looked up in the field maps of the hidden ancestors up to the visible one.
 */
#include "tswalk.h"

#include <stdbool.h>
#include <stdlib.h>

#include "language.h"
#include "length.h"
#include "subtree.h"
#include "tree.h"
#include "util.h"

/* the children of one node being read: a visible node, the root, or a
 * hidden node entered on the way to its visible descendants */
struct level {
	const Subtree *st;       /* the node */
	const TSSymbol *aliases; /* the alias sequence of its production, or NULL */
	Length pos;              /* where child ci starts (after its padding) */
	uint32_t ci;             /* the next child to read */
	uint32_t sci;            /* the next structural (non-extra) child */
	uint32_t vis;            /* the level of the nearest visible node at or above */
	uint32_t vnext;          /* (visible levels) the index of the next visible child */
	uint32_t depth;          /* the visible depth of that visible node */
	uint32_t in_sci;         /* this node's structural index in its parent */
	bool in_extra;           /* this node is an extra in its parent */
	bool visible;            /* this node is visible (or the root) */
};

struct tswalk {
	const TSTree *tree;
	uint32_t start, end;
	struct level *aLevel;
	size_t nLevel, aLevelA;
	TSNode root;
	bool root_pending; /* the root is yet to be reported */
	/* the node reported last is child cur_sci of level cur_level (or the root) */
	bool cur_root;
	size_t cur_level;
	uint32_t cur_sci;
	bool cur_extra;
};

static void push(struct tswalk *w, const Subtree *st, Length pos, uint32_t vis, uint32_t depth,
                 uint32_t in_sci, bool in_extra, bool visible)
{
	if (w->nLevel == w->aLevelA)
		xgrow((void **)&w->aLevel, &w->aLevelA, w->nLevel + 1, sizeof *w->aLevel);
	size_t me = w->nLevel++;
	w->aLevel[me] = (struct level){
	    .st = st,
	    .aliases = ts_language_alias_sequence(w->tree->language, ts_subtree_production_id(*st)),
	    .pos = pos,
	    .vis = visible ? (uint32_t)me : vis,
	    .depth = depth,
	    .in_sci = in_sci,
	    .in_extra = in_extra,
	    .visible = visible,
	};
}

struct tswalk *tswalk_new(TSNode root, uint32_t start, uint32_t end)
{
	struct tswalk *w = xcalloc(1, sizeof *w);
	w->tree = root.tree;
	w->start = start;
	w->end = end;
	w->root = root;
	w->root_pending = !ts_node_is_null(root) && ts_node_start_byte(root) < end &&
	                  ts_node_end_byte(root) > start;
	return w;
}

void tswalk_free(struct tswalk *w)
{
	if (!w)
		return;
	free(w->aLevel);
	free(w);
}

int tswalk_next(struct tswalk *w, struct tswalk_node *out)
{
	if (w->root_pending) {
		w->root_pending = false;
		const Subtree *st = w->root.id;
		*out = (struct tswalk_node){
		    w->root, ts_node_symbol(w->root),     0,
		    0,       ts_node_start_byte(w->root), ts_node_end_byte(w->root)};
		w->cur_root = true;
		if (ts_subtree_visible_child_count(*st) > 0) {
			Length pos = {out->start, ts_node_start_point(w->root)};
			push(w, st, pos, 0, 0, 0, false, true);
		}
		return 1;
	}
	while (w->nLevel) {
		struct level *l = &w->aLevel[w->nLevel - 1];
		uint32_t count = ts_subtree_child_count(*l->st);
		if (l->ci >= count) {
			w->nLevel--;
			continue;
		}
		const Subtree *kids = ts_subtree_children(*l->st);
		const Subtree *child = &kids[l->ci];
		Length pos = l->pos;
		bool extra = ts_subtree_extra(*child);
		uint32_t sci = l->sci;
		TSSymbol alias = !extra && l->aliases ? l->aliases[sci] : 0;
		bool visible = ts_subtree_visible(*child) || alias;
		Length size = ts_subtree_size(*child);
		if (!extra)
			l->sci++;
		l->ci++;
		l->pos = length_add(pos, size);
		if (l->ci < count)
			l->pos = length_add(l->pos, ts_subtree_padding(kids[l->ci]));

		uint32_t s = pos.bytes, e = s + size.bytes;
		if (s >= w->end) { /* so does everything after it */
			w->nLevel--;
			continue;
		}
		size_t me = w->nLevel - 1;
		struct level *v = &w->aLevel[l->vis];
		uint32_t nvis = ts_subtree_visible_child_count(*child);
		if (!visible) {
			if (!nvis)
				continue;
			if (e <= w->start)
				v->vnext += nvis;
			else
				push(w, child, pos, l->vis, l->depth, sci, extra, false);
			continue;
		}
		uint32_t index = v->vnext++;
		if (e <= w->start)
			continue;
		uint32_t depth = v->depth + 1;
		TSSymbol sym = alias ? alias : ts_subtree_symbol(*child);
		*out = (struct tswalk_node){ts_node_new(w->tree, child, pos, alias),
		                            ts_language_public_symbol(w->tree->language, sym),
		                            depth,
		                            index,
		                            s,
		                            e};
		w->cur_root = false;
		w->cur_level = me;
		w->cur_sci = sci;
		w->cur_extra = extra;
		if (nvis)
			push(w, child, pos, 0, depth, sci, extra, true);
		return 1;
	}
	return 0;
}

TSFieldId tswalk_field(const struct tswalk *w)
{
	if (w->cur_root)
		return 0;
	size_t li = w->cur_level;
	uint32_t sci = w->cur_sci;
	bool extra = w->cur_extra;
	for (;;) {
		if (extra)
			return 0;
		const struct level *p = &w->aLevel[li];
		const TSFieldMapEntry *map, *map_end;
		ts_language_field_map(w->tree->language, ts_subtree_production_id(*p->st), &map,
		                      &map_end);
		for (; map < map_end; map++)
			if (!map->inherited && map->child_index == sci)
				return map->field_id;
		if (li == 0 || p->visible)
			return 0;
		sci = p->in_sci;
		extra = p->in_extra;
		li--;
	}
}
