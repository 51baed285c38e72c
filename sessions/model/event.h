/*
 * event.h - the session's event types: one table ({name, check, apply}, as
 * tmux's cmd_entry) from which the journal is folded into the state
 * (state_check()/state_apply(), here, look an event up in it).  Events
 * point to the state, never back: the typed emitters, which hand an event
 * to the session, are emit.h's.  The
 * journal's format is the events' JSON, one per line (docs/SESSIONS.md);
 * an event of a type not in the table is counted and otherwise ignored, so
 * that older kloops read newer journals.
 */
#ifndef KL_EVENT_H
#define KL_EVENT_H

#include <cJSON.h>

#include "state.h"

enum ev_type {
	EV_SESSION_STARTED, /* task, task_dir, backend, shapes?, kloop */
	EV_BASELINE,        /* median_ms, device?, previous_ms?: a re-measure */
	EV_CANDIDATE_ADDED, /* id, name, origin, parents, source, idea?, idea_id?, ... */
	EV_EVAL_STARTED,    /* candidate, backend */
	EV_EVAL_FINISHED,   /* candidate, result */
	EV_EVAL_RUNNING,    /* candidate: its code is about to run (the worker said
	                     * "running"), after eval_started and before eval_finished */
	EV_IDEA_PROPOSED,   /* id, title, description, category, origin, request?, parent? */
	EV_IDEA_ACCEPTED,   /* id */
	EV_IDEA_REJECTED,   /* id, reason?, duplicate_of? (proposed again for its parent) */
	EV_IDEA_EDITED,     /* id, title?, description?, category? */
	EV_LLM_REQUEST,     /* request, purpose, provider, model, ..., prompt */
	EV_LLM_RESPONSE,    /* request, status, text, tokens, cost, ..., same_as? (a branch
	                     * reply whose code is that candidate's: not added again) */
	EV_PROFILE,         /* candidate, profile (Nsight Compute's facts, docs/PROFILE.md) */
	/* the search's (sessions/search/search.h); each carries elapsed_s, the
	 * search's wall time so far.  Round 0 is the reference's translation. */
	EV_SEARCH_STARTED,   /* settings */
	EV_SEARCH_PAUSED,    /* */
	EV_SEARCH_RESUMED,   /* */
	EV_SEARCH_STOPPED,   /* reason */
	EV_SEARCH_FINISHED,  /* reason, rounds, candidates, usd, llm_requests */
	EV_SEARCH_SET,       /* key, value */
	EV_ROUND_STARTED,    /* round, best */
	EV_PARENTS_CHOSEN,   /* round, policy, seed, parents: [{id, name, speedup,
	                      * source_sha256, reason}] */
	EV_ROUND_FINISHED,   /* round, best, best_speedup, made */
	EV_PIN,              /* candidate */
	EV_BAN,              /* candidate */
	EV_UNBAN,            /* candidate */
	EV_BAN_CATEGORY,     /* category */
	EV_PREFER_CATEGORY,  /* category */
	EV_IDEA_INJECTED,    /* idea */
	EV_SUSPECT_FLAGGED,  /* candidate, speedup, why */
	EV_SUSPECT_CLEARED,  /* candidate */
	EV_NEW_BEST,         /* candidate, speedup, time_ms, previous?, previous_speedup? */
	EV_SEARCH_BUDGET,    /* rounds, candidates, usd, llm_requests */
	EV_AB_COMPARED,      /* candidate, incumbent, pairs, wins, p_value, ratio, won, rule,
	                        candidate_ms, incumbent_ms, method, error? */
	EV_COMPILE_BASELINE, /* device, compile: torch.compile's baseline, compiled in the
	                      * background of a search, reached the results before it */
	EV_COUNT,
	EV_UNKNOWN = EV_COUNT /* a type this kloop does not know */
};

struct ev_entry {
	const char *name; /* the "type" in the journal */
	/* 0 if ev can be applied to st, else -1 + err (NULL: always) */
	int (*check)(const struct state *st, const cJSON *ev, char *err);
	/* fold ev (checked) into st; ts is its wall-clock time (0: unknown) */
	void (*apply)(struct state *st, const cJSON *ev, double ts);
};

/* the table, indexed by enum ev_type */
extern const struct ev_entry ev_table[EV_COUNT];

/* the type of ev from its "type" member (EV_UNKNOWN when missing or unknown) */
enum ev_type ev_type_of(const cJSON *ev);
/* the journal name of t ("eval_finished"; "unknown" for EV_UNKNOWN) */
const char *ev_name(enum ev_type t);

/* a new event of type t ({"type": name}), for an emitter (emit.h) to fill */
cJSON *ev_new(enum ev_type t);

/* ---- the fold ---- */

/* apply one event to st through the table; unknown event types are
 * counted and ignored (so that older kloops read newer journals).  0, or
 * -1 + err for an event that contradicts the state (e.g. a result for a
 * candidate that does not exist). */
int state_apply(struct state *st, const cJSON *ev, char *err);

/* 0 if ev could be applied to st, else -1 + err (nothing changes) */
int state_check(const struct state *st, const cJSON *ev, char *err);

#endif
