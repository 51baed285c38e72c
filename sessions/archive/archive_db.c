/*
 * archive_db.c - the archive's database: the schema and its migration,
 * opening and closing it, the statements kept prepared, storing an entry.
 */
#include "archive_priv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

#define SCHEMA_VERSION 2

/*
 * Two FTS5 indexes over the entries (external content: the text is the
 * table's own): entries_fts over the short text (the idea's title,
 * description and category, the task signature, the task name) and
 * code_fts over the code (with the task name, for --task).  Apart, a word's postings in the code
 * (where common words are everywhere) do not slow down searching the ideas, and the code is
 * searched only to fill what the ideas leave.
 */
static const char *const SCHEMA =
    /* the small columns first: a row's later columns are read through the
     * overflow pages of the large ones (code, json) before them */
    "CREATE TABLE IF NOT EXISTS entries(\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  ukey TEXT NOT NULL UNIQUE,\n" /* kind:session:candidate-or-idea[:code hash] */
    "  kind TEXT NOT NULL,\n"        /* win | dead_end */
    "  task TEXT NOT NULL,\n"
    "  backend TEXT NOT NULL DEFAULT '',\n"
    "  gpu TEXT NOT NULL DEFAULT '',\n"
    "  category TEXT NOT NULL DEFAULT '',\n"
    "  failure TEXT,\n" /* dead ends: the failure class */
    "  speedup_parent REAL,\n"
    "  speedup REAL,\n"
    "  session TEXT NOT NULL,\n"
    "  idea_key TEXT,\n" /* session:idea id */
    "  signature TEXT NOT NULL DEFAULT '',\n"
    "  idea TEXT NOT NULL DEFAULT '',\n" /* title, description, category */
    "  code TEXT NOT NULL DEFAULT '',\n"
    "  json TEXT NOT NULL\n" /* the rest of the entry */
    ");\n"
    /* covering a search by task without words (ordered by gain) */
    "CREATE INDEX IF NOT EXISTS entries_task ON entries(task, kind, speedup_parent);\n"
    "CREATE INDEX IF NOT EXISTS entries_idea ON entries(idea_key);\n"
    /* what a search filters on, by id: a lookup in this small index, not
     * in the table's rows (a few KB each, with the code) */
    "CREATE INDEX IF NOT EXISTS entries_meta ON entries(id, kind, task, session, gpu);\n"
    "CREATE VIRTUAL TABLE IF NOT EXISTS entries_fts USING fts5(idea, signature, task,\n"
    "  content='entries', content_rowid='id', tokenize='porter unicode61');\n"
    "CREATE VIRTUAL TABLE IF NOT EXISTS code_fts USING fts5(code, task,\n"
    "  content='entries', content_rowid='id', tokenize='porter unicode61');\n"
    "CREATE TRIGGER IF NOT EXISTS entries_ai AFTER INSERT ON entries BEGIN\n"
    "  INSERT INTO entries_fts(rowid, idea, signature, task)\n"
    "  VALUES (new.id, new.idea, new.signature, new.task);\n"
    "  INSERT INTO code_fts(rowid, code, task) VALUES (new.id, new.code, new.task);\n"
    "END;\n"
    "CREATE TRIGGER IF NOT EXISTS entries_ad AFTER DELETE ON entries BEGIN\n"
    "  INSERT INTO entries_fts(entries_fts, rowid, idea, signature, task)\n"
    "  VALUES ('delete', old.id, old.idea, old.signature, old.task);\n"
    "  INSERT INTO code_fts(code_fts, rowid, code, task)\n"
    "  VALUES ('delete', old.id, old.code, old.task);\n"
    "END;\n"
    "CREATE TRIGGER IF NOT EXISTS entries_au AFTER UPDATE ON entries BEGIN\n"
    "  INSERT INTO entries_fts(entries_fts, rowid, idea, signature, task)\n"
    "  VALUES ('delete', old.id, old.idea, old.signature, old.task);\n"
    "  INSERT INTO code_fts(code_fts, rowid, code, task)\n"
    "  VALUES ('delete', old.id, old.code, old.task);\n"
    "  INSERT INTO entries_fts(rowid, idea, signature, task)\n"
    "  VALUES (new.id, new.idea, new.signature, new.task);\n"
    "  INSERT INTO code_fts(rowid, code, task) VALUES (new.id, new.code, new.task);\n"
    "END;\n";

