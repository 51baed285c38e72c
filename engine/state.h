/*
 * state.h - the engine's state (task, population of candidates, their
 * results) as the fold of the session's events.  state_apply() is the only
 * way the state changes; the UI reads it and never writes it.
 */
#ifndef KL_STATE_H
#define KL_STATE_H

#include <cJSON.h>

/* an optimization idea (idea_proposed, then accepted, edited or rejected) */
struct state_idea {
	int id;             /* idea id, from 1 */
	char *zTitle;       /* short title */
	char *zDescription; /* what to change and why */
	char *zCategory;    /* one of ideas_categories[] (ideas.h) or "other" */
	char *zStatus;      /* "pending", "accepted" or "rejected" */
	char *zOrigin;      /* "llm" or "human" */
	int parent;         /* the candidate it improves (0: none given) */
	int request;        /* the llm_request it came from (0: none) */
	int edited;         /* a person edited it */
};

/* the LLM traffic of a session (llm_request / llm_response) */
struct state_llm {
	int nRequests;   /* llm_request events */
	int nResponses;  /* llm_response events */
	int nFailed;     /* responses with a status other than "ok" */
	int lastRequest; /* the highest request id seen */
	long inTokens;   /* input tokens, summed over responses */
	long outTokens;  /* output tokens */
	double cost;     /* cost where the price is configured, summed */
};

struct cand {
	int id;          /* candidate id, from 1 */
	char *zName;     /* file name (e.g. "seed.c") */
	char *zOrigin;   /* seed, llm, human, sweep, crossover */
	int aParent[2];  /* parent ids */
	int nParent;
	char *zSource;   /* source text */
	char *zIdea;     /* the idea it implements, or NULL */
	int ideaId;      /* that idea's id in the state's ideas (0: none) */
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
	struct state_idea *aIdea; /* the ideas proposed, in order */
	int nIdea;
	size_t nIdeaAlloc;
	struct state_llm llm; /* LLM requests and their cost so far */
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
/* the idea with id, or NULL */
struct state_idea *state_idea(const struct state *st, int id);
/* the next free idea id */
int state_next_idea_id(const struct state *st);
/* the next free LLM request id */
int state_next_request_id(const struct state *st);

/* a candidate as JSON: {"id", "name", "origin", "parents", "status",
 * "reason", "time_ms", "speedup", "idea"?, "idea_id"?} (caller frees) */
cJSON *state_cand_json(const struct cand *c);

/* the state as JSON: {"task", "backend", "events", "baseline_ms",
 * "candidates": [state_cand_json() of each], "ideas": [{"id", "title",
 * "description", "category", "status", "origin", "parent", "edited"}],
 * "llm": {"requests", "responses", "failed", "input_tokens",
 * "output_tokens", "cost"}}; the caller owns it */
cJSON *state_to_json(const struct state *st);

#endif
