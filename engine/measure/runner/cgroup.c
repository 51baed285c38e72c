/*
 * cgroup.c - kloop's control groups: found once (v2, or the v1 controllers
 * of a hybrid host), one directory per runner or compile in each hierarchy
 * used, limits written at creation, freeze and thaw, usage read back.
 */
#include "cgroup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

enum { H_V2, H_MEM, H_PIDS, H_FREEZER, H_COUNT };
/* the v1 controller of each hierarchy */
static const char *const zV1Ctl[H_COUNT] = {NULL, "memory", "pids", "freezer"};

/* a hierarchy kloop uses: its base directory, kloop-PID, made at the probe */
struct hier {
	int used;
	char zBase[512];
};

static struct {
	int probed;
	struct cgroup_support s;
	struct hier h[H_COUNT];
	int v2Mem, v2Pids; /* the v2 base has these controllers for its children */
	unsigned serial;
	/* where kloop's own group is: the v2 mount and the memory controller's
	 * v1 mount, each with kloop's path below it ("" where none) */
	char zV2Mount[512], zV2Own[512], zMemMount[512], zMemOwn[512];
} G;

struct cgroup {
	char *azDir[H_COUNT]; /* its directory in each hierarchy used, or NULL */
	int procsFd[H_COUNT]; /* their cgroup.procs, open for cgroup_enter (-1: none) */
	int freezeFd;         /* cgroup.freeze (v2) or freezer.state (v1), -1: none */
	int eventsFd;         /* v2: cgroup.events, -1: none */
	int cpuFd;            /* v2: cpu.stat (its CPU time, every task), -1: none */
	int freezeV;          /* 2, 1, 0: which freezer */
	int memV, pidsV;      /* which hierarchy holds its memory and pids limits */
	int frozen;
};

/* ---- files ---- */

