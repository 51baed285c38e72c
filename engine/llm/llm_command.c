/*
 * llm_command.c - the command provider and its transport: `sh -c COMMAND`
 * in its own process group, the prompt written to its stdin and its stdout
 * read as the reply, all through the event loop; the child is reaped
 * without blocking.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "llm_transport.h"
#include "proc.h"

#define STDERR_KEEP 4096
#define REAP_POLL_S 0.01

struct llm_cmd {
	struct loop *l;
	pid_t pid;        /* the child (its process group), 0 once reaped */
	int in, out, err; /* our ends of its stdin, stdout and stderr, -1 once closed */
	char *zInput;     /* what is left to write */
	size_t nInput, nWritten;
	strbuf tail;     /* the last bytes of its stderr */
	long long timer; /* the reaping poll */
	llm_cmd_out_fn onOut;
	llm_cmd_end_fn onEnd;
	void *arg;
};

static void close_fd(struct llm_cmd *c, int *pfd)
{
	if (*pfd >= 0) {
		loop_del_fd(c->l, *pfd);
		close(*pfd);
		*pfd = -1;
	}
}

static void reap(struct loop *l, long long id, void *arg);

/* both outputs drained: wait for the exit without blocking */
static void maybe_end(struct llm_cmd *c)
{
	if (c->out >= 0 || c->err >= 0 || !c->pid || c->timer)
		return;
	reap(c->l, 0, c);
}

static void reap(struct loop *l, long long id, void *arg)
{
	(void)id;
	struct llm_cmd *c = arg;
	c->timer = 0;
	int status = 0;
	pid_t r = waitpid(c->pid, &status, WNOHANG);
	if (r == 0) {
		c->timer = loop_add_timer(l, REAP_POLL_S, reap, c);
		return;
	}
	if (r < 0)
		status = 0x7f00; /* reaped elsewhere: report "exited with status 127" */
	c->pid = 0;
	close_fd(c, &c->in);
	c->onEnd(c->arg, status, c->tail.buf ? c->tail.buf : "");
}

static void on_stdin(struct loop *l, int fd, int events, void *arg)
{
	(void)l, (void)fd, (void)events;
	struct llm_cmd *c = arg;
	while (c->nWritten < c->nInput) {
		ssize_t w = write(c->in, c->zInput + c->nWritten, c->nInput - c->nWritten);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno == EAGAIN)
			return;
		if (w < 0)
			break; /* EPIPE: the program does not read its stdin; fine */
		c->nWritten += (size_t)w;
	}
	close_fd(c, &c->in);
}

static void on_output(struct loop *l, int fd, int events, void *arg)
{
	(void)l, (void)events;
	struct llm_cmd *c = arg;
	char buf[65536];
	for (;;) {
		ssize_t r = read(fd, buf, sizeof buf);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && errno == EAGAIN)
			return;
		if (r <= 0) {
			close_fd(c, fd == c->out ? &c->out : &c->err);
			maybe_end(c);
			return;
		}
		if (fd == c->out) {
			c->onOut(c->arg, buf, (size_t)r);
		} else {
			sb_add(&c->tail, buf, (size_t)r);
			if (c->tail.len > STDERR_KEEP)
				sb_consume(&c->tail, c->tail.len - STDERR_KEEP);
		}
	}
}

