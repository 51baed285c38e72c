/*
 * codehash.c - the hash of the machine code in a compiled candidate (ELF
 * sections of the shared object, the cubins in its CUDA fatbin); what is
 * and is not hashed is in codehash.h.  Every offset is checked against the
 * object's size: a malformed object falls back to hashing its bytes.
 */
#include "codehash.h"

#include <elf.h>
#include <stdint.h>
#include <string.h>

#include "sha256.h"
#include "util.h"

#define FATBIN_MAGIC 0xBA55ED50u
#define FATBIN_ELF 2 /* entry kinds: 1 PTX, 2 cubin */

struct elf {
	const unsigned char *p;
	size_t n;
	Elf64_Ehdr eh;
	Elf64_Shdr strtab; /* the section names */
};

/* 1 when [off, off+len) lies within n bytes */
static int within(uint64_t off, uint64_t len, size_t n)
{
	return off <= n && len <= n - off;
}

/* a 64-bit little-endian ELF object with section headers that fit */
static int elf_open(struct elf *e, const void *p, size_t n)
{
	e->p = p;
	e->n = n;
	if (n < sizeof e->eh)
		return 0;
	memcpy(&e->eh, p, sizeof e->eh);
	const Elf64_Ehdr *h = &e->eh;
	if (memcmp(h->e_ident, ELFMAG, SELFMAG) || h->e_ident[EI_CLASS] != ELFCLASS64 ||
	    h->e_ident[EI_DATA] != ELFDATA2LSB || h->e_shentsize != sizeof(Elf64_Shdr) ||
	    h->e_shnum == 0 || h->e_shstrndx >= h->e_shnum ||
	    !within(h->e_shoff, (uint64_t)h->e_shnum * sizeof(Elf64_Shdr), n))
		return 0;
	memcpy(&e->strtab, e->p + h->e_shoff + (size_t)h->e_shstrndx * sizeof(Elf64_Shdr),
	       sizeof e->strtab);
	return e->strtab.sh_type != SHT_NOBITS && within(e->strtab.sh_offset, e->strtab.sh_size, n);
}

/* section i's header; its bytes must lie in the object (0 if not) */
static int elf_section(const struct elf *e, int i, Elf64_Shdr *sh)
{
	memcpy(sh, e->p + e->eh.e_shoff + (size_t)i * sizeof *sh, sizeof *sh);
	return sh->sh_type == SHT_NOBITS || within(sh->sh_offset, sh->sh_size, e->n);
}

/* its name, or "" */
static const char *elf_name(const struct elf *e, const Elf64_Shdr *sh)
{
	const char *tab = (const char *)e->p + e->strtab.sh_offset;
	size_t n = e->strtab.sh_size;
	if (sh->sh_name >= n || !memchr(tab + sh->sh_name, 0, n - sh->sh_name))
		return "";
	return tab + sh->sh_name;
}

/* a section as type, flags, size and bytes (none for .bss and the like) */
static void add_section(struct sha256 *s, const struct elf *e, const Elf64_Shdr *sh)
{
	uint64_t rec[3] = {sh->sh_type, sh->sh_flags, sh->sh_size};
	sha256_update(s, "S", 1);
	sha256_update(s, rec, sizeof rec);
	if (sh->sh_type != SHT_NOBITS)
		sha256_update(s, e->p + sh->sh_offset, sh->sh_size);
}

static int has_prefix(const char *z, const char *zPre)
{
	return !strncmp(z, zPre, strlen(zPre));
}

/* a symbol table without the names: each symbol's type, binding,
 * visibility, section, value and size */
static void add_symbols(struct sha256 *s, const struct elf *e, const Elf64_Shdr *sh)
{
	sha256_update(s, "Y", 1);
	for (uint64_t off = 0; off + sizeof(Elf64_Sym) <= sh->sh_size; off += sizeof(Elf64_Sym)) {
		Elf64_Sym y;
		memcpy(&y, e->p + sh->sh_offset + off, sizeof y);
		uint64_t rec[5] = {y.st_info, y.st_other, y.st_shndx, y.st_value, y.st_size};
		sha256_update(s, rec, sizeof rec);
	}
}

/* a cubin's sections that decide what runs: not names, notes or the line
 * tables (-lineinfo) and debug sections with their relocations */
static int add_cubin(struct sha256 *s, const void *p, size_t n)
{
	struct elf e;
	if (!elf_open(&e, p, n))
		return 0;
	static const char *debug[] = {".debug",      ".nv_debug",     ".rel.debug",
	                              ".rela.debug", ".rel.nv_debug", ".rela.nv_debug"};
	uint64_t flags = e.eh.e_flags; /* the target architecture */
	sha256_update(s, "C", 1);
	sha256_update(s, &flags, sizeof flags);
	for (int i = 1; i < e.eh.e_shnum; i++) {
		Elf64_Shdr sh;
		if (!elf_section(&e, i, &sh))
			return 0;
		if (sh.sh_type == SHT_SYMTAB) {
			add_symbols(s, &e, &sh);
			continue;
		}
		if (sh.sh_type == SHT_NULL || sh.sh_type == SHT_STRTAB || sh.sh_type == SHT_NOTE)
			continue;
		const char *name = elf_name(&e, &sh);
		int skip = 0;
		for (size_t k = 0; k < sizeof debug / sizeof *debug; k++)
			skip |= has_prefix(name, debug[k]);
		if (!skip)
			add_section(s, &e, &sh);
	}
	return 1;
}

