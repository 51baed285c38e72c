/*
 * test_confine.c - a confined process (confine.h) cannot change the images
 * it was loaded with (mprotect, mmap MAP_FIXED, munmap of them: EPERM, also
 * for a range that only overlaps one), write its memory through /proc or
 * ptrace, start a process (fork, posix_spawn, clone3), or write a file
 * outside /tmp; it can still start threads, map and protect memory of its
 * own, and write /tmp.  Checked in a child, which the confinement cannot
 * leave.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "confine.h"
#include "util.h"

static void *thread_fn(void *arg)
{
	return arg;
}

static int fails_with(long rc, int e)
{
	return rc == -1 && errno == e;
}

static void confined_checks(const char *zOutside)
{
	char err[KL_ERRLEN];
	struct confine_report r;
	int rc = confine_runner(&r, err);
	CHECK(rc == 0, "confine_runner succeeds (%s)",
	      rc           ? err
	      : r.zNote[0] ? r.zNote
	                   : "all of it");
	if (rc)
		return;
	CHECK(r.seccomp && r.nRanges > 0, "the seccomp filter protects %d ranges", r.nRanges);
	long page = sysconf(_SC_PAGESIZE);
	char *text = (char *)((uintptr_t)&confined_checks & ~(uintptr_t)(page - 1));
	CHECK(fails_with(mprotect(text, (size_t)page, PROT_READ | PROT_WRITE | PROT_EXEC), EPERM),
	      "mprotect of its own code, writable: EPERM");
	static const char ro[] = "read-only data";
	char *rop = (char *)((uintptr_t)ro & ~(uintptr_t)(page - 1));
	CHECK(mprotect(rop, (size_t)page, PROT_READ) == 0,
	      "mprotect of its read-only data as it is (neither writable nor executable): allowed");
	CHECK(fails_with(mprotect(rop, (size_t)page, PROT_READ | PROT_EXEC), EPERM),
	      "mprotect of its read-only data, executable: EPERM");
	CHECK(fails_with(mprotect(text - 16 * page, (size_t)(17 * page), PROT_READ | PROT_WRITE),
	                 EPERM),
	      "a range that starts below the code and reaches into it: EPERM (not ENOMEM)");
	void *m = mmap(text, (size_t)page, PROT_READ | PROT_WRITE,
	               MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	CHECK(m == MAP_FAILED && errno == EPERM, "mmap MAP_FIXED over its code: EPERM");
	CHECK(fails_with(munmap(text, (size_t)page), EPERM), "munmap of its code: EPERM");
	char *vdso = NULL;
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	while (f && fgets(line, sizeof line, f))
		if (strstr(line, "[vdso]"))
			vdso = (char *)(uintptr_t)strtoul(line, NULL, 16);
	if (f)
		fclose(f);
	CHECK(vdso && fails_with(mprotect(vdso, (size_t)page, PROT_READ | PROT_WRITE), EPERM),
	      "mprotect of the vDSO (the clock), writable: EPERM");
	/* memory of its own */
	char *a = mmap(NULL, (size_t)(4 * page), PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(a != MAP_FAILED && mprotect(a, (size_t)page, PROT_READ | PROT_WRITE) == 0,
	      "mprotect of its own anonymous memory: allowed");
	CHECK(a != MAP_FAILED && mmap(a + page, (size_t)page, PROT_READ | PROT_WRITE,
	                              MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == a + page,
	      "mmap MAP_FIXED inside its own memory: allowed");
	CHECK(a != MAP_FAILED && munmap(a, (size_t)(4 * page)) == 0, "munmap of its own: allowed");
	void *big = malloc(64 << 20);
	CHECK(big != NULL, "a 64 MiB malloc (mmap) works");
	free(big);
	pthread_t t;
	void *ret = NULL;
	CHECK(pthread_create(&t, NULL, thread_fn, (void *)7) == 0 && pthread_join(t, &ret) == 0 &&
	          ret == (void *)7,
	      "a thread can be started and joined");
	pid_t p = fork();
	if (p == 0)
		_exit(0);
	CHECK(p == -1 && errno == EPERM, "fork: EPERM (threads only)");
	CHECK(fails_with(syscall(SYS_clone3, NULL, 0), ENOSYS), "clone3: ENOSYS");
	CHECK(system("exit 0") != 0, "system() (posix_spawn) cannot start a shell");
	CHECK(fails_with(ptrace(PTRACE_TRACEME, 0, 0, 0), EPERM), "ptrace: EPERM");
	char buf[8] = "x", dst[8];
	struct iovec lv = {buf, 1}, rv = {dst, 1};
	CHECK(fails_with(process_vm_writev(getpid(), &lv, 1, &rv, 1, 0), EPERM),
	      "process_vm_writev: EPERM");
	if (r.landlock) {
		int fd = open("/proc/self/mem", O_RDWR);
		CHECK(fd < 0 && errno == EACCES,
		      "/proc/self/mem cannot be opened for writing (landlock)");
		fd = open(zOutside, O_WRONLY | O_CREAT, 0600);
		CHECK(fd < 0 && errno == EACCES, "a file outside /tmp cannot be made (%s)",
		      zOutside);
		char tmp[] = "/tmp/kloop-confine-XXXXXX";
		fd = mkstemp(tmp);
		CHECK(fd >= 0 && write(fd, "x", 1) == 1, "a file in /tmp can be written");
		if (fd >= 0) {
			close(fd);
			CHECK(unlink(tmp) == 0, "and removed");
		}
	} else {
		printf("ok - # SKIP landlock checks: %s\n", r.zNote);
	}
}

int main(void)
{
	char err[KL_ERRLEN];
	unsigned long lo[4], hi[4];
	int n = confine_ranges(lo, hi, 4, err);
	CHECK(n > 0 && n <= 4, "confine_ranges merges to at most the number asked (%d)", n);
	int sorted = 1;
	for (int i = 0; i < n; i++)
		sorted &= lo[i] < hi[i] && (i == 0 || hi[i - 1] < lo[i]);
	CHECK(sorted, "the ranges are ordered and disjoint");
	char cwd[4096];
	if (!getcwd(cwd, sizeof cwd))
		snprintf(cwd, sizeof cwd, ".");
	/* a place outside /tmp: the build tree, unless the checkout itself is
	 * under /tmp (a clone there), then /var/tmp */
	int underTmp = !strncmp(cwd, "/tmp/", 5) || !strcmp(cwd, "/tmp");
	char *outside = underTmp ? xasprintf("/var/tmp/kloop-confine-outside-%d", (int)getpid())
	                         : xasprintf("%s/build/confine-outside-%d", cwd, (int)getpid());
	fflush(stdout);
	pid_t p = fork();
	if (p == 0) {
		confined_checks(outside);
		fflush(stdout);
		_exit(check_done());
	}
	int st = 0;
	waitpid(p, &st, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the confined child passed all of its checks");
	CHECK(access(outside, F_OK) != 0, "nothing was made outside /tmp");
	unlink(outside);
	free(outside);
	return check_done();
}