/* an archive of version 1 had one FTS5 index over the four columns and an
 * index on (task, kind): its triggers and indexes go, and those of version
 * 2 are built from the rows
 * (on a new archive, these find nothing to drop) */
static const char *const MIGRATE_1 = "DROP TRIGGER IF EXISTS entries_ai;\n"
                                     "DROP TRIGGER IF EXISTS entries_ad;\n"
                                     "DROP TRIGGER IF EXISTS entries_au;\n"
                                     "DROP TABLE IF EXISTS entries_fts;\n"
                                     "DROP INDEX IF EXISTS entries_task;\n";

char *archive_default_path(void)
{
	const char *k = getenv("KLOOP_ARCHIVE");
	if (k)
		return *k && strcmp(k, "off") ? xstrdup(k) : NULL;
	const char *x = getenv("XDG_DATA_HOME");
	if (x && *x)
		return xasprintf("%s/kloop/archive.db", x);
	const char *h = getenv("HOME");
	return xasprintf("%s/.local/share/kloop/archive.db", h && *h ? h : ".");
}

int archive_db_err(struct archive *a, char *err, const char *zWhat)
{
	return kl_err(err, "%s: %s: %s", a->zPath, zWhat, sqlite3_errmsg(a->db));
}

int archive_exec(struct archive *a, const char *zSql, char *err)
{
	char *msg = NULL;
	if (sqlite3_exec(a->db, zSql, NULL, NULL, &msg) != SQLITE_OK) {
		kl_err(err, "%s: %s", a->zPath, msg ? msg : sqlite3_errmsg(a->db));
		sqlite3_free(msg);
		return -1;
	}
	return 0;
}

static int user_version(struct archive *a)
{
	sqlite3_stmt *s;
	int v = -1;
	if (sqlite3_prepare_v2(a->db, "PRAGMA user_version", -1, &s, NULL) == SQLITE_OK) {
		if (sqlite3_step(s) == SQLITE_ROW)
			v = sqlite3_column_int(s, 0);
		sqlite3_finalize(s);
	}
	return v;
}

/* the schema, once per database: created, or an older version's indexes
 * rebuilt (one transaction; another process doing the same waits for it) */
