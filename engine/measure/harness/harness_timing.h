/*
 * harness_timing.h - one timing's state (struct timing), shared by the
 * files that make it (harness_time.c: the runs, bounds and checks), write
 * it out (harness_timing_json.c) and follow it with the profiled runs
 * (harness_profiled.c).
 */
#ifndef KL_HARNESS_TIMING_H
#define KL_HARNESS_TIMING_H

#include "harness_priv.h"

/*
 * One timing of a candidate: time_runs()'s whole state, which its steps
 * work on.  A quick timing leaves it in h->cont, and the full timing of the
 * same candidate goes on from there (warm, calibrated, its runs counted
 * and its budget begun).
 */
struct timing {
	struct harness_cand *c; /* whose */
	struct samples ms;      /* each counted run's time, ms (the candidate's) */
	struct samples probe;   /* each strict probe's (not counted) */
	struct samples wall;    /* each counted run's round trip by kloop's clock, ms */
	struct samples busys;   /* its busy time (harness_busy_of; NAN: unknown) */
	struct samples near;    /* the empty frame before it (harness_frame_for) */
	struct samples preps;   /* kloop's preparation of it, ms */
	struct samples cpus;    /* its CPU time (harness_cpu_delta) */
	struct samples nearCpu; /* that of the frame before it */
	struct samples fOwn;    /* each frame, the runner's own */
	struct samples fTwin;   /* and the clock's twin's beside it */
	struct samples fOwnCpu; /* the CPU time of the runner's own */
	struct samples kclk;    /* kloop's own clock's times (harness_clock_times) */
	double cal;             /* the calibrated strict frame, ms */
	double nearFrame;       /* the last empty frame, ms (NAN: unknown) */
	double nearCpuFrame;    /* its CPU time */
	double sum, sum2, rse;  /* of the counted times; their relative standard error */
	double start;           /* when the warm-up, then the counted runs, began (now_s) */
	double perRun;          /* seconds a warm-up run took */
	double probeMed;        /* the median strict probe, ms */
	double fastMed;         /* the fast runs' median when the probes disagreed, ms (NAN) */
	double strictProbe;     /* and the strict probes' then */
	int warm;               /* warm-up runs */
	int strict;             /* timed device-wide (the probes disagreed) */
	int n;                  /* runs since the counted runs began, probes included */
	int converged;          /* stopped at the target rse */
	int retimed;            /* times the counted runs were taken again for the bound */
	int clk0, clk1;         /* the SM clock before and after, MHz (-1: unknown) */
	int left;               /* threads of the candidate that outlived kl_run */
	int inc;                /* the clock bound: 0 held, 1 inconsistent, 2 not applied */
	int byCpu;              /* bounded by CPU time rather than the clock */
	int paired;             /* each run bounded by its own CPU time (harness_paired_cpu) */
	int byClock;            /* timed by kloop's own clock (kclk) */
	char bound[300];        /* why the bound failed or was not applied */
	int throttled;          /* the backend's throttling (-1: unknown) */
	char thr[256];          /* and why */
	struct batch bt;        /* the batch bound's batch (harness_batch.c) */
	double jitter;          /* the jitter of two round trips it allowed, ms */
	struct samples prof;    /* the profiled runs' times, ms (timing_profiled) */
	int profAsked;          /* profiled runs were asked for (h->o.profiledRuns) */
	int profUsed;           /* their median is the timing's */
	int profLonger;         /* ... because it is longer than the events' (profWhy says) */
	int profChecked;        /* of them, checked */
	int profKernels;        /* the kernels of a profiled run, their median (0: unknown) */
	struct samples profKv;  /* each counted profiled run's kernels: their number, then
	                           HARNESS_PROF_KERNELS durations (ms, -1 past it) */
	/* each of the first profKernels kernels' median duration (ms, in launch
	 * order), over the profKernelRuns runs that launched profKernels */
	double profKernelMed[HARNESS_PROF_KERNELS];
	int profKernelRuns;
	char profWhy[300]; /* why not, where asked */
};

/* one timed run of c on fresh inputs in mode (HC_FAST, HC_STRICT,
 * HC_PROFILED), as harness_timed_run (harness_time.c) */
int harness_run_timed(struct harness *h, struct harness_cand *c, int mode, double cal, double *pT,
                      double *pW, double *pBusy, double *pCpu, int *pRc, char *why, size_t nWhy,
                      char *err);
/* the profiled runs after tg's timing (harness_profiled.c): 0, -1 + err, or
 * HC_* + why (a profiled run that was wrong) */
int harness_timing_profiled(struct harness *h, struct timing *tg, char *why, size_t nWhy,
                            char *err);
/* the timing object of tg (harness_timing_json.c) */
cJSON *harness_timing_json(const struct harness *h, const struct timing *tg);

#endif
