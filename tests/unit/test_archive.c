/*
 * test_archive.c - the innovation archive (sessions/archive/) on a real
 * SQLite file: the win rule (intervals apart), dead ends and their failure
 * classes, backfill twice, a dead end replaced when its idea wins, search
 * ranking and filters, the stats' medians, export / import, the live hook,
 * the task signature of a PyTorch reference and the bounded prompt section.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "archive.h"
#include "check.h"
#include "session.h"

static char dir[] = "/tmp/kloop-test-archive.XXXXXX";

static void emit(struct session *s, const char *zFmt, ...) __attribute__((format(printf, 2, 3)));
static void emit(struct session *s, const char *zFmt, ...)
{
	strbuf sb = STRBUF_INIT;
	va_list ap;
	va_start(ap, zFmt);
	sb_vaddf(&sb, zFmt, ap);
	va_end(ap);
	char err[KL_ERRLEN];
	cJSON *e = cJSON_Parse(sb.buf);
	if (!e || session_emit(s, e, err) < 0)
		printf("# cannot emit %s: %s\n", sb.buf, e ? err : "bad JSON");
	sb_free(&sb);
}

static void cand(struct session *s, int id, int parent, int idea, const char *zSrc)
{
	char ps[32] = "[]", ia[32] = "";
	if (parent)
		snprintf(ps, sizeof ps, "[%d]", parent);
	if (idea)
		snprintf(ia, sizeof ia, ",\"idea_id\":%d", idea);
	emit(s,
	     "{\"type\":\"candidate_added\",\"id\":%d,\"name\":\"c%d.c\",\"origin\":\"%s\","
	     "\"parents\":%s,\"source\":\"%s\",\"request\":%d%s}",
	     id, id, parent ? "llm" : "seed", ps, zSrc, idea ? idea : 0, ia);
}

/* an evaluation: correct with median m and p10..p90, or status st */
static void eval(struct session *s, int id, const char *st, double m, double p10, double p90)
{
	emit(s, "{\"type\":\"eval_started\",\"candidate\":%d}", id);
	if (strcmp(st, "correct"))
		emit(s,
		     "{\"type\":\"eval_finished\",\"candidate\":%d,\"result\":{\"status\":\"%s\","
		     "\"reason\":\"it failed\",\"device\":\"TestGPU 9000\"}}",
		     id, st);
	else
		emit(s,
		     "{\"type\":\"eval_finished\",\"candidate\":%d,\"result\":{\"status\":"
		     "\"correct\","
		     "\"reason\":\"\",\"device\":\"TestGPU 9000\",\"timing\":{\"median_ms\":%g,"
		     "\"p10_ms\":%g,\"p90_ms\":%g},\"baseline_ms\":10,\"speedup\":%g}}",
		     id, m, p10, p90, 10 / m);
}

static void idea(struct session *s, int id, const char *zTitle, const char *zDesc, const char *zCat)
{
	emit(s,
	     "{\"type\":\"llm_request\",\"request\":%d,\"purpose\":\"implement\",\"provider\":"
	     "\"openai\",\"model\":\"model-%d\"}",
	     id, id);
	emit(s,
	     "{\"type\":\"idea_proposed\",\"id\":%d,\"title\":\"%s\",\"description\":\"%s\","
	     "\"category\":\"%s\",\"origin\":\"llm\"}",
	     id, zTitle, zDesc, zCat);
}

/* a session: seed 1 at 10 ms; idea 1 wins (4 ms), idea 2 does not compile,
 * idea 3 is correct but within the noise, idea 4 is still being evaluated */