static int write_str(const char *zPath, const char *zVal)
{
	int fd = open(zPath, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = write(fd, zVal, strlen(zVal));
	int e = errno;
	close(fd);
	errno = e;
	return n == (ssize_t)strlen(zVal) ? 0 : -1;
}

static int read_small(const char *zPath, char *buf, size_t n)
{
	int fd = open(zPath, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t r = read(fd, buf, n - 1);
	close(fd);
	if (r < 0)
		return -1;
	buf[r] = 0;
	return 0;
}

static int file_in(const char *zDir, const char *zFile, char *buf, size_t n)
{
	char p[700];
	snprintf(p, sizeof p, "%s/%s", zDir, zFile);
	return read_small(p, buf, n);
}

/* the number after "key " in a flat keyed file (cgroup.events, memory.events) */
static long long keyed(const char *zText, const char *zKey)
{
	size_t k = strlen(zKey);
	for (const char *p = zText; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, zKey, k) && p[k] == ' ')
			return atoll(p + k + 1);
	return -1;
}

static unsigned long long num_in(const char *zDir, const char *zFile)
{
	char buf[64];
	if (file_in(zDir, zFile, buf, sizeof buf) < 0 || !strncmp(buf, "max", 3))
		return 0;
	return strtoull(buf, NULL, 10);
}

/* zWord is one of the space-separated words of zList */
static int has_word(const char *zList, const char *zWord)
{
	size_t k = strlen(zWord);
	for (const char *p = zList; (p = strstr(p, zWord)); p += k)
		if ((p == zList || p[-1] == ' ' || p[-1] == ',') &&
		    (!p[k] || p[k] == ' ' || p[k] == '\n' || p[k] == ','))
			return 1;
	return 0;
}

/* ---- the probe ---- */

/* groups left by kloop processes that are gone (a worker killed by SIGKILL
 * cannot remove its own): their empty directories removed */
static void sweep_stale(const char *zParent)
{
	DIR *d = opendir(zParent);
	struct dirent *e;
	while (d && (e = readdir(d))) {
		int pid;
		char tail;
		if (sscanf(e->d_name, "kloop-%d%c", &pid, &tail) != 1 || pid <= 0 ||
		    (kill(pid, 0) < 0 && errno == EPERM) || kill(pid, 0) == 0)
			continue;
		char base[1024];
		snprintf(base, sizeof base, "%s/%s", zParent, e->d_name);
		DIR *s = opendir(base);
		struct dirent *f;
		while (s && (f = readdir(s)))
			if (f->d_type == DT_DIR && f->d_name[0] != '.') {
				char p[1400];
				snprintf(p, sizeof p, "%s/%s", base, f->d_name);
				rmdir(p);
			}
		if (s)
			closedir(s);
		rmdir(base);
	}
	if (d)
		closedir(d);
}

/* make zParent/kloop-PID; 0 with zBase, or -1 */
static int make_base(const char *zParent, char *zBase, size_t n)
{
	sweep_stale(zParent);
	snprintf(zBase, n, "%s/kloop-%d", zParent, (int)getpid());
	if (mkdir(zBase, 0755) < 0 && errno != EEXIST)
		return -1;
	return 0;
}

static void remove_bases(void)
{
	for (int k = 0; k < H_COUNT; k++)
		if (G.h[k].used)
			rmdir(G.h[k].zBase);
}

/* the v2 base: below kloop's own group when that group hands the memory and
 * pids controllers down, else below the root group (as root), else below
 * kloop's own group for the freezer alone */
static void probe_v2(const char *zMount, const char *zOwn, char *why, size_t nWhy)
{
	char own[1100], ctl[256] = "";
	snprintf(own, sizeof own, "%s%s", zMount, strcmp(zOwn, "/") ? zOwn : "");
	const char *parents[2] = {own, zMount};
	if (file_in(own, "cgroup.subtree_control", ctl, sizeof ctl) == 0 &&
	    has_word(ctl, "memory") && has_word(ctl, "pids"))
		parents[1] = NULL;
	else
		parents[0] = zMount, parents[1] = own;
	for (int i = 0; i < 2 && parents[i]; i++) {
		if (i == 1 && !strcmp(parents[0], parents[1]))
			break;
		char base[512];
		if (make_base(parents[i], base, sizeof base) < 0) {
			snprintf(why, nWhy, "cannot make a group in %s: %s", parents[i],
			         strerror(errno));
			continue;
		}
		/* the controllers for its children: enabled in the parent (the
		 * root group may, beside its processes) and then in the base */
		char avail[256] = "";
		if (file_in(base, "cgroup.controllers", avail, sizeof avail) == 0 &&
		    (!has_word(avail, "memory") || !has_word(avail, "pids"))) {
			char p[600];
			snprintf(p, sizeof p, "%s/cgroup.subtree_control", parents[i]);
			write_str(p, "+memory");
			write_str(p, "+pids");
			file_in(base, "cgroup.controllers", avail, sizeof avail);
		}
		char p[600];
		snprintf(p, sizeof p, "%s/cgroup.subtree_control", base);
		if (has_word(avail, "memory") && write_str(p, "+memory") == 0)
			G.v2Mem = 1;
		if (has_word(avail, "pids") && write_str(p, "+pids") == 0)
			G.v2Pids = 1;
		char probe[600];
		snprintf(probe, sizeof probe, "%s/cgroup.freeze", base);
		if (access(probe, W_OK) < 0) {
			rmdir(base);
			continue;
		}
		G.h[H_V2].used = 1;
		snprintf(G.h[H_V2].zBase, sizeof G.h[H_V2].zBase, "%s", base);
		return;
	}
}

/* a v1 hierarchy with the controller zCtl: its base below kloop's own group */
static void probe_v1(int k, const char *zMount, const char *zOwn)
{
	char parent[600], base[512];
	snprintf(parent, sizeof parent, "%s%s", zMount, strcmp(zOwn, "/") ? zOwn : "");
	if (make_base(parent, base, sizeof base) < 0)
		return;
	G.h[k].used = 1;
	snprintf(G.h[k].zBase, sizeof G.h[k].zBase, "%s", base);
}

const struct cgroup_support *cgroup_probe(void)
{
	if (G.probed)
		return &G.s;
	G.probed = 1;
	/* the mounts: v2's, and v1's by controller */
	char v2[512] = "", v1[H_COUNT][512] = {{0}};
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096];
	while (f && fgets(line, sizeof line, f)) {
		char mp[512], *sep = strstr(line, " - ");
		if (!sep || sscanf(line, "%*s %*s %*s %*s %511s", mp) != 1)
			continue;
		char fstype[64], src[256], opts[1024] = "";
		if (sscanf(sep + 3, "%63s %255s %1023s", fstype, src, opts) < 2)
			continue;
		if (!strcmp(fstype, "cgroup2") && !v2[0])
			snprintf(v2, sizeof v2, "%s", mp);
		else if (!strcmp(fstype, "cgroup")) {
			for (char *o = opts; *o; o++)
				if (*o == ',')
					*o = ' ';
			for (int k = H_MEM; k < H_COUNT; k++)
				if (has_word(opts, zV1Ctl[k]))
					snprintf(v1[k], sizeof v1[k], "%s", mp);
		}
	}
	if (f)
		fclose(f);
	/* kloop's own groups */
	char own[H_COUNT][512] = {{0}};
	f = fopen("/proc/self/cgroup", "re");
	while (f && fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = 0;
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c2)
			continue;
		*c2 = 0;
		char *ctl = c1 + 1, *path = c2 + 1;
		for (char *o = ctl; *o; o++)
			if (*o == ',')
				*o = ' ';
		if (!*ctl)
			snprintf(own[H_V2], sizeof own[H_V2], "%s", path);
		for (int k = H_MEM; k < H_COUNT; k++)
			if (has_word(ctl, zV1Ctl[k]))
				snprintf(own[k], sizeof own[k], "%s", path);
	}
	if (f)
		fclose(f);
	snprintf(G.zV2Mount, sizeof G.zV2Mount, "%s", v2[0] && own[H_V2][0] ? v2 : "");
	snprintf(G.zV2Own, sizeof G.zV2Own, "%s", own[H_V2]);
	snprintf(G.zMemMount, sizeof G.zMemMount, "%s",
	         v1[H_MEM][0] && own[H_MEM][0] ? v1[H_MEM] : "");
	snprintf(G.zMemOwn, sizeof G.zMemOwn, "%s", own[H_MEM]);
	char why2[300] = "";
	if (v2[0] && own[H_V2][0])
		probe_v2(v2, own[H_V2], why2, sizeof why2);
	if (G.h[H_V2].used) {
		G.s.freeze = 2;
		G.s.memory = G.v2Mem ? 2 : 0;
		G.s.pids = G.v2Pids ? 2 : 0;
	}
	int ks[3] = {H_MEM, H_PIDS, H_FREEZER};
	int *have[3] = {&G.s.memory, &G.s.pids, &G.s.freeze};
	for (int i = 0; i < 3; i++)
		if (!*have[i] && v1[ks[i]][0] && own[ks[i]][0]) {
			probe_v1(ks[i], v1[ks[i]], own[ks[i]]);
			*have[i] = G.h[ks[i]].used ? 1 : 0;
		}
	strbuf b = STRBUF_INIT;
	for (int k = 0; k < H_COUNT; k++)
		if (G.h[k].used)
			sb_addf(&b, "%s%s", b.len ? ", " : "", G.h[k].zBase);
	snprintf(G.s.zWhere, sizeof G.s.zWhere, "%s", b.len ? b.buf : "");
	sb_free(&b);
	if (!G.s.memory || !G.s.pids || !G.s.freeze)
		snprintf(G.s.zWhy, sizeof G.s.zWhy, "%s",
		         !v2[0] && !v1[H_MEM][0] ? "no cgroup hierarchy is mounted"
		         : why2[0]               ? why2
		         : G.h[H_V2].used
		             ? "the memory or pids controller is not available to kloop"
		             : "no cgroup directory kloop may write");
	if (G.h[H_V2].used || G.h[H_MEM].used || G.h[H_PIDS].used || G.h[H_FREEZER].used)
		atexit(remove_bases);
	return &G.s;
}

