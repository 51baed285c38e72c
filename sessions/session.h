/*
 * session.h - a session: the state folded from its journal, and the one
 * function through which every change goes (append the event, then apply).
 */
#ifndef KL_SESSION_H
#define KL_SESSION_H

#include <cJSON.h>

#include "journal.h"
#include "state.h"
#include "util.h"

struct session {
	struct state st;      /* the folded state */
	struct journal *j;    /* open for appending, or NULL (read-only) */
	char *zPath;          /* the journal's path */
	strbuf warnings;      /* one line per malformed or rejected journal line */
	int nBad;             /* how many */
};

/*
 * Open the session journal zPath: fold what it holds, then (bWrite) open it
 * for appending, creating it if missing.  NULL + err when it cannot be read
 * or written (malformed lines are reported in warnings, not errors).
 */
struct session *session_open(const char *zPath, int bWrite, char *err);
void session_close(struct session *s);

/*
 * Make s the session of task zTask: a new session gets its session_started
 * event (task, task directory, backend, shape set); an existing one must be
 * of the same task.  0, or -1 with err naming the journal and both tasks.
 */
int session_begin(struct session *s, const char *zTask, const char *zTaskDir, const char *zBackend,
                  const char *zShapes, char *err);

/* a session without a journal (zPath "(no journal)"): events are checked and
 * applied, nothing is written.  For headless runs without --session. */
struct session *session_memory(void);

/* stamp ev with "ts" (wall-clock seconds) and "seq", append it to the
 * journal (flushed), then apply it to the state.  Consumes ev.  0 or -1 + err
 * (nothing applied when the append fails). */
int session_emit(struct session *s, cJSON *ev, char *err);

#endif