static char *make_session(const char *zName, const char *zTask, double ts)
{
	char *path = xasprintf("%s/%s.jsonl", dir, zName);
	char err[KL_ERRLEN];
	struct session *s = session_open(path, 1, err);
	emit(s, "{\"type\":\"session_started\",\"task\":\"%s\",\"backend\":\"cuda\",\"ts\":%.3f}",
	     zTask, ts);
	cand(s, 1, 0, 0, "int seed;");
	eval(s, 1, "correct", 10, 9, 11);
	idea(s, 1, "Vectorize loads with float4", "read four floats per thread", "memory access");
	idea(s, 2, "Tile rows into shared memory", "stage a tile", "memory access");
	idea(s, 3, "Unroll the inner loop", "unroll by four", "compute and instructions");
	idea(s, 4, "Use warp shuffles", "reduce in registers", "parallelism and occupancy");
	cand(s, 2, 1, 1, "int seed;\\nfloat4 v;");
	eval(s, 2, "correct", 4, 3.8, 4.3);
	cand(s, 3, 1, 2, "int seed;\\n__shared__ oops");
	eval(s, 3, "compile_error", 0, 0, 0);
	cand(s, 4, 1, 3, "int seed;\\n#pragma unroll 4");
	eval(s, 4, "correct", 9.5, 8.9, 10.5);
	cand(s, 5, 1, 4, "int seed;\\n__shfl_down_sync");
	emit(s, "{\"type\":\"eval_started\",\"candidate\":5}");
	session_close(s);
	return path;
}

static cJSON *search(struct archive *a, const char *zText, const char *zTask, const char *zKind)
{
	char err[KL_ERRLEN];
	struct archive_query q = {.zText = zText, .zTask = zTask, .zKind = zKind};
	cJSON *r = archive_search(a, &q, err);
	if (!r)
		printf("# search: %s\n", err);
	return r;
}

static const char *js(const cJSON *o, const char *k)
{
	const char *z = cJSON_GetStringValue(cJSON_GetObjectItem(o, k));
	return z ? z : "";
}

static void test_win_rule(void)
{
	struct session *s = session_memory();
	emit(s, "{\"type\":\"session_started\",\"task\":\"t\",\"backend\":\"host\"}");
	cand(s, 1, 0, 0, "a");
	eval(s, 1, "correct", 10, 9, 11);
	cand(s, 2, 1, 0, "b");
	eval(s, 2, "correct", 5, 4, 6);
	cand(s, 3, 1, 0, "c");
	eval(s, 3, "correct", 8.5, 8, 9.2);
	cand(s, 4, 1, 0, "d");
	eval(s, 4, "incorrect", 0, 0, 0);
	cand(s, 5, 4, 0, "e");
	eval(s, 5, "correct", 1, 0.9, 1.1);
	emit(s, "{\"type\":\"candidate_added\",\"id\":6,\"name\":\"x.c\",\"origin\":\"crossover\","
	        "\"parents\":[1,2],\"source\":\"f\"}");
	eval(s, 6, "correct", 4.5, 4.2, 4.8);
	emit(s, "{\"type\":\"candidate_added\",\"id\":7,\"name\":\"y.c\",\"origin\":\"crossover\","
	        "\"parents\":[1,2],\"source\":\"g\"}");
	eval(s, 7, "correct", 3, 2.5, 3.5);
	const struct state *st = &s->st;
	CHECK(archive_is_win(st, state_cand(st, 2)), "p90 4..6 below the parent's p10 9: a win");
	CHECK(!archive_is_win(st, state_cand(st, 3)),
	      "an interval that reaches the parent's (9.2 > 9): not a win");
	CHECK(!archive_is_win(st, state_cand(st, 1)), "a seed has no parent: not a win");
	CHECK(!archive_is_win(st, state_cand(st, 4)), "an incorrect candidate: not a win");
	CHECK(!archive_is_win(st, state_cand(st, 5)), "faster than an incorrect parent: not a win");
	CHECK(!archive_is_win(st, state_cand(st, 6)),
	      "a crossover must beat both parents (4.8 > the second's p10 4): not a win");
	CHECK(archive_is_win(st, state_cand(st, 7)), "a crossover below both parents: a win");
	/* issue 39: an A/B against its parent that did not find #2 faster
	 * beyond the noise refutes the separate timings; one won does not */
	emit(s, "{\"type\":\"ab_compared\",\"candidate\":7,\"incumbent\":1,\"pairs\":20,"
	        "\"wins\":19,\"ratio\":3,\"won\":true}");
	CHECK(archive_is_win(st, state_cand(st, 7)), "a win its A/B confirmed stays a win");
	emit(s, "{\"type\":\"ab_compared\",\"candidate\":2,\"incumbent\":1,\"pairs\":20,"
	        "\"wins\":11,\"ratio\":1.01,\"won\":false}");
	CHECK(!archive_is_win(st, state_cand(st, 2)),
	      "1.8x faster by separate timings, but its A/B against the parent was not beyond the "
	      "noise: not a win");
	/* a time below the device's floor is a suspect until a person clears
	 * it: never a win while held back */
	cand(s, 8, 1, 0, "h");
	emit(s, "{\"type\":\"eval_started\",\"candidate\":8}");
	emit(s, "{\"type\":\"eval_finished\",\"candidate\":8,\"result\":{\"status\":\"correct\","
	        "\"reason\":\"\",\"device\":\"TestGPU 9000\",\"timing\":{\"median_ms\":0.5,"
	        "\"p10_ms\":0.4,\"p90_ms\":0.6},\"baseline_ms\":10,\"speedup\":20,"
	        "\"roofline\":{\"suspect\":\"below the memory floor\"}}}");
	CHECK(!archive_is_win(st, state_cand(st, 8)),
	      "20x by a time below the device's floor, not cleared: not a win");
	emit(s, "{\"type\":\"search_started\",\"settings\":{}}");
	emit(s, "{\"type\":\"suspect_flagged\",\"candidate\":8,\"speedup\":20,\"why\":\"w\"}");
	emit(s, "{\"type\":\"suspect_cleared\",\"candidate\":8}");
	CHECK(archive_is_win(st, state_cand(st, 8)),
	      "... the same once a person cleared it: a win");
	session_close(s);
}

