/*
 * runner_int.h - what the runner's files share (runner.c: the session,
 * its evaluations and opening; runner_llm.c: the LLM pipeline;
 * runner_profile.c: Nsight Compute in the background).  Private to them.
 */
#ifndef KL_RUNNER_INT_H
#define KL_RUNNER_INT_H

#include "runner.h"

/* tell the front end n */
static inline void note(struct runner *rn, const struct runner_note *n)
{
	if (rn->notify)
		rn->notify(rn->arg, n);
}

static inline void note_simple(struct runner *rn, enum runner_note_kind kind, int cand,
                               const char *zText)
{
	struct runner_note n = {.kind = kind, .cand = cand, .zText = zText};
	note(rn, &n);
}

/* profiles of rn running (runner_profile.c) */
int runner_profiles(const struct runner *rn);
/* end them (runner_close()) */
void runner_profiles_end(struct runner *rn);

#endif
