/*
 * archive_live.c - the live hook: a running session's new wins and dead
 * ends noted after each evaluation, in the process's archive.
 */
#include "archive_priv.h"

#include <stdlib.h>
#include <string.h>

static struct archive *gLive;            /* the process's archive, opened on first use */
static struct archive_track *aLiveTrack; /* the sessions it has seen */
static size_t nLiveTrack, nLiveTrackAlloc;
static int nLiveFailed; /* failures in a row (only the first is reported) */

struct archive *archive_live(int bCreate, char *err)
{
	if (gLive)
		return gLive;
	char *path = archive_default_path();
	if (!path) {
		kl_err(err, "the archive is off ($KLOOP_ARCHIVE)");
		return NULL;
	}
	if (bCreate || path_exists(path))
		gLive = archive_open(path, bCreate, 100, err);
	else
		kl_err(err, "%s: no archive yet", path);
	free(path);
	return gLive;
}

int archive_note_session(const struct state *st, const char *zJournal, char *err)
{
	if (!zJournal || !st->zTask || !path_exists(zJournal))
		return 0; /* a session without a journal (session_memory) */
	char *p = archive_default_path();
	int off = !p;
	free(p);
	if (off)
		return 0;
	struct archive *a = archive_live(1, err);
	if (!a) {
		if (nLiveFailed++)
			*err = 0;
		return -1;
	}
	struct archive_track *t = NULL;
	for (size_t i = 0; i < nLiveTrack && !t; i++)
		if (!strcmp(aLiveTrack[i].zJournal, zJournal))
			t = &aLiveTrack[i];
	if (!t) {
		xgrow((void **)&aLiveTrack, &nLiveTrackAlloc, nLiveTrack + 1, sizeof *aLiveTrack);
		t = &aLiveTrack[nLiveTrack];
		memset(t, 0, sizeof *t);
		if (archive_track_init(t, st, zJournal) < 0)
			return 0;
		nLiveTrack++;
		/* a session opened with a history: from its last event on (the
		 * evaluation that called); `kloop archive add` backfills the rest */
		if (st->nEvents > 0)
			t->evSeen = st->nEvents - 1;
	}
	if (archive_add_session(a, t, st, NULL, err) < 0) {
		if (nLiveFailed++)
			*err = 0; /* said once */
		return -1;
	}
	nLiveFailed = 0;
	return 0;
}