/* visit the fatbin's entries: fn(kind, payload, size) for each; 0 when the
 * fatbin is malformed */
typedef int (*entry_fn)(int kind, const unsigned char *p, size_t n, void *arg);

static int fatbin_walk(const unsigned char *p, size_t n, entry_fn fn, void *arg)
{
	size_t off = 0;
	while (off + 16 <= n) {
		uint32_t magic;
		uint16_t hs;
		uint64_t fs;
		memcpy(&magic, p + off, 4);
		memcpy(&hs, p + off + 6, 2);
		memcpy(&fs, p + off + 8, 8);
		if (magic != FATBIN_MAGIC)
			break; /* padding after the last container */
		if (hs < 16 || !within(off + hs, fs, n))
			return 0;
		size_t e = off + hs, end = off + hs + fs;
		while (e + 16 <= end) {
			uint16_t kind;
			uint32_t ehs;
			uint64_t psz;
			memcpy(&kind, p + e, 2);
			memcpy(&ehs, p + e + 4, 4);
			memcpy(&psz, p + e + 8, 8);
			if (ehs < 16 || !within(e + ehs, psz, end))
				return 0;
			if (!fn(kind, p + e + ehs, psz, arg))
				return 0;
			e += ehs + psz;
		}
		off = end;
	}
	return 1;
}

struct fat_pass {
	struct sha256 *s;
	int nCubin; /* plain cubins found (first pass) */
	int hashing;
};

static int is_cubin(int kind, const unsigned char *p, size_t n)
{
	return kind == FATBIN_ELF && n >= SELFMAG && !memcmp(p, ELFMAG, SELFMAG);
}

static int fat_entry(int kind, const unsigned char *p, size_t n, void *arg)
{
	struct fat_pass *f = arg;
	if (!f->hashing) {
		f->nCubin += is_cubin(kind, p, n);
		return 1;
	}
	if (is_cubin(kind, p, n))
		return add_cubin(f->s, p, n);
	/* a compressed cubin always; PTX only when no cubin runs in its place */
	if (kind == FATBIN_ELF || !f->nCubin) {
		uint64_t rec[2] = {(uint64_t)kind, n};
		sha256_update(f->s, "R", 1);
		sha256_update(f->s, rec, sizeof rec);
		sha256_update(f->s, p, n);
	}
	return 1;
}

/* the fatbin's code into s, or its bytes when it cannot be read */
static void add_fatbin(struct sha256 *s, const unsigned char *p, size_t n)
{
	struct fat_pass f = {.s = s};
	struct sha256 save = *s;
	sha256_update(s, "F", 1);
	if (fatbin_walk(p, n, fat_entry, &f)) {
		f.hashing = 1;
		if (fatbin_walk(p, n, fat_entry, &f))
			return;
	}
	*s = save;
	sha256_update(s, "B", 1);
	sha256_update(s, p, n);
}

/* the host object's allocated sections, the fatbin's code in its place */
static int add_object(struct sha256 *s, const void *p, size_t n)
{
	struct elf e;
	if (!elf_open(&e, p, n))
		return 0;
	for (int i = 1; i < e.eh.e_shnum; i++) {
		Elf64_Shdr sh;
		if (!elf_section(&e, i, &sh))
			return 0;
		const char *name = elf_name(&e, &sh);
		/* .eh_frame differs between nvcc's compiles of the same code */
		if (!(sh.sh_flags & SHF_ALLOC) || sh.sh_type == SHT_NOTE ||
		    !strcmp(name, ".eh_frame") || !strcmp(name, ".eh_frame_hdr"))
			continue;
		if (!strcmp(name, ".nv_fatbin") && sh.sh_type != SHT_NOBITS)
			add_fatbin(s, e.p + sh.sh_offset, sh.sh_size);
		else
			add_section(s, &e, &sh);
	}
	return 1;
}

void code_hash(const void *p, size_t n, char out[65])
{
	struct sha256 s;
	sha256_init(&s);
	sha256_update(&s, "kloop-code-v1", 14);
	if (!add_object(&s, p, n)) {
		sha256_init(&s);
		sha256_update(&s, "kloop-code-v1-bytes", 20);
		sha256_update(&s, p, n);
	}
	sha256_hex(&s, out);
}

int code_hash_file(const char *zPath, char out[65], char *err)
{
	strbuf sb = STRBUF_INIT;
	if (read_file(zPath, &sb, 1u << 30, err) < 0)
		return -1;
	code_hash(sb.buf ? sb.buf : "", sb.len, out);
	sb_free(&sb);
	return 0;
}
