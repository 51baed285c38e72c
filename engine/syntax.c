/*
 * syntax.c - one tree-sitter parser for C, C++ and CUDA (the CUDA grammar),
 * parse and incremental reparse of a source, error location, token
 * normalisation, and the embedded queries with their text predicates.
 */
#include "syntax.h"

#include <pthread.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const TSLanguage *tree_sitter_cuda(void);

/* one parser per thread that parses a segment; parsers[0] is the main one */
static TSParser *parsers[SYNTAX_MAX_SEGS];
static unsigned forced_threads;

const TSLanguage *syntax_language(void)
{
	return tree_sitter_cuda();
}

static TSParser *parser_n(unsigned i)
{
	if (!parsers[i]) {
		parsers[i] = ts_parser_new();
		if (!ts_parser_set_language(parsers[i], syntax_language()))
			die("the CUDA grammar's ABI %u does not fit tree-sitter %d..%d",
			    ts_language_abi_version(syntax_language()),
			    TREE_SITTER_MIN_COMPATIBLE_LANGUAGE_VERSION,
			    TREE_SITTER_LANGUAGE_VERSION);
	}
	return parsers[i];
}

/* the main parser, reading the whole source */
static TSParser *parser(void)
{
	TSParser *p = parser_n(0);
	ts_parser_set_included_ranges(p, NULL, 0);
	return p;
}

unsigned syntax_threads(void)
{
	if (forced_threads)
		return forced_threads;
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	if (n < 1)
		n = 1;
	return n > SYNTAX_MAX_SEGS ? SYNTAX_MAX_SEGS : (unsigned)n;
}

void syntax_set_threads(unsigned n)
{
	forced_threads = n > SYNTAX_MAX_SEGS ? SYNTAX_MAX_SEGS : n;
}

static int refuse(const char *src, size_t n, char *err)
{
	if (n > SYNTAX_MAX_BYTES)
		return kl_err(err, "source is %zu bytes, over the limit of %u bytes", n,
		              SYNTAX_MAX_BYTES);
	const char *nul = memchr(src, 0, n);
	if (nul)
		return kl_err(err,
		              "source holds a NUL byte at offset %zu: binary data, not source text",
		              (size_t)(nul - src));
	return 0;
}

/* ---- cutting a source into segments ---- */

/* a place a segment may start: the byte and point of a line's start */
struct cut {
	uint32_t byte;
	TSPoint pt;
};

/* skip a preprocessor line (and its continuations) from p; the index of its
 * newline, or n; *if_delta is +1 for #if/#ifdef/#ifndef, -1 for #endif */
static size_t skip_directive(const char *s, size_t n, size_t p, int *if_delta)
{
	size_t q = p + 1;
	while (q < n && (s[q] == ' ' || s[q] == '\t'))
		q++;
	size_t w = q;
	while (w < n && s[w] >= 'a' && s[w] <= 'z')
		w++;
	*if_delta = 0;
	if ((w - q == 2 && !memcmp(s + q, "if", 2)) || (w - q == 5 && !memcmp(s + q, "ifdef", 5)) ||
	    (w - q == 6 && !memcmp(s + q, "ifndef", 6)))
		*if_delta = 1;
	else if (w - q == 5 && !memcmp(s + q, "endif", 5))
		*if_delta = -1;
	for (; w < n && s[w] != '\n'; w++)
		if (s[w] == '\\' && w + 1 < n && s[w + 1] == '\n')
			w++;
	return w;
}

/*
 * The starts of lines that follow a top-level item: the line before ends
 * in `}` or `;` outside every brace, parenthesis, comment, literal and
 * preprocessor conditional.  A lexical scan, so it can be fooled (a raw
 * string, a macro that opens a brace); syntax_parse() therefore keeps the
 * segments only when each parses cleanly.  Returns how many were found.
 */