static int schema(struct archive *a, char *err)
{
	if (user_version(a) >= SCHEMA_VERSION)
		return 0;
	if (archive_exec(a, "BEGIN IMMEDIATE", err) < 0)
		return -1;
	int v = user_version(a), rc = 0;
	if (v < SCHEMA_VERSION) {
		char *sql =
		    xasprintf("%s%sINSERT INTO entries_fts(entries_fts) VALUES('rebuild');\n"
		              "INSERT INTO code_fts(code_fts) VALUES('rebuild');\n"
		              "PRAGMA user_version = %d;\n",
		              MIGRATE_1, SCHEMA, SCHEMA_VERSION);
		rc = archive_exec(a, sql, err);
		free(sql);
	}
	if (rc == 0)
		rc = archive_exec(a, "COMMIT", err);
	if (rc < 0)
		sqlite3_exec(a->db, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}

struct archive *archive_open(const char *zPath, int bCreate, int busyMs, char *err)
{
	if (!bCreate && !path_exists(zPath)) {
		kl_err(err, "%s: no archive yet (kloop archive add SESSION makes one)", zPath);
		return NULL;
	}
	if (bCreate) {
		const char *slash = strrchr(zPath, '/');
		if (slash && slash != zPath) {
			char *dir = xstrndup(zPath, (size_t)(slash - zPath));
			int rc = path_exists(dir) ? 0 : mkdir_p(dir, err);
			free(dir);
			if (rc < 0)
				return NULL;
		}
	}
	struct archive *a = xcalloc(1, sizeof *a);
	a->zPath = xstrdup(zPath);
	int flags = SQLITE_OPEN_READWRITE | (bCreate ? SQLITE_OPEN_CREATE : 0);
	if (sqlite3_open_v2(zPath, &a->db, flags, NULL) != SQLITE_OK) {
		kl_err(err, "%s: cannot open the archive: %s", zPath,
		       a->db ? sqlite3_errmsg(a->db) : "out of memory");
		archive_close(a);
		return NULL;
	}
	sqlite3_busy_timeout(a->db, busyMs);
	sqlite3_extended_result_codes(a->db, 1);
	/* WAL: readers never wait for a writer, one writer at a time; NORMAL
	 * sync is safe in WAL mode (a crash loses at most the last commits) */
	if (archive_exec(
	        a,
	        "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA mmap_size=1073741824;",
	        err) < 0 ||
	    schema(a, err) < 0) {
		archive_close(a);
		return NULL;
	}
	archive_rank_register(a);
	return a;
}

void archive_close(struct archive *a)
{
	if (!a)
		return;
	sqlite3_finalize(a->aIns[0]);
	sqlite3_finalize(a->aIns[1]);
	for (int i = 0; i < a->nStmt; i++) {
		sqlite3_finalize(a->aStmt[i].s);
		free(a->aStmt[i].zSql);
	}
	for (int i = 0; i < a->nDf; i++)
		free(a->aDf[i].zKey);
	free(a->aDf);
	sqlite3_close(a->db);
	free(a->zPath);
	free(a);
}

long archive_count(struct archive *a, char *err)
{
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(a->db, "SELECT count(*) FROM entries", -1, &s, NULL) != SQLITE_OK)
		return archive_db_err(a, err, "count");
	long n = sqlite3_step(s) == SQLITE_ROW ? (long)sqlite3_column_int64(s, 0) : -1;
	sqlite3_finalize(s);
	return n < 0 ? archive_db_err(a, err, "count") : n;
}

/*
 * Store entry e (a JSON object as entry_json() makes it; not consumed).
 * bNote: noted from a session (not imported): a win removes the dead end
 * its idea had in that session.  bReplace: a dead end replaces an older
 * version of itself.  *pAdded is
 * incremented when a row was added.  0 or -1 + err.
 */
int archive_put_entry(struct archive *a, const cJSON *e, int bNote, int bReplace, int *pAdded,
                      char *err)
{
	static const char *const zIns =
	    "INSERT INTO entries(ukey, kind, task, signature, backend, gpu, idea, category, "
	    "failure, code, speedup_parent, speedup, session, idea_key, json) "
	    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15) ";
	const char *tail =
	    bReplace ? "ON CONFLICT(ukey) DO UPDATE SET failure = excluded.failure, code = "
	               "excluded.code, idea = excluded.idea, json = excluded.json WHERE "
	               "json <> excluded.json"
	             : "ON CONFLICT(ukey) DO NOTHING";
	sqlite3_stmt *s = a->aIns[!!bReplace];
	if (!s) {
		char *sql = xasprintf("%s%s", zIns, tail);
		int rc = sqlite3_prepare_v3(a->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &s, NULL);
		free(sql);
		if (rc != SQLITE_OK)
			return archive_db_err(a, err, "insert");
		a->aIns[!!bReplace] = s;
	}
	cJSON *rest = cJSON_Duplicate(e, 1);
	cJSON_DeleteItemFromObject(rest, "code");
	char *js = json_text(rest, 0);
	cJSON_Delete(rest);
	char *idea = xasprintf("%s\n%s\n%s", json_str(e, "idea", ""),
	                       json_str(e, "idea_description", ""), json_str(e, "category", ""));
	const cJSON *iid = cJSON_GetObjectItem(e, "idea_id");
	char *ikey = cJSON_IsNumber(iid)
	                 ? xasprintf("%s:%d", json_str(e, "session", ""), iid->valueint)
	                 : NULL;
	const char *kind = json_str(e, "kind", "");
	sqlite3_bind_text(s, 1, json_str(e, "ukey", ""), -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, kind, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 3, json_str(e, "task", ""), -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 4, json_str(e, "signature", ""), -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 5, json_str(e, "backend", ""), -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 6, json_str(e, "gpu", ""), -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 7, idea, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 8, json_str(e, "category", ""), -1, SQLITE_STATIC);
	if (!strcmp(kind, "dead_end"))
		sqlite3_bind_text(s, 9, json_str(e, "failure", ""), -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 10, json_str(e, "code", ""), -1, SQLITE_STATIC);
	const cJSON *sp = cJSON_GetObjectItem(e, "speedup_parent");
	if (cJSON_IsNumber(sp))
		sqlite3_bind_double(s, 11, sp->valuedouble);
	sp = cJSON_GetObjectItem(e, "speedup");
	if (cJSON_IsNumber(sp))
		sqlite3_bind_double(s, 12, sp->valuedouble);
	sqlite3_bind_text(s, 13, json_str(e, "session", ""), -1, SQLITE_STATIC);
	if (ikey)
		sqlite3_bind_text(s, 14, ikey, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 15, js, -1, SQLITE_STATIC);
	int rc = sqlite3_step(s);
	int changed = sqlite3_changes(a->db);
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	int out = 0;
	if (rc != SQLITE_DONE) {
		out = archive_db_err(a, err, "insert");
	} else if (changed && pAdded) {
		(*pAdded)++;
	}
	/* a win makes its idea's dead end of the same session obsolete */
	if (!out && ikey && bNote && !strcmp(kind, "win")) {
		sqlite3_stmt *d;
		if (sqlite3_prepare_v2(
		        a->db, "DELETE FROM entries WHERE idea_key = ?1 AND kind = 'dead_end'", -1,
		        &d, NULL) != SQLITE_OK)
			out = archive_db_err(a, err, "delete");
		else {
			sqlite3_bind_text(d, 1, ikey, -1, SQLITE_STATIC);
			if (sqlite3_step(d) != SQLITE_DONE)
				out = archive_db_err(a, err, "delete");
			sqlite3_finalize(d);
		}
	}
	free(js);
	free(idea);
	free(ikey);
	return out;
}

