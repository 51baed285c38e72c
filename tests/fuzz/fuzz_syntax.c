/*
 * fuzz_syntax.c - libFuzzer target over the code-intelligence API: parse,
 * errors, highlight (full and incremental), outline, tunables (find and
 * rewrite), and splice (find, replace, reply, crossover, diff).  An input
 * is a source A, optionally followed by "\n@@\n" and a second text B (a
 * reply, a second parent, a replacement, an edit's text).  Besides the
 * sanitizers it checks invariants: well-formed spans, an incremental
 * re-highlight equal to a full one, spliced results that parse, and (for
 * one clean input in eight, repeated past the size where sources are cut
 * into segments) a segmented parse, and an edit of it, equal to a whole
 * parse, and highlighted the same.
 * Build and run: make fuzz FUZZ_SECONDS=60.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "highlight.h"
#include "outline.h"
#include "splice.h"
#include "syntax.h"
#include "tunables.h"

#define REQUIRE(c)                                                                                 \
	do {                                                                                       \
		if (!(c))                                                                          \
			__builtin_trap();                                                          \
	} while (0)

static void spans_ok(const struct highlight *h, size_t len)
{
	for (size_t i = 0; i < h->n; i++) {
		REQUIRE(h->spans[i].start < h->spans[i].end && h->spans[i].end <= len);
		REQUIRE(!i || h->spans[i].start >= h->spans[i - 1].end);
	}
}

static int same(const struct highlight *a, const struct highlight *b)
{
	if (a->n != b->n)
		return 0;
	for (size_t i = 0; i < a->n; i++)
		if (a->spans[i].start != b->spans[i].start || a->spans[i].end != b->spans[i].end ||
		    strcmp(a->spans[i].name, b->spans[i].name))
			return 0;
	return 1;
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

	struct highlight h = HIGHLIGHT_INIT;
	REQUIRE(highlight_all(&h, d, err) == 0);
	spans_ok(&h, d->len);

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

	/* an edit: replace a few bytes somewhere by the start of b */
	size_t h1 = 0;
	for (size_t i = 0; i < bn && i < 16; i++)
		h1 = h1 * 31 + (unsigned char)b[i];
	size_t at = an ? h1 % (an + 1) : 0;
	size_t del = at < an ? (h1 >> 8) % 4 : 0;
	if (at + del > an)
		del = an - at;
	size_t ins = bn < 12 ? bn : 12;
	struct syntax_change chg;
	if (syntax_edit(d, at, at + del, b, ins, &chg, err) == 0) {
		REQUIRE(chg.dirty_start <= chg.dirty_end && chg.dirty_end <= d->len);
		REQUIRE(highlight_update(&h, d, &chg, err) == 0);
		struct highlight full = HIGHLIGHT_INIT;
		REQUIRE(highlight_all(&full, d, err) == 0);
		spans_ok(&h, d->len);
		REQUIRE(same(&h, &full));
		highlight_free(&full);
	}
	highlight_free(&h);
	syntax_free(d);
}

/* d must hold the items and first error a whole parse of its text has, and
 * highlight (a segment per thread) as the whole parse does */
static void same_as_whole(const struct syntax_doc *d)
{
	syntax_set_threads(1);
	struct syntax_doc *w = syntax_parse(d->src, d->len, NULL);
	syntax_set_threads(0);
	REQUIRE(w != NULL);
	char *x = syntax_items_string(d), *y = syntax_items_string(w);
	REQUIRE(!strcmp(x, y));
	struct highlight hd = HIGHLIGHT_INIT, hw = HIGHLIGHT_INIT;
	REQUIRE(highlight_all(&hd, d, NULL) == 0 && highlight_all(&hw, w, NULL) == 0);
	REQUIRE(same(&hd, &hw));
	highlight_free(&hd);
	highlight_free(&hw);
	struct syntax_error ea = {0}, eb = {0};
	REQUIRE(syntax_first_error(d, &ea) == syntax_first_error(w, &eb));
	REQUIRE(ea.byte == eb.byte && !strcmp(ea.msg, eb.msg));
	free(x);
	free(y);
	syntax_free(w);
}

/* a repeats until the source is large enough to be cut into segments */
static void on_segments(const char *a, size_t an, const char *b, size_t bn)
{
	size_t want = 2 * SYNTAX_MIN_SEG_BYTES + 4096, n = 0;
	char *big = malloc(want + an + 2);
	while (n < want) {
		memcpy(big + n, a, an);
		n += an;
		big[n++] = '\n';
	}
	syntax_set_threads(4);
	struct syntax_doc *d = syntax_parse(big, n, NULL);
	syntax_set_threads(0);
	free(big);
	if (!d)
		return;
	same_as_whole(d);
	size_t at = (an * 7919 + bn) % (d->len + 1), del = at < d->len ? bn % 3 : 0;
	if (syntax_edit(d, at, at + del, b, bn < 8 ? bn : 8, NULL, NULL) == 0)
		same_as_whole(d);
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
	/* only a clean source can be kept in segments: others are parsed whole */
	if (an && (p[0] ^ p[an - 1] ^ an) % 8 == 0 && syntax_check(p, an, NULL) == 0)
		on_segments(p, an, b, bn);

	char err[KL_ERRLEN];
	struct splice_result r;
	splice_ok(splice_reply(p, an, b, bn, &r, err), &r);
	splice_result_free(&r);
	struct splice_diff df;
	if (splice_diff(p, an, b, bn, &df, err) == 0)
		splice_diff_free(&df);
	struct splice_block *blocks;
	size_t nb = splice_code_blocks(b, bn, &blocks);
	for (size_t i = 0; i < nb; i++)
		REQUIRE(blocks[i].start <= blocks[i].end && blocks[i].end <= bn);
	free(blocks);
	return 0;
}