static size_t find_cuts(const char *s, size_t n, struct cut **out)
{
	static const unsigned char special[256] = {
	    ['\n'] = 1, [' '] = 1, ['\t'] = 1, ['\r'] = 1, ['\f'] = 1, ['\v'] = 1,
	    ['#'] = 1,  ['/'] = 1, ['"'] = 1,  ['\''] = 1, ['{'] = 1,  ['}'] = 1,
	    ['('] = 1,  [')'] = 1, ['['] = 1,  [']'] = 1,
	};
	struct cut *cuts = NULL;
	size_t ncuts = 0, alloc = 0;
	int braces = 0, parens = 0, ifs = 0, at_line_start = 1;
	char last = 0; /* the last significant character of the line */
	uint32_t row = 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!special[(unsigned char)c]) {
			/* a run of bytes that matter only as the line's last one */
			while (i + 1 < n && !special[(unsigned char)s[i + 1]])
				i++;
			last = s[i];
			at_line_start = 0;
			continue;
		}
		if (c == '\n') {
			row++;
			if (braces == 0 && parens == 0 && ifs == 0 &&
			    (last == '}' || last == ';') && i + 1 < n) {
				xgrow((void **)&cuts, &alloc, ncuts + 1, sizeof *cuts);
				cuts[ncuts++] = (struct cut){(uint32_t)(i + 1), {row, 0}};
			}
			last = 0;
			at_line_start = 1;
			continue;
		}
		if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v')
			continue;
		if (c == '#' && at_line_start) {
			int delta;
			size_t e = skip_directive(s, n, i, &delta);
			ifs += delta;
			for (size_t k = i; k < e; k++)
				row += s[k] == '\n';
			i = e - 1; /* the newline (or the end) comes next */
			last = 0;
			continue;
		}
		at_line_start = 0;
		if (c == '/' && i + 1 < n && s[i + 1] == '/') {
			while (i + 1 < n && s[i + 1] != '\n')
				i++;
			continue;
		}
		if (c == '/' && i + 1 < n && s[i + 1] == '*') {
			for (i += 2; i < n && !(s[i] == '*' && i + 1 < n && s[i + 1] == '/'); i++)
				row += s[i] == '\n';
			i++;
			continue;
		}
		if (c == '"' || c == '\'') {
			for (i++; i < n && s[i] != c && s[i] != '\n'; i++)
				if (s[i] == '\\' && i + 1 < n)
					row += s[++i] == '\n'; /* an escape, or a continued line */
			if (i < n && s[i] == '\n')
				i--; /* an unterminated literal ends at its line */
			last = c;
			continue;
		}
		braces += c == '{';
		braces -= c == '}';
		parens += c == '(' || c == '[';
		parens -= c == ')' || c == ']';
		if (braces < 0 || parens < 0) /* fooled already: start afresh */
			braces = parens = 0;
		last = c;
	}
	*out = cuts;
	return ncuts;
}

/* a segment's parse: what one thread does */
struct seg_job {
	TSParser *p;
	const char *src;
	uint32_t len;
	TSRange range;
	TSTree *tree; /* the result, or NULL when the parser gave up */
};

static void *seg_job_run(void *arg)
{
	struct seg_job *j = arg;
	j->tree = ts_parser_set_included_ranges(j->p, &j->range, 1)
	              ? ts_parser_parse_string(j->p, NULL, j->src, j->len)
	              : NULL;
	if (!j->tree)
		ts_parser_reset(j->p);
	return NULL;
}

/* the point just past s[0..n) */
static TSPoint end_point(const char *s, size_t n)
{
	TSPoint pt = {0, 0};
	size_t line = 0;
	for (const char *p = s; (p = memchr(p, '\n', (size_t)(s + n - p))); p++) {
		pt.row++;
		line = (size_t)(p + 1 - s);
	}
	pt.column = (uint32_t)(n - line);
	return pt;
}

static void free_segs(struct syntax_seg *seg, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (seg[i].tree)
			ts_tree_delete(seg[i].tree);
	free(seg);
}

/*
 * Parse d->src in up to syntax_threads() segments at once; 1 when that was
 * done (every segment parsed cleanly), 0 when the source is better parsed
 * whole (small, no cuts, or a segment with a syntax error).
 */
static int parse_segments(struct syntax_doc *d)
{
	size_t want = syntax_threads();
	if (d->len / SYNTAX_MIN_SEG_BYTES < want)
		want = d->len / SYNTAX_MIN_SEG_BYTES;
	if (want < 2)
		return 0;
	struct cut *cuts;
	size_t ncuts = find_cuts(d->src, d->len, &cuts);
	/* segment k starts at the first cut at or after k/want of the source */
	struct cut starts[SYNTAX_MAX_SEGS];
	size_t nseg = 1, ci = 0;
	starts[0] = (struct cut){0, {0, 0}};
	for (size_t k = 1; k < want; k++) {
		size_t target = d->len * k / want;
		while (ci < ncuts &&
		       (cuts[ci].byte < target ||
		        cuts[ci].byte - starts[nseg - 1].byte < SYNTAX_MIN_SEG_BYTES / 2))
			ci++;
		if (ci == ncuts || d->len - cuts[ci].byte < SYNTAX_MIN_SEG_BYTES / 2)
			break;
		starts[nseg++] = cuts[ci++];
	}
	free(cuts);
	if (nseg < 2)
		return 0;

	struct seg_job jobs[SYNTAX_MAX_SEGS];
	TSPoint last = end_point(d->src, d->len);
	for (size_t k = 0; k < nseg; k++) {
		int is_last = k + 1 == nseg;
		jobs[k] = (struct seg_job){
		    .p = parser_n((unsigned)k),
		    .src = d->src,
		    .len = (uint32_t)d->len,
		    .range = {starts[k].pt, is_last ? last : starts[k + 1].pt, starts[k].byte,
		              is_last ? (uint32_t)d->len : starts[k + 1].byte},
		};
	}
	pthread_t th[SYNTAX_MAX_SEGS];
	int started[SYNTAX_MAX_SEGS] = {0};
	for (size_t k = 1; k < nseg; k++)
		started[k] = pthread_create(&th[k], NULL, seg_job_run, &jobs[k]) == 0;
	seg_job_run(&jobs[0]);
	for (size_t k = 1; k < nseg; k++) {
		if (started[k])
			pthread_join(th[k], NULL);
		else
			seg_job_run(&jobs[k]);
	}

	struct syntax_seg *seg = xcalloc(nseg, sizeof *seg);
	int clean = 1;
	for (size_t k = 0; k < nseg; k++) {
		seg[k] = (struct syntax_seg){jobs[k].range.start_byte, jobs[k].range.end_byte,
		                             jobs[k].tree};
		if (!seg[k].tree || ts_node_has_error(ts_tree_root_node(seg[k].tree)))
			clean = 0;
	}
	if (!clean) {
		free_segs(seg, nseg);
		return 0;
	}
	d->seg = seg;
	d->nseg = nseg;
	return 1;
}

