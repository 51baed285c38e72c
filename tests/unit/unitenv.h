/*
 * unitenv.h - the environment of a unit test that opens drivers: a fresh
 * directory (its template dir, made by mkdtemp()) for the configuration
 * (none read) and the state, and the repository's include, tasks and
 * prompts folders (the tests run from its root).
 */
#ifndef KL_UNITENV_H
#define KL_UNITENV_H

#include <stdio.h>
#include <stdlib.h>

/* 0, or -1 when the directory cannot be made */
static inline int unit_env(char *dir)
{
	if (!mkdtemp(dir))
		return -1;
	setenv("XDG_CONFIG_HOME", dir, 1); /* no config file */
	setenv("XDG_STATE_HOME", dir, 1);
	setenv("KLOOP_INCLUDE", "include", 1);
	setenv("KLOOP_TASKS", "tasks", 1);
	setenv("KLOOP_PROMPTS", "prompts", 1);
	return 0;
}

/* remove the directory unit_env() made; 0 when it is gone */
static inline int unit_env_remove(const char *dir)
{
	char cmd[300];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	return system(cmd);
}

#endif
