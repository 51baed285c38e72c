/*
 * test_replay.c - stepping through a journal (sessions/model/replay.c): the
 * fold at any point, forward and back, bad lines, and the prefix written
 * for continuing as a new session.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "replay.h"
#include "session.h"

static char dir[] = "/tmp/kloop-test-replay.XXXXXX";

/* DIR/name, kept until the end (freed with the others) */
static char *azPath[16];
static int nPath;
static char *path(const char *name)
{
	return azPath[nPath++] = xasprintf("%s/%s", dir, name);
}

int main(void)
{
	char err[KL_ERRLEN];
	if (!mkdtemp(dir))
		return 1;
	char *j = path("s.jsonl");
	FILE *f = fopen(j, "w");
	fputs("{\"type\":\"session_started\",\"task\":\"t\",\"backend\":\"host\",\"ts\":100}\n"
	      "{\"type\":\"candidate_added\",\"id\":1,\"origin\":\"seed\",\"source\":\"a\",\"ts\":"
	      "101}\n"
	      "{\"type\":\"eval_started\",\"candidate\":1}\n"
	      "this line is not JSON\n"
	      "{\"type\":\"eval_finished\",\"candidate\":1,\"result\":{\"status\":\"correct\","
	      "\"speedup\":2,"
	      "\"timing\":{\"median_ms\":1}},\"ts\":102}\n"
	      "{\"type\":\"candidate_added\",\"id\":2,\"origin\":\"human\",\"parents\":[1],"
	      "\"source\":\"b\"}\n"
	      "{\"type\":\"eval_finished\",\"candidate\":9,\"result\":{\"status\":\"correct\"}}\n"
	      "{\"type\":\"candidate_added\",\"id\":3,\"orig",
	      f);
	fclose(f);
	struct replay *r = replay_open(j, err);
	CHECK(r != NULL, "a journal with bad lines opens (%s)", r ? "" : err);
	CHECK(r->nEv == 6, "six events (the bad and the truncated lines skipped): %d", r->nEv);
	CHECK(r->k == 6 && r->st.nCand == 2, "at first the state is the end's");
	CHECK(strstr(r->warnings.buf, ":4: not valid JSON") &&
	          strstr(r->warnings.buf, ":8: a truncated last line") &&
	          strstr(r->warnings.buf, "s.jsonl:7: event 6 ignored"),
	      "the warnings name the lines and the rejected event, with its line");
	CHECK(r->nBad == 3, "three bad lines or events: %d", r->nBad);
	replay_seek(r, 2);
	CHECK(r->k == 2 && r->st.nCand == 1 && !strcmp(r->st.aCand[0].zStatus, "new"),
	      "back to event 2");
	replay_seek(r, 4);
	CHECK(state_cand(&r->st, 1)->speedup == 2 && state_cand(&r->st, 1)->tsEval == 102,
	      "forward to event 4: the result and its time");
	CHECK(r->st.tsStarted == 100 && state_cand(&r->st, 1)->tsAdded == 101,
	      "the start and add times");
	replay_seek(r, -5);
	CHECK(r->k == 0 && r->st.nCand == 0 && r->st.zTask == NULL,
	      "before the first event: empty");
	replay_seek(r, 1000);
	CHECK(r->k == 6 && r->st.nCand == 2, "past the end: the end");
	CHECK(r->nBad == 3, "refolding reports nothing twice");

	char d[200];
	replay_describe(r, 1, d, sizeof d);
	CHECK(!strcmp(d, "candidate_added #1 (seed)"), "event 2 described: %s", d);
	replay_describe(r, 4, d, sizeof d);
	CHECK(!strcmp(d, "candidate_added #2 (human, parents 1)"), "event 5 described: %s", d);
	replay_describe(r, 3, d, sizeof d);
	CHECK(!strcmp(d, "eval_finished #1: correct"), "event 4 described: %s", d);
	replay_describe(r, 0, d, sizeof d);
	CHECK(!strcmp(d, "session_started (t on host)"), "event 1 described: %s", d);
	replay_describe(r, 99, d, sizeof d);
	CHECK(!strcmp(d, "-"), "out of range: -");

	char *p = path("cont.jsonl");
	CHECK(replay_write_prefix(r, 4, p, err) == 0,
	      "the first 4 events written to a new journal");
	struct session *s = session_open(p, 0, err);
	CHECK(s && s->st.nEvents == 4 && s->st.nCand == 1 &&
	          !strcmp(s->st.aCand[0].zStatus, "correct"),
	      "which folds to the state after event 4");
	session_close(s);
	CHECK(replay_write_prefix(r, 4, p, err) < 0 && strstr(err, "cannot create"),
	      "an existing file is not overwritten (%s)", err);
	CHECK(replay_write_prefix(r, 7, path("x.jsonl"), err) < 0 &&
	          strstr(err, "outside the journal"),
	      "a point past the end is refused (%s)", err);
	replay_close(r);

	char *e = path("empty.jsonl");
	f = fopen(e, "w");
	fputs("\n\n", f);
	fclose(f);
	CHECK(replay_open(e, err) == NULL && strstr(err, "holds no events"),
	      "an empty journal is refused (%s)", err);
	CHECK(replay_open(path("missing.jsonl"), err) == NULL && strstr(err, "missing.jsonl"),
	      "a missing journal is named (%s)", err);
	/* found by fuzz_journal: events without their numbers were described by
	 * converting NaN to int (undefined; UBSan stops the test here) */
	char *nn = path("nonumbers.jsonl");
	f = fopen(nn, "w");
	fputs(
	    "{\"type\":\"eval_finished\"}\n{\"type\":\"candidate_added\",\"id\":\"x\"}\n"
	    "{\"type\":\"round_started\"}\n{\"type\":\"compile_baseline\"}\n"
	    "{\"type\":\"compile_baseline\",\"device\":\"H100\",\"compile\":{\"median_ms\":0.1418,"
	    "\"compile_seconds\":5.04}}\n",
	    f);
	fclose(f);
	r = replay_open(nn, err);
	CHECK(r != NULL, "a journal of events without numbers opens (%s)", r ? "" : err);
	if (r) {
		replay_describe(r, 0, d, sizeof d);
		CHECK(!strcmp(d, "eval_finished #0"),
		      "an eval event without a candidate is #0 (%s)", d);
		replay_describe(r, 1, d, sizeof d);
		CHECK(!strncmp(d, "candidate_added #0", 18),
		      "a candidate with a text id is #0 (%s)", d);
		replay_describe(r, 2, d, sizeof d);
		CHECK(!strcmp(d, "round_started 0"), "a search round without its number is 0 (%s)",
		      d);
		replay_describe(r, 3, d, sizeof d);
		CHECK(!strcmp(d, "compile_baseline on ?: not measured"),
		      "a compile_baseline without its record says so (%s)", d);
		replay_describe(r, 4, d, sizeof d);
		CHECK(
		    !strcmp(
		        d, "compile_baseline on H100: torch.compile 0.1418 ms (compiled in 5.0 s)"),
		    "a compile_baseline names the device, the time and the compile (%s)", d);
		replay_close(r);
	}
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	if (system(cmd) != 0)
		return 1;
	while (nPath)
		free(azPath[--nPath]);
	return check_done();
}