/* parse d->src as one tree into d->seg; 0, or -1 when the parser gave up */
static int parse_whole(struct syntax_doc *d)
{
	TSTree *t = ts_parser_parse_string(parser(), NULL, d->src, (uint32_t)d->len);
	if (!t) {
		ts_parser_reset(parser());
		return -1;
	}
	d->seg = xcalloc(1, sizeof *d->seg);
	d->seg[0] = (struct syntax_seg){0, (uint32_t)d->len, t};
	d->nseg = 1;
	return 0;
}

struct syntax_doc *syntax_parse(const char *src, size_t n, char *err)
{
	if (!src)
		n = 0;
	if (n && refuse(src, n, err) < 0)
		return NULL;
	struct syntax_doc *d = xcalloc(1, sizeof *d);
	d->src = xstrndup(n ? src : "", n);
	d->len = n;
	if (!parse_segments(d) && parse_whole(d) < 0) {
		syntax_free(d);
		kl_err(err, "the parser gave up on this source");
		return NULL;
	}
	return d;
}

void syntax_free(struct syntax_doc *d)
{
	if (!d)
		return;
	free_segs(d->seg, d->nseg);
	free(d->src);
	free(d);
}

/* advance *pt over bytes [p, p + n) */
static void advance_point(TSPoint *pt, const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (p[i] == '\n') {
			pt->row++;
			pt->column = 0;
		} else {
			pt->column++;
		}
	}
}

/* tree-sitter's point arithmetic: b - a and a + b as extents */
static TSPoint point_sub(TSPoint a, TSPoint b)
{
	return a.row > b.row ? (TSPoint){a.row - b.row, a.column}
	                     : (TSPoint){0, a.column >= b.column ? a.column - b.column : 0};
}

static TSPoint point_add(TSPoint a, TSPoint b)
{
	return b.row > 0 ? (TSPoint){a.row + b.row, b.column}
	                 : (TSPoint){a.row, a.column + b.column};
}

static void fill_change(struct syntax_change *chg, const TSInputEdit *e, uint32_t lo, uint32_t hi)
{
	if (!chg)
		return;
	chg->start = e->start_byte;
	chg->old_end = e->old_end_byte;
	chg->new_end = e->new_end_byte;
	chg->dirty_start = lo;
	chg->dirty_end = hi;
}

/* make d one tree over the edited source ns (owned); all of it is dirty */
static int edit_collapse(struct syntax_doc *d, char *ns, size_t new_len, const TSInputEdit *e,
                         struct syntax_change *chg, char *err)
{
	struct syntax_doc nd = {ns, new_len, 0, NULL};
	if (parse_whole(&nd) < 0) {
		free(ns);
		return kl_err(err, "the parser gave up on the edited source");
	}
	free_segs(d->seg, d->nseg);
	free(d->src);
	*d = nd;
	fill_change(chg, e, 0, (uint32_t)new_len);
	return 0;
}

int syntax_edit(struct syntax_doc *d, size_t start, size_t old_end, const char *text, size_t n,
                struct syntax_change *chg, char *err)
{
	if (start > old_end || old_end > d->len)
		return kl_err(err, "edit range %zu..%zu is outside the source (%zu bytes)", start,
		              old_end, d->len);
	size_t new_len = d->len - (old_end - start) + n;
	if (new_len > SYNTAX_MAX_BYTES)
		return kl_err(err, "source would be %zu bytes, over the limit of %u bytes", new_len,
		              SYNTAX_MAX_BYTES);
	if (n && memchr(text, 0, n))
		return kl_err(err, "inserted text holds a NUL byte: binary data, not source text");

	TSPoint p0 = {0, 0}, p_old, p_new;
	advance_point(&p0, d->src, start);
	p_old = p0;
	advance_point(&p_old, d->src + start, old_end - start);
	p_new = p0;
	advance_point(&p_new, text, n);