/* a win filed, then refuted by an A/B asked for later: it leaves the
 * archive, so that later prompts do not learn it */
static void test_refuted_win(struct archive *a)
{
	char *path = xasprintf("%s/refuted.jsonl", dir), err[KL_ERRLEN];
	struct session *s = session_open(path, 1, err);
	emit(s, "{\"type\":\"session_started\",\"task\":\"refuted\",\"backend\":\"cuda\","
	        "\"ts\":3000}");
	cand(s, 1, 0, 0, "int r;");
	eval(s, 1, "correct", 10, 9, 11);
	cand(s, 2, 1, 0, "int r2;");
	eval(s, 2, "correct", 6.7, 6.5, 7);
	session_close(s);
	struct archive_counts c;
	int rc = archive_add_journal(a, path, &c, err);
	cJSON *r = search(a, NULL, "refuted", "win");
	CHECK(rc == 0 && c.nWins == 1 && cJSON_GetArraySize(r) == 1,
	      "1.49x by separate timings: a win filed (%d)", cJSON_GetArraySize(r));
	cJSON_Delete(r);
	s = session_open(path, 1, err);
	eval(s, 2, "correct", 6.7, 6.5, 7);
	emit(s, "{\"type\":\"ab_compared\",\"candidate\":2,\"incumbent\":1,\"pairs\":20,"
	        "\"wins\":10,\"ratio\":1.01,\"won\":false}");
	session_close(s);
	rc = archive_add_journal(a, path, &c, err);
	r = search(a, NULL, "refuted", "win");
	CHECK(rc == 0 && c.nWins == 0 && cJSON_GetArraySize(r) == 0,
	      "its A/B against the parent was not beyond the noise (1.01): the win leaves the "
	      "archive (%d left: %s)",
	      cJSON_GetArraySize(r), rc ? err : "");
	cJSON_Delete(r);
	free(path);
}

