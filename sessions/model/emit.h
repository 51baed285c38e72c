/*
 * emit.h - the typed emitters: one per event (event.h's table), the only
 * place where an event's JSON is built; each hands its event to
 * session_emit(), which journals it and folds it into the state.  The
 * session emits: emit -> session -> event -> state, never back.
 */
#ifndef KL_EMIT_H
#define KL_EMIT_H

#include <cJSON.h>

#include "event.h"
#include "session.h"

/*
 * Make s the session of task zTask: a new session gets its session_started
 * event (task, task directory, backend, shape set); an existing one must be
 * of the same task.  0, or -1 with err naming the journal and both tasks.
 */
int session_begin(struct session *s, const char *zTask, const char *zTaskDir, const char *zBackend,
                  const char *zShapes, char *err);

/*
 * The emitters: each builds its event, and session_emit() journals and
 * applies it.  All return 0 (or the new id where they make one) or -1 + err
 * (the journal refused it, or the state does: no such candidate or idea).
 */

/* session_started; zShapes may be NULL */
int ev_session_started(struct session *s, const char *zTask, const char *zTaskDir,
                       const char *zBackend, const char *zShapes, char *err);

/* what candidate_added carries (NULL / 0 members are left out) */
struct ev_candidate {
	const char *zName;   /* file name */
	const char *zOrigin; /* seed, human, llm, sweep, crossover */
	const int *aParent;  /* parents */
	int nParent;
	const char *zSource;  /* the source text */
	const char *zIdea;    /* the idea's title */
	int ideaId;           /* the idea's id */
	int request;          /* the LLM request the source came from */
	int branch;           /* its implementation branch (with request) */
	int attempt;          /* fixes before it (with request) */
	const char *zChanges; /* what the reply said it changed (with request) */
	int round;            /* the search round it belongs to (0: none given: the
	                       * latest open round, if any) */
};
/* candidate_added under the next free id; returns that id */
int ev_candidate_added(struct session *s, const struct ev_candidate *c, char *err);

/* eval_started; abWith: the candidate it is timed against in an A/B asked for
 * (0: none), so that one cut short is run again as that A/B */
int ev_eval_started(struct session *s, int cand, const char *zBackend, int abWith, char *err);
int ev_eval_running(struct session *s, int cand, char *err);
/* eval_finished with a copy of result */
int ev_eval_finished(struct session *s, int cand, const cJSON *result, char *err);
/* profile: Nsight Compute's metrics of candidate cand (the object profile,
 * copied), which join its result until its next evaluation */
int ev_profile(struct session *s, int cand, const cJSON *profile, char *err);
/* baseline: the session's baseline on device zDevice re-measured (ms; the
 * one before it previousMs, when known): every speedup there is against
 * it from here on (issue 39) */
int ev_baseline(struct session *s, const char *zDevice, double ms, double previousMs, char *err);
/* compile_baseline: torch.compile's baseline on device zDevice (cm: the
 * baselines' "compile" record, copied), measured after some results were
 * in; applying it gives those results of that device baseline_compile_ms
 * and speedup_compile (or baseline_compile_error) */
int ev_compile_baseline(struct session *s, const char *zDevice, const cJSON *cm, char *err);

/* what idea_proposed carries */
struct ev_idea {
	const char *zTitle, *zDescription, *zCategory;
	const char *zOrigin; /* llm or human */
	int request;         /* the request it came from (0: none) */
	int parent;          /* the candidate it improves (0: none) */
	int round;           /* the search round it belongs to (0: as ev_candidate) */
	int archiveEntry;    /* the archive entry it came from (0: none; origin "archive") */
};
/* idea_proposed under the next free idea id; returns that id */
int ev_idea_proposed(struct session *s, const struct ev_idea *d, char *err);
int ev_idea_accepted(struct session *s, int id, char *err);
/* zReason may be NULL */
int ev_idea_rejected(struct session *s, int id, const char *zReason, char *err);
/* idea_rejected of idea id, proposed again for its parent: the same as idea
 * dupOf, with the reason "the same as idea N for #P (deduplicated)" */
