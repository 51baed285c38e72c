/*
 * sweep.h - parameter sweeps over a source's tunables (tunables.h): the
 * values each tunable may take, and the sources of a grid or a random
 * sample of points, each a rewrite of the literals only.  Pure: no I/O, no
 * state beyond the caller's seed, so a search that replays its journal
 * makes the same points again.
 *
 * Allowed values: a tunable is swept when its value is a power of two from
 * 2 to 4096 and its kind is a size a person would tune (#define, constexpr,
 * const, enum, template default or argument, launch block, dim3,
 * __launch_bounds__ max threads).  Its values are v/4, v/2, v*2 and v*4,
 * kept from 1 to 4096 (block sizes and max threads: 32 to 1024, dim3 sizes
 * 1 to 1024).  Grid sizes, shared memory sizes and other numbers are left
 * alone: they are usually derived from the problem, not chosen.
 */
#ifndef KL_SWEEP_H
#define KL_SWEEP_H

#include <stddef.h>
#include <stdint.h>

#include "tunables.h"

#define SWEEP_MAX_VALUES 4

/* one point: a source and the settings that made it */
struct sweep_point {
	char *zSource; /* the rewritten source, NUL-terminated */
	char *zLabel;  /* "TILE=32 BLOCK=128" */
};

struct sweep_list {
	struct sweep_point *v;
	size_t n;
};

/*
 * The values tunable t may take other than its own (ascending) into
 * out[SWEEP_MAX_VALUES]; returns how many (0: t is not swept).
 */
int sweep_values(const struct tunable *t, long long *out);

/*
 * Points of src (n bytes).  zMode "grid": every tunable alone at each of its
 * values (one at a time, in source order), then pairs of tunables; "random":
 * every swept tunable at its own or one of its values, drawn from seed.  At
 * most maxPoints points, none equal to src or to each other.  Fills *out
 * (freed with sweep_free(), also on error) and returns 0, or -1 + err for
 * an unknown mode or a source whose tunables cannot be found.  A source
 * with nothing to sweep gives 0 points.
 */
int sweep_points(const char *src, size_t n, const char *zMode, uint64_t seed, int maxPoints,
                 struct sweep_list *out, char *err);

void sweep_free(struct sweep_list *l);

#endif
