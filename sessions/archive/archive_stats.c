/*
 * archive_stats.c - the archive summed up per task and category: wins, dead
 * ends, win rate and the gains over the parent.
 */
#include "archive_priv.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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
		archive_db_err(a, err, "stats");
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
			archive_add_num(r, "median_gain", median(v, nv));
			archive_add_num(r, "best_gain", best);
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
		archive_db_err(a, err, "stats");
		return NULL;
	}
	cJSON_AddNumberToObject(o, "entries", total);
	cJSON_AddNumberToObject(o, "wins", allWins);
	cJSON_AddNumberToObject(o, "dead_ends", allDead);
	cJSON_AddNumberToObject(o, "tasks", tasks);
	return o;
}
