/*
 * test_loop.c - the event loop: a timer fires once and a deleted one
 * never does, a pipe's data and its hang-up reach the fd callback, a
 * callback may remove its own fd, loop_once(0) returns at once when
 * nothing is ready, and loop_stop() ends loop_run().
 */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "loop.h"
#include "util.h"

struct ctx {
	int fired, deleted; /* timer callbacks run */
	strbuf got;         /* bytes read from the pipe */
	int eof;            /* the read saw end of file */
	int stops;          /* on_stop() calls */
	struct loop *l;
};

static void on_timer(struct loop *l, long long id, void *arg)
{
	(void)l, (void)id;
	((struct ctx *)arg)->fired++;
}

static void on_deleted(struct loop *l, long long id, void *arg)
{
	(void)l, (void)id;
	((struct ctx *)arg)->deleted++;
}

static void on_read(struct loop *l, int fd, int events, void *arg)
{
	struct ctx *c = arg;
	(void)events;
	char buf[64];
	ssize_t n;
	while ((n = read(fd, buf, sizeof buf)) > 0)
		sb_add(&c->got, buf, (size_t)n);
	if (n == 0) {
		c->eof = 1;
		loop_del_fd(l, fd); /* from inside its own callback */
	}
}

static void on_stop(struct loop *l, long long id, void *arg)
{
	(void)id;
	((struct ctx *)arg)->stops++;
	loop_stop(l);
}

int main(void)
{
	struct ctx c = {0};
	struct loop *l = loop_new();
	c.l = l;

	CHECK(loop_once(l, 0) == 0, "loop_once(0) with nothing registered runs no callback");

	loop_add_timer(l, 0, on_timer, &c);
	long long gone = loop_add_timer(l, 0, on_deleted, &c);
	loop_del_timer(l, gone);
	for (int i = 0; i < 100 && !c.fired; i++)
		loop_once(l, 1);
	loop_once(l, 0);
	CHECK(c.fired == 1, "a timer fires once (%d)", c.fired);
	CHECK(c.deleted == 0, "a deleted timer never fires");

	int p[2];
	CHECK(pipe(p) == 0, "a pipe");
	fd_nonblock(p[0]);
	loop_add_fd(l, p[0], LOOP_READ, on_read, &c);
	CHECK(write(p[1], "hello", 5) == 5, "write to the pipe");
	for (int i = 0; i < 100 && c.got.len < 5; i++)
		loop_once(l, 1);
	CHECK(c.got.len == 5 && !memcmp(c.got.buf, "hello", 5), "the fd callback reads the data");
	close(p[1]);
	for (int i = 0; i < 100 && !c.eof; i++)
		loop_once(l, 1);
	CHECK(c.eof, "a hang-up reaches the callback as end of file");
	CHECK(loop_once(l, 0) == 0, "the fd removed from its own callback is no longer watched");
	close(p[0]);

	loop_add_timer(l, 0, on_stop, &c);
	loop_run(l); /* returns only through loop_stop() */
	CHECK(c.stops == 1, "loop_stop() from a callback ends loop_run()");

	sb_free(&c.got);
	loop_free(l);
	return check_done();
}
