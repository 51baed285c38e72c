/*
 * search.h - the automatic search over a running session (driver.h): rounds of parents
 * chosen by a policy (policy.h), cheap mechanical proposers first (sweeps
 * over tunables, function crossover of two lineages), then N LLM ideas per
 * parent, a gate (auto or a person), B implementations of each accepted
 * idea with the fix loop, and the verdicts judged (a new best only beyond
 * the noise; implausible speedups held as suspects).  Round 0 translates the
 * reference when no candidate is correct to start from.
 *
 * It is a state machine driven by the caller's loop (its timer on the
 * driver's loop, and search_poke() after an event): it never blocks, it
 * adds, evaluates and asks through driver_* functions, and every decision
 * is a journal event of its own, written with the typed emitters of
 * event.h on the driver's session (their check and fold are in
 * event_search.c) and folded into st->search (state.h), so that
 * replay shows it and a search killed at any point goes on from its
 * journal: search_start() on a session whose search is not finished
 * continues it within the same budget, asking again what was cut short and
 * evaluating nothing twice.
 *
 * Rounds overlap: while round N's candidates are evaluated, round N + 1
 * starts once N's LLM requests are all out (and the LLM client has room),
 * its parents chosen from a snapshot that does not depend on timing (the
 * rounds `overlap` back, no former parent); rounds close in order, and
 * the budgets hold for work in flight (driver_limit()).  ARCHITECTURE.md,
 * "The automatic search", has the rules.
 *
 * A verdict becomes the new best when its median time is below the
 * incumbent's 10th-percentile time and at least 2% below its median, and
 * it won an interleaved A/B against the incumbent (ab_compared; the
 * search gives the driver its best as the incumbent of every evaluation's
 * request, driver_set_eval_request(), so the worker runs the A/B in the
 * same evaluation; a verdict without one is evaluated again with
 * driver_bench_ab(), once).  A speedup above suspect_x, a time below what
 * moving the task's bytes (every input read and every output written
 * once) takes at bandwidth_gbs (default: the workers' GPU's own), or below
 * what the task's flops take at peak_tflops, is flagged suspect_flagged
 * instead and is neither a parent nor the best until a person clears it.
 *
 * Settings (search_started's "settings", changed by search_set): the
 * table of search_settings.h (the policy, ideas, branches, gate, sweeps,
 * crossover, overlap, the suspect limits, the quick stop and the A/B's
 * pairs, and the budgets, 0 meaning none), read as st->search.set.
 */
#ifndef KL_SEARCH_H
#define KL_SEARCH_H

#include <cJSON.h>
#include <stddef.h>

#include "driver.h"
#include "search_settings.h"

struct search;

/* a line for people (zLine) about event ev (the journaled event, or a
 * "verdict" object {"type": "verdict", "candidate": {...}}); both valid
 * only during the call */
typedef void (*search_note_fn)(void *arg, const char *zLine, const cJSON *ev);

/*
 * A search on driver drv (its loop drives it; drv must outlive it).
 * Nothing runs until search_start().  notify may be NULL.
 */
struct search *search_new(struct driver *drv, search_note_fn notify, void *arg);
void search_free(struct search *s);

/*
 * Start: a session without a search gets search_started with the
 * defaults, then the settings journaled before it (`kloop eval
 * --precision`), then settings (NULL: none; not consumed); one whose
 * search is not finished is
 * resumed with its journaled settings (then settings' keys, when given,
 * are applied as search_set events).  A finished search goes on only when
 * settings change one of its settings (a new budget); else -1 + err.
 * 0 or -1 + err.
 */
int search_start(struct search *s, const cJSON *settings, char *err);

/* pause (nothing new is started; what runs finishes), resume, stop for
 * good, or run one round and pause (starting the search with settings when
 * none ran); 0 or -1 + err (no search, already so) */
int search_pause(struct search *s, char *err);
int search_resume(struct search *s, char *err);
int search_stop(struct search *s, const char *zWhy, char *err);
int search_step(struct search *s, const cJSON *settings, char *err);

/*
 * Steer, each a journal event said on the search's line; 0 or -1 + err.
 * search_pin: candidate id is a parent of the next round (a correct, timed
 * one); search_ban / search_unban: it is never / again may be a parent;
 * search_clear: suspect id was checked by a person; search_ban_category /
 * search_prefer_category: the gate rejects / prefers ideas of the category
 * (search_category_named()'s); search_idea: a person's idea, accepted and
 * implemented in the search's round; search_set: setting zKey to the text
 * zVal, checked, kept for the first round where no search has started.
 */
int search_pin(struct search *s, int id, char *err);
int search_ban(struct search *s, int id, char *err);
int search_unban(struct search *s, int id, char *err);
int search_clear(struct search *s, int id, char *err);
int search_ban_category(struct search *s, const char *zCat, char *err);
int search_prefer_category(struct search *s, const char *zCat, char *err);
int search_idea(struct search *s, const char *zText, char *err);
int search_set(struct search *s, const char *zKey, const char *zVal, char *err);
/* search_set of the gate, its error saying what is wrong with the value
 * alone (the command `gate` names it) */
int search_set_gate(struct search *s, const char *zVal, char *err);

/* the idea category z names (a prefix of just one will do), or NULL + err
 * saying what it is not and, for a typo, which category it is near */
const char *search_category_named(const char *z, char *err);

/* move the search on now (after an event the caller saw); cheap */
void search_poke(struct search *s);

/* 1 when the round waits for a person (gate human, its ideas pending) and
 * nothing else runs */
int search_waiting(const struct search *s);

/* 1 when the search has ended (finished or stopped) and nothing it
 * started is still running */
int search_done(const struct search *s);

/* the search's state in one line for a header: "search running, round 3,
 * 14 candidates, $0.02 of $1.00, 21 s, best #12 2.4x" (buf of n bytes);
 * "" when no search ran */
void search_status(const struct search *s, char *buf, size_t n);
/* the same from a folded state alone (replay, the TUI without a search) */
void search_status_state(const struct state *st, char *buf, size_t n);

/* the elapsed search wall time, seconds */
double search_elapsed(const struct search *s);

/*
 * The best candidate's lineage, root first: "seed.c (seed) -> round 1:
 * idea3-b1.c (idea: Fewer passes) -> ..." into sb (appending).
 */
void search_lineage(const struct state *st, int id, strbuf *sb);

#endif
