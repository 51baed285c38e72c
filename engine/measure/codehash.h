/*
 * codehash.h - the hash of the machine code a compiled candidate runs, so
 * that two candidates whose sources differ only in what does not change
 * that code (comments, whitespace, names of local variables, an unused
 * static function) are known to be the same program.
 *
 * What is hashed, from the shared object the compiler made:
 * - its allocated ELF sections in order (code, read-only data, data, the
 *   dynamic symbols it imports and exports with their versions, the
 *   relocations; .bss by size), each as type, flags, size and bytes; not
 *   the notes (the build id), the unwind tables (.eh_frame: nvcc's differ
 *   for the same code) nor anything not loaded (the symbol table, debug
 *   information, .comment, paths);
 * - for CUDA, in place of the .nv_fatbin section: every cubin in the
 *   fatbin by its sections that hold code and launch data (SASS, .nv.info,
 *   constant banks, shared memory sizes, relocations) and its symbols
 *   without their names, not its notes or line tables; an entry that is not a plain cubin (PTX, a
 *   compressed cubin) counts by its bytes when the fatbin holds no cubin,
 *   so that two different programs never look the same.
 * A file that is not such an ELF object hashes by all its bytes.
 */
#ifndef KL_CODEHASH_H
#define KL_CODEHASH_H

#include <stddef.h>

/* the code hash (64 hex digits) of the shared object p[0..n) */
void code_hash(const void *p, size_t n, char out[65]);

/* the same for the file zPath; 0, or -1 + err when it cannot be read */
int code_hash_file(const char *zPath, char out[65], char *err);

#endif
