/*
 * reply.c - turning the code in an LLM reply into a candidate source: a
 * whole file is taken as it is (after a parse check), anything else is
 * spliced into the parent function by function.
 */
#include "reply.h"

#include <stdlib.h>
#include <string.h>

#include "fence.h"
#include "splice.h"
#include "syntax.h"
#include "torchext.h"
#include "util.h"

void reply_code_free(struct reply_code *r)
{
	free(r->zSource);
	free(r->zChanges);
	memset(r, 0, sizeof *r);
}

/* 1 if some line of z[0..n) starts with #include */
static int has_include(const char *z, size_t n)
{
	for (size_t i = 0; i < n;) {
		size_t k = i;
		while (k < n && (z[k] == ' ' || z[k] == '\t'))
			k++;
		if (n - k >= 8 && !memcmp(z + k, "#include", 8))
			return 1;
		while (i < n && z[i] != '\n')
			i++;
		i++;
	}
	return 0;
}

/* 1 if z[0..n) defines kl_run */
static int defines_kl_run(const char *z, size_t n)
{
	struct splice_span s;
	if (splice_find(z, n, "kl_run", &s, NULL) < 0)
		return 0;
	splice_span_free(&s);
	return 1;
}

/*
 * Check a whole-file block the way splice_reply() checks blocks (it parses,
 * no function elides code): splice it into itself from a reply made of
 * blank lines and empty blocks that put it at its own block number and
 * reply line, so that the messages name them.  0 or -1 + err.
 */
static int check_block(const char *z, size_t n, int block, unsigned line, char *err)
{
	strbuf synth = STRBUF_INIT;
	unsigned at = 1;
	for (int k = 1; k < block; k++, at += 2)
		sb_adds(&synth, "```\n```\n");
	for (; at < line; at++)
		sb_adds(&synth, "\n");
	sb_adds(&synth, "```c\n");
	sb_add(&synth, z, n);
	sb_adds(&synth, n && z[n - 1] == '\n' ? "```\n" : "\n```\n");
	struct splice_result r;
	int rc = splice_reply(z, n, synth.buf, synth.len, &r, err);
	if (rc == 0)
		splice_result_free(&r);
	sb_free(&synth);
	return rc;
}

/* a ```python block holding a KernelBench ModelNew module (kloop's worker
 * reads it; nothing parses Python here) */
static int is_modelnew(const struct fence_block *b, const char *z, size_t n)
{
	return (!strcmp(b->lang, "python") || !strcmp(b->lang, "py")) &&
	       memmem(z, n, "class ModelNew", 14) && memmem(z, n, "load_inline", 11);
}

/* a block that is a whole candidate: a kl_run file with its includes, an
 * extension, a ModelNew module */
static int whole_block(const struct fence_block *b, const char *z, size_t n)
{
	if (is_modelnew(b, z, n))
		return TORCHEXT_MODELNEW;
	if (b->is_code && torchext_is_extension(z, n))
		return TORCHEXT_EXTENSION;
	return b->is_code && has_include(z, n) && defines_kl_run(z, n) ? TORCHEXT_KERNEL : -1;
}

/* take z[0..n) as the candidate (block: its 1-based number, 0 for a reply
 * without fences; line: its fence's reply line; form: what it is) */
static int take_whole(const char *z, size_t n, int block, unsigned line, int form,
                      struct reply_code *out, char *err)
{
	out->form = form;
	if (form != TORCHEXT_MODELNEW && block && check_block(z, n, block, line, err) < 0)
		return -1;
	if (!block && syntax_check(z, n, err) < 0) {
		char e2[KL_ERRLEN];
		memcpy(e2, err, KL_ERRLEN);
		return kl_err(err, "the reply does not parse: %s", e2);
	}
	out->zSource = xstrndup(z, n);
	out->nSource = n;
	out->whole = 1;
	out->zChanges = xstrdup("whole file");
	return 0;
}

static char *describe(const struct splice_result *r)
{
	static const char *const kinds[] = {"function", "macro", "include", "declaration"};
	strbuf sb = STRBUF_INIT;
	for (int a = SPLICE_REPLACED; a <= SPLICE_ADDED; a++) {
		int first = 1;
		for (size_t i = 0; i < r->n_changes; i++) {
			const struct splice_change *c = &r->changes[i];
			if ((int)c->action != a)
				continue;
			if (first)
				sb_addf(&sb, "%s%s ", sb.len ? "; " : "",
				        splice_action_name(c->action));
			else
				sb_adds(&sb, ", ");
			sb_addf(&sb, "%s%s%s", c->item == SPLICE_FUNCTION ? "" : kinds[c->item],
			        c->item == SPLICE_FUNCTION ? "" : " ", c->name);
			first = 0;
		}
	}
	if (!sb.len)
		sb_adds(&sb, "no change");
	return sb_detach(&sb);
}

int reply_code(const char *zParent, size_t nParent, const char *zReply, size_t nReply,
               struct reply_code *out, char *err)
{
	memset(out, 0, sizeof *out);
	struct fence_block *b = NULL;
	size_t nb = fence_blocks(zReply, nReply, &b);
	int whole = -1, form = -1;
	for (size_t i = 0; i < nb; i++) {
		int f = whole_block(&b[i], zReply + b[i].start, b[i].end - b[i].start);
		if (f >= 0)
			whole = (int)i, form = f;
	}
	int rc;
	if (whole >= 0) {
		rc = take_whole(zReply + b[whole].start, b[whole].end - b[whole].start, whole + 1,
		                b[whole].line, form, out, err);
		free(b);
		return rc;
	}
	free(b);
	if (nb == 0 && has_include(zReply, nReply) &&
	    (defines_kl_run(zReply, nReply) || torchext_is_extension(zReply, nReply)))
		return take_whole(zReply, nReply, 0, 0,
		                  defines_kl_run(zReply, nReply) ? TORCHEXT_KERNEL
		                                                 : TORCHEXT_EXTENSION,
		                  out, err);
	if (memmem(zParent, nParent, "class ModelNew", 14))
		return kl_err(err,
		              "the parent is a KernelBench ModelNew module: reply with the whole "
		              "new module in one ```python block (class ModelNew and its "
		              "load_inline sources)");
	struct splice_result r;
	if (splice_reply(zParent, nParent, zReply, nReply, &r, err) < 0) {
		/* the fence the message shows is in the parent's language: a C host
		 * task is not told about ```cuda */
		char *f = strstr(err, "```cuda ... ```");
		if (f && !memmem(zParent, nParent, "__global__", 10)) {
			memmove(f + 4, f + 7, strlen(f + 7) + 1);
			memcpy(f, "```c", 4);
		}
		return -1;
	}
	int ext = torchext_is_extension(r.src, r.len);
	if (!ext && !defines_kl_run(r.src, r.len)) {
		splice_result_free(&r);
		return kl_err(err, "the result does not define kl_run");
	}
	out->form = ext ? TORCHEXT_EXTENSION : TORCHEXT_KERNEL;
	out->zSource = r.src;
	out->nSource = r.len;
	r.src = NULL;
	out->zChanges = describe(&r);
	splice_result_free(&r);
	return 0;
}
