/*
 * status.c - the candidate status names and predicates.
 */
#include "status.h"

#include <string.h>

static const char *const names[STATUS_COUNT] = {
    [STATUS_NEW] = "new",
    [STATUS_EVALUATING] = "evaluating",
    [STATUS_CORRECT] = "correct",
    [STATUS_INCORRECT] = "incorrect",
    [STATUS_COMPILE_ERROR] = "compile_error",
    [STATUS_CRASHED] = "crashed",
    [STATUS_TIMEOUT] = "timeout",
    [STATUS_ERROR] = "error",
    [STATUS_CANCELLED] = "cancelled",
};

const char *status_name(enum status s)
{
	return (unsigned)s < STATUS_COUNT ? names[s] : names[STATUS_ERROR];
}

enum status status_from_name(const char *z)
{
	for (int i = 0; z && i < STATUS_COUNT; i++)
		if (!strcmp(z, names[i]))
			return (enum status)i;
	return STATUS_ERROR;
}

int status_finished(enum status s)
{
	return s != STATUS_NEW && s != STATUS_EVALUATING;
}

int status_failed(enum status s)
{
	return status_finished(s) && s != STATUS_CORRECT;
}

int status_fixable(enum status s)
{
	return s == STATUS_INCORRECT || s == STATUS_COMPILE_ERROR || s == STATUS_CRASHED ||
	       s == STATUS_TIMEOUT;
}
