/*
 * policy.h - how a search chooses the parents of a round: a small table
 * of selection policies (`--policy NAME`), each a function of the folded
 * state and a seeded generator, so that a search is reproducible from its
 * journal.  Every pick carries the reason a person reads in replay.
 *
 * Eligible parents (for every policy): candidates evaluated "correct" with
 * a time, not banned, not a suspect that a person has not cleared, and not
 * of the same machine code as an earlier candidate (a result with
 * "same_code_as": that one stands for it).
 * They are considered in the order of their sources' SHA-256, so the
 * choice does not depend on the order in which parallel replies arrived
 * (and so on candidate ids).  A pinned candidate (eligible or not, unless
 * banned or failed) comes first.  What a policy sees is the snapshot of the
 * context (through, aBusy): with rounds overlapping, the candidates of the
 * rounds that may still be open are left out, so that the choice depends
 * only on rounds that are complete (ARCHITECTURE.md, "The search").
 *
 * The policies:
 *   islands  (default) a candidate's island is its first-generation
 *            ancestor (the child of its root; a root is its own island).
 *            Islands are ranked by their best speedup; each pick takes the
 *            next island's best, except that with probability 1/4 it takes
 *            instead the island's least-explored candidate (fewest
 *            children) - so the search keeps several lineages alive and
 *            gives less-explored candidates a chance.
 *   greedy   the fastest eligible candidates.
 *   random   eligible candidates drawn uniformly.
 */
#ifndef KL_POLICY_H
#define KL_POLICY_H

#include <stdint.h>

#include "state.h"

#define POLICY_MAX_PICKS 16

/* what a policy sees besides the state */
struct policy_ctx {
	const struct state *st;
	int pinned;    /* a candidate a person pinned (0: none) */
	uint64_t seed; /* the search's seed */
	int round;     /* the round being chosen for (mixed into the seed) */
	int (*excluded)(const struct state *st, int id); /* banned or suspect, or NULL */
	/* the snapshot (rounds overlap): a candidate made by a round after
	 * `through` is not seen, neither as a parent nor as a child (-1: every
	 * round is seen); aBusy[0..nBusy) (parents of rounds still open) are not
	 * chosen.  A zeroed through sees only candidates made outside rounds. */
	int through;
	const int *aBusy;
	int nBusy;
};

struct policy_pick {
	int cand;          /* the candidate */
	char zReason[200]; /* why, for people */
};

struct policy {
	const char *zName; /* islands, greedy, random */
	const char *zHelp; /* one line */
	/* choose up to k parents among the eligible aElig[0..nElig) (ordered as
	 * above); fill out and return how many */
	int (*choose)(const struct policy_ctx *ctx, const int *aElig, int nElig, int k,
	              uint64_t *rng, struct policy_pick *out);
};

/* the table, ended by a NULL name */
extern const struct policy policy_table[];

/* the policy called zName, or NULL */
const struct policy *policy_find(const char *zName);

/* "islands, greedy, random" (static) */
const char *policy_names(void);

/* the island of candidate id: its first-generation ancestor (a root is its
 * own island) */
int policy_island(const struct state *st, int id);

/* 1 when candidate c may be a parent (correct, timed); excluded() aside */
int policy_eligible(const struct state *st, const struct cand *c);
/* 1 when the snapshot of ctx holds candidate c (ctx->through) */
int policy_visible(const struct policy_ctx *ctx, const struct cand *c);

/*
 * Choose up to k (at most POLICY_MAX_PICKS) parents for round ctx->round
 * with policy pol: the pin first, then the policy's picks.  Returns how
 * many were chosen (0: no eligible candidate).
 */
int policy_choose(const struct policy *pol, const struct policy_ctx *ctx, int k,
                  struct policy_pick *out);

#endif
