/*
 * check.h - the unit-test harness: CHECK() prints "ok - what" or
 * "not ok - what (file:line)"; check_done() prints the tally and returns
 * the exit status.  tests/run.sh counts the ok / not ok / skip lines.
 */
#ifndef KL_CHECK_H
#define KL_CHECK_H

#include <stdio.h>

static int check_pass, check_fail;

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		int check_ok_ = !!(cond);                                                          \
		if (check_ok_) {                                                                   \
			check_pass++;                                                              \
			printf("ok - ");                                                           \
		} else {                                                                           \
			check_fail++;                                                              \
			printf("not ok - ");                                                       \
		}                                                                                  \
		printf(__VA_ARGS__);                                                               \
		if (!check_ok_)                                                                    \
			printf(" (%s:%d: %s)", __FILE__, __LINE__, #cond);                         \
		printf("\n");                                                                      \
		fflush(stdout);                                                                    \
	} while (0)

static inline int check_done(void)
{
	fflush(stdout);
	return check_fail ? 1 : 0;
}

#endif
