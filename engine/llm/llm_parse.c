/*
 * llm_parse.c - the reply being read (struct llm_parse, llm_provider.h):
 * its text appended as it arrives and passed on, its token counts.  The
 * providers' readers and the command transport fill it; it calls none of
 * them, nor the queue.
 */
#include "llm_provider.h"

int llm_parse_text(struct llm_parse *p, const char *z, size_t n, char *err)
{
	if (p->text.len + n > p->maxText)
		return kl_err(err, "the reply is longer than the limit of %zu bytes", p->maxText);
	sb_add(&p->text, z, n);
	if (p->delta)
		p->delta(p->arg, z, n);
	return 0;
}

void llm_parse_usage(struct llm_parse *p, const cJSON *u, const char *zIn, const char *zOut)
{
	const cJSON *in = cJSON_GetObjectItem(u, zIn);
	const cJSON *out = cJSON_GetObjectItem(u, zOut);
	/* the server's numbers: checked before the conversion (inf is undefined) */
	if (cJSON_IsNumber(in) && in->valuedouble >= 0 && in->valuedouble < 1e15)
		p->inTokens = (long)in->valuedouble;
	if (cJSON_IsNumber(out) && out->valuedouble >= 0 && out->valuedouble < 1e15)
		p->outTokens = (long)out->valuedouble;
}
