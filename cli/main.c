/*
 * main.c - kloop's entry point: dispatches `kloop COMMAND ...` to the
 * command table; with no command, `kloop [TASK]` opens the TUI.
 */
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include <sys/stat.h>

#include "cmd.h"
#include "flags.h"
#include "suggest.h"
#include "task.h"
#include "util.h"

#include "version.h"

static const struct cmd_entry *commands[] = {
    &cmd_open_entry,      &cmd_shell_entry,   &cmd_replay_entry,  &cmd_eval_entry,
    &cmd_tasks_entry,     &cmd_session_entry, &cmd_ideas_entry,   &cmd_implement_entry,
    &cmd_outline_entry,   &cmd_doctor_entry,  &cmd_archive_entry, &cmd_report_entry,
    &cmd_import_entry,    &cmd_export_entry,  &cmd_profile_entry, &cmd_search_entry,
    &cmd_translate_entry, &cmd_warm_entry,
};
#define N_COMMANDS (sizeof commands / sizeof *commands)

static void help(FILE *f)
{
	fprintf(f, "kloop %s - a workbench for writing and optimizing GPU kernels\n\n",
	        KLOOP_VERSION);
	fprintf(f, "usage: kloop [TASK]            the full-screen workbench on a new session "
	           "(default task: softmax)\n");
	for (size_t i = 0; i < N_COMMANDS; i++) {
		char *h = cmd_help(commands[i]);
		fprintf(f, "       kloop %s %s\n%*s%s\n", commands[i]->name, commands[i]->usage, 15,
		        "", h);
		free(h);
	}
	fprintf(
	    f, "\nTASK is a bundled task's name (kloop tasks), a task directory, or a KernelBench\n"
	       "problem file (.py).  Configuration: flags, then $XDG_CONFIG_HOME/kloop/config.\n");
}

/* whether z names a task kloop can open: a path that exists, a KernelBench
 * file, or a bundled task */
static int is_task(const char *z)
{
	struct stat st;
	if (strchr(z, '/') || stat(z, &st) == 0)
		return 1;
	size_t n;
	char **az = task_bundled_names(&n);
	int found = 0;
	for (size_t i = 0; i < n && !found; i++)
		found = !strcmp(az[i], z);
	task_names_free(az, n);
	return found;
}

/* `kloop WORD` where WORD is neither a command nor a task: an error that
 * names the nearest of both when it looks like a typo (kloop serach
 * softmax, kloop softmx), and lists both */
static int not_a_task(const char *z)
{
	size_t nTask;
	char **azTask = task_bundled_names(&nTask);
	const char **az = xmalloc((N_COMMANDS + nTask) * sizeof *az);
	strbuf cmds = STRBUF_INIT, tasks = STRBUF_INIT;
	for (size_t i = 0; i < N_COMMANDS; i++) {
		az[i] = commands[i]->name;
		sb_addf(&cmds, "%s%s", i ? ", " : "", az[i]);
	}
	for (size_t i = 0; i < nTask; i++) {
		az[N_COMMANDS + i] = azTask[i];
		sb_addf(&tasks, "%s%s", i ? ", " : "", azTask[i]);
	}
	const char *near = suggest_nearest(z, az, N_COMMANDS + nTask);
	int isCmd = 0;
	for (size_t i = 0; near && i < N_COMMANDS; i++)
		isCmd |= near == az[i];
	if (near && isCmd)
		fprintf(stderr, "kloop: '%s' is not a command: did you mean 'kloop %s'?\n", z,
		        near);
	else if (near)
		fprintf(stderr, "kloop: '%s' is not a task: did you mean '%s'?\n", z, near);
	else
		fprintf(stderr, "kloop: '%s' is neither a command nor a task\n", z);
	fprintf(stderr,
	        "  commands: %s\n  tasks: %s (or a task directory, or a KernelBench .py file)\n",
	        cmds.buf, tasks.len ? tasks.buf : "none bundled");
	sb_free(&cmds);
	sb_free(&tasks);
	free(az);
	task_names_free(azTask, nTask);
	return 2;
}

int main(int argc, char **argv)
{
	setlocale(LC_ALL, "");
	/* no other process of this user (a candidate on the GPU shares the pid
	 * namespace) reads the journal's descriptor or the environment through
	 * /proc/PID (issue 14) */
	prctl(PR_SET_DUMPABLE, 0);
	/* a file size limit (ulimit -f) reached by the journal, an export or a
	 * report is a write error that kloop reports (the journal's: events
	 * lost, exit 2), not a signal that kills it with the session half
	 * written; the processes it starts get the default back (proc_spawn,
	 * the runner's keeper) */
	signal(SIGXFSZ, SIG_IGN);
	/* every command prints through the guard: text from candidates, compilers,
	 * tasks, LLMs and journals is shown, never obeyed by the terminal (the TUI
	 * and the line editor lift it and sanitise what they draw) */
	term_guard();
	if (argc >= 2 &&
	    (!strcmp(argv[1], "help") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		help(stdout);
		return 0;
	}
	if (argc >= 2 && (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version"))) {
		printf("kloop %s\n", KLOOP_VERSION);
		return 0;
	}
	if (argc >= 2 && argv[1][0] != '-') {
		for (size_t i = 0; i < N_COMMANDS; i++) {
			if (strcmp(argv[1], commands[i]->name))
				continue;
			/* `kloop CMD --help`: its usage and what it does, exit 0 (no
			 * command takes --help or -h as a flag) */
			for (int k = 2; k < argc && strcmp(argv[k], "--"); k++)
				if (!strcmp(argv[k], "--help") || !strcmp(argv[k], "-h")) {
					char *h = cmd_help(commands[i]);
					printf("usage: kloop %s %s\n\n%s\n", commands[i]->name,
					       commands[i]->usage, h);
					free(h);
					if (commands[i]->more_help)
						commands[i]->more_help(stdout);
					flags_help(stdout, flags_cmd_of(commands[i]->name));
					return 0;
				}
			return commands[i]->exec(argc - 1, argv + 1);
		}
	}
	if (argc >= 2 && argv[1][0] != '-' && !is_task(argv[1]))
		return not_a_task(argv[1]);
	/* `kloop [TASK] [flags]`: the full-screen workbench */
	return cmd_open_entry.exec(argc, argv);
}
