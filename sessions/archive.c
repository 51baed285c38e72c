/*
 * archive.c - the innovation archive in SQLite: a session's wins and dead
 * ends found from its fold and journal, stored with an FTS5 index, searched,
 * summed up, exported and imported; and the {{archive}} prompt section.
 */
#include "archive.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "event.h"
#include "journal.h"
#include "json.h"
#include "linediff.h"
#include "result.h"
#include "session.h"
#include "sha256.h"
#include "task.h"

#define DIFF_MAX_EDITS 4000 /* lines; a larger change is summarised */
#define REASON_MAX 600
#define LINEAGE_MAX 64
#define QUERY_WORDS 12      /* a query's rarest words that are searched for */
#define QUERY_SCAN 32       /* words of a query looked at (their frequency) */
#define RANK_WINDOW 1000    /* matches ranked by a search pass, the newest */
#define DF_PROBE 256        /* a word in fewer entries is counted, else estimated */
#define DF_SEGMENTS 4       /* stretches of the ids a frequency is estimated from */
#define DF_DROP 0.5         /* a word in more than this share of the entries is left out */
#define DF_MIN_ENTRIES 500  /* ... in an archive of at least this many */
#define TASK_POSTINGS 30000 /* postings a search within a task reads at most */
#define SCHEMA_VERSION 2
#define STMT_CACHE 24
#define DF_MEMO 512 /* word frequencies remembered */

/* a word's frequency in an index, as word_df found it at maxId */
struct df_memo {
	char *zKey; /* index, space, quoted word */
	double df;
	sqlite3_int64 maxId;
};

struct stmt_cache {
	char *zSql;
	sqlite3_stmt *s;
};

struct archive {
	sqlite3 *db;
	char *zPath;
	sqlite3_stmt *aIns[2];               /* the insert statements (put_entry), prepared once */
	struct stmt_cache aStmt[STMT_CACHE]; /* the search's statements, kept prepared */
	int nStmt;
	struct df_memo *aDf; /* word frequencies looked up (word_df) */
	int nDf;
	size_t nDfAlloc;
};

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

static int db_err(struct archive *a, char *err, const char *zWhat)
{
	return kl_err(err, "%s: %s: %s", a->zPath, zWhat, sqlite3_errmsg(a->db));
}

static int exec(struct archive *a, const char *zSql, char *err)
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
	if (exec(a, "BEGIN IMMEDIATE", err) < 0)
		return -1;
	int v = user_version(a), rc = 0;
	if (v < SCHEMA_VERSION) {
		char *sql =
		    xasprintf("%s%sINSERT INTO entries_fts(entries_fts) VALUES('rebuild');\n"
		              "INSERT INTO code_fts(code_fts) VALUES('rebuild');\n"
		              "PRAGMA user_version = %d;\n",
		              MIGRATE_1, SCHEMA, SCHEMA_VERSION);
		rc = exec(a, sql, err);
		free(sql);
	}
	if (rc == 0)
		rc = exec(a, "COMMIT", err);
	if (rc < 0)
		sqlite3_exec(a->db, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}

static void rank_register(struct archive *a);
static void kl_in(sqlite3_context *ctx, int nArg, sqlite3_value **apArg);

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
	if (exec(a,
	         "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA mmap_size=1073741824;",
	         err) < 0 ||
	    schema(a, err) < 0) {
		archive_close(a);
		return NULL;
	}
	rank_register(a);
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
		return db_err(a, err, "count");
	long n = sqlite3_step(s) == SQLITE_ROW ? (long)sqlite3_column_int64(s, 0) : -1;
	sqlite3_finalize(s);
	return n < 0 ? db_err(a, err, "count") : n;
}

/* ---- the task signature ---- */

static void add_op(strbuf *ops, const char *z, size_t n)
{
	char w[64];
	if (!n || n >= sizeof w)
		return;
	for (size_t i = 0; i < n; i++)
		w[i] = (char)tolower((unsigned char)z[i]);
	w[n] = 0;
	/* already there? (ops is " a b c ") */
	char key[68];
	snprintf(key, sizeof key, " %s ", w);
	if (ops->buf && strstr(ops->buf, key))
		return;
	if (!ops->len)
		sb_adds(ops, " ");
	sb_addf(ops, "%s ", w);
}

static int ident(int c)
{
	return isalnum(c) || c == '_';
}

/* the body of `def NAME(` in a Python source: the lines indented deeper
 * than the def; a fresh string, or NULL */
static char *py_body(const char *z, const char *zDef)
{
	const char *d = strstr(z, zDef);
	if (!d)
		return NULL;
	const char *ls = d;
	while (ls > z && ls[-1] != '\n')
		ls--;
	size_t indent = (size_t)(d - ls);
	const char *p = strchr(d, '\n');
	if (!p)
		return NULL;
	const char *end = ++p;
	while (*end) {
		const char *nl = strchr(end, '\n');
		size_t len = nl ? (size_t)(nl - end) : strlen(end);
		size_t k = 0;
		while (k < len && (end[k] == ' ' || end[k] == '\t'))
			k++;
		if (k < len && end[k] != '#' && k <= indent)
			break;
		end += len + (nl != NULL);
	}
	return xstrndup(p, (size_t)(end - p));
}

/* the nn module type assigned to self.NAME in __init__ (lowercased into
 * out), or 0 */
static int module_type(const char *zInit, const char *zName, size_t nName, char *out, size_t n)
{
	for (const char *p = zInit; p && (p = strstr(p, "self.")); p += 5) {
		const char *q = p + 5;
		if (strncmp(q, zName, nName) || ident((unsigned char)q[nName]))
			continue;
		q += nName;
		while (*q == ' ')
			q++;
		if (*q != '=' || q[1] == '=')
			continue;
		q++;
		while (*q == ' ')
			q++;
		const char *dot = NULL, *e = q;
		while (ident((unsigned char)*e) || *e == '.')
			if (*e++ == '.')
				dot = e;
		const char *b = dot ? dot : q;
		if (*e != '(' || e == b || (size_t)(e - b) >= n)
			continue;
		snprintf(out, n, "%.*s", (int)(e - b), b);
		return 1;
	}
	return 0;
}

/* the operations of forward() in a PyTorch source, appended to ops */
static void py_ops(const char *zSrc, strbuf *ops)
{
	char *fwd = py_body(zSrc, "def forward(");
	char *init = py_body(zSrc, "def __init__(");
	if (!fwd) {
		free(init);
		return;
	}
	/* comments and strings out */
	for (char *p = fwd; *p; p++) {
		if (*p == '#')
			while (*p && *p != '\n')
				*p++ = ' ';
		if (*p == '"' || *p == '\'') {
			char q = *p;
			*p++ = ' ';
			while (*p && *p != q && *p != '\n')
				*p++ = ' ';
			if (*p == q)
				*p = ' ';
		}
		if (!*p)
			break;
	}
	static const struct {
		const char *z;
		const char *op;
	} arith[] = {{" @ ", "matmul"}, {" * ", "mul"}, {" + ", "add"}, {" - ", "sub"},
	             {" / ", "div"},    {" > ", "gt"},  {" < ", "lt"},  {" ** ", "pow"}};
	for (const char *p = fwd; *p; p++) {
		if (!ident((unsigned char)*p) ||
		    (p > fwd && (ident((unsigned char)p[-1]) || p[-1] == '.')))
			continue;
		/* a dotted name followed by '(' */
		const char *e = p, *last = p;
		while (ident((unsigned char)*e) || (*e == '.' && ident((unsigned char)e[1]))) {
			if (*e == '.')
				last = e + 1;
			e++;
		}
		const char *after = e;
		while (*after == ' ')
			after++;
		if (*after == '(' && last != p) {
			size_t nFirst = strcspn(p, ".");
			char ty[64];
			if (nFirst == 4 && !strncmp(p, "self", 4)) {
				const char *nm = p + 5;
				size_t nn = strcspn(nm, ".( ");
				if (init && module_type(init, nm, nn, ty, sizeof ty))
					add_op(ops, ty, strlen(ty));
				else
					add_op(ops, last, (size_t)(e - last));
			} else {
				add_op(ops, last, (size_t)(e - last));
			}
		} else if (*after == '(' && strncmp(p, "super", 5) && strncmp(p, "return", 6)) {
			add_op(ops, p, (size_t)(e - p)); /* a plain call: relu(x), print() */
		}
		p = e - 1;
	}
	for (size_t i = 0; i < sizeof arith / sizeof *arith; i++)
		if (strstr(fwd, arith[i].z))
			add_op(ops, arith[i].op, strlen(arith[i].op));
	free(fwd);
	free(init);
}

/* module-level "name = integer" lines of a KernelBench file ("rows=4096") */
static void py_sizes(const char *zSrc, strbuf *out)
{
	for (const char *p = zSrc; *p;) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		if (len && (isalpha((unsigned char)*p) || *p == '_')) {
			size_t k = 0;
			while (k < len && ident((unsigned char)p[k]))
				k++;
			size_t v = k;
			while (v < len && p[v] == ' ')
				v++;
			if (v < len && p[v] == '=' && p[v + 1] != '=') {
				v++;
				while (v < len && p[v] == ' ')
					v++;
				size_t d = v;
				while (d < len && isdigit((unsigned char)p[d]))
					d++;
				if (d > v &&
				    (d == len || p[d] == ' ' || p[d] == '#' || p[d] == '\r'))
					sb_addf(out, "%s%.*s=%.*s", out->len ? " " : "", (int)k, p,
					        (int)(d - v), p + v);
			}
		}
		p += len + (nl != NULL);
	}
}

char *archive_signature(const char *zPy, const char *zTensors)
{
	strbuf ops = STRBUF_INIT, out = STRBUF_INIT, src = STRBUF_INIT;
	char err[KL_ERRLEN];
	if (zPy && read_file(zPy, &src, 1u << 20, err) == 0 && src.buf)
		py_ops(src.buf, &ops);
	if (ops.len > 2)
		sb_addf(&out, "ops:%.*s", (int)ops.len - 1, ops.buf);
	if (zTensors && *zTensors) {
		sb_addf(&out, "%s%s", out.len ? "; " : "", zTensors);
	} else if (src.buf) {
		strbuf sz = STRBUF_INIT;
		py_sizes(src.buf, &sz);
		if (sz.len)
			sb_addf(&out, "%ssizes: %s", out.len ? "; " : "", sz.buf);
		sb_free(&sz);
	}
	sb_free(&ops);
	sb_free(&src);
	if (!out.buf)
		return xstrdup("");
	return sb_detach(&out);
}

