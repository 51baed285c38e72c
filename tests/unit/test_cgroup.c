/*
 * test_cgroup.c - kloop's control groups on this host: a process in a group
 * is stopped by a freeze (a counter it increments stands still) and goes on
 * after the thaw; it is ended by the OOM killer past the memory limit, and
 * the usage says so with the peak and the limit; threads past the task
 * limit are refused and counted; its CPU time counts every thread, ended
 * ones too; the group's directory goes with
 * cgroup_free.  Each part skips with its reason where the host has no such
 * cgroup (cgroup_describe names the fallback kloop uses instead).
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "check.h"
#include "util.h"

static void *idle_thread(void *arg)
{
	pause();
	return arg;
}

/* a child in g running fn; its pid */
static pid_t child_in(struct cgroup *g, void (*fn)(volatile unsigned long *),
                      volatile unsigned long *shared)
{
	pid_t p = fork();
	if (p == 0) {
		if (cgroup_enter(g) < 0)
			_exit(99);
		fn(shared);
		_exit(0);
	}
	return p;
}

static void count_forever(volatile unsigned long *n)
{
	for (;;)
		(*n)++;
}

static void eat_memory(volatile unsigned long *n)
{
	(void)n;
	size_t sz = 512u << 20;
	char *p = malloc(sz);
	for (size_t i = 0; p && i < sz; i += 4096)
		p[i] = 1;
	_exit(p ? 0 : 3);
}

/* spend 50 ms of CPU time in a thread that then ends, and say how much
 * the process spent (us) */
static void *spin_50ms(void *arg)
{
	struct timespec t;
	do
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	while (t.tv_sec == 0 && t.tv_nsec < 50000000);
	return arg;
}

static void spend_cpu(volatile unsigned long *n)
{
	pthread_t t;
	if (pthread_create(&t, NULL, spin_50ms, NULL) == 0)
		pthread_join(t, NULL);
	struct timespec c;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c);
	*n = (unsigned long)(c.tv_sec * 1000000 + c.tv_nsec / 1000);
	_exit(0);
}

static void many_threads(volatile unsigned long *n)
{
	int ok = 0;
	for (int i = 0; i < 32; i++) {
		pthread_t t;
		ok += pthread_create(&t, NULL, idle_thread, NULL) == 0;
	}
	*n = (unsigned long)ok;
	_exit(0);
}

int main(void)
{
	char line[1024], err[KL_ERRLEN] = "";
	const struct cgroup_support *s = cgroup_probe();
	cgroup_describe(line, sizeof line);
	printf("# %s\n", line);
	volatile unsigned long *shared =
	    mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(shared != MAP_FAILED, "a shared page for the children");
	if (!s->freeze && !s->memory && !s->pids) {
		printf("ok - # SKIP no cgroup kloop may use here: %s\n", s->zWhy);
		return check_done();
	}
	struct cgroup_limits lim = {64ull << 20, 8};
	struct cgroup *g = cgroup_new("test", &lim, err);
	CHECK(g != NULL, "a group is made (%s)", g ? "ok" : err);
	if (!g)
		return check_done();

	if (cgroup_has_freeze(g)) {
		*shared = 0;
		pid_t p = child_in(g, count_forever, shared);
		while (*shared < 1000)
			usleep(1000);
		CHECK(cgroup_freeze(g, 1, err) == 0, "the group freezes%s%s", err[0] ? ": " : "",
		      err);
		unsigned long a = *shared;
		usleep(30000);
		unsigned long b = *shared;
		CHECK(a == b, "a frozen counter stands still (%lu, then %lu)", a, b);
		CHECK(cgroup_freeze(g, 0, err) == 0, "the group thaws");
		usleep(30000);
		CHECK(*shared > b, "a thawed counter goes on (%lu)", *shared);
		kill(p, SIGKILL);
		waitpid(p, NULL, 0);
	} else {
		printf("ok - # SKIP no freezer: %s\n", s->zWhy);
	}

	long long cpu0 = cgroup_cpu_usec(g);
	if (cpu0 >= 0) {
		*shared = 0;
		pid_t p = child_in(g, spend_cpu, shared);
		waitpid(p, NULL, 0);
		long long used = cgroup_cpu_usec(g) - cpu0;
		CHECK(*shared >= 50000 && used >= (long long)(0.9 * (double)*shared),
		      "the group's CPU time counts a thread that has ended: %lld us, the process "
		      "itself %lu us",
		      used, *shared);
	} else {
		printf("ok - # SKIP no CPU time of the group (no cgroup v2 group): %s\n", s->zWhy);
	}

	if (cgroup_has_pids(g)) {
		*shared = 0;
		pid_t p = child_in(g, many_threads, shared);
		int st;
		waitpid(p, &st, 0);
		struct cgroup_usage u;
		cgroup_usage(g, &u);
		CHECK(*shared > 0 && *shared < 32,
		      "threads past the task limit are refused (%lu of 32 started, limit %d)",
		      *shared, u.taskLimit);
		CHECK(u.taskLimit == 8 && u.taskMaxHits > 0,
		      "the usage counts %d refused, limit %d", u.taskMaxHits, u.taskLimit);
		char note[512];
		cgroup_usage_note(&u, note, sizeof note);
		CHECK(strstr(note, "task limit") && strstr(note, "pids.max 8"),
		      "the note names the task limit: %s", note);
	} else {
		printf("ok - # SKIP no pids controller: %s\n", s->zWhy);
	}

	if (cgroup_has_memory(g)) {
		pid_t p = child_in(g, eat_memory, shared);
		int st;
		waitpid(p, &st, 0);
		CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL,
		      "touching 512 MiB in a group of 64 MiB ends by SIGKILL (the OOM killer)");
		struct cgroup_usage u;
		cgroup_usage(g, &u);
		CHECK(u.oomKills >= 1 && u.memLimit == (64ull << 20),
		      "the usage counts the OOM kill (%d) and the limit (%llu)", u.oomKills,
		      u.memLimit);
		char note[512];
		cgroup_usage_note(&u, note, sizeof note);
		CHECK(strstr(note, "memory limit was reached") && strstr(note, "64 MiB"),
		      "the note says which limit and how much: %s", note);
	} else {
		printf("ok - # SKIP no memory controller: %s\n", s->zWhy);
	}
	cgroup_free(g);
	CHECK(strstr(s->zWhere, "kloop-") != NULL, "the groups live below kloop-PID (%s)",
	      s->zWhere);
	return check_done();
}
