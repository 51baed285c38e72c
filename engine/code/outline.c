/*
 * outline.c - one walk over a syntax tree that records function
 * definitions (with their CUDA qualifiers, template and extern "C"
 * wrappers, parameters and ranges) and kernel launch sites, keeping the
 * enclosing namespace, class and function as context.
 */
#include "outline.h"

#include <stdlib.h>
#include <string.h>

/* what a node's children see around them */
struct frame {
	TSNode node;
	const char *scope;  /* "ns::Class" prefix for names, "" at file scope */
	const char *caller; /* the enclosing function's name, or NULL */
	int extern_c;       /* inside extern "C" */
	int in_func;        /* inside a function body (no definitions recorded) */
	int in_class;       /* directly inside a class body's scope */
};

/* strings the frames point to, freed after the walk */
struct pool {
	char **s;
	size_t n, alloc;
};

static const char *pool_add(struct pool *p, char *s)
{
	xgrow((void **)&p->s, &p->alloc, p->n + 1, sizeof *p->s);
	p->s[p->n++] = s;
	return s;
}

static int is(TSNode n, const char *type)
{
	return strcmp(ts_node_type(n), type) == 0;
}

static TSNode field(TSNode n, const char *name)
{
	return ts_node_child_by_field_name(n, name, (uint32_t)strlen(name));
}

/* 1-based line of a node's end, not counting a trailing newline */
static unsigned end_line(TSNode n)
{
	TSPoint e = ts_node_end_point(n), s = ts_node_start_point(n);
	if (e.column == 0 && e.row > s.row)
		return e.row;
	return e.row + 1;
}

/* the innermost name a declarator declares, or a null node */
static TSNode declarator_name(TSNode n)
{
	for (int guard = 0; guard < 64 && !ts_node_is_null(n); guard++) {
		const char *t = ts_node_type(n);
		if (!strcmp(t, "identifier") || !strcmp(t, "field_identifier") ||
		    !strcmp(t, "qualified_identifier") || !strcmp(t, "operator_name") ||
		    !strcmp(t, "destructor_name") || !strcmp(t, "template_function") ||
		    !strcmp(t, "type_identifier"))
			return n;
		TSNode next = field(n, "declarator");
		if (ts_node_is_null(next)) {
			/* reference_declarator and parenthesized_declarator hold it unnamed */
			uint32_t k = ts_node_named_child_count(n);
			TSNode pick = {0};
			for (uint32_t i = 0; i < k; i++) {
				TSNode c = ts_node_named_child(n, i);
				if (!is(c, "comment") && !is(c, "type_qualifier") &&
				    !is(c, "ms_pointer_modifier") &&
				    !is(c, "attribute_specifier")) {
					pick = c;
					break;
				}
			}
			next = pick;
		}
		if (ts_node_is_null(next) || ts_node_eq(next, n))
			break;
		n = next;
	}
	return (TSNode){0};
}

/* the function_declarator of a function definition's declarator chain */
static TSNode function_declarator(TSNode decl)
{
	for (int guard = 0; guard < 64 && !ts_node_is_null(decl); guard++) {
		if (is(decl, "function_declarator"))
			return decl;
		TSNode next = field(decl, "declarator");
		if (ts_node_is_null(next)) {
			if (is(decl, "reference_declarator") ||
			    is(decl, "parenthesized_declarator"))
				next = ts_node_named_child(decl, 0);
		}
		decl = next;
	}
	return (TSNode){0};
}

static void add_params(const struct syntax_doc *d, struct outline_func *f, TSNode list)
{
	TSTreeCursor c = ts_tree_cursor_new(list);
	size_t alloc = 0;
	if (ts_tree_cursor_goto_first_child(&c)) {
		do {
			TSNode p = ts_tree_cursor_current_node(&c);
			const char *t = ts_node_type(p);
			if (strcmp(t, "parameter_declaration") &&
			    strcmp(t, "optional_parameter_declaration") &&
			    strcmp(t, "variadic_parameter_declaration") && strcmp(t, "..."))
				continue;
			xgrow((void **)&f->params, &alloc, f->n_params + 1, sizeof *f->params);
			struct outline_param *op = &f->params[f->n_params++];
			op->text = syntax_text(d, p);
			TSNode nm = declarator_name(field(p, "declarator"));
			op->name = ts_node_is_null(nm) ? xstrdup("") : syntax_text(d, nm);
		} while (ts_tree_cursor_goto_next_sibling(&c));
	}
	ts_tree_cursor_delete(&c);
}

