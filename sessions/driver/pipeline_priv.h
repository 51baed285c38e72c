/*
 * pipeline_priv.h - what the pipeline's files share (private to
 * sessions/driver/pipeline*.c): its steps and its state; pipeline_prompt.c fills
 * a step's prompt.
 */
#ifndef KL_PIPELINE_PRIV_H
#define KL_PIPELINE_PRIV_H

#include "pipeline.h"
#include "prompt.h"
#include "util.h"

#define INSPIRATIONS 2
#define INSPIRATION_MAX (16u << 10)
#define ARCHIVE_ENTRIES 3
#define ARCHIVE_MAX 4096

enum step_kind { STEP_IDEAS, STEP_BRANCH };
enum step_state {
	STEP_PARENTS, /* waiting for the parents' results */
	STEP_LLM,     /* waiting for an LLM reply */
	STEP_EVAL,    /* waiting for the candidate's verdict */
	STEP_DONE,
};

struct step {
	enum step_kind kind;
	enum step_state state;
	struct pipeline *p;
	int parent, parent2;  /* candidates (parent2: crossover, 0 otherwise) */
	int n;                /* ideas: how many; branch: branches in the round */
	int idea;             /* branch: the idea */
	int branch;           /* branch: its number, from 1 */
	int attempt;          /* branch: fixes sent so far */
	int cand;             /* branch: the latest candidate (0: none) */
	char *zBadReply;      /* branch: a reply without usable code, for the fix */
	char *zBadReason;     /* ... and why */
	int request;          /* the session's id of the pending LLM request */
	int llmId;            /* the client's id of it */
	const char *zPurpose; /* what it asks for: ideas, implement, fix, crossover */
	double tAsked;        /* monotonic time it was sent */
	double usdHold;       /* what its request in flight may cost (estimate) */
	int round;            /* the search round it works for (0: none given) */
	struct step *next;
};

struct pipeline {
	struct pipeline_config pc;
	struct prompt_vars task; /* the task's placeholders */
	strbuf system;           /* the system prompt */
	struct step *steps;
	int depth;               /* advance() calls on the stack */
	int noRepeats;           /* a reply whose code the session has makes no candidate */
	pipeline_limit_fn limit; /* may a request go out, a candidate be added */
	void *limitArg;
	double usdNext; /* the estimate of the latest request asked */
};

/* the prompt zName (prompts/NAME.md) for step s, its placeholders filled
 * (the task's, the parent's, the idea's, the archive's, the inspirations),
 * into out: 0 or -1 + err */
int pipeline_build(struct pipeline *p, struct step *s, const char *zName, strbuf *out, char *err);

#endif
