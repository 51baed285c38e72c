/*
 * test_journal.c - the session journal: events appended one per line and
 * folded back into the state; a truncated last line (a crash mid-write) and
 * malformed lines are reported and skipped; appending after a truncation
 * starts on a fresh line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "session.h"

static cJSON *cand_added(int id, const char *origin)
{
	cJSON *e = cJSON_CreateObject();
	cJSON_AddStringToObject(e, "type", "candidate_added");
	cJSON_AddNumberToObject(e, "id", id);
	cJSON_AddStringToObject(e, "name", "c.c");
	cJSON_AddStringToObject(e, "origin", origin);
	cJSON_AddStringToObject(e, "source", "int kl_run;");
	return e;
}

int main(void)
{
	char path[] = "/tmp/kloop-test-journal.XXXXXX";
	int fd = mkstemp(path);
	close(fd);
	unlink(path);
	char err[KL_ERRLEN];
	struct session *s = session_open(path, 1, err);
	CHECK(s != NULL, "a new journal is created (%s)", s ? "" : err);
	cJSON *e = cJSON_CreateObject();
	cJSON_AddStringToObject(e, "type", "session_started");
	cJSON_AddStringToObject(e, "task", "softmax");
	cJSON_AddStringToObject(e, "backend", "host");
	CHECK(session_emit(s, e, err) == 0, "session_started appended");
	CHECK(session_emit(s, cand_added(1, "seed"), err) == 0, "candidate 1 appended");
	CHECK(session_emit(s, cand_added(2, "human"), err) == 0, "candidate 2 appended");
	e = cJSON_Parse("{\"type\":\"eval_finished\",\"candidate\":2,\"result\":{\"status\":\"correct\","
			"\"timing\":{\"median_ms\":1.5},\"speedup\":2.0,\"baseline_ms\":3.0}}");
	CHECK(session_emit(s, e, err) == 0, "a result appended");
	e = cJSON_Parse("{\"type\":\"eval_finished\",\"candidate\":9,\"result\":{}}");
	CHECK(session_emit(s, e, err) < 0 && strstr(err, "does not exist"),
	      "a result for an unknown candidate is refused (%s)", err);
	CHECK(s->st.nCand == 2 && !strcmp(state_cand(&s->st, 2)->zStatus, "correct"),
	      "the live state follows the events");
	session_close(s);

	/* fold it back */
	s = session_open(path, 0, err);
	CHECK(s && s->st.nCand == 2 && s->nBad == 0 && !strcmp(s->st.zTask, "softmax"),
	      "reopening folds the same state");
	struct cand *c = s ? state_cand(&s->st, 2) : NULL;
	CHECK(c && c->timeMs == 1.5 && c->speedup == 2.0 && !strcmp(c->zOrigin, "human") &&
		      s->st.baselineMs == 3.0,
	      "a folded candidate keeps origin, median time and speedup");
	int events = s ? s->st.nEvents : 0;
	session_close(s);

	/* a crash mid-write leaves half a line */
	FILE *f = fopen(path, "a");
	fputs("{\"type\":\"candidate_added\",\"id\":3,\"na", f);
	fclose(f);
	s = session_open(path, 0, err);
	CHECK(s && s->st.nCand == 2 && s->nBad == 1 && strstr(s->warnings.buf, "truncated"),
	      "a truncated last line is reported and skipped (%s)", s ? s->warnings.buf : err);
	CHECK(s && s->st.nEvents == events, "the events before it are all applied");
	session_close(s);

	/* appending after the truncation starts a fresh line */
	s = session_open(path, 1, err);
	CHECK(s && session_emit(s, cand_added(3, "llm"), err) == 0, "appending after a truncated line");
	session_close(s);
	s = session_open(path, 0, err);
	CHECK(s && s->st.nCand == 3 && s->nBad == 1 && state_cand(&s->st, 3),
	      "the new event is read back; only the broken line is lost");
	session_close(s);

	/* malformed lines in the middle */
	f = fopen(path, "a");
	fputs("this is not json\n[1,2]\n{\"no_type\":1}\n", f);
	fclose(f);
	s = session_open(path, 0, err);
	CHECK(s && s->nBad == 4 && s->st.nCand == 3 && strstr(s->warnings.buf, ":7:"),
	      "malformed lines are reported with their line numbers (%s)", s ? s->warnings.buf : err);
	session_close(s);

	s = session_open("/nonexistent-dir/x.jsonl", 1, err);
	CHECK(!s && strstr(err, "/nonexistent-dir/x.jsonl") && strstr(err, "cannot open"),
	      "an unwritable session path is a clear error (%s)", err);
	s = session_open("/tmp/kloop-no-such-journal", 0, err);
	CHECK(!s && strstr(err, "no such session journal"), "a missing journal is a clear error");
	unlink(path);
	return check_done();
}
