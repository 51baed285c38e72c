/*
 * test_archive_search.c - the archive's search in an archive of a few
 * thousand entries (imported, as `kloop archive import` does): words in
 * most entries do not bury the entry that holds the rare ones, however old
 * it is; --task and --kind keep to theirs; a word only in the code is
 * found; and an archive of the first schema (one FTS5 index over ideas and
 * code) is converted when opened, its entries searchable.
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "archive.h"
#include "check.h"

static char dir[] = "/tmp/kloop-test-archive-search.XXXXXX";

#define N_ENTRIES 2400

static const char *js(const cJSON *o, const char *k)
{
	const char *z = cJSON_GetStringValue(cJSON_GetObjectItem(o, k));
	return z ? z : "";
}

/* one entry as `kloop archive export` writes it */
static void entry(FILE *f, int i, const char *zKind, const char *zTask, const char *zIdea,
                  const char *zDesc, const char *zCode)
{
	cJSON *e = cJSON_CreateObject();
	char key[32];
	snprintf(key, sizeof key, "test:%d", i);
	cJSON_AddStringToObject(e, "ukey", key);
	cJSON_AddStringToObject(e, "kind", zKind);
	cJSON_AddStringToObject(e, "task", zTask);
	char sig[96];
	snprintf(sig, sizeof sig, "ops: %s; in x f32 [%d, 4096]", zTask, 64 + i % 7);
	cJSON_AddStringToObject(e, "signature", sig);
	cJSON_AddStringToObject(e, "gpu", "TestGPU 9000");
	cJSON_AddStringToObject(e, "idea", zIdea);
	cJSON_AddStringToObject(e, "idea_description", zDesc);
	cJSON_AddStringToObject(e, "category", "memory access");
	cJSON_AddStringToObject(e, "code", zCode);
	cJSON_AddStringToObject(e, "session", i < 10 ? "old-session" : "new-session");
	cJSON_AddNumberToObject(e, "speedup_parent", 1.5);
	if (!strcmp(zKind, "dead_end"))
		cJSON_AddStringToObject(e, "failure", "slower");
	char *z = cJSON_PrintUnformatted(e);
	fprintf(f, "%s\n", z);
	free(z);
	cJSON_Delete(e);
}

static cJSON *search(struct archive *a, const char *zText, const char *zTask, const char *zKind,
                     int limit)
{
	char err[KL_ERRLEN];
	struct archive_query q = {.zText = zText, .zTask = zTask, .zKind = zKind, .limit = limit};
	cJSON *r = archive_search(a, &q, err);
	if (!r)
		printf("# search: %s\n", err);
	return r;
}

