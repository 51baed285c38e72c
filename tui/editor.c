/*
 * editor.c - $EDITOR on a temporary copy: the child gets the terminal and
 * default signal handling; the parent keeps its event loop turning until
 * the child exits.
 */
#include "editor.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util.h"

char *editor_tempfile(const char *zName, const char *zText, char *err)
{
	const char *tmp = getenv("TMPDIR");
	char *dir = xasprintf("%s/kloop-edit-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		kl_err(err, "%s: cannot make a directory for the copy: %s", dir, strerror(errno));
		free(dir);
		return NULL;
	}
	const char *base = strrchr(zName, '/') ? strrchr(zName, '/') + 1 : zName;
	char *path = path_join(dir, *base ? base : "candidate.c");
	free(dir);
	if (write_file_atomic(path, zText, strlen(zText), err) < 0) {
		editor_cleanup(path);
		free(path);
		return NULL;
	}
	return path;
}

void editor_cleanup(const char *zPath)
{
	unlink(zPath);
	const char *slash = strrchr(zPath, '/');
	if (!slash)
		return;
	char *dir = xstrndup(zPath, (size_t)(slash - zPath));
	/* editors leave backups beside the file (file~, .file.swp): remove
	 * what is left in our private directory, then the directory */
	DIR *d = strstr(dir, "/kloop-edit-") ? opendir(dir) : NULL;
	struct dirent *e;
	while (d && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		char *p = path_join(dir, e->d_name);
		unlink(p);
		free(p);
	}
	if (d) {
		closedir(d);
		rmdir(dir);
	}
	free(dir);
}

int editor_run(struct loop *l, const char *zPath, char *err)
{
	const char *ed = getenv("VISUAL");
	if (!ed || !*ed)
		ed = getenv("EDITOR");
	if (!ed || !*ed)
		ed = "vi";
	pid_t pid = fork();
	if (pid < 0)
		return kl_err(err, "cannot start the editor: %s", strerror(errno));
	if (pid == 0) {
		static const int sigs[] = {SIGINT,  SIGQUIT, SIGTERM, SIGTSTP, SIGWINCH,
		                           SIGPIPE, SIGHUP,  SIGCHLD, SIGSEGV, SIGABRT};
		for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++)
			signal(sigs[i], SIG_DFL);
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		/* $0 unquoted: an editor given with its flags ("code -w") splits */
		execl("/bin/sh", "sh", "-c", "exec $0 \"$1\"", ed, zPath, (char *)NULL);
		_exit(127);
	}
	int status = 0;
	for (;;) {
		pid_t r = waitpid(pid, &status, WNOHANG);
		if (r == pid)
			break;
		if (r < 0 && errno != EINTR)
			return kl_err(err, "waiting for the editor: %s", strerror(errno));
		loop_once(l, 0.05);
	}
	if (WIFSIGNALED(status))
		return kl_err(err, "the editor (%s) was killed by signal %d", ed, WTERMSIG(status));
	if (WEXITSTATUS(status) == 127)
		return kl_err(err, "the editor (%s) could not be run", ed);
	return WEXITSTATUS(status);
}