struct llm_cmd *llm_cmd_start(struct loop *l, const char *zCommand, const char *zModel,
                              const char *zInput, size_t n, llm_cmd_out_fn out, llm_cmd_end_fn end,
                              void *arg, char *err)
{
	int inp[2];
	if (pipe2(inp, O_CLOEXEC) < 0)
		return kl_err(err, "cannot create a pipe: %s", strerror(errno)), NULL;
	if (zModel && *zModel)
		setenv("KLOOP_MODEL", zModel, 1);
	else
		unsetenv("KLOOP_MODEL");
	char *argv[] = {"/bin/sh", "-c", (char *)zCommand, NULL};
	struct proc_spec s = {.argv = argv, .stdinFd = inp[0], .stdoutFd = -1, .stderrFd = -2};
	int fdOut, fdErr;
	pid_t pid = proc_spawn(&s, &fdOut, &fdErr, err);
	close(inp[0]);
	if (pid < 0) {
		close(inp[1]);
		return NULL;
	}
	struct llm_cmd *c = xcalloc(1, sizeof *c);
	c->l = l;
	c->pid = pid;
	c->in = inp[1];
	c->out = fdOut;
	c->err = fdErr;
	c->zInput = xstrndup(zInput, n);
	c->nInput = n;
	c->onOut = out;
	c->onEnd = end;
	c->arg = arg;
	fd_nonblock(c->in);
	loop_add_fd(l, c->in, LOOP_WRITE, on_stdin, c);
	loop_add_fd(l, c->out, LOOP_READ, on_output, c);
	loop_add_fd(l, c->err, LOOP_READ, on_output, c);
	return c;
}

void llm_cmd_free(struct llm_cmd *c)
{
	if (!c)
		return;
	if (c->pid) {
		proc_kill_group(c->pid);
		while (waitpid(c->pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	if (c->timer)
		loop_del_timer(c->l, c->timer);
	close_fd(c, &c->in);
	close_fd(c, &c->out);
	close_fd(c, &c->err);
	sb_free(&c->tail);
	free(c->zInput);
	free(c);
}

/* ---- the transport: one attempt is one run of the command ---- */

static void on_cmd_out(void *arg, const char *z, size_t n)
{
	struct llm_req *r = arg;
	r->tLast = now_s();
	if (r->failed)
		return;
	/* past the limit the rest is read and dropped until the child ends */
	if (llm_parse_text(&r->parse, z, n, r->zErr) < 0)
		r->failed = 1;
}

static void on_cmd_end(void *arg, int status, const char *zStderr)
{
	struct llm_req *r = arg;
	struct llm *c = r->c;
	if (r->cancelled) {
		llm_attempt_cancelled(r);
		return;
	}
	if (r->failed) {
		llm_attempt_failed(r, 0, 0, r->zErr);
		return;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		char st[80];
		proc_describe_status(status, st, sizeof st);
		/* the last line of its stderr says why */
		size_t n = strlen(zStderr);
		while (n && (zStderr[n - 1] == '\n' || zStderr[n - 1] == '\r'))
			n--;
		size_t b = n;
		while (b && zStderr[b - 1] != '\n')
			b--;
		char *m = xasprintf("the command `%s` %s%s%.*s", c->zCommand, st, n ? ": " : "",
		                    (int)(n - b), zStderr + b);
		llm_attempt_failed(r, 0, 0, m);
		free(m);
		return;
	}
	r->parse.done = 1;
	if (!r->parse.text.len) {
		llm_attempt_failed(r, 0, 0, "the command printed nothing");
		return;
	}
	llm_attempt_ok(r);
}

static int cmd_start(struct llm_req *r, char *err)
{
	struct llm *c = r->c;
	strbuf in = STRBUF_INIT;
	if (r->zSystem && *r->zSystem) {
		sb_adds(&in, r->zSystem);
		sb_adds(&in, "\n\n");
	}
	sb_adds(&in, r->zPrompt);
	r->pAttempt = llm_cmd_start(c->l, c->zCommand, c->zModel, in.buf, in.len, on_cmd_out,
	                            on_cmd_end, r, err);
	sb_free(&in);
	return r->pAttempt ? 0 : -1;
}

static void cmd_stop(struct llm_req *r)
{
	llm_cmd_free(r->pAttempt);
	r->pAttempt = NULL;
}

const struct llm_transport llm_command_transport = {
    .start = cmd_start, .stop = cmd_stop, .retryStalls = 0, /* a local program, not a network */
};

const struct llm_provider llm_command = {
    .zName = "command",
    .transport = &llm_command_transport,
    .needsCommand = 1,
};
