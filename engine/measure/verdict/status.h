/*
 * status.h - a candidate's status as a type: the verdicts a worker gives
 * (correct, incorrect, compile_error, crashed, timeout, error) and the two
 * a session adds before one (new, evaluating), with their journal names
 * and the questions callers ask of them.
 */
#ifndef KL_STATUS_H
#define KL_STATUS_H

enum status {
	STATUS_NEW,           /* added, never evaluated */
	STATUS_EVALUATING,    /* an evaluation was started and has not ended */
	STATUS_CORRECT,       /* matches the reference (and was timed) */
	STATUS_INCORRECT,     /* ran, but an output differs from the reference */
	STATUS_COMPILE_ERROR, /* did not compile (or has no kl_run) */
	STATUS_CRASHED,       /* killed by a signal or exited */
	STATUS_TIMEOUT,       /* no result within the wall-clock limit */
	STATUS_ERROR,         /* the evaluation itself failed (worker or task) */
	STATUS_CANCELLED,     /* stopped by the user (cancel) before it ended */
	STATUS_COUNT
};

/* the journal's name of s ("compile_error"); "error" for a value out of range */
const char *status_name(enum status s);

/* the status named z; an unknown or NULL name is STATUS_ERROR */
enum status status_from_name(const char *z);

/* s is a verdict: neither new nor being evaluated */
int status_finished(enum status s);

/* s is a finished verdict other than correct */
int status_failed(enum status s);

/* s is a failure of the candidate's own (compile_error, incorrect,
 * crashed, timeout), one that a fixed source may cure; error is not */
int status_fixable(enum status s);

#endif