static void record_function(const struct syntax_doc *d, struct outline *o, size_t *alloc, TSNode fn,
                            const struct frame *frames, uint32_t depth, const struct frame *ctx)
{
	TSNode fdecl = function_declarator(field(fn, "declarator"));
	if (ts_node_is_null(fdecl))
		return;
	TSNode name = field(fdecl, "declarator");
	if (ts_node_is_null(name))
		return;

	struct outline_func f = {0};
	f.kind = OUTLINE_HOST;
	int global = 0, device = 0, host = 0;
	TSTreeCursor c = ts_tree_cursor_new(fn);
	if (ts_tree_cursor_goto_first_child(&c)) {
		do {
			TSNode k = ts_tree_cursor_current_node(&c);
			const char *t = ts_node_type(k);
			if (!strcmp(t, "__global__"))
				global = 1;
			else if (!strcmp(t, "__device__"))
				device = 1;
			else if (!strcmp(t, "__host__"))
				host = 1;
			else if (!strcmp(t, "type_qualifier") && syntax_text_eq(d, k, "__global__"))
				global = 1;
			else if (!strcmp(t, "launch_bounds") && !f.launch_bounds) {
				uint32_t a = 0, b = 0;
				uint32_t nk = ts_node_child_count(k);
				for (uint32_t i = 0; i < nk; i++) {
					TSNode ch = ts_node_child(k, i);
					if (is(ch, "(") && !a)
						a = ts_node_end_byte(ch);
					else if (is(ch, ")"))
						b = ts_node_start_byte(ch);
				}
				if (a && b >= a)
					f.launch_bounds = xstrndup(d->src + a, b - a);
				else
					f.launch_bounds = syntax_text(d, k);
			}
		} while (ts_tree_cursor_goto_next_sibling(&c));
	}
	ts_tree_cursor_delete(&c);
	if (global)
		f.kind = OUTLINE_KERNEL;
	else if (device)
		f.kind = OUTLINE_DEVICE;
	f.host_device = device && host;

	f.name = syntax_text(d, name);
	f.qualname = ctx->scope[0] ? xasprintf("%s::%s", ctx->scope, f.name) : xstrdup(f.name);
	f.extern_c = ctx->extern_c;
	f.member = ctx->in_class;

	/* the item: a template_declaration or extern "C" holding just this */
	TSNode item = fn;
	for (uint32_t k = depth; k > 0; k--) {
		TSNode p = frames[k - 1].node;
		if (is(p, "template_declaration")) {
			if (!f.template_params) {
				TSNode tp = field(p, "parameters");
				if (!ts_node_is_null(tp))
					f.template_params = syntax_text(d, tp);
			}
			item = p;
		} else if (is(p, "linkage_specification") && ts_node_eq(field(p, "body"), item)) {
			item = p;
			f.wrapped_extern_c = 1;
			f.extern_c = 1;
		} else {
			break;
		}
	}
	f.item_start = ts_node_start_byte(item);
	f.item_end = ts_node_end_byte(item);
	f.def_start = ts_node_start_byte(fn);
	f.def_end = ts_node_end_byte(fn);
	TSNode body = field(fn, "body");
	if (!ts_node_is_null(body)) {
		f.body_start = ts_node_start_byte(body);
		f.body_end = ts_node_end_byte(body);
	} else {
		f.body_start = f.body_end = f.def_end;
	}
	f.line = ts_node_start_point(item).row + 1;
	f.end_line = end_line(item);
	syntax_position(d, ts_node_start_byte(name), &f.name_line, &f.name_column);
	TSNode params = field(fdecl, "parameters");
	if (!ts_node_is_null(params))
		add_params(d, &f, params);

	xgrow((void **)&o->funcs, alloc, o->n_funcs + 1, sizeof *o->funcs);
	o->funcs[o->n_funcs++] = f;
}

