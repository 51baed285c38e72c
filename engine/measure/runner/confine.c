/*
 * confine.c - the runner's confinement before it loads a candidate: a
 * seccomp filter (classic BPF, assembled here) that keeps the images mapped
 * so far unchangeable and allows threads but no processes, and a landlock
 * ruleset that leaves only /tmp and /dev writable.
 */
#include "confine.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util.h"

#ifndef MREMAP_FIXED
#define MREMAP_FIXED 2
#endif
#ifndef MREMAP_DONTUNMAP
#define MREMAP_DONTUNMAP 4
#endif
#ifndef SHM_REMAP
#define SHM_REMAP 040000
#endif

#if defined(__x86_64__)
#define CF_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define CF_ARCH AUDIT_ARCH_AARCH64
#endif

/* ranges the filter keeps, at most (11 instructions each; a filter has 4096) */
#define CF_MAX_RANGES 256

/* ---- the protected ranges ---- */

static int protected_mapping(const char *perms, const char *path)
{
	if (perms[2] == 'x')
		return 1;
	if (!strcmp(path, "[vdso]") || !strcmp(path, "[vvar]") || !strcmp(path, "[vvar_vclock]"))
		return 1;
	/* a file's image that is not writable: code, read-only data, the GOT
	 * after full RELRO.  Anonymous read-only or inaccessible memory is not
	 * an image: the CUDA runtime reserves address space that way and
	 * later maps into it */
	return path[0] == '/' && perms[1] != 'w';
}

int confine_ranges(unsigned long *lo, unsigned long *hi, int nMax, char *err)
{
	FILE *f = fopen("/proc/self/maps", "re");
	if (!f)
		return kl_err(err, "cannot read /proc/self/maps: %s", strerror(errno));
	char line[4096];
	int n = 0;
	unsigned long *a = NULL, *b = NULL;
	size_t alloc = 0;
	while (fgets(line, sizeof line, f)) {
		unsigned long s, e;
		char perms[8] = "", path[4096] = "";
		if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %4095[^\n]", &s, &e, perms, path) < 3 ||
		    strlen(perms) < 3)
			continue;
		char *p = path;
		while (*p == ' ')
			p++;
		if (!protected_mapping(perms, p) || e >= 0xffffffffff000000ul)
			continue; /* the vsyscall page: outside the address space anyway */
		if (n > 0 && b[n - 1] == s) {
			b[n - 1] = e;
			continue;
		}
		xgrow((void **)&a, &alloc, (size_t)n + 1, sizeof *a);
		b = xrealloc(b, alloc * sizeof *b);
		a[n] = s, b[n] = e;
		n++;
	}
	fclose(f);
	/* too many: merge the two closest neighbours (the gap between them is
	 * protected too, which only refuses a MAP_FIXED there) */
	while (n > nMax && n > 1) {
		int k = 0;
		for (int i = 1; i + 1 < n; i++)
			if (a[i + 1] - b[i] < a[k + 1] - b[k])
				k = i;
		b[k] = b[k + 1];
		memmove(a + k + 1, a + k + 2, (size_t)(n - k - 2) * sizeof *a);
		memmove(b + k + 1, b + k + 2, (size_t)(n - k - 2) * sizeof *b);
		n--;
	}
	for (int i = 0; i < n; i++)
		lo[i] = a[i], hi[i] = b[i];
	free(a);
	free(b);
	return n;
}

/* ---- a classic BPF program with forward labels ---- */

struct prog {
	struct sock_filter *v;
	size_t n, alloc;
	int *lab;    /* label -> instruction index (-1: not yet placed) */
	size_t nLab; /* labels made */
	size_t labAlloc;
	int *refLab; /* per instruction: the label its jump goes to, -1 none */
	int *refJt;  /* per instruction: jt (1) or jf (0) or ja (2) is the label */
};

static size_t p_emit(struct prog *p, uint16_t code, uint8_t jt, uint8_t jf, uint32_t k)
{
	size_t old = p->alloc;
	xgrow((void **)&p->v, &p->alloc, p->n + 1, sizeof *p->v);
	if (p->alloc != old) {
		p->refLab = xrealloc(p->refLab, p->alloc * sizeof *p->refLab);
		p->refJt = xrealloc(p->refJt, p->alloc * sizeof *p->refJt);
	}
	p->v[p->n] = (struct sock_filter){code, jt, jf, k};
	p->refLab[p->n] = -1;
	p->refJt[p->n] = 0;
	return p->n++;
}

