/*
 * state.h - the engine's state (task, population of candidates, their
 * results) as the fold of the session's events.  state_apply() (event.h)
 * is the only way the state changes; the UI reads it and never writes it.
 */
#ifndef KL_STATE_H
#define KL_STATE_H

#include <cJSON.h>

#include "search_settings.h"
#include "status.h"
#include "verdict.h"

/* where an idea stands (its journal names: idea_status_name()) */
enum idea_status {
	IDEA_PENDING,  /* proposed, not decided */
	IDEA_ACCEPTED, /* to be implemented */
	IDEA_REJECTED, /* never to be implemented */
	IDEA_STATUS_COUNT
};

/* "pending", "accepted" or "rejected"; "pending" for a value out of range */
const char *idea_status_name(enum idea_status s);
/* a person (or the gate) has decided it: accepted or rejected */
int idea_decided(enum idea_status s);

/* zText normalised for comparing ideas: lower case, each run of
 * whitespace and punctuation one space, none at either end (caller frees) */
char *idea_text_norm(const char *zText);

/* where a search stands, folded from its events (names: search_state_name()) */
enum search_state {
	SEARCH_NONE,     /* no search_started yet */
	SEARCH_RUNNING,  /* started or resumed */
	SEARCH_PAUSED,   /* search_paused */
	SEARCH_STOPPED,  /* search_stopped: a person stopped it (it may be started again) */
	SEARCH_FINISHED, /* search_finished: it reached its end (budget, target, rounds) */
	SEARCH_STATE_COUNT
};

/* "running", "paused", "stopped", "finished"; "" for none (or out of range) */
const char *search_state_name(enum search_state s);
/* a started search that has not ended: running or paused */
int search_state_live(enum search_state s);
/* a search that has ended: stopped or finished */
int search_state_ended(enum search_state s);

/* an optimization idea (idea_proposed, then accepted, edited or rejected) */
struct state_idea {
	int id;                  /* idea id, from 1 */
	char *zTitle;            /* short title */
	char *zDescription;      /* what to change and why */
	char *zCategory;         /* one of ideas_categories[] (ideas.h) or "other" */
	enum idea_status status; /* pending, accepted or rejected */
	char *zOrigin;           /* "llm" or "human" */
	int parent;              /* the candidate it improves (0: none given) */
	int request;             /* the llm_request it came from (0: none) */
	int edited;              /* a person edited it */
	int round;               /* the search round it was proposed in (0: none) */
	int duplicateOf;         /* rejected as the same as this earlier idea for its
	                          * parent (idea_rejected's "duplicate_of"; 0: none) */
};

/* an implementation branch of an idea (llm_request and candidate_added with
 * an idea and a branch): where it stands, so that a resumed session asks
 * again what was cut short */
struct state_branch {
	int idea, branch;
	int parent;      /* the candidate its first request was about */
	int round;       /* the search round of its first request (0: none) */
	int lastRequest; /* its latest request */
	int answered;    /* that request has its llm_response */
	int lastCand;    /* its latest candidate (0: none yet) */
	int candRequest; /* the request that candidate came from */
	int attempt;     /* the fixes before that candidate */
	int lastAttempt; /* the fixes sent before its latest request */
	int lastFixes;   /* the candidate its latest request fixes (0: none) */
	int sameAs;      /* its latest reply's code is this candidate's, so it made
	                    none (llm_response's "same_as"; 0: none) */
	int failed;      /* its latest reply's status is not "ok" */
	int prevNoCand;  /* its latest request fixes the reply before it, which made
	                    no candidate (no usable code) */
	char *zReply;    /* its latest reply while no candidate has come of it
	                    (what such a fix sends back), else NULL */
};

/* one llm_request: who was asked (what the archive files a win's model as) */
struct state_request {
	int request;     /* its id */
	char *zProvider; /* "provider" as journaled ("" where none) */
	char *zModel;    /* "model" (NULL where none was said; "" from the command
	                  * provider, which names none) */
};

/* the LLM traffic of a session (llm_request / llm_response) */
struct state_llm {
	int nRequests;     /* llm_request events */
	int nResponses;    /* llm_response events */
	int nFailed;       /* responses with a status other than "ok" */
	int lastRequest;   /* the highest request id seen */
	long inTokens;     /* input tokens, summed over responses */
	long outTokens;    /* output tokens */
	long maxOutTokens; /* the most output tokens of one response */
	int nCounted;      /* responses that reported their tokens (the command
	                    * provider reports none: -1 in the journal) */
	double cost;       /* cost where the price is configured, summed */
};

