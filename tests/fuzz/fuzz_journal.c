/*
 * fuzz_journal.c - libFuzzer target for the session journal reader: the
 * input is a journal file (JSON lines, maybe truncated or malformed); it is
 * read with journal_read(), folded into a state as kloop session does
 * (session_open read-only), and stepped through as kloop replay does
 * (replay_open, replay_seek to each event, replay_describe).  Checks that
 * the events plus the bad lines account for every non-empty line, and that
 * each description is terminal-clean once sanitised.
 * The file lives in a memfd (no disk I/O per run).  Build and run: make fuzz.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "journal.h"
#include "replay.h"
#include "session.h"
#include "util.h"

#define REQUIRE(c)                                                                                 \
	do {                                                                                       \
		if (!(c)) {                                                                        \
			fprintf(stderr, "REQUIRE failed at %s:%d: %s\n", __FILE__, __LINE__, #c);  \
			__builtin_trap();                                                          \
		}                                                                                  \
	} while (0)

static int fd = -1;
static char path[64];

static void on_event(const cJSON *ev, const char *zLine, size_t nLine, int line, void *arg)
{
	int *pn = arg;
	REQUIRE(cJSON_IsObject(ev) && line >= 1 && zLine && nLine >= 2 &&
	        memchr(zLine, '}', nLine));
	pn[0]++;
}

static void on_bad(int line, const char *zWhy, int truncated, void *arg)
{
	int *pn = arg;
	REQUIRE(line >= 1 && zWhy && *zWhy && (truncated == 0 || truncated == 1));
	pn[1]++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (fd < 0) {
		fd = memfd_create("kloop-fuzz-journal", 0);
		REQUIRE(fd >= 0);
		snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	}
	REQUIRE(ftruncate(fd, 0) == 0);
	REQUIRE(pwrite(fd, data, size, 0) == (ssize_t)size);
	char err[KL_ERRLEN];
	int counts[2] = {0, 0};
	int n = journal_read(path, on_event, on_bad, counts, err);
	REQUIRE(n == counts[0]);
	int lines = 0;
	for (size_t i = 0; i < size;) {
		const uint8_t *nl = memchr(data + i, '\n', size - i);
		size_t len = nl ? (size_t)(nl - (data + i)) : size - i;
		lines += len > 0;
		i += len + 1;
	}
	REQUIRE(counts[0] + counts[1] == lines);

	struct session *s = session_open(path, 0, err);
	REQUIRE(s);
	REQUIRE(s->st.nEvents <= n);
	session_close(s);

	struct replay *r = replay_open(path, err);
	if (r) {
		for (int i = 0; i < r->nEv && i < 64; i++) {
			char d[300];
			replay_describe(r, i, d, sizeof d);
			char *z = term_clean(d, 0);
			REQUIRE(term_is_clean(z, strlen(z), 0));
			free(z);
			char *t = replay_event_text(r, i);
			free(t);
		}
		replay_seek(r, r->nEv);
		replay_seek(r, r->nEv / 2);
		replay_close(r);
	}
	return 0;
}
