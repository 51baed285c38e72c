/*
 * test_popview.c - the Population pane's pure part (tui/popview.c):
 * filter terms, their errors, and sorting with missing values last.
 */
#include <cJSON.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "event.h"
#include "popview.h"
#include "state.h"

static void add(struct state *st, int id, const char *origin, int parent, const char *idea)
{
	char err[KL_ERRLEN];
	cJSON *e = cJSON_CreateObject();
	cJSON_AddStringToObject(e, "type", "candidate_added");
	cJSON_AddNumberToObject(e, "id", id);
	cJSON_AddStringToObject(e, "name", "k.c");
	cJSON_AddStringToObject(e, "origin", origin);
	cJSON *ps = cJSON_AddArrayToObject(e, "parents");
	if (parent)
		cJSON_AddItemToArray(ps, cJSON_CreateNumber(parent));
	cJSON_AddStringToObject(e, "source", "int x;");
	if (idea)
		cJSON_AddStringToObject(e, "idea", idea);
	state_apply(st, e, err);
	cJSON_Delete(e);
}

static void finish(struct state *st, int id, const char *status, double ms, double speedup)
{
	char err[KL_ERRLEN];
	cJSON *e = cJSON_CreateObject();
	cJSON_AddStringToObject(e, "type", "eval_finished");
	cJSON_AddNumberToObject(e, "candidate", id);
	cJSON *r = cJSON_AddObjectToObject(e, "result");
	cJSON_AddStringToObject(r, "status", status);
	if (ms > 0) {
		cJSON_AddNumberToObject(cJSON_AddObjectToObject(r, "timing"), "median_ms", ms);
		cJSON_AddNumberToObject(r, "speedup", speedup);
	}
	state_apply(st, e, err);
	cJSON_Delete(e);
}

/* the ids in display order, as "1 2 3" */
static const char *order(struct popview *v, const struct state *st)
{
	static char buf[256];
	popview_refresh(v, st);
	buf[0] = 0;
	for (int i = 0; i < v->nIdx; i++)
		snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%d", i ? " " : "",
		         st->aCand[v->aIdx[i]].id);
	return buf;
}

static int filter(struct popview *v, const char *z, char *err)
{
	char *terms[8];
	char copy[256];
	int n = 0;
	snprintf(copy, sizeof copy, "%s", z);
	for (char *t = strtok(copy, " "); t && n < 8; t = strtok(NULL, " "))
		terms[n++] = t;
	err[0] = 0;
	return popview_set_filter(v, terms, n, err);
}