struct cand {
	int id;         /* candidate id, from 1 */
	char *zName;    /* file name (e.g. "seed.c") */
	char *zOrigin;  /* seed, llm, human, sweep, crossover */
	int aParent[2]; /* parent ids */
	int nParent;
	char *zSource;      /* source text */
	char *zIdea;        /* the idea it implements, or NULL */
	int ideaId;         /* that idea's id in the state's ideas (0: none) */
	enum status status; /* new, evaluating, or the last verdict (status.h) */
	char *zStatus;      /* its name as journaled ("new", "correct", ...; a newer kloop's
	                     * unknown name is kept here while status says error) */
	char *zReason;      /* the eval's reason ("" if none) */
	double timeMs;      /* median time, or -1 */
	double speedup;     /* baseline / time, or -1 */
	cJSON *result;      /* the last eval result as journaled, or NULL: for the
	                     * journal and export only; read v */
	struct verdict v;   /* result decoded (verdict.h; its strings are result's):
	                     * state_cand_decode() after result changes */
	double tsAdded;     /* wall-clock time of its candidate_added event (0: unknown) */
	double tsEval;      /* wall-clock time of its last eval_finished (0: none) */
	int nUnfinished;    /* eval_started since its last eval_finished: evaluations the
	                     * session did not live through (poison pills, issue 14) */
	int nEvals;         /* its eval_finished events so far */
	int firstEval;      /* the ordinal of the event of its first verdict (0: none yet):
	                     * the order in which verdicts came, and a search judged them */
	int lastEval;       /* the ordinal of the event of its latest verdict (0: none yet) */
	int request;        /* the llm_request that wrote it (candidate_added's "request";
	                     * 0: none) */
	int nRunning;       /* of them, those whose code had started to run (eval_running):
	                     * the ones a candidate can have cut short itself */
	int round;          /* the search round that made it (0: none, or translation) */
	int abWith;         /* its unfinished evaluation is an A/B against this one (0: none) */
	int unverified;     /* correct, but kloop's clock could not bound its time (its
	                     * timing's "verified": false): shown as such, never ranked */
	int reduced;        /* correct, but of reduced precision (its "precision"
	                     * verdict, precision.h): ranked only under the policy
	                     * "precision any" (state_precision_any) */
	int belowFloor;     /* correct, but its time is below the device's floor (its
	                     * "roofline" has "suspect", roofline.h): a suspect,
	                     * ranked only once a person cleared it */
};

/* c->v from c->result again, after c->result changed */
void state_cand_decode(struct cand *c);

/* ---- the search (sessions/search/search.h), folded from its events ---- */
#define STATE_MAX_PARENTS 16

/* one interleaved A/B timing (ab_compared; in or out of a search) */
struct state_ab {
	int cand, incumbent; /* the challenger and the one it was timed against */
	int pairs, wins;     /* pairs timed, pairs the challenger was faster in */
	double ratio;        /* median per-pair incumbent/challenger time, or -1 */
	int won;             /* beyond the noise (harness.h, harness_ab) */
	int failed;          /* it could not be run ("error": the incumbent failed) */
	int unverified;      /* its times could not be bounded by kloop's clock (a
	                      * loaded machine: "verified": false): it settles
	                      * nothing, and the search asks it again */
};

/* one round of a search */
struct state_round {
	int round;                         /* its number (0: translation) */
	int aParent[STATE_MAX_PARENTS];    /* parents_chosen */
	char *azReason[STATE_MAX_PARENTS]; /* the policy's reason for each */
	int nParent;
	char *zPolicy;    /* the policy that chose them */
	int finished;     /* round_finished was seen */
	int bestStart;    /* the incumbent when it started (0: none) */
	int nMade;        /* candidates it made (round_finished's "made") */
	int bestId;       /* the incumbent at its end (0: none) */
	double bestSpeed; /* its speedup (-1: none) */
	int improved;     /* a new_best named one of its candidates */
	int lagged;       /* its parents were chosen from a lagged snapshot (it
	                   * overlapped open rounds: parents_chosen's snapshot) */
};

/* a candidate held back as suspect until a person clears it */
struct state_suspect {
	int cand;
	double speedup;
	char *zWhy;
	int cleared;
};

