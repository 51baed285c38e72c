/*
 * event_search.h - the check and apply functions of the search's events,
 * for event.c's table only (the fold into st->search; the emitters are
 * declared in emit.h): ev_check_X and ev_apply_X, for the table's columns
 * and the event (or events) X.
 */
#ifndef KL_EVENT_SEARCH_H
#define KL_EVENT_SEARCH_H

#include <cJSON.h>

#include "state.h"

/* any search event but search_started: a search must have started */
int ev_check_search(const struct state *st, const cJSON *ev, char *err);
int ev_check_search_started(const struct state *st, const cJSON *ev, char *err);
int ev_check_search_set(const struct state *st, const cJSON *ev, char *err);
/* and "round" is a number */
int ev_check_round_started(const struct state *st, const cJSON *ev, char *err);
/* and "parents" is an array of existing candidates */
int ev_check_parents_chosen(const struct state *st, const cJSON *ev, char *err);
/* and "candidate" exists */
int ev_check_search_cand(const struct state *st, const cJSON *ev, char *err);
/* and "category" is a string */
int ev_check_search_category(const struct state *st, const cJSON *ev, char *err);

/* the search round an idea_proposed or candidate_added belongs to: its
 * "round" when given, else the latest round when one is open, else 0 */
int ev_round_of(const struct state *st, const cJSON *ev);

void ev_apply_search_started(struct state *st, const cJSON *ev, double ts);
void ev_apply_search_paused(struct state *st, const cJSON *ev, double ts);
void ev_apply_search_resumed(struct state *st, const cJSON *ev, double ts);
void ev_apply_search_stopped(struct state *st, const cJSON *ev, double ts);
void ev_apply_search_finished(struct state *st, const cJSON *ev, double ts);
void ev_apply_search_set(struct state *st, const cJSON *ev, double ts);
void ev_apply_round_started(struct state *st, const cJSON *ev, double ts);
void ev_apply_parents_chosen(struct state *st, const cJSON *ev, double ts);
void ev_apply_round_finished(struct state *st, const cJSON *ev, double ts);
void ev_apply_pin(struct state *st, const cJSON *ev, double ts);
void ev_apply_ban(struct state *st, const cJSON *ev, double ts);
void ev_apply_unban(struct state *st, const cJSON *ev, double ts);
void ev_apply_ban_category(struct state *st, const cJSON *ev, double ts);
void ev_apply_prefer_category(struct state *st, const cJSON *ev, double ts);
void ev_apply_suspect_flagged(struct state *st, const cJSON *ev, double ts);
void ev_apply_suspect_cleared(struct state *st, const cJSON *ev, double ts);
void ev_apply_new_best(struct state *st, const cJSON *ev, double ts);
/* ab_compared: both candidates exist, pairs is a number */
int ev_check_ab_compared(const struct state *st, const cJSON *ev, char *err);
void ev_apply_ab_compared(struct state *st, const cJSON *ev, double ts);
/* only the elapsed time (idea_injected, search_budget) */
void ev_apply_search_elapsed(struct state *st, const cJSON *ev, double ts);

#endif
