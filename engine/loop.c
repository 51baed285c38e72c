/*
 * loop.c - the poll() reactor behind kloop's single-threaded engine: file
 * events and timers, with registrations safe to change from callbacks.
 */
#include "loop.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>

#include "util.h"

struct fdreg {
	int fd;        /* -1 once deleted */
	int events;    /* LOOP_READ | LOOP_WRITE */
	loop_fd_fn fn; /* callback */
	void *arg;     /* its argument */
};

struct timer {
	long long id; /* 0 once deleted or fired */
	double when;  /* monotonic deadline */
	loop_timer_fn fn;
	void *arg;
};

struct loop {
	struct fdreg *aFd; /* registrations; deleted entries have fd -1 */
	size_t nFd, nFdAlloc;
	struct timer *aTimer;
	size_t nTimer, nTimerAlloc;
	long long nextId;
	int stop;
};

struct loop *loop_new(void)
{
	return xcalloc(1, sizeof(struct loop));
}

void loop_free(struct loop *l)
{
	if (!l)
		return;
	free(l->aFd);
	free(l->aTimer);
	free(l);
}

static struct fdreg *find(struct loop *l, int fd)
{
	for (size_t i = 0; i < l->nFd; i++)
		if (l->aFd[i].fd == fd)
			return &l->aFd[i];
	return NULL;
}

void loop_add_fd(struct loop *l, int fd, int events, loop_fd_fn fn, void *arg)
{
	struct fdreg *r = find(l, fd);
	if (!r) {
		r = find(l, -1);
		if (!r) {
			xgrow((void **)&l->aFd, &l->nFdAlloc, l->nFd + 1, sizeof *l->aFd);
			r = &l->aFd[l->nFd++];
		}
	}
	r->fd = fd;
	r->events = events;
	r->fn = fn;
	r->arg = arg;
}

void loop_mod_fd(struct loop *l, int fd, int events)
{
	struct fdreg *r = find(l, fd);
	if (r)
		r->events = events;
}

void loop_del_fd(struct loop *l, int fd)
{
	struct fdreg *r = find(l, fd);
	if (r)
		r->fd = -1;
}

long long loop_add_timer(struct loop *l, double seconds, loop_timer_fn fn, void *arg)
{
	size_t i;
	for (i = 0; i < l->nTimer; i++)
		if (!l->aTimer[i].id)
			break;
	if (i == l->nTimer) {
		xgrow((void **)&l->aTimer, &l->nTimerAlloc, l->nTimer + 1, sizeof *l->aTimer);
		l->nTimer++;
	}
	l->aTimer[i] = (struct timer){++l->nextId, now_s() + seconds, fn, arg};
	return l->nextId;
}

void loop_del_timer(struct loop *l, long long id)
{
	for (size_t i = 0; i < l->nTimer; i++)
		if (l->aTimer[i].id == id)
			l->aTimer[i].id = 0;
}

int loop_once(struct loop *l, double max_wait)
{
	double now = now_s(), wait = max_wait;
	for (size_t i = 0; i < l->nTimer; i++) {
		if (!l->aTimer[i].id)
			continue;
		double d = l->aTimer[i].when - now;
		if (d < 0)
			d = 0;
		if (wait < 0 || d < wait)
			wait = d;
	}
	struct pollfd *pfd = xcalloc(l->nFd + 1, sizeof *pfd);
	size_t n = 0;
	for (size_t i = 0; i < l->nFd; i++) {
		if (l->aFd[i].fd < 0 || !l->aFd[i].events)
			continue;
		pfd[n].fd = l->aFd[i].fd;
		pfd[n].events = (short)(((l->aFd[i].events & LOOP_READ) ? POLLIN : 0) |
		                        ((l->aFd[i].events & LOOP_WRITE) ? POLLOUT : 0));
		n++;
	}
	int ms = wait < 0 ? -1 : (int)(wait * 1000 + 0.999);
	int rc = poll(pfd, n, ms);
	int ran = 0;
	if (rc < 0 && errno != EINTR)
		die("poll failed: %d", errno);
	for (size_t k = 0; rc > 0 && k < n; k++) {
		if (!pfd[k].revents)
			continue;
		struct fdreg *r = find(l, pfd[k].fd);
		if (!r)
			continue; /* deleted by an earlier callback */
		int ev = 0;
		if (pfd[k].revents & (POLLIN | POLLHUP | POLLERR | POLLNVAL))
			ev |= LOOP_READ;
		if (pfd[k].revents & POLLOUT)
			ev |= LOOP_WRITE;
		ev &= r->events | LOOP_READ;
		if (pfd[k].revents & POLLNVAL) {
			r->fd = -1;
		}
		r->fn(l, pfd[k].fd, ev, r->arg);
		ran++;
	}
	free(pfd);
	now = now_s();
	for (size_t i = 0; i < l->nTimer; i++) {
		struct timer t = l->aTimer[i];
		if (!t.id || t.when > now)
			continue;
		l->aTimer[i].id = 0;
		t.fn(l, t.id, t.arg);
		ran++;
	}
	return ran;
}

void loop_run(struct loop *l)
{
	l->stop = 0;
	while (!l->stop)
		loop_once(l, -1);
}

void loop_stop(struct loop *l)
{
	l->stop = 1;
}