/* the signature of a folded session's task (loaded from its directory
 * where that still exists) */
static char *state_signature(const struct state *st)
{
	const char *dir = st->zTaskDir;
	if (!dir || !path_exists(dir))
		return xstrdup("");
	size_t n = strlen(dir);
	if (n > 3 && !strcmp(dir + n - 3, ".py"))
		return archive_signature(dir, NULL);
	char err[KL_ERRLEN];
	struct task *t = task_load(dir, st->zBackend ? st->zBackend : "host", st->zShapes, err);
	if (!t)
		return xstrdup("");
	strbuf tz = STRBUF_INIT;
	for (int i = 0; i < t->nIn + t->nOut; i++) {
		const struct task_tensor *x = i < t->nIn ? &t->aIn[i] : &t->aOut[i - t->nIn];
		char *shape = task_shape_str(x);
		sb_addf(&tz, "%s%s %s %s %s", i ? ", " : "", i < t->nIn ? "in" : "out", x->zName,
		        task_dtype_name(x->dtype), shape);
		free(shape);
	}
	char *sig = archive_signature(t->ref.zTorch, tz.buf ? tz.buf : "");
	sb_free(&tz);
	task_free(t);
	return sig;
}

char *archive_session_id(const struct state *st, const char *zJournal)
{
	if (st->tsStarted > 0)
		return xasprintf("%s@%.6f", st->zTask ? st->zTask : "?", st->tsStarted);
	char *real = zJournal ? realpath(zJournal, NULL) : NULL;
	char *id = xasprintf("path:%s", real ? real : zJournal ? zJournal : "?");
	free(real);
	return id;
}

/* ---- what a journal says beyond the fold ---- */

struct jx {
	long off;       /* bytes of the journal read so far */
	int nEvents;    /* events (JSON objects) read */
	int *aEvEval;   /* by candidate id: the index of its last eval_finished */
	int *aReq;      /* by candidate id: the LLM request that wrote it */
	size_t nCand;   /* entries of both */
	char **azModel; /* by request id: "provider model" */
	size_t nReq;
};

static void jx_free(struct jx *x)
{
	for (size_t i = 0; i < x->nReq; i++)
		free(x->azModel[i]);
	free(x->azModel);
	free(x->aEvEval);
	free(x->aReq);
	memset(x, 0, sizeof *x);
}

static int num_of(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItem(o, k);
	return cJSON_IsNumber(v) ? v->valueint : 0;
}

static void jx_cand(struct jx *x, int id)
{
	if ((size_t)id < x->nCand)
		return;
	size_t n = x->nCand, want = (size_t)id + 1;
	size_t a1 = n, a2 = n;
	xgrow((void **)&x->aEvEval, &a1, want, sizeof *x->aEvEval);
	xgrow((void **)&x->aReq, &a2, want, sizeof *x->aReq);
	size_t m = a1 < a2 ? a1 : a2;
	memset(x->aEvEval + n, 0, (a1 - n) * sizeof *x->aEvEval);
	memset(x->aReq + n, 0, (a2 - n) * sizeof *x->aReq);
	x->nCand = m;
}

static void jx_event(struct jx *x, const cJSON *ev)
{
	const char *type = cJSON_GetStringValue(cJSON_GetObjectItem(ev, "type"));
	if (!type)
		return;
	x->nEvents++;
	if (!strcmp(type, "eval_finished")) {
		int id = num_of(ev, "candidate");
		if (id > 0 && id < 100000000) {
			jx_cand(x, id);
			x->aEvEval[id] = x->nEvents;
		}
	} else if (!strcmp(type, "candidate_added")) {
		int id = num_of(ev, "id"), rq = num_of(ev, "request");
		if (id > 0 && id < 100000000 && rq > 0) {
			jx_cand(x, id);
			x->aReq[id] = rq;
		}
	} else if (!strcmp(type, "llm_request")) {
		int rq = num_of(ev, "request");
		const char *m = cJSON_GetStringValue(cJSON_GetObjectItem(ev, "model"));
		const char *pv = cJSON_GetStringValue(cJSON_GetObjectItem(ev, "provider"));
		if (rq > 0 && rq < 100000000 && m) {
			size_t n = x->nReq;
			if ((size_t)rq >= n) {
				xgrow((void **)&x->azModel, &x->nReq, (size_t)rq + 1,
				      sizeof *x->azModel);
				memset(x->azModel + n, 0, (x->nReq - n) * sizeof *x->azModel);
			}
			free(x->azModel[rq]);
			x->azModel[rq] = pv && *pv ? xasprintf("%s %s", pv, m) : xstrdup(m);
		}
	}
}

/* read the journal's complete lines from x->off on */
static void jx_read(struct jx *x, const char *zJournal)
{
	FILE *f = fopen(zJournal, "r");
	if (!f)
		return;
	if (fseek(f, x->off, SEEK_SET) == 0) {
		char *line = NULL;
		size_t cap = 0;
		ssize_t n;
		while ((n = getline(&line, &cap, f)) > 0) {
			if (line[n - 1] != '\n')
				break; /* a line being written: next time */
			x->off += n;
			cJSON *ev = cJSON_ParseWithLength(line, (size_t)n);
			if (cJSON_IsObject(ev))
				jx_event(x, ev);
			cJSON_Delete(ev);
		}
		free(line);
	}
	fclose(f);
}

/* ---- wins and dead ends ---- */

/* a candidate's time and its spread (p10..p90, else median +- 2 rse, else
 * the median alone); 0 when it has no time */
static int interval(const struct cand *c, double *lo, double *hi, double *med)
{
	const cJSON *t = cJSON_GetObjectItem(c->result, "timing");
	double m = result_num(t, "median_ms");
	if (c->status != STATUS_CORRECT || c->unverified || c->reduced || !(m > 0))
		return 0;
	double p10 = result_num(t, "p10_ms"), p90 = result_num(t, "p90_ms");
	double rse = result_num(t, "rse");
	*med = m;
	if (p10 > 0 && p90 >= p10) {
		*lo = p10 < m ? p10 : m;
		*hi = p90 > m ? p90 : m;
	} else if (rse >= 0) {
		*lo = m * (1 - 2 * rse);
		*hi = m * (1 + 2 * rse);
	} else {
		*lo = *hi = m;
	}
	return 1;
}

int archive_is_win(const struct state *st, const struct cand *c)
{
	double lo, hi, m;
	if (c->nParent < 1 || !interval(c, &lo, &hi, &m))
		return 0;
	for (int i = 0; i < c->nParent; i++) {
		const struct cand *p = state_cand(st, c->aParent[i]);
		double plo, phi, pm;
		if (!p || !interval(p, &plo, &phi, &pm) || !(hi < plo))
			return 0;
	}
	return 1;
}

struct sess {
	const struct state *st;
	const struct jx *x;
	const char *zSid;
	const char *zSig;
	const char *zPath; /* the journal, absolute where known */
};

static void add_num(cJSON *o, const char *k, double v)
{
	if (isfinite(v))
		cJSON_AddNumberToObject(o, k, v);
	else
		cJSON_AddNullToObject(o, k);
}

static void add_copy(cJSON *o, const char *k, const cJSON *from, const char *kFrom)
{
	const cJSON *v = cJSON_GetObjectItem(from, kFrom);
	if (v)
		cJSON_AddItemToObject(o, k, cJSON_Duplicate(v, 1));
}

static char *cut(const char *z, size_t max)
{
	size_t n = strlen(z ? z : "");
	if (n <= max)
		return xstrdup(z ? z : "");
	/* not in the middle of a UTF-8 sequence */
	while (max && ((unsigned char)z[max] & 0xC0) == 0x80)
		max--;
	return xasprintf("%.*s...", (int)max, z);
}

/* the entry for candidate c: a win, or (zFailure) the last attempt of a
 * dead idea */
