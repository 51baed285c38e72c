/*
 * confine.h - what a runner does to itself after its trusted setup and
 * before it loads a candidate, so that the candidate cannot rewrite the
 * code it was loaded beside nor start anything that runs outside the calls
 * kloop times:
 * - a seccomp filter: the memory mapped before the candidate (every
 *   program and library image, code, read-only data and the full-RELRO GOT,
 *   the vDSO) can be neither made writable or executable again (mprotect),
 *   nor unmapped, replaced (mmap MAP_FIXED) or moved (mremap); no ptrace,
 *   no process_vm_readv/writev, no io_uring; threads may be started, other
 *   processes may not (fork, vfork, clone without CLONE_THREAD: EPERM;
 *   clone3: ENOSYS, so that the C library falls back to clone);
 * - landlock (where the kernel has it): files may be written, made or
 *   removed only beneath /tmp and /dev, so /proc/self/mem cannot be opened
 *   for writing, nor anything of the host;
 * - no new privileges.
 * None of this is what makes a time trustworthy: code in a process can
 * always take the process over (its stack, its heap), so kloop bounds every
 * reported time by its own clock from outside (harness_clock.c) and freezes the
 * runner between calls (cgroup.h).  It closes the cheap routes: patching
 * the runner's GOT or code, writing its memory through /proc, forking a
 * helper that works while the runner is stopped.
 */
#ifndef KL_CONFINE_H
#define KL_CONFINE_H

/* what confine_runner() put in place */
struct confine_report {
	int seccomp;     /* the filter is installed */
	int landlock;    /* the landlock ruleset is enforced */
	int landlockAbi; /* the kernel's landlock ABI version (0: none) */
	int nRanges;     /* address ranges the filter keeps unchangeable */
	char zNote[256]; /* what could not be done, for the worker's messages ("" if all) */
};

/*
 * Confine the calling process as above.  0 with *r filled (a part the
 * kernel lacks is named in r->zNote: landlock before Linux 5.13, seccomp on
 * an architecture kloop has no filter for), or -1 with err when the
 * filter itself could not be installed.  Call it with one thread, before
 * the candidate is loaded; it cannot be undone.
 */
int confine_runner(struct confine_report *r, char *err);

/* what confine_runner() would put in place here, tried in a child (for
 * kloop doctor): 0 with *r, or -1 with err */
int confine_probe(struct confine_report *r, char *err);

/*
 * The protected ranges confine_runner() would use, from /proc/self/maps:
 * every mapping that is executable, or file-backed and not writable, or the
 * vDSO, adjacent ones merged, at most nMax (the closest merged further).
 * Fills lo[] and hi[] ([lo, hi)), returns their number, -1 with err.
 */
int confine_ranges(unsigned long *lo, unsigned long *hi, int nMax, char *err);

#endif
