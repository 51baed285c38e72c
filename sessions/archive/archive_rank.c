/*
 * archive_rank.c - the SQL functions the archive's search ranks and filters
 * with, registered on each connection as it opens: kl_rank (a row's score)
 * and kl_in (an id in a task's set).
 */
#include "archive_priv.h"

#include <string.h>

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
	double idf[ARCHIVE_QUERY_WORDS], f[ARCHIVE_QUERY_WORDS] = {0};
	int nIdf = 0, nInst = 0;
	if (nVal > 0 && sqlite3_value_type(apVal[0]) == SQLITE_BLOB) {
		nIdf = sqlite3_value_bytes(apVal[0]) / (int)sizeof(double);
		if (nIdf > ARCHIVE_QUERY_WORDS)
			nIdf = ARCHIVE_QUERY_WORDS;
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

/* kl_in(set, id): 1 when id is in the idset bound as set */
static void kl_in(sqlite3_context *ctx, int nArg, sqlite3_value **apArg)
{
	(void)nArg;
	const struct archive_idset *p = sqlite3_value_pointer(apArg[0], "kl_idset");
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

/* kl_rank and kl_in on a's connection (once per connection) */
void archive_rank_register(struct archive *a)
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
