/*
 * splice_form.c - a spliced source keeps its target's form: a PyTorch
 * extension's registration blocks (PYBIND11_MODULE, TORCH_LIBRARY...), as
 * many of each, no kl_run of its own and every function they bind; a
 * kernel none of them, nor PyTorch's headers (splice_priv.h).
 */
#include "splice_priv.h"

#include <string.h>

#include "util.h"

static const char *const reg_names[UNIT_REGISTRATIONS] = {
    "PYBIND11_MODULE", "TORCH_LIBRARY", "TORCH_LIBRARY_IMPL", "TORCH_LIBRARY_FRAGMENT"};

/* u's registration blocks of each kind into cnt; how many in all */
static int count_registrations(const struct unit *u, int *cnt)
{
	int all = 0;
	memset(cnt, 0, UNIT_REGISTRATIONS * sizeof *cnt);
	for (size_t i = 0; i < u->n; i++) {
		int k = unit_registration(&u->items[i]);
		if (k >= 0)
			cnt[k]++, all++;
	}
	return all;
}

/* 1 when u defines or declares a function whose last name component is nm */
static int has_function(const struct unit *u, const char *nm)
{
	for (size_t i = 0; i < u->o.n_funcs; i++)
		if (!strcmp(unit_base_name(u->o.funcs[i].qualname), nm))
			return 1;
	for (size_t i = 0; i < u->n; i++)
		if (u->items[i].kind == SPLICE_DECL && u->items[i].proto &&
		    !strcmp(unit_base_name(u->items[i].name), nm))
			return 1;
	return 0;
}

/* an include path of PyTorch's C++ API: <torch/...>, <ATen/...>, <c10/...> */
static int torch_header(const char *path)
{
	static const char *const dirs[] = {"torch/", "ATen/", "c10/"};
	for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++)
		if ((path[0] == '<' || path[0] == '"') &&
		    !strncmp(path + 1, dirs[i], strlen(dirs[i])))
			return 1;
	return 0;
}

/* the kinds of registration cnt counts, "PYBIND11_MODULE and TORCH_LIBRARY" */
static void say_registrations(const int *cnt, strbuf *sb)
{
	for (int k = 0, said = 0; k < UNIT_REGISTRATIONS; k++)
		if (cnt[k])
			sb_addf(sb, "%s%s", said++ ? " and " : "", reg_names[k]);
}

/* the bound functions of u's registration blocks are all there: 0, or
 * -1 + err naming the first that is not */
static int binds_what_it_has(const struct unit *u, char *err)
{
	for (size_t i = 0; i < u->n; i++) {
		if (unit_registration(&u->items[i]) < 0)
			continue;
		struct unit_names b = {0};
		unit_bound(u, &u->items[i], &b);
		for (size_t k = 0; k < b.n; k++)
			if (!has_function(u, b.v[k])) {
				kl_err(err,
				       "the spliced source's %s binds `%s`, which it neither "
				       "defines nor declares",
				       u->items[i].key, b.v[k]);
				unit_names_free(&b);
				return -1;
			}
		unit_names_free(&b);
	}
	return 0;
}

/* splice_priv.h */
int splice_keeps_form(const struct unit *t, const char *src, size_t n, char *err)
{
	struct unit r;
	if (unit_load(&r, src, n, "the spliced source", err) < 0)
		return -1;
	int ct[UNIT_REGISTRATIONS], cr[UNIT_REGISTRATIONS];
	int nt = count_registrations(t, ct);
	count_registrations(&r, cr);
	int rc = 0;
	strbuf has = STRBUF_INIT, got = STRBUF_INIT;
	say_registrations(ct, &has);
	say_registrations(cr, &got);
	for (int k = 0; k < UNIT_REGISTRATIONS && !rc; k++) {
		if (cr[k] == ct[k])
			continue;
		if (!nt)
			rc = kl_err(err,
			            "the spliced source would have %s, which makes a PyTorch "
			            "extension of a source that is none (an extension is taken "
			            "whole, not spliced in)",
			            got.buf);
		else if (!ct[k])
			rc = kl_err(err,
			            "the spliced source would register with %s where the source "
			            "spliced into has %s only: an extension registers its "
			            "functions one way, once",
			            got.buf, has.buf);
		else
			rc =
			    kl_err(err,
			           "the spliced source would have %d %s blocks where the source "
			           "spliced into has %d: an extension registers its functions once",
			           cr[k], reg_names[k], ct[k]);
	}
	for (size_t i = 0; i < r.n && !rc && !nt; i++)
		if (r.items[i].kind == SPLICE_INCLUDE && torch_header(r.items[i].key) &&
		    !unit_lookup(t, SPLICE_INCLUDE, r.items[i].key))
			rc = kl_err(
			    err,
			    "the spliced source would include %s (PyTorch's C++ API) in a "
			    "source that is no PyTorch extension (an extension is taken whole, "
			    "not spliced in)",
			    r.items[i].key);
	if (!rc && nt && !unit_lookup(t, SPLICE_FUNCTION, "kl_run") &&
	    unit_lookup(&r, SPLICE_FUNCTION, "kl_run"))
		rc = kl_err(err,
		            "the spliced source would define kl_run in a PyTorch extension, whose "
		            "kl_run kloop's ATen stand-in defines (it calls what %s binds)",
		            has.buf);
	if (!rc && nt)
		rc = binds_what_it_has(&r, err);
	sb_free(&has);
	sb_free(&got);
	unit_free(&r);
	return rc;
}
