/*
 * diagfold.h - a compiler's log made readable: repeated diagnostics folded
 * into one line with a count and the first place (CuTe makes nvcc say one
 * warning thousands of times, a 1 MB log), and a log cut to a size for an
 * LLM's prompt, saying how much was cut and keeping the errors.
 */
#ifndef KL_DIAGFOLD_H
#define KL_DIAGFOLD_H

#include <stddef.h>

/*
 * zLog with its repeated diagnostics folded, a fresh string.  A diagnostic
 * is its head line, gcc/clang "file:line:col: warning: TEXT [-Wflag]" or
 * nvcc's "file(line): warning #20013-D: TEXT", with the lines that belong to
 * it: the context before it ("file: In function 'f':", "In file included
 * from"), its notes, its source and caret lines, nvcc's "detected during"
 * lines.  Warnings and remarks with the same TEXT, wherever they are, become
 * one line at the first one's place: "warning #20013-D: TEXT (5000 times;
 * first at cand.cu(12))"; an error is folded only where it repeats exactly,
 * its place and lines too (its head then ends with " (N times)").  nvcc's
 * "Remark: The warnings can be suppressed with ..." is kept once.  Other
 * lines (ptxas' report, "1 warning generated.") stay as they are, and a log
 * with nothing repeated comes back unchanged.
 */
char *diag_fold(const char *zLog);

/*
 * zLog cut to at most nMax bytes (nMax of 1 KiB or more), a fresh string: unchanged when it
 * fits; else its first whole lines, a line "[kloop: N more bytes (L lines)
 * of the compiler's output cut here ...]" and, where the cut part had
 * errors, their head lines (as many as fit; how many did not).
 */
char *diag_cap(const char *zLog, size_t nMax);

#endif
