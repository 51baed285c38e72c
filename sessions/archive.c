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

#include "journal.h"
#include "linediff.h"
#include "result.h"
#include "session.h"
#include "sha256.h"
#include "task.h"

#define DIFF_MAX_EDITS 4000 /* lines; a larger change is summarised */
#define REASON_MAX 600
#define LINEAGE_MAX 64
#define QUERY_WORDS 12
#define RANK_WINDOW 2000 /* matches ranked by a search, the newest */

struct archive {
	sqlite3 *db;
	char *zPath;
	sqlite3_stmt *aIns[2]; /* the insert statements (put_entry), prepared once */
};

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
    "CREATE INDEX IF NOT EXISTS entries_task ON entries(task, kind);\n"
    "CREATE INDEX IF NOT EXISTS entries_idea ON entries(idea_key);\n"
    "CREATE VIRTUAL TABLE IF NOT EXISTS entries_fts USING fts5(idea, signature, task, code,\n"
    "  content='entries', content_rowid='id', tokenize='porter unicode61');\n"
    "CREATE TRIGGER IF NOT EXISTS entries_ai AFTER INSERT ON entries BEGIN\n"
    "  INSERT INTO entries_fts(rowid, idea, signature, task, code)\n"
    "  VALUES (new.id, new.idea, new.signature, new.task, new.code);\n"
    "END;\n"
    "CREATE TRIGGER IF NOT EXISTS entries_ad AFTER DELETE ON entries BEGIN\n"
    "  INSERT INTO entries_fts(entries_fts, rowid, idea, signature, task, code)\n"
    "  VALUES ('delete', old.id, old.idea, old.signature, old.task, old.code);\n"
    "END;\n"
    "CREATE TRIGGER IF NOT EXISTS entries_au AFTER UPDATE ON entries BEGIN\n"
    "  INSERT INTO entries_fts(entries_fts, rowid, idea, signature, task, code)\n"
    "  VALUES ('delete', old.id, old.idea, old.signature, old.task, old.code);\n"
    "  INSERT INTO entries_fts(rowid, idea, signature, task, code)\n"
    "  VALUES (new.id, new.idea, new.signature, new.task, new.code);\n"
    "END;\n";

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

/* once per database: ORDER BY rank is bm25 with the idea weighted 4, the
 * signature and the task 2, the code 1 */
