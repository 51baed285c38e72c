/*
 * cuda_target.c - the GPU target of a device's candidates (cuda_target.h):
 * the default per compute capability, KLOOP_CUDA_ARCH's spellings, nvcc's
 * flag, the toolkit asked once whether it builds the arch-specific target,
 * and the words for code that needs a target the build lacks.
 */
#include "cuda_target.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "proc.h"
#include "util.h"

void cuda_target_default(int major, int minor, char *zOut, size_t n)
{
	/* the families whose fast instructions are arch-specific: Hopper's
	 * wgmma / TMA / setmaxnreg, Blackwell's tcgen05 */
	int specific = major == 9 || major == 10 || major == 12;
	snprintf(zOut, n, "sm_%d%d%s", major, minor, specific ? "a" : "");
}

int cuda_target_parse(const char *z, char *zOut, size_t n, char *err)
{
	const char *p = z ? z : "";
	if (!strncasecmp(p, "sm_", 3))
		p += 3;
	else if (!strncasecmp(p, "sm", 2))
		p += 2;
	size_t nd = 0;
	while (isdigit((unsigned char)p[nd]))
		nd++;
	char suffix = (char)tolower((unsigned char)p[nd]);
	int ok = (nd == 2 || nd == 3) && p[0] != '0' &&
	         (p[nd] == 0 || ((suffix == 'a' || suffix == 'f') && p[nd + 1] == 0));
	if (!ok)
		return kl_err(err,
		              "KLOOP_CUDA_ARCH=%s: not a GPU target (expected sm_ and the compute "
		              "capability's digits, optionally 'a' for the arch-specific target: "
		              "sm_90, sm_90a or 90a)",
		              z ? z : "");
	snprintf(zOut, n, "sm_%.*s%s", (int)nd, p, p[nd] ? (suffix == 'a' ? "a" : "f") : "");
	return 0;
}

int cuda_target_specific(const char *zTarget)
{
	size_t n = strlen(zTarget);
	return n > 0 && (zTarget[n - 1] == 'a' || zTarget[n - 1] == 'f');
}

char *cuda_target_gencode(const char *zTarget)
{
	const char *d = !strncmp(zTarget, "sm_", 3) ? zTarget + 3 : zTarget;
	if (cuda_target_specific(zTarget))
		return xasprintf("-gencode=arch=compute_%s,code=sm_%s", d, d);
	return xasprintf("-gencode=arch=compute_%s,code=[sm_%s,compute_%s]", d, d, d);
}

/* the target's compute capability as major * 10 + minor ("sm_103a": 103) */
static int target_cc(const char *zTarget)
{
	return atoi(zTarget + (!strncmp(zTarget, "sm_", 3) ? 3 : 0));
}

/* 1 when nvcc zNvcc accepts the flag that builds zTarget (a dry run: no
 * file is read or written), 0 when it refuses it, -1 when it did not run
 * (not installed: its compiles will say so) */
static int nvcc_builds(const char *zNvcc, const char *zTarget)
{
	char *gen = cuda_target_gencode(zTarget);
	char *argv[] = {(char *)zNvcc, "--dryrun",  gen,  "-x",        "cu",
	                "-c",          "/dev/null", "-o", "/dev/null", NULL};
	char *out = NULL;
	int timedOut = 0;
	int st = proc_capture_timeout(argv, &out, 1 << 16, 30, &timedOut);
	free(out);
	free(gen);
	if (st < 0 || timedOut || !WIFEXITED(st) || WEXITSTATUS(st) == 127)
		return -1;
	return WEXITSTATUS(st) == 0;
}

