/*
 * highlight.c - runs kloop's highlight query over a byte range (with
 * hlmatch.c's matcher; tree-sitter's query cursor remains as the
 * reference), resolves nested and duplicate captures into flat spans, and
 * keeps a document's spans current across edits by re-highlighting only
 * what changed.
 */
#include "highlight.h"

#include "hlmatch.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/*
 * Each byte of the range keeps the best capture covering it, as one key:
 * the capturing node's length (shorter, i.e. inner, wins), then the
 * pattern index (earlier wins), then the capture id.  No sorting needed:
 * the captures are tree nodes, so they nest or are disjoint.
 */
#define NO_CAPTURE UINT64_MAX

/* the per-byte best keys of one highlight_range() */
struct best {
	uint64_t *aKey; /* per byte of [start, end) */
	uint32_t start; /* the range */
	uint32_t end;
};

/* b for [start, end) clipped to d's source; 0 (nothing allocated) when that is empty */
static int best_init(struct best *b, const struct syntax_doc *d, uint32_t start, uint32_t end)
{
	if (end > d->len)
		end = (uint32_t)d->len;
	if (start >= end)
		return 0;
	b->start = start;
	b->end = end;
	b->aKey = xmalloc((size_t)(end - start) * sizeof *b->aKey);
	for (uint32_t i = 0; i < end - start; i++)
		b->aKey[i] = NO_CAPTURE;
	return 1;
}

/* capture `capture` of pattern `pattern` on node: keep it where it is the best */
static void best_note(void *ctx, TSNode node, uint32_t pattern, uint32_t capture)
{
	struct best *b = ctx;
	uint32_t s = ts_node_start_byte(node), e = ts_node_end_byte(node);
	uint64_t key =
	    (uint64_t)(e - s) << 32 | (uint64_t)(pattern & 0xFFFF) << 16 | (capture & 0xFFFF);
	if (s < b->start)
		s = b->start;
	if (e > b->end)
		e = b->end;
	for (uint32_t i = s; i < e; i++)
		if (key < b->aKey[i - b->start])
			b->aKey[i - b->start] = key;
}

/* the spans of b, named by name(q, capture id); frees b's keys */
static void best_spans(struct best *b, const char *(*name)(const void *, uint32_t), const void *q,
                       struct hl_span **out, size_t *n)
{
	uint32_t width = b->end - b->start;
	struct hl_span *spans = NULL;
	size_t nspans = 0, aspans = 0;
	for (uint32_t i = 0; i < width;) {
		uint64_t id = b->aKey[i] == NO_CAPTURE ? NO_CAPTURE : (b->aKey[i] & 0xFFFF);
		uint32_t j = i + 1;
		while (j < width &&
		       (b->aKey[j] == NO_CAPTURE ? NO_CAPTURE : (b->aKey[j] & 0xFFFF)) == id)
			j++;
		if (id != NO_CAPTURE) {
			xgrow((void **)&spans, &aspans, nspans + 1, sizeof *spans);
			spans[nspans++] =
			    (struct hl_span){b->start + i, b->start + j, name(q, (uint32_t)id)};
		}
		i = j;
	}
	free(b->aKey);
	*out = spans;
	*n = nspans;
}

static struct hlm *the_matcher;

/* the matcher for highlights.scm, compiled on first use; NULL with err */
static const struct hlm *matcher(char *err)
{
	if (the_matcher)
		return the_matcher;
	const struct syntax_query_src *qs = syntax_query_src("highlights", err);
	if (!qs)
		return NULL;
	the_matcher = hlm_compile(syntax_language(), "highlights.scm", qs->text, qs->len, err);
	return the_matcher;
}

static const char *hlm_name(const void *m, uint32_t id)
{
	return hlm_capture_name(m, id);
}

/* one segment's part of a range: one thread's work, with keys and spans
 * of its own (segments hold disjoint bytes) */
struct seg_walk {
	const struct hlm *m;
	const struct syntax_doc *d;
	size_t k;              /* the segment */
	uint32_t start, end;   /* its part of the range */
	struct hl_span *spans; /* the result */
	size_t n;
};