static cJSON *entry_json(const struct sess *s, const struct cand *c, const char *zFailure,
                         int nTried)
{
	const struct state *st = s->st;
	const struct state_idea *d = c->ideaId ? state_idea(st, c->ideaId) : NULL;
	const struct cand *p = c->nParent ? state_cand(st, c->aParent[0]) : NULL;
	cJSON *e = cJSON_CreateObject();
	char hex[65];
	struct sha256 h;
	sha256_init(&h);
	sha256_update(&h, c->zSource, strlen(c->zSource));
	sha256_hex(&h, hex);
	char *ukey = zFailure ? xasprintf("dead_end:%s:idea:%d", s->zSid, d ? d->id : -c->id)
	                      : xasprintf("win:%s:%d:%.16s", s->zSid, c->id, hex);
	cJSON_AddStringToObject(e, "ukey", ukey);
	free(ukey);
	cJSON_AddStringToObject(e, "kind", zFailure ? "dead_end" : "win");
	cJSON_AddStringToObject(e, "task", st->zTask ? st->zTask : "");
	cJSON_AddStringToObject(e, "signature", s->zSig);
	cJSON_AddStringToObject(e, "backend", st->zBackend ? st->zBackend : "");
	const char *dev = cJSON_GetStringValue(cJSON_GetObjectItem(c->result, "device"));
	cJSON_AddStringToObject(e, "gpu", dev ? dev : "");
	cJSON_AddStringToObject(e, "idea", d ? d->zTitle : c->zIdea ? c->zIdea : "");
	cJSON_AddStringToObject(e, "idea_description", d ? d->zDescription : "");
	cJSON_AddStringToObject(e, "category", d ? d->zCategory : "other");
	cJSON_AddStringToObject(e, "origin", c->zOrigin);
	if (zFailure) {
		cJSON_AddStringToObject(e, "failure", zFailure);
		char *r = cut(c->zReason, REASON_MAX);
		cJSON_AddStringToObject(e, "reason", r);
		free(r);
		cJSON_AddNumberToObject(e, "tried", nTried);
	}
	cJSON_AddStringToObject(e, "name", c->zName);
	cJSON_AddNumberToObject(e, "candidate", c->id);
	cJSON *ps = cJSON_AddArrayToObject(e, "parents");
	for (int i = 0; i < c->nParent; i++)
		cJSON_AddItemToArray(ps, cJSON_CreateNumber(c->aParent[i]));
	/* the lineage, root first */
	const struct cand *chain[LINEAGE_MAX];
	int n = 0;
	for (const struct cand *x = c; x && n < LINEAGE_MAX;
	     x = x->nParent ? state_cand(st, x->aParent[0]) : NULL) {
		int seen = 0;
		for (int i = 0; i < n; i++)
			seen |= chain[i] == x;
		if (seen)
			break;
		chain[n++] = x;
	}
	cJSON *lin = cJSON_AddArrayToObject(e, "lineage");
	for (int i = n - 1; i >= 0; i--) {
		cJSON *y = cJSON_CreateObject();
		cJSON_AddNumberToObject(y, "id", chain[i]->id);
		cJSON_AddStringToObject(y, "name", chain[i]->zName);
		cJSON_AddStringToObject(y, "origin", chain[i]->zOrigin);
		if (chain[i]->zIdea)
			cJSON_AddStringToObject(y, "idea", chain[i]->zIdea);
		add_num(y, "time_ms", chain[i]->timeMs >= 0 ? chain[i]->timeMs : NAN);
		cJSON_AddItemToArray(lin, y);
	}
	strbuf diff = STRBUF_INIT;
	if (p) {
		sb_addf(&diff, "--- %s (candidate %d)\n+++ %s (candidate %d)\n", p->zName, p->id,
		        c->zName, c->id);
		linediff_unified(p->zSource, c->zSource, 3, DIFF_MAX_EDITS, &diff);
	}
	cJSON_AddStringToObject(e, "diff", diff.buf ? diff.buf : "");
	sb_free(&diff);
	cJSON_AddStringToObject(e, "code", c->zSource);
	const cJSON *t = cJSON_GetObjectItem(c->result, "timing");
	double lo, hi, m, plo, phi, pm;
	int has = interval(c, &lo, &hi, &m);
	add_num(e, "time_ms", has ? m : NAN);
	add_num(e, "p10_ms", has ? result_num(t, "p10_ms") : NAN);
	add_num(e, "p90_ms", has ? result_num(t, "p90_ms") : NAN);
	int phas = p && interval(p, &plo, &phi, &pm);
	add_num(e, "parent_time_ms", phas ? pm : NAN);
	add_num(e, "parent_p10_ms",
	        phas ? result_num(cJSON_GetObjectItem(p->result, "timing"), "p10_ms") : NAN);
	add_num(e, "parent_p90_ms",
	        phas ? result_num(cJSON_GetObjectItem(p->result, "timing"), "p90_ms") : NAN);
	add_num(e, "speedup_parent", has && phas ? pm / m : NAN);
	add_num(e, "speedup", c->speedup >= 0 ? c->speedup : NAN);
	add_copy(e, "baseline", c->result, "baseline");
	add_copy(e, "baseline_ms", c->result, "baseline_ms");
	add_copy(e, "speedup_compile", c->result, "speedup_compile");
	add_copy(e, "baseline_compile_ms", c->result, "baseline_compile_ms");
	add_copy(e, "resources", cJSON_GetObjectItem(c->result, "compile"), "resources");
	const char *model = NULL;
	if ((size_t)c->id < s->x->nCand) {
		int rq = s->x->aReq[c->id];
		if (rq > 0 && (size_t)rq < s->x->nReq)
			model = s->x->azModel[rq];
	}
	if (model)
		cJSON_AddStringToObject(e, "model", model);
	else
		cJSON_AddNullToObject(e, "model");
	cJSON_AddStringToObject(e, "session", s->zSid);
	cJSON_AddStringToObject(e, "session_path", s->zPath);
	int ev = (size_t)c->id < s->x->nCand ? s->x->aEvEval[c->id] : 0;
	if (ev > 0)
		cJSON_AddNumberToObject(e, "event", ev);
	else
		cJSON_AddNullToObject(e, "event");
	if (d)
		cJSON_AddNumberToObject(e, "idea_id", d->id);
	add_num(e, "ts", c->tsEval > 0 ? c->tsEval : NAN);
	return e;
}

/*
 * Store entry e (a JSON object as entry_json() makes it; not consumed).
 * bNote: noted from a session (not imported): a win removes the dead end
 * its idea had in that session.  bReplace: a dead end replaces an older
 * version of itself.  *pAdded is
 * incremented when a row was added.  0 or -1 + err.
 */
static int put_entry(struct archive *a, const cJSON *e, int bNote, int bReplace, int *pAdded,
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
			return db_err(a, err, "insert");
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
		out = db_err(a, err, "insert");
	} else if (changed && pAdded) {
		(*pAdded)++;
	}
	/* a win makes its idea's dead end of the same session obsolete */
	if (!out && ikey && bNote && !strcmp(kind, "win")) {
		sqlite3_stmt *d;
		if (sqlite3_prepare_v2(
		        a->db, "DELETE FROM entries WHERE idea_key = ?1 AND kind = 'dead_end'", -1,
		        &d, NULL) != SQLITE_OK)
			out = db_err(a, err, "delete");
		else {
			sqlite3_bind_text(d, 1, ikey, -1, SQLITE_STATIC);
			if (sqlite3_step(d) != SQLITE_DONE)
				out = db_err(a, err, "delete");
			sqlite3_finalize(d);
		}
	}
	free(js);
	free(idea);
	free(ikey);
	return out;
}

/* what a session has archived already (the live hook's memory) */
struct track {
	char *zJournal;      /* as given */
	char *zSid;          /* the session id (NULL until session_started is folded) */
	char *zSig;          /* the task signature */
	char *zAbs;          /* the journal's absolute path */
	struct jx x;         /* the journal read so far */
	unsigned char *aWon; /* by candidate id: archived as a win */
	size_t nWon;
	char **azDead; /* by idea id: the failure class archived */
	size_t nDead;
	int evSeen; /* the journal's events that were looked at */
};

/* the index of candidate id's last eval_finished in t's journal (0: none) */
static int eval_index(const struct track *t, int id)
{
	return id > 0 && (size_t)id < t->x.nCand ? t->x.aEvEval[id] : 0;
}

static void track_free(struct track *t)
{
	free(t->zJournal);
	free(t->zSid);
	free(t->zSig);
	free(t->zAbs);
	jx_free(&t->x);
	free(t->aWon);
	for (size_t i = 0; i < t->nDead; i++)
		free(t->azDead[i]);
	free(t->azDead);
	memset(t, 0, sizeof *t);
}

static int track_init(struct track *t, const struct state *st, const char *zJournal)
{
	if (!st->zTask)
		return -1;
	t->zJournal = xstrdup(zJournal);
	t->zSid = archive_session_id(st, zJournal);
	t->zSig = state_signature(st);
	char *real = realpath(zJournal, NULL);
	t->zAbs = real ? real : xstrdup(zJournal);
	return 0;
}

/* what an idea's candidates came to (one pass over the population) */
struct idea_sum {
	const struct cand *last; /* its latest candidate */
	int n;                   /* candidates */
	int correct;             /* one of them is correct */
	int open;                /* one is won, new or being evaluated: not a dead end */
};

/* the sums by idea id (0..max) for the ideas marked in aMark (indexed the
 * same way); a fresh array */
static struct idea_sum *idea_sums(const struct state *st, int max, const unsigned char *aMark)
{
	struct idea_sum *v = xcalloc((size_t)max + 1, sizeof *v);
	for (int i = 0; i < st->nCand; i++) {
		const struct cand *c = &st->aCand[i];
		if (c->ideaId < 1 || c->ideaId > max || !aMark[c->ideaId])
			continue;
		struct idea_sum *x = &v[c->ideaId];
		x->open |= !status_finished(c->status) || archive_is_win(st, c);
		x->n++;
		x->correct |= c->status == STATUS_CORRECT;
		if (!x->last || c->id > x->last->id)
			x->last = c;
	}
	return v;
}

/* the failure class of an idea, or NULL when it won, has nothing evaluated
 * or is still being tried */
static const char *dead_class(const struct idea_sum *x)
{
	/* a last evaluation the user cancelled says nothing about the idea */
	if (x->open || !x->last || x->last->status == STATUS_CANCELLED)
		return NULL;
	return x->correct ? "slower" : x->last->zStatus;
}

/* add what t's session (folded in st) holds that t has not archived, in
 * one transaction */
static int add_session(struct archive *a, struct track *t, const struct state *st,
                       struct archive_counts *pOut, char *err)
{
	struct sess s = {st, &t->x, t->zSid, t->zSig, t->zAbs};
	struct archive_counts cnt = {0};
	cJSON *todo = cJSON_CreateArray(); /* [entry, bReplace] pairs */
	int *aNewWin = NULL, nNewWin = 0;
	/* only what the events since the last call can have changed: a
	 * candidate evaluated since, or one whose parent was; and their ideas */
	int maxIdea = 0;
	for (int i = 0; i < st->nIdea; i++)
		if (st->aIdea[i].id > maxIdea)
			maxIdea = st->aIdea[i].id;
	unsigned char *aIdeaMark = xcalloc((size_t)maxIdea + 1, 1);
	for (int i = 0; i < st->nCand; i++) {
		const struct cand *c = &st->aCand[i];
		int fresh = eval_index(t, c->id) > t->evSeen;
		for (int k = 0; k < c->nParent && !fresh; k++)
			fresh = eval_index(t, c->aParent[k]) > t->evSeen;
		if (!fresh)
			continue;
		if (c->ideaId >= 1 && c->ideaId <= maxIdea)
			aIdeaMark[c->ideaId] = 1;
		if (!archive_is_win(st, c))
			continue;
		cnt.nWins++;
		if ((size_t)c->id < t->nWon && t->aWon[c->id])
			continue;
		cJSON_AddItemToArray(todo, entry_json(&s, c, NULL, 0));
		aNewWin = xrealloc(aNewWin, sizeof *aNewWin * (size_t)(nNewWin + 1));
		aNewWin[nNewWin++] = c->id;
	}
	int nWinJobs = nNewWin;
	int *aNewDead = NULL;
	const char **azNewDead = NULL;
	int nNewDead = 0;
	struct idea_sum *sums = idea_sums(st, maxIdea, aIdeaMark);
	for (int i = 0; i < st->nIdea; i++) {
		const struct state_idea *d = &st->aIdea[i];
		const struct idea_sum *x = &sums[d->id];
		const char *cls = d->id >= 1 && aIdeaMark[d->id] ? dead_class(x) : NULL;
		if (!cls)
			continue;
		const struct cand *last = x->last;
		int n = x->n;
		cnt.nDeadEnds++;
		if ((size_t)d->id < t->nDead && t->azDead[d->id] && !strcmp(t->azDead[d->id], cls))
			continue;
		cJSON_AddItemToArray(todo, entry_json(&s, last, cls, n));
		aNewDead = xrealloc(aNewDead, sizeof *aNewDead * (size_t)(nNewDead + 1));
		azNewDead = xrealloc(azNewDead, sizeof *azNewDead * (size_t)(nNewDead + 1));
		aNewDead[nNewDead] = d->id;
		azNewDead[nNewDead++] = cls;
	}
	free(sums);
	free(aIdeaMark);
	int rc = 0;
	if (cJSON_GetArraySize(todo) > 0) {
		rc = exec(a, "BEGIN IMMEDIATE", err);
		int k = 0;
		const cJSON *e;
		cJSON_ArrayForEach(e, todo)
		{
			if (rc == 0)
				rc = put_entry(a, e, 1, k >= nWinJobs, &cnt.nAdded, err);
			k++;
		}
		if (rc == 0)
			rc = exec(a, "COMMIT", err);
		if (rc < 0)
			sqlite3_exec(a->db, "ROLLBACK", NULL, NULL, NULL);
	}
	if (rc == 0) {
		t->evSeen = t->x.nEvents;
		for (int i = 0; i < nNewWin; i++) {
			size_t id = (size_t)aNewWin[i];
			if (id >= t->nWon) {
				size_t n = t->nWon;
				xgrow((void **)&t->aWon, &t->nWon, id + 1, 1);
				memset(t->aWon + n, 0, t->nWon - n);
			}
			t->aWon[id] = 1;
		}
		for (int i = 0; i < nNewDead; i++) {
			size_t id = (size_t)aNewDead[i];
			if (id >= t->nDead) {
				size_t n = t->nDead;
				xgrow((void **)&t->azDead, &t->nDead, id + 1, sizeof *t->azDead);
				memset(t->azDead + n, 0, (t->nDead - n) * sizeof *t->azDead);
			}
			free(t->azDead[id]);
			t->azDead[id] = xstrdup(azNewDead[i]);
		}
	}
	free(aNewWin);
	free(aNewDead);
	free(azNewDead);
	cJSON_Delete(todo);
	if (pOut)
		*pOut = cnt;
	return rc;
}