static void test_rare_words_first(const char *zDb)
{
	char err[KL_ERRLEN];
	char *file = xasprintf("%s/entries.jsonl", dir);
	FILE *f = fopen(file, "w");
	/* the oldest entries hold the rare words; every entry "f32" (its
	 * signature), most "tile" and "loop", and 45% "hgemm": more newer
	 * entries match the query than a search ranks by recency */
	entry(f, 0, "win", "hgemm", "Tensor cores through wmma fragments",
	      "tile the loop into wmma fragments of 16x16", "__global__ void k() { /* mma */ }");
	entry(f, 1, "dead_end", "hgemm", "wmma with a swizzled tile",
	      "the fragments loaded from a swizzled tile", "__global__ void k() { }");
	entry(f, 2, "win", "softmax", "Registers for the row",
	      "keep the row in registers across the loop",
	      "__global__ void k() { float xylophone_reg; }");
	for (int i = 3; i < N_ENTRIES; i++) {
		char idea[96], desc[128];
		snprintf(idea, sizeof idea, "Tile the loop, variant %d", i);
		snprintf(desc, sizeof desc, "%s the loop over shared memory%s",
		         i % 10 ? "tile" : "unroll", i % 20 == 7 ? " with register fragments" : "");
		entry(f, i, i % 4 ? "win" : "dead_end", i % 20 < 9 ? "hgemm" : "softmax", idea,
		      desc, "__global__ void k() { for (;;) {} }");
	}
	fclose(f);
	struct archive *a = archive_open(zDb, 1, 1000, err);
	int seen = 0, n = a ? archive_import(a, file, &seen, err) : -1;
	CHECK(n == N_ENTRIES, "%d entries imported (%d: %s)", N_ENTRIES, n, n < 0 ? err : "");

	/* words of a prompt: the signature's and the idea's */
	cJSON *r = search(a, "ops: hgemm; in x f32 [64, 4096] tile the loop with wmma fragments",
	                  NULL, NULL, 5);
	CHECK(
	    cJSON_GetArraySize(r) == 5 &&
	        !strcmp(js(cJSON_GetArrayItem(r, 0), "idea"),
	                "Tensor cores through wmma fragments") &&
	        !strcmp(js(cJSON_GetArrayItem(r, 1), "idea"), "wmma with a swizzled tile"),
	    "the oldest entries, holding the rare words, first: words in most entries (f32, tile, "
	    "loop) do not bury them");
	int ordered = 1;
	for (int i = 1; i < cJSON_GetArraySize(r); i++)
		ordered &=
		    cJSON_GetNumberValue(
		        cJSON_GetObjectItem(cJSON_GetArrayItem(r, i - 1), "rank")) <=
		    cJSON_GetNumberValue(cJSON_GetObjectItem(cJSON_GetArrayItem(r, i), "rank"));
	CHECK(ordered, "the results come best rank first");
	int fragments = 0;
	for (int i = 2; i < cJSON_GetArraySize(r); i++)
		fragments += strstr(js(cJSON_GetArrayItem(r, i), "idea"), "variant") != NULL;
	CHECK(fragments == 3, "then entries holding one of the rare words (register fragments)");
	cJSON_Delete(r);

	r = search(a, "wmma fragments tile", "hgemm", "win", 20);
	int other = 0;
	const cJSON *e;
	cJSON_ArrayForEach(e, r) other +=
	    strcmp(js(e, "task"), "hgemm") != 0 || strcmp(js(e, "kind"), "win") != 0;
	CHECK(cJSON_GetArraySize(r) == 20 && !other &&
	          !strcmp(js(cJSON_GetArrayItem(r, 0), "idea"),
	                  "Tensor cores through wmma fragments"),
	      "--task and --kind: only the task's wins, the wmma win first");
	cJSON_Delete(r);

	r = search(a, "wmma hgemm", "hgemm", "dead_end", 3);
	CHECK(cJSON_GetArraySize(r) == 1 &&
	          !strcmp(js(cJSON_GetArrayItem(r, 0), "idea"), "wmma with a swizzled tile"),
	      "the task's name among the words of a --task search: left out (every entry of the "
	      "task holds it), the one dead end with wmma found");
	cJSON_Delete(r);

	r = search(a, "xylophone_reg", NULL, NULL, 5);
	CHECK(cJSON_GetArraySize(r) == 1 &&
	          !strcmp(js(cJSON_GetArrayItem(r, 0), "idea"), "Registers for the row"),
	      "a word only in the code: found, through the code's index");
	cJSON_Delete(r);
	r = search(a, "xylophone_reg", "hgemm", NULL, 5);
	CHECK(r && cJSON_GetArraySize(r) == 0, "... and not in another task");
	cJSON_Delete(r);
	/* every combination of the filters, twice: more statements than the
	 * connection keeps prepared, each search still right */
	int wrong = 0, runs = 0;
	for (int round = 0; round < 2; round++)
		for (int m = 0; m < 32; m++) {
			struct archive_query q = {.zText =
			                              m & 16 ? "wmma fragments" : "xylophone_reg",
			                          .zTask = m & 1 ? "hgemm" : NULL,
			                          .zGpu = m & 2 ? "testgpu" : NULL,
			                          .zKind = m & 4 ? "win" : NULL,
			                          .zNotSession = m & 8 ? "old-session" : NULL,
			                          .limit = 5};
			cJSON *x = archive_search(a, &q, err);
			runs++;
			if (!x) {
				wrong++;
				continue;
			}
			cJSON_ArrayForEach(e, x) wrong +=
			    (q.zTask && strcmp(js(e, "task"), q.zTask)) ||
			    (q.zKind && strcmp(js(e, "kind"), q.zKind)) ||
			    (q.zNotSession && !strcmp(js(e, "session"), q.zNotSession));
			cJSON_Delete(x);
		}
	CHECK(runs == 64 && !wrong,
	      "the 32 combinations of filters, twice: each search keeps to them");
	archive_close(a);
	free(file);
}

