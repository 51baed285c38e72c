/*
 * codehash.h - the hash of a compiled candidate's shared object, so that
 * two candidates whose sources differ only in what does not change that
 * object (comments, whitespace, blank lines, names of local variables and
 * of static functions, an unused static function, the file's name and
 * directory) are known to be the same program, and nothing else is.
 *
 * The hash covers every byte of the object: not only its code but every
 * section that is loaded and so readable by the candidate (notes, unwind
 * tables, read-only data, data, a CUDA fatbin with all of its cubins and
 * PTX), and the rest too (the loader maps whole pages, and the section
 * headers' offset is in the loaded ELF header).  Two builds of the same
 * code are the same bytes because compile.c builds reproducibly: no build
 * id (-Wl,--build-id=none), no local symbols (-Wl,--discard-all: the
 * file's name and static functions' names), no line tables (nvcc without
 * -lineinfo: they hold the build directory and each line's number), the
 * source compiled by its base name from its build directory (__FILE__ is
 * the candidate's file name).  A candidate's own __FILE__ or __LINE__
 * (assert()) is in its bytes, so it counts.
 */
#ifndef KL_CODEHASH_H
#define KL_CODEHASH_H

#include <stddef.h>

/* the code hash (64 hex digits) of the shared object p[0..n) */
void code_hash(const void *p, size_t n, char out[65]);

/* the same for the file zPath; 0, or -1 + err when it cannot be read */
int code_hash_file(const char *zPath, char out[65], char *err);

#endif
