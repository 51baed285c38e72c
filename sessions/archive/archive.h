/*
 * archive.h - the innovation archive: what sessions learned, kept across
 * tasks and sessions in one SQLite database ($XDG_DATA_HOME/kloop/
 * archive.db, else ~/.local/share/kloop/archive.db; $KLOOP_ARCHIVE names
 * another file, or "off").
 *
 * An entry is either a *win* (a candidate that is correct and confirmed
 * faster than its parent beyond the noise: its p10..p90 timing interval lies
 * wholly below the parent's) or a *dead end* (an idea none of whose
 * candidates won, with its failure class: compile_error, incorrect,
 * crashed, timeout, error or slower).  Each carries the task and its
 * signature (the operations of the reference, the tensors), the device,
 * the idea and its category, the code and its unified diff against the
 * parent, times and speedups, ptxas resources, the lineage, the session
 * and event it came from and the LLM model that wrote it.  Two FTS5
 * indexes (porter stemmer) cover the ideas, signatures and task names, and
 * the code.
 *
 * Concurrency: the database is in WAL mode, so readers never wait for a
 * writer; writes are one short IMMEDIATE transaction each (a session's new
 * entries), with a busy timeout, so several kloop processes (sessions, a
 * search, a TUI) write and read at once.  A process killed mid-write
 * leaves the last committed state (SQLite's journal rolls the rest back).
 *
 * Entries are identified by a key (kind, session id, candidate or idea,
 * code hash): adding a session twice, or importing an export twice, adds
 * nothing.  A session's id is its task and the time of its session_started
 * event, so a journal copied elsewhere keeps its id.
 */
#ifndef KL_ARCHIVE_H
#define KL_ARCHIVE_H

#include <cJSON.h>

#include "session.h"
#include "state.h"
#include "util.h"

struct archive;

/* the database's path (see above), a fresh string; NULL when $KLOOP_ARCHIVE
 * is "off" or empty */
char *archive_default_path(void);

/*
 * Open the archive at zPath.  bCreate: create the file, its directory and
 * the schema when missing; else a missing file is an error.  busyMs: how
 * long a statement waits for another process's write lock before failing
 * (SQLITE_BUSY).  NULL + err naming the file and SQLite's message.
 */
struct archive *archive_open(const char *zPath, int bCreate, int busyMs, char *err);
void archive_close(struct archive *a);

/* what adding a session did */
struct archive_counts {
	int nWins;     /* wins the session holds */
	int nDeadEnds; /* dead ends it holds */
	int nAdded;    /* entries new to the archive */
};

/*
 * Backfill from the journal zJournal: fold it, then add its wins and dead
 * ends in one transaction (entries already there are left alone; a dead
 * end whose idea has won since is removed).  0, or -1 + err naming the
 * journal (unreadable, not a session) or the database.
 */
int archive_add_journal(struct archive *a, const char *zJournal, struct archive_counts *pOut,
                        char *err);

/*
 * The hook a running session calls after an eval_finished: the wins and
 * dead ends of st (whose journal is zJournal) that the events since the
 * last call made (a candidate evaluated, or its parent) go in, in one short
 * transaction; on the first call for a journal, from its last event on (a
 * journal's history is for `kloop archive add`).  The database is opened on
 * the first call (archive_default_path(), created if missing, 100 ms busy
 * timeout); what this process archived is remembered, and the journal is
 * read from where the last call stopped (for each event's index, the
 * candidates' LLM requests and the models).  Never fatal: -1 + err (a
 * line to log) when the database cannot be opened or is busy; the next call
 * tries again.  err is left empty for a failure that follows a failure, so
 * that a broken archive costs the log one line.  Does nothing for a session without a journal or
 * with $KLOOP_ARCHIVE=off.
 */
int archive_note_session(const struct state *st, const char *zJournal, char *err);

