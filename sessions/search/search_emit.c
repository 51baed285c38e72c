/*
 * search_emit.c - the search's clock and its events: the elapsed seconds
 * its events carry, and what follows an event it journaled (the driver and
 * people told).  Called by every file of the search; calls none of them.
 */
#include "search_priv.h"

#include <stdio.h>

double search_elapsed(const struct search *s)
{
	return s->base + (s->tRun > 0 ? now_s() - s->tRun : 0);
}

/* after an emitter returned rc: tell people zLine with the journaled
 * event; when it failed and the caller gave no err, say why */
int search_emitted(struct search *s, int rc, const char *zLine, char *err)
{
	if (rc < 0) {
		if (!err) {
			char msg[KL_ERRLEN + 16];
			snprintf(msg, sizeof msg, "journal: %s", s->zErr);
			note(s, msg, NULL);
		}
		return -1;
	}
	driver_changed(s->drv);
	note(s, zLine, session_last(SES(s)));
	return 0;
}
