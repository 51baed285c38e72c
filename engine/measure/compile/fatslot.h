/*
 * fatslot.h - where a linked CUDA shared object holds its own device code:
 * the slot a device-only build writes a new fatbinary into instead of
 * linking again (compile.c).
 *
 * kloop's CUDA builds pad the fatbinary a host object carries (its
 * .nv_fatbin section) with zeros to a whole number of FATSLOT_GRAIN bytes,
 * as a whole build and a device-only one alike, so that the shared object
 * linked from it has a slot of that size at the end of its .nv_fatbin (after
 * the device link's own fatbinary).  An edit whose padded fatbinary has the
 * slot's size is written into a copy of the last shared object linked for
 * the same host part: the bytes a whole build of the edit links (the link
 * copies a section's bytes and lays out by sizes alone).  The loader reads a
 * fatbinary by the size in its header; the zeros after it are never read.
 */
#ifndef KL_FATSLOT_H
#define KL_FATSLOT_H

#include <stddef.h>
#include <stdint.h>

/* the padding's grain: a fatbinary of n bytes is padded to
 * FATSLOT_GRAIN * ceil(n / FATSLOT_GRAIN) */
#define FATSLOT_GRAIN 65536

/* the padded size of a fatbinary of n bytes */
uint64_t fatslot_padded(uint64_t n);

/*
 * The slot of the ELF64 shared object p (n bytes): the file offset of the
 * last fatbinary in its .nv_fatbin section into *pAt, and the bytes from
 * there to the section's end into *pSize.  0, or -1 when p is no ELF64
 * object, has no .nv_fatbin, or its section does not hold a chain of
 * fatbinaries (each aligned to 8 bytes) whose last one is padded to the
 * section's end as kloop pads it (a whole number of FATSLOT_GRAIN bytes).
 */
int fatslot_find(const unsigned char *p, size_t n, uint64_t *pAt, uint64_t *pSize);

#endif
