/*
 * test_session.c - a session through its journal and the event table:
 * session_begin() and the typed emitters write events that a reopened
 * session folds back into the same state; an event the state rejects is
 * neither applied nor written; a session of another task is refused; a
 * session in memory writes nothing; the table names every type once and
 * ignores (but counts) a type it does not know; statuses have names and
 * predicates; a journal written before the event table folds as it did.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "emit.h"
#include "session.h"
#include "slurp.h"
#include "status.h"
#include "util.h"

/* the lines of file zPath */
static int lines(const char *zPath)
{
	size_t len;
	char *z = slurp(zPath, &len);
	int n = 0;
	for (size_t i = 0; i < len; i++)
		n += z[i] == '\n';
	free(z);
	return n;
}

int main(void)
{
	char dir[] = "/tmp/kloop-test-session.XXXXXX";
	char err[KL_ERRLEN];
	CHECK(mkdtemp(dir) != NULL, "a directory");
	char *path = xasprintf("%s/s.jsonl", dir);

	/* the table */
	int named = 1;
	for (int i = 0; i < EV_COUNT; i++) {
		named &= ev_table[i].name && ev_table[i].apply;
		for (int k = 0; k < i; k++)
			named &= strcmp(ev_table[i].name, ev_table[k].name) != 0;
	}
	CHECK(named, "every event type has a name of its own and an apply");
	cJSON *e = cJSON_Parse("{\"type\": \"eval_finished\"}");
	CHECK(ev_type_of(e) == EV_EVAL_FINISHED &&
	          !strcmp(ev_name(EV_EVAL_FINISHED), "eval_finished"),
	      "a type's name and back");
	cJSON_Delete(e);
	e = cJSON_Parse("{\"type\": \"from_the_future\"}");
	CHECK(ev_type_of(e) == EV_UNKNOWN, "an unknown type is EV_UNKNOWN");
	cJSON_Delete(e);

	/* statuses */
	CHECK(status_from_name("compile_error") == STATUS_COMPILE_ERROR &&
	          !strcmp(status_name(STATUS_TIMEOUT), "timeout") &&
	          status_from_name("no such") == STATUS_ERROR,
	      "status names both ways; an unknown name is an error");
	CHECK(!status_finished(STATUS_NEW) && !status_finished(STATUS_EVALUATING) &&
	          status_finished(STATUS_CORRECT) && status_failed(STATUS_CRASHED) &&
	          !status_failed(STATUS_CORRECT) && status_fixable(STATUS_INCORRECT) &&
	          !status_fixable(STATUS_ERROR),
	      "finished, failed and fixable");

	/* a new session */
	struct session *s = session_open(path, 1, err);
	CHECK(s != NULL, "a new journal opens for writing (%s)", s ? "" : err);
	if (!s)
		return check_done();
	CHECK(session_begin(s, "softmax", "/tasks/softmax", "host", NULL, err) == 0,
	      "session_started");
	int par[1] = {0};
	struct ev_candidate c = {.zName = "seed.c", .zOrigin = "seed", .zSource = "int a;"};
	par[0] = ev_candidate_added(s, &c, err);
	struct ev_candidate c2 = {.zName = "cand2.c",
	                          .zOrigin = "human",
	                          .aParent = par,
	                          .nParent = 1,
	                          .zSource = "int b;",
	                          .zIdea = "unroll"};
	int id2 = ev_candidate_added(s, &c2, err);
	CHECK(par[0] == 1 && id2 == 2, "candidates get the next ids (%d, %d)", par[0], id2);
	cJSON *r = cJSON_Parse("{\"status\": \"correct\", \"timing\": {\"median_ms\": 2}, "
	                       "\"speedup\": 1.5, \"baseline_ms\": 3}");
	CHECK(ev_eval_started(s, 2, "host", 0, err) == 0 &&
	          state_cand(&s->st, 2)->status == STATUS_EVALUATING,
	      "eval_started: the candidate is being evaluated");
	CHECK(ev_eval_finished(s, 2, r, err) == 0 &&
	          state_cand(&s->st, 2)->status == STATUS_CORRECT &&
	          state_cand(&s->st, 2)->timeMs == 2 && state_cand(&s->st, 2)->speedup == 1.5,
	      "eval_finished: its verdict, time and speedup");
	cJSON_Delete(r);
	struct ev_idea d = {.zTitle = "tile it", .zDescription = "use tiles", .zOrigin = "human"};
	int idea = ev_idea_proposed(s, &d, err);
	CHECK(idea == 1 && ev_idea_accepted(s, idea, err) == 0 &&
	          state_idea(&s->st, idea)->status == IDEA_ACCEPTED,
	      "an idea proposed and accepted");
	int n = lines(path);
	CHECK(ev_eval_started(s, 9, "host", 0, err) < 0 && strstr(err, "does not exist") &&
	          lines(path) == n && s->st.nEvents == n,
	      "an event for no candidate is refused, neither written nor applied (%s)", err);
	CHECK(ev_idea_rejected(s, 7, NULL, err) < 0 && strstr(err, "no idea 7"),
	      "an emitter for no such idea says so (%s)", err);
	/* an event of a newer kloop */
	cJSON *fut = cJSON_Parse("{\"type\": \"from_the_future\", \"x\": 1}");
	CHECK(session_emit(s, fut, err) == 0 && s->st.nEvents == n + 1,
	      "an unknown event type is journaled and counted");
	session_close(s);

	/* reopened: the same state */
	s = session_open(path, 0, err);
	CHECK(s && s->st.nCand == 2 && s->st.nEvents == n + 1 && !s->nBad &&
	          state_cand(&s->st, 2)->status == STATUS_CORRECT &&
	          state_cand(&s->st, 2)->aParent[0] == 1 &&
	          !strcmp(state_cand(&s->st, 2)->zIdea, "unroll") && s->st.baselineMs == 3 &&
	          s->st.nIdea == 1 && !strcmp(s->st.zBackend, "host"),
	      "a reopened journal folds back into the same state");
	CHECK(s && session_begin(s, "layernorm", "/x", "host", NULL, err) < 0 &&
	          strstr(err, "for task 'softmax', not 'layernorm'"),
	      "a session of another task is refused (%s)", err);
	session_close(s);

	/* a truncated last line (a write cut short) is reported, not fatal */
	FILE *f = fopen(path, "a");
	fputs("{\"type\": \"candidate_added\", \"id\": 3, \"na", f);
	fclose(f);
	s = session_open(path, 1, err);
	CHECK(s && s->nBad == 1 && strstr(s->warnings.buf, "truncated") && s->st.nCand == 2,
	      "a truncated last line is a warning and the rest folds");
	c.zSource = "int c;";
	CHECK(s && ev_candidate_added(s, &c, err) == 3, "... and the journal goes on after it");
	session_close(s);
	s = session_open(path, 0, err);
	CHECK(s && s->st.nCand == 3, "the event after the cut line reads back");
	session_close(s);

	/* in memory */
	s = session_memory();
	CHECK(session_begin(s, "softmax", "/x", "host", NULL, err) == 0 &&
	          ev_candidate_added(s, &c, err) == 1 && s->st.nCand == 1 && !s->j,
	      "a session in memory folds its events and has no journal");
	session_close(s);

	/* a journal written by kloop before the event table (ideas, implement,
	 * eval, then revise and reject in the shell) folds as it did */
	s = session_open("tests/fixtures/journal_before_driver.jsonl", 0, err);
	const struct state *st = s ? &s->st : NULL;
	CHECK(s && !s->nBad && st->nEvents == 19 && st->nCand == 3 &&
	          !strcmp(st->zTask, "softmax") && !strcmp(st->zBackend, "host"),
	      "a journal from before the driver opens: 19 events, 3 candidates, no warning");
	CHECK(st && state_cand(st, 1)->status == STATUS_CORRECT &&
	          !strcmp(state_cand(st, 1)->zOrigin, "seed") &&
	          state_cand(st, 2)->status == STATUS_CORRECT && state_cand(st, 2)->ideaId == 2 &&
	          !strcmp(state_cand(st, 2)->zIdea, "Multiply by the reciprocal") &&
	          state_cand(st, 2)->aParent[0] == 1 && state_cand(st, 2)->speedup > 0 &&
	          state_cand(st, 3)->status == STATUS_INCORRECT &&
	          !strcmp(state_cand(st, 3)->zName, "zeros.c"),
	      "... its candidates, verdicts, parents and the idea an LLM candidate implements");
	CHECK(st && st->nIdea == 2 && state_idea(st, 1)->status == IDEA_REJECTED &&
	          state_idea(st, 1)->edited &&
	          !strcmp(state_idea(st, 1)->zTitle, "Fused max and sum") &&
	          state_idea(st, 2)->status == IDEA_ACCEPTED && st->llm.nRequests == 2 &&
	          st->llm.nResponses == 2 && st->llm.nFailed == 0,
	      "... its ideas (one revised and rejected, one accepted) and its LLM traffic");
	session_close(s);

	unlink(path);
	rmdir(dir);
	free(path);
	return check_done();
}
