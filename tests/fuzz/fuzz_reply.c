/*
 * fuzz_reply.c - libFuzzer target for what kloop takes out of an LLM's
 * reply: the fence scanner (fence_blocks), the candidate maker
 * (reply_code: whole file or spliced into the parent) and the ideas reader
 * (ideas_parse).  An input is a reply, optionally preceded by a parent
 * source and "\n@@\n"; without one the bundled softmax seed is the parent.
 * Checks: blocks lie inside the reply in order, a candidate is NUL-
 * terminated at its length and defines kl_run, every idea has a title and
 * a known category.  Build and run: make fuzz.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ideas.h"
#include "reply.h"
#include "fence.h"
#include "splice.h"
#include "util.h"

#define REQUIRE(c)                                                                                 \
	do {                                                                                       \
		if (!(c)) {                                                                        \
			fprintf(stderr, "REQUIRE failed at %s:%d: %s\n", __FILE__, __LINE__, #c);  \
			__builtin_trap();                                                          \
		}                                                                                  \
	} while (0)

static const char zSeed[] = "#include <math.h>\n#include \"kloop.h\"\n\n"
                            "static float sq(float x) { return x * x; }\n\n"
                            "int kl_run(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, "
                            "void *stream)\n{\n\t(void)stream;\n\tfloat *y = out[0].data;\n"
                            "\tconst float *x = in[0].data;\n\ty[0] = sq(x[0]);\n\treturn 0;\n}\n";

static int known_category(const char *z)
{
	if (!strcmp(z, "other"))
		return 1;
	for (int i = 0; ideas_categories[i]; i++)
		if (!strcmp(z, ideas_categories[i]))
			return 1;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 65536)
		return 0;
	const char *z = (const char *)data;
	const char *zParent = zSeed, *zReply = z;
	size_t nParent = sizeof zSeed - 1, nReply = size;
	const char *sep = size >= 4 ? memmem(z, size, "\n@@\n", 4) : NULL;
	if (sep) {
		zParent = z;
		nParent = (size_t)(sep - z);
		zReply = sep + 4;
		nReply = size - nParent - 4;
	}
	/* NUL-terminated copies: the API takes lengths, but a stray read past
	 * them is what the sanitizer should catch */
	char *parent = xstrndup(zParent, nParent);
	char *reply = xmalloc(nReply + 1);
	memcpy(reply, zReply, nReply);
	reply[nReply] = 0;

	struct fence_block *b = NULL;
	size_t nb = fence_blocks(reply, nReply, &b);
	for (size_t i = 0; i < nb; i++) {
		REQUIRE(b[i].start <= b[i].end && b[i].end <= nReply);
		REQUIRE(!i || b[i].start >= b[i - 1].end);
		REQUIRE(b[i].line >= 1 && memchr(b[i].lang, 0, sizeof b[i].lang));
	}
	free(b);

	struct reply_code rc;
	char err[KL_ERRLEN];
	memset(&rc, 0, sizeof rc);
	if (reply_code(parent, strlen(parent), reply, nReply, &rc, err) == 0) {
		REQUIRE(rc.zSource && strlen(rc.zSource) == rc.nSource);
		REQUIRE(memmem(rc.zSource, rc.nSource, "kl_run", 6) != NULL);
		REQUIRE(rc.zChanges != NULL);
		reply_code_free(&rc);
	} else {
		REQUIRE(*err);
	}

	struct idea_list l;
	memset(&l, 0, sizeof l);
	int n = ideas_parse(reply, nReply, &l, err);
	if (n >= 0) {
		REQUIRE(n == l.n);
		for (int i = 0; i < l.n; i++)
			REQUIRE(l.a[i].zTitle && *l.a[i].zTitle && l.a[i].zDescription &&
			        l.a[i].zCategory && known_category(l.a[i].zCategory));
	}
	ideas_free(&l);
	free(parent);
	free(reply);
	return 0;
}