struct fold {
	struct state st;
	struct jx x;
};

static void fold_event(const cJSON *ev, const char *zLine, size_t nLine, int line, void *arg)
{
	(void)zLine, (void)nLine, (void)line;
	struct fold *f = arg;
	char err[KL_ERRLEN];
	jx_event(&f->x, ev);
	state_apply(&f->st, ev, err); /* a contradicting event is skipped, as session_open does */
}

int archive_add_journal(struct archive *a, const char *zJournal, struct archive_counts *pOut,
                        char *err)
{
	struct fold f;
	state_init(&f.st);
	memset(&f.x, 0, sizeof f.x);
	int rc = journal_read(zJournal, fold_event, NULL, &f, err);
	struct track t = {0};
	if (rc >= 0 && track_init(&t, &f.st, zJournal) < 0)
		rc = kl_err(err, "%s: not a kloop session journal (no session_started event)",
		            zJournal);
	if (rc >= 0) {
		t.x = f.x;
		memset(&f.x, 0, sizeof f.x);
		rc = add_session(a, &t, &f.st, pOut, err);
	}
	track_free(&t);
	jx_free(&f.x);
	state_free(&f.st);
	return rc < 0 ? -1 : 0;
}

/* ---- the live hook ---- */

static struct archive *gLive;    /* the process's archive, opened on first use */
static struct track *aLiveTrack; /* the sessions it has seen */
static size_t nLiveTrack, nLiveTrackAlloc;
static int nLiveFailed; /* failures in a row (only the first is reported) */

static struct archive *live_archive(int bCreate, char *err)
{
	if (gLive)
		return gLive;
	char *path = archive_default_path();
	if (!path) {
		kl_err(err, "the archive is off ($KLOOP_ARCHIVE)");
		return NULL;
	}
	if (bCreate || path_exists(path))
		gLive = archive_open(path, bCreate, 100, err);
	else
		kl_err(err, "%s: no archive yet", path);
	free(path);
	return gLive;
}

int archive_note_session(const struct state *st, const char *zJournal, char *err)
{
	if (!zJournal || !st->zTask || !path_exists(zJournal))
		return 0; /* a session without a journal (session_memory) */
	char *p = archive_default_path();
	int off = !p;
	free(p);
	if (off)
		return 0;
	struct archive *a = live_archive(1, err);
	if (!a) {
		if (nLiveFailed++)
			*err = 0;
		return -1;
	}
	struct track *t = NULL;
	for (size_t i = 0; i < nLiveTrack && !t; i++)
		if (!strcmp(aLiveTrack[i].zJournal, zJournal))
			t = &aLiveTrack[i];
	if (!t) {
		xgrow((void **)&aLiveTrack, &nLiveTrackAlloc, nLiveTrack + 1, sizeof *aLiveTrack);
		t = &aLiveTrack[nLiveTrack];
		memset(t, 0, sizeof *t);
		if (track_init(t, st, zJournal) < 0)
			return 0;
		nLiveTrack++;
	}
	int fresh = t->x.off == 0;
	jx_read(&t->x, zJournal);
	/* a journal opened with a history: from its last event on (the
	 * evaluation that called); `kloop archive add` backfills the rest */
	if (fresh && t->x.nEvents > 0)
		t->evSeen = t->x.nEvents - 1;
	if (add_session(a, t, st, NULL, err) < 0) {
		if (nLiveFailed++)
			*err = 0; /* said once */
		return -1;
	}
	nLiveFailed = 0;
	return 0;
}

/* ---- search ---- */

/* words that say nothing about a kernel (every phrase ranked costs time) */
static int stopword(const char *z, size_t n)
{
	static const char *const w[] = {"the",  "and",  "for", "with", "then", "that",  "this",
	                                "from", "into", "its", "are",  "was",  "not",   "but",
	                                "each", "per",  "ops", "out",  "use",  "using", "in",
	                                "of",   "to",   "on",  "by",   "an",   NULL};
	int digits = 1;
	for (size_t i = 0; i < n; i++)
		digits &= isdigit((unsigned char)z[i]) != 0;
	if (digits || n < 2)
		return 1;
	for (int i = 0; w[i]; i++)
		if (strlen(w[i]) == n && !strncasecmp(w[i], z, n))
			return 1;
	return 0;
}

/* the words of a query, each quoted as an FTS5 phrase ("word", so that no
 * FTS5 syntax gets through): runs of letters, digits, '_' and UTF-8,
 * without numbers, one-letter words, stop words and repeats; at most max.
 * The number of words put in az (fresh strings). */
static int query_words(const char *z, char **az, int max)
{
	int n = 0;
	for (const char *p = z ? z : ""; *p && n < max;) {
		while (*p && !ident((unsigned char)*p) && !((unsigned char)*p & 0x80))
			p++;
		const char *b = p;
		while (*p && (ident((unsigned char)*p) || ((unsigned char)*p & 0x80)))
			p++;
		size_t len = (size_t)(p - b);
		if (!len || stopword(b, len))
			continue;
		char *word = xasprintf("\"%.*s\"", (int)len, b);
		int seen = 0;
		for (int i = 0; i < n; i++)
			seen |= !strcasecmp(az[i], word);
		if (seen)
			free(word);
		else
			az[n++] = word;
	}
	return n;
}

/* a statement of the search kept prepared on a's connection (reset, its
 * bindings cleared); NULL + err */
static sqlite3_stmt *stmt(struct archive *a, const char *zSql, char *err)
{
	/* most recently used last: the oldest goes when the cache is full, not
	 * one the caller still holds (a search holds two at once) */
	for (int i = 0; i < a->nStmt; i++)
		if (!strcmp(a->aStmt[i].zSql, zSql)) {
			struct stmt_cache c = a->aStmt[i];
			memmove(a->aStmt + i, a->aStmt + i + 1,
			        sizeof *a->aStmt * (size_t)(a->nStmt - i - 1));
			a->aStmt[a->nStmt - 1] = c;
			sqlite3_reset(c.s);
			sqlite3_clear_bindings(c.s);
			return c.s;
		}
	sqlite3_stmt *s;
	if (sqlite3_prepare_v3(a->db, zSql, -1, SQLITE_PREPARE_PERSISTENT, &s, NULL) != SQLITE_OK) {
		db_err(a, err, "search");
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

#define RANK_K1 1.2

/*
 * kl_rank(fts, idf, w1, w2, ...), an FTS5 function: minus the row's score,
 * for ORDER BY.  The score sums, over the query's phrases, the phrase's
 * weight idf[i] (a blob of doubles; phrases past its end, such as the task
 * phrase of a --task search, weigh nothing) times its frequency in the row
 * saturated as bm25 does, f (k1 + 1) / (f + k1), where f counts each hit
 * with its column's weight (w1 the first column's, ...).  No length
 * normalisation: the ideas are a few lines, and it would cost a lookup per
 * row.  Unlike FTS5's bm25(), which counts each phrase's documents by
 * reading its whole doclist on every query, the weights come from the
 * caller (word_df).
 */
static void kl_rank(const Fts5ExtensionApi *api, Fts5Context *fts, sqlite3_context *ctx, int nVal,
                    sqlite3_value **apVal)
{
	double idf[QUERY_WORDS], f[QUERY_WORDS] = {0};
	int nIdf = 0, nInst = 0;
	if (nVal > 0 && sqlite3_value_type(apVal[0]) == SQLITE_BLOB) {
		nIdf = sqlite3_value_bytes(apVal[0]) / (int)sizeof(double);
		if (nIdf > QUERY_WORDS)
			nIdf = QUERY_WORDS;
		if (nIdf > 0) /* an empty blob is NULL, which memcpy must not get */
			memcpy(idf, sqlite3_value_blob(apVal[0]), sizeof(double) * (size_t)nIdf);
	}
	int rc = api->xInstCount(fts, &nInst);
	for (int i = 0; rc == SQLITE_OK && i < nInst; i++) {
		int ip, ic, io;
		rc = api->xInst(fts, i, &ip, &ic, &io);
		if (rc == SQLITE_OK && ip < nIdf)
			f[ip] += ic + 1 < nVal ? sqlite3_value_double(apVal[ic + 1]) : 1.0;
	}
	if (rc != SQLITE_OK) {
		sqlite3_result_error_code(ctx, rc);
		return;
	}
	double score = 0;
	for (int i = 0; i < nIdf; i++)
		if (f[i] > 0)
			score += idf[i] * f[i] * (RANK_K1 + 1) / (f[i] + RANK_K1);
	sqlite3_result_double(ctx, -score);
}

/* kl_rank on a's connection (once per connection) */
static void rank_register(struct archive *a)
{
	fts5_api *api = NULL;
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(a->db, "SELECT fts5(?1)", -1, &s, NULL) == SQLITE_OK) {
		sqlite3_bind_pointer(s, 1, (void *)&api, "fts5_api_ptr", NULL);
		sqlite3_step(s);
		sqlite3_finalize(s);
	}
	if (api)
		api->xCreateFunction(api, "kl_rank", NULL, kl_rank, NULL);
	sqlite3_create_function(a->db, "kl_in", 2, SQLITE_UTF8, NULL, kl_in, NULL, NULL);
}

/* the postings of zWord in index zTable read from rowid lo up (below hi,
 * at most max); *pLast: the last one's rowid.  The count, or -1 + err */
static int postings(struct archive *a, const char *zTable, const char *zWord, sqlite3_int64 lo,
                    sqlite3_int64 hi, int max, sqlite3_int64 *pLast, char *err)
{
	char sql[200];
	snprintf(sql, sizeof sql,
	         "SELECT rowid FROM %s WHERE %s MATCH ?1 AND rowid >= ?2 AND rowid < ?3 ORDER BY "
	         "rowid LIMIT ?4",
	         zTable, zTable);
	sqlite3_stmt *s = stmt(a, sql, err);
	if (!s)
		return -1;
	sqlite3_bind_text(s, 1, zWord, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 2, lo);
	sqlite3_bind_int64(s, 3, hi);
	sqlite3_bind_int(s, 4, max);
	int n = 0, rc;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		*pLast = sqlite3_column_int64(s, 0);
		n++;
	}
	sqlite3_reset(s);
	return rc == SQLITE_DONE ? n : db_err(a, err, "search");
}

