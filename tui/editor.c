/*
 * editor.c - $EDITOR on a temporary copy: the child gets the terminal and
 * default signal handling; the parent's event loop watches for its end
 * (a pidfd, else a timer) and calls the caller back.
 */
#include "editor.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
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

/* an editor that runs */
struct editor {
	struct loop *l;
	pid_t pid;
	int fd;              /* its pidfd on the loop, or -1 */
	char *zEd;           /* the editor's command, for the messages */
	editor_done_fn done; /* the caller's callback, and its argument */
	void *arg;
};

/* the editor is over: the caller hears rc (its exit status, or -1 + err) */
static void finish(struct editor *e, int rc, const char *err)
{
	if (e->fd >= 0) {
		loop_del_fd(e->l, e->fd);
		close(e->fd);
	}
	editor_done_fn done = e->done;
	void *arg = e->arg;
	free(e->zEd);
	free(e);
	done(arg, rc, rc < 0 ? err : "");
}

/* whether the editor has ended (then the caller has heard of it) */
static int reap(struct editor *e)
{
	char err[KL_ERRLEN] = "";
	int status = 0;
	pid_t r = waitpid(e->pid, &status, WNOHANG);
	if (r < 0 && errno != EINTR) {
		finish(e, kl_err(err, "waiting for the editor: %s", strerror(errno)), err);
		return 1;
	}
	if (r != e->pid)
		return 0;
	if (WIFSIGNALED(status))
		finish(e,
		       kl_err(err, "the editor (%s) was killed by signal %d", e->zEd,
		              WTERMSIG(status)),
		       err);
	else if (WEXITSTATUS(status) == 127)
		finish(e, kl_err(err, "the editor (%s) could not be run", e->zEd), err);
	else
		finish(e, WEXITSTATUS(status), err);
	return 1;
}

static void on_pidfd(struct loop *l, int fd, int events, void *arg)
{
	(void)l, (void)fd, (void)events;
	reap(arg);
}

static void on_poll(struct loop *l, long long id, void *arg)
{
	(void)id;
	if (!reap(arg))
		loop_add_timer(l, 0.05, on_poll, arg);
}

int editor_start(struct loop *l, const char *zPath, editor_done_fn done, void *arg, char *err)
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
	struct editor *e = xcalloc(1, sizeof *e);
	*e = (struct editor){l, pid, -1, xstrdup(ed), done, arg};
#ifdef SYS_pidfd_open
	e->fd = (int)syscall(SYS_pidfd_open, pid, 0);
#endif
	if (e->fd >= 0)
		loop_add_fd(l, e->fd, LOOP_READ, on_pidfd, e);
	else
		loop_add_timer(l, 0.05, on_poll, e);
	return 0;
}