struct state_search {
	int started;             /* search_started was seen */
	enum search_state state; /* running, paused, stopped, finished (none: no search) */
	char *zWhy;              /* why it stopped or finished */
	cJSON *settings;         /* {"ideas", "branches", "policy", "seed", "gate", ...} */
	/* the same typed, the defaults where not given (a newer kloop's keys
	 * are kept in settings only) */
	struct search_settings set;
	int round;     /* the latest round started (0: none) */
	int roundOpen; /* rounds started and not finished (several when rounds
	                * overlap: the search's `overlap` setting) */
	struct state_round *aRound;
	int nRound;
	size_t nRoundAlloc;
	int pinned;   /* the next parent a person asked for (0: none) */
	int *aBanned; /* candidates never to be parents */
	int nBanned;
	size_t nBannedAlloc;
	char **azBanCat; /* idea categories rejected by the gate */
	int nBanCat;
	size_t nBanCatAlloc;
	char **azPreferCat; /* idea categories accepted first */
	int nPreferCat;
	size_t nPreferCatAlloc;
	struct state_suspect *aSuspect;
	int nSuspect;
	size_t nSuspectAlloc;
	struct state_ab *aAb; /* the interleaved A/B timings (ab_compared), oldest first */
	int nAb;
	size_t nAbAlloc;
	int bestId;       /* the incumbent (new_best), 0: none */
	double bestSpeed; /* its speedup */
	double elapsedS;  /* search wall time as of the last search event */
	double tsElapsed; /* that event's ts (0: none) */
	int nCandStart;   /* candidates in the session before the search */
	double costStart; /* LLM cost before the search */
	/* a finished search that went on with a new budget (search_resumed's
	 * "continued"; issue 39): what its rounds before came to (no new
	 * best, nothing new made) no longer stops it */
	int continued;   /* it went on so at least once */
	int contRound;   /* the latest round started then */
	int setSinceEnd; /* a setting changed since it stopped or finished */
};

/* the session's baseline on one device model (issue 39): the reference's
 * time the session began with there (the first result from that device
 * carries it), or the one a re-measure journaled since (a `baseline`
 * event).  Every speedup in the session is this over the candidate's
 * median, whatever a later run of the workers timed the reference at. */
struct state_baseline {
	char *zDevice;  /* the device model ("" where the result named none) */
	double ms;      /* the reference's median time there */
	int remeasured; /* a `baseline` event set it (a re-measure), not the start */
};

struct state {
	char *zTask;              /* task name */
	char *zTaskDir;           /* where it was loaded from */
	char *zBackend;           /* backend of the session */
	char *zShapes;            /* shape set, or NULL */
	struct state_idea *aIdea; /* the ideas proposed, in order */
	int nIdea;
	size_t nIdeaAlloc;
	struct state_llm llm;         /* LLM requests and their cost so far */
	struct state_branch *aBranch; /* implementation branches, by first request */
	int nBranch;
	size_t nBranchAlloc;
	struct state_request *aReq; /* each llm_request, in the journal's order */
	int nReq;
	size_t nReqAlloc;
	struct cand *aCand;
	int nCand;
	size_t nCandAlloc;
	int maxId;                    /* the largest candidate id (0: none) */
	int nEvents;                  /* events applied */
	double tsLast;                /* the latest ts of an event applied (0: none had one) */
	double baselineMs;            /* the session's baseline (its first device's), or -1 */
	struct state_baseline *aBase; /* the session's baseline on each device model */
	int nBase;
	size_t nBaseAlloc;
	double tsStarted;           /* wall-clock time of session_started (0: unknown) */
	struct state_search search; /* the search, if one ran */
};

void state_init(struct state *st);
void state_free(struct state *st);

/* the session's baseline on device model zDevice (NULL: its first
 * device's; a result without a device is ""), or -1 when none is known */
double state_baseline(const struct state *st, const char *zDevice);
/* the fold's (event.c): the session's baseline on zDevice is ms, when it
 * has none yet or when bRemeasure (a `baseline` event; zDevice NULL: on
 * every device); then every candidate timed there gets its speedup again */
void state_set_baseline(struct state *st, const char *zDevice, double ms, int bRemeasure);
/* the fold's: c's speedup, the one way every speedup is computed: the
 * session's baseline on c's device over c's median (c correct and timed),
 * else the speedup its result carries, else -1.  c's result says the
 * same ("speedup", "baseline_ms"; the reference's time its own run
 * measured, where that differs, as "baseline_measured_ms") */
void state_cand_speedup(struct state *st, struct cand *c);
/* the candidate with id, or NULL */
struct cand *state_cand(const struct state *st, int id);
/* the first candidate whose source is zSource, byte for byte, or NULL */
const struct cand *state_cand_by_source(const struct state *st, const char *zSource);
/*
 * The rank rule, its one home: whether c may be ranked (a parent, the
 * best, a win) and, where not, the first reason, in this order: the
 * verdict's own (not correct; reduced precision under the policy
 * "faithful"; a time below the device's floor that no person cleared),
 * then its time's (no speedup; a time kloop's clock could not bound: an
 * older result without the flag is taken as it was).
 */
