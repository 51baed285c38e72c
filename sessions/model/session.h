/*
 * session.h - a session: the state folded from its journal, and the one
 * function through which every change goes (append the event, then apply).
 */
#ifndef KL_SESSION_H
#define KL_SESSION_H

#include <cJSON.h>
#include <stdio.h>

#include "journal.h"
#include "state.h"
#include "util.h"

struct session {
	struct state st;   /* the folded state */
	struct journal *j; /* open for appending, or NULL (read-only) */
	char *zPath;       /* the journal's path */
	strbuf warnings;   /* one line per malformed or rejected journal line */
	int nBad;          /* how many */
	int nLost;         /* events not journaled since an append failed */
	char *zLost;       /* that failure's message, or NULL */
	cJSON *last;       /* the event session_emit() journaled last, or NULL */
	int nSeen;         /* lines folded from the journal, events and bad ones */
	int nTruncated;    /* of the bad ones, a last line cut short */
	/* called once, when the first append fails (the driver tells the user) */
	void (*onLost)(void *arg, const char *zErr);
	void *lostArg;
};

/*
 * Open the session journal zPath: (bWrite) open it for appending, creating
 * it if missing and locking it (one writer: journal_open()), then fold what
 * it holds.  NULL + err when it cannot be read or written (malformed lines
 * are reported in warnings, not errors); errno is EBUSY when another process
 * has it open for writing (front ends exit 2 then).  Read-only opens never
 * take the lock.  A file that is not a journal (it does not start with '{',
 * or no line of it is an event and not all of its bad lines are one line
 * cut short) is refused for writing: nothing is appended to someone's
 * source or notes.
 */
struct session *session_open(const char *zPath, int bWrite, char *err);
void session_close(struct session *s);

/* a session without a journal (zPath "(no journal)"): events are checked and
 * applied, nothing is written.  For headless runs without --session. */
struct session *session_memory(void);

/* stamp ev with "ts" (wall-clock seconds) and "seq", append it to the
 * journal (flushed), then apply it to the state.  Consumes ev.  0 or -1 + err
 * (the state refused it).  When an append fails (a full disk) the event is
 * still applied, so that the work under way stays whole in memory, but
 * nothing more is appended: the journal stays a whole prefix of the session
 * (a later append would leave a hole), every event from the failed one on
 * is counted in nLost, and onLost is called once with why. */
int session_emit(struct session *s, cJSON *ev, char *err);

/*
 * The closing line of a front end: "kloop: session saved in PATH" on f when
 * every event reached the journal, else an error on stderr saying how many
 * events were lost and why (never "saved").  0, or -1 after a lost event (the exit status should
 * then say failure).  Nothing for a session without a journal; no "saved"
 * line when f is NULL.
 */
int session_saved(const struct session *s, FILE *f);
/* the event the last successful session_emit() journaled (its "ts" and
 * "seq" included), valid until the next one; NULL after a refusal */
const cJSON *session_last(const struct session *s);

#endif