static void record_launch(const struct syntax_doc *d, struct outline *o, size_t *alloc, TSNode call,
                          TSNode cfg, const struct frame *ctx)
{
	struct outline_launch l = {0};
	TSNode fn = field(call, "function");
	if (ts_node_is_null(fn))
		return;
	/* find the template argument list at the tail of the callee's name */
	TSNode n = fn, targs = {0};
	for (int guard = 0; guard < 64 && !ts_node_is_null(n); guard++) {
		if (is(n, "qualified_identifier")) {
			n = field(n, "name");
			continue;
		}
		if (is(n, "template_function"))
			targs = field(n, "arguments");
		break;
	}
	uint32_t ks = ts_node_start_byte(fn), ke = ts_node_end_byte(fn);
	if (!ts_node_is_null(targs)) {
		ke = ts_node_start_byte(targs);
		l.template_args = syntax_text(d, targs);
		l.targs_start = ts_node_start_byte(targs);
		l.targs_end = ts_node_end_byte(targs);
	}
	while (ke > ks &&
	       (d->src[ke - 1] == ' ' || d->src[ke - 1] == '\t' || d->src[ke - 1] == '\n'))
		ke--;
	l.kernel = xstrndup(d->src + ks, ke - ks);

	TSTreeCursor c = ts_tree_cursor_new(cfg);
	if (ts_tree_cursor_goto_first_child(&c)) {
		do {
			TSNode e = ts_tree_cursor_current_node(&c);
			if (!ts_node_is_named(e) || is(e, "comment"))
				continue;
			if (l.n_config < 4) {
				l.config[l.n_config] = syntax_text(d, e);
				l.config_start[l.n_config] = ts_node_start_byte(e);
				l.config_end[l.n_config] = ts_node_end_byte(e);
			}
			l.n_config++;
		} while (ts_tree_cursor_goto_next_sibling(&c));
	}
	ts_tree_cursor_delete(&c);
	l.caller = ctx->caller ? xstrdup(ctx->caller) : NULL;
	l.start = ts_node_start_byte(call);
	l.end = ts_node_end_byte(call);
	syntax_position(d, l.start, &l.line, &l.column);
	xgrow((void **)&o->launches, alloc, o->n_launches + 1, sizeof *o->launches);
	o->launches[o->n_launches++] = l;
}

/* the kernel_call_syntax child of a call, or a null node */
static TSNode launch_config(TSNode call)
{
	uint32_t n = ts_node_child_count(call);
	for (uint32_t i = 0; i < n && i < 4; i++) {
		TSNode c = ts_node_child(call, i);
		if (is(c, "kernel_call_syntax"))
			return c;
	}
	return (TSNode){0};
}

/* what outline_build's walk keeps */
struct walk {
	struct frame *frames; /* the context of each level of the walk */
	size_t aframes;
	struct pool pool; /* scope names the frames point into */
	size_t afuncs, alaunches;
};