enum state_rank {
	STATE_RANK_YES,        /* it ranks */
	STATE_RANK_STATUS,     /* no verdict, or not "correct" */
	STATE_RANK_REDUCED,    /* correct, of reduced precision, and the session's
	                        * policy is "faithful" (state_precision_any()) */
	STATE_RANK_SUSPECT,    /* its time is below the device's floor (cand.belowFloor)
	                        * and no person cleared it (suspect_cleared) */
	STATE_RANK_NO_SPEEDUP, /* correct, with no speedup (no baseline to compare with) */
	STATE_RANK_UNVERIFIED, /* correct, but kloop's clock could not bound its time */
};
/* the rule for c in st's session (its precision policy, its cleared
 * suspects); c NULL: STATE_RANK_STATUS */
enum state_rank state_cand_rank(const struct state *st, const struct cand *c);
/* c may be ranked: state_cand_rank() is STATE_RANK_YES */
int state_cand_rankable(const struct state *st, const struct cand *c);
/* c may hold the best: it ranks and the search neither banned it nor holds
 * it as a suspect (state_best.c) */
int state_cand_competes(const struct state *st, const struct cand *c);
/* c's verdict passes, its time aside: it ranks, or only its time keeps it
 * out (STATE_RANK_NO_SPEEDUP, STATE_RANK_UNVERIFIED): what `kloop eval`'s
 * exit status asks of each candidate */
int state_cand_passes(const struct state *st, const struct cand *c);
/* the session's precision policy is "any": the setting `precision`, which
 * a search's settings, `set precision` and `kloop eval --precision` journal
 * (search_started, search_set); none journaled, or "faithful": reduced
 * precision is never ranked */
int state_precision_any(const struct state *st);
/* the next free candidate id */
int state_next_id(const struct state *st);
/* the idea with id, or NULL */
struct state_idea *state_idea(const struct state *st, int id);
/* llm_request `request` (its latest, journaled again), or NULL */
const struct state_request *state_request(const struct state *st, int request);
/* implementation branch `branch` of idea `idea` (its first request went
 * out), or NULL */
struct state_branch *state_branch_of(const struct state *st, int idea, int branch);
/* the next free idea id */
int state_next_idea_id(const struct state *st);
/* the first idea for candidate parent with the same title or the same
 * description as these (idea_text_norm()), or NULL: an idea proposed again */
const struct state_idea *state_idea_same(const struct state *st, int parent, const char *zTitle,
                                         const char *zDescription);
/* where an idea stands, in the words every front end shows: "pending",
 * "accepted" (to be implemented, or at work), "implemented" (a candidate
 * has it), "nothing new" (accepted, and every implementation branch ended
 * without a new candidate: the same code as one the session has, no usable
 * code, or no reply), "rejected", "duplicate" (rejected: proposed again for
 * its parent) */
const char *state_idea_word(const struct state *st, const struct state_idea *d);
/* the tokens of the LLM traffic u since before (NULL: all of it) as words:
 * "1200 input and 300 output tokens", "tokens not counted" when no reply
 * reported any (the command provider), else which were counted */
void state_llm_tokens_text(const struct state_llm *u, const struct state_llm *before, char *buf,
                           size_t n);
/* why a duplicate or an idea that made nothing is so, in words ("the same
 * as idea 1 for #1", "no new code: the same as #2"); "" else */
struct idea_why {
	char z[160];
};
struct idea_why state_idea_why(const struct state *st, const struct state_idea *d);
/* the next free LLM request id */
int state_next_request_id(const struct state *st);

/* a candidate as JSON: {"id", "name", "origin", "parents", "status",
 * "reason", "time_ms", "speedup", "idea"?, "idea_id"?, "round"? (a search's
 * round, when it made it)} (caller frees) */
cJSON *state_cand_json(const struct cand *c);

/* the state as JSON: {"task", "backend", "events", "baseline_ms",
 * "baselines": [{"device", "ms", "remeasured"}], "best": {"id", "speedup",
 * "confirmed", "within_noise_no_ab"?, "within_noise_by_ab"?} or null
 * (state_best_info()), "candidates": [state_cand_json() of each], "ideas": [{"id", "title",
 * "description", "category", "status", "origin", "parent", "edited"}],
 * "llm": {"requests", "responses", "failed", "input_tokens",
 * "output_tokens", "cost"}, "search"?: state_search_json()}; the caller owns it */
cJSON *state_to_json(const struct state *st);

/* ---- the search's folded state ---- */

