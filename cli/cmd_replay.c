/*
 * cmd_replay.c - `kloop replay SESSION`: the TUI on a saved journal, to
 * step through its events and continue from any of them; without a
 * terminal, the events listed one per line.
 */
#include <stdio.h>
#include <unistd.h>

#include "app.h"
#include "cmd.h"
#include "flags.h"
#include "replay.h"

static int print_events(const char *zPath, int at)
{
	char err[KL_ERRLEN];
	struct replay *r = replay_open(zPath, err);
	if (!r) {
		fprintf(stderr, "kloop: %s\n", err);
		return 2;
	}
	if (r->warnings.len)
		fprintf(stderr, "kloop: warning: %s", r->warnings.buf);
	int n = at >= 0 && at < r->nEv ? at : r->nEv;
	for (int i = 0; i < n; i++) {
		char d[300];
		replay_describe(r, i, d, sizeof d);
		printf("%5d  %s\n", i + 1, d);
	}
	replay_seek(r, n);
	printf("after %d of %d events: %d candidate%s\n", n, r->nEv, r->st.nCand,
	       r->st.nCand == 1 ? "" : "s");
	replay_close(r);
	return 0;
}

static int exec_replay(int argc, char **argv)
{
	struct flags o;
	int rc = flags_parse(&cmd_replay_entry, FL_REPLAY, argc, argv, 1, 1, &o);
	if (rc)
		return rc;
	if (isatty(STDIN_FILENO) && isatty(STDOUT_FILENO)) {
		/* continuing writes a new journal, not --session */
		struct driver_opts lo = {
		    .zShapes = o.zShapes, .zReference = o.zReference, .bTorchWarning = 1};
		struct app_opts ao = {.cfg = &o.cfg, .lo = lo, .zReplay = o.azPos[0], .at = o.at};
		rc = app_run(&ao);
	} else {
		rc = print_events(o.azPos[0], o.at);
	}
	flags_free(&o);
	return rc;
}

const struct cmd_entry cmd_replay_entry = {
    .name = "replay",
    .usage = "SESSION [--at K] [--budget SECONDS] [...]",
    .help = "step through a saved session in the TUI and continue from any event as a new session",
    .exec = exec_replay,
};