static void test_add_search(struct archive *a, const char *zS1, const char *zS2)
{
	char err[KL_ERRLEN];
	struct archive_counts c;
	int rc = archive_add_journal(a, zS1, &c, err);
	CHECK(rc == 0 && c.nWins == 1 && c.nDeadEnds == 2 && c.nAdded == 3,
	      "backfill: 1 win, dead ends for ideas 2 and 3, idea 4 still running (%d %d %d: %s)",
	      c.nWins, c.nDeadEnds, c.nAdded, rc ? err : "");
	rc = archive_add_journal(a, zS1, &c, err);
	CHECK(rc == 0 && c.nAdded == 0 && archive_count(a, err) == 3,
	      "backfill twice: nothing new");
	cJSON *d = search(a, NULL, NULL, "dead_end");
	int compileErr = 0, slower = 0;
	const cJSON *e;
	cJSON_ArrayForEach(e, d)
	{
		compileErr += !strcmp(js(e, "failure"), "compile_error") &&
		              !strcmp(js(e, "idea"), "Tile rows into shared memory");
		slower += !strcmp(js(e, "failure"), "slower") &&
		          !strcmp(js(e, "idea"), "Unroll the inner loop");
	}
	CHECK(cJSON_GetArraySize(d) == 2 && compileErr == 1 && slower == 1,
	      "dead ends: the tiling a compile_error, the unrolling slower (within the noise)");
	cJSON_Delete(d);
	rc = archive_add_journal(a, zS2, &c, err);
	CHECK(rc == 0 && c.nAdded == 3, "a second session of another task adds its own 3");

	cJSON *r = search(a, "float4 vectorize", NULL, NULL);
	CHECK(cJSON_GetArraySize(r) >= 2 &&
	          !strcmp(js(cJSON_GetArrayItem(r, 0), "idea"), "Vectorize loads with float4"),
	      "search ranks the vectorize idea first");
	cJSON_Delete(r);
	r = search(a, "shared memory tile", "layernorm", NULL);
	CHECK(cJSON_GetArraySize(r) >= 1 &&
	          !strcmp(js(cJSON_GetArrayItem(r, 0), "task"), "layernorm") &&
	          !strcmp(js(cJSON_GetArrayItem(r, 0), "idea"), "Tile rows into shared memory"),
	      "--task keeps one task; the tiling idea first");
	int other = 0;
	cJSON_ArrayForEach(e, r) other += strcmp(js(e, "task"), "layernorm") != 0;
	CHECK(!other, "no entry of another task");
	cJSON_Delete(r);
	struct archive_query q = {.zText = "vectorize", .zGpu = "testgpu"};
	r = archive_search(a, &q, err);
	CHECK(cJSON_GetArraySize(r) == 2, "--gpu matches part of the device, any case");
	cJSON_Delete(r);
	q.zGpu = "H100";
	r = archive_search(a, &q, err);
	CHECK(r && cJSON_GetArraySize(r) == 0, "--gpu of another device: nothing");
	cJSON_Delete(r);
	r = search(a, "oops", "softmax", NULL);
	CHECK(cJSON_GetArraySize(r) == 1 &&
	          !strcmp(js(cJSON_GetArrayItem(r, 0), "idea"), "Tile rows into shared memory"),
	      "a word only in the code is found (the second pass, over the code)");
	cJSON_Delete(r);
	r = search(a, "\"unbalanced ( quote OR AND*", NULL, NULL);
	CHECK(r != NULL, "a query with FTS5 syntax in it is taken as words, not an error");
	cJSON_Delete(r);

	/* the entry in full */
	r = search(a, "vectorize", "softmax", "win");
	long id = (long)cJSON_GetNumberValue(cJSON_GetObjectItem(cJSON_GetArrayItem(r, 0), "id"));
	cJSON_Delete(r);
	cJSON *w = archive_get(a, id, err);
	CHECK(w && cJSON_GetNumberValue(cJSON_GetObjectItem(w, "speedup_parent")) == 2.5 &&
	          !strcmp(js(w, "model"), "openai model-1") &&
	          !strcmp(js(w, "gpu"), "TestGPU 9000") && strstr(js(w, "diff"), "+float4 v;") &&
	          !strcmp(js(w, "category"), "memory access") &&
	          cJSON_GetArraySize(cJSON_GetObjectItem(w, "lineage")) == 2,
	      "the win: gain 10/4, model, device, diff, category, lineage");
	cJSON_Delete(w);
	w = archive_get(a, 9999, err);
	CHECK(!w && strstr(err, "no archive entry 9999"), "an id not there: an error saying so");
}