	char *ns = xmalloc(new_len + 1);
	memcpy(ns, d->src, start);
	if (n)
		memcpy(ns + start, text, n);
	memcpy(ns + start + n, d->src + old_end, d->len - old_end);
	ns[new_len] = 0;

	TSInputEdit e = {
	    .start_byte = (uint32_t)start,
	    .old_end_byte = (uint32_t)old_end,
	    .new_end_byte = (uint32_t)(start + n),
	    .start_point = p0,
	    .old_end_point = p_old,
	    .new_end_point = p_new,
	};
	/* the segment the edit falls in, and whether it stays inside it */
	size_t k = syntax_seg_of(d, e.start_byte);
	int whole = d->nseg == 1;
	if (!whole && k + 1 < d->nseg && old_end > d->seg[k].end)
		return edit_collapse(d, ns, new_len, &e, chg, err);
	TSTree *old = ts_tree_copy(d->seg[k].tree);
	ts_tree_edit(old, &e);
	TSTree *nt;
	int64_t delta = (int64_t)n - (int64_t)(old_end - start);
	uint32_t seg_end = (uint32_t)((int64_t)d->seg[k].end + delta);
	if (whole) {
		nt = ts_parser_parse_string(parser(), old, ns, (uint32_t)new_len);
	} else {
		/* the segment's range, moved by the edit inside it */
		uint32_t nr = 0;
		TSRange *was = ts_tree_included_ranges(d->seg[k].tree, &nr);
		TSRange range = {
		    was[0].start_point,
		    point_add(e.new_end_point, point_sub(was[0].end_point, e.old_end_point)),
		    d->seg[k].start, seg_end};
		free(was);
		TSParser *p = parser_n(0);
		nt = ts_parser_set_included_ranges(p, &range, 1)
		         ? ts_parser_parse_string(p, old, ns, (uint32_t)new_len)
		         : NULL;
	}
	if (!nt) {
		ts_parser_reset(parser_n(0));
		ts_tree_delete(old);
		free(ns);
		return kl_err(err, "the parser gave up on the edited source");
	}
	if (!whole && ts_node_has_error(ts_tree_root_node(nt))) {
		/* an error is told where a whole-source parse would tell it */
		ts_tree_delete(old);
		ts_tree_delete(nt);
		return edit_collapse(d, ns, new_len, &e, chg, err);
	}
	uint32_t lo = e.start_byte, hi = e.new_end_byte, count = 0;
	TSRange *r = ts_tree_get_changed_ranges(old, nt, &count);
	for (uint32_t i = 0; i < count; i++) {
		if (r[i].start_byte < lo)
			lo = r[i].start_byte;
		if (r[i].end_byte > hi)
			hi = r[i].end_byte;
	}
	free(r);
	ts_tree_delete(old);
	ts_tree_delete(d->seg[k].tree);
	d->seg[k].tree = nt;
	d->seg[k].end = whole ? (uint32_t)new_len : seg_end;
	for (size_t j = k + 1; j < d->nseg; j++) {
		ts_tree_edit(d->seg[j].tree, &e);
		d->seg[j].start = (uint32_t)((int64_t)d->seg[j].start + delta);
		d->seg[j].end = (uint32_t)((int64_t)d->seg[j].end + delta);
	}
	free(d->src);
	d->src = ns;
	d->len = new_len;
	if (hi > new_len)
		hi = (uint32_t)new_len;
	if (lo > hi)
		lo = hi;
	fill_change(chg, &e, lo, hi);
	return 0;
}

TSNode syntax_seg_root(const struct syntax_doc *d, size_t i)
{
	return ts_tree_root_node(d->seg[i].tree);
}

size_t syntax_seg_of(const struct syntax_doc *d, uint32_t b)
{
	size_t k = d->nseg - 1;
	while (k > 0 && d->seg[k].start > b)
		k--;
	return k;
}

TSNode syntax_node_at(const struct syntax_doc *d, uint32_t s, uint32_t e)
{
	size_t k = syntax_seg_of(d, s);
	if (k + 1 < d->nseg && e > d->seg[k].end)
		return (TSNode){0};
	return ts_node_descendant_for_byte_range(syntax_seg_root(d, k), s, e);
}

char *syntax_items_string(const struct syntax_doc *d)
{
	strbuf sb = STRBUF_INIT;
	for (size_t k = 0; k < d->nseg; k++) {
		TSNode r = syntax_seg_root(d, k);
		for (uint32_t i = 0; i < ts_node_child_count(r); i++) {
			TSNode c = ts_node_child(r, i);
			char *t = ts_node_string(c);
			TSPoint pt = ts_node_start_point(c), pe = ts_node_end_point(c);
			sb_addf(&sb, "%u-%u %u:%u-%u:%u %s\n", ts_node_start_byte(c),
			        ts_node_end_byte(c), pt.row, pt.column, pe.row, pe.column, t);
			free(t);
		}
	}
	if (!sb.buf)
		sb_grow(&sb, 0);
	return sb_detach(&sb);
}

