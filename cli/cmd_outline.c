/*
 * cmd_outline.c - `kloop outline FILE [--json]`: the kernels, device and
 * host functions, launch sites, tunables and syntax errors of a C, C++ or
 * CUDA source, as text or as one JSON object.
 */
#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "flags.h"
#include "outline.h"
#include "syntax.h"
#include "tunables.h"
#include "util.h"

/* print s with each run of whitespace as one space */
static void put_flat(const char *s)
{
	int space = 0;
	for (; *s; s++) {
		if (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r') {
			space = 1;
			continue;
		}
		if (space)
			putchar(' ');
		space = 0;
		putchar(*s);
	}
}

static void print_funcs(const struct outline *o, enum outline_kind kind, const char *title)
{
	int any = 0;
	for (size_t i = 0; i < o->n_funcs; i++) {
		const struct outline_func *f = &o->funcs[i];
		if (f->kind != kind)
			continue;
		if (!any++)
			printf("%s\n", title);
		char lines[32];
		snprintf(lines, sizeof lines, "%u-%u", f->line, f->end_line);
		printf("  %-9s ", lines);
		put_flat(f->qualname);
		if (f->template_params)
			put_flat(f->template_params);
		putchar('(');
		for (size_t k = 0; k < f->n_params; k++) {
			if (k)
				fputs(", ", stdout);
			put_flat(f->params[k].text);
		}
		putchar(')');
		if (f->launch_bounds) {
			fputs("  __launch_bounds__(", stdout);
			put_flat(f->launch_bounds);
			putchar(')');
		}
		if (f->host_device)
			fputs("  __host__ __device__", stdout);
		if (f->extern_c)
			fputs("  extern \"C\"", stdout);
		putchar('\n');
	}
}

static void print_text(const char *path, const struct outline *o, const struct tunable_list *t)
{
	size_t nk = 0, nd = 0, nh = 0;
	for (size_t i = 0; i < o->n_funcs; i++) {
		nk += o->funcs[i].kind == OUTLINE_KERNEL;
		nd += o->funcs[i].kind == OUTLINE_DEVICE;
		nh += o->funcs[i].kind == OUTLINE_HOST;
	}
	printf("%s: %zu kernel%s, %zu device function%s, %zu host function%s, %zu launch%s, "
	       "%zu tunable%s, %zu syntax error%s\n",
	       path, nk, nk == 1 ? "" : "s", nd, nd == 1 ? "" : "s", nh, nh == 1 ? "" : "s",
	       o->n_launches, o->n_launches == 1 ? "" : "es", t->n, t->n == 1 ? "" : "s",
	       o->n_errors_total, o->n_errors_total == 1 ? "" : "s");
	print_funcs(o, OUTLINE_KERNEL, "kernels");
	print_funcs(o, OUTLINE_DEVICE, "device functions");
	print_funcs(o, OUTLINE_HOST, "host functions");
	if (o->n_launches)
		printf("launches\n");
	for (size_t i = 0; i < o->n_launches; i++) {
		const struct outline_launch *l = &o->launches[i];
		printf("  %-9u ", l->line);
		put_flat(l->kernel);
		if (l->template_args)
			put_flat(l->template_args);
		fputs("<<<", stdout);
		for (size_t c = 0; c < l->n_config && c < 4; c++) {
			if (c)
				fputs(", ", stdout);
			put_flat(l->config[c]);
		}
		fputs(">>>", stdout);
		if (l->caller)
			printf("  in %s", l->caller);
		putchar('\n');
	}
	if (t->n)
		printf("tunables\n");
	for (size_t i = 0; i < t->n; i++)
		printf("  %-9u %s = %lld  (%s)\n", t->v[i].line, t->v[i].name, t->v[i].value,
		       tunable_kind_name(t->v[i].kind));
	if (o->n_errors)
		printf("errors\n");
	for (size_t i = 0; i < o->n_errors; i++) {
		char pos[32];
		snprintf(pos, sizeof pos, "%u:%u", o->errors[i].line, o->errors[i].column);
		printf("  %-9s %s\n", pos, o->errors[i].msg);
	}
	if (o->n_errors_total > o->n_errors)
		printf("  ... and %zu more\n", o->n_errors_total - o->n_errors);
}

static int exec_outline(int argc, char **argv)
{
	struct flags f;
	int frc = flags_parse(&cmd_outline_entry, FL_OUTLINE, argc, argv, 1, 1, &f);
	if (frc)
		return frc;
	const char *path = f.azPos[0];
	int json = f.json;
	flags_free(&f);

	char err[KL_ERRLEN];
	strbuf sb = STRBUF_INIT;
	if (read_file(path, &sb, SYNTAX_MAX_BYTES, err) < 0) {
		fprintf(stderr, "kloop: %s\n", err);
		sb_free(&sb);
		return 2;
	}
	if (looks_binary(sb.buf, sb.len)) {
		fprintf(stderr, "kloop: %s: binary file, not C, C++ or CUDA source\n", path);
		sb_free(&sb);
		return 2;
	}
	struct syntax_doc *d = syntax_parse(sb.buf, sb.len, err);
	sb_free(&sb);
	if (!d) {
		fprintf(stderr, "kloop: %s: %s\n", path, err);
		return 2;
	}
	struct outline o;
	struct tunable_list t = {0};
	outline_build(d, &o, err);
	if (tunables_find(d, &t, err) < 0) {
		fprintf(stderr, "kloop: %s: %s\n", path, err);
		outline_free(&o);
		syntax_free(d);
		return 1;
	}
	if (json) {
		cJSON *j = outline_json(&o);
		char *u = syntax_utf8(path);
		cJSON_AddStringToObject(j, "file", u);
		free(u);
		cJSON_AddItemToObject(j, "tunables", tunables_json(&t));
		char *s = json_text(j, 0);
		puts(s);
		free(s);
		cJSON_Delete(j);
	} else {
		print_text(path, &o, &t);
	}
	tunables_free(&t);
	outline_free(&o);
	syntax_free(d);
	return 0;
}

const struct cmd_entry cmd_outline_entry = {
    .name = "outline",
    .usage = "FILE [--json]",
    .help = "list a source's kernels, device and host functions, launches, tunables and "
            "syntax errors",
    .exec = exec_outline,
};