/* an idea whose only candidate's evaluation the user cancelled: no verdict
 * on the idea, so no dead end (a cancel is not a failure) */
static void test_cancelled_not_dead(struct archive *a)
{
	char *path = xasprintf("%s/cancelled.jsonl", dir);
	char err[KL_ERRLEN];
	struct session *s = session_open(path, 1, err);
	emit(s, "{\"type\":\"session_started\",\"task\":\"softmax\",\"backend\":\"cuda\"}");
	cand(s, 1, 0, 0, "int seed;");
	eval(s, 1, "correct", 10, 9, 11);
	idea(s, 1, "Cancelled before its verdict", "never measured", "memory access");
	cand(s, 2, 1, 1, "int seed;\\nint cancelled;");
	eval(s, 2, "cancelled", 0, 0, 0);
	session_close(s);
	struct archive_counts c;
	int rc = archive_add_journal(a, path, &c, err);
	CHECK(rc == 0 && c.nDeadEnds == 0 && c.nWins == 0,
	      "a cancelled evaluation makes no dead end (%d dead ends: %s)", c.nDeadEnds,
	      rc ? err : "");
	free(path);
}

static void test_dead_end_wins_later(struct archive *a, const char *zS1)
{
	char err[KL_ERRLEN];
	struct session *s = session_open(zS1, 1, err);
	cand(s, 6, 1, 2, "int seed;\\n__shared__ float tile[256];");
	eval(s, 6, "correct", 3, 2.8, 3.2);
	session_close(s);
	struct archive_counts c;
	archive_add_journal(a, zS1, &c, err);
	cJSON *d = search(a, "tile", "softmax", "dead_end");
	cJSON *w = search(a, "tile", "softmax", "win");
	CHECK(c.nWins == 2 && cJSON_GetArraySize(d) == 0 && cJSON_GetArraySize(w) == 1,
	      "the tiling idea wins later: its dead end is gone, the win is there");
	cJSON_Delete(d);
	cJSON_Delete(w);
}

static void test_stats(struct archive *a)
{
	char err[KL_ERRLEN];
	cJSON *s = archive_stats(a, err);
	const cJSON *r;
	int found = 0;
	cJSON_ArrayForEach(r, cJSON_GetObjectItem(s, "rows"))
	{
		if (strcmp(js(r, "task"), "softmax") || strcmp(js(r, "category"), "memory access"))
			continue;
		found = 1;
		/* wins of 10/4 = 2.5 and 10/3 = 3.33: median 2.92 */
		double med = cJSON_GetNumberValue(cJSON_GetObjectItem(r, "median_gain"));
		CHECK(cJSON_GetNumberValue(cJSON_GetObjectItem(r, "wins")) == 2 &&
		          cJSON_GetNumberValue(cJSON_GetObjectItem(r, "dead_ends")) == 0 &&
		          med > 2.9166 && med < 2.9167,
		      "stats: softmax / memory access won twice, median gain (2.5 + 3.33) / 2");
	}
	CHECK(found, "stats: a row for softmax / memory access");
	CHECK(cJSON_GetNumberValue(cJSON_GetObjectItem(s, "tasks")) == 2 &&
	          cJSON_GetNumberValue(cJSON_GetObjectItem(s, "entries")) == archive_count(a, err),
	      "stats: two tasks, every entry counted");
	cJSON_Delete(s);
}