char *syntax_text(const struct syntax_doc *d, TSNode node)
{
	uint32_t s = ts_node_start_byte(node), e = ts_node_end_byte(node);
	if (e > d->len)
		e = (uint32_t)d->len;
	if (s > e)
		s = e;
	return xstrndup(d->src + s, e - s);
}

int syntax_text_eq(const struct syntax_doc *d, TSNode node, const char *s)
{
	uint32_t a = ts_node_start_byte(node), b = ts_node_end_byte(node);
	size_t n = strlen(s);
	return b >= a && b <= d->len && b - a == n && memcmp(d->src + a, s, n) == 0;
}

/* characters (UTF-8 lead bytes) in p[0..n) */
static unsigned count_chars(const char *p, size_t n)
{
	unsigned c = 0;
	for (size_t i = 0; i < n; i++)
		if (((unsigned char)p[i] & 0xC0) != 0x80)
			c++;
	return c;
}

void syntax_position(const struct syntax_doc *d, uint32_t byte, unsigned *line, unsigned *column)
{
	if (byte > d->len)
		byte = (uint32_t)d->len;
	/* start from the smallest node holding the byte, then count the rest */
	TSNode n = syntax_node_at(d, byte, byte);
	uint32_t from = 0;
	TSPoint pt = {0, 0};
	if (!ts_node_is_null(n) && ts_node_start_byte(n) <= byte) {
		from = ts_node_start_byte(n);
		pt = ts_node_start_point(n);
	}
	advance_point(&pt, d->src + from, byte - from);
	uint32_t line_start = byte - pt.column;
	*line = pt.row + 1;
	*column = count_chars(d->src + line_start, byte - line_start) + 1;
}

/* length of the valid UTF-8 sequence at p (n bytes left), 0 if invalid */
static int utf8_len(const unsigned char *p, size_t n)
{
	unsigned c = p[0];
	int len = c < 0x80             ? 1
	          : (c & 0xE0) == 0xC0 ? 2
	          : (c & 0xF0) == 0xE0 ? 3
	          : (c & 0xF8) == 0xF0 ? 4
	                               : 0;
	if (!len || (size_t)len > n || c == 0xC0 || c == 0xC1 || c >= 0xF5)
		return 0;
	for (int k = 1; k < len; k++)
		if ((p[k] & 0xC0) != 0x80)
			return 0;
	if (len == 3 && ((c == 0xE0 && p[1] < 0xA0) || (c == 0xED && p[1] >= 0xA0)))
		return 0; /* overlong, or a UTF-16 surrogate */
	if (len == 4 && ((c == 0xF0 && p[1] < 0x90) || (c == 0xF4 && p[1] >= 0x90)))
		return 0;
	return len;
}

char *syntax_utf8(const char *s)
{
	strbuf sb = STRBUF_INIT;
	size_t n = strlen(s);
	for (size_t i = 0; i < n;) {
		int len = utf8_len((const unsigned char *)s + i, n - i);
		if (len) {
			sb_add(&sb, s + i, (size_t)len);
			i += (size_t)len;
		} else {
			sb_add(&sb, "\xEF\xBF\xBD", 3);
			i++;
		}
	}
	if (!sb.buf)
		sb_grow(&sb, 0);
	return sb_detach(&sb);
}

/* a printable one-line excerpt of at most max bytes of p[0..n) into out */
static void excerpt(char *out, size_t outsz, const char *p, size_t n, size_t max)
{
	size_t o = 0;
	for (size_t i = 0; i < n && i < max && o + 5 < outsz;) {
		unsigned char c = (unsigned char)p[i];
		if (c == '\n' || c == '\r')
			break;
		if (c < 0x80) {
			out[o++] = (c < 0x20 || c == 0x7f) ? ' ' : (char)c;
			i++;
			continue;
		}
		int len = utf8_len((const unsigned char *)p + i, n - i);
		if (!len) {
			out[o++] = '?';
			i++;
			continue;
		}
		memcpy(out + o, p + i, (size_t)len);
		o += (size_t)len;
		i += (size_t)len;
	}
	out[o] = 0;
}