int main(void)
{
	struct state st;
	state_init(&st);
	add(&st, 1, "seed", 0, NULL);
	add(&st, 2, "llm", 1, "Tile the rows into shared memory");
	add(&st, 3, "human", 1, NULL);
	add(&st, 4, "llm", 2, "vectorize loads");
	add(&st, 5, "crossover", 2, NULL);
	finish(&st, 1, "correct", 2.0, 1.0);
	finish(&st, 2, "correct", 1.0, 2.0);
	finish(&st, 3, "incorrect", 0, 0);
	finish(&st, 4, "correct", 0.5, 4.0);
	/* 5 stays new */

	struct popview v;
	char err[KL_ERRLEN];
	popview_init(&v);
	CHECK(!strcmp(order(&v, &st), "1 2 3 4 5"), "by id at first: %s", order(&v, &st));
	CHECK(popview_set_sort(&v, "speedup", NULL, err) == 0 &&
	          !strcmp(order(&v, &st), "4 2 1 3 5"),
	      "speedup sorts descending by default, those without one last: %s", order(&v, &st));
	CHECK(popview_set_sort(&v, "speedup", "asc", err) == 0 &&
	          !strcmp(order(&v, &st), "1 2 4 3 5"),
	      "ascending, still missing last: %s", order(&v, &st));
	CHECK(popview_set_sort(&v, "time", NULL, err) == 0 && !strcmp(order(&v, &st), "4 2 1 3 5"),
	      "time ascending: %s", order(&v, &st));
	CHECK(popview_set_sort(&v, "origin", NULL, err) == 0 &&
	          !strcmp(order(&v, &st), "5 3 2 4 1"),
	      "origin by name, ties by id: %s", order(&v, &st));
	CHECK(popview_set_sort(&v, "idea", NULL, err) == 0 && !strcmp(order(&v, &st), "2 4 1 3 5"),
	      "idea text, none last: %s", order(&v, &st));
	CHECK(popview_set_sort(&v, "parent", "desc", err) == 0 &&
	          !strcmp(order(&v, &st), "4 5 2 3 1"),
	      "parent descending, the seed (no parent) last: %s", order(&v, &st));
	CHECK(popview_set_sort(&v, "colour", NULL, err) < 0 &&
	          strstr(err, "unknown column 'colour'") && strstr(err, "speedup"),
	      "an unknown column is named with the known ones (%s)", err);
	popview_cycle_sort(&v, POP_STATUS);
	CHECK(v.col == POP_STATUS && !v.desc, "cycling to status sorts ascending");
	popview_cycle_sort(&v, POP_STATUS);
	CHECK(v.desc, "cycling the same column reverses it");
	popview_set_sort(&v, "id", NULL, err);

	CHECK(filter(&v, "correct", err) == 0 && !strcmp(order(&v, &st), "1 2 4"),
	      "correct only: %s", order(&v, &st));
	CHECK(filter(&v, "failed", err) == 0 && !strcmp(order(&v, &st), "3"),
	      "failed: evaluated, not correct");
	CHECK(filter(&v, "new", err) == 0 && !strcmp(order(&v, &st), "5"), "new");
	CHECK(filter(&v, "llm", err) == 0 && !strcmp(order(&v, &st), "2 4"), "an origin word");
	CHECK(filter(&v, "origin=human", err) == 0 && !strcmp(order(&v, &st), "3"), "origin=human");
	CHECK(filter(&v, "origin!=llm correct", err) == 0 && !strcmp(order(&v, &st), "1"),
	      "terms combine: all must match");
	CHECK(filter(&v, "speedup>1.5", err) == 0 && !strcmp(order(&v, &st), "2 4"), "speedup>1.5");
	CHECK(filter(&v, "speedup>=2", err) == 0 && !strcmp(order(&v, &st), "2 4"), "speedup>=2");
	CHECK(filter(&v, "time<1", err) == 0 && !strcmp(order(&v, &st), "4"), "time<1");
	CHECK(filter(&v, "speedup<100", err) == 0 && !strcmp(order(&v, &st), "1 2 4"),
	      "a candidate without a speedup matches no comparison on it");
	CHECK(filter(&v, "parent=2", err) == 0 && !strcmp(order(&v, &st), "4 5"), "parent=2");
	CHECK(filter(&v, "id<=2", err) == 0 && !strcmp(order(&v, &st), "1 2"), "id<=2");
	CHECK(filter(&v, "idea~SHARED", err) == 0 && !strcmp(order(&v, &st), "2"),
	      "idea~ ignores case");
	CHECK(filter(&v, "idea!~shared", err) == 0 && !strcmp(order(&v, &st), "1 3 4 5"), "idea!~");
	CHECK(filter(&v, "name=k.c", err) == 0 && !strcmp(order(&v, &st), "1 2 3 4 5"), "name=");
	CHECK(!strcmp(v.zFilter, "name=k.c"), "the filter as written is kept");

	CHECK(filter(&v, "correct", err) == 0, "set a filter");
	CHECK(filter(&v, "speed>1", err) < 0 && strstr(err, "unknown field 'speed'"),
	      "an unknown field (%s)", err);
	CHECK(!strcmp(order(&v, &st), "1 2 4"), "a bad filter leaves the old one in place");
	CHECK(filter(&v, "speedup>fast", err) < 0 && strstr(err, "takes a number"),
	      "a number is needed (%s)", err);
	CHECK(filter(&v, "origin>llm", err) < 0 && strstr(err, "is text"),
	      "text fields take no < > (%s)", err);
	CHECK(filter(&v, "speedup>", err) < 0 && strstr(err, "no value"), "a missing value (%s)",
	      err);
	CHECK(filter(&v, "banana", err) < 0 && strstr(err, "neither a status"),
	      "a bare unknown word (%s)", err);
	CHECK(filter(&v, "all", err) == 0 && !strcmp(order(&v, &st), "1 2 3 4 5") && v.nTerm == 0,
	      "all clears the filter");
	CHECK(filter(&v, "correct", err) == 0 && filter(&v, "", err) == 0 && v.nTerm == 0,
	      "no terms clear it too");

	strbuf sb = STRBUF_INIT;
	popview_set_sort(&v, "speedup", NULL, err);
	filter(&v, "correct", err);
	popview_describe(&v, &sb);
	CHECK(!strcmp(sb.buf, "sorted by speedup, descending; filter: correct"), "described: %s",
	      sb.buf);
	sb_free(&sb);

	/* the order follows the state as it grows */
	popview_refresh(&v, &st);
	add(&st, 6, "llm", 4, NULL);
	finish(&st, 6, "correct", 0.25, 8.0);
	CHECK(!strcmp(order(&v, &st), "6 4 2 1"), "a new candidate takes its place: %s",
	      order(&v, &st));
	CHECK(popview_row(&v, &st, 2) == 2 && popview_row(&v, &st, 3) == -1,
	      "rows of shown and hidden ids");

	popview_free(&v);
	state_free(&st);
	return check_done();
}
