/*
 * compile_pch.c - the ATen stand-in precompiled once per C++ compiler,
 * flags and header version (compile_pch.h), built in the background so that
 * no compile waits for it.
 */
#include "compile_pch.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proc.h"
#include "sha256.h"
#include "util.h"

#define PCH_NAME "kloop_torch.h.gch"

int compile_pch_init(struct compile_pch *p, struct loop *l, const char *zCache, const char *zCxx,
                     const char *zVersion, const char *const *azFlags, const char *zTorchHash)
{
	memset(p, 0, sizeof *p);
	p->fd = -1;
	p->l = l;
	/* clang reads only its own kind of precompiled header, and refuses one
	 * that does not fit instead of passing it by */
	if (!zVersion || strstr(zVersion, "clang"))
		return 0;
	struct sha256 s;
	char hex[65], err[KL_ERRLEN];
	sha256_init(&s);
	const char *parts[] = {"kloop-pch-v1", zCxx, zVersion, zTorchHash};
	for (size_t i = 0; i < sizeof parts / sizeof *parts; i++)
		sha256_update(&s, parts[i], strlen(parts[i]) + 1);
	for (int i = 0; azFlags[i]; i++)
		sha256_update(&s, azFlags[i], strlen(azFlags[i]) + 1);
	sha256_hex(&s, hex);
	p->zDir = xasprintf("%s/pch/%.16s", zCache, hex);
	if (mkdir_p(p->zDir, err) < 0) {
		free(p->zDir);
		p->zDir = NULL;
		return -1;
	}
	return 0;
}

static char *tmp_path(const struct compile_pch *p)
{
	return xasprintf("%s/" PCH_NAME ".%d.tmp", p->zDir, (int)getpid());
}

/* the build ended: its .gch in place, or left out */
static void on_built(struct loop *l, int fd, int ev, void *arg)
{
	struct compile_pch *p = arg;
	char buf[4096];
	(void)ev;
	ssize_t r;
	while ((r = read(fd, buf, sizeof buf)) > 0)
		; /* its words are not kept: a compile without it parses the header */
	if (r < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	loop_del_fd(l, fd);
	close(fd);
	p->fd = -1;
	int status = 0;
	while (waitpid(p->pid, &status, 0) < 0 && errno == EINTR)
		;
	p->pid = 0;
	char *tmp = tmp_path(p), *dst = path_join(p->zDir, PCH_NAME);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || rename(tmp, dst) < 0)
		unlink(tmp);
	free(tmp);
	free(dst);
}

void compile_pch_start(struct compile_pch *p, const char *zCxx, const char *const *azFlags,
                       const char *zInc, int nice)
{
	if (!p->zDir || p->tried)
		return;
	p->tried = 1;
	char *dst = path_join(p->zDir, PCH_NAME);
	int there = path_exists(dst);
	free(dst);
	if (there)
		return;
	char *argv[32], *tmp = tmp_path(p), *hdr = path_join(zInc, "kloop_torch.h");
	char *inc = xasprintf("-I%s", zInc);
	int n = 0;
	argv[n++] = (char *)zCxx;
	for (int i = 0; azFlags[i] && n < 24; i++)
		argv[n++] = (char *)azFlags[i];
	argv[n++] = inc;
	argv[n++] = "-x";
	argv[n++] = "c++-header";
	argv[n++] = hdr;
	argv[n++] = "-o";
	argv[n++] = tmp;
	argv[n] = NULL;
	struct proc_spec s = {.argv = argv,
	                      .stdinFd = -1,
	                      .stdoutFd = -1,
	                      .stderrFd = -1,
	                      .cleanEnv = 1,
	                      .nice = nice};
	char err[KL_ERRLEN];
	p->pid = proc_spawn(&s, &p->fd, NULL, err);
	if (p->pid < 0)
		p->pid = 0, p->fd = -1;
	else
		loop_add_fd(p->l, p->fd, LOOP_READ, on_built, p);
	free(tmp);
	free(hdr);
	free(inc);
}

void compile_pch_free(struct compile_pch *p)
{
	if (p->pid > 0) {
		loop_del_fd(p->l, p->fd);
		close(p->fd);
		proc_kill_group(p->pid);
		while (waitpid(p->pid, NULL, 0) < 0 && errno == EINTR)
			;
		char *tmp = tmp_path(p);
		unlink(tmp);
		free(tmp);
	}
	free(p->zDir);
	memset(p, 0, sizeof *p);
	p->fd = -1;
}
