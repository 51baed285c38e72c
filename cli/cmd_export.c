/*
 * cmd_export.c - `kloop export SESSION ID|best`: a candidate for people outside
 * kloop, from a session's journal.  --cuda FILE (or --source FILE) writes
 * its plain source; --kernelbench FILE writes a Python module with
 * ModelNew (sessions/driver/cand_export.h, as the `export` command of the TUI and
 * the REPL does).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cand_export.h"
#include "cmd.h"
#include "flags.h"
#include "session.h"

static int exec_export(int argc, char **argv)
{
	struct flags f;
	int frc = flags_parse(&cmd_export_entry, FL_EXPORT, argc, argv, 2, 2, &f);
	if (frc)
		return frc;
	const char *zSession = f.azPos[0], *zId = f.azPos[1], *zKb = f.zKernelbench, *zCu = f.zCuda,
	           *zSrc = f.zSource, *zProblem = f.zProblem;
	flags_free(&f);
	if (!zKb && !zCu && !zSrc) {
		fprintf(
		    stderr,
		    "kloop: export: nothing to write: give where, with --kernelbench OUT.py (a "
		    "KernelBench ModelNew), --cuda OUT.cu (the CUDA source) or --source OUT (the "
		    "candidate as it is)\n");
		return cmd_usage(&cmd_export_entry);
	}
	int best = !strcmp(zId, "best");
	char *end;
	long id = best ? 0 : strtol(zId, &end, 10);
	if (!best && (*end || end == zId || id < 1)) {
		fprintf(stderr,
		        "kloop: export: '%s' is not a candidate id (a number from 1, or best)\n",
		        zId);
		return 2;
	}
	char err[KL_ERRLEN];
	struct session *s = session_open(zSession, 0, err);
	if (!s) {
		fprintf(stderr, "kloop: %s\n", err);
		return 2;
	}
	int rc = 0, confirmed = 1, tie = 0;
	/* best: the session's best, as every front end names it (state_best) */
	const struct cand *c =
	    best ? state_best(&s->st, &confirmed, &tie) : state_cand(&s->st, (int)id);
	struct cand_export x = {
	    .zSource = zSrc, .zCuda = zCu, .zKernelbench = zKb, .zProblem = zProblem};
	strbuf sb = STRBUF_INIT;
	if (!c && best) {
		fprintf(stderr,
		        "kloop: export: %s has no best candidate (none of its %d is correct with a "
		        "trusted time)\n",
		        zSession, s->st.nCand);
		rc = 2;
	} else if (!c) {
		fprintf(stderr, "kloop: export: %s has no candidate %ld (it has 1..%d)\n", zSession,
		        id, s->st.nCand);
		rc = 2;
	} else if (cand_export_write(&s->st, zSession, c, &x, err) < 0) {
		fprintf(stderr, "kloop: export: %s\n", err);
		rc = 2;
	} else {
		/* what was written where, on stdout; a caveat on stderr */
		cand_export_said(c, &x, 0, &sb);
		printf("%s\n", sb.buf);
		if (c->status != STATUS_CORRECT)
			fprintf(stderr, "kloop: export: note: candidate %d's last verdict is %s\n",
			        c->id, c->zStatus);
		if (best && !confirmed)
			fprintf(
			    stderr,
			    "kloop: export: note: #%d is the best, unconfirmed (#%d is within its "
			    "noise, no A/B)\n",
			    c->id, tie);
	}
	sb_free(&sb);
	session_close(s);
	return rc;
}

const struct cmd_entry cmd_export_entry = {
    .name = "export",
    .usage = "SESSION ID|best [--kernelbench OUT.py [--problem PROBLEM.py]] [--cuda OUT.cu] "
             "[--source OUT]",
    .exec = exec_export,
};