int cuda_target_choose(struct cuda_target *t, int major, int minor, const char *zOverride,
                       const char *zNvcc, char *err)
{
	memset(t, 0, sizeof *t);
	t->ccMajor = major;
	t->ccMinor = minor;
	char dflt[16];
	cuda_target_default(major, minor, dflt, sizeof dflt);
	int known = major > 0;
	if (zOverride && *zOverride) {
		if (cuda_target_parse(zOverride, t->zName, sizeof t->zName, err) < 0)
			return -1;
		t->bOverride = 1;
		int cc = target_cc(t->zName), dev = major * 10 + minor;
		if (known && cuda_target_specific(t->zName) && cc != dev)
			snprintf(t->zNote, sizeof t->zNote,
			         "KLOOP_CUDA_ARCH=%s builds code that only a GPU of compute "
			         "capability %d.%d runs: this device (%d.%d) cannot run it "
			         "(unset KLOOP_CUDA_ARCH to build %s)",
			         zOverride, cc / 10, cc % 10, major, minor, dflt);
		else if (known && cc > dev)
			snprintf(t->zNote, sizeof t->zNote,
			         "KLOOP_CUDA_ARCH=%s is newer than this device (compute capability "
			         "%d.%d), which cannot run its code (unset KLOOP_CUDA_ARCH to "
			         "build %s)",
			         zOverride, major, minor, dflt);
		else if (known && cuda_target_specific(dflt) && cc == dev &&
		         !cuda_target_specific(t->zName))
			snprintf(t->zNote, sizeof t->zNote,
			         "KLOOP_CUDA_ARCH=%s leaves out %s's own instructions (wgmma, TMA, "
			         "setmaxnreg; CUTLASS's SM90 kernels compile to nothing): unset it "
			         "to build %s",
			         zOverride, dflt, dflt);
		return 0;
	}
	snprintf(t->zName, sizeof t->zName, "%s", dflt);
	if (cuda_target_specific(dflt) && zNvcc && nvcc_builds(zNvcc, dflt) == 0) {
		snprintf(t->zName, sizeof t->zName, "sm_%d%d", major, minor);
		snprintf(t->zNote, sizeof t->zNote,
		         "%s cannot build %s (the device's arch-specific target): candidates are "
		         "built for %s, without its own instructions (wgmma, TMA, setmaxnreg); a "
		         "newer CUDA toolkit builds them",
		         zNvcc, dflt, t->zName);
	}
	return 0;
}

void cuda_target_describe(const struct cuda_target *t, char *zOut, size_t n)
{
	char *gen = cuda_target_gencode(t->zName);
	char cc[48] = "";
	if (t->ccMajor > 0)
		snprintf(cc, sizeof cc, " for compute capability %d.%d", t->ccMajor, t->ccMinor);
	snprintf(zOut, n, "%s%s (%s; %s)%s%s", t->zName, cc,
	         t->bOverride                     ? "KLOOP_CUDA_ARCH"
	         : t->zNote[0]                    ? "the toolkit's fallback"
	         : cuda_target_specific(t->zName) ? "the device's arch-specific target"
	                                          : "the device's target",
	         gen, t->zNote[0] ? ": " : "", t->zNote);
	free(gen);
}

/* the fix for code that needs what t lacks, into zOut */
static void fix_words(const struct cuda_target *t, char *zOut, size_t n)
{
	char dflt[16];
	cuda_target_default(t->ccMajor, t->ccMinor, dflt, sizeof dflt);
	int dev = t->ccMajor * 10 + t->ccMinor, cc = target_cc(t->zName);
	if (t->ccMajor <= 0)
		snprintf(zOut, n, "set KLOOP_CUDA_ARCH to the target the code needs (e.g. sm_90a)");
	else if (t->bOverride && (strcmp(t->zName, dflt) || cc != dev))
		snprintf(zOut, n,
		         "unset KLOOP_CUDA_ARCH (kloop builds %s for this device) or set it to %s",
		         dflt, dflt);
	else if (!cuda_target_specific(t->zName) && cuda_target_specific(dflt))
		snprintf(zOut, n,
		         "build for %s with a newer CUDA toolkit (KLOOP_NVCC), or write the kernel "
		         "without %s's own instructions",
		         dflt, dflt);
	else
		snprintf(zOut, n,
		         "write the kernel with instructions this device has (%s), or run it on "
		         "the GPU it was written for",
		         t->zName);
}

/* the line of zLog holding zNeedle, without its newline, into zOut */
static void line_of(const char *zLog, const char *zNeedle, char *zOut, size_t n)
{
	const char *p = strstr(zLog, zNeedle);
	zOut[0] = 0;
	if (!p)
		return;
	while (p > zLog && p[-1] != '\n')
		p--;
	size_t k = strcspn(p, "\n");
	/* ptxas names its temporary file first: from "error" on */
	const char *e = strstr(p, "error");
	if (e && (size_t)(e - p) < k) {
		k -= (size_t)(e - p);
		p = e;
	}
	snprintf(zOut, n, "%.*s", (int)(k < 200 ? k : 200), p);
}