/* walk the tree, recording its functions and launches */
static void walk_tree(const struct syntax_doc *d, struct outline *o, TSNode root, struct walk *w)
{
	TSTreeCursor c = ts_tree_cursor_new(root);
	xgrow((void **)&w->frames, &w->aframes, 1, sizeof *w->frames);
	struct frame *frames = w->frames;
	frames[0] = (struct frame){root, "", NULL, 0, 0, 0};
	uint32_t depth = 0; /* ts_tree_cursor_current_depth() is not O(1) */
	for (;;) {
		TSNode n = ts_tree_cursor_current_node(&c);
		struct frame ctx = depth ? frames[depth - 1] : frames[0];
		ctx.node = n;
		int descend = ts_node_child_count(n) > 0;
		const char *t = ts_node_type(n);
		if (depth == 0) {
			/* the root's frame is already set */
		} else if (!strcmp(t, "function_definition")) {
			if (!ctx.in_func) {
				size_t before = o->n_funcs;
				record_function(d, o, &w->afuncs, n, frames, depth, &ctx);
				if (o->n_funcs > before)
					ctx.caller = o->funcs[before].qualname;
			}
			ctx.in_func = 1;
		} else if (!strcmp(t, "namespace_definition")) {
			TSNode nm = field(n, "name");
			if (!ts_node_is_null(nm) && !ctx.in_func) {
				char *s = syntax_text(d, nm);
				ctx.scope = pool_add(
				    &w->pool,
				    ctx.scope[0] ? xasprintf("%s::%s", ctx.scope, s) : xstrdup(s));
				free(s);
			}
			ctx.in_class = 0;
		} else if (!strcmp(t, "linkage_specification")) {
			TSNode v = field(n, "value");
			if (!ts_node_is_null(v) && syntax_text_eq(d, v, "\"C\""))
				ctx.extern_c = 1;
		} else if (!strcmp(t, "class_specifier") || !strcmp(t, "struct_specifier") ||
		           !strcmp(t, "union_specifier")) {
			TSNode nm = field(n, "name");
			if (!ts_node_is_null(nm) && !ts_node_is_null(field(n, "body")) &&
			    !ctx.in_func) {
				char *s = syntax_text(d, nm);
				ctx.scope = pool_add(
				    &w->pool,
				    ctx.scope[0] ? xasprintf("%s::%s", ctx.scope, s) : xstrdup(s));
				free(s);
				ctx.in_class = 1;
			}
		} else if (!strcmp(t, "call_expression")) {
			TSNode cfg = launch_config(n);
			if (!ts_node_is_null(cfg))
				record_launch(d, o, &w->alaunches, n, cfg, &ctx);
		} else if (!strcmp(t, "comment") || !strcmp(t, "string_literal") ||
		           !strcmp(t, "preproc_arg") || !strcmp(t, "number_literal")) {
			descend = 0;
		}
		if (descend && ts_tree_cursor_goto_first_child(&c)) {
			xgrow((void **)&w->frames, &w->aframes, depth + 2, sizeof *frames);
			frames = w->frames;
			frames[depth] = ctx;
			depth++;
			continue;
		}
		if (!syntax_cursor_next(&c, &depth))
			goto done;
	}
done:
	ts_tree_cursor_delete(&c);
}

int outline_build(const struct syntax_doc *d, struct outline *o, char *err)
{
	(void)err;
	memset(o, 0, sizeof *o);
	struct walk w = {0};
	walk_tree(d, o, syntax_root(d), &w);
	free(w.frames);
	for (size_t i = 0; i < w.pool.n; i++)
		free(w.pool.s[i]);
	free(w.pool.s);

	o->n_errors_total = syntax_errors(d, NULL, 0);
	if (o->n_errors_total) {
		size_t want =
		    o->n_errors_total < OUTLINE_MAX_ERRORS ? o->n_errors_total : OUTLINE_MAX_ERRORS;
		o->errors = xcalloc(want, sizeof *o->errors);
		o->n_errors = syntax_errors(d, o->errors, want);
	}
	return 0;
}

void outline_free(struct outline *o)
{
	for (size_t i = 0; i < o->n_funcs; i++) {
		struct outline_func *f = &o->funcs[i];
		free(f->name);
		free(f->qualname);
		free(f->template_params);
		free(f->launch_bounds);
		for (size_t k = 0; k < f->n_params; k++) {
			free(f->params[k].text);
			free(f->params[k].name);
		}
		free(f->params);
	}
	free(o->funcs);
	for (size_t i = 0; i < o->n_launches; i++) {
		struct outline_launch *l = &o->launches[i];
		free(l->kernel);
		free(l->template_args);
		for (int k = 0; k < 4; k++)
			free(l->config[k]);
		free(l->caller);
	}
	free(o->launches);
	free(o->errors);
	memset(o, 0, sizeof *o);
}

const char *outline_kind_name(enum outline_kind k)
{
	switch (k) {
	case OUTLINE_KERNEL:
		return "kernel";
	case OUTLINE_DEVICE:
		return "device";
	case OUTLINE_HOST:
		return "host";
	}
	return "?";
}

/* the part of a qualified name after its last "::" */
static const char *last_component(const char *s)
{
	const char *p = s, *q;
	while ((q = strstr(p, "::")))
		p = q + 2;
	return p;
}