static void test_export_import(struct archive *a)
{
	char err[KL_ERRLEN];
	char *f = xasprintf("%s/a.jsonl", dir), *db = xasprintf("%s/b.db", dir);
	int n = archive_export(a, f, err);
	CHECK(n == archive_count(a, err), "export writes every entry (%d)", n);
	struct archive *b = archive_open(db, 1, 1000, err);
	int seen = 0, added = archive_import(b, f, &seen, err);
	CHECK(added == n && seen == n, "import into an empty archive adds them all");
	added = archive_import(b, f, &seen, err);
	CHECK(added == 0 && archive_count(b, err) == n, "importing twice adds nothing");
	char *bad = xasprintf("%s/bad.jsonl", dir);
	const char *zBad =
	    "{\"ukey\":\"k\",\"kind\":\"win\",\"task\":\"t\",\"session\":\"s\"}\nnot json\n";
	write_file_atomic(bad, zBad, strlen(zBad), err);
	added = archive_import(b, bad, &seen, err);
	CHECK(added < 0 && strstr(err, "bad.jsonl:2: not a JSON object") &&
	          archive_count(b, err) == n,
	      "a bad line: FILE:LINE, and not even the good line before it is imported");
	archive_close(b);
	free(f);
	free(db);
	free(bad);
}

static void test_live_hook(const char *zDb)
{
	char err[KL_ERRLEN];
	setenv("KLOOP_ARCHIVE", zDb, 1);
	char *path = xasprintf("%s/live.jsonl", dir);
	struct session *s = session_open(path, 1, err);
	emit(s,
	     "{\"type\":\"session_started\",\"task\":\"gemm\",\"backend\":\"cuda\",\"ts\":3000}");
	cand(s, 1, 0, 0, "gemm seed");
	eval(s, 1, "correct", 10, 9, 11);
	CHECK(archive_note_session(&s->st, path, err) == 0, "the hook after the seed's eval: ok");
	idea(s, 1, "Tensor cores via wmma", "use wmma fragments", "compute and instructions");
	cand(s, 2, 1, 1, "gemm wmma");
	eval(s, 2, "correct", 2, 1.9, 2.1);
	CHECK(archive_note_session(&s->st, path, err) == 0, "the hook after the win's eval: ok");
	struct archive *a = archive_open(zDb, 0, 1000, err);
	cJSON *r = search(a, "wmma", "gemm", "win");
	cJSON *e = cJSON_GetArrayItem(r, 0);
	CHECK(cJSON_GetArraySize(r) == 1 &&
	          cJSON_GetNumberValue(cJSON_GetObjectItem(e, "event")) == 9,
	      "the live win is archived with its eval_finished's event index (9)");
	cJSON_Delete(r);
	struct archive_counts c;
	archive_add_journal(a, path, &c, err);
	CHECK(c.nWins == 1 && c.nAdded == 0, "backfilling a live-archived session adds nothing");

	/* a journal with a history: the hook takes it from its last event on,
	 * and `archive add` backfills the rest */
	char *old = xasprintf("%s/old.jsonl", dir);
	struct session *so = session_open(old, 1, err);
	emit(so,
	     "{\"type\":\"session_started\",\"task\":\"gemm\",\"backend\":\"cuda\",\"ts\":3500}");
	cand(so, 1, 0, 0, "old seed");
	eval(so, 1, "correct", 10, 9, 11);
	cand(so, 2, 1, 0, "old win");
	eval(so, 2, "correct", 2, 1.9, 2.1);
	cand(so, 3, 1, 0, "old slow");
	eval(so, 3, "correct", 10, 9, 11);
	long before = archive_count(a, err);
	CHECK(archive_note_session(&so->st, old, err) == 0 && archive_count(a, err) == before,
	      "the hook's first call on a journal with a history does not archive the history");
	archive_add_journal(a, old, &c, err);
	CHECK(c.nAdded == 1 && archive_count(a, err) == before + 1, "archive add backfills it");
	session_close(so);
	free(old);

	/* the prompt section: another session of gemm sees the win, bounded */
	struct session *s2 = session_memory();
	emit(s2,
	     "{\"type\":\"session_started\",\"task\":\"gemm\",\"backend\":\"cuda\",\"ts\":4000}");
	strbuf sb = STRBUF_INIT;
	archive_prompt(&s2->st, "tensor cores", 3, 4096, &sb);
	CHECK(sb.buf && strstr(sb.buf, "Tensor cores via wmma") && strstr(sb.buf, "5.00x faster"),
	      "the prompt section of another session names the win and its gain");
	sb_reset(&sb);
	archive_prompt(&s2->st, "tensor cores", 3, 200, &sb);
	CHECK(sb.len <= 200 && (!sb.len || strstr(sb.buf, "- ")),
	      "the section keeps to its bound, without a heading over nothing (%zu <= 200 bytes)",
	      sb.len);
	sb_reset(&sb);
	archive_prompt(&s2->st, "tensor cores", 3, 1200, &sb);
	CHECK(sb.len <= 1200 && sb.buf && strstr(sb.buf, "Tensor cores via wmma"),
	      "a smaller bound still holds the win, with less of its diff (%zu <= 1200 bytes)",
	      sb.len);
	sb_reset(&sb);
	archive_prompt(&s->st, "tensor cores", 3, 4096, &sb);
	CHECK(sb.buf && strstr(sb.buf, "old win") && !strstr(sb.buf, "Tensor cores via wmma"),
	      "a session is not shown its own wins, but another session's (old win): %s",
	      sb.buf ? sb.buf : "(nothing)");
	sb_free(&sb);
	session_close(s2);
	session_close(s);
	archive_close(a);
	free(path);
}

