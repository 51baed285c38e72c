/*
 * worker_launch.c - how a kloop-worker is started and what it is given:
 * its command line, the settings that come from the configuration, and a
 * task's files for a worker on another host (worker.h).
 */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cand.h"
#include "util.h"
#include "worker.h"

/* the configuration's range of spares is what a worker keeps (its array) */
_Static_assert(CONFIG_SPARES_MAX == CAND_MAX_SPARES, "config.h's spares range is cand.h's");

char **worker_launch_argv(const struct worker_config *c, const char *zProgram)
{
	char **v = xcalloc(14, sizeof(char *));
	int n = 0;
	if (zProgram) {
		v[n++] = xstrdup(zProgram);
	} else {
		/* beside this kloop, else on PATH (a program outside bin/, a test) */
		char *z = path_join(exe_dir(), "kloop-worker");
		if (access(z, X_OK) != 0) {
			free(z);
			z = xstrdup("kloop-worker");
		}
		v[n++] = z;
	}
	v[n++] = xstrdup("--backend");
	v[n++] = xstrdup(c->zBackend);
	if (c->jobs > 0) {
		v[n++] = xstrdup("--jobs");
		v[n++] = xasprintf("%d", c->jobs);
	}
	if (c->bSpares) {
		v[n++] = xstrdup("--spares");
		v[n++] = xasprintf("%d", c->spares);
	}
	if (c->zPython) {
		v[n++] = xstrdup("--python");
		v[n++] = xstrdup(c->zPython);
	}
	if (!worker_sandboxed(c))
		v[n++] = xstrdup("--no-sandbox");
	return v;
}

int worker_sandboxed(const struct worker_config *c)
{
	return !c->noSandbox;
}

cJSON *worker_task_files(const char *zTask)
{
	cJSON *files = cJSON_CreateObject();
	char err[KL_ERRLEN];
	strbuf sb = STRBUF_INIT;
	struct stat st;
	if (stat(zTask, &st) == 0 && S_ISREG(st.st_mode)) {
		const char *base = strrchr(zTask, '/');
		if (read_file(zTask, &sb, 16 << 20, err) == 0)
			cJSON_AddStringToObject(files, base ? base + 1 : zTask,
			                        sb.buf ? sb.buf : "");
		sb_free(&sb);
		return files;
	}
	DIR *d = opendir(zTask);
	struct dirent *e;
	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char *path = path_join(zTask, e->d_name);
		sb_reset(&sb);
		if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size <= (4 << 20) &&
		    read_file(path, &sb, 4 << 20, err) == 0 && !looks_binary(sb.buf, sb.len))
			cJSON_AddStringToObject(files, e->d_name, sb.buf ? sb.buf : "");
		free(path);
	}
	if (d)
		closedir(d);
	sb_free(&sb);
	return files;
}

void worker_config_from(struct worker_config *wc, const struct config *cfg)
{
	wc->zPython = cfg->zPython;
	wc->nTrials = cfg->nTrials;
	wc->budgetS = cfg->budgetS;
	wc->runTimeoutS = cfg->timeoutS;
	wc->jobs = cfg->jobs;
	wc->spares = cfg->spares;
	wc->bSpares = cfg->bSpares;
	wc->noSandbox = cfg->noSandbox;
	wc->bTol = cfg->bTol;
	wc->atol = cfg->atol;
	wc->rtol = cfg->rtol;
	wc->size = cfg->size;
	wc->zLibs = cfg->zLibs;
}
