/*
 * test_journal.c - the session journal: events appended one per line and
 * folded back into the state; a truncated last line (a crash mid-write) and
 * malformed lines are reported and skipped; appending after a truncation
 * starts on a fresh line.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/stat.h>
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

struct lost_seen {
	int n;
	char zErr[KL_ERRLEN];
};

static void on_lost(void *arg, const char *zErr)
{
	struct lost_seen *ls = arg;
	ls->n++;
	snprintf(ls->zErr, sizeof ls->zErr, "%s", zErr);
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
	e = cJSON_Parse(
	    "{\"type\":\"eval_finished\",\"candidate\":2,\"result\":{\"status\":\"correct\","
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
	CHECK(s && session_emit(s, cand_added(3, "llm"), err) == 0,
	      "appending after a truncated line");
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
	      "malformed lines are reported with their line numbers (%s)",
	      s ? s->warnings.buf : err);
	session_close(s);

	s = session_open("/nonexistent-dir/x.jsonl", 1, err);
	CHECK(!s && strstr(err, "/nonexistent-dir/x.jsonl") && strstr(err, "cannot open"),
	      "an unwritable session path is a clear error (%s)", err);
	s = session_open("/tmp/kloop-no-such-journal", 0, err);
	CHECK(!s && strstr(err, "no such session journal"), "a missing journal is a clear error");

	/* one writer: a second open for appending is refused, naming the holder */
	s = session_open(path, 1, err);
	CHECK(s != NULL, "the journal opens for writing again (%s)", s ? "" : err);
	errno = 0;
	struct session *s2 = session_open(path, 1, err);
	char pid[32];
	snprintf(pid, sizeof pid, "(pid %d: ", (int)getpid());
	CHECK(!s2 && errno == EBUSY && strstr(err, "open for writing in another process") &&
	          strstr(err, pid) && strstr(err, "test_journal"),
	      "a second writer gets EBUSY and the holder's pid and command (%s)", err);
	s2 = session_open(path, 0, err);
	CHECK(s2 && s2->st.nCand == s->st.nCand, "a read-only open still works while it is held");
	session_close(s2);
	session_close(s);
	s = session_open(path, 1, err);
	CHECK(s != NULL, "closing the writer frees the journal (%s)", s ? "" : err);
	int nBadBefore = s ? s->nBad : -1;

	/* a failed append (a file size limit) is cut back to a whole line and
	 * counted; the event is applied in memory (the work under way stays
	 * whole), nothing after it is appended (the journal stays a whole
	 * prefix), and session_saved says events were lost, never "saved" */
	struct rlimit old, small;
	getrlimit(RLIMIT_FSIZE, &old);
	struct stat st;
	stat(path, &st);
	small.rlim_cur = (rlim_t)st.st_size + 40;
	small.rlim_max = old.rlim_max;
	signal(SIGXFSZ, SIG_IGN);
	struct lost_seen ls = {0};
	s->onLost = on_lost;
	s->lostArg = &ls;
	/* the limit applies to this test's own output too (a log file larger
	 * than it): nothing is printed until it is lifted */
	fflush(stdout);
	setrlimit(RLIMIT_FSIZE, &small);
	int rcEmit = session_emit(s, cand_added(50, "human"), err);
	setrlimit(RLIMIT_FSIZE, &old);
	CHECK(rcEmit == 0 && ls.n == 1 && strstr(ls.zErr, "cannot append"),
	      "an append over the file size limit fails, and onLost is told why (%s)", ls.zErr);
	off_t sizeCut;
	stat(path, &st);
	sizeCut = st.st_size;
	CHECK((rlim_t)st.st_size < small.rlim_cur, "and leaves no partial line");
	CHECK(s->nLost == 1 && state_cand(&s->st, 50) != NULL,
	      "the event is counted lost, and applied in memory");
	CHECK(session_emit(s, cand_added(51, "human"), err) == 0 && state_cand(&s->st, 51),
	      "the next event is applied too");
	stat(path, &st);
	CHECK(st.st_size == sizeCut && s->nLost == 2 && ls.n == 1,
	      "but not appended (no hole in the journal), counted, onLost told once");
	FILE *fs = tmpfile();
	CHECK(session_saved(s, fs) < 0, "session_saved reports the loss");
	rewind(fs);
	char line[256] = "";
	CHECK(!fgets(line, sizeof line, fs), "and prints no 'session saved'");
	fclose(fs);
	session_close(s);
	s = session_open(path, 0, err);
	CHECK(s && s->nBad == nBadBefore && !state_cand(&s->st, 50) && !state_cand(&s->st, 51),
	      "the journal reads back whole up to the loss: the old bad lines only, neither "
	      "lost candidate (%s)",
	      s ? s->warnings.buf : err);
	session_close(s);

	/* a file that is not a journal is never appended to */
	char *src = xasprintf("%s.c", path);
	f = fopen(src, "w");
	fputs("int kl_run(void) { return 0; }\n", f);
	fclose(f);
	s = session_open(src, 1, err);
	CHECK(!s && strstr(err, "is not a kloop session journal (it does not start with '{'") &&
	          strstr(err, ":1: not valid JSON"),
	      "a C source as the journal is refused, naming the file and its first line (%s)", err);
	stat(src, &st);
	CHECK(st.st_size == 31, "and left as it was");
	f = fopen(src, "w");
	fputs("{\"not\": \"an event\"}\n{also not}\n", f);
	fclose(f);
	s = session_open(src, 1, err);
	CHECK(!s && strstr(err, "none of its lines is a session event"),
	      "a JSON file of no events is refused too (%s)", err);
	f = fopen(src, "w");
	fputs("{\"type\":\"session_sta", f); /* the first write, cut by kill -9 */
	fclose(f);
	s = session_open(src, 1, err);
	CHECK(s != NULL, "a journal whose only line was cut short opens (%s)", s ? "" : err);
	session_close(s);
	unlink(src);
	free(src);
	unlink(path);
	return check_done();
}
