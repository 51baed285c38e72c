/*
 * compile_mem.c - how much memory a compile may hold: sized from the
 * machine's memory (its cgroup's limit, else MemTotal), what is available
 * now and how many compiles run at once, or KLOOP_COMPILE_MEM_MB
 * (compile.h: compile_mem_rule, compile_mem_mb).
 */
#include "compile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "cgroup.h"

unsigned long long compile_mem_rule(const struct compile_mem_facts *f, char *zHow, size_t nHow)
{
	const unsigned long long floorMb = 2048, wantMb = 8192;
	char how[200] = "";
	if (f->zEnv && *f->zEnv) {
		char *end;
		errno = 0;
		long long mb = strtoll(f->zEnv, &end, 10);
		if (!errno && end != f->zEnv && !*end && mb > 0) {
			snprintf(zHow, nHow, "KLOOP_COMPILE_MEM_MB=%lld", mb);
			return (unsigned long long)mb;
		}
		snprintf(how, sizeof how,
		         "; KLOOP_COMPILE_MEM_MB=%.40s is not a positive number of MiB: ignored",
		         f->zEnv);
	}
	unsigned long long machine = f->cgroupMb ? f->cgroupMb : f->totalMb;
	if (!machine) {
		snprintf(zHow, nHow, "the machine's memory unknown%s", how);
		return floorMb;
	}
	/* what the machine can give now: what is available, and what it may
	 * still grow by up to its cgroup's limit, no more than that limit */
	unsigned long long grow = machine > f->totalMb ? machine - f->totalMb : 0;
	unsigned long long give =
	    f->availMb && f->availMb + grow < machine ? f->availMb + grow : machine;
	unsigned jobs = f->jobs > 0 ? (unsigned)f->jobs : 1;
	unsigned long long share = give / 2 / jobs;
	unsigned long long want = give / 2 < wantMb ? give / 2 : wantMb;
	unsigned long long mb = share > want ? share : want;
	unsigned long long least = machine / 2 < floorMb ? machine / 2 : floorMb;
	if (mb < least)
		mb = least;
	snprintf(zHow, nHow, "%s %llu MiB, %llu MiB of it available, %u compile%s at once%s",
	         f->cgroupMb ? "the cgroup's limit" : "MemTotal", machine, give, jobs,
	         jobs == 1 ? "" : "s", how);
	return mb;
}

/* the cgroup limit on kloop's own group in MiB, read once (it does not
 * change while kloop runs) */
static unsigned long long own_cgroup_mb(void)
{
	static int done;
	static unsigned long long mb;
	if (!done++)
		mb = cgroup_own_memory_limit() >> 20;
	return mb;
}

/* MemTotal and MemAvailable of /proc/meminfo in MiB (0 where unknown) */
static void meminfo_mb(unsigned long long *pTotal, unsigned long long *pAvail)
{
	*pTotal = *pAvail = 0;
	FILE *f = fopen("/proc/meminfo", "re");
	char line[256];
	unsigned long long kb;
	while (f && fgets(line, sizeof line, f)) {
		if (sscanf(line, "MemTotal: %llu kB", &kb) == 1)
			*pTotal = kb >> 10;
		else if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
			*pAvail = kb >> 10;
	}
	if (f)
		fclose(f);
}

unsigned long long compile_mem_mb(int jobs, char *zHow, size_t nHow)
{
	struct compile_mem_facts f = {own_cgroup_mb(), 0, 0, jobs, getenv("KLOOP_COMPILE_MEM_MB")};
	meminfo_mb(&f.totalMb, &f.availMb);
	char how[300];
	return compile_mem_rule(&f, zHow ? zHow : how, zHow ? nHow : sizeof how);
}