static int p_label(struct prog *p)
{
	xgrow((void **)&p->lab, &p->labAlloc, p->nLab + 1, sizeof *p->lab);
	p->lab[p->nLab] = -1;
	return (int)p->nLab++;
}

static void p_place(struct prog *p, int lab)
{
	p->lab[lab] = (int)p->n;
}

/* if A == k goto lab (a conditional jump to the next instruction, an
 * unconditional one of 32 bits beyond it) */
static void p_jeq_to(struct prog *p, uint32_t k, int lab)
{
	p_emit(p, BPF_JMP | BPF_JEQ | BPF_K, 0, 1, k);
	size_t i = p_emit(p, BPF_JMP | BPF_JA, 0, 0, 0);
	p->refLab[i] = lab, p->refJt[i] = 2;
}

/* if (A & k) goto lab */
static void p_jset_to(struct prog *p, uint32_t k, int lab)
{
	p_emit(p, BPF_JMP | BPF_JSET | BPF_K, 0, 1, k);
	size_t i = p_emit(p, BPF_JMP | BPF_JA, 0, 0, 0);
	p->refLab[i] = lab, p->refJt[i] = 2;
}

static void p_goto(struct prog *p, int lab)
{
	size_t i = p_emit(p, BPF_JMP | BPF_JA, 0, 0, 0);
	p->refLab[i] = lab, p->refJt[i] = 2;
}

static int p_resolve(struct prog *p, char *err)
{
	for (size_t i = 0; i < p->n; i++) {
		if (p->refLab[i] < 0)
			continue;
		int to = p->lab[p->refLab[i]];
		if (to < 0 || (size_t)to <= i)
			return kl_err(err, "seccomp filter: instruction %zu jumps back, to %d", i,
			              to);
		p->v[i].k = (uint32_t)(to - (int)i - 1);
	}
	return 0;
}

static void p_free(struct prog *p)
{
	free(p->v), free(p->lab), free(p->refLab), free(p->refJt);
}

#define ARG_LO(i) (uint32_t)(offsetof(struct seccomp_data, args) + 8 * (i))
#define ARG_HI(i) (uint32_t)(offsetof(struct seccomp_data, args) + 8 * (i) + 4)

static void p_ld(struct prog *p, uint32_t off)
{
	p_emit(p, BPF_LD | BPF_W | BPF_ABS, 0, 0, off);
}

/* M0, M1 = the address (low, high word); M2, M3 = address + length; then
 * to the range check */
static void p_range(struct prog *p, int addrArg, int lenArg, int check)
{
	p_ld(p, ARG_LO(addrArg));
	p_emit(p, BPF_ST, 0, 0, 0);
	p_ld(p, ARG_HI(addrArg));
	p_emit(p, BPF_ST, 0, 0, 1);
	p_ld(p, ARG_LO(lenArg));
	p_emit(p, BPF_ST, 0, 0, 4);
	p_emit(p, BPF_MISC | BPF_TAX, 0, 0, 0);
	p_emit(p, BPF_LD | BPF_MEM, 0, 0, 0);
	p_emit(p, BPF_ALU | BPF_ADD | BPF_X, 0, 0, 0);
	p_emit(p, BPF_ST, 0, 0, 2);
	p_ld(p, ARG_HI(lenArg));
	p_emit(p, BPF_MISC | BPF_TAX, 0, 0, 0);
	p_emit(p, BPF_LD | BPF_MEM, 0, 0, 1);
	p_emit(p, BPF_ALU | BPF_ADD | BPF_X, 0, 0, 0);
	p_emit(p, BPF_ST, 0, 0, 3);
	/* the carry: the low sum below the length's low word */
	p_emit(p, BPF_LDX | BPF_MEM, 0, 0, 4);
	p_emit(p, BPF_LD | BPF_MEM, 0, 0, 2);
	p_emit(p, BPF_JMP | BPF_JGE | BPF_X, 3, 0, 0);
	p_emit(p, BPF_LD | BPF_MEM, 0, 0, 3);
	p_emit(p, BPF_ALU | BPF_ADD | BPF_K, 0, 0, 1);
	p_emit(p, BPF_ST, 0, 0, 3);
	p_goto(p, check);
}

#define RET(v) p_emit(&p, BPF_RET | BPF_K, 0, 0, (v))

