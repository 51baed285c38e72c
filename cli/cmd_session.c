/*
 * cmd_session.c - `kloop session FILE`: the state folded from a session
 * journal.
 */
#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "flags.h"
#include "report.h"
#include "session.h"

static int exec_session(int argc, char **argv)
{
	struct flags f; /* a bare command: no configuration to free */
	int usage = flags_parse(&cmd_session_entry, FL_SESSION, argc, argv, 1, 1, &f);
	if (usage)
		return usage;
	int json = f.json;
	const char *zPath = f.azPos[0];
	char err[KL_ERRLEN];
	struct session *s = session_open(zPath, 0, err);
	if (!s) {
		fprintf(stderr, "kloop: %s\n", err);
		return 2;
	}
	if (s->warnings.len)
		fprintf(stderr, "kloop: warning: %s", s->warnings.buf);
	if (!s->st.nEvents) {
		/* as kloop replay: an empty file, or one of no events, is no session */
		fprintf(stderr, "kloop: %s: the journal holds no events%s\n", zPath,
		        s->nBad ? " (every line was ignored: see the warnings above)" : "");
		session_close(s);
		return 2;
	}
	if (json) {
		cJSON *o = state_to_json(&s->st);
		cJSON_AddNumberToObject(o, "bad_lines", s->nBad);
		char *z = json_text(o, 1);
		printf("%s\n", z);
		free(z);
		cJSON_Delete(o);
	} else {
		printf("session %s: task %s, backend %s, %d events, %d candidate%s\n", zPath,
		       s->st.zTask ? s->st.zTask : "?", s->st.zBackend ? s->st.zBackend : "?",
		       s->st.nEvents, s->st.nCand, s->st.nCand == 1 ? "" : "s");
		/* the session's one baseline on each device: every speedup's */
		for (int i = 0; i < s->st.nBase; i++) {
			const struct state_baseline *b = &s->st.aBase[i];
			char *dev = term_clean(b->zDevice, 0);
			printf("baseline %.4g ms%s%s%s\n", b->ms, *dev ? " on " : "", dev,
			       b->remeasured ? " (re-measured)" : "");
			free(dev);
		}
		char bt[160];
		report_best_text(&s->st, bt, sizeof bt);
		printf("%s\n", bt);
		printf("%4s  %-20s %-9s %-8s %-13s %10s %8s\n", "id", "name", "origin", "parents",
		       "status", "time (ms)", "speedup");
		int nMarked = 0;
		for (int i = 0; i < s->st.nCand; i++) {
			const struct cand *c = &s->st.aCand[i];
			char par[32] = "-";
			if (c->nParent == 1)
				snprintf(par, sizeof par, "%d", c->aParent[0]);
			else if (c->nParent == 2)
				snprintf(par, sizeof par, "%d,%d", c->aParent[0], c->aParent[1]);
			char tm[32] = "-", sp[32] = "-";
			if (c->timeMs >= 0)
				snprintf(tm, sizeof tm, "%.4g", c->timeMs);
			if (c->speedup >= 0)
				snprintf(sp, sizeof sp, "%.3gx%s%s%s", c->speedup,
				         c->unverified ? "?" : "", c->reduced ? "~" : "",
				         c->belowFloor ? "!" : "");
			nMarked +=
			    c->speedup >= 0 && (c->unverified || c->reduced || c->belowFloor);
			/* the same machine code as one timed before: its timing */
			char *nt = term_clean(c->v.zNotTimed, 0);
			printf("%4d  %-20.20s %-9s %-8s %-13s %10s %8s%s%s\n", c->id, c->zName,
			       c->zOrigin, par, c->zStatus, tm, sp, *nt ? "  " : "", nt);
			free(nt);
		}
		if (nMarked)
			printf("(?: its time unverified; ~: reduced precision; !: faster than the "
			       "device can be, a suspect; none is ranked%s)\n",
			       state_precision_any(&s->st) ? ", but ~ is under precision any" : "");
		if (s->st.nIdea)
			printf("\n%4s  %-11s %-28s %s\n", "idea", "status", "category", "title");
		for (int i = 0; i < s->st.nIdea; i++) {
			const struct state_idea *d = &s->st.aIdea[i];
			struct idea_why why = state_idea_why(&s->st, d);
			printf("%4d  %-11s %-28.28s %s%s%s%s%s\n", d->id,
			       state_idea_word(&s->st, d), d->zCategory, d->zTitle,
			       d->edited ? " (revised)" : "", *why.z ? " (" : "", why.z,
			       *why.z ? ")" : "");
		}
	}
	session_close(s);
	return 0;
}

const struct cmd_entry cmd_session_entry = {
    .name = "session",
    .usage = "FILE [--json]",
    .help = "show the state folded from a session journal",
    .exec = exec_session,
};
