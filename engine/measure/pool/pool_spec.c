/*
 * pool_spec.c - the pool's workers spec (local GPUs, CPU workers, ssh
 * hosts, Slurm job steps, launch commands) made into slots, each slot's
 * launch command, and the Slurm allocation its job steps run in.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pool_priv.h"
#include "proc.h"

/* --- specifications ---------------------------------------------------- */

static char **split_words(const char *z)
{
	char **v = xcalloc(strlen(z) / 2 + 2, sizeof(char *));
	int n = 0;
	while (*z) {
		while (*z == ' ' || *z == '\t')
			z++;
		if (!*z)
			break;
		size_t k = strcspn(z, " \t");
		v[n++] = xstrndup(z, k);
		z += k;
	}
	return v;
}

void pool_free_words(char **v)
{
	for (int i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

int pool_nwords(char **v)
{
	int n = 0;
	while (v && v[n])
		n++;
	return n;
}

struct slot *pool_add_slot(struct pool *p, enum slot_kind kind, const char *zLabel)
{
	p->aSlot = xrealloc(p->aSlot, (size_t)(p->nSlot + 1) * sizeof *p->aSlot);
	struct slot *s = &p->aSlot[p->nSlot];
	memset(s, 0, sizeof *s);
	s->p = p;
	s->idx = p->nSlot++;
	s->kind = kind;
	s->zLabel = xstrdup(zLabel);
	s->gpu = -1;
	s->state = POOL_W_IDLE;
	s->backoffS = BACKOFF_MIN_S;
	return s;
}

int pool_local_gpus(void)
{
	const char *v = getenv("CUDA_VISIBLE_DEVICES");
	if (v) {
		int n = 0;
		for (const char *q = v; *q;) {
			size_t k = strcspn(q, ",");
			if (k > 0)
				n++;
			q += k;
			if (*q == ',')
				q++;
		}
		return n;
	}
	DIR *d = opendir("/proc/driver/nvidia/gpus");
	if (!d)
		return 0;
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

/* a positive count "N" of at most 1024, or -1 */
static int parse_count(const char *z, size_t n)
{
	if (n == 0 || n > 4)
		return -1;
	int v = 0;
	for (size_t i = 0; i < n; i++) {
		if (!isdigit((unsigned char)z[i]))
			return -1;
		v = v * 10 + (z[i] - '0');
	}
	return v >= 1 && v <= 1024 ? v : -1;
}

/* the number of tasks in salloc arguments (-n N, --ntasks=N, --ntasks N) */
static int slurm_ntasks(char **v, char *err)
{
	int n = 1;
	for (int i = 0; v[i]; i++) {
		const char *z = NULL;
		if (!strcmp(v[i], "-n") || !strcmp(v[i], "--ntasks"))
			z = v[i + 1];
		else if (!strncmp(v[i], "--ntasks=", 9))
			z = v[i] + 9;
		else if (!strncmp(v[i], "-n", 2) && v[i][2])
			z = v[i] + 2;
		else
			continue;
		if (!z || (n = parse_count(z, strlen(z))) < 0)
			return kl_err(err, "workers: slurm: '%s' is not a task count (1 to 1024)",
			              z ? z : v[i]);
	}
	return n;
}

int pool_parse_one(struct pool *p, const char *z, size_t n, char *err)
{
	char *spec = xstrndup(z, n);
	char *s = spec;
	while (*s == ' ')
		s++;
	size_t len = strlen(s);
	while (len && s[len - 1] == ' ')
		s[--len] = 0;
	int rc = 0;
	const char *cuda = p->wc.zBackend && !strcmp(p->wc.zBackend, "cuda") ? "" : NULL;
	if (!strcmp(s, "local") || !strncmp(s, "local:", 6)) {
		int cnt = 1;
		if (s[5] == ':' && (cnt = parse_count(s + 6, strlen(s + 6))) < 0) {
			rc = kl_err(
			    err, "workers: '%s': expected local or local:N (N from 1 to 1024)", s);
			goto out;
		}
		if (cuda && s[5] != ':') {
			cnt = pool_local_gpus();
			if (cnt < 1)
				cnt = 1; /* no GPU visible: one worker, which says so */
		}
		for (int i = 0; i < cnt; i++) {
			char lab[32];
			snprintf(lab, sizeof lab, "local:%d", i);
			struct slot *sl = pool_add_slot(p, SLOT_LOCAL, lab);
			if (cuda && (cnt > 1 || s[5] == ':' || pool_local_gpus() > 1))
				sl->gpu = i;
		}
	} else if (!strncmp(s, "ssh:", 4)) {
		char *host = s + 4, *c = strchr(host, ':');
		if (c)
			*c++ = 0;
		if (!*host || strspn(host, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
		                           "0123456789.-_@[]") != strlen(host)) {
			rc = kl_err(err, "workers: '%s': expected ssh:HOST[:N|:GPU,GPU...]", spec);
			goto out;
		}
		int gpus[1024], ng = 0;
		if (!c) {
			gpus[ng++] = -1;
		} else if (!strchr(c, ',') && parse_count(c, strlen(c)) > 0) {
			int cnt = parse_count(c, strlen(c));
			for (int i = 0; i < cnt; i++)
				gpus[ng++] = i;
		} else {
			for (char *q = c; *q;) {
				size_t k = strcspn(q, ",");
				int g = k && k <= 3 && strspn(q, "0123456789") >= k ? atoi(q) : -1;
				if (g < 0 || ng >= 1024) {
					rc = kl_err(err, "workers: '%s': '%.*s' is not a GPU index",
					            spec, (int)k, q);
					goto out;
				}
				gpus[ng++] = g;
				q += k;
				if (*q == ',')
					q++;
			}
		}
		for (int i = 0; i < ng; i++) {
			char lab[300];
			if (gpus[i] >= 0)
				snprintf(lab, sizeof lab, "ssh:%s:%d", host, gpus[i]);
			else
				snprintf(lab, sizeof lab, "ssh:%s", host);
			struct slot *sl = pool_add_slot(p, SLOT_SSH, lab);
			sl->zSpecHost = xstrdup(host);
			sl->gpu = gpus[i];
		}
	} else if (!strncmp(s, "slurm:", 6) || !strcmp(s, "slurm")) {
		if (p->argvSalloc) {
			rc = kl_err(
			    err, "workers: one slurm: specification per session (one allocation)");
			goto out;
		}
		p->argvSalloc = split_words(s[5] ? s + 6 : "");
		int nt = slurm_ntasks(p->argvSalloc, err);
		if (nt < 0) {
			rc = -1;
			goto out;
		}
		p->nSlurmTasks = nt;
		for (int i = 0; i < nt; i++) {
			char lab[32];
			snprintf(lab, sizeof lab, "slurm:%d", i);
			struct slot *sl = pool_add_slot(p, SLOT_SLURM, lab);
			sl->state = POOL_W_WAITING;
		}
	} else if (!strncmp(s, "cmd:", 4)) {
		char **v = split_words(s + 4);
		if (!v[0]) {
			pool_free_words(v);
			rc = kl_err(err, "workers: '%s': cmd: needs a command", spec);
			goto out;
		}
		char lab[32];
		snprintf(lab, sizeof lab, "cmd:%d", p->nSlot);
		struct slot *sl = pool_add_slot(p, SLOT_CMD, lab);
		sl->argvCmd = v;
	} else {
		rc = kl_err(err, "workers: '%s' is not a worker specification (expected %s)", s,
		            POOL_SPEC_HELP);
	}
out:
	free(spec);
	return rc;
}

/* --- starting workers -------------------------------------------------- */

static char *subst(const char *z, int idx, int gpu)
{
	strbuf sb = STRBUF_INIT;
	while (*z) {
		if (!strncmp(z, "{i}", 3)) {
			sb_addf(&sb, "%d", idx);
			z += 3;
		} else if (!strncmp(z, "{gpu}", 5)) {
			sb_addf(&sb, "%d", gpu < 0 ? 0 : gpu);
			z += 5;
		} else {
			sb_add(&sb, z++, 1);
		}
	}
	return sb_detach(&sb);
}

/* the launch command of slot s (fresh argv) */
char **pool_slot_argv(struct pool *p, struct slot *s)
{
	strbuf pre = STRBUF_INIT;
	char **v = xcalloc(64, sizeof(char *));
	int n = 0;
	char **tail = NULL;
	switch (s->kind) {
	case SLOT_ARGV:
		for (int i = 0; s->argvCmd[i] && n < 62; i++)
			v[n++] = xstrdup(s->argvCmd[i]);
		if (!worker_sandboxed(&p->wc)) /* a configured command, with the flag appended */
			v[n++] = xstrdup("--no-sandbox");
		return v;
	case SLOT_CMD:
		for (int i = 0; s->argvCmd[i] && n < 62; i++)
			v[n++] = subst(s->argvCmd[i], s->idx, s->gpu);
		if (!worker_sandboxed(&p->wc))
			v[n++] = xstrdup("--no-sandbox");
		return v;
	case SLOT_LOCAL:
		/* env by its path: kloop's PATH may not have it (a PATH of the
		 * compilers alone, as sandbox.sh's without bubblewrap) */
		if (s->gpu >= 0 || p->zRunDir)
			v[n++] =
			    xstrdup(access("/usr/bin/env", X_OK) == 0 ? "/usr/bin/env" : "env");
		if (s->gpu >= 0)
			v[n++] = xasprintf("CUDA_VISIBLE_DEVICES=%d", s->gpu);
		/* one order of runner starts for the host's workers */
		if (p->zRunDir)
			v[n++] = xasprintf("KLOOP_RUNNER_LOCK=%s", p->zRunLock);
		tail = worker_launch_argv(&p->wc, NULL);
		break;
	case SLOT_SSH: {
		const char *ssh = getenv("KLOOP_SSH");
		v[n++] = xstrdup(ssh && *ssh ? ssh : "ssh");
		v[n++] = xstrdup("-o");
		v[n++] = xstrdup("BatchMode=yes");
		v[n++] = xstrdup("-o");
		v[n++] = xstrdup("ControlMaster=auto");
		v[n++] = xstrdup("-o");
		v[n++] = xasprintf("ControlPath=%s/%%C", p->zCtlDir);
		v[n++] = xstrdup("-o");
		v[n++] = xstrdup("ControlPersist=120");
		v[n++] = xstrdup(s->zSpecHost);
		if (s->gpu >= 0) {
			v[n++] = xstrdup("env");
			v[n++] = xasprintf("CUDA_VISIBLE_DEVICES=%d", s->gpu);
		}
		tail = worker_launch_argv(&p->wc, "kloop-worker");
		break;
	}
	case SLOT_SLURM:
		v[n++] = xstrdup("srun");
		v[n++] = xasprintf("--jobid=%s", p->zSlurmJob);
		v[n++] = xstrdup("--ntasks=1");
		v[n++] = xstrdup("--exact");
		v[n++] = xstrdup("--unbuffered");
		v[n++] = xstrdup("--kill-on-bad-exit=1");
		v[n++] = xasprintf("--job-name=kloop-worker-%d", s->idx);
		if (p->wc.zBackend && !strcmp(p->wc.zBackend, "cuda"))
			v[n++] = xstrdup("--gpus=1");
		/* the allocation's nodes have kloop at the same path, or on PATH */
		tail = worker_launch_argv(&p->wc, NULL);
		if (tail[0] && access(tail[0], X_OK) != 0) {
			free(tail[0]);
			tail[0] = xstrdup("kloop-worker");
		}
		break;
	}
	for (int i = 0; tail && tail[i] && n < 62; i++)
		v[n++] = tail[i];
	free(tail);
	sb_free(&pre);
	return v;
}

/* --- the run directory ------------------------------------------------- */

void pool_run_dir_make(struct pool *p)
{
	const char *z = getenv("KLOOP_RUNNER_LOCK");
	int nLocal = 0;
	for (int i = 0; i < p->nSlot; i++)
		nLocal += p->aSlot[i].kind == SLOT_LOCAL;
	if ((z && *z) || nLocal == 0)
		return;
	const char *tmp = getenv("TMPDIR");
	char *tmpl = path_join(tmp && *tmp ? tmp : "/tmp", "kloop-pool-XXXXXX");
	if (!mkdtemp(tmpl)) {
		free(tmpl); /* no order: the runners start as they are started */
		return;
	}
	p->zRunDir = tmpl;
	p->zRunLock = path_join(tmpl, "runners.lock");
}

void pool_run_dir_remove(struct pool *p)
{
	if (!p->zRunDir)
		return;
	unlink(p->zRunLock);
	rmdir(p->zRunDir);
	free(p->zRunLock);
	free(p->zRunDir);
	p->zRunDir = p->zRunLock = NULL;
}

/* --- Slurm allocation -------------------------------------------------- */

static void slurm_granted(struct pool *p, const char *zJob)
{
	free(p->zSlurmJob);
	p->zSlurmJob = xstrdup(zJob);
	for (int i = 0; i < p->nSlot; i++)
		if (p->aSlot[i].kind == SLOT_SLURM && p->aSlot[i].state == POOL_W_WAITING) {
			struct slot *s = &p->aSlot[i];
			free(s->zLabel);
			s->zLabel = xasprintf("slurm:%s.%d", zJob, i);
			s->state = POOL_W_IDLE;
		}
	p->sallocAnswered(p);
}

static void slurm_failed(struct pool *p, const char *zWhy)
{
	for (int i = 0; i < p->nSlot; i++)
		if (p->aSlot[i].kind == SLOT_SLURM) {
			struct slot *s = &p->aSlot[i];
			s->state = POOL_W_DISABLED;
			free(s->zNote);
			s->zNote = xstrdup(zWhy);
		}
	p->sallocAnswered(p);
}

static void salloc_reap(struct loop *l, long long id, void *arg)
{
	struct pool *p = arg;
	(void)id;
	p->tmSalloc = 0;
	int status = 0;
	pid_t r = waitpid(p->sallocPid, &status, WNOHANG);
	if (r == 0) {
		p->tmSalloc = loop_add_timer(l, 0.05, salloc_reap, p);
		return;
	}
	p->sallocPid = 0;
	/* "salloc: Granted job allocation 1234" */
	const char *g = p->sallocOut.buf ? strstr(p->sallocOut.buf, "job allocation ") : NULL;
	if (g && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		char job[32];
		size_t k = strspn(g + 15, "0123456789");
		snprintf(job, sizeof job, "%.*s", (int)(k < 30 ? k : 30), g + 15);
		p->ownAlloc = 1;
		slurm_granted(p, job);
	} else {
		char st[160];
		proc_describe_status(status, st, sizeof st);
		char *out = xstrdup(p->sallocOut.buf ? p->sallocOut.buf : "");
		utf8_sanitize(out);
		size_t n = strlen(out);
		while (n && (out[n - 1] == '\n' || out[n - 1] == ' '))
			out[--n] = 0;
		char *why = xasprintf("salloc %s%s%s", st, *out ? ": " : "", out);
		slurm_failed(p, why);
		free(why);
		free(out);
	}
}

static void on_salloc(struct loop *l, int fd, int events, void *arg)
{
	struct pool *p = arg;
	(void)events;
	char buf[4096];
	ssize_t r;
	while ((r = read(fd, buf, sizeof buf)) > 0)
		if (p->sallocOut.len < 65536)
			sb_add(&p->sallocOut, buf, (size_t)r);
	if (r < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	loop_del_fd(l, fd);
	close(fd);
	p->sallocErr = -1;
	salloc_reap(l, 0, p);
}

void pool_slurm_allocate(struct pool *p, void (*answered)(struct pool *p))
{
	p->sallocAnswered = answered;
	const char *j = getenv("SLURM_JOB_ID");
	if (j && *j && strspn(j, "0123456789") == strlen(j)) {
		slurm_granted(p, j);
		return;
	}
	int n = pool_nwords(p->argvSalloc);
	char **v = xcalloc((size_t)n + 4, sizeof(char *));
	int k = 0;
	v[k++] = "salloc";
	v[k++] = "--no-shell";
	v[k++] = "--job-name=kloop";
	for (int i = 0; i < n; i++)
		v[k++] = p->argvSalloc[i];
	char err[KL_ERRLEN];
	struct proc_spec s = {.argv = v, .stdinFd = -1, .stdoutFd = -1, .stderrFd = -1};
	int out = -1;
	p->sallocPid = proc_spawn(&s, &out, NULL, err);
	free(v);
	if (p->sallocPid < 0) {
		p->sallocPid = 0;
		char *why = xasprintf("cannot run salloc: %s", err);
		slurm_failed(p, why);
		free(why);
		return;
	}
	p->sallocErr = out;
	loop_add_fd(p->l, out, LOOP_READ, on_salloc, p);
}
