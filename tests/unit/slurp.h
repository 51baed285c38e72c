/*
 * slurp.h - a whole file as a string, for the unit tests that read a
 * fixture or what a run wrote (a journal): read_file() (util.h) made into
 * one call that never fails, so that the check after it says what is wrong.
 */
#ifndef KL_TEST_SLURP_H
#define KL_TEST_SLURP_H

#include <stdio.h>

#include "util.h"

/* the file zPath (up to 16 MiB) as a NUL-terminated string the caller
 * frees, its length in *pN (pN may be NULL); a file that cannot be read is
 * "" (length 0), and a "# " line says why */
static inline char *slurp(const char *zPath, size_t *pN)
{
	strbuf sb = STRBUF_INIT;
	char err[KL_ERRLEN];
	if (read_file(zPath, &sb, 1 << 24, err) < 0) {
		printf("# %s\n", err);
		sb_reset(&sb);
	}
	if (pN)
		*pN = sb.len;
	return sb_detach(&sb);
}

#endif
