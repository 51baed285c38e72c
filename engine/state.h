/*
 * state.h - the engine's state (task, population of candidates, their
 * results) as the fold of the session's events.  state_apply() is the only
 * way the state changes; the UI reads it and never writes it.
 */
#ifndef KL_STATE_H
#define KL_STATE_H

#include <cJSON.h>

struct cand {
	int id;          /* candidate id, from 1 */
	char *zName;     /* file name (e.g. "seed.c") */
	char *zOrigin;   /* seed, llm, human, sweep, crossover */
	int aParent[2];  /* parent ids */
	int nParent;
	char *zSource;   /* source text */
	char *zIdea;     /* the idea it implements, or NULL */
	char *zStatus;   /* "new", "evaluating", or an eval status (correct, incorrect, ...) */
	char *zReason;   /* the eval's reason ("" if none) */
	double timeMs;   /* median time, or -1 */
	double speedup;  /* baseline / time, or -1 */
	cJSON *result;   /* the last eval result, or NULL */
	double tsAdded;  /* wall-clock time of its candidate_added event (0: unknown) */
	double tsEval;   /* wall-clock time of its last eval_finished (0: none) */
};

struct state {
	char *zTask;      /* task name */
	char *zTaskDir;   /* where it was loaded from */
	char *zBackend;   /* backend of the session */
	char *zShapes;    /* shape set, or NULL */
	struct cand *aCand;
	int nCand;
	size_t nCandAlloc;
	int maxId;        /* the largest candidate id (0: none) */
	int nEvents;      /* events applied */
	double baselineMs; /* reference time, or -1 */
	double tsStarted;  /* wall-clock time of session_started (0: unknown) */
};

void state_init(struct state *st);
void state_free(struct state *st);

/* apply one event; unknown event types are counted and ignored (so that
 * older kloops read newer journals).  0, or -1 + err for an event that
 * contradicts the state (e.g. a result for a candidate that does not exist). */
int state_apply(struct state *st, const cJSON *ev, char *err);

/* 0 if ev could be applied to st, else -1 + err (nothing changes) */
int state_check(const struct state *st, const cJSON *ev, char *err);

/* the candidate with id, or NULL */
struct cand *state_cand(const struct state *st, int id);
/* the next free candidate id */
int state_next_id(const struct state *st);

/* the state as JSON: {"task", "backend", "events", "baseline_ms",
 * "candidates": [{"id", "name", "origin", "parents", "status", "reason",
 * "time_ms", "speedup"}]}; the caller owns it */
cJSON *state_to_json(const struct state *st);

#endif