int archive_drop_win(struct archive *a, const char *zUkey, char *err)
{
	sqlite3_stmt *d;
	if (sqlite3_prepare_v2(a->db, "DELETE FROM entries WHERE ukey = ?1 AND kind = 'win'", -1,
	                       &d, NULL) != SQLITE_OK)
		return archive_db_err(a, err, "delete");
	sqlite3_bind_text(d, 1, zUkey, -1, SQLITE_STATIC);
	int rc = sqlite3_step(d) == SQLITE_DONE ? 0 : archive_db_err(a, err, "delete");
	sqlite3_finalize(d);
	return rc;
}

/* a statement of the search kept prepared on a's connection (reset, its
 * bindings cleared); NULL + err */
sqlite3_stmt *archive_stmt(struct archive *a, const char *zSql, char *err)
{
	/* most recently used last: the oldest goes when the cache is full, not
	 * one the caller still holds (a search holds two at once) */
	for (int i = 0; i < a->nStmt; i++)
		if (!strcmp(a->aStmt[i].zSql, zSql)) {
			struct archive_stmt_cache c = a->aStmt[i];
			memmove(a->aStmt + i, a->aStmt + i + 1,
			        sizeof *a->aStmt * (size_t)(a->nStmt - i - 1));
			a->aStmt[a->nStmt - 1] = c;
			sqlite3_reset(c.s);
			sqlite3_clear_bindings(c.s);
			return c.s;
		}
	sqlite3_stmt *s;
	if (sqlite3_prepare_v3(a->db, zSql, -1, SQLITE_PREPARE_PERSISTENT, &s, NULL) != SQLITE_OK) {
		archive_db_err(a, err, "search");
		return NULL;
	}
	if (a->nStmt == STMT_CACHE) { /* full: the least recently used goes */
		sqlite3_finalize(a->aStmt[0].s);
		free(a->aStmt[0].zSql);
		memmove(a->aStmt, a->aStmt + 1, sizeof *a->aStmt * (STMT_CACHE - 1));
		a->nStmt--;
	}
	a->aStmt[a->nStmt].zSql = xstrdup(zSql);
	a->aStmt[a->nStmt++].s = s;
	return s;
}
