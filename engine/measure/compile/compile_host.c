/*
 * compile_host.c - what a staged CUDA build keeps for the sources that
 * share its host part (hostpart.h): the host object (host/HK.o) and the
 * shared object last linked from it (host/HK.so, its slot: fatslot.h),
 * and the device preprocessing of its lines up to the last #include
 * (pre/PK.ii, pre/PK.h: compile_argv.c's devfat), copied into a build that
 * can use them; compile.c's jobs call it.
 */
#include "compile_priv.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fatslot.h"
#include "sha256.h"
#include "util.h"

/* where the host object of host key zHostKey is kept (ext "o"), and the
 * last shared object linked from it (ext "so"); fresh */
static char *host_object(const struct compiler *c, const char *zHostKey, const char *zExt)
{
	return xasprintf("%s/host/%s.%s", c->zCache, zHostKey, zExt);
}

/* the word of the preprocessor directive on line p (up to end), "" where
 * none, in w (n bytes) */
static void directive(const char *p, const char *end, char *w, size_t n)
{
	size_t k = 0;
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	if (p < end && *p == '#') {
		p++;
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		if (p < end && isdigit((unsigned char)*p)) {
			snprintf(w, n, "line"); /* "# 12 \"file\"": a line marker */
			return;
		}
		while (p < end && (isalnum((unsigned char)*p) || *p == '_') && k + 1 < n)
			w[k++] = *p++;
	}
	w[k] = 0;
}

/* the lines of CUDA source z (n bytes) up to and with its last #include,
 * #include_next or #import (0 where none), whose device preprocessing an
 * edit that keeps them may take from an earlier build's (devfat in
 * compile_argv.c); -1 where the rest could preprocess otherwise without
 * them before it (*pLen: their bytes): a #line before that line or that
 * line continued, the rest reading the include depth, the source's time
 * stamp or a counter that the headers may have moved, or pushing, popping
 * or poisoning macros (the headers' state is their macros alone) */
static int prefix_lines(const char *z, size_t n, size_t *pLen)
{
	int line = 0, last = 0, lineDirective = 0;
	const char *end = z + n, *rest = z;
	for (const char *p = z; p < end; line++) {
		const char *e = memchr(p, '\n', (size_t)(end - p));
		e = e ? e : end;
		char w[16];
		directive(p, e, w, sizeof w);
		if (!strcmp(w, "include") || !strcmp(w, "include_next") || !strcmp(w, "import")) {
			last = line + 1;
			rest = e < end ? e + 1 : end;
			if (e > p && e[-1] == '\\')
				return -1;
		} else if (!strcmp(w, "line")) {
			lineDirective = line + 1;
		}
		p = e < end ? e + 1 : end;
	}
	if (lineDirective && lineDirective < last)
		return -1;
	static const char *const words[] = {"__COUNTER__", "__INCLUDE_LEVEL__", "__TIMESTAMP__",
	                                    "push_macro",  "pop_macro",         "poison"};
	for (size_t i = 0; i < sizeof words / sizeof *words; i++)
		if (memmem(rest, (size_t)(end - rest), words[i], strlen(words[i])))
			return -1;
	*pLen = (size_t)(rest - z);
	return last;
}

/* where the device preprocessing of key zPreKey is kept (ext "ii": its
 * output, "h": the macros it left, "no": it could not be kept); fresh */
static char *prefix_file(const struct compiler *c, const char *zPreKey, const char *zExt)
{
	return xasprintf("%s/pre/%s.%s", c->zCache, zPreKey, zExt);
}

/* a device-only build with nvcc's steps (KLOOP_NVCC_STEPS): its prefix's
 * lines and key (the host key and their text), and their preprocessing
 * where an earlier edit kept it, into the build directory */
static void prefix_in(struct compiler *c, struct cjob *j)
{
	j->prefixLines = -1;
	j->zPreKey[0] = 0;
	if (!j->deviceOnly || !c->bSteps)
		return;
	size_t len = 0;
	int k = prefix_lines(j->zSrc, j->req.nSource, &len);
	if (k < 0)
		return;
	struct sha256 s;
	sha256_init(&s);
	sha256_update(&s, "kloop-device-prefix-v1", 23);
	sha256_update(&s, j->zHostKey, 65);
	sha256_update(&s, j->zSrc, len);
	sha256_hex(&s, j->zPreKey);
	char *no = prefix_file(c, j->zPreKey, "no");
	int refused = path_exists(no);
	free(no);
	if (refused)
		return;
	j->prefixLines = k;
	static const char *const exts[] = {"ii", "h"};
	char *kept[2], *to[2];
	int both = 1;
	for (int i = 0; i < 2; i++) {
		kept[i] = prefix_file(c, j->zPreKey, exts[i]);
		to[i] = xasprintf("%s/kl_pre.%s", j->zDir, exts[i]);
		both &= path_is_file(kept[i]);
	}
	/* linked where the cache and the build share a file system, else
	 * copied; a part missing leaves both out (devfat makes them again) */
	for (int i = 0; both && i < 2; i++)
		if (link(kept[i], to[i]) < 0) {
			strbuf b = STRBUF_INIT;
			if (read_file(kept[i], &b, 1u << 30, NULL) < 0 ||
			    write_file_atomic(to[i], b.buf ? b.buf : "", b.len, NULL) < 0)
				both = 0;
			sb_free(&b);
		}
	for (int i = 0; i < 2; i++) {
		if (!both)
			unlink(to[i]);
		free(kept[i]);
		free(to[i]);
	}
}

