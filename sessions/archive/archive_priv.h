/*
 * archive_priv.h - what the pieces of the innovation archive share (the
 * archive_*.c files; archive.h is the API): the connection and its caches,
 * the database helpers, a journal's extras, a session's archived memory,
 * and an entry's field helpers.  Internal to sessions/archive/archive_*.c.
 */
#ifndef KL_ARCHIVE_PRIV_H
#define KL_ARCHIVE_PRIV_H

#include <cJSON.h>
#include <sqlite3.h>
#include <stddef.h>

#include "archive.h"
#include "state.h"
#include "util.h"

/* ---- the connection (archive_db.c) ---- */

#define STMT_CACHE 24 /* statements of the search kept prepared */
#define DF_MEMO 512   /* word frequencies remembered */

/* a word's frequency in an index, as word_df (archive_search.c) found it at maxId */
struct archive_df_memo {
	char *zKey; /* index, space, quoted word */
	double df;
	sqlite3_int64 maxId;
};

struct archive_stmt_cache {
	char *zSql;
	sqlite3_stmt *s;
};

struct archive {
	sqlite3 *db;
	char *zPath;
	sqlite3_stmt *aIns[2]; /* the insert statements (archive_put_entry), prepared once */
	struct archive_stmt_cache aStmt[STMT_CACHE]; /* the search's statements, kept prepared */
	int nStmt;
	struct archive_df_memo *aDf; /* word frequencies looked up (word_df) */
	int nDf;
	size_t nDfAlloc;
};

/* "PATH: WHAT: sqlite's message" into err; -1 */
int archive_db_err(struct archive *a, char *err, const char *zWhat);
/* run zSql (statements without results); 0, or -1 + err */
int archive_exec(struct archive *a, const char *zSql, char *err);
/* a statement of the search kept prepared on a's connection (reset, its
 * bindings cleared); NULL + err */
sqlite3_stmt *archive_stmt(struct archive *a, const char *zSql, char *err);
/*
 * Store entry e (a JSON object as archive_wins.c makes it; not consumed).
 * bNote: noted from a session (not imported): a win removes the dead end
 * its idea had in that session.  bReplace: a dead end replaces an older
 * version of itself.  *pAdded is incremented when a row was added.  0 or
 * -1 + err.
 */
int archive_put_entry(struct archive *a, const cJSON *e, int bNote, int bReplace, int *pAdded,
                      char *err);
/* remove the win of key zUkey (an A/B refuted it since it was filed);
 * nothing when there is none.  0 or -1 + err */
int archive_drop_win(struct archive *a, const char *zUkey, char *err);

/* ---- the search's SQL functions (archive_rank.c) ---- */

#define ARCHIVE_QUERY_WORDS 12 /* a query's rarest words that are searched for (and ranked) */

/* the ids of a task's entries, sorted: what the search binds as kl_in's
 * set (a pointer of type "kl_idset") */
struct archive_idset {
	sqlite3_int64 *a;
	int n;
};

/* the FTS5 function kl_rank and the SQL function kl_in on a's connection,
 * once per connection (archive_open) */
void archive_rank_register(struct archive *a);

/* ---- the task signature (archive_signature.c) ---- */

/* 1 for a letter, digit or '_' */
int archive_ident(int c);
/* the signature of a folded session's task (loaded from its directory
 * where that still exists); a fresh string */
char *archive_state_signature(const struct state *st);

/* ---- wins and dead ends (archive_wins.c) ---- */

/* what a session has archived already (the live hook's memory) */
struct archive_track {
	char *zJournal;      /* as given */
	char *zSid;          /* the session id (NULL until session_started is folded) */
	char *zSig;          /* the task signature */
	char *zAbs;          /* the journal's absolute path */
	unsigned char *aWon; /* by candidate id: archived as a win */
	size_t nWon;
	char **azDead; /* by idea id: the failure class archived */
	size_t nDead;
	int evSeen; /* the session's events (st->nEvents) looked at already */
};

/* t for the session folded in st from zJournal; -1 when st has no task */
int archive_track_init(struct archive_track *t, const struct state *st, const char *zJournal);
void archive_track_free(struct archive_track *t);
/* add what t's session (folded in st) holds that t has not archived, in
 * one transaction; 0 or -1 + err */
int archive_add_session(struct archive *a, struct archive_track *t, const struct state *st,
                        struct archive_counts *pOut, char *err);

/* ---- the live hook (archive_live.c) ---- */

/* the process's archive (archive_default_path()), opened on first use
 * (bCreate: created when missing); NULL + err */
struct archive *archive_live(int bCreate, char *err);

/* ---- an entry's fields (archive_entry.c) ---- */

/* v as a number, or null when it is not finite */
void archive_add_num(cJSON *o, const char *k, double v);
/* a copy of from's kFrom as o's k, when from has it */
void archive_add_copy(cJSON *o, const char *k, const cJSON *from, const char *kFrom);
/* z cut to max bytes (not within a UTF-8 sequence) with "..."; a fresh string */
char *archive_cut(const char *z, size_t max);
/* archive_cut(z, max) appended to sb */
void archive_add_cut(strbuf *sb, const char *z, size_t max);

#endif