int ev_idea_duplicate(struct session *s, int id, int dupOf, char *err);
/* NULL fields are left as they are */
int ev_idea_edited(struct session *s, int id, const char *zTitle, const char *zDescription,
                   const char *zCategory, char *err);

/* what llm_request carries */
struct ev_llm_request {
	const char *zPurpose; /* ideas, implement, fix, crossover */
	const char *zProvider, *zModel, *zBaseUrl;
	const char *zSystem, *zPrompt;
	int parent;
	int idea;    /* branch requests: the idea (0: an ideas request) */
	int branch;  /* with idea */
	int attempt; /* with idea */
	int fixes;   /* the candidate a fix request repairs (0: none) */
	int round;   /* the search round it is for (0: none given) */
};
/* llm_request under the next free request id; returns that id */
int ev_llm_request(struct session *s, const struct ev_llm_request *q, char *err);

/* what llm_response carries (an llm_reply's fields, as llm.h) */
struct ev_llm_response {
	const char *zStatus, *zText, *zError, *zStop;
	int httpStatus, attempts;
	long inTokens, outTokens;
	double cost, latencyS, firstTokenS;
	const char *zProvider, *zModel;
	int sameAs; /* a branch reply whose code is this candidate's (0: none) */
};
int ev_llm_response(struct session *s, int request, const struct ev_llm_response *r, char *err);

/* ---- the search's (event_search.c); elapsedS: the search's wall time so far ---- */

/* the search's spending so far (search_finished, search_budget) */
struct ev_search_budget {
	int rounds, candidates, llmRequests;
	double usd;
};
/* one parent of parents_chosen */
struct ev_parent {
	int id;
	const char *zName;
	double speedup;
	const char *zSha256; /* its source's hash */
	const char *zReason; /* why the policy chose it */
};
/* settings: the whole settings object (copied) */
int ev_search_started(struct session *s, const cJSON *settings, double elapsedS, char *err);
int ev_search_paused(struct session *s, double elapsedS, char *err);
/* bContinued: a finished search goes on with a budget given anew, counted
 * from here ("continued": true) */
int ev_search_resumed(struct session *s, double elapsedS, int bContinued, char *err);
int ev_search_stopped(struct session *s, const char *zReason, double elapsedS, char *err);
int ev_search_finished(struct session *s, const char *zReason, const struct ev_search_budget *b,
                       double elapsedS, char *err);
/* value is copied; elapsedS < 0: set outside a search (a setting of
 * `kloop eval`'s, its precision policy), no "elapsed_s" */
int ev_search_set(struct session *s, const char *zKey, const cJSON *value, double elapsedS,
                  char *err);
int ev_round_started(struct session *s, int round, int best, double elapsedS, char *err);
int ev_parents_chosen(struct session *s, int round, const char *zPolicy, double seed,
                      const struct ev_parent *a, int n, const cJSON *snapshot, double elapsedS,
                      char *err);
int ev_round_finished(struct session *s, int round, int best, double bestSpeedup, int made,
                      double elapsedS, char *err);
int ev_pin(struct session *s, int cand, double elapsedS, char *err);
int ev_ban(struct session *s, int cand, double elapsedS, char *err);
int ev_unban(struct session *s, int cand, double elapsedS, char *err);
int ev_ban_category(struct session *s, const char *zCategory, double elapsedS, char *err);
int ev_prefer_category(struct session *s, const char *zCategory, double elapsedS, char *err);
int ev_idea_injected(struct session *s, int idea, double elapsedS, char *err);
int ev_suspect_flagged(struct session *s, int cand, double speedup, const char *zWhy,
                       double elapsedS, char *err);
int ev_suspect_cleared(struct session *s, int cand, double elapsedS, char *err);
/* previous: the incumbent it unseats (0: none) */
int ev_new_best(struct session *s, int cand, double speedup, double timeMs, int previous,
                double previousSpeedup, double elapsedS, char *err);
int ev_search_budget(struct session *s, const struct ev_search_budget *b, double elapsedS,
                     char *err);
/* an interleaved A/B of candidate cand against incumbent (a result's "ab",
 * harness.h harness_ab), journaled by the driver when the result comes */
int ev_ab_compared(struct session *s, int cand, int incumbent, const cJSON *ab, char *err);

#endif