/* the schema of the first version, and two entries in it */
static const char *const V1 =
    "CREATE TABLE entries(id INTEGER PRIMARY KEY, ukey TEXT NOT NULL UNIQUE, kind TEXT NOT "
    "NULL, task TEXT NOT NULL, backend TEXT NOT NULL DEFAULT '', gpu TEXT NOT NULL DEFAULT '', "
    "category TEXT NOT NULL DEFAULT '', failure TEXT, speedup_parent REAL, speedup REAL, "
    "session TEXT NOT NULL, idea_key TEXT, signature TEXT NOT NULL DEFAULT '', idea TEXT NOT "
    "NULL DEFAULT '', code TEXT NOT NULL DEFAULT '', json TEXT NOT NULL);"
    "CREATE INDEX entries_task ON entries(task, kind);"
    "CREATE INDEX entries_idea ON entries(idea_key);"
    "CREATE VIRTUAL TABLE entries_fts USING fts5(idea, signature, task, code, "
    "content='entries', content_rowid='id', tokenize='porter unicode61');"
    "CREATE TRIGGER entries_ai AFTER INSERT ON entries BEGIN INSERT INTO entries_fts(rowid, "
    "idea, signature, task, code) VALUES (new.id, new.idea, new.signature, new.task, "
    "new.code); END;"
    "INSERT INTO entries_fts(entries_fts, rank) VALUES ('rank', 'bm25(4.0, 2.0, 2.0, 1.0)');"
    "INSERT INTO entries(ukey, kind, task, session, idea, code, json) VALUES ('w:1', 'win', "
    "'softmax', 's1', 'Online softmax in one pass', 'float m = -INFINITY;', "
    "'{\"kind\":\"win\",\"task\":\"softmax\",\"idea\":\"Online softmax in one pass\"}');"
    "INSERT INTO entries(ukey, kind, task, session, idea, code, json) VALUES ('w:2', 'win', "
    "'layernorm', 's2', 'Welford mean and variance', 'float welford_m2;', "
    "'{\"kind\":\"win\",\"task\":\"layernorm\",\"idea\":\"Welford mean and variance\"}');"
    "PRAGMA user_version = 1;";

static void test_upgrade(void)
{
	char err[KL_ERRLEN];
	char *path = xasprintf("%s/v1.db", dir);
	sqlite3 *db;
	char *msg = NULL;
	int rc = sqlite3_open(path, &db) == SQLITE_OK ? sqlite3_exec(db, V1, NULL, NULL, &msg) : -1;
	CHECK(rc == SQLITE_OK, "an archive of the first schema (%s)", msg ? msg : "");
	sqlite3_free(msg);
	sqlite3_close(db);
	struct archive *a = archive_open(path, 0, 1000, err);
	CHECK(a != NULL, "opened and converted (%s)", a ? "" : err);
	if (!a)
		return;
	cJSON *r = search(a, "welford", NULL, NULL, 5);
	CHECK(cJSON_GetArraySize(r) == 1 &&
	          !strcmp(js(cJSON_GetArrayItem(r, 0), "task"), "layernorm"),
	      "its entries are found by their idea");
	cJSON_Delete(r);
	r = search(a, "INFINITY", NULL, NULL, 5);
	CHECK(cJSON_GetArraySize(r) == 1 &&
	          !strcmp(js(cJSON_GetArrayItem(r, 0), "task"), "softmax"),
	      "and by their code");
	cJSON_Delete(r);
	archive_close(a);
	rc = sqlite3_open(path, &db);
	int ok = rc == SQLITE_OK &&
	         sqlite3_exec(db,
	                      "INSERT INTO entries_fts(entries_fts) VALUES('integrity-check');"
	                      "INSERT INTO code_fts(code_fts) VALUES('integrity-check');",
	                      NULL, NULL, NULL) == SQLITE_OK;
	sqlite3_stmt *s;
	int v = -1;
	if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &s, NULL) == SQLITE_OK) {
		if (sqlite3_step(s) == SQLITE_ROW)
			v = sqlite3_column_int(s, 0);
		sqlite3_finalize(s);
	}
	sqlite3_close(db);
	CHECK(ok && v == 2, "both indexes pass FTS5's integrity check; schema version 2 (%d)", v);
	free(path);
}

int main(void)
{
	if (!mkdtemp(dir)) {
		printf("not ok - mkdtemp\n");
		return 1;
	}
	char *db = xasprintf("%s/archive.db", dir);
	test_rare_words_first(db);
	test_upgrade();
	free(db);
	/* the files this test made, then its directory */
	static const char *const made[] = {"entries.jsonl",  "archive.db", "archive.db-wal",
	                                   "archive.db-shm", "v1.db",      "v1.db-wal",
	                                   "v1.db-shm"};
	for (size_t i = 0; i < sizeof made / sizeof *made; i++) {
		char *p = path_join(dir, made[i]);
		unlink(p);
		free(p);
	}
	if (rmdir(dir) != 0)
		printf("# could not remove %s\n", dir);
	return check_done();
}
