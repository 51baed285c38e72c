/*
 * suggest.h - "did you mean ...?": the nearest of a list of words to one
 * the user typed (a command, a subcommand, a flag, a setting's value, a
 * task), by edit distance with transpositions (serach -> search).
 */
#ifndef KL_SUGGEST_H
#define KL_SUGGEST_H

#include <stddef.h>

/* the optimal-string-alignment distance between a and b (insertions,
 * deletions, substitutions and swaps of two neighbours, each 1), case
 * ignored; words longer than 63 bytes are as far as their length */
int suggest_distance(const char *a, const char *b);

/* the word of az (n of them; NULL entries skipped) nearest to zWord, when it
 * is near enough to be a typo of it: at most 1 edit for words of up to 4
 * letters, 2 up to 8, 3 beyond, and nearer than any other word of az (a tie
 * suggests nothing); NULL else, or when zWord is itself in az */
const char *suggest_nearest(const char *zWord, const char *const *az, size_t n);

#endif