/*
 * How many entries of index zTable hold zWord (a quoted phrase): counted
 * when fewer than DF_PROBE do; else estimated from DF_SEGMENTS stretches of
 * the ids spread over the archive: in each, the first DF_PROBE /
 * DF_SEGMENTS postings (or all of the stretch's) and the ids they span give
 * the word's density there.  Spread out, so that a burst of entries (a
 * session adding many of one task) does not make its words look common
 * everywhere.  Reading at most 2 DF_PROBE postings keeps this cheap for the
 * common words, which is where it is estimated.  Remembered per connection
 * while the archive grows by less than 1% (and 50 entries).  -1 + err on
 * a database error.
 */
static double word_df(struct archive *a, const char *zTable, const char *zWord, sqlite3_int64 maxId,
                      char *err)
{
	char *key = xasprintf("%s %s", zTable, zWord);
	struct df_memo *memo = NULL;
	for (int i = 0; i < a->nDf && !memo; i++)
		if (!strcmp(a->aDf[i].zKey, key))
			memo = &a->aDf[i];
	if (memo && memo->maxId <= maxId && maxId - memo->maxId <= 50 + memo->maxId / 100) {
		free(key);
		return memo->df;
	}
	sqlite3_int64 last = 0;
	int n = postings(a, zTable, zWord, 0, maxId + 1, DF_PROBE, &last, err);
	double df = n;
	for (int k = 0; n == DF_PROBE && k < DF_SEGMENTS && df >= 0; k++) {
		if (k == 0)
			df = 0;
		sqlite3_int64 lo = 1 + maxId * k / DF_SEGMENTS,
		              hi = 1 + maxId * (k + 1) / DF_SEGMENTS;
		int m = postings(a, zTable, zWord, lo, hi, DF_PROBE / DF_SEGMENTS, &last, err);
		if (m < 0)
			df = -1;
		else if (m == DF_PROBE / DF_SEGMENTS)
			df += (double)m * (double)(hi - lo) / (double)(last - lo + 1);
		else
			df += m;
	}
	if (n < 0 || df < 0) {
		free(key);
		return -1;
	}
	if (df > (double)maxId)
		df = (double)maxId;
	if (!memo && a->nDf < DF_MEMO) {
		xgrow((void **)&a->aDf, &a->nDfAlloc, (size_t)a->nDf + 1, sizeof *a->aDf);
		memo = &a->aDf[a->nDf++];
		memo->zKey = key;
	} else {
		free(key);
	}
	if (memo) {
		memo->df = df;
		memo->maxId = maxId;
	}
	return df;
}

/* 1 when zQuoted ("word") is a word of the task's name: within the task,
 * every entry holds it */
static int task_word(const char *zTask, const char *zQuoted)
{
	size_t n = strlen(zQuoted) - 2;
	for (const char *p = zTask; *p;) {
		while (*p && !isalnum((unsigned char)*p) && !((unsigned char)*p & 0x80))
			p++;
		const char *b = p;
		while (*p && (isalnum((unsigned char)*p) || ((unsigned char)*p & 0x80)))
			p++;
		if ((size_t)(p - b) == n && n && !strncasecmp(b, zQuoted + 1, n))
			return 1;
	}
	return 0;
}

struct qword {
	const char *z; /* the quoted word */
	double df;     /* the entries that hold it (word_df) */
};

static int cmp_df(const void *x, const void *y)
{
	double a = ((const struct qword *)x)->df, b = ((const struct qword *)y)->df;
	return a < b ? -1 : a > b;
}

/* the summary of entry id (its json) with its rank; NULL when gone */
static cJSON *summary(sqlite3_stmt *pGet, sqlite3_int64 id, int hasRank, double rank)
{
	sqlite3_bind_int64(pGet, 1, id);
	cJSON *e = NULL;
	if (sqlite3_step(pGet) == SQLITE_ROW)
		e = cJSON_Parse((const char *)sqlite3_column_text(pGet, 0));
	sqlite3_reset(pGet);
	if (!e)
		return NULL;
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "id", (double)id);
	static const char *const keys[] = {"kind",    "task",    "gpu",   "idea", "category",
	                                   "failure", "session", "model", "name"};
	for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
		add_copy(o, keys[i], e, keys[i]);
	static const char *const nums[] = {"candidate", "speedup_parent", "speedup", "time_ms",
	                                   "event"};
	for (size_t i = 0; i < sizeof nums / sizeof *nums; i++)
		add_copy(o, nums[i], e, nums[i]);
	if (hasRank)
		cJSON_AddNumberToObject(o, "rank", rank);
	cJSON_Delete(e);
	return o;
}

/* the ids of a task's entries, sorted (kl_in looks them up) */
struct idset {
	sqlite3_int64 *a;
	int n;
};

static int cmp_id(const void *x, const void *y)
{
	sqlite3_int64 a = *(const sqlite3_int64 *)x, b = *(const sqlite3_int64 *)y;
	return a < b ? -1 : a > b;
}

/* the entries of task zTask (of kind zKind, unless NULL) into *p; 0 or -1
 * + err */
static int id_set(struct archive *a, const char *zTask, const char *zKind, struct idset *p,
                  char *err)
{
	sqlite3_stmt *s = stmt(a,
	                       zKind ? "SELECT id FROM entries WHERE task = ?1 AND kind = ?2"
	                             : "SELECT id FROM entries WHERE task = ?1",
	                       err);
	if (!s)
		return -1;
	sqlite3_bind_text(s, 1, zTask, -1, SQLITE_STATIC);
	if (zKind)
		sqlite3_bind_text(s, 2, zKind, -1, SQLITE_STATIC);
	size_t cap = 0;
	int rc;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		xgrow((void **)&p->a, &cap, (size_t)p->n + 1, sizeof *p->a);
		p->a[p->n++] = sqlite3_column_int64(s, 0);
	}
	sqlite3_reset(s);
	if (rc != SQLITE_DONE)
		return db_err(a, err, "search");
	if (p->n) /* qsort must not be given NULL, even for nothing */
		qsort(p->a, (size_t)p->n, sizeof *p->a, cmp_id);
	return 0;
}