void cgroup_describe(char *buf, size_t n)
{
	const struct cgroup_support *s = cgroup_probe();
	static const char *ver[] = {"none", "v1", "v2"};
	if (s->memory && s->pids && s->freeze) {
		snprintf(buf, n, "cgroup: memory %s, pids %s, freezer %s (%s)", ver[s->memory],
		         ver[s->pids], ver[s->freeze], s->zWhere);
		return;
	}
	snprintf(buf, n, "cgroup: memory %s, pids %s, freezer %s (%s); instead: %s%s%s (%s)",
	         ver[s->memory], ver[s->pids], ver[s->freeze], s->zWhere[0] ? s->zWhere : "none",
	         !s->memory ? "a candidate's memory limited per process (RLIMIT_AS on the host), "
	                    : "",
	         !s->pids ? "one process with threads limited by RLIMIT_NPROC, " : "",
	         !s->freeze ? "its runner stopped with SIGSTOP between calls" : "no more", s->zWhy);
}

/* the smallest of zFile's limits in zMount+zOwn and each group above it up
 * to the mount (0: none; "max" and v1's "unlimited", a page-rounded
 * 2^63, are none) */
static unsigned long long smallest_limit(const char *zMount, const char *zOwn, const char *zFile)
{
	if (!zMount[0])
		return 0;
	char dir[1100];
	snprintf(dir, sizeof dir, "%s%s", zMount, strcmp(zOwn, "/") ? zOwn : "");
	size_t nMount = strlen(zMount);
	unsigned long long best = 0;
	for (;;) {
		unsigned long long v = num_in(dir, zFile);
		if (v && v < (1ull << 60) && (!best || v < best))
			best = v;
		char *sl = strrchr(dir, '/');
		if (strlen(dir) <= nMount || !sl || (size_t)(sl - dir) < nMount)
			break;
		*sl = 0;
	}
	return best;
}

