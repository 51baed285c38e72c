/*
 * fuzz_syntax.c - libFuzzer target over the code-intelligence API: parse,
 * errors, highlight (whole source and a window), outline, tunables (find
 * and rewrite), and splice (find, replace, reply, crossover, diff).  An
 * input is a source A, optionally followed by "\n@@\n" and a second text
 * B (a reply, a second parent, a replacement).  Besides the sanitizers it
 * checks invariants: well-formed spans, a window's spans equal to the
 * whole source's clipped to it, spliced results that are whole strings.
 * Build and run: make fuzz FUZZ_SECONDS=60.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "highlight.h"
#include "fence.h"
#include "funcdiff.h"
#include "outline.h"
#include "splice.h"
#include "syntax.h"
#include "tunables.h"

#define REQUIRE(c)                                                                                 \
	do {                                                                                       \
		if (!(c))                                                                          \
			__builtin_trap();                                                          \
	} while (0)

static void spans_ok(const struct hl_span *s, size_t n, size_t len)
{
	for (size_t i = 0; i < n; i++) {
		REQUIRE(s[i].start < s[i].end && s[i].end <= len);
		REQUIRE(!i || s[i].start >= s[i - 1].end);
	}
}

/* the spans of window [from, to) are the whole source's spans w[] clipped to it */
static void window_ok(const struct syntax_doc *d, const struct hl_span *w, size_t nw, uint32_t from,
                      uint32_t to)
{
	struct hl_span *s;
	size_t n;
	REQUIRE(highlight_range(d, from, to, &s, &n, NULL) == 0);
	size_t k = 0;
	for (size_t i = 0; i < nw; i++) {
		if (w[i].end <= from || w[i].start >= to)
			continue;
		REQUIRE(k < n);
		REQUIRE(s[k].start == (w[i].start > from ? w[i].start : from));
		REQUIRE(s[k].end == (w[i].end < to ? w[i].end : to));
		REQUIRE(!strcmp(s[k].name, w[i].name));
		k++;
	}
	REQUIRE(k == n);
	free(s);
}

static void splice_ok(int rc, const struct splice_result *r)
{
	if (rc == 0) {
		REQUIRE(r->src && strlen(r->src) == r->len);
	} else {
		REQUIRE(r->src == NULL);
	}
}

static void on_source(const char *a, size_t an, const char *b, size_t bn)
{
	char err[KL_ERRLEN];
	struct syntax_doc *d = syntax_parse(a, an, err);
	if (!d)
		return;
	struct syntax_error e[8];
	size_t ne = syntax_errors(d, e, 8);
	REQUIRE(ne <= 8);
	REQUIRE(syntax_is_clean(d) == (ne == 0));

	struct hl_span *spans;
	size_t nspans;
	REQUIRE(highlight_range(d, 0, (uint32_t)d->len, &spans, &nspans, err) == 0);
	spans_ok(spans, nspans, d->len);
	uint32_t from = (uint32_t)(d->len / 3), to = (uint32_t)(d->len * 2 / 3 + 1);
	window_ok(d, spans, nspans, from, to);
	free(spans);

	struct outline o;
	outline_build(d, &o, err);
	cJSON *j = outline_json(&o);
	char *s = cJSON_PrintUnformatted(j);
	REQUIRE(s != NULL);
	free(s);
	cJSON_Delete(j);

	struct tunable_list tl;
	REQUIRE(tunables_find(d, &tl, err) == 0);
	for (size_t i = 0; i < tl.n; i++)
		REQUIRE(tl.v[i].start < tl.v[i].end && tl.v[i].end <= d->len);
	if (tl.n) {
		struct tunable_set set = {tl.v[tl.n - 1].name, 7};
		size_t len;
		char *out = tunables_rewrite(a, an, &set, 1, &len, err);
		if (out)
			REQUIRE(strlen(out) == len);
		free(out);
	}
	j = tunables_json(&tl);
	cJSON_Delete(j);
	tunables_free(&tl);

	/* function-level edits with the first function's name */
	if (o.n_funcs) {
		const char *name = o.funcs[0].qualname;
		struct splice_span sp;
		if (splice_find(a, an, name, &sp, err) == 0) {
			REQUIRE(sp.end <= an && sp.start < sp.end);
			splice_span_free(&sp);
		}
		struct splice_result r;
		splice_ok(splice_replace(a, an, name, b, bn, &r, err), &r);
		splice_result_free(&r);
		splice_ok(splice_crossover(b, bn, a, an, name, &r, err), &r);
		splice_result_free(&r);
	}
	outline_free(&o);

	syntax_free(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 65536)
		return 0;
	const char *p = (const char *)data;
	const char *sep = NULL;
	for (size_t i = 0; i + 4 <= size; i++)
		if (!memcmp(p + i, "\n@@\n", 4)) {
			sep = p + i;
			break;
		}
	size_t an = sep ? (size_t)(sep - p) : size;
	const char *b = sep ? sep + 4 : "";
	size_t bn = sep ? size - an - 4 : 0;

	on_source(p, an, b, bn);
	if (bn)
		on_source(b, bn, p, an);

	char err[KL_ERRLEN];
	struct splice_result r;
	splice_ok(splice_reply(p, an, b, bn, &r, err), &r);
	splice_result_free(&r);
	struct funcdiff df;
	if (funcdiff_compare(p, an, b, bn, &df, err) == 0)
		funcdiff_free(&df);
	struct fence_block *blocks;
	size_t nb = fence_blocks(b, bn, &blocks);
	for (size_t i = 0; i < nb; i++)
		REQUIRE(blocks[i].start <= blocks[i].end && blocks[i].end <= bn);
	free(blocks);
	return 0;
}
