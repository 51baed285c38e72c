/*
 * verdict.h - a verdict, typed: what kloop concluded about one evaluation
 * of a candidate, decoded once from its result JSON (the worker's reply
 * completed by result.c, journaled as eval_finished's "result").
 *
 * The JSON stays the wire and journal format (and keeps a newer kloop's
 * keys); every reader of a verdict reads this struct, and verdict_decode()
 * is the one place a verdict's keys are read by name (result.c's line
 * makers read the detail objects kept below as JSON: the compile report,
 * the correctness report, the precision, roofline and reference-data
 * objects, whose words are theirs).  Its inverse, verdict_encode(), is the
 * one place they are written: a maker decodes, changes the struct, encodes.
 *
 * Strings and objects are borrowed from the JSON decoded: valid while it
 * lives and is not changed; decode again after changing it.  A number that
 * is absent is NAN (a count: -1), a string absent is NULL unless said.
 */
#ifndef KL_VERDICT_H
#define KL_VERDICT_H

#include <cJSON.h>

#include "status.h"

/* the A/B of a challenger against the incumbent, timed alternately ("ab") */
struct verdict_ab {
	int present;        /* the result has "ab" */
	int incumbent;      /* incumbent_id (-1: none) */
	int pairs, wins;    /* pairs timed, pairs the challenger was faster in
	                     * (-1: not run) */
	double ratio;       /* median per-pair incumbent/challenger time */
	int won;            /* beyond the noise (harness_ab_decide) */
	int unverified;     /* its times could not be bounded by kloop's clock
	                     * ("verified": false): it decides nothing */
	const char *zError; /* why it was not run, or NULL */
	const char *zRule;  /* the rule that decided, in words ("" where none) */
};

/* the compile ("compile") */
struct verdict_compile {
	int present;            /* the result has "compile" */
	double seconds;         /* its wall time */
	int cached;             /* the object came from the cache */
	int deviceOnly;         /* only its device code was compiled, into a kept host
	                           object ("device_only", compile.h) */
	int noLink;             /* and written into the shared object kept for its
	                           host code, not linked ("no_link") */
	int sideBySide;         /* built whole, nvcc's host and device halves side by
	                           side ("side_by_side") */
	int prefixKept;         /* device code only, the preprocessing of its lines
	                           up to the last #include kept ("prefix_kept") */
	int ok;                 /* it compiled ("ok": true) */
	const char *zCommand;   /* the compiler's command line ("" where none) */
	const char *zLog;       /* the compiler's diagnostics ("" where none) */
	const cJSON *resources; /* [{"kernel", "registers", "shared_bytes", ...}], or NULL */
};

/* how a PyTorch problem's reference data was made ("reference_data") */
struct verdict_refdata {
	double seconds;     /* making it (NAN: not said) */
	int trials;         /* trial sets besides the first (-1: not said) */
	const char *zNote;  /* a note on it, or NULL */
	const cJSON *setup; /* the worker's setup, for result_setup_line(), or NULL */
};

/* the timing ("timing") */
struct verdict_timing {
	int present;             /* the result has "timing" */
	double medianMs;         /* median_ms */
	double p10Ms, p90Ms;     /* the 10th and 90th percentiles */
	int count;               /* runs timed (-1: not said) */
	double rse;              /* relative standard error of the median */
	int converged;           /* within the budget */
	int unverified;          /* "verified": false: kloop's clock could not bound it */
	const char *zClockBound; /* why not ("clock_bound"), or NULL */
	const char *zBound;      /* "cpu" where bound by its CPU time, or NULL */
	const char *zMethod;     /* how it was timed ("device-wide", ...), or NULL */
	const char *zClockNote;  /* a note on the clock, or NULL */
	int throttled;           /* the GPU throttled meanwhile */
	int throttleRead;        /* the throttle was read ("throttled" said, either way) */
	const char *zThrottleReason;
	int stopped;            /* stopped after the quick timing ("stopped") */
	const char *zStopped;   /* why, where said ("" where none) */
	double smClockMhzAfter; /* the SM clock when it ended (NAN: not read) */
};

/* the precision verdict of a correct candidate ("precision", precision.h) */
struct verdict_precision {
	const char *zClass;   /* "faithful", "reduced", "unknown", or NULL: none */
	int reduced;          /* zClass is "reduced" */
	const char *zCause;   /* what made it reduced, in words, or NULL */
	const char *zWhy;     /* why unknown, or NULL */
	const char *zMatches; /* the reduced arithmetic it matches, or NULL */
};

/* where the time stands against the device ("roofline", roofline.h) */
struct verdict_roofline {
	int present;          /* the result has "roofline" */
	double fraction;      /* of the roofline's floor reached */
	const char *zSuspect; /* below the device's floor: why (any string marks it), or NULL */
};