unsigned long long cgroup_own_memory_limit(void)
{
	cgroup_probe();
	unsigned long long v2 = smallest_limit(G.zV2Mount, G.zV2Own, "memory.max");
	unsigned long long v1 = smallest_limit(G.zMemMount, G.zMemOwn, "memory.limit_in_bytes");
	return !v2 ? v1 : !v1 ? v2 : v1 < v2 ? v1 : v2;
}

/* ---- a group ---- */

static int open_in(const char *zDir, const char *zFile, int flags)
{
	char p[700];
	snprintf(p, sizeof p, "%s/%s", zDir, zFile);
	return open(p, flags | O_CLOEXEC);
}

static int set_in(const char *zDir, const char *zFile, const char *zVal)
{
	char p[700];
	snprintf(p, sizeof p, "%s/%s", zDir, zFile);
	return write_str(p, zVal);
}

struct cgroup *cgroup_new(const char *zTag, const struct cgroup_limits *l, char *err)
{
	const struct cgroup_support *s = cgroup_probe();
	if (!s->memory && !s->pids && !s->freeze) {
		kl_err(err, "no cgroup: %s", s->zWhy);
		return NULL;
	}
	struct cgroup *g = xcalloc(1, sizeof *g);
	g->freezeFd = g->eventsFd = g->cpuFd = -1;
	for (int k = 0; k < H_COUNT; k++)
		g->procsFd[k] = -1;
	unsigned serial = ++G.serial;
	for (int k = 0; k < H_COUNT; k++) {
		if (!G.h[k].used)
			continue;
		g->azDir[k] = xasprintf("%s/%s-%u", G.h[k].zBase, zTag, serial);
		if (mkdir(g->azDir[k], 0755) < 0) {
			kl_err(err, "cannot make the cgroup %s: %s", g->azDir[k], strerror(errno));
			free(g->azDir[k]);
			g->azDir[k] = NULL;
			cgroup_free(g);
			return NULL;
		}
		g->procsFd[k] = open_in(g->azDir[k], "cgroup.procs", O_WRONLY);
	}
	char v[32];
	if (s->memory && l->memBytes) {
		snprintf(v, sizeof v, "%llu", l->memBytes);
		if (s->memory == 2) {
			set_in(g->azDir[H_V2], "memory.max", v);
			set_in(g->azDir[H_V2], "memory.swap.max", "0");
		} else {
			set_in(g->azDir[H_MEM], "memory.limit_in_bytes", v);
			set_in(g->azDir[H_MEM], "memory.memsw.limit_in_bytes", v);
		}
		g->memV = s->memory;
	}
	if (s->pids && l->maxTasks > 0) {
		snprintf(v, sizeof v, "%d", l->maxTasks);
		set_in(g->azDir[s->pids == 2 ? H_V2 : H_PIDS], "pids.max", v);
		g->pidsV = s->pids;
	}
	if (s->freeze == 2) {
		g->freezeFd = open_in(g->azDir[H_V2], "cgroup.freeze", O_WRONLY);
		g->eventsFd = open_in(g->azDir[H_V2], "cgroup.events", O_RDONLY);
	} else if (s->freeze == 1) {
		g->freezeFd = open_in(g->azDir[H_FREEZER], "freezer.state", O_RDWR);
	}
	g->freezeV = g->freezeFd >= 0 ? s->freeze : 0;
	/* cpu.stat's usage is in every v2 group, with or without the cpu
	 * controller */
	if (g->azDir[H_V2])
		g->cpuFd = open_in(g->azDir[H_V2], "cpu.stat", O_RDONLY);
	for (int k = 0; k < H_COUNT; k++)
		if (g->azDir[k] && g->procsFd[k] < 0) {
			kl_err(err, "cannot open %s/cgroup.procs: %s", g->azDir[k],
			       strerror(errno));
			cgroup_free(g);
			return NULL;
		}
	return g;
}

