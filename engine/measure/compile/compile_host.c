/*
 * compile_host.c - what a staged CUDA build keeps for the sources that
 * share its host part (hostpart.h): the host object (host/HK.o) and the
 * shared object last linked from it (host/HK.so, its slot: fatslot.h),
 * copied into a build that can use them; compile.c's jobs call it.
 */
#include "compile_priv.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "fatslot.h"
#include "util.h"

/* where the host object of host key zHostKey is kept (ext "o"), and the
 * last shared object linked from it (ext "so"); fresh */
static char *host_object(const struct compiler *c, const char *zHostKey, const char *zExt)
{
	return xasprintf("%s/host/%s.%s", c->zCache, zHostKey, zExt);
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