static int build_filter(struct prog *pOut, const unsigned long *lo, const unsigned long *hi, int nR,
                        char *err)
{
#ifndef CF_ARCH
	(void)pOut, (void)lo, (void)hi, (void)nR;
	return kl_err(err, "no seccomp filter for this architecture");
#else
	struct prog p = {0};
	int allow = p_label(&p), eperm = p_label(&p), enosys = p_label(&p);
	int lClone = p_label(&p), lProt = p_label(&p), lMmap = p_label(&p);
	int lUnmap = p_label(&p), lRemap = p_label(&p), lShm = p_label(&p);
	int lCheck = p_label(&p);
	p_ld(&p, offsetof(struct seccomp_data, arch));
	p_emit(&p, BPF_JMP | BPF_JEQ | BPF_K, 1, 0, CF_ARCH);
	RET(SECCOMP_RET_ERRNO | ENOSYS); /* another ABI's numbers (int 0x80) */
	p_ld(&p, offsetof(struct seccomp_data, nr));
#if defined(__x86_64__)
	p_emit(&p, BPF_JMP | BPF_JGE | BPF_K, 0, 1, 0x40000000); /* x32 */
	RET(SECCOMP_RET_ERRNO | ENOSYS);
#endif
	static const long deny[] = {
	    SYS_ptrace,
	    SYS_process_vm_readv,
	    SYS_process_vm_writev,
#ifdef SYS_fork
	    SYS_fork,
#endif
#ifdef SYS_vfork
	    SYS_vfork,
#endif
#ifdef SYS_remap_file_pages
	    SYS_remap_file_pages,
#endif
#ifdef SYS_io_uring_setup
	    SYS_io_uring_setup,
	    SYS_io_uring_enter,
	    SYS_io_uring_register,
#endif
	    /* timers that raise a signal (issue 37: its handler, run as kloop
	     * lets the runner go, peeked at the request in its socket; the
	     * runner holds signals outside kl_run too, cand_runner.c) */
	    SYS_setitimer,
	    SYS_timer_create,
#ifdef SYS_alarm
	    SYS_alarm,
#endif
	};
	for (size_t i = 0; i < sizeof deny / sizeof *deny; i++)
		p_jeq_to(&p, (uint32_t)deny[i], eperm);
#ifdef SYS_clone3
	p_jeq_to(&p, SYS_clone3, enosys);
#else
	p_jeq_to(&p, 435, enosys);
#endif
	p_jeq_to(&p, SYS_clone, lClone);
	p_jeq_to(&p, SYS_mprotect, lProt);
#ifdef SYS_pkey_mprotect
	p_jeq_to(&p, SYS_pkey_mprotect, lProt);
#endif
	p_jeq_to(&p, SYS_mmap, lMmap);
	p_jeq_to(&p, SYS_munmap, lUnmap);
	p_jeq_to(&p, SYS_mremap, lRemap);
#ifdef SYS_shmat
	p_jeq_to(&p, SYS_shmat, lShm);
#endif
	p_goto(&p, allow);

	p_place(&p, lClone); /* threads only */
	p_ld(&p, ARG_LO(0));
	p_jset_to(&p, CLONE_THREAD, allow);
	p_goto(&p, eperm);

	p_place(&p, lProt); /* made writable or executable: not a protected range */
	p_ld(&p, ARG_LO(2));
	p_jset_to(&p, PROT_WRITE | PROT_EXEC, lUnmap);
	p_goto(&p, allow);

	p_place(&p, lMmap); /* mapped over: MAP_FIXED replaces what was there */
	p_ld(&p, ARG_LO(3));
	p_jset_to(&p, MAP_FIXED, lUnmap);
	p_goto(&p, allow);

	p_place(&p, lRemap);
	p_ld(&p, ARG_LO(3));
	p_jset_to(&p, MREMAP_FIXED | MREMAP_DONTUNMAP, eperm);
	/* fall through: the old range must not be a protected one */

	p_place(&p, lUnmap);
	p_range(&p, 0, 1, lCheck);

	/* [M0 M1, M2 M3) against each [lo, hi): they meet when addr < hi and
	 * end > lo */
	p_place(&p, lCheck); /* right after its one jump: the kernel's check of
	                      * the scratch memory follows the program in order */
	for (int r = 0; r < nR; r++) {
		uint32_t hiH = (uint32_t)((uint64_t)hi[r] >> 32), hiL = (uint32_t)hi[r];
		uint32_t loH = (uint32_t)((uint64_t)lo[r] >> 32), loL = (uint32_t)lo[r];
		/* 0 */ p_emit(&p, BPF_LD | BPF_MEM, 0, 0, 1);
		/* 1 */ p_emit(&p, BPF_JMP | BPF_JGT | BPF_K, 9, 0, hiH); /* -> next */
		/* 2 */ p_emit(&p, BPF_JMP | BPF_JEQ | BPF_K, 0, 2, hiH); /* < : to 5 */
		/* 3 */ p_emit(&p, BPF_LD | BPF_MEM, 0, 0, 0);
		/* 4 */ p_emit(&p, BPF_JMP | BPF_JGE | BPF_K, 6, 0, hiL); /* -> next */
		/* 5 */ p_emit(&p, BPF_LD | BPF_MEM, 0, 0, 3);
		/* 6 */ p_emit(&p, BPF_JMP | BPF_JGT | BPF_K, 3, 0, loH); /* -> deny */
		/* 7 */ p_emit(&p, BPF_JMP | BPF_JEQ | BPF_K, 0, 3, loH); /* < : next */
		/* 8 */ p_emit(&p, BPF_LD | BPF_MEM, 0, 0, 2);
		/* 9 */ p_emit(&p, BPF_JMP | BPF_JGT | BPF_K, 0, 1, loL); /* -> deny : next */
		/* 10 */ RET(SECCOMP_RET_ERRNO | EPERM);
	}
	p_place(&p, allow);
	RET(SECCOMP_RET_ALLOW);

	p_place(&p, lShm);
	p_ld(&p, ARG_LO(2));
	p_jset_to(&p, SHM_REMAP, eperm);
	RET(SECCOMP_RET_ALLOW);

	p_place(&p, eperm);
	RET(SECCOMP_RET_ERRNO | EPERM);
	p_place(&p, enosys);
	RET(SECCOMP_RET_ERRNO | ENOSYS);

	if (p_resolve(&p, err) < 0) {
		p_free(&p);
		return -1;
	}
	*pOut = p;
	return 0;
#endif
}