static void fill_error(const struct syntax_doc *d, TSNode n, struct syntax_error *e)
{
	uint32_t b = ts_node_start_byte(n);
	TSPoint pt = ts_node_start_point(n);
	if (ts_node_is_missing(n)) {
		/* what is missing belongs right after the token before it */
		TSNode prev = ts_node_prev_sibling(n);
		if (!ts_node_is_null(prev) && ts_node_end_byte(prev) <= b) {
			b = ts_node_end_byte(prev);
			pt = ts_node_end_point(prev);
		}
	}
	if (b > d->len)
		b = (uint32_t)d->len;
	e->byte = b;
	e->line = pt.row + 1;
	uint32_t ls = b >= pt.column ? b - pt.column : 0;
	e->column = count_chars(d->src + ls, b - ls) + 1;
	if (ts_node_is_missing(n)) {
		const char *t = ts_node_type(n);
		if (ts_node_is_named(n))
			snprintf(e->msg, sizeof e->msg, "missing %s", t);
		else
			snprintf(e->msg, sizeof e->msg, "missing `%.40s`", t);
		return;
	}
	char ex[100];
	uint32_t end = ts_node_end_byte(n);
	if (end > d->len)
		end = (uint32_t)d->len;
	/* skip leading blanks so the excerpt shows the offending text */
	while (b < end && (d->src[b] == ' ' || d->src[b] == '\t' || d->src[b] == '\n'))
		b++;
	if (b >= end)
		snprintf(e->msg, sizeof e->msg, "syntax error at end of input");
	else {
		excerpt(ex, sizeof ex, d->src + b, end - b, 40);
		snprintf(e->msg, sizeof e->msg, "syntax error near `%s`", ex);
	}
}

/*
 * Walk each segment's tree in source order, visiting only subtrees that
 * hold an error, and record the outermost ERROR and MISSING nodes.
 */
static size_t collect_errors(const struct syntax_doc *d, struct syntax_error *out, size_t max)
{
	size_t found = 0;
	for (size_t k = 0; k < d->nseg; k++) {
		TSNode root = syntax_seg_root(d, k);
		if (!ts_node_has_error(root))
			continue;
		TSTreeCursor c = ts_tree_cursor_new(root);
		for (;;) {
			TSNode n = ts_tree_cursor_current_node(&c);
			int is_err = ts_node_is_error(n) || ts_node_is_missing(n);
			if (is_err) {
				if (found < max)
					fill_error(d, n, &out[found]);
				found++;
				if (max && found >= max)
					break;
			} else if (ts_node_has_error(n) && ts_tree_cursor_goto_first_child(&c)) {
				continue;
			}
			while (!ts_tree_cursor_goto_next_sibling(&c)) {
				if (!ts_tree_cursor_goto_parent(&c))
					goto next;
			}
		}
	next:
		ts_tree_cursor_delete(&c);
		if (max && found >= max)
			break;
	}
	return found;
}

int syntax_is_clean(const struct syntax_doc *d)
{
	/* the root's error flag is also set by invalid bytes inside a token,
	 * which leave no ERROR node: count the nodes instead */
	return collect_errors(d, NULL, 0) == 0;
}

int syntax_first_error(const struct syntax_doc *d, struct syntax_error *e)
{
	return collect_errors(d, e, 1) > 0;
}

size_t syntax_errors(const struct syntax_doc *d, struct syntax_error *out, size_t max)
{
	return collect_errors(d, out, max);
}

int syntax_check(const char *src, size_t n, char *err)
{
	struct syntax_doc *d = syntax_parse(src, n, err);
	if (!d)
		return -1;
	struct syntax_error e;
	int bad = syntax_first_error(d, &e);
	syntax_free(d);
	if (bad)
		return kl_err(err, "line %u, column %u: %s", e.line, e.column, e.msg);
	return 0;
}

void syntax_tokens(const struct syntax_doc *d, TSNode node, strbuf *sb)
{
	TSTreeCursor c = ts_tree_cursor_new(node);
	int first = 1;
	uint32_t depth = 0;
	for (;;) {
		TSNode n = ts_tree_cursor_current_node(&c);
		if (strcmp(ts_node_type(n), "comment") == 0) {
			/* skip */
		} else if (ts_tree_cursor_goto_first_child(&c)) {
			depth++;
			continue;
		} else {
			uint32_t a = ts_node_start_byte(n), b = ts_node_end_byte(n);
			if (b > d->len)
				b = (uint32_t)d->len;
			if (b > a) {
				if (!first)
					sb_add(sb, " ", 1);
				sb_add(sb, d->src + a, b - a);
				first = 0;
			}
		}
		if (!syntax_cursor_next(&c, &depth))
			goto done;
	}
done:
	ts_tree_cursor_delete(&c);
	if (!sb->buf)
		sb_grow(sb, 0);
}

/* ---- queries and their predicates ---- */

struct syntax_query {
	char *name;
	TSQuery *q;
	struct syntax_pred **preds; /* per pattern: its predicates */
	size_t *npreds;
	uint32_t npatterns;
};

static struct syntax_query **queries;
static size_t n_queries, a_queries;

void syntax_pred_free(struct syntax_pred *p)
{
	for (size_t i = 0; i < p->nstrs; i++)
		free(p->strs[i]);
	free(p->strs);
	if (p->op == SYNTAX_PRED_MATCH)
		regfree(&p->re);
	p->strs = NULL;
	p->nstrs = 0;
	p->op = SYNTAX_PRED_EQ;
}