int cgroup_has_memory(const struct cgroup *g)
{
	return g ? g->memV : 0;
}

int cgroup_has_pids(const struct cgroup *g)
{
	return g ? g->pidsV : 0;
}

int cgroup_has_freeze(const struct cgroup *g)
{
	return g ? g->freezeV : 0;
}

long long cgroup_cpu_usec(const struct cgroup *g)
{
	char buf[512];
	ssize_t r = g && g->cpuFd >= 0 ? pread(g->cpuFd, buf, sizeof buf - 1, 0) : -1;
	if (r <= 0)
		return -1;
	buf[r] = 0;
	long long v;
	return strncmp(buf, "usage_usec ", 11) == 0 && sscanf(buf + 11, "%lld", &v) == 1 ? v : -1;
}

int cgroup_enter(const struct cgroup *g)
{
	for (int k = 0; k < H_COUNT; k++)
		if (g->procsFd[k] >= 0 && write(g->procsFd[k], "0", 1) != 1)
			return -1;
	return 0;
}

/* v2: frozen, as cgroup.events says */
static int v2_frozen(struct cgroup *g)
{
	char buf[256];
	ssize_t r = pread(g->eventsFd, buf, sizeof buf - 1, 0);
	if (r <= 0)
		return -1;
	buf[r] = 0;
	return keyed(buf, "frozen") == 1;
}

int cgroup_freeze_start(struct cgroup *g, char *err)
{
	if (!g || !g->freezeV)
		return kl_err(err, "this group has no freezer");
	if (g->freezeV == 1)
		return 0; /* v1: one write that is repeated until it holds (the wait) */
	if (pwrite(g->freezeFd, "1", 1, 0) != 1)
		return kl_err(err, "cannot freeze the group: %s", strerror(errno));
	g->frozen = 1;
	return 0;
}

int cgroup_freeze_wait(struct cgroup *g, char *err)
{
	return cgroup_freeze(g, 1, err);
}

int cgroup_freeze(struct cgroup *g, int on, char *err)
{
	if (!g || !g->freezeV)
		return kl_err(err, "this group has no freezer");
	if (g->freezeV == 2) {
		if (!(on && g->frozen) && pwrite(g->freezeFd, on ? "1" : "0", 1, 0) != 1)
			return kl_err(err, "cannot %s the group: %s", on ? "freeze" : "thaw",
			              strerror(errno));
		g->frozen = on;
		if (!on)
			return 0;
		/* the freeze completes asynchronously, in microseconds: read its
		 * state back, then wait for its notification */
		double t0 = now_s();
		for (int i = 0;; i++) {
			int fr = v2_frozen(g);
			if (fr == 1)
				return 0;
			if (fr < 0)
				return kl_err(err, "cannot read the group's state: %s",
				              strerror(errno));
			if (now_s() - t0 > 2)
				return kl_err(err, "the group did not freeze within 2 s");
			if (i < 64) {
				sched_yield();
				continue;
			}
			struct pollfd p = {.fd = g->eventsFd, .events = POLLPRI};
			poll(&p, 1, 1);
		}
	}
	const char *z = on ? "FROZEN" : "THAWED";
	double t0 = now_s();
	for (int i = 0;; i++) {
		if (pwrite(g->freezeFd, z, strlen(z), 0) != (ssize_t)strlen(z))
			return kl_err(err, "cannot %s the group: %s", on ? "freeze" : "thaw",
			              strerror(errno));
		char buf[32];
		ssize_t r = pread(g->freezeFd, buf, sizeof buf - 1, 0);
		buf[r > 0 ? r : 0] = 0;
		if (!strncmp(buf, z, strlen(z))) {
			g->frozen = on;
			return 0;
		}
		if (now_s() - t0 > 2)
			return kl_err(err, "the group did not %s within 2 s",
			              on ? "freeze" : "thaw");
		if (i < 64)
			sched_yield();
		else
			usleep(200);
	}
}

