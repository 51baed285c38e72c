/*
 * replay.h - a saved session journal opened for stepping: the state as it
 * was after any number of its events, and a new journal that continues
 * from any point.
 */
#ifndef KL_REPLAY_H
#define KL_REPLAY_H

#include <stddef.h>

#include "state.h"
#include "util.h"

struct replay {
	char *zPath;     /* the journal */
	strbuf text;     /* its event lines, each ended by a newline */
	size_t *aLine;   /* byte offset of each event's line in text */
	size_t *aLen;    /* and its length */
	int *aNo;        /* and its line number in the file (from 1) */
	int nEv;         /* events (lines that are JSON objects) */
	strbuf warnings; /* one line per malformed line or rejected event */
	int nBad;        /* how many */
	struct state st; /* the fold of the first k events */
	int k;           /* events folded */
	int nFolded;     /* the most events ever folded (rejections past it are new) */
};

/*
 * Read the journal zPath and fold all of it (k = nEv).  Malformed lines are
 * skipped and listed in warnings.  NULL + err when it cannot be read or
 * holds no event.
 */
struct replay *replay_open(const char *zPath, char *err);
void replay_close(struct replay *r);

/*
 * Make r->st the fold of the first k events (k clamped to 0..nEv): folds
 * forward from the current point, or from the start when going back.
 * Events the state rejects are skipped, as when a session is opened.
 */
void replay_seek(struct replay *r, int k);

/* a fresh copy of event i (0-based), or NULL when out of range */
char *replay_event_text(const struct replay *r, int i);

/*
 * "candidate_added #3 (human, parents 1)"-style line for event i
 * (0-based), written into buf of n bytes
 */
void replay_describe(const struct replay *r, int i, char *buf, size_t n);

/*
 * Write the first k events to zPath, a new journal (refused when it
 * exists), so that a session can continue from there.  0 or -1 + err.
 */
int replay_write_prefix(const struct replay *r, int k, const char *zPath, char *err);

/* the index of the first event of type zType from event index `from`
 * going in direction dir (1 or -1), or -1 (a search's rounds: replay
 * steps round by round with "round_started") */
int replay_find(const struct replay *r, int from, int dir, const char *zType);

#endif
