/*
 * fatslot.c - the slot of a linked CUDA shared object's own fatbinary
 * (fatslot.h says what it is for).
 */
#include "fatslot.h"

#include <elf.h>
#include <string.h>

/* a fatbinary's header: its magic, version, the header's size and the
 * size of what follows it */
#define FAT_MAGIC 0xBA55ED50u

uint64_t fatslot_padded(uint64_t n)
{
	return (n + FATSLOT_GRAIN - 1) / FATSLOT_GRAIN * FATSLOT_GRAIN;
}

/* the section header of name zName, or NULL */
static const Elf64_Shdr *section(const unsigned char *p, size_t n, const char *zName)
{
	Elf64_Ehdr eh;
	if (n < sizeof eh)
		return NULL;
	memcpy(&eh, p, sizeof eh);
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shoff > n ||
	    eh.e_shnum > (n - eh.e_shoff) / sizeof(Elf64_Shdr) || eh.e_shstrndx >= eh.e_shnum ||
	    eh.e_shoff % 8)
		return NULL;
	const Elf64_Shdr *sh = (const Elf64_Shdr *)(p + eh.e_shoff);
	const Elf64_Shdr *str = &sh[eh.e_shstrndx];
	if (str->sh_offset > n || str->sh_size > n - str->sh_offset)
		return NULL;
	size_t k = strlen(zName) + 1;
	for (unsigned i = 0; i < eh.e_shnum; i++)
		if (sh[i].sh_name < str->sh_size && str->sh_size - sh[i].sh_name >= k &&
		    !memcmp(p + str->sh_offset + sh[i].sh_name, zName, k))
			return &sh[i];
	return NULL;
}

int fatslot_find(const unsigned char *p, size_t n, uint64_t *pAt, uint64_t *pSize)
{
	const Elf64_Shdr *s = section(p, n, ".nv_fatbin");
	if (!s || s->sh_type != SHT_PROGBITS || s->sh_offset > n || s->sh_size > n - s->sh_offset)
		return -1;
	const unsigned char *f = p + s->sh_offset;
	uint64_t size = s->sh_size, pos = 0, last = UINT64_MAX;
	/* the chain: each fatbinary's header, then the next at 8 bytes'
	 * alignment, until the zeros of the last one's padding */
	while (size - pos >= 16) {
		uint32_t magic;
		uint16_t hdr;
		uint64_t fat;
		memcpy(&magic, f + pos, 4);
		memcpy(&hdr, f + pos + 6, 2);
		memcpy(&fat, f + pos + 8, 8);
		if (magic != FAT_MAGIC)
			break;
		if (hdr < 16 || hdr > size - pos || fat > size - pos - hdr)
			return -1;
		last = pos;
		pos = (pos + hdr + fat + 7) / 8 * 8;
	}
	if (last == UINT64_MAX || (size - last) % FATSLOT_GRAIN)
		return -1;
	for (uint64_t i = pos; i < size; i++)
		if (f[i])
			return -1; /* not the zeros of a padding */
	*pAt = s->sh_offset + last;
	*pSize = size - last;
	return 0;
}