static void *seg_walk_run(void *arg)
{
	struct seg_walk *w = arg;
	struct best b;
	if (!best_init(&b, w->d, w->start, w->end))
		return NULL;
	hlm_run(w->m, syntax_seg_root(w->d, w->k), w->d->src, w->d->len, b.start, b.end, best_note,
	        &b);
	best_spans(&b, hlm_name, w->m, &w->spans, &w->n);
	return NULL;
}

int highlight_range(const struct syntax_doc *d, uint32_t start, uint32_t end, struct hl_span **out,
                    size_t *n, char *err)
{
	*out = NULL;
	*n = 0;
	const struct hlm *m = matcher(err);
	if (!m)
		return -1;
	if (end > d->len)
		end = (uint32_t)d->len;
	if (start >= end)
		return 0;
	/* the segments the range touches, one thread each when it is large */
	size_t k0 = syntax_seg_of(d, start), k1 = k0;
	while (k1 < d->nseg && d->seg[k1].start < end)
		k1++;
	struct seg_walk w[SYNTAX_MAX_SEGS];
	pthread_t th[SYNTAX_MAX_SEGS];
	int started[SYNTAX_MAX_SEGS] = {0};
	int parallel = end - start >= 2 * SYNTAX_MIN_SEG_BYTES;
	for (size_t k = k0; k < k1; k++) {
		const struct syntax_seg *sg = &d->seg[k];
		w[k] = (struct seg_walk){m,
		                         d,
		                         k,
		                         sg->start > start ? sg->start : start,
		                         sg->end < end && k + 1 < d->nseg ? sg->end : end,
		                         NULL,
		                         0};
		if (parallel && k > k0)
			started[k] = pthread_create(&th[k], NULL, seg_walk_run, &w[k]) == 0;
	}
	for (size_t k = k0; k < k1; k++) {
		if (!started[k])
			seg_walk_run(&w[k]);
	}
	/* the segments' spans in order; a span cut by a seam joins its other half */
	struct hl_span *spans = NULL;
	size_t nspans = 0, aspans = 0;
	for (size_t k = k0; k < k1; k++) {
		if (started[k])
			pthread_join(th[k], NULL);
		size_t i = 0;
		if (nspans && w[k].n && spans[nspans - 1].end == w[k].spans[0].start &&
		    !strcmp(spans[nspans - 1].name, w[k].spans[0].name))
			spans[nspans - 1].end = w[k].spans[i++].end;
		xgrow((void **)&spans, &aspans, nspans + w[k].n, sizeof *spans);
		if (w[k].n > i)
			memcpy(spans + nspans, w[k].spans + i, (w[k].n - i) * sizeof *spans);
		nspans += w[k].n - i;
		free(w[k].spans);
	}
	*out = spans;
	*n = nspans;
	return 0;
}

static const char *ts_name(const void *q, uint32_t id)
{
	uint32_t len;
	return ts_query_capture_name_for_id(q, id, &len);
}

int highlight_range_reference(const struct syntax_doc *d, uint32_t start, uint32_t end,
                              struct hl_span **out, size_t *n, char *err)
{
	*out = NULL;
	*n = 0;
	const struct syntax_query *sq = syntax_query_get("highlights", err);
	struct best b;
	if (!sq || !best_init(&b, d, start, end))
		return sq ? 0 : -1;
	const TSQuery *q = syntax_query_ts(sq);
	TSQueryCursor *qc = ts_query_cursor_new();
	ts_query_cursor_set_byte_range(qc, b.start, b.end);
	TSQueryMatch m;
	for (size_t k = syntax_seg_of(d, b.start); k < d->nseg && d->seg[k].start < b.end; k++) {
		ts_query_cursor_exec(qc, q, syntax_seg_root(d, k));
		while (ts_query_cursor_next_match(qc, &m)) {
			if (!syntax_query_accept(sq, &m, d))
				continue;
			for (uint16_t i = 0; i < m.capture_count; i++)
				best_note(&b, m.captures[i].node, m.pattern_index,
				          m.captures[i].index);
		}
	}
	ts_query_cursor_delete(qc);
	best_spans(&b, ts_name, q, out, n);
	return 0;
}