int syntax_pred_op(struct syntax_pred *p, const char *name)
{
	memset(p, 0, sizeof *p);
	p->other_capture = -1;
	if (strncmp(name, "not-", 4) == 0) {
		p->negate = 1;
		name += 4;
	}
	if (strcmp(name, "eq?") == 0)
		p->op = SYNTAX_PRED_EQ;
	else if (strcmp(name, "any-of?") == 0)
		p->op = SYNTAX_PRED_ANY_OF;
	else if (strcmp(name, "match?") == 0)
		p->op = SYNTAX_PRED_MATCH_SRC;
	else
		return -1;
	return 0;
}

void syntax_pred_add_str(struct syntax_pred *p, const char *s, size_t len)
{
	p->strs = xrealloc(p->strs, (p->nstrs + 1) * sizeof *p->strs);
	p->strs[p->nstrs++] = xstrndup(s, len);
}

int syntax_pred_finish(struct syntax_pred *p, char *err)
{
	if (p->op != SYNTAX_PRED_MATCH_SRC)
		return 0;
	p->op = SYNTAX_PRED_EQ; /* nothing compiled to free yet */
	if (p->nstrs != 1)
		return kl_err(err, "#match? needs one pattern");
	if (regcomp(&p->re, p->strs[0], REG_EXTENDED | REG_NOSUB) != 0)
		return kl_err(err, "bad regular expression \"%s\"", p->strs[0]);
	p->op = SYNTAX_PRED_MATCH;
	return 0;
}

static void query_free(struct syntax_query *sq)
{
	for (uint32_t i = 0; i < sq->npatterns; i++) {
		for (size_t k = 0; k < sq->npreds[i]; k++)
			syntax_pred_free(&sq->preds[i][k]);
		free(sq->preds[i]);
	}
	free(sq->preds);
	free(sq->npreds);
	if (sq->q)
		ts_query_delete(sq->q);
	free(sq->name);
	free(sq);
}

static const char *query_error_name(TSQueryError t)
{
	switch (t) {
	case TSQueryErrorSyntax:
		return "syntax error";
	case TSQueryErrorNodeType:
		return "unknown node type";
	case TSQueryErrorField:
		return "unknown field";
	case TSQueryErrorCapture:
		return "unknown capture";
	case TSQueryErrorStructure:
		return "impossible pattern";
	case TSQueryErrorLanguage:
		return "language mismatch";
	default:
		return "error";
	}
}

/* read the predicates of pattern i; 0 or -1 with err */
static int load_preds(struct syntax_query *sq, uint32_t i, char *err)
{
	uint32_t nsteps = 0;
	const TSQueryPredicateStep *st = ts_query_predicates_for_pattern(sq->q, i, &nsteps);
	size_t alloc = 0;
	for (uint32_t k = 0; k < nsteps;) {
		uint32_t end = k;
		while (end < nsteps && st[end].type != TSQueryPredicateStepTypeDone)
			end++;
		if (end == k || st[k].type != TSQueryPredicateStepTypeString) {
			k = end + 1;
			continue;
		}
		uint32_t len;
		const char *op = ts_query_string_value_for_id(sq->q, st[k].value_id, &len);
		struct syntax_pred p;
		if (syntax_pred_op(&p, op) < 0) {
			k = end + 1; /* a directive kloop does not use (#set! etc.) */
			continue;
		}
		if (end - k < 3 || st[k + 1].type != TSQueryPredicateStepTypeCapture)
			return kl_err(err, "%s.scm: pattern %u: #%s needs a capture and a value",
			              sq->name, i, op);
		p.capture = st[k + 1].value_id;
		for (uint32_t a = k + 2; a < end; a++) {
			if (st[a].type == TSQueryPredicateStepTypeCapture) {
				p.other_capture = (int)st[a].value_id;
				continue;
			}
			const char *s = ts_query_string_value_for_id(sq->q, st[a].value_id, &len);
			syntax_pred_add_str(&p, s, len);
		}
		char why[KL_ERRLEN];
		if (syntax_pred_finish(&p, why) < 0) {
			syntax_pred_free(&p);
			return kl_err(err, "%s.scm: pattern %u: %s", sq->name, i, why);
		}
		xgrow((void **)&sq->preds[i], &alloc, sq->npreds[i] + 1,
		      sizeof(struct syntax_pred));
		sq->preds[i][sq->npreds[i]++] = p;
		k = end + 1;
	}
	return 0;
}

const struct syntax_query_src *syntax_query_src(const char *name, char *err)
{
	const struct syntax_query_src *qs = syntax_query_srcs;
	while (qs->name && strcmp(qs->name, name) != 0)
		qs++;
	if (!qs->name) {
		kl_err(err, "%s.scm: no such query built into kloop", name);
		return NULL;
	}
	return qs;
}