/* kl_in(set, id): 1 when id is in the idset bound as set */
static void kl_in(sqlite3_context *ctx, int nArg, sqlite3_value **apArg)
{
	(void)nArg;
	const struct idset *p = sqlite3_value_pointer(apArg[0], "kl_idset");
	sqlite3_int64 id = sqlite3_value_int64(apArg[1]);
	int lo = 0, hi = p ? p->n : 0;
	while (lo < hi) {
		int mid = (lo + hi) / 2;
		if (p->a[mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	sqlite3_result_int(ctx, p && lo < p->n && p->a[lo] == id);
}

/* an index the search reads: its name, the column filter of the query's
 * words (NULL: all its columns), and kl_rank's column weights */
struct fts_index {
	const char *zTable;
	const char *zCols;
	const char *zWeights;
};

static const struct fts_index IDX_TEXT = {"entries_fts", NULL, "4.0, 2.0, 2.0"};
static const struct fts_index IDX_CODE = {"code_fts", "code", "1.0, 0.0"};

/*
 * The words of a search pass in index x (see search_pass): their
 * frequencies looked up, the rarest first, in w; idf[i] their weights.
 * The number kept (0: none is in the index), or -1 + err.
 */
static int pass_words(struct archive *a, const struct archive_query *q, const struct fts_index *x,
                      char **az, int nWord, sqlite3_int64 maxId, struct qword *w, double *idf,
                      char *err)
{
	int n = 0;
	for (int i = 0; i < nWord && n < QUERY_SCAN; i++) {
		if (q->zTask && task_word(q->zTask, az[i]))
			continue;
		double df = word_df(a, x->zTable, az[i], maxId, err);
		if (df < 0)
			return -1;
		if (df > 0)
			w[n++] = (struct qword){az[i], df};
	}
	qsort(w, (size_t)n, sizeof *w, cmp_df);
	if (n > QUERY_WORDS)
		n = QUERY_WORDS;
	if (maxId >= DF_MIN_ENTRIES)
		while (n > 1 && w[n - 1].df > DF_DROP * (double)maxId)
			n--;
	/* within a task, every posting of the words is read (the task's
	 * entries are spread over the whole index): the rarest words whose
	 * postings sum to TASK_POSTINGS at most */
	double sum = 0;
	for (int i = 0; q->zTask && i < n; i++)
		if ((sum += w[i].df) > TASK_POSTINGS && i > 0)
			n = i;
	for (int i = 0; i < n; i++)
		idf[i] = log(1 + ((double)maxId - w[i].df + 0.5) / (w[i].df + 0.5));
	return n;
}

/* the FTS5 query: any of the n words of w (in x's columns), and with
 * nRare > 0 one of the nRare rarest too; and the task's name as a phrase
 * of its column, so that the index narrows to it first.  A fresh string. */
static char *match_expr(const struct fts_index *x, const struct qword *w, int n, int nRare,
                        const char *zTask)
{
	strbuf m = STRBUF_INIT;
	for (int pass = 0; pass < 1 + (nRare > 0); pass++) {
		sb_addf(&m, "%s%s%s(", pass ? " AND " : "", x->zCols ? x->zCols : "",
		        x->zCols ? ": " : "");
		for (int i = 0; i < (pass ? nRare : n); i++)
			sb_addf(&m, "%s%s", i ? " OR " : "", w[i].z);
		sb_adds(&m, ")");
	}
	char *tp = zTask ? xstrdup(zTask) : NULL;
	int words = 0;
	for (char *p = tp; p && *p; p++) {
		if (!ident((unsigned char)*p) && !((unsigned char)*p & 0x80))
			*p = ' ';
		words |= *p != ' ';
	}
	if (words)
		sb_addf(&m, " AND task: \"%s\"", tp);
	free(tp);
	return sb_detach(&m);
}

/* a result being ranked */
struct hit {
	sqlite3_int64 id;
	double rank;
};

/* step s (bound) for at most RANK_WINDOW rows (id, rank), keeping the best
 * limit in top[*pn] (best first; of equal ranks, the one seen first); an
 * id already there is not added twice.  SQLITE_DONE, or SQLite's error */
static int rank_rows(sqlite3_stmt *s, int bRank, struct hit *top, int *pn, int limit)
{
	int nSeen = 0, rc;
	while (nSeen < RANK_WINDOW && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct hit h = {sqlite3_column_int64(s, 0),
		                bRank ? sqlite3_column_double(s, 1) : 0};
		nSeen++;
		if (*pn == limit && !(h.rank < top[*pn - 1].rank))
			continue;
		int dup = 0;
		for (int i = 0; i < *pn && !dup; i++)
			dup = top[i].id == h.id;
		if (dup)
			continue;
		int k = *pn < limit ? (*pn)++ : *pn - 1;
		while (k > 0 && h.rank < top[k - 1].rank) {
			top[k] = top[k - 1];
			k--;
		}
		top[k] = h;
	}
	sqlite3_reset(s);
	return nSeen == RANK_WINDOW ? SQLITE_DONE : rc;
}

/*
 * One pass of a search: the ids and ranks of at most limit entries matching
 * q's filters and any of the words az (quoted; NULL: all entries, by gain)
 * in index x, added to arr as summaries unless already there.
 *
 * The words' frequencies are looked up first (word_df): a word no entry
 * holds is left out, then the rarest QUERY_WORDS are kept, and in an
 * archive of DF_MIN_ENTRIES or more a word in more than DF_DROP of the
 * entries is left out too (bm25 would weigh it about nothing; the rarest
 * word stays whatever its frequency); within a task, the words of the
 * task's name are left out (every entry of the task holds them) and the
 * rarest words are kept while their postings sum to TASK_POSTINGS at most.
 * Each word weighs its idf, ln(1 + (N - df + 0.5) / (df + 0.5)).
 *
 * Ranked (kl_rank) are the newest RANK_WINDOW entries that match any of
 * the words and pass the filters, and every entry that holds one of the
 * rarest words whose frequencies sum to RANK_WINDOW at most (a second
 * scan of those words' postings only): a search costs the same at any
 * size, and the entry holding the query's rare words is found however old
 * it is.  Only the filters given are in the SQL: --task (with --kind) as
 * a set of ids from the index on the task (kl_in), the others through the
 * small index entries_meta.  The bodies are read for the results only.
 */
static int search_pass(struct archive *a, const struct archive_query *q, const struct fts_index *x,
                       char **az, int nWord, sqlite3_int64 maxId, int limit, cJSON *arr, char *err)
{
	struct qword w[QUERY_SCAN];
	double idf[QUERY_WORDS];
	int n = az ? pass_words(a, q, x, az, nWord, maxId, w, idf, err) : 0;
	if (n < 0)
		return -1;
	int nTaskWord = 0;
	for (int i = 0; q->zTask && i < nWord; i++)
		nTaskWord += task_word(q->zTask, az[i]);
	if (az && !n && nTaskWord < nWord)
		return 0; /* no entry holds any of the words */
	/* the rarest words, when the newest RANK_WINDOW matches may not hold
	 * all of their entries */
	int nRare = 0;
	double all = 0, rare = 0;
	for (int i = 0; i < n; i++)
		all += w[i].df;
	while (nRare < n && rare + w[nRare].df <= RANK_WINDOW)
		rare += w[nRare++].df;
	if (nRare == n || all <= RANK_WINDOW)
		nRare = 0;
	/* --task (and --kind with it): the ids of the task's entries, from the
	 * index on the task, checked as the FTS index yields its matches
	 * (kl_in); the other filters through the small index entries_meta */
	struct idset ids = {0};
	int bSet = n && q->zTask;
	if (bSet && id_set(a, q->zTask, q->zKind, &ids, err) < 0)
		return -1;
	if (bSet && ids.n <= RANK_WINDOW)
		nRare = 0; /* the window holds every match of the task already */
	strbuf wh = STRBUF_INIT;
	if (bSet)
		sb_adds(&wh, " AND kl_in(?10, f.rowid)");
	if (q->zTask && !bSet)
		sb_adds(&wh, " AND e.task = ?2");
	if (q->zGpu)
		sb_adds(&wh, " AND instr(lower(e.gpu), lower(?3)) > 0");
	if (q->zKind && !bSet)
		sb_adds(&wh, " AND e.kind = ?4");
	if (q->zNotSession)
		sb_adds(&wh, " AND e.session <> ?5");
	if (q->zNotTask)
		sb_adds(&wh, " AND e.task <> ?6");
	const char *zWhere = wh.buf ? wh.buf : "";
	int joined = q->zGpu || q->zNotSession || q->zNotTask || (!bSet && (q->zTask || q->zKind));
	/* with words: the matches newest first (the FTS index drives: CROSS
	 * JOIN), ranked here; without: by gain */
	char *sql =
	    n && !joined
	        ? xasprintf("SELECT rowid, kl_rank(%s, ?9, %s) FROM %s f WHERE %s MATCH ?1%s ORDER "
	                    "BY rowid DESC",
	                    x->zTable, x->zWeights, x->zTable, x->zTable, zWhere)
	    : n ? xasprintf("SELECT f.rowid, kl_rank(f.%s, ?9, %s) FROM %s f CROSS JOIN entries e "
	                    "INDEXED BY entries_meta "
	                    "ON e.id = f.rowid WHERE f.%s MATCH ?1%s ORDER BY f.rowid DESC",
	                    x->zTable, x->zWeights, x->zTable, x->zTable, zWhere)
	        : xasprintf("SELECT e.id FROM entries e WHERE 1%s ORDER BY e.kind = 'win' DESC, "
	                    "e.speedup_parent DESC, e.id DESC LIMIT ?7",
	                    zWhere);
	sb_free(&wh);
	sqlite3_stmt *s = stmt(a, sql, err), *pGet = NULL;
	free(sql);
	if (!s || !(pGet = stmt(a, "SELECT json FROM entries WHERE id = ?1", err))) {
		free(ids.a);
		return -1;
	}
	if (n)
		sqlite3_bind_blob(s, 9, idf, (int)(sizeof *idf * (size_t)n), SQLITE_STATIC);
	else
		sqlite3_bind_int(s, 7, limit);
	if (bSet)
		sqlite3_bind_pointer(s, 10, &ids, "kl_idset", NULL);
	const char *bind[] = {q->zTask, q->zGpu, q->zKind, q->zNotSession, q->zNotTask};
	for (int i = 0; i < 5; i++)
		if (bind[i] && !(bSet && (i == 0 || i == 2)))
			sqlite3_bind_text(s, i + 2, bind[i], -1, SQLITE_STATIC);
	struct hit *top = xcalloc((size_t)limit, sizeof *top);
	int nTop = 0, rc = SQLITE_DONE;
	for (int pass = 0; pass < 1 + (nRare > 0) && rc == SQLITE_DONE; pass++) {
		/* the newest matches, then the entries of the rarest words */
		char *match = n ? match_expr(x, w, n, pass ? nRare : 0, q->zTask) : NULL;
		if (match)
			sqlite3_bind_text(s, 1, match, -1, SQLITE_TRANSIENT);
		rc = rank_rows(s, n > 0, top, &nTop, limit);
		free(match);
	}
	sqlite3_clear_bindings(s);
	for (int i = 0; i < nTop && rc == SQLITE_DONE; i++) {
		int dup = 0;
		const cJSON *o;
		cJSON_ArrayForEach(o, arr) dup |=
		    cJSON_GetNumberValue(cJSON_GetObjectItem(o, "id")) == (double)top[i].id;
		cJSON *y = dup ? NULL : summary(pGet, top[i].id, n > 0, top[i].rank);
		if (y)
			cJSON_AddItemToArray(arr, y);
	}
	free(top);
	free(ids.a);
	return rc == SQLITE_DONE ? 0 : db_err(a, err, "search");
}

/* the newest entry's id (about the number of entries: dead ends replaced
 * by wins leave gaps), or -1 + err */
static sqlite3_int64 max_id(struct archive *a, char *err)
{
	sqlite3_stmt *s = stmt(a, "SELECT max(id) FROM entries", err);
	if (!s)
		return -1;
	sqlite3_int64 n = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int64(s, 0) : -1;
	sqlite3_reset(s);
	return n < 0 ? db_err(a, err, "search") : n;
}

cJSON *archive_search(struct archive *a, const struct archive_query *q, char *err)
{
	char *az[QUERY_SCAN];
	int nWord = query_words(q->zText, az, QUERY_SCAN);
	int limit = q->limit > 0 ? q->limit : 20;
	cJSON *arr = cJSON_CreateArray();
	sqlite3_int64 maxId = max_id(a, err);
	int rc = maxId < 0 ? -1 : 0;
	if (rc == 0 && !nWord) {
		rc = search_pass(a, q, &IDX_TEXT, NULL, 0, maxId, limit, arr, err);
	} else if (rc == 0) {
		/* the ideas, signatures and task names first; the code (where
		 * common words are everywhere) only to fill what they leave */
		rc = search_pass(a, q, &IDX_TEXT, az, nWord, maxId, limit, arr, err);
		if (rc == 0 && cJSON_GetArraySize(arr) < limit)
			rc = search_pass(a, q, &IDX_CODE, az, nWord, maxId, limit, arr, err);
		while (cJSON_GetArraySize(arr) > limit)
			cJSON_DeleteItemFromArray(arr, limit);
	}
	for (int i = 0; i < nWord; i++)
		free(az[i]);
	if (rc < 0) {
		cJSON_Delete(arr);
		return NULL;
	}
	return arr;
}

cJSON *archive_get(struct archive *a, long id, char *err)
{
	sqlite3_stmt *s = stmt(a, "SELECT json, code FROM entries WHERE id = ?1", err);
	if (!s) {
		db_err(a, err, "show");
		return NULL;
	}
	sqlite3_bind_int64(s, 1, id);
	cJSON *e = NULL;
	int rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		e = cJSON_Parse((const char *)sqlite3_column_text(s, 0));
		if (!e)
			kl_err(err, "%s: entry %ld is damaged (not JSON)", a->zPath, id);
		else {
			cJSON_AddNumberToObject(e, "id", (double)id);
			cJSON_AddStringToObject(e, "code", (const char *)sqlite3_column_text(s, 1));
		}
	} else if (rc == SQLITE_DONE) {
		kl_err(err, "no archive entry %ld (kloop archive search lists them)", id);
	} else {
		db_err(a, err, "show");
	}
	sqlite3_reset(s);
	return e;
}

/* ---- stats ---- */

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return a < b ? -1 : a > b;
}

static double median(double *v, int n)
{
	if (!n)
		return NAN;
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

cJSON *archive_stats(struct archive *a, char *err)
{
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(a->db,
	                       "SELECT task, category, kind, speedup_parent FROM entries "
	                       "ORDER BY task, category",
	                       -1, &s, NULL) != SQLITE_OK) {
		db_err(a, err, "stats");
		return NULL;
	}
	cJSON *o = cJSON_CreateObject();
	cJSON *rows = cJSON_AddArrayToObject(o, "rows");
	char *task = NULL, *cat = NULL, *lastTask = NULL;
	double *v = NULL;
	size_t nAlloc = 0;
	int nv = 0, wins = 0, dead = 0, total = 0, allWins = 0, allDead = 0, tasks = 0, rc;
	for (;;) {
		rc = sqlite3_step(s);
		const char *t = rc == SQLITE_ROW ? (const char *)sqlite3_column_text(s, 0) : NULL;
		const char *c = rc == SQLITE_ROW ? (const char *)sqlite3_column_text(s, 1) : NULL;
		if (task && (!t || strcmp(t, task) || strcmp(c, cat))) {
			cJSON *r = cJSON_CreateObject();
			cJSON_AddStringToObject(r, "task", task);
			cJSON_AddStringToObject(r, "category", cat);
			cJSON_AddNumberToObject(r, "wins", wins);
			cJSON_AddNumberToObject(r, "dead_ends", dead);
			cJSON_AddNumberToObject(r, "win_rate", (double)wins / (wins + dead));
			double best = NAN;
			for (int i = 0; i < nv; i++)
				if (isnan(best) || v[i] > best)
					best = v[i];
			add_num(r, "median_gain", median(v, nv));
			add_num(r, "best_gain", best);
			cJSON_AddItemToArray(rows, r);
			free(task);
			free(cat);
			task = cat = NULL;
			nv = wins = dead = 0;
		}
		if (rc != SQLITE_ROW)
			break;
		if (!task) {
			task = xstrdup(t);
			cat = xstrdup(c);
			if (!lastTask || strcmp(lastTask, t)) {
				tasks++;
				free(lastTask);
				lastTask = xstrdup(t);
			}
		}
		total++;
		if (!strcmp((const char *)sqlite3_column_text(s, 2), "win")) {
			wins++;
			allWins++;
			if (sqlite3_column_type(s, 3) != SQLITE_NULL) {
				xgrow((void **)&v, &nAlloc, (size_t)nv + 1, sizeof *v);
				v[nv++] = sqlite3_column_double(s, 3);
			}
		} else {
			dead++;
			allDead++;
		}
	}
	sqlite3_finalize(s);
	free(v);
	free(lastTask);
	free(task);
	free(cat);
	if (rc != SQLITE_DONE) {
		cJSON_Delete(o);
		db_err(a, err, "stats");
		return NULL;
	}
	cJSON_AddNumberToObject(o, "entries", total);
	cJSON_AddNumberToObject(o, "wins", allWins);
	cJSON_AddNumberToObject(o, "dead_ends", allDead);
	cJSON_AddNumberToObject(o, "tasks", tasks);
	return o;
}

/* ---- export and import ---- */

int archive_export(struct archive *a, const char *zFile, char *err)
{
	char *tmp = xasprintf("%s.tmp.%d", zFile, (int)getpid());
	FILE *f = fopen(tmp, "w");
	if (!f) {
		kl_err(err, "%s: %s", zFile, strerror(errno));
		free(tmp);
		return -1;
	}
	sqlite3_stmt *s;
	int n = 0, rc = -1;
	if (sqlite3_prepare_v2(a->db, "SELECT json, code FROM entries ORDER BY id", -1, &s, NULL) !=
	    SQLITE_OK) {
		db_err(a, err, "export");
	} else {
		int r;
		while ((r = sqlite3_step(s)) == SQLITE_ROW) {
			cJSON *e = cJSON_Parse((const char *)sqlite3_column_text(s, 0));
			if (!e)
				continue;
			cJSON_AddStringToObject(e, "code", (const char *)sqlite3_column_text(s, 1));
			char *z = json_text(e, 0);
			fprintf(f, "%s\n", z);
			free(z);
			cJSON_Delete(e);
			n++;
		}
		sqlite3_finalize(s);
		rc = r == SQLITE_DONE ? 0 : db_err(a, err, "export");
	}
	if (fflush(f) != 0 || fsync(fileno(f)) != 0)
		rc = rc < 0 ? rc : kl_err(err, "%s: %s", zFile, strerror(errno));
	fclose(f);
	if (rc == 0 && rename(tmp, zFile) != 0)
		rc = kl_err(err, "%s: %s", zFile, strerror(errno));
	if (rc < 0)
		unlink(tmp);
	free(tmp);
	return rc < 0 ? -1 : n;
}

int archive_import(struct archive *a, const char *zFile, int *pSeen, char *err)
{
	FILE *f = fopen(zFile, "r");
	if (!f)
		return kl_err(err, "%s: %s", zFile, strerror(errno));
	/* one transaction, read as it goes: a bad line rolls everything back */
	int rc = exec(a, "BEGIN IMMEDIATE", err);
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int lineNo = 0, seen = 0, added = 0;
	while (rc == 0 && (n = getline(&line, &cap, f)) > 0) {
		lineNo++;
		size_t len = (size_t)n;
		while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			len--;
		if (!len)
			continue;
		cJSON *e = cJSON_ParseWithLength(line, len);
		const char *kind = json_str(e, "kind", "");
		const char *miss = !cJSON_IsObject(e)                                ? NULL
		                   : !*json_str(e, "ukey", "")                       ? "ukey"
		                   : strcmp(kind, "win") && strcmp(kind, "dead_end") ? "kind"
		                   : !*json_str(e, "task", "")                       ? "task"
		                   : !*json_str(e, "session", "")                    ? "session"
		                                                                     : "";
		if (!miss)
			rc = kl_err(err,
			            "%s:%d: not a JSON object (an archive export has one entry a "
			            "line)",
			            zFile, lineNo);
		else if (*miss)
			rc = kl_err(err, "%s:%d: not an archive entry: \"%s\" is missing or wrong",
			            zFile, lineNo, miss);
		else
			rc = put_entry(a, e, 0, 0, &added, err);
		seen++;
		cJSON_Delete(e);
	}
	free(line);
	if (rc == 0 && ferror(f))
		rc = kl_err(err, "%s: %s", zFile, strerror(errno));
	fclose(f);
	if (rc == 0)
		rc = exec(a, "COMMIT", err);
	else
		sqlite3_exec(a->db, "ROLLBACK", NULL, NULL, NULL);
	if (pSeen)
		*pSeen = seen;
	return rc < 0 ? -1 : added;
}

/* ---- the prompt section ---- */

static void add_cut(strbuf *sb, const char *z, size_t max)
{
	char *c = cut(z, max);
	sb_adds(sb, c);
	free(c);
}

/* one win, as the prompt shows it, in at most max bytes */
static void prompt_win(const cJSON *e, size_t max, strbuf *out)
{
	strbuf sb = STRBUF_INIT;
	double sp = cJSON_GetNumberValue(cJSON_GetObjectItem(e, "speedup_parent"));
	double sb0 = cJSON_GetNumberValue(cJSON_GetObjectItem(e, "speedup"));
	sb_addf(&sb, "- Task %s", json_str(e, "task", ""));
	if (*json_str(e, "signature", ""))
		sb_addf(&sb, " (%s)", json_str(e, "signature", ""));
	if (*json_str(e, "gpu", ""))
		sb_addf(&sb, " on %s", json_str(e, "gpu", ""));
	sb_addf(&sb, ": \"%s\" [%s], %.2fx faster than its parent", json_str(e, "idea", ""),
	        json_str(e, "category", ""), sp);
	if (sb0 > 0)
		sb_addf(&sb, " (%.2fx the baseline)", sb0);
	sb_adds(&sb, ".\n");
	if (*json_str(e, "idea_description", "")) {
		sb_adds(&sb, "  ");
		add_cut(&sb, json_str(e, "idea_description", ""), 400);
		sb_adds(&sb, "\n");
	}
	const char *diff = json_str(e, "diff", "");
	if (*diff && sb.len + 64 < max) {
		sb_adds(&sb, "  The change against its parent:\n  ```diff\n");
		size_t room = max - sb.len - 16;
		/* whole lines of the diff that fit */
		size_t n = 0;
		for (const char *p = diff; *p;) {
			const char *nl = strchr(p, '\n');
			size_t len = nl ? (size_t)(nl - p) + 1 : strlen(p);
			if (n + len + 2 > room)
				break;
			sb_adds(&sb, "  ");
			sb_add(&sb, p, len);
			n += len + 2;
			p += len;
		}
		if (sb.buf[sb.len - 1] != '\n')
			sb_adds(&sb, "\n");
		sb_adds(&sb, "  ```\n");
	}
	if (sb.len <= max)
		sb_add(out, sb.buf, sb.len);
	sb_free(&sb);
}

void archive_prompt(const struct state *st, const char *zIdea, int k, size_t maxBytes, strbuf *out)
{
	char err[KL_ERRLEN];
	if (!st->zTask || k <= 0)
		return;
	struct archive *a = live_archive(0, err);
	if (!a)
		return;
	/* the signature loads the task: once per task a process */
	static char *zSigKey, *zSig;
	char *key = xasprintf("%s\n%s\n%s", st->zTaskDir ? st->zTaskDir : "",
	                      st->zBackend ? st->zBackend : "", st->zShapes ? st->zShapes : "");
	if (!zSig || strcmp(key, zSigKey)) {
		free(zSigKey);
		free(zSig);
		zSigKey = key;
		zSig = state_signature(st);
	} else {
		free(key);
	}
	const char *sig = zSig;
	char *sid = archive_session_id(st, NULL);
	/* the task, its signature (operations, tensor names and dtypes: the
	 * sizes are numbers, which the query leaves out), the idea */
	char *words = xasprintf("%s %s %s", st->zTask, sig, zIdea ? zIdea : "");
	struct archive_query q = {.zText = words, .zKind = "win", .limit = k};
	if (st->tsStarted > 0)
		q.zNotSession = sid;
	cJSON *wins = archive_search(a, &q, err);
	struct archive_query qd = {.zText = zIdea && *zIdea ? zIdea : NULL,
	                           .zTask = st->zTask,
	                           .zKind = "dead_end",
	                           .limit = k};
	cJSON *dead = archive_search(a, &qd, err);
	size_t start = out->len;
	int nw = cJSON_GetArraySize(wins), nd = cJSON_GetArraySize(dead);
	int added = 0;
	if (nw) {
		static const char head[] =
		    "Wins archived from earlier sessions (other tasks or sessions; adapt the idea, "
		    "do not copy blindly):\n";
		size_t room = maxBytes * 3 / 4,
		       each = room > sizeof head ? (room - sizeof head) / (size_t)nw : 0;
		strbuf sb = STRBUF_INIT;
		const cJSON *w;
		cJSON_ArrayForEach(w, wins)
		{
			cJSON *e = archive_get(
			    a, (long)cJSON_GetNumberValue(cJSON_GetObjectItem(w, "id")), err);
			size_t before = sb.len;
			if (e)
				prompt_win(e, each, &sb);
			added += sb.len > before;
			cJSON_Delete(e);
		}
		if (added) {
			sb_adds(out, head);
			sb_add(out, sb.buf, sb.len);
		}
		sb_free(&sb);
	}
	if (nd) {
		strbuf sb = STRBUF_INIT;
		int lines = 0;
		sb_addf(&sb,
		        "%sIdeas that already failed on this task (do not propose them again "
		        "unless you fix why):\n",
		        added ? "\n" : "");
		const cJSON *d;
		cJSON_ArrayForEach(d, dead)
		{
			cJSON *e = archive_get(
			    a, (long)cJSON_GetNumberValue(cJSON_GetObjectItem(d, "id")), err);
			if (!e)
				continue;
			strbuf line = STRBUF_INIT;
			sb_addf(&line, "- \"%s\" [%s]: %s", json_str(e, "idea", ""),
			        json_str(e, "category", ""), json_str(e, "failure", ""));
			if (*json_str(e, "reason", "")) {
				sb_adds(&line, " (");
				add_cut(&line, json_str(e, "reason", ""), 160);
				sb_adds(&line, ")");
			}
			sb_adds(&line, "\n");
			for (char *p = line.buf + 2; *p && p < line.buf + line.len - 1; p++)
				if (*p == '\n' || *p == '\r')
					*p = ' ';
			if (out->len - start + sb.len + line.len <= maxBytes) {
				sb_add(&sb, line.buf, line.len);
				lines++;
			}
			sb_free(&line);
			cJSON_Delete(e);
		}
		if (lines && out->len - start + sb.len <= maxBytes)
			sb_add(out, sb.buf, sb.len);
		sb_free(&sb);
	}
	if (out->len - start > maxBytes) { /* cannot happen; keep the bound anyway */
		out->len = start + maxBytes;
		out->buf[out->len] = 0;
	}
	cJSON_Delete(wins);
	cJSON_Delete(dead);
	free(words);
	free(sid);
}

/* ---- an entry for people, and into a session ---- */

/* "label  value" on one line (newlines in the value made spaces) */
static void field(strbuf *sb, const char *zLabel, const char *z)
{
	if (!z || !*z)
		return;
	sb_addf(sb, "%-16s ", zLabel);
	size_t at = sb->len;
	add_cut(sb, z, 400);
	for (char *p = sb->buf + at; *p; p++)
		if (*p == '\n' || *p == '\r' || *p == '\t')
			*p = ' ';
	sb_adds(sb, "\n");
}

void archive_entry_text(const cJSON *e, strbuf *sb)
{
	char buf[256];
	int win = !strcmp(json_str(e, "kind", ""), "win");
	sb_addf(sb, "archive entry %.0f: %s\n", json_num(e, "id", -1),
	        win ? "a win" : "a dead end");
	field(sb, "task", json_str(e, "task", ""));
	field(sb, "signature", json_str(e, "signature", ""));
	field(sb, "device", json_str(e, "gpu", ""));
	field(sb, "idea", json_str(e, "idea", ""));
	field(sb, "category", json_str(e, "category", ""));
	field(sb, "description", json_str(e, "idea_description", ""));
	if (!win) {
		snprintf(buf, sizeof buf, "%s after %.0f candidate%s", json_str(e, "failure", ""),
		         json_num(e, "tried", -1), json_num(e, "tried", -1) == 1 ? "" : "s");
		field(sb, "failure", buf);
		field(sb, "reason", json_str(e, "reason", ""));
	}
	if (json_num(e, "time_ms", -1) >= 0) {
		snprintf(buf, sizeof buf, "%.4g ms (p10 %.4g, p90 %.4g)",
		         json_num(e, "time_ms", -1), json_num(e, "p10_ms", -1),
		         json_num(e, "p90_ms", -1));
		field(sb, "time", buf);
	}
	if (json_num(e, "parent_time_ms", -1) >= 0) {
		snprintf(buf, sizeof buf, "%.4g ms (p10 %.4g, p90 %.4g)",
		         json_num(e, "parent_time_ms", -1), json_num(e, "parent_p10_ms", -1),
		         json_num(e, "parent_p90_ms", -1));
		field(sb, "parent's time", buf);
	}
	if (json_num(e, "speedup_parent", -1) >= 0) {
		snprintf(buf, sizeof buf, "%.3gx over the parent",
		         json_num(e, "speedup_parent", -1));
		field(sb, "gain", buf);
	}
	if (json_num(e, "speedup", -1) >= 0) {
		snprintf(buf, sizeof buf, "%.3gx over %s", json_num(e, "speedup", -1),
		         *json_str(e, "baseline", "") ? json_str(e, "baseline", "")
		                                      : "the baseline");
		field(sb, "speedup", buf);
	}
	if (json_num(e, "speedup_compile", -1) >= 0) {
		snprintf(buf, sizeof buf, "%.3gx over torch.compile",
		         json_num(e, "speedup_compile", -1));
		field(sb, "", buf);
	}
	field(sb, "model", json_str(e, "model", ""));
	snprintf(buf, sizeof buf, "%s, event %.0f, candidate %.0f (%s)", json_str(e, "session", ""),
	         json_num(e, "event", -1), json_num(e, "candidate", -1), json_str(e, "origin", ""));
	field(sb, "from", buf);
	field(sb, "journal", json_str(e, "session_path", ""));
	const cJSON *x;
	strbuf lin = STRBUF_INIT;
	cJSON_ArrayForEach(x, cJSON_GetObjectItem(e, "lineage"))
	{
		sb_addf(&lin, "%s%.0f %s", lin.len ? " -> " : "", json_num(x, "id", -1),
		        json_str(x, "name", ""));
		if (*json_str(x, "idea", ""))
			sb_addf(&lin, " (%s)", json_str(x, "idea", ""));
	}
	field(sb, "lineage", lin.buf);
	sb_free(&lin);
	cJSON_ArrayForEach(x, cJSON_GetObjectItem(e, "resources"))
	{
		snprintf(buf, sizeof buf, "%s: %.0f registers, %.0f B shared, %.0f B spilled",
		         json_str(x, "kernel", ""), json_num(x, "registers", -1),
		         json_num(x, "shared_bytes", -1), json_num(x, "spill_stores", -1));
		field(sb, "resources", buf);
	}
	if (*json_str(e, "diff", ""))
		sb_addf(sb, "\n%s", json_str(e, "diff", ""));
}

int archive_idea_event(struct session *s, const cJSON *e, char *err)
{
	const char *title = json_str(e, "idea", "");
	strbuf d = STRBUF_INIT;
	sb_addf(&d, "%s", json_str(e, "idea_description", ""));
	if (!strcmp(json_str(e, "kind", ""), "win"))
		sb_addf(&d,
		        "%s(From the archive, entry %.0f: %.2fx over its parent on task %s, %s.)",
		        d.len ? "\n\n" : "", json_num(e, "id", -1),
		        json_num(e, "speedup_parent", -1), json_str(e, "task", ""),
		        *json_str(e, "gpu", "") ? json_str(e, "gpu", "") : "an unknown device");
	else
		sb_addf(&d, "%s(From the archive, entry %.0f: a dead end on task %s, %s.)",
		        d.len ? "\n\n" : "", json_num(e, "id", -1), json_str(e, "task", ""),
		        json_str(e, "failure", ""));
	struct ev_idea ei = {.zTitle = *title ? title : "an idea from the archive",
	                     .zDescription = d.buf ? d.buf : "",
	                     .zCategory = *json_str(e, "category", "") ? json_str(e, "category", "")
	                                                               : "other",
	                     .zOrigin = "archive",
	                     .archiveEntry = json_int(e, "id", 0)};
	int id = ev_idea_proposed(s, &ei, err);
	sb_free(&d);
	return id;
}