/* 1 when candidate id is banned, or a suspect not cleared */
int state_search_excluded(const struct state *st, int id);
/* ---- one best (state_best.c) ---- */

/* c's timing spread: its p10 and p90 in ms (both -1 when c has no timing);
 * 1 when c has a timing */
int state_cand_spread(const struct cand *c, double *p10, double *p90);
/* 1 when a and b (both timed) are the same within the noise: their p10-p90
 * intervals overlap; 0 when they do not; -1 when either has no timing */
int state_same_within_noise(const struct cand *a, const struct cand *b);
/* 1 when a and b are the same machine code (one is the other's copy, not
 * timed again: its "same_code_as"; or the same code hash on the same
 * device): one candidate as far as the best goes */
int state_same_code(const struct cand *a, const struct cand *b);
/* 1 when a is faster than b: by time on the same device (both against the
 * session's one baseline there), else by speedup (each against its own
 * device's baseline) */
int state_faster(const struct cand *a, const struct cand *b);
/* the latest A/B between a and b, either way round, counting candidates of
 * the same machine code as either (state_same_code()), or NULL when none
 * ran; *pWinner is a or b when it found that one faster beyond the noise,
 * NULL when it did not (within the noise) or could not run (its "failed").
 * An unverified A/B (its times not bounded by kloop's clock) is none: it
 * settles nothing */
const struct state_ab *state_ab_between(const struct state *st, const struct cand *a,
                                        const struct cand *b, const struct cand **pWinner);
/* the unverified A/Bs between a and b, counted as state_ab_between() does;
 * *pLast (where not NULL) the latest of them, or NULL */
int state_ab_unverified(const struct state *st, const struct cand *a, const struct cand *b,
                        const struct state_ab **pLast);

/*
 * The best: one definition for every front end, the way the search decides
 * it (issues 25, 39).  Of the candidates that rank (state_cand_rankable(),
 * not banned nor held as a suspect), in the order their verdicts came, the
 * first holds the best until a later one takes it: by winning an A/B
 * against it, or, when no A/B ran between them, by being faster outside
 * its noise.  A copy of it (the same machine code) is no rival; an A/B that
 * found the later one within the noise, or could not be run, leaves the
 * best where it was.
 */
struct state_best_info {
	const struct cand *best; /* NULL when none ranks */
	int confirmed;           /* no rival within its noise went without an A/B */
	int tie;                 /* the first such rival: within its noise, no A/B (0: none) */
	int abTie;               /* the first rival an A/B found within its noise (0: none) */
};
struct state_best_info state_best_info(const struct state *st);
/* the same among the candidates whose first verdict came by event
 * firstEvalMax (their firstEval), for a chart of the best over time */
struct state_best_info state_best_until(const struct state *st, int firstEvalMax);
/* the same among the candidates keep(c, arg) holds (the report's best
 * through each generation) */
struct state_best_info state_best_among(const struct state *st,
                                        int (*keep)(const struct cand *c, void *arg), void *arg);
/* the same: the best, or NULL; *pConfirmed and *pTie as above (either
 * pointer may be NULL) */
const struct cand *state_best(const struct state *st, int *pConfirmed, int *pTie);
/* the best in the words every front end prints: "best 2.65x (#1)", "best
 * 2.65x (#1, unconfirmed: #6 within noise, no A/B)", "best 2.65x (#1, A/B: #8
 * within noise)", "best -" */
void state_best_text(const struct state *st, char *buf, size_t n);

/* the suspect entry of candidate id, or NULL */
const struct state_suspect *state_search_suspect(const struct state *st, int id);
/* the latest A/B of cand against incumbent, or NULL */
const struct state_ab *state_ab(const struct state *st, int cand, int incumbent);
/* 1 when idea category zCat is banned (prefer: preferred) */
int state_search_cat_banned(const struct state *st, const char *zCat);
int state_search_cat_preferred(const struct state *st, const char *zCat);
/* the search as JSON {"state", "why", "round", "settings", "best", "best_speedup",
 * "rounds": [{"round", "parents": [{"id", "reason"}], "policy", "best",
 * "best_speedup"}], "pinned", "banned", "ban_categories", "prefer_categories",
 * "suspects": [{"id", "speedup", "why", "cleared"}], "elapsed_s"}, or NULL
 * when no search ran (caller frees) */
cJSON *state_search_json(const struct state *st);

/* what a person is told while candidate c compiles (zStage "compile"): ""
 * for most; for a source that includes CUTLASS or CuTe why it takes a
 * minute, with the session's last such compile's seconds (into buf) */
const char *state_compile_note(const struct state *st, const struct cand *c, const char *zStage,
                               char *buf, size_t n);

#endif