const struct syntax_query *syntax_query_get(const char *name, char *err)
{
	for (size_t i = 0; i < n_queries; i++)
		if (strcmp(queries[i]->name, name) == 0)
			return queries[i];
	const struct syntax_query_src *qs = syntax_query_src(name, err);
	if (!qs)
		return NULL;
	uint32_t off = 0;
	TSQueryError qe = TSQueryErrorNone;
	TSQuery *q = ts_query_new(syntax_language(), qs->text, (uint32_t)qs->len, &off, &qe);
	if (!q) {
		unsigned line = 1;
		for (uint32_t i = 0; i < off && i < qs->len; i++)
			line += qs->text[i] == '\n';
		kl_err(err, "grammars/queries/%s.scm: line %u: %s", name, line,
		       query_error_name(qe));
		return NULL;
	}
	struct syntax_query *sq = xcalloc(1, sizeof *sq);
	sq->name = xstrdup(name);
	sq->q = q;
	sq->npatterns = ts_query_pattern_count(q);
	sq->preds = xcalloc(sq->npatterns ? sq->npatterns : 1, sizeof *sq->preds);
	sq->npreds = xcalloc(sq->npatterns ? sq->npatterns : 1, sizeof *sq->npreds);
	for (uint32_t i = 0; i < sq->npatterns; i++) {
		if (load_preds(sq, i, err) < 0) {
			query_free(sq);
			return NULL;
		}
	}
	xgrow((void **)&queries, &a_queries, n_queries + 1, sizeof *queries);
	queries[n_queries++] = sq;
	return sq;
}

const TSQuery *syntax_query_ts(const struct syntax_query *q)
{
	return q->q;
}

int syntax_pred_test(const struct syntax_pred *p, const char *t, size_t len, const char *o,
                     size_t olen)
{
	switch (p->op) {
	case SYNTAX_PRED_EQ:
		if (p->other_capture >= 0)
			return o && olen == len && memcmp(o, t, len) == 0;
		return p->nstrs && strlen(p->strs[0]) == len && memcmp(p->strs[0], t, len) == 0;
	case SYNTAX_PRED_ANY_OF:
		for (size_t i = 0; i < p->nstrs; i++)
			if (strlen(p->strs[i]) == len && memcmp(p->strs[i], t, len) == 0)
				return 1;
		return 0;
	case SYNTAX_PRED_MATCH: {
		char small[256];
		char *s = len < sizeof small ? small : xmalloc(len + 1);
		memcpy(s, t, len);
		s[len] = 0;
		int ok = regexec(&p->re, s, 0, NULL, 0) == 0;
		if (s != small)
			free(s);
		return ok;
	}
	case SYNTAX_PRED_MATCH_SRC:
		return 0;
	}
	return 0;
}

/* the text of n in d, clipped to the source */
static const char *node_text(const struct syntax_doc *d, TSNode n, size_t *len)
{
	uint32_t a = ts_node_start_byte(n), b = ts_node_end_byte(n);
	if (b > d->len)
		b = (uint32_t)d->len;
	if (a > b)
		a = b;
	*len = b - a;
	return d->src + a;
}

/* does node's text satisfy p (ignoring negation)? */
static int pred_test(const struct syntax_pred *p, const struct syntax_doc *d, TSNode n,
                     const TSQueryMatch *m)
{
	size_t len, olen = 0;
	const char *t = node_text(d, n, &len), *o = NULL;
	if (p->other_capture >= 0) {
		for (uint16_t i = 0; i < m->capture_count && !o; i++) {
			if (m->captures[i].index != (uint32_t)p->other_capture)
				continue;
			TSNode on = m->captures[i].node;
			if (ts_node_end_byte(on) > d->len ||
			    ts_node_start_byte(on) > ts_node_end_byte(on))
				return 0;
			o = node_text(d, on, &olen);
		}
	}
	return syntax_pred_test(p, t, len, o, olen);
}

int syntax_query_accept(const struct syntax_query *q, const TSQueryMatch *m,
                        const struct syntax_doc *d)
{
	if (m->pattern_index >= q->npatterns)
		return 1;
	const struct syntax_pred *ps = q->preds[m->pattern_index];
	for (size_t k = 0; k < q->npreds[m->pattern_index]; k++) {
		const struct syntax_pred *p = &ps[k];
		for (uint16_t i = 0; i < m->capture_count; i++) {
			if (m->captures[i].index != p->capture)
				continue;
			if (pred_test(p, d, m->captures[i].node, m) == p->negate)
				return 0;
		}
	}
	return 1;
}

void syntax_shutdown(void)
{
	for (size_t i = 0; i < n_queries; i++)
		query_free(queries[i]);
	free(queries);
	queries = NULL;
	n_queries = a_queries = 0;
	for (unsigned i = 0; i < SYNTAX_MAX_SEGS; i++) {
		if (parsers[i])
			ts_parser_delete(parsers[i]);
		parsers[i] = NULL;
	}
}

int syntax_cursor_next(TSTreeCursor *c, uint32_t *pDepth)
{
	for (;;) {
		if (*pDepth == 0)
			return 0;
		if (ts_tree_cursor_goto_next_sibling(c))
			return 1;
		ts_tree_cursor_goto_parent(c);
		(*pDepth)--;
	}
}
