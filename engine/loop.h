/*
 * loop.h - kloop's one event loop: a tiny reactor over poll() with file
 * events and one-shot timers (in the manner of redis' ae.c).  Nothing that
 * runs from the loop may block.
 */
#ifndef KL_LOOP_H
#define KL_LOOP_H

#define LOOP_READ 1
#define LOOP_WRITE 2

struct loop;
/* called with the events that are ready (LOOP_READ/LOOP_WRITE, or LOOP_READ
 * on hang-up and error, so that the callback's read sees EOF) */
typedef void (*loop_fd_fn)(struct loop *l, int fd, int events, void *arg);
typedef void (*loop_timer_fn)(struct loop *l, long long id, void *arg);

/* a new loop; free with loop_free() */
struct loop *loop_new(void);
void loop_free(struct loop *l);

/* watch fd for events (replacing an earlier registration of fd) */
void loop_add_fd(struct loop *l, int fd, int events, loop_fd_fn fn, void *arg);
/* change the events watched on fd */
void loop_mod_fd(struct loop *l, int fd, int events);
/* stop watching fd (safe to call from inside a callback) */
void loop_del_fd(struct loop *l, int fd);

/* call fn once after `seconds`; returns an id for loop_del_timer() */
long long loop_add_timer(struct loop *l, double seconds, loop_timer_fn fn, void *arg);
void loop_del_timer(struct loop *l, long long id);

/* run one iteration, waiting at most max_wait seconds (< 0: until an event
 * or timer); returns the number of callbacks run */
int loop_once(struct loop *l, double max_wait);
/* run until loop_stop() */
void loop_run(struct loop *l);
void loop_stop(struct loop *l);

#endif
