/*
 * archive_bench.c - the innovation archive's figures (bench/archive.sh):
 * search latency over an archive (each query run R times in one process,
 * median and p90), the prompt section's cost, and the size per entry.
 * Usage: archive_bench DB [R [FILE.jsonl: import it first, timed]]
 *        archive_bench DB R --live JOURNAL: the live hook's cost per evaluation
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "archive.h"
#include "session.h"
#include "state.h"
#include "util.h"

/* this thread's CPU time: what the search costs, whatever else the machine runs */
static double cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: archive_bench DB [R]\n");
		return 2;
	}
	int R = argc > 2 ? atoi(argv[2]) : 50;
	char err[KL_ERRLEN];
	if (argc > 4 && !strcmp(argv[3], "--live")) {
		/* archive_bench DB R --live JOURNAL: the live hook's cost per
		 * evaluation on a folded session (the first call reads its journal) */
		struct session *s = session_open(argv[4], 0, err);
		if (!s) {
			fprintf(stderr, "%s\n", err);
			return 1;
		}
		setenv("KLOOP_ARCHIVE", argv[1], 1);
		double t0 = now_s();
		if (archive_note_session(&s->st, argv[4], err) < 0)
			fprintf(stderr, "%s\n", err);
		double first = now_s() - t0;
		double *v = xcalloc((size_t)R, sizeof *v);
		for (int r = 0; r < R; r++) {
			double c0 = now_s();
			archive_note_session(&s->st, argv[4], err);
			v[r] = (now_s() - c0) * 1000;
		}
		qsort(v, (size_t)R, sizeof *v, cmp);
		printf("live hook on a journal of %d candidates, %d ideas: first call (reads the "
		       "journal "
		       "once) %.0f ms; then per evaluation: median %.3f ms, p90 %.3f ms\n",
		       s->st.nCand, s->st.nIdea, first * 1000, v[R / 2], v[(int)(R * 0.9)]);
		free(v);
		session_close(s);
		return 0;
	}
	if (argc > 3) {
		/* archive_bench DB R FILE.jsonl: import FILE first (timed) */
		struct archive *w = archive_open(argv[1], 1, 5000, err);
		double t0 = now_s();
		int seen = 0, n = w ? archive_import(w, argv[3], &seen, err) : -1;
		if (n < 0) {
			fprintf(stderr, "%s\n", err);
			return 1;
		}
		printf("import: %d entries in %.1f s, %.0f entries/s\n\n", n, now_s() - t0,
		       n / (now_s() - t0));
		archive_close(w);
	}
	struct archive *a = archive_open(argv[1], 0, 5000, err);
	if (!a) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	long n = archive_count(a, err);
	static const struct {
		const char *label, *text, *task, *kind, *notSession;
		int limit;
	} qs[] = {
	    {"2 words", "float4 loads", NULL, NULL, NULL, 20},
	    {"3 words", "vectorize shared memory", NULL, NULL, NULL, 20},
	    {"rare word", "wmma fragments", NULL, NULL, NULL, 20},
	    {"6 words, --task", "tile the reduction with warp shuffles", "softmax", NULL, NULL, 20},
	    {"prompt-sized (task + signature + idea), wins",
	     "softmax ops: softmax in x f32 4096 8192 "
	     "Online softmax one pass for the max and the sum",
	     NULL, "win", NULL, 20},
	    {"the prompt's wins: prompt-sized, wins, not this session, top 3",
	     "softmax ops: softmax; in x f32 [4096, 8192] "
	     "Online softmax: one pass for the max and the sum",
	     NULL, "win", "softmax@1.000000", 3},
	    {"the prompt's dead ends: the idea's words, --task, top 3",
	     "Online softmax: one pass for the max and the sum", "softmax", "dead_end", NULL, 3},
	    {"no words, --task (by gain)", NULL, "layernorm", NULL, NULL, 20},
	};
	printf("| query (%ld entries) | results | wall median ms | wall p90 ms | CPU median ms | "
	       "CPU p90 "
	       "ms | first call wall ms |\n"
	       "| --- | --- | --- | --- | --- | --- | --- |\n",
	       n);
	double *t = xcalloc((size_t)R, sizeof *t), *c = xcalloc((size_t)R, sizeof *c);
	for (size_t k = 0; k < sizeof qs / sizeof *qs; k++) {
		struct archive_query q = {.zText = qs[k].text,
		                          .zTask = qs[k].task,
		                          .zKind = qs[k].kind,
		                          .zNotSession = qs[k].notSession,
		                          .limit = qs[k].limit};
		int got = 0;
		for (int r = 0; r < R; r++) {
			double t0 = now_s(), c0 = cpu_s();
			cJSON *res = archive_search(a, &q, err);
			t[r] = (now_s() - t0) * 1000;
			c[r] = (cpu_s() - c0) * 1000;
			if (!res) {
				fprintf(stderr, "%s\n", err);
				return 1;
			}
			got = cJSON_GetArraySize(res);
			cJSON_Delete(res);
		}
		double first = t[0];
		qsort(t, (size_t)R, sizeof *t, cmp);
		qsort(c, (size_t)R, sizeof *c, cmp);
		printf("| %s | %d | %.2f | %.2f | %.2f | %.2f | %.2f |\n", qs[k].label, got,
		       t[R / 2], t[(int)(R * 0.9)], c[R / 2], c[(int)(R * 0.9)], first);
	}
	/* the same searches on a fresh connection each time, as `kloop archive
	 * search` makes one: opened, statements prepared, the words'
	 * frequencies looked up */
	for (size_t k = 0; k < sizeof qs / sizeof *qs; k++) {
		if (!qs[k].text)
			continue;
		struct archive_query q = {.zText = qs[k].text,
		                          .zTask = qs[k].task,
		                          .zKind = qs[k].kind,
		                          .zNotSession = qs[k].notSession,
		                          .limit = qs[k].limit};
		for (int r = 0; r < R; r++) {
			double t0 = now_s(), c0 = cpu_s();
			struct archive *f = archive_open(argv[1], 0, 5000, err);
			cJSON *res = f ? archive_search(f, &q, err) : NULL;
			archive_close(f);
			t[r] = (now_s() - t0) * 1000;
			c[r] = (cpu_s() - c0) * 1000;
			if (!res) {
				fprintf(stderr, "%s\n", err);
				return 1;
			}
			cJSON_Delete(res);
		}
		qsort(t, (size_t)R, sizeof *t, cmp);
		qsort(c, (size_t)R, sizeof *c, cmp);
		printf(
		    "| %s, a fresh connection (open included) | | %.2f | %.2f | %.2f | %.2f | |\n",
		    qs[k].label, t[R / 2], t[(int)(R * 0.9)], c[R / 2], c[(int)(R * 0.9)]);
	}
	/* the prompt section: two searches and up to six entries read */
	setenv("KLOOP_ARCHIVE", argv[1], 1);
	struct state st;
	state_init(&st);
	st.zTask = xstrdup("softmax");
	st.tsStarted = 1;
	size_t len = 0;
	for (int r = 0; r < R; r++) {
		strbuf sb = STRBUF_INIT;
		double t0 = now_s(), c0 = cpu_s();
		archive_prompt(&st, "Online softmax: one pass for the max and the sum", 3, 4096,
		               &sb);
		t[r] = (now_s() - t0) * 1000;
		c[r] = (cpu_s() - c0) * 1000;
		len = sb.len;
		sb_free(&sb);
	}
	double first = t[0];
	qsort(t, (size_t)R, sizeof *t, cmp);
	qsort(c, (size_t)R, sizeof *c, cmp);
	printf("| the {{archive}} prompt section (%zu bytes; 2 searches, 6 entries read) | 3 + 3 | "
	       "%.2f | %.2f | %.2f | %.2f | %.2f (the archive opened) |\n",
	       len, t[R / 2], t[(int)(R * 0.9)], c[R / 2], c[(int)(R * 0.9)], first);
	state_free(&st);
	free(t);
	free(c);
	archive_close(a);
	struct stat sb;
	if (n > 0 && stat(argv[1], &sb) == 0)
		printf(
		    "\nsize: %.1f MB for %ld entries, %.0f bytes per entry (with the FTS5 index)\n",
		    sb.st_size / 1e6, n, (double)sb.st_size / n);
	return 0;
}