void cgroup_usage(const struct cgroup *g, struct cgroup_usage *u)
{
	memset(u, 0, sizeof *u);
	if (!g)
		return;
	char buf[1024];
	if (g->memV == 2) {
		const char *d = g->azDir[H_V2];
		u->memPeak = num_in(d, "memory.peak");
		u->memLimit = num_in(d, "memory.max");
		if (file_in(d, "memory.events", buf, sizeof buf) == 0) {
			long long v = keyed(buf, "oom_kill");
			u->oomKills = v > 0 ? (int)v : 0;
			v = keyed(buf, "max");
			u->memMaxHits = v > 0 ? (int)v : 0;
		}
	} else if (g->memV == 1) {
		const char *d = g->azDir[H_MEM];
		u->memPeak = num_in(d, "memory.max_usage_in_bytes");
		u->memLimit = num_in(d, "memory.limit_in_bytes");
		u->memMaxHits = (int)num_in(d, "memory.failcnt");
		if (file_in(d, "memory.oom_control", buf, sizeof buf) == 0) {
			long long v = keyed(buf, "oom_kill");
			u->oomKills = v > 0 ? (int)v : 0;
		}
	}
	if (g->pidsV) {
		const char *d = g->azDir[g->pidsV == 2 ? H_V2 : H_PIDS];
		u->taskLimit = (int)num_in(d, "pids.max");
		u->tasksPeak = (int)num_in(d, "pids.peak");
		if (file_in(d, "pids.events", buf, sizeof buf) == 0) {
			long long v = keyed(buf, "max");
			u->taskMaxHits = v > 0 ? (int)v : 0;
		}
	}
}

/* "1.50 GiB", "512 MiB" */
static void bytes_str(unsigned long long b, char *buf, size_t n)
{
	if (b >= (1ull << 30))
		snprintf(buf, n, "%.2f GiB", (double)b / (1ull << 30));
	else
		snprintf(buf, n, "%.0f MiB", (double)b / (1ull << 20));
}

void cgroup_usage_note(const struct cgroup_usage *u, char *buf, size_t n)
{
	buf[0] = 0;
	size_t k = 0;
	char peak[32], lim[32];
	bytes_str(u->memPeak, peak, sizeof peak);
	bytes_str(u->memLimit, lim, sizeof lim);
	if (u->oomKills > 0)
		k += (size_t)snprintf(buf, n,
		                      "the candidate's memory limit was reached: it held %s of "
		                      "its %s (the limit on all of its processes and its /tmp "
		                      "together), and the OOM killer ended %d of its processes",
		                      peak, lim, u->oomKills);
	else if (u->memMaxHits > 0 && u->memLimit && u->memPeak >= u->memLimit / 100 * 99)
		k += (size_t)snprintf(buf, n,
		                      "the candidate reached its memory limit (%s of %s: its "
		                      "allocations beyond it failed)",
		                      peak, lim);
	if (u->taskMaxHits > 0 && k < n)
		snprintf(buf + k, n - k,
		         "%sthe candidate's task limit was reached: %d threads or processes "
		         "could not be started (pids.max %d)",
		         k ? "; " : "", u->taskMaxHits, u->taskLimit);
}

void cgroup_free(struct cgroup *g)
{
	if (!g)
		return;
	if (g->frozen)
		cgroup_freeze(g, 0, NULL);
	/* kill what is left (a v1 frozen task could not die), then remove */
	const char *d = NULL;
	for (int k = 0; k < H_COUNT && !d; k++)
		d = g->azDir[k];
	if (d && set_in(d, "cgroup.kill", "1") < 0) {
		char p[700];
		snprintf(p, sizeof p, "%s/cgroup.procs", d);
		FILE *f = fopen(p, "re");
		int pid;
		while (f && fscanf(f, "%d", &pid) == 1)
			kill(pid, SIGKILL);
		if (f)
			fclose(f);
	}
	for (int k = 0; k < H_COUNT; k++) {
		if (g->procsFd[k] >= 0)
			close(g->procsFd[k]);
		if (!g->azDir[k])
			continue;
		for (int i = 0; i < 200 && rmdir(g->azDir[k]) < 0 && errno == EBUSY; i++)
			usleep(5000);
		free(g->azDir[k]);
	}
	if (g->freezeFd >= 0)
		close(g->freezeFd);
	if (g->eventsFd >= 0)
		close(g->eventsFd);
	if (g->cpuFd >= 0)
		close(g->cpuFd);
	free(g);
}