static void test_signature(void)
{
	char *sig = archive_signature("tests/fixtures/torch/mixed.py", NULL);
	CHECK(!strcmp(sig, "ops: linear mul add gt; sizes: rows=8 d_in=32 d_out=16"),
	      "signature of a KernelBench file: nn.Linear through self.proj, arithmetic, sizes "
	      "(%s)",
	      sig);
	free(sig);
	sig = archive_signature("tasks/gemm_bias_relu/reference.py", "in x f32 [1024, 4096]");
	CHECK(!strcmp(sig, "ops: linear relu add; in x f32 [1024, 4096]"),
	      "signature of a task: the reference's ops and the tensors (%s)", sig);
	free(sig);
}

int main(void)
{
	if (!mkdtemp(dir)) {
		printf("not ok - mkdtemp\n");
		return 1;
	}
	char err[KL_ERRLEN];
	char *s1 = make_session("s1", "softmax", 1000);
	char *s2 = make_session("s2", "layernorm", 2000);
	char *db = xasprintf("%s/data/kloop/archive.db", dir);
	struct archive *a = archive_open(db, 0, 1000, err);
	CHECK(!a && strstr(err, "no archive yet"), "opening a missing archive to read: an error");
	a = archive_open(db, 1, 1000, err);
	CHECK(a != NULL, "the archive is made with its directory (%s)", a ? "" : err);
	test_win_rule();
	test_add_search(a, s1, s2);
	test_refuted_win(a);
	test_dead_end_wins_later(a, s1);
	test_cancelled_not_dead(a);
	test_stats(a);
	test_export_import(a);
	archive_close(a);
	test_live_hook(db);
	test_signature();
	free(s1);
	free(s2);
	free(db);
	char *rm = xasprintf("rm -rf %s", dir);
	if (system(rm) != 0)
		printf("# could not remove %s\n", dir);
	free(rm);
	return check_done();
}
