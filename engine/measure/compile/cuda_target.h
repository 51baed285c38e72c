/*
 * cuda_target.h - which GPU target nvcc builds candidates for: the device's
 * arch-specific target by default (compute capability 9.0 -> sm_90a, where
 * wgmma, TMA and setmaxnreg live and CUTLASS's SM90 collectives compile to
 * something), KLOOP_CUDA_ARCH where a person chose one, the plain sm_XY
 * where the toolkit cannot build the arch-specific one; nvcc's flag for it;
 * and the words for a candidate that needs a target the build lacks.
 */
#ifndef KL_CUDA_TARGET_H
#define KL_CUDA_TARGET_H

#include <stddef.h>

struct cuda_target {
	char zName[16];       /* what nvcc builds: "sm_90a", "sm_86" */
	int ccMajor, ccMinor; /* the device's compute capability (0.0: unknown) */
	int bOverride;        /* 1: KLOOP_CUDA_ARCH chose it */
	/* what a person should know about the choice ("" when it is the
	 * device's default): the toolkit could not build the arch-specific
	 * target, or KLOOP_CUDA_ARCH names one whose code this device cannot run */
	char zNote[320];
};

/*
 * The default target for compute capability major.minor into zOut (n
 * bytes): 9.0 -> sm_90a, 10.x -> sm_10xa (10.0 -> sm_100a, 10.3 -> sm_103a),
 * 12.x -> sm_12xa (12.1 -> sm_121a), anything else sm_XY (8.6 -> sm_86).
 */
void cuda_target_default(int major, int minor, char *zOut, size_t n);

/*
 * A target as a person writes it (KLOOP_CUDA_ARCH): "sm_90", "sm_90a",
 * "90a", "sm90a", "SM_100A", "sm_100f" (sm_ or sm or nothing, then two or
 * three digits, then 'a' for the arch-specific or 'f' for the family target), into zOut as nvcc
 * spells it ("sm_90a").  0, or -1 with err naming the value and the forms expected.
 */
int cuda_target_parse(const char *z, char *zOut, size_t n, char *err);

/* 1 when zTarget ("sm_90a", "sm_100f") runs only on its own GPU family */
int cuda_target_specific(const char *zTarget);

/*
 * nvcc's flag that builds zTarget (a fresh string): an arch-specific one as
 * "-gencode=arch=compute_90a,code=sm_90a" (not -arch=sm_90a, which with
 * nvcc 13.0 also ran a plain sm_90 pass that rejected wgmma); a plain one
 * as "-gencode=arch=compute_86,code=[sm_86,compute_86]" (what -arch=sm_86
 * means: its PTX too, so a newer GPU can run it).
 */
char *cuda_target_gencode(const char *zTarget);

/*
 * Choose the target for a device of compute capability major.minor into
 * *t: zOverride (KLOOP_CUDA_ARCH; NULL or "": none) where given, else the
 * default; where the default is arch-specific and nvcc zNvcc (NULL: not
 * asked) refuses to build it (its --dryrun), the plain sm_XY, with a note
 * saying so.  0, or -1 with err (a bad override, named).
 */
int cuda_target_choose(struct cuda_target *t, int major, int minor, const char *zOverride,
                       const char *zNvcc, char *err);

/* one line for people into zOut: "sm_90a for compute capability 9.0, the
 * device's arch-specific target (-gencode=...)", and the note if any */
void cuda_target_describe(const struct cuda_target *t, char *zOut, size_t n);

/*
 * A failed compile's log zLog (and its source zSrc, NULL: not known)
 * showing that the code needs a target other than t's (ptxas' "not
 * supported on .target 'sm_90'", an #error under __CUDA_ARCH_FEAT_SM90_ALL
 * and the like): the words naming the target built, the device's compute
 * capability and the fix into zOut, and 1; else 0.
 */
int cuda_target_diagnose_compile(const struct cuda_target *t, const char *zLog, const char *zSrc,
                                 char *zOut, size_t n);

/*
 * A run's failure text zText (a verdict's reason, a candidate's output)
 * of code built for a target this device cannot run (sm_100a on a 9.0,
 * whatever the text says: a kl_run may only return 1), or showing that its
 * object holds no code this device runs ("no kernel image is available for
 * execution on the device"), or that a CUTLASS kernel's body was compiled
 * out for want of the arch-specific target (its own message, or an output
 * left unwritten or a device-side assert by code built for sm_90 on a
 * device whose default is sm_90a): the words naming both and the fix into
 * zOut, and 1; else 0.
 */
int cuda_target_diagnose_run(const struct cuda_target *t, const char *zText, char *zOut, size_t n);

#endif