/* "the device has compute capability 9.0" or that it is not known */
static void device_words(const struct cuda_target *t, char *zOut, size_t n)
{
	if (t->ccMajor > 0)
		snprintf(zOut, n, "the device has compute capability %d.%d", t->ccMajor,
		         t->ccMinor);
	else
		snprintf(zOut, n, "the device's compute capability is not known");
}

int cuda_target_diagnose_compile(const struct cuda_target *t, const char *zLog, const char *zSrc,
                                 char *zOut, size_t n)
{
	char seen[256] = "";
	if (!zLog)
		return 0;
	if (strstr(zLog, "not supported on .target '"))
		line_of(zLog, "not supported on .target '", seen, sizeof seen);
	else if (strstr(zLog, "requires .target sm_"))
		line_of(zLog, "requires .target sm_", seen, sizeof seen);
	else if (strstr(zLog, "#error") && zSrc &&
	         (strstr(zSrc, "__CUDA_ARCH_FEAT_SM") || strstr(zSrc, "__CUDA_ARCH_SPECIFIC__") ||
	          strstr(zSrc, "__CUDA_ARCH_FAMILY_SPECIFIC__")))
		line_of(zLog, "#error", seen, sizeof seen);
	if (!seen[0])
		return 0;
	char dev[64], fix[256];
	device_words(t, dev, sizeof dev);
	fix_words(t, fix, sizeof fix);
	snprintf(zOut, n,
	         "the code needs a GPU target this build lacks: it was built for %s and %s "
	         "(%s); fix: %s",
	         t->zName, dev, seen, fix);
	return 1;
}

/* 0 when the device cannot run code built for t (sm_100a on a 9.0; a
 * plain target newer than the device), 1 when it can or is not known */
static int device_runs(const struct cuda_target *t)
{
	int cc = target_cc(t->zName), dev = t->ccMajor * 10 + t->ccMinor;
	size_t k = strlen(t->zName);
	if (t->ccMajor <= 0)
		return 1;
	if (k && t->zName[k - 1] == 'a')
		return cc == dev;
	if (k && t->zName[k - 1] == 'f')
		return cc / 10 == dev / 10 && cc <= dev;
	return cc <= dev;
}

int cuda_target_diagnose_run(const struct cuda_target *t, const char *zText, char *zOut, size_t n)
{
	if (!zText)
		return 0;
	char dev[64], fix[256];
	device_words(t, dev, sizeof dev);
	fix_words(t, fix, sizeof fix);
	/* code the device cannot run fails however the candidate reports it
	 * (a kl_run that returns 1 on cudaGetLastError() says no more) */
	if (!device_runs(t) || strstr(zText, "no kernel image is available") ||
	    strstr(zText, "cudaErrorNoKernelImageForDevice")) {
		snprintf(zOut, n, "its code was built for %s and %s, which cannot run it; fix: %s",
		         t->zName, dev, fix);
		return 1;
	}
	/* an output left unwritten, or a device-side assert, by code built
	 * without the device's own instructions: a kernel guarded on them
	 * (CUTLASS's: an empty body, or an assert where NDEBUG is not defined)
	 * may be the cause */
	char dflt[16];
	cuda_target_default(t->ccMajor, t->ccMinor, dflt, sizeof dflt);
	int guarded = strstr(zText, "left unwritten?") || strstr(zText, "device-side assert") ||
	              strstr(zText, "cudaErrorAssert");
	if (guarded && t->ccMajor > 0 && cuda_target_specific(dflt) &&
	    !cuda_target_specific(t->zName) && target_cc(t->zName) == target_cc(dflt)) {
		snprintf(zOut, n,
		         "it was built for %s and %s: without %s's own instructions a kernel "
		         "guarded on them (CUTLASS's SM90 collectives: __CUDA_ARCH_FEAT_SM90_ALL) "
		         "compiles to an empty body or a failed assert; fix: %s",
		         t->zName, dev, dflt, fix);
		return 1;
	}
	if (strstr(zText, "without targeting appropriate compute capability")) {
		snprintf(zOut, n,
		         "its CUTLASS kernel's body was compiled out: it was built for %s and %s, "
		         "and the kernel needs the arch-specific target; fix: %s",
		         t->zName, dev, fix);
		return 1;
	}
	return 0;
}
