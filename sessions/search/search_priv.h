/*
 * search_priv.h - what the files of the search share (search.c, the round
 * state machine and the API; search_judge.c, verdicts and budgets;
 * search_propose.c, the proposers and the gate; search_steer.c, steering
 * and status; search_emit.c, its clock and what follows its events): the
 * search's struct and its small helpers.  Private to
 * them.
 */
#ifndef KL_SEARCH_PRIV_H
#define KL_SEARCH_PRIV_H

#include <math.h>
#include <stdio.h>

#include "emit.h"
#include "driver.h"
#include "search.h"
#include "util.h"

#define TICK_S 0.05
#define CROSSOVER_MAX 2

struct intset {
	int *a;
	int n;
	size_t nAlloc;
};

static inline int set_has(const struct intset *x, int v)
{
	for (int i = 0; i < x->n; i++)
		if (x->a[i] == v)
			return 1;
	return 0;
}

/* add v; 1 when it was not there */
static inline int set_add(struct intset *x, int v)
{
	if (set_has(x, v))
		return 0;
	xgrow((void **)&x->a, &x->nAlloc, (size_t)x->n + 1, sizeof *x->a);
	x->a[x->n++] = v;
	return 1;
}

/* pairs of candidate ids (an A/B's challenger and incumbent) */
struct pairset {
	int (*a)[3]; /* x, y, and how many times the pair was added */
	int n;
	size_t nAlloc;
};

/* how many times the pair (x, y) was added */
static inline int pair_count(const struct pairset *p, int x, int y)
{
	for (int i = 0; i < p->n; i++)
		if (p->a[i][0] == x && p->a[i][1] == y)
			return p->a[i][2];
	return 0;
}

/* add the pair (x, y) once more */
static inline void pair_add(struct pairset *p, int x, int y)
{
	for (int i = 0; i < p->n; i++)
		if (p->a[i][0] == x && p->a[i][1] == y) {
			p->a[i][2]++;
			return;
		}
	xgrow((void **)&p->a, &p->nAlloc, (size_t)p->n + 1, sizeof *p->a);
	p->a[p->n][0] = x;
	p->a[p->n][1] = y;
	p->a[p->n++][2] = 1;
}

/* an open round's work done by this process (driven at least once: what
 * was cut short before it was asked again) */
struct work {
	int round;
	struct intset asked; /* parents whose ideas were asked for */
	int crossed;         /* the crossover was made */
	int llmCrossed;      /* the LLM crossover was asked for */
	int resumed;         /* its branches cut short were taken up */
};

struct search {
	struct driver *drv;
	search_note_fn notify;
	char zErr[KL_ERRLEN]; /* an emitter's error where the caller gave no err */
	void *arg;
	long long timer;    /* the tick's timer (0: none) */
	int inTick, again;  /* a tick is running; one more was asked for */
	int stepping;       /* one round, then pause */
	double tRun;        /* now_s() when it last began running (0: not running) */
	double base;        /* elapsed seconds before that */
	struct work *aWork; /* what was done for each open round (since opening) */
	int nWork;
	size_t nWorkAlloc;
	struct intset swept; /* candidates swept (any round) */
	struct intset impl;  /* ideas sent to be implemented */
	int translating;     /* round 0's translations were asked for */
	char *judged;        /* per candidate id: its verdict was judged */
	size_t nJudged;
	struct pairset abAsked; /* the A/Bs the search asked for: challenger, incumbent,
	                         * how many times (again after an unverified one) */
	struct pairset abTied;  /* pairs whose A/Bs were all unverified and whose
	                         * separate timings kept the incumbent (said once) */
	struct intset rivals;   /* candidates judged as rivals of the best */
	int handedFrom;         /* the best that lost it with none to hand it to (said) */
	cJSON *preset;          /* settings a person gave before the search started
	                         * (`set`, `gate`): its search_started carries them */
};

static inline const struct state *ST(const struct search *s)
{
	return driver_state(s->drv);
}

/* the settings, as the journal's search_started and search_set left them */
static inline const struct search_settings *OPT(const struct search *s)
{
	return &ST(s)->search.set;
}

/* ---- events ---- */

static inline void note(struct search *s, const char *zLine, const cJSON *ev)
{
	if (s->notify)
		s->notify(s->arg, zLine, ev);
}

/* the session, for the emitters (event.h) */
#define SES(s) driver_session((s)->drv)
/* the elapsed time the search's events carry (ms resolution) */
#define EL(s) (round(search_elapsed(s) * 1000) / 1000)
/* where an emitter writes its error: err, or the search's own buffer */
#define ERR(s, err) ((err) ? (err) : (s)->zErr)

/* ---- search_emit.c ---- */
/* after an emitter returned rc: tell people zLine with the journaled
 * event; when it failed and the caller gave no err, say why */
int search_emitted(struct search *s, int rc, const char *zLine, char *err);

/* ---- search_judge.c ---- */
/* a verdict that is final (evaluated, not waiting for more) */
int search_final(const struct cand *c);
/* judge every final verdict not judged yet, and give the driver what
 * every evaluation carries from now on (driver_set_eval_request()) */
void search_judge_all(struct search *s);
/* rounds finished (round 0 not counted) */
int search_rounds_done(const struct state *st);
/* candidates made since the search started */
int search_cands_used(const struct state *st);
/* LLM dollars spent since the search started */
double search_usd_used(const struct state *st);
/* why the search should stop now (in buf), or NULL */
const char *search_stop_reason(struct search *s, char *buf, size_t n);
/* may one more candidate be made within the budgets */
int search_cand_ok(struct search *s);
/* may one more LLM request go out within the budgets */
int search_llm_ok(struct search *s);
/* the pipeline's limit (driver_limit()): why no more may start, or NULL */
const char *search_limit(void *arg, int bCandidate, double usd);
/* ---- search_propose.c ---- */
/* sweep parent's tunables (once per parent) in round R */
void search_sweep(struct search *s, int R, int parent);
/* the function crossover of two parents' lineages in round R */
void search_crossover(struct search *s, int R, int ia, int ib);
/* decide round's pending ideas (gate auto), or leave them to a person */
void search_gate(struct search *s, int round);
/* send round's accepted ideas to be implemented */
void search_implement(struct search *s, int round);
/* ask the LLM to cross parents a and b (crossover 2) */
void search_llm_crossover(struct search *s, int round, int a, int b);
/* ideas were asked for parent in round (before a restart) */
int search_ideas_exist(const struct state *st, int round, int parent);
/* ---- search.c ---- */
/* ideas of round R waiting for a decision */
int search_pending_ideas(const struct state *st, int R);
/* move the search on: judge, stop, drive and open rounds */
void search_tick(struct search *s);
/* a search was started and (unless want is SEARCH_NONE) is in state want;
 * 0 or -1 + err */
int search_need(const struct search *s, enum search_state want, char *err);
#endif