static int install_filter(const unsigned long *lo, const unsigned long *hi, int nR, char *err)
{
	struct prog p;
	if (build_filter(&p, lo, hi, nR, err) < 0)
		return -1;
	struct sock_fprog fp = {.len = (unsigned short)p.n, .filter = p.v};
	int rc = 0;
	if (p.n > BPF_MAXINSNS)
		rc = kl_err(err, "the seccomp filter is too long (%zu instructions)", p.n);
	else if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fp) < 0 &&
	         prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fp) < 0)
		rc = kl_err(err, "cannot install the seccomp filter: %s", strerror(errno));
	p_free(&p);
	return rc;
}

/* ---- landlock ---- */

#ifndef LANDLOCK_CREATE_RULESET_VERSION
#define LANDLOCK_CREATE_RULESET_VERSION (1U << 0)
#endif
#define LL_WRITE_FILE (1ULL << 1)
#define LL_REMOVE_DIR (1ULL << 4)
#define LL_REMOVE_FILE (1ULL << 5)
#define LL_MAKE_CHAR (1ULL << 6)
#define LL_MAKE_DIR (1ULL << 7)
#define LL_MAKE_REG (1ULL << 8)
#define LL_MAKE_SOCK (1ULL << 9)
#define LL_MAKE_FIFO (1ULL << 10)
#define LL_MAKE_BLOCK (1ULL << 11)
#define LL_MAKE_SYM (1ULL << 12)
#define LL_REFER (1ULL << 13)
#define LL_TRUNCATE (1ULL << 14)
#define LL_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#define LL_SCOPE_SIGNAL (1ULL << 1)
#define LL_RULE_PATH_BENEATH 1
#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif

struct ll_ruleset {
	uint64_t handledFs, handledNet, scoped;
};
struct ll_beneath {
	uint64_t allowed;
	int32_t fd;
} __attribute__((packed));

static int ll_allow(int rs, const char *zDir, uint64_t access)
{
	int fd = open(zDir, O_PATH | O_CLOEXEC | O_DIRECTORY);
	if (fd < 0)
		return errno == ENOENT ? 0 : -1;
	struct ll_beneath pb = {access, fd};
	int rc = (int)syscall(SYS_landlock_add_rule, rs, LL_RULE_PATH_BENEATH, &pb, 0);
	close(fd);
	return rc;
}

