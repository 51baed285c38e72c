/*
 * archive_search.c - searching the archive: the query's words weighted by
 * their rarity, ranked through the FTS5 indexes (kl_rank, archive_rank.c),
 * and an entry by id.
 */
#include "archive_priv.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define QUERY_SCAN 32       /* words of a query looked at (their frequency) */
#define RANK_WINDOW 1000    /* matches ranked by a search pass, the newest */
#define DF_PROBE 256        /* a word in fewer entries is counted, else estimated */
#define DF_SEGMENTS 4       /* stretches of the ids a frequency is estimated from */
#define DF_DROP 0.5         /* a word in more than this share of the entries is left out */
#define DF_MIN_ENTRIES 500  /* ... in an archive of at least this many */
#define TASK_POSTINGS 30000 /* postings a search within a task reads at most */

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
		while (*p && !archive_ident((unsigned char)*p) && !((unsigned char)*p & 0x80))
			p++;
		const char *b = p;
		while (*p && (archive_ident((unsigned char)*p) || ((unsigned char)*p & 0x80)))
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
	sqlite3_stmt *s = archive_stmt(a, sql, err);
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
	return rc == SQLITE_DONE ? n : archive_db_err(a, err, "search");
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
	struct archive_df_memo *memo = NULL;
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
		archive_add_copy(o, keys[i], e, keys[i]);
	static const char *const nums[] = {"candidate", "speedup_parent", "speedup", "time_ms",
	                                   "event"};
	for (size_t i = 0; i < sizeof nums / sizeof *nums; i++)
		archive_add_copy(o, nums[i], e, nums[i]);
	if (hasRank)
		cJSON_AddNumberToObject(o, "rank", rank);
	cJSON_Delete(e);
	return o;
}

static int cmp_id(const void *x, const void *y)
{
	sqlite3_int64 a = *(const sqlite3_int64 *)x, b = *(const sqlite3_int64 *)y;
	return a < b ? -1 : a > b;
}

/* the entries of task zTask (of kind zKind, unless NULL) into *p; 0 or -1
 * + err */
static int id_set(struct archive *a, const char *zTask, const char *zKind, struct archive_idset *p,
                  char *err)
{
	sqlite3_stmt *s =
	    archive_stmt(a,
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
		return archive_db_err(a, err, "search");
	if (p->n) /* qsort must not be given NULL, even for nothing */
		qsort(p->a, (size_t)p->n, sizeof *p->a, cmp_id);
	return 0;
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
	if (n > ARCHIVE_QUERY_WORDS)
		n = ARCHIVE_QUERY_WORDS;
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
		if (!archive_ident((unsigned char)*p) && !((unsigned char)*p & 0x80))
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
 * holds is left out, then the rarest ARCHIVE_QUERY_WORDS are kept, and in an
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
	double idf[ARCHIVE_QUERY_WORDS];
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
	struct archive_idset ids = {0};
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
	sqlite3_stmt *s = archive_stmt(a, sql, err), *pGet = NULL;
	free(sql);
	if (!s || !(pGet = archive_stmt(a, "SELECT json FROM entries WHERE id = ?1", err))) {
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
	return rc == SQLITE_DONE ? 0 : archive_db_err(a, err, "search");
}

/* the newest entry's id (about the number of entries: dead ends replaced
 * by wins leave gaps), or -1 + err */
static sqlite3_int64 max_id(struct archive *a, char *err)
{
	sqlite3_stmt *s = archive_stmt(a, "SELECT max(id) FROM entries", err);
	if (!s)
		return -1;
	sqlite3_int64 n = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int64(s, 0) : -1;
	sqlite3_reset(s);
	return n < 0 ? archive_db_err(a, err, "search") : n;
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
	sqlite3_stmt *s = archive_stmt(a, "SELECT json, code FROM entries WHERE id = ?1", err);
	if (!s) {
		archive_db_err(a, err, "show");
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
		archive_db_err(a, err, "show");
	}
	sqlite3_reset(s);
	return e;
}