/* what a device-only build's devfat made of its prefix (kl_pre.ii.new and
 * kl_pre.h.new, or kl_pre.no.new where its splice was not the source's
 * own preprocessing), kept under its key */
void compile_prefix_keep(struct compiler *c, struct cjob *j)
{
	if (!j->zPreKey[0])
		return;
	char *dir = xasprintf("%s/pre", c->zCache), err[KL_ERRLEN];
	char *noNew = xasprintf("%s/kl_pre.no.new", j->zDir);
	if (mkdir_p(dir, err) == 0 && path_exists(noNew)) {
		char *no = prefix_file(c, j->zPreKey, "no");
		write_file_atomic(no, "", 0, NULL);
		free(no);
	}
	static const char *const exts[] = {"ii", "h"};
	strbuf b[2] = {STRBUF_INIT, STRBUF_INIT};
	int both = 1;
	for (int i = 0; i < 2; i++) {
		char *from = xasprintf("%s/kl_pre.%s.new", j->zDir, exts[i]);
		both &= path_is_file(from) && read_file(from, &b[i], 1u << 30, NULL) >= 0;
		free(from);
	}
	/* the macros first: a build that finds the output finds them too */
	for (int i = 1; both && i >= 0; i--) {
		char *to = prefix_file(c, j->zPreKey, exts[i]);
		if (write_file_atomic(to, b[i].buf ? b[i].buf : "", b[i].len, NULL) < 0)
			both = 0;
		free(to);
	}
	sb_free(&b[0]);
	sb_free(&b[1]);
	free(noNew);
	free(dir);
}

/* a CUDA source with a host part: built in two stages, from its kept host
 * object when there is one (copied into the build directory: the sandbox
 * sees no cache), with the shared object last linked from it where it has
 * a slot for the device code (fatslot.h) */
char **compile_host_staged(struct compiler *c, struct cjob *j, char **argv)
{
	if (!j->zHostKey[0])
		return argv;
	char *kept = host_object(c, j->zHostKey, "o"), *to = path_join(j->zDir, "kl_host.o");
	strbuf o = STRBUF_INIT;
	j->deviceOnly = path_is_file(kept) && read_file(kept, &o, 1u << 30, NULL) >= 0 &&
	                write_file_atomic(to, o.buf ? o.buf : "", o.len, NULL) >= 0;
	sb_free(&o);
	free(kept);
	free(to);
	j->slotAt = j->slotSize = 0;
	kept = host_object(c, j->zHostKey, "so");
	to = path_join(j->zDir, "kl_linked.so");
	uint64_t at, size;
	if (j->deviceOnly && path_is_file(kept) && read_file(kept, &o, 1u << 30, NULL) >= 0 &&
	    fatslot_find((const unsigned char *)o.buf, o.len, &at, &size) == 0 &&
	    write_file_atomic(to, o.buf, o.len, NULL) >= 0) {
		j->slotAt = at;
		j->slotSize = size;
	}
	sb_free(&o);
	free(kept);
	free(to);
	prefix_in(c, j);
	return compile_staged(c, j, argv, j->deviceOnly);
}

/* 1 when n bytes at p name an entity by nvcc's module id: cudafe++ names a
 * namespace-scope entity of internal linkage that host and device share
 * (a __device__ variable in an anonymous namespace, CuTe's and libcu++'s
 * inline constexpr objects) _INTERNAL_<8 hex>_... or _GLOBAL__N__<8 hex>_...,
 * the hex a hash of the whole source.  An object that holds such a name
 * registers it with the device code of its own source only. */
static int names_module_id(const char *p, size_t n)
{
	static const char *const marks[] = {"_INTERNAL_", "_GLOBAL__N__"};
	for (size_t m = 0; m < 2; m++) {
		size_t k = strlen(marks[m]);
		for (const char *q = p, *end = p + n;
		     (q = memmem(q, (size_t)(end - q), marks[m], k)) != NULL; q += k) {
			int hex = 0;
			while (q + k + hex < end && hex < 8 && isxdigit((unsigned char)q[k + hex]))
				hex++;
			if (hex == 8 && q + k + 8 < end && q[k + 8] == '_')
				return 1;
		}
	}
	return 0;
}

/* keep a built host object for the sources that share its host part: not
 * one that names its module id (names_module_id), whose edited sources'
 * device code names their entities otherwise; and, where this build
 * linked (no kl_nolink marker), the shared object so (n bytes) as the one
 * the next device-only build writes its device code into */
void compile_host_keep(struct compiler *c, struct cjob *j, const char *so, size_t n)
{
	char *kept = host_object(c, j->zHostKey, "o"), *from = path_join(j->zDir, "kl_host.o");
	char *keptSo = host_object(c, j->zHostKey, "so"), *noLink = path_join(j->zDir, "kl_nolink");
	char *dir = xasprintf("%s/host", c->zCache);
	strbuf o = STRBUF_INIT;
	char err[KL_ERRLEN];
	if (mkdir_p(dir, err) == 0 && read_file(from, &o, 1u << 30, NULL) >= 0 && o.len &&
	    !names_module_id(o.buf, o.len)) {
		if (!path_is_file(kept))
			write_file_atomic(kept, o.buf, o.len, NULL);
		if (!path_exists(noLink))
			write_file_atomic(keptSo, so, n, NULL);
	}
	sb_free(&o);
	free(kept);
	free(from);
	free(keptSo);
	free(noLink);
	free(dir);
}