static int set_rank(struct archive *a, char *err)
{
	sqlite3_stmt *s;
	int v = 0;
	if (sqlite3_prepare_v2(a->db, "PRAGMA user_version", -1, &s, NULL) == SQLITE_OK) {
		if (sqlite3_step(s) == SQLITE_ROW)
			v = sqlite3_column_int(s, 0);
		sqlite3_finalize(s);
	}
	if (v >= 1)
		return 0;
	return exec(a,
	            "BEGIN IMMEDIATE; INSERT INTO entries_fts(entries_fts, rank) VALUES "
	            "('rank', 'bm25(4.0, 2.0, 2.0, 1.0)'); PRAGMA user_version = 1; COMMIT;",
	            err);
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
	if (exec(a, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;", err) < 0 ||
	    exec(a, SCHEMA, err) < 0 || set_rank(a, err) < 0) {
		archive_close(a);
		return NULL;
	}
	return a;
}

void archive_close(struct archive *a)
{
	if (!a)
		return;
	sqlite3_finalize(a->aIns[0]);
	sqlite3_finalize(a->aIns[1]);
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
	if (c->status != STATUS_CORRECT || !(m > 0))
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

static const char *jstr(const cJSON *o, const char *k)
{
	const char *z = cJSON_GetStringValue(cJSON_GetObjectItem(o, k));
	return z ? z : "";
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
	char *js = cJSON_PrintUnformatted(rest);
	cJSON_Delete(rest);
	char *idea = xasprintf("%s\n%s\n%s", jstr(e, "idea"), jstr(e, "idea_description"),
	                       jstr(e, "category"));
	const cJSON *iid = cJSON_GetObjectItem(e, "idea_id");
	char *ikey =
	    cJSON_IsNumber(iid) ? xasprintf("%s:%d", jstr(e, "session"), iid->valueint) : NULL;
	const char *kind = jstr(e, "kind");
	sqlite3_bind_text(s, 1, jstr(e, "ukey"), -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, kind, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 3, jstr(e, "task"), -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 4, jstr(e, "signature"), -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 5, jstr(e, "backend"), -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 6, jstr(e, "gpu"), -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 7, idea, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 8, jstr(e, "category"), -1, SQLITE_STATIC);
	if (!strcmp(kind, "dead_end"))
		sqlite3_bind_text(s, 9, jstr(e, "failure"), -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 10, jstr(e, "code"), -1, SQLITE_STATIC);
	const cJSON *sp = cJSON_GetObjectItem(e, "speedup_parent");
	if (cJSON_IsNumber(sp))
		sqlite3_bind_double(s, 11, sp->valuedouble);
	sp = cJSON_GetObjectItem(e, "speedup");
	if (cJSON_IsNumber(sp))
		sqlite3_bind_double(s, 12, sp->valuedouble);
	sqlite3_bind_text(s, 13, jstr(e, "session"), -1, SQLITE_STATIC);
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

/* the FTS5 query for words: each word quoted, any of them (without
 * numbers, one-letter words, stop words and repeats; at most QUERY_WORDS) */
static char *fts_query(const char *z)
{
	strbuf q = STRBUF_INIT;
	int n = 0;
	for (const char *p = z ? z : ""; *p && n < QUERY_WORDS;) {
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
		for (const char *h = q.buf; h && (h = strcasestr(h, word)); h++)
			seen |= h == q.buf || h[-1] == ' ';
		if (!seen) {
			sb_addf(&q, "%s%s", n ? " OR " : "", word);
			n++;
		}
		free(word);
	}
	return q.buf ? sb_detach(&q) : NULL;
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

/*
 * One pass of a search: the ids and ranks of at most limit entries matching
 * zMatch (an FTS5 query, or NULL for all) and q's filters, added to arr as
 * summaries unless already there.  Only the filters given are in the SQL,
 * so that the index on the task serves; the bodies are read for the few
 * results only.
 */
static int search_pass(struct archive *a, const struct archive_query *q, const char *zMatch,
                       int limit, cJSON *arr, char *err)
{
	strbuf w = STRBUF_INIT;
	sb_adds(&w, zMatch ? "entries_fts MATCH ?1 AND f.rowid >= ?8" : "?1 IS NULL AND ?8 = 0");
	if (q->zTask)
		sb_adds(&w, " AND e.task = ?2");
	if (q->zGpu)
		sb_adds(&w, " AND instr(lower(e.gpu), lower(?3)) > 0");
	if (q->zKind)
		sb_adds(&w, " AND e.kind = ?4");
	if (q->zNotSession)
		sb_adds(&w, " AND e.session <> ?5");
	if (q->zNotTask)
		sb_adds(&w, " AND e.task <> ?6");
	int filtered = q->zTask || q->zGpu || q->zKind || q->zNotSession || q->zNotTask;
	char *sql =
	    zMatch && !filtered
	        ? xasprintf("SELECT rowid, rank FROM entries_fts WHERE entries_fts MATCH ?1 "
	                    "AND rowid >= ?8 ORDER BY rank LIMIT ?7")
	    : zMatch ? xasprintf("SELECT e.id, f.rank FROM entries_fts f JOIN entries e ON e.id = "
	                         "f.rowid WHERE %s ORDER BY f.rank LIMIT ?7",
	                         w.buf)
	             : xasprintf("SELECT e.id, NULL FROM entries e WHERE %s ORDER BY e.kind = "
	                         "'win' DESC, e.speedup_parent DESC, e.id DESC LIMIT ?7",
	                         w.buf);
	sb_free(&w);
	/* bm25 is computed for every row it orders: only the newest RANK_WINDOW
	 * matches are ranked, so that a search stays bounded at any size */
	sqlite3_int64 cut = 0;
	sqlite3_stmt *s = NULL, *pGet = NULL;
	if (zMatch) {
		if (sqlite3_prepare_v2(a->db,
		                       "SELECT rowid FROM entries_fts WHERE entries_fts MATCH ?1 "
		                       "ORDER BY rowid DESC LIMIT 1 OFFSET ?2",
		                       -1, &s, NULL) != SQLITE_OK) {
			free(sql);
			return db_err(a, err, "search");
		}
		sqlite3_bind_text(s, 1, zMatch, -1, SQLITE_STATIC);
		sqlite3_bind_int(s, 2, RANK_WINDOW - 1);
		if (sqlite3_step(s) == SQLITE_ROW)
			cut = sqlite3_column_int64(s, 0);
		sqlite3_finalize(s);
		s = NULL;
	}
	int rc = sqlite3_prepare_v2(a->db, sql, -1, &s, NULL);
	free(sql);
	if (rc != SQLITE_OK || sqlite3_prepare_v2(a->db, "SELECT json FROM entries WHERE id = ?1",
	                                          -1, &pGet, NULL) != SQLITE_OK) {
		sqlite3_finalize(s);
		return db_err(a, err, "search");
	}
	if (zMatch)
		sqlite3_bind_text(s, 1, zMatch, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 8, cut);
	const char *bind[] = {q->zTask, q->zGpu, q->zKind, q->zNotSession, q->zNotTask};
	for (int i = 0; i < 5; i++)
		if (bind[i])
			sqlite3_bind_text(s, i + 2, bind[i], -1, SQLITE_STATIC);
	sqlite3_bind_int(s, 7, limit);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		sqlite3_int64 id = sqlite3_column_int64(s, 0);
		int dup = 0;
		const cJSON *x;
		cJSON_ArrayForEach(x, arr) dup |=
		    cJSON_GetNumberValue(cJSON_GetObjectItem(x, "id")) == (double)id;
		cJSON *o = dup ? NULL
		               : summary(pGet, id, sqlite3_column_type(s, 1) != SQLITE_NULL,
		                         sqlite3_column_double(s, 1));
		if (o)
			cJSON_AddItemToArray(arr, o);
	}
	sqlite3_finalize(s);
	sqlite3_finalize(pGet);
	return rc == SQLITE_DONE ? 0 : db_err(a, err, "search");
}

cJSON *archive_search(struct archive *a, const struct archive_query *q, char *err)
{
	char *fq = fts_query(q->zText);
	int limit = q->limit > 0 ? q->limit : 20;
	cJSON *arr = cJSON_CreateArray();
	int rc;
	if (!fq) {
		rc = search_pass(a, q, NULL, limit, arr, err);
	} else {
		/* the ideas, signatures and task names first; the code (where
		 * common words are everywhere) only to fill what they leave */
		/* the task as a phrase too: the index narrows to it before ranking */
		char *tp = q->zTask ? xstrdup(q->zTask) : NULL, *tq = NULL;
		int words = 0;
		for (char *p = tp; p && *p; p++) {
			if (!ident((unsigned char)*p) && !((unsigned char)*p & 0x80))
				*p = ' ';
			words |= *p != ' ';
		}
		if (words)
			tq = xasprintf(" AND task: \"%s\"", tp);
		char *m = xasprintf("{idea signature task}: (%s)%s", fq, tq ? tq : "");
		rc = search_pass(a, q, m, limit, arr, err);
		free(m);
		int n = cJSON_GetArraySize(arr);
		if (rc == 0 && n < limit) {
			m = xasprintf("code: (%s)%s", fq, tq ? tq : "");
			rc = search_pass(a, q, m, limit, arr, err);
			free(m);
			while (cJSON_GetArraySize(arr) > limit)
				cJSON_DeleteItemFromArray(arr, limit);
		}
		free(tp);
		free(tq);
	}
	free(fq);
	if (rc < 0) {
		cJSON_Delete(arr);
		return NULL;
	}
	return arr;
}

cJSON *archive_get(struct archive *a, long id, char *err)
{
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(a->db, "SELECT json, code FROM entries WHERE id = ?1", -1, &s,
	                       NULL) != SQLITE_OK) {
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
	sqlite3_finalize(s);
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
			char *z = cJSON_PrintUnformatted(e);
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
		const char *kind = jstr(e, "kind");
		const char *miss = !cJSON_IsObject(e)                                ? NULL
		                   : !*jstr(e, "ukey")                               ? "ukey"
		                   : strcmp(kind, "win") && strcmp(kind, "dead_end") ? "kind"
		                   : !*jstr(e, "task")                               ? "task"
		                   : !*jstr(e, "session")                            ? "session"
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
	sb_addf(&sb, "- Task %s", jstr(e, "task"));
	if (*jstr(e, "signature"))
		sb_addf(&sb, " (%s)", jstr(e, "signature"));
	if (*jstr(e, "gpu"))
		sb_addf(&sb, " on %s", jstr(e, "gpu"));
	sb_addf(&sb, ": \"%s\" [%s], %.2fx faster than its parent", jstr(e, "idea"),
	        jstr(e, "category"), sp);
	if (sb0 > 0)
		sb_addf(&sb, " (%.2fx the baseline)", sb0);
	sb_adds(&sb, ".\n");
	if (*jstr(e, "idea_description")) {
		sb_adds(&sb, "  ");
		add_cut(&sb, jstr(e, "idea_description"), 400);
		sb_adds(&sb, "\n");
	}
	const char *diff = jstr(e, "diff");
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
	char *sig = state_signature(st);
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
			sb_addf(&line, "- \"%s\" [%s]: %s", jstr(e, "idea"), jstr(e, "category"),
			        jstr(e, "failure"));
			if (*jstr(e, "reason")) {
				sb_adds(&line, " (");
				add_cut(&line, jstr(e, "reason"), 160);
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
	free(sig);
}

/* ---- an entry for people, and into a session ---- */

static double jnum(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItem(o, k);
	return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

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
	int win = !strcmp(jstr(e, "kind"), "win");
	sb_addf(sb, "archive entry %.0f: %s\n", jnum(e, "id"), win ? "a win" : "a dead end");
	field(sb, "task", jstr(e, "task"));
	field(sb, "signature", jstr(e, "signature"));
	field(sb, "device", jstr(e, "gpu"));
	field(sb, "idea", jstr(e, "idea"));
	field(sb, "category", jstr(e, "category"));
	field(sb, "description", jstr(e, "idea_description"));
	if (!win) {
		snprintf(buf, sizeof buf, "%s after %.0f candidate%s", jstr(e, "failure"),
		         jnum(e, "tried"), jnum(e, "tried") == 1 ? "" : "s");
		field(sb, "failure", buf);
		field(sb, "reason", jstr(e, "reason"));
	}
	if (jnum(e, "time_ms") >= 0) {
		snprintf(buf, sizeof buf, "%.4g ms (p10 %.4g, p90 %.4g)", jnum(e, "time_ms"),
		         jnum(e, "p10_ms"), jnum(e, "p90_ms"));
		field(sb, "time", buf);
	}
	if (jnum(e, "parent_time_ms") >= 0) {
		snprintf(buf, sizeof buf, "%.4g ms (p10 %.4g, p90 %.4g)", jnum(e, "parent_time_ms"),
		         jnum(e, "parent_p10_ms"), jnum(e, "parent_p90_ms"));
		field(sb, "parent's time", buf);
	}
	if (jnum(e, "speedup_parent") >= 0) {
		snprintf(buf, sizeof buf, "%.3gx over the parent", jnum(e, "speedup_parent"));
		field(sb, "gain", buf);
	}
	if (jnum(e, "speedup") >= 0) {
		snprintf(buf, sizeof buf, "%.3gx over %s", jnum(e, "speedup"),
		         *jstr(e, "baseline") ? jstr(e, "baseline") : "the baseline");
		field(sb, "speedup", buf);
	}
	if (jnum(e, "speedup_compile") >= 0) {
		snprintf(buf, sizeof buf, "%.3gx over torch.compile", jnum(e, "speedup_compile"));
		field(sb, "", buf);
	}
	field(sb, "model", jstr(e, "model"));
	snprintf(buf, sizeof buf, "%s, event %.0f, candidate %.0f (%s)", jstr(e, "session"),
	         jnum(e, "event"), jnum(e, "candidate"), jstr(e, "origin"));
	field(sb, "from", buf);
	field(sb, "journal", jstr(e, "session_path"));
	const cJSON *x;
	strbuf lin = STRBUF_INIT;
	cJSON_ArrayForEach(x, cJSON_GetObjectItem(e, "lineage"))
	{
		sb_addf(&lin, "%s%.0f %s", lin.len ? " -> " : "", jnum(x, "id"), jstr(x, "name"));
		if (*jstr(x, "idea"))
			sb_addf(&lin, " (%s)", jstr(x, "idea"));
	}
	field(sb, "lineage", lin.buf);
	sb_free(&lin);
	cJSON_ArrayForEach(x, cJSON_GetObjectItem(e, "resources"))
	{
		snprintf(buf, sizeof buf, "%s: %.0f registers, %.0f B shared, %.0f B spilled",
		         jstr(x, "kernel"), jnum(x, "registers"), jnum(x, "shared_bytes"),
		         jnum(x, "spill_stores"));
		field(sb, "resources", buf);
	}
	if (*jstr(e, "diff"))
		sb_addf(sb, "\n%s", jstr(e, "diff"));
}

int archive_idea_event(struct session *s, const cJSON *e, char *err)
{
	int id = state_next_idea_id(&s->st);
	const char *title = jstr(e, "idea");
	cJSON *ev = cJSON_CreateObject();
	cJSON_AddStringToObject(ev, "type", "idea_proposed");
	cJSON_AddNumberToObject(ev, "id", id);
	cJSON_AddStringToObject(ev, "title", *title ? title : "an idea from the archive");
	strbuf d = STRBUF_INIT;
	sb_addf(&d, "%s", jstr(e, "idea_description"));
	if (!strcmp(jstr(e, "kind"), "win"))
		sb_addf(&d,
		        "%s(From the archive, entry %.0f: %.2fx over its parent on task %s, %s.)",
		        d.len ? "\n\n" : "", jnum(e, "id"), jnum(e, "speedup_parent"),
		        jstr(e, "task"), *jstr(e, "gpu") ? jstr(e, "gpu") : "an unknown device");
	else
		sb_addf(&d, "%s(From the archive, entry %.0f: a dead end on task %s, %s.)",
		        d.len ? "\n\n" : "", jnum(e, "id"), jstr(e, "task"), jstr(e, "failure"));
	cJSON_AddStringToObject(ev, "description", d.buf);
	sb_free(&d);
	cJSON_AddStringToObject(ev, "category",
	                        *jstr(e, "category") ? jstr(e, "category") : "other");
	cJSON_AddStringToObject(ev, "origin", "archive");
	cJSON_AddNumberToObject(ev, "archive_entry", jnum(e, "id"));
	return session_emit(s, ev, err) < 0 ? -1 : id;
}
