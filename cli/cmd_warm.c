/*
 * cmd_warm.c - `kloop warm [stop]`: the workers kloop eval or the workbench kept warm for
 * the next eval of their task (worker/warm.c), listed from the
 * descriptions beside their sockets, or ended.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd.h"
#include "util.h"
#include "worker_warm.h"

static const struct cmd_entry *self = &cmd_warm_entry;

static int exec_warm(int argc, char **argv)
{
	static const char *const subs[] = {"stop"};
	int stop = argc == 2 && !strcmp(argv[1], "stop");
	if (argc > 2 || (argc == 2 && !stop))
		return cmd_sub_usage(self, argv[1], subs, 1);
	char err[KL_ERRLEN];
	struct warm_entry *a;
	int n = worker_warm_list(&a, err);
	if (n < 0) {
		fprintf(stderr, "kloop: %s\n", err);
		return 2;
	}
	time_t now = time(NULL);
	for (int i = 0; i < n; i++) {
		const struct warm_entry *w = &a[i];
		char *task = term_clean(w->zTask, 0), *dev = term_clean(w->zDevice, 0);
		if (stop) {
			kill(w->pid, SIGTERM);
			printf("stopped the warm worker %d (%s)\n", w->pid, task);
		} else {
			printf("pid %d  task %s  %s on %s  %s %.0f s, %g eval%s, waits %g s  %s\n",
			       w->pid, task, w->zBackend, dev, w->zState,
			       difftime(now, (time_t)w->since), w->evals, w->evals == 1 ? "" : "s",
			       w->lingerS, w->zSock);
		}
		free(task);
		free(dev);
	}
	if (!n) {
		char *dir = worker_warm_dir(err);
		printf("no worker is kept warm (%s)\n", dir ? dir : err);
		free(dir);
	}
	worker_warm_list_free(a, n);
	return 0;
}

const struct cmd_entry cmd_warm_entry = {
    .name = "warm",
    .usage = "[stop]",
    .help = "the workers kloop eval and the workbench keep warm for the next eval or "
            "session of their task (--warm): list them, or stop them",
    .exec = exec_warm,
};