/* 1 enforced, 0 not available (note says why), -1 + err */
static int landlock_writes(int *pAbi, char *note, size_t nNote, char *err)
{
	long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
	*pAbi = abi > 0 ? (int)abi : 0;
	if (abi <= 0) {
		snprintf(note, nNote, "landlock is %s, so /proc/self/mem stays writable",
		         errno == EOPNOTSUPP ? "disabled at boot" : "not in this kernel");
		return 0;
	}
	uint64_t fs = LL_WRITE_FILE | LL_REMOVE_DIR | LL_REMOVE_FILE | LL_MAKE_CHAR | LL_MAKE_DIR |
	              LL_MAKE_REG | LL_MAKE_SOCK | LL_MAKE_FIFO | LL_MAKE_BLOCK | LL_MAKE_SYM;
	if (abi >= 2)
		fs |= LL_REFER;
	if (abi >= 3)
		fs |= LL_TRUNCATE;
	struct ll_ruleset attr = {.handledFs = fs};
	/* from ABI 6: no signals to processes outside (the worker, when the
	 * runner shares its pid namespace), no abstract sockets outside */
	if (abi >= 6)
		attr.scoped = LL_SCOPE_SIGNAL | LL_SCOPE_ABSTRACT_UNIX_SOCKET;
	size_t size = abi >= 6 ? sizeof attr : sizeof attr.handledFs;
	int rs = (int)syscall(SYS_landlock_create_ruleset, &attr, size, 0);
	if (rs < 0)
		return kl_err(err, "landlock: cannot make a ruleset: %s", strerror(errno));
	const char *tmp = getenv("TMPDIR");
	int rc = ll_allow(rs, "/tmp", fs) < 0 || ll_allow(rs, "/dev", fs) < 0 ||
	                 (tmp && tmp[0] == '/' && ll_allow(rs, tmp, fs) < 0)
	             ? kl_err(err, "landlock: cannot add a rule: %s", strerror(errno))
	             : 0;
	if (!rc && syscall(SYS_landlock_restrict_self, rs, 0) < 0)
		rc = kl_err(err, "landlock: cannot enforce the ruleset: %s", strerror(errno));
	close(rs);
	return rc < 0 ? -1 : 1;
}

int confine_runner(struct confine_report *r, char *err)
{
	memset(r, 0, sizeof *r);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return kl_err(err, "cannot set no_new_privs: %s", strerror(errno));
	int ll = landlock_writes(&r->landlockAbi, r->zNote, sizeof r->zNote, err);
	if (ll < 0)
		return -1;
	r->landlock = ll;
	unsigned long lo[CF_MAX_RANGES], hi[CF_MAX_RANGES];
	int n = confine_ranges(lo, hi, CF_MAX_RANGES, err);
	if (n < 0)
		return -1;
	r->nRanges = n;
#ifdef CF_ARCH
	if (install_filter(lo, hi, n, err) < 0)
		return -1;
	r->seccomp = 1;
#else
	size_t k = strlen(r->zNote);
	snprintf(r->zNote + k, sizeof r->zNote - k, "%sno seccomp filter for this architecture",
	         k ? "; " : "");
#endif
	return 0;
}

int confine_probe(struct confine_report *r, char *err)
{
	int p[2];
	if (pipe(p) < 0)
		return kl_err(err, "pipe: %s", strerror(errno));
	pid_t pid = fork();
	if (pid < 0) {
		close(p[0]), close(p[1]);
		return kl_err(err, "fork: %s", strerror(errno));
	}
	if (pid == 0) {
		close(p[0]);
		struct confine_report c;
		char e[KL_ERRLEN];
		if (confine_runner(&c, e) < 0) {
			memset(&c, 0, sizeof c);
			snprintf(c.zNote, sizeof c.zNote, "%.200s", e);
			c.nRanges = -1;
		}
		(void)!write(p[1], &c, sizeof c);
		_exit(0);
	}
	close(p[1]);
	ssize_t n = read(p[0], r, sizeof *r);
	close(p[0]);
	waitpid(pid, NULL, 0);
	if (n != (ssize_t)sizeof *r)
		return kl_err(err, "the confinement probe did not answer");
	if (r->nRanges < 0)
		return kl_err(err, "%s", r->zNote);
	return 0;
}