void highlight_shutdown(void)
{
	hlm_free(the_matcher);
	the_matcher = NULL;
}

int highlight_all(struct highlight *h, const struct syntax_doc *d, char *err)
{
	struct hl_span *s;
	size_t n;
	if (highlight_range(d, 0, (uint32_t)d->len, &s, &n, err) < 0)
		return -1;
	free(h->spans);
	h->spans = s;
	h->n = h->alloc = n;
	return 0;
}

/* merge spans i and i+1 of h when they touch and share a name */
static void merge_at(struct highlight *h, size_t i)
{
	if (i + 1 >= h->n || i >= h->n)
		return;
	struct hl_span *a = &h->spans[i], *b = &h->spans[i + 1];
	if (a->end != b->start || strcmp(a->name, b->name) != 0)
		return;
	a->end = b->end;
	memmove(b, b + 1, (h->n - i - 2) * sizeof *b);
	h->n--;
}

int highlight_update(struct highlight *h, const struct syntax_doc *d,
                     const struct syntax_change *chg, char *err)
{
	int64_t delta = (int64_t)chg->new_end - (int64_t)chg->old_end;
	uint32_t ds = chg->dirty_start < chg->start ? chg->dirty_start : chg->start;
	uint32_t de = chg->dirty_end > chg->new_end ? chg->dirty_end : chg->new_end;
	if (de > d->len)
		de = (uint32_t)d->len;
	if (ds > de)
		ds = de;
	/* whole lines of the new source */
	while (ds > 0 && d->src[ds - 1] != '\n')
		ds--;
	while (de < d->len && d->src[de] != '\n')
		de++;
	if (de < d->len)
		de++;

	/* old spans: [0, lo) end before ds, [hi, n) start at or after de */
	size_t lo = 0, hi = h->n;
	while (lo < h->n && h->spans[lo].end <= ds)
		lo++;
	int64_t de_old = (int64_t)de - delta;
	while (hi > lo && (int64_t)h->spans[hi - 1].start >= de_old)
		hi--;
	/* widen to the spans the range cuts */
	if (lo < hi && h->spans[lo].start < ds)
		ds = h->spans[lo].start;
	if (lo < hi && (int64_t)h->spans[hi - 1].end > de_old)
		de = (uint32_t)((int64_t)h->spans[hi - 1].end + delta);
	if (de > d->len)
		de = (uint32_t)d->len;

	struct hl_span *mid;
	size_t nmid;
	if (highlight_range(d, ds, de, &mid, &nmid, err) < 0)
		return -1;

	size_t ntail = h->n - hi;
	size_t total = lo + nmid + ntail;
	xgrow((void **)&h->spans, &h->alloc, total, sizeof *h->spans);
	if (ntail)
		memmove(h->spans + lo + nmid, h->spans + hi, ntail * sizeof *h->spans);
	for (size_t i = lo + nmid; i < total; i++) {
		h->spans[i].start = (uint32_t)((int64_t)h->spans[i].start + delta);
		h->spans[i].end = (uint32_t)((int64_t)h->spans[i].end + delta);
	}
	if (nmid)
		memcpy(h->spans + lo, mid, nmid * sizeof *mid);
	free(mid);
	h->n = total;
	/* the seams: a span cut by the range boundary joins its other half */
	if (lo + nmid >= 1)
		merge_at(h, lo + nmid - 1);
	if (lo >= 1)
		merge_at(h, lo - 1);
	return 0;
}

void highlight_free(struct highlight *h)
{
	free(h->spans);
	h->spans = NULL;
	h->n = h->alloc = 0;
}

const struct hl_span *highlight_at(const struct highlight *h, uint32_t b)
{
	size_t lo = 0, hi = h->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (h->spans[mid].end <= b)
			lo = mid + 1;
		else if (h->spans[mid].start > b)
			hi = mid;
		else
			return &h->spans[mid];
	}
	return NULL;
}
