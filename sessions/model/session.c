/*
 * session.c - opening a session journal (fold, then append) and emitting
 * events through the journal into the state.
 */
#include "session.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "event.h"

static void on_event(const cJSON *ev, const char *zLine, size_t nLine, int line, void *arg)
{
	(void)zLine, (void)nLine;
	struct session *s = arg;
	char err[KL_ERRLEN];
	s->nSeen++;
	if (state_apply(&s->st, ev, err) < 0) {
		sb_addf(&s->warnings, "%s:%d: event ignored: %s\n", s->zPath, line, err);
		s->nBad++;
	}
}

static void on_bad(int line, const char *zWhy, int truncated, void *arg)
{
	struct session *s = arg;
	s->nSeen++;
	s->nTruncated += truncated != 0;
	sb_addf(&s->warnings, "%s:%d: %s%s\n", s->zPath, line, zWhy,
	        truncated ? " (a truncated last line, from a write cut short; ignored)"
	                  : "; line ignored");
	s->nBad++;
}

/* whether the file folded into s is something else than a journal (err
 * says what and where): its first byte is not '{', not one of its lines is
 * an event and they are not all a last line cut short, or its events do not
 * begin a session */
static int not_a_journal(struct session *s, char *err)
{
	FILE *f = fopen(s->zPath, "rb");
	int c = EOF;
	while (f && (c = fgetc(f)) != EOF && (c == ' ' || c == '\t' || c == '\n' || c == '\r'))
		;
	if (f)
		fclose(f);
	if (c == EOF)
		return 0; /* empty: a new session */
	const char *zWhy = NULL;
	if (c != '{')
		zWhy = "it does not start with '{'";
	else if (s->st.nEvents == 0 && s->nBad > s->nTruncated)
		zWhy = "none of its lines is a session event";
	else if (s->st.nEvents > 0 && !s->st.zTask)
		/* kloop's journals begin with session_started: events without it
		 * (another tool's JSON lines that happen to have a "type") are not
		 * a session to go on with */
		zWhy = "it has no session_started event, which every journal begins with";
	if (!zWhy)
		return 0;
	const char *nl = s->warnings.buf ? strchr(s->warnings.buf, '\n') : NULL;
	kl_err(err,
	       "%s is not a kloop session journal (%s; first: %.*s): nothing was written to "
	       "it; give --session a new file or an existing journal",
	       s->zPath, zWhy, nl ? (int)(nl - s->warnings.buf) : 0, nl ? s->warnings.buf : "");
	return 1;
}

struct session *session_open(const char *zPath, int bWrite, char *err)
{
	struct session *s = xcalloc(1, sizeof *s);
	state_init(&s->st);
	s->zPath = xstrdup(zPath);
	/* the lock first, so that nothing is appended between the fold and us */
	if (bWrite && !(s->j = journal_open(zPath, err))) {
		int e = errno;
		session_close(s);
		errno = e;
		return NULL;
	}
	if (!bWrite && !path_exists(zPath)) {
		kl_err(err, "%s: no such session journal", zPath);
		session_close(s);
		return NULL;
	}
	if (journal_read(zPath, on_event, on_bad, s, err) < 0) {
		session_close(s);
		errno = 0;
		return NULL;
	}
	if (bWrite && not_a_journal(s, err)) {
		session_close(s);
		errno = 0;
		return NULL;
	}
	return s;
}

void session_close(struct session *s)
{
	if (!s)
		return;
	journal_close(s->j);
	cJSON_Delete(s->last);
	state_free(&s->st);
	sb_free(&s->warnings);
	free(s->zLost);
	free(s->zPath);
	free(s);
}

int session_emit(struct session *s, cJSON *ev, char *err)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	cJSON_AddNumberToObject(ev, "ts", (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9);
	cJSON_AddNumberToObject(ev, "seq", s->st.nEvents + 1);
	cJSON_Delete(s->last);
	s->last = NULL;
	if (state_check(&s->st, ev, err) < 0) {
		cJSON_Delete(ev);
		return -1;
	}
	if (s->j && s->nLost) {
		s->nLost++; /* the journal stays the whole prefix it is */
	} else if (s->j && journal_append(s->j, ev, err) < 0) {
		s->nLost++;
		s->zLost = xstrdup(err);
		if (s->onLost)
			s->onLost(s->lostArg, err);
	}
	int rc = state_apply(&s->st, ev, err);
	cJSON_Delete(s->last);
	s->last = ev;
	return rc;
}

const cJSON *session_last(const struct session *s)
{
	return s->last;
}

struct session *session_memory(void)
{
	struct session *s = xcalloc(1, sizeof *s);
	state_init(&s->st);
	s->zPath = xstrdup("(no journal)");
	return s;
}

int session_saved(const struct session *s, FILE *f)
{
	if (!s)
		return 0;
	if (s->nLost) {
		char *z = term_clean(s->zLost, 0);
		fprintf(stderr,
		        "kloop: error: %d event%s could not be written to the session journal "
		        "%s (the first: %s); it holds the session up to there (%d events)\n",
		        s->nLost, s->nLost == 1 ? "" : "s", s->zPath, z, s->st.nEvents - s->nLost);
		free(z);
		return -1;
	}
	if (s->j && f)
		fprintf(f, "kloop: session saved in %s\n", s->zPath);
	return 0;
}
