/*
 * runner_profile.c - Nsight Compute in the background: a candidate
 * profiled by `kloop profile` in a process of its own, its summary told
 * to the front end when it ends.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "emit.h"
#include "proc.h"
#include "runner_int.h"
#include "util.h"

/* ---- Nsight Compute in the background ---- */

struct profile_run {
	struct runner *rn;
	int cand;
	pid_t pid;
	int fd;
	strbuf out;
	char *zFile; /* the candidate's source, written for the profiler */
	struct profile_run *next;
};

int runner_profiles(const struct runner *rn)
{
	int n = 0;
	for (struct profile_run *q = rn->profiles; q; q = q->next)
		n++;
	return n;
}

static void profile_end(struct profile_run *p, int bKill)
{
	struct profile_run **pp = &p->rn->profiles;
	while (*pp && *pp != p)
		pp = &(*pp)->next;
	if (*pp)
		*pp = p->next;
	loop_del_fd(p->rn->l, p->fd);
	close(p->fd);
	if (bKill)
		proc_kill_group(p->pid);
	waitpid(p->pid, NULL, 0);
	unlink(p->zFile);
	char *dir = xstrdup(p->zFile);
	*strrchr(dir, '/') = 0;
	rmdir(dir);
	free(dir);
	free(p->zFile);
	sb_free(&p->out);
	free(p);
}

static void profile_read(struct loop *l, int fd, int events, void *arg)
{
	struct profile_run *p = arg;
	(void)l, (void)events;
	char buf[8192];
	ssize_t n = read(fd, buf, sizeof buf);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n > 0) {
		sb_add(&p->out, buf, (size_t)n);
		return;
	}
	struct runner *rn = p->rn;
	const char *z = p->out.buf ? p->out.buf : "";
	const char *js = z[0] == '{' ? z : strstr(z, "\n{");
	cJSON *prof = js ? cJSON_Parse(js + (js[0] == '\n')) : NULL;
	char err[KL_ERRLEN];
	const char *sum = prof ? cJSON_GetStringValue(cJSON_GetObjectItem(prof, "summary")) : NULL;
	if (sum) {
		char *line = xasprintf("candidate %d: ncu %s", p->cand, sum);
		cJSON_DeleteItemFromObject(prof, "summary");
		if (ev_profile(rn->ses, p->cand, prof, err) < 0)
			note_simple(rn, RUNNER_MESSAGE, p->cand, err);
		else
			note_simple(rn, RUNNER_MESSAGE, p->cand, line);
		free(line);
	} else {
		/* its last line says why */
		size_t len = strlen(z);
		while (len && z[len - 1] == '\n')
			len--;
		size_t s = len;
		while (s && z[s - 1] != '\n')
			s--;
		char *m = xasprintf("profile of candidate %d failed: %.*s", p->cand, (int)(len - s),
		                    z + s);
		note_simple(rn, RUNNER_MESSAGE, p->cand, m);
		free(m);
	}
	cJSON_Delete(prof);
	profile_end(p, 0);
	note_simple(rn, RUNNER_CHANGED, 0, NULL);
}

int runner_profile(struct runner *rn, int id, char *err)
{
	const struct cand *c = state_cand(&rn->ses->st, id);
	if (!c)
		return kl_err(err, "no candidate %d", id);
	for (struct profile_run *q = rn->profiles; q; q = q->next)
		if (q->cand == id)
			return kl_err(err, "candidate %d is being profiled already", id);
	char tmpl[] = "/tmp/kloop-profile-XXXXXX";
	if (!mkdtemp(tmpl))
		return kl_err(err, "cannot make a temporary directory: %s", strerror(errno));
	struct profile_run *p = xcalloc(1, sizeof *p);
	p->rn = rn;
	p->cand = id;
	p->zFile = path_join(tmpl, c->zName && *c->zName ? c->zName : "candidate.cu");
	if (write_file_atomic(p->zFile, c->zSource, strlen(c->zSource), err) < 0) {
		rmdir(tmpl);
		free(p->zFile);
		free(p);
		return -1;
	}
	char *kl = path_join(exe_dir(), "kloop");
	const char *argv[16] = {kl,       "profile",   rn->zTaskDir, p->zFile,
	                        "--json", "--backend", rn->zBackend};
	int n = 7;
	if (rn->cfg->zPython) {
		argv[n++] = "--python";
		argv[n++] = rn->cfg->zPython;
	}
	if (rn->cfg->zLibs) {
		argv[n++] = "--libs";
		argv[n++] = rn->cfg->zLibs;
	}
	argv[n] = NULL;
	struct proc_spec ps = {
	    .argv = (char *const *)argv, .stdinFd = -1, .stdoutFd = -1, .stderrFd = -1};
	p->pid = proc_spawn(&ps, &p->fd, NULL, err);
	free(kl);
	if (p->pid < 0) {
		unlink(p->zFile);
		rmdir(tmpl);
		free(p->zFile);
		free(p);
		return -1;
	}
	p->next = rn->profiles;
	rn->profiles = p;
	loop_add_fd(rn->l, p->fd, LOOP_READ, profile_read, p);
	return 0;
}

void runner_profiles_end(struct runner *rn)
{
	while (rn->profiles)
		profile_end(rn->profiles, 1);
}
