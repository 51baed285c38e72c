/*
 * start_order.h - the order in which the runners of a host make their
 * device contexts (issue 28).  The NVIDIA driver makes contexts one process
 * at a time for the whole host (8 runners started together on two H200s
 * were ready after 1.7 s), so runners started at once only contend; here
 * they queue instead, on a lock file every worker of a pool shares (the
 * pool's run directory, or $KLOOP_RUNNER_LOCK).  A runner takes it around
 * its context's creation and nothing else: it is given the file open (the
 * worker opens it for each runner, so each holds its own lock), takes it,
 * makes its context, appends what it did to the file's journal and lets it
 * go before it reads its setup; a runner that dies lets it go with its
 * last descriptor.
 *
 * Who goes first: a runner whose candidate waits for it (START_NOW) queues
 * on the context's lock alone; a spare queues first behind a gate that lets
 * one spare at a time reach that lock (START_SPARE: its worker has no spare
 * left), and a further spare of a worker that still has one behind a second
 * gate before the first (START_EXTRA).  So whenever the context's lock is
 * let go, at most one spare waits for it beside the runners that are
 * needed now.
 *
 * The journal: one line per step, "take LEVEL ID" once the lock is held
 * and "made ID ok|failed" before it is let go (ID: the worker's pid and
 * its runner's number, "1234.5"); with the lock working no two takes
 * follow each other.
 */
#ifndef KL_START_ORDER_H
#define KL_START_ORDER_H

/* a runner's place in the order */
enum { START_NOW, START_SPARE, START_EXTRA };

/* the runner's descriptor for it (the worker puts it there) */
#define START_ORDER_FD 4

/*
 * In the worker: the lock file ($KLOOP_RUNNER_LOCK) opened anew for one
 * runner, close-on-exec, at a descriptor above 9; -1 when no file is named
 * or it cannot be opened (the runner then starts when it is started, as
 * without an order).
 */
int start_order_open(void);

/*
 * In the runner, around its context: take the lock on fd at level
 * (START_*) and journal it as zId; start_order_give() journals whether the
 * context was made (ok), lets the lock go and closes fd.  A lock that
 * cannot be taken (an old kernel, a file system without locks) is gone
 * around: the order is an optimisation, never a reason not to start.
 */
void start_order_take(int fd, int level, const char *zId);
void start_order_give(int fd, const char *zId, int ok);

#endif