/* what to search for */
struct archive_query {
	const char *zText;       /* words (any of them; rare ones weigh more), or NULL/"" for all */
	const char *zTask;       /* only this task, or NULL */
	const char *zGpu;        /* only devices containing this (case-insensitive), or NULL */
	const char *zKind;       /* "win" or "dead_end", or NULL for both */
	const char *zNotSession; /* leave out this session id, or NULL */
	const char *zNotTask;    /* leave out this task, or NULL */
	int limit;               /* at most this many (<= 0: 20) */
};

/*
 * Search: an array of entries, best first (the idea, the signature and the
 * task ranked by the query's words, weighted by how rare they are, then the
 * code to fill; without words, the largest gain over the parent first;
 * docs/ARCHIVE.md says how), each with "id", "kind", "task", "gpu", "idea",
 * "category", "speedup_parent", "speedup", "failure", "session",
 * "candidate", "rank" (lower is better).  Statements stay prepared on a's
 * connection.  The caller frees it; NULL + err on a database error.
 */
cJSON *archive_search(struct archive *a, const struct archive_query *q, char *err);

/* entry id in full (as exported), or NULL + err ("no archive entry 7") */
cJSON *archive_get(struct archive *a, long id, char *err);

/*
 * Per task and category: {"rows": [{"task", "category", "wins",
 * "dead_ends", "win_rate", "median_gain", "best_gain"}], "entries": N,
 * "wins": N, "dead_ends": N, "tasks": N}; gains are speedups over the
 * parent.  NULL + err on a database error.
 */
cJSON *archive_stats(struct archive *a, char *err);

/* write every entry to zFile as JSON lines (atomically); the number
 * written, or -1 + err */
int archive_export(struct archive *a, const char *zFile, char *err);

/*
 * Read JSON lines written by archive_export() and add the entries not
 * already there, all in one transaction.  A line that is not an entry
 * (not JSON, or without its key, kind, task or session) is an error
 * "FILE:LINE: ..." and nothing is imported.  The number added (*pSeen:
 * the lines read), or -1 + err.
 */
int archive_import(struct archive *a, const char *zFile, int *pSeen, char *err);

/* the number of entries, or -1 + err */
long archive_count(struct archive *a, char *err);

/*
 * The task signature: the operations of a PyTorch reference's forward()
 * (torch.* / F.* functions, nn modules, tensor methods, arithmetic), then
 * the tensors ("x f32 [64, 4096]") or, for a KernelBench file, its
 * module-level sizes ("rows=4096").  zPy: the reference .py (NULL: none);
 * zTensors: the task's tensors as text (NULL for a KernelBench file).  A
 * fresh string.
 */
char *archive_signature(const char *zPy, const char *zTensors);

/*
 * The prompt section {{archive}} for a session's next request (appended to
 * out, at most maxBytes): up to k wins from other tasks or sessions that
 * match the task's signature and zIdea (the idea being implemented, or
 * NULL), then up to k dead ends already met on this task.  Nothing when
 * the archive is missing, empty, off, or holds nothing relevant.
 */
void archive_prompt(const struct state *st, const char *zIdea, int k, size_t maxBytes, strbuf *out);

/* 1 when candidate c of st is a win: correct, with parents that are all
 * correct and timed, its timing interval (p10..p90, else the median +- 2
 * rse) wholly below each parent's, and no A/B against a parent (or its
 * machine code) that did not find it faster beyond the noise (issue 39) */
int archive_is_win(const struct state *st, const struct cand *c);

/* entry e (as archive_get() gives it) for people: a line per field, the
 * lineage and resources, then the diff against its parent; appended to sb.
 * The text is the entry's own: print it through a terminal filter. */
void archive_entry_text(const cJSON *e, strbuf *sb);

/*
 * Bring entry e into session s as an idea: idea_proposed with origin
 * "archive", the entry's title, category and description (with where it
 * came from: task, gain or failure) and "archive_entry": its id.  The new
 * idea's id, or -1 + err when the journal refuses the event.
 */
int archive_idea_event(struct session *s, const cJSON *e, char *err);

/* the session id of a folded session: "TASK@SECONDS" (session_started's
 * time), or "path:PATH" for a journal without one; a fresh string */
char *archive_session_id(const struct state *st, const char *zJournal);

#endif