const struct outline_func *outline_find(const struct outline *o, const char *name)
{
	for (size_t i = 0; i < o->n_funcs; i++)
		if (!strcmp(o->funcs[i].qualname, name))
			return &o->funcs[i];
	/* the declared name, or else the last component or a qualified suffix:
	 * either must be unique */
	const struct outline_func *hit = NULL;
	size_t nlen = strlen(name);
	int qualified = strstr(name, "::") != NULL;
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < o->n_funcs; i++) {
			const char *qn = o->funcs[i].qualname;
			size_t qlen = strlen(qn);
			int match;
			if (pass == 0)
				match = !strcmp(o->funcs[i].name, name);
			else if (qualified)
				match = qlen > nlen + 2 && !strcmp(qn + qlen - nlen, name) &&
				        !strncmp(qn + qlen - nlen - 2, "::", 2);
			else
				match = !strcmp(last_component(qn), name);
			if (!match)
				continue;
			if (hit && hit != &o->funcs[i])
				return NULL;
			hit = &o->funcs[i];
		}
		if (hit)
			return hit;
	}
	return NULL;
}

static cJSON *str_or_null(const char *s)
{
	if (!s)
		return cJSON_CreateNull();
	char *u = syntax_utf8(s);
	cJSON *j = cJSON_CreateString(u);
	free(u);
	return j;
}

static cJSON *func_json(const struct outline_func *f)
{
	cJSON *j = cJSON_CreateObject();
	cJSON_AddItemToObject(j, "name", str_or_null(f->name));
	cJSON_AddItemToObject(j, "qualname", str_or_null(f->qualname));
	cJSON_AddStringToObject(j, "kind", outline_kind_name(f->kind));
	cJSON_AddNumberToObject(j, "line", f->line);
	cJSON_AddNumberToObject(j, "end_line", f->end_line);
	cJSON *ps = cJSON_AddArrayToObject(j, "params");
	for (size_t i = 0; i < f->n_params; i++)
		cJSON_AddItemToArray(ps, str_or_null(f->params[i].text));
	cJSON_AddItemToObject(j, "template", str_or_null(f->template_params));
	cJSON_AddItemToObject(j, "launch_bounds", str_or_null(f->launch_bounds));
	cJSON_AddBoolToObject(j, "extern_c", f->extern_c);
	if (f->kind == OUTLINE_DEVICE)
		cJSON_AddBoolToObject(j, "host", f->host_device);
	return j;
}

cJSON *outline_json(const struct outline *o)
{
	cJSON *j = cJSON_CreateObject();
	cJSON *k = cJSON_AddArrayToObject(j, "kernels");
	cJSON *dv = cJSON_AddArrayToObject(j, "device_functions");
	cJSON *h = cJSON_AddArrayToObject(j, "host_functions");
	for (size_t i = 0; i < o->n_funcs; i++) {
		const struct outline_func *f = &o->funcs[i];
		cJSON_AddItemToArray(f->kind == OUTLINE_KERNEL   ? k
		                     : f->kind == OUTLINE_DEVICE ? dv
		                                                 : h,
		                     func_json(f));
	}
	cJSON *ls = cJSON_AddArrayToObject(j, "launches");
	static const char *const cfg_names[4] = {"grid", "block", "smem", "stream"};
	for (size_t i = 0; i < o->n_launches; i++) {
		const struct outline_launch *l = &o->launches[i];
		cJSON *lj = cJSON_CreateObject();
		cJSON_AddItemToObject(lj, "kernel", str_or_null(l->kernel));
		cJSON_AddNumberToObject(lj, "line", l->line);
		cJSON_AddNumberToObject(lj, "column", l->column);
		cJSON_AddItemToObject(lj, "template_args", str_or_null(l->template_args));
		cJSON *cfg = cJSON_AddObjectToObject(lj, "config");
		for (int c = 0; c < 4; c++)
			cJSON_AddItemToObject(
			    cfg, cfg_names[c],
			    str_or_null(c < (int)l->n_config ? l->config[c] : NULL));
		cJSON_AddItemToObject(lj, "caller", str_or_null(l->caller));
		cJSON_AddItemToArray(ls, lj);
	}
	cJSON *es = cJSON_AddArrayToObject(j, "errors");
	for (size_t i = 0; i < o->n_errors; i++) {
		cJSON *ej = cJSON_CreateObject();
		cJSON_AddNumberToObject(ej, "line", o->errors[i].line);
		cJSON_AddNumberToObject(ej, "column", o->errors[i].column);
		cJSON_AddItemToObject(ej, "message", str_or_null(o->errors[i].msg));
		cJSON_AddItemToArray(es, ej);
	}
	cJSON_AddNumberToObject(j, "error_count", (double)o->n_errors_total);
	return j;
}