struct verdict {
	enum status status;                     /* status_from_name(zStatus) */
	const char *zStatus;                    /* as written ("" where none) */
	const char *zReason;                    /* "" where none */
	const char *zStage;                     /* the cascade's stage it stopped at, or NULL */
	const char *zTask, *zSource, *zBackend; /* "" where none */
	const char *zDevice;                    /* the device model it ran on, or NULL */
	const char *zWorker;       /* the pool's worker label ("worker"."label"), or NULL */
	const char *zWorkerDevice; /* the pool's worker's device model, or NULL */
	const char *zWorkerHost;   /* the pool's worker's host, or NULL */
	const char *zCodeHash;     /* its machine code's hash, or NULL */
	double timeMs;             /* "time_ms": the median, null unless correct */
	double speedup;            /* baseline / time (speedupTimeMs where set) */
	/* the time its speedups divide where that is not timeMs: its events'
	 * median, where its runs were timed by their kernels' durations and
	 * the baseline's by events (result.c); NAN: timeMs */
	double speedupTimeMs;
	double baselineMs;                 /* the session's baseline it is compared with */
	double baselineMeasuredMs;         /* its own run's baseline where that differs */
	const char *zBaseline;             /* the reference's name ("" where none) */
	double baselineCompileMs;          /* torch.compile's baseline */
	double speedupCompile;             /* against it */
	const char *zBaselineCompileError; /* why torch.compile's was not timed, or NULL */
	const char *zNotTimed;   /* why it was not timed again (the same machine code), or NULL */
	int sameCodeAs;          /* the candidate whose timing it carries (0: none) */
	const char *zKeptState;  /* a warning: it kept state between runs, or NULL */
	const char *zStderrTail; /* its last output (crashes), or NULL */
	const char *zRerunAbandoned; /* a later evaluation was abandoned: why, or NULL */
	struct verdict_timing timing;
	struct verdict_precision precision;
	struct verdict_roofline roofline;
	struct verdict_ab ab;
	struct verdict_compile comp;
	struct verdict_refdata refData;
	/* detail objects, read by their own line makers (result.h, roofline.h,
	 * ncu.h, torchext.h), or NULL */
	const cJSON *compile;       /* "compile": command, seconds, target, resources */
	const cJSON *correctness;   /* "correctness": trials, errors, tolerance */
	const cJSON *precisionJson; /* "precision" */
	const cJSON *rooflineJson;  /* "roofline" */
	const cJSON *referenceData; /* "reference_data": how the reference data was made */
	const cJSON *profile;       /* "profile": Nsight Compute's */
	const cJSON *form;          /* "candidate_form": an extension's or ModelNew's */
	const cJSON *stages;        /* "stages": [{"stage", "seconds"}] */
	const cJSON *libraries;     /* "library_baselines": verdict_library reads them */
	const cJSON *timingJson;    /* "timing", copied whole where a copy carries it */
	const cJSON *abJson;        /* "ab", journaled as an event of its own */
};

/* v from result r (NULL: a verdict of nothing, status "new") */
void verdict_decode(const cJSON *r, struct verdict *v);

/* t from a timing object tm (a verdict's "timing", or a stage's or a
 * baseline's timing of the same keys); NULL: not present */
void verdict_timing_decode(const cJSON *tm, struct verdict_timing *t);

/* verdict_encode()'s flags */
enum verdict_encode_flags {
	VERDICT_COMPLETE = 1 /* also write, where r lacks them, the keys every completed verdict has
	                      * (reason, task, source, backend, baseline: ""; time_ms,
	                      * baseline_ms, speedup: null; a timing's converged and verified) */
};

/*
 * Write v into result r (the inverse of verdict_decode): each typed field
 * of v that differs from what r says now is written, a field none in v is
 * removed (time_ms, baseline_ms and speedup become null; reason, task,
 * source, backend and baseline ""), so that verdict_decode(r) then
 * gives v's fields; the rest of r (a newer kloop's keys, the untyped ones)
 * is kept.  The detail objects (compile, correctness, precision, roofline,
 * reference_data, profile, candidate_form, stages, ab, timing) are copied
 * from v where v's is not r's own; the timing's typed keys are then written
 * into r's timing (verdict_timing_encode).  The status written is
 * v->zStatus where it names v->status, else status_name(v->status).  v may
 * borrow from r: decode, change, encode, with no change to r between.
 * flags: enum verdict_encode_flags.
 */
void verdict_encode(cJSON *r, const struct verdict *v, int flags);

/* write t's fields into timing object tm (the inverse of
 * verdict_timing_decode), as verdict_encode does: those that differ
 * (flags VERDICT_COMPLETE: converged and verified also where tm lacks them,
 * as a timing made whole says them) */
void verdict_timing_encode(cJSON *tm, const struct verdict_timing *t, int flags);

/* a from an A/B object ab (a verdict's "ab"); NULL: not present */
void verdict_ab_decode(const cJSON *ab, struct verdict_ab *a);

/* write a's fields into A/B object ab (the inverse of its decoding), as
 * verdict_encode does (VERDICT_COMPLETE: "won" also where ab lacks it) */
void verdict_ab_encode(cJSON *ab, const struct verdict_ab *a, int flags);

/* a new verdict of status s with reason zReason: {"status", "reason"} */
cJSON *verdict_new(enum status s, const char *zReason);

/* r's timing becomes tm (taken; NULL: r has none) */
void verdict_put_timing(cJSON *r, cJSON *tm);

/* a timed, correct verdict with a median: what a time can be read from */
int verdict_timed(const struct verdict *v);

/* the name of the i-th stage the cascade went through ("stages"), or NULL
 * past the last */
const char *verdict_stage(const struct verdict *v, int i);

/* how its compile went, for the line after its seconds: " (cached)",
 * " (the device code only: ...)" or "" */
const char *verdict_compile_how(const struct verdict_compile *c);

/* a BLAS baseline of a GEMM task: an entry of "library_baselines" */
struct verdict_library {
	const char *zKey;     /* "cublas", "cublaslt", ... ("" none) */
	const char *zLibrary; /* its name for people ("" none) */
	double medianMs;      /* its time, NAN: not timed */
	double speedup;       /* the candidate's against it, NAN: none */
	const char *zError;   /* why it was not timed, NULL */
};
/* baseline i of v's library baselines into *out: 0, or -1 past the last */
int verdict_library(const struct verdict *v, int i, struct verdict_library *out);
/* l as a "library_baselines" entry (a fresh object) */
cJSON *verdict_library_new(const struct verdict_library *l);

#endif
