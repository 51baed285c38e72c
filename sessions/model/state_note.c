/*
 * state_note.c - what a person is told about a candidate in flight that the
 * state can say: why a CUTLASS compile takes a minute (issue 36).  Apart
 * from state.c, which the journal's fuzzer builds alone.
 */
#include "state.h"

#include <stdio.h>
#include <string.h>

#include "libs.h"

const char *state_compile_note(const struct state *st, const struct cand *c, const char *zStage,
                               char *buf, size_t n)
{
	buf[0] = 0;
	if (!c || !c->zSource || !zStage || strncmp(zStage, "compil", 6) ||
	    !libs_source_includes_cutlass(c->zSource))
		return buf;
	/* the last CUTLASS compile of the session that was not the cache's */
	double last = -1;
	for (int i = 0; i < st->nCand; i++) {
		const struct cand *o = &st->aCand[i];
		if (o != c && o->zSource && o->v.comp.present && !o->v.comp.cached &&
		    o->v.comp.seconds > 0 && libs_source_includes_cutlass(o->zSource))
			last = o->v.comp.seconds;
	}
	if (last > 0)
		snprintf(buf, n, ": CUTLASS templates, nvcc is slow on them (the last took %.0f s)",
		         last);
	else
		snprintf(buf, n, ": CUTLASS templates, nvcc is slow on them (about a minute)");
	return buf;
}
