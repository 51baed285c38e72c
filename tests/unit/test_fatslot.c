/*
 * test_fatslot.c - the slot of a linked CUDA shared object's own
 * fatbinary (fatslot.h), on ELF64 images made here: the last fatbinary of
 * .nv_fatbin's chain and its room to the section's end, found where that
 * room is a whole number of grains of zeros after it; refused (-1, so the
 * build links instead) for an image that is no ELF64 object, whose section
 * table lies past its end, that has no .nv_fatbin, whose section does not
 * begin with a fatbinary, a fatbinary whose size runs past the section, a
 * slot of a size kloop does not pad to, or a byte other than zero after
 * the last fatbinary.  The real builds' slots are test_staged's.
 */
#include <elf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fatslot.h"

#define STRTAB "\0.shstrtab\0.nv_fatbin\0"
#define DLINK_FAT 24 /* the device link's fatbinary: a header and 24 bytes */
#define OWN_FAT 100  /* kloop's: a header and 100 bytes, then zeros */

struct image {
	unsigned char *p;
	size_t n;
	size_t fatOff;  /* .nv_fatbin's offset in the file */
	size_t fatSize; /* its size */
	size_t shOff;   /* the section table's */
};

static void fat_header(unsigned char *p, uint64_t fat)
{
	uint32_t magic = 0xBA55ED50u;
	uint16_t version = 1, hdr = 16;
	memcpy(p, &magic, 4);
	memcpy(p + 4, &version, 2);
	memcpy(p + 6, &hdr, 2);
	memcpy(p + 8, &fat, 8);
}

/* an ELF64 image whose .nv_fatbin holds the device link's fatbinary,
 * then kloop's, padded to a section of fatSize bytes */
static struct image make(size_t fatSize)
{
	struct image m = {0};
	size_t strOff = sizeof(Elf64_Ehdr);
	m.fatOff = (strOff + sizeof STRTAB + 7) / 8 * 8;
	m.fatSize = fatSize;
	m.shOff = (m.fatOff + fatSize + 7) / 8 * 8;
	m.n = m.shOff + 3 * sizeof(Elf64_Shdr);
	m.p = calloc(1, m.n);
	Elf64_Ehdr eh = {0};
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_type = ET_DYN;
	eh.e_shoff = m.shOff;
	eh.e_ehsize = sizeof eh;
	eh.e_shentsize = sizeof(Elf64_Shdr);
	eh.e_shnum = 3;
	eh.e_shstrndx = 1;
	memcpy(m.p, &eh, sizeof eh);
	memcpy(m.p + strOff, STRTAB, sizeof STRTAB);
	Elf64_Shdr sh[3] = {{0}};
	sh[1].sh_name = 1;
	sh[1].sh_type = SHT_STRTAB;
	sh[1].sh_offset = strOff;
	sh[1].sh_size = sizeof STRTAB;
	sh[2].sh_name = 11;
	sh[2].sh_type = SHT_PROGBITS;
	sh[2].sh_offset = m.fatOff;
	sh[2].sh_size = fatSize;
	sh[2].sh_addralign = 8;
	memcpy(m.p + m.shOff, sh, sizeof sh);
	fat_header(m.p + m.fatOff, DLINK_FAT);
	memset(m.p + m.fatOff + 16, 0x11, DLINK_FAT);
	fat_header(m.p + m.fatOff + 16 + DLINK_FAT, OWN_FAT);
	memset(m.p + m.fatOff + 32 + DLINK_FAT, 0x22, OWN_FAT);
	return m;
}

/* fatslot_find on m: its return, the offset and size found */
static int find(const struct image *m, uint64_t *pAt, uint64_t *pSize)
{
	*pAt = *pSize = 0;
	return fatslot_find(m->p, m->n, pAt, pSize);
}

int main(void)
{
	uint64_t at, size;
	size_t own = 16 + DLINK_FAT; /* kloop's fatbinary, after the link's */

	CHECK(fatslot_padded(0) == 0 && fatslot_padded(1) == FATSLOT_GRAIN &&
	          fatslot_padded(FATSLOT_GRAIN) == FATSLOT_GRAIN &&
	          fatslot_padded(FATSLOT_GRAIN + 1) == 2 * FATSLOT_GRAIN,
	      "a fatbinary is padded to a whole number of %d-byte grains", FATSLOT_GRAIN);

	struct image m = make(own + FATSLOT_GRAIN);
	CHECK(find(&m, &at, &size) == 0 && at == m.fatOff + own && size == FATSLOT_GRAIN,
	      "the slot is the last fatbinary of the chain, to the section's end (at %llu, "
	      "%llu bytes)",
	      (unsigned long long)at, (unsigned long long)size);

	m.p[m.fatOff + own + 16 + OWN_FAT + 5] = 1;
	CHECK(find(&m, &at, &size) < 0, "a byte other than zero after the last fatbinary: no slot");
	free(m.p);

	m = make(own + FATSLOT_GRAIN - 8);
	CHECK(find(&m, &at, &size) < 0, "a slot of %d bytes (not a whole grain): no slot",
	      FATSLOT_GRAIN - 8);
	free(m.p);

	m = make(own + 2 * FATSLOT_GRAIN);
	CHECK(find(&m, &at, &size) == 0 && size == 2 * FATSLOT_GRAIN,
	      "a slot of two grains is one too");
	fat_header(m.p + m.fatOff + own, 3 * FATSLOT_GRAIN);
	CHECK(find(&m, &at, &size) < 0, "a fatbinary whose size runs past the section: no slot");
	free(m.p);

	m = make(own + FATSLOT_GRAIN);
	m.p[m.fatOff] ^= 0xff;
	CHECK(find(&m, &at, &size) < 0, "a section that does not begin with a fatbinary: no slot");
	free(m.p);

	m = make(own + FATSLOT_GRAIN);
	memcpy(m.p + sizeof(Elf64_Ehdr) + 11, ".nv_fatbiX", 10);
	CHECK(find(&m, &at, &size) < 0, "an object with no .nv_fatbin: no slot");
	free(m.p);

	m = make(own + FATSLOT_GRAIN);
	m.p[EI_CLASS] = ELFCLASS32;
	CHECK(find(&m, &at, &size) < 0, "an object that is not ELF64: no slot");
	m.p[EI_CLASS] = ELFCLASS64;
	m.p[0] = 0;
	CHECK(find(&m, &at, &size) < 0, "bytes that are no ELF object: no slot");
	m.p[0] = ELFMAG0;
	m.n = m.shOff + sizeof(Elf64_Shdr);
	CHECK(find(&m, &at, &size) < 0, "a section table past the image's end: no slot");
	m.n = m.fatOff + 10;
	CHECK(find(&m, &at, &size) < 0, "an image cut inside .nv_fatbin: no slot");
	free(m.p);
	return check_done();
}
