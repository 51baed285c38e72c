/*
 * cmd_archive.c - `kloop archive add|search|show|stats|export|import`: the
 * innovation archive (sessions/archive/archive.h) from the command line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "archive.h"
#include "cmd.h"
#include "flags.h"
#include "json.h"

/* print z with control characters (but newlines and tabs) shown as '?':
 * what a candidate, a compiler or an LLM wrote is shown, never obeyed */
static void put_clean(FILE *f, const char *z)
{
	char *c = xstrdup(z ? z : "");
	utf8_sanitize(c);
	for (unsigned char *p = (unsigned char *)c; *p; p++) {
		if ((*p < 0x20 && *p != '\n' && *p != '\t') || *p == 0x7f)
			*p = '?';
		else if (*p == 0xC2 && p[1] >= 0x80 && p[1] <= 0x9F) /* C1 controls */
			p[0] = '?', p[1] = '?';
	}
	fputs(c, f);
	free(c);
}

/* one line: newlines and tabs as spaces too, cut to n bytes */
static void put_line(FILE *f, const char *z, size_t n)
{
	z = z ? z : "";
	char *c = xstrndup(z, strnlen(z, n)); /* a shorter string is not read past */
	for (char *p = c; *p; p++)
		if (*p == '\n' || *p == '\t' || *p == '\r')
			*p = ' ';
	put_clean(f, c);
	free(c);
}

static void print_json(const cJSON *o)
{
	char *z = json_text(o, 0);
	printf("%s\n", z);
	free(z);
}

static struct archive *open_db(const char *zDb, int bCreate)
{
	char err[KL_ERRLEN];
	char *path = zDb ? xstrdup(zDb) : archive_default_path();
	if (!path) {
		fprintf(stderr, "kloop: the archive is off ($KLOOP_ARCHIVE=%s)\n",
		        getenv("KLOOP_ARCHIVE"));
		return NULL;
	}
	struct archive *a = archive_open(path, bCreate, 5000, err);
	if (!a)
		fprintf(stderr, "kloop: %s\n", err);
	free(path);
	return a;
}

static int do_add(struct archive *a, int n, const char *const *av)
{
	char err[KL_ERRLEN];
	int rc = 0;
	for (int i = 0; i < n; i++) {
		struct archive_counts c;
		if (archive_add_journal(a, av[i], &c, err) < 0) {
			fprintf(stderr, "kloop: %s\n", err);
			rc = 1;
			continue;
		}
		printf("%s: %d win%s, %d dead end%s, %d new\n", av[i], c.nWins,
		       c.nWins == 1 ? "" : "s", c.nDeadEnds, c.nDeadEnds == 1 ? "" : "s", c.nAdded);
	}
	return rc;
}

static void print_row(const cJSON *e)
{
	int win = !strcmp(json_str(e, "kind", ""), "win");
	printf("%5.0f  %-8s  ", json_num(e, "id", -1), win ? "win" : "dead end");
	put_line(stdout, json_str(e, "task", ""), 20);
	printf(
	    "%*s",
	    20 - (int)(strlen(json_str(e, "task", "")) < 20 ? strlen(json_str(e, "task", "")) : 20),
	    "");
	if (win)
		printf("  %6.2fx  ", json_num(e, "speedup_parent", -1));
	else {
		printf("  ");
		put_line(stdout, json_str(e, "failure", ""), 14);
		printf(" ");
	}
	printf(" [");
	put_line(stdout, json_str(e, "category", ""), 30);
	printf("] ");
	put_line(stdout, json_str(e, "idea", ""), 90);
	printf("\n");
}

static int do_search(struct archive *a, struct archive_query *q, int json)
{
	char err[KL_ERRLEN];
	cJSON *r = archive_search(a, q, err);
	if (!r) {
		fprintf(stderr, "kloop: %s\n", err);
		return 1;
	}
	if (json) {
		print_json(r);
	} else if (!cJSON_GetArraySize(r)) {
		printf("no archive entry matches\n");
	} else {
		printf("   id  kind      task                  gain     [category] idea\n");
		const cJSON *e;
		cJSON_ArrayForEach(e, r) print_row(e);
	}
	int rc = cJSON_GetArraySize(r) ? 0 : 1;
	cJSON_Delete(r);
	return rc;
}

static int do_show(struct archive *a, const char *zId, int json)
{
	char err[KL_ERRLEN], *end;
	long id = strtol(zId, &end, 10);
	if (*end || id < 1) {
		fprintf(stderr, "kloop: archive show: '%s' is not an entry id (a number from 1)\n",
		        zId);
		return 2;
	}
	cJSON *e = archive_get(a, id, err);
	if (!e) {
		fprintf(stderr, "kloop: %s\n", err);
		return 1;
	}
	if (json) {
		print_json(e);
	} else {
		strbuf sb = STRBUF_INIT;
		archive_entry_text(e, &sb);
		put_clean(stdout, sb.buf);
		sb_free(&sb);
	}
	cJSON_Delete(e);
	return 0;
}

static int do_stats(struct archive *a, int json)
{
	char err[KL_ERRLEN];
	cJSON *s = archive_stats(a, err);
	if (!s) {
		fprintf(stderr, "kloop: %s\n", err);
		return 1;
	}
	if (json) {
		print_json(s);
		cJSON_Delete(s);
		return 0;
	}
	printf("%.0f entries: %.0f win%s, %.0f dead end%s, over %.0f task%s\n",
	       json_num(s, "entries", -1), json_num(s, "wins", -1),
	       json_num(s, "wins", -1) == 1 ? "" : "s", json_num(s, "dead_ends", -1),
	       json_num(s, "dead_ends", -1) == 1 ? "" : "s", json_num(s, "tasks", -1),
	       json_num(s, "tasks", -1) == 1 ? "" : "s");
	printf("%-20s %-30s %5s %5s %6s %8s %8s\n", "task", "category", "wins", "dead", "won",
	       "median", "best");
	const cJSON *r;
	cJSON_ArrayForEach(r, cJSON_GetObjectItem(s, "rows"))
	{
		char t[21], c[31];
		snprintf(t, sizeof t, "%s", json_str(r, "task", ""));
		snprintf(c, sizeof c, "%s", json_str(r, "category", ""));
		put_line(stdout, t, 20);
		printf("%*s ", 20 - (int)strlen(t), "");
		put_line(stdout, c, 30);
		printf("%*s %5.0f %5.0f %5.0f%%", 30 - (int)strlen(c), "", json_num(r, "wins", -1),
		       json_num(r, "dead_ends", -1), 100 * json_num(r, "win_rate", -1));
		if (json_num(r, "median_gain", -1) >= 0)
			printf(" %7.2fx %7.2fx\n", json_num(r, "median_gain", -1),
			       json_num(r, "best_gain", -1));
		else
			printf(" %8s %8s\n", "-", "-");
	}
	cJSON_Delete(s);
	return 0;
}

static int exec_archive(int argc, char **argv)
{
	struct flags f;
	int frc = flags_parse(&cmd_archive_entry, FL_ARCHIVE, argc, argv, 0, FLAGS_MAX_POS, &f);
	if (frc)
		return frc;
	const char *zDb = f.zDb;
	struct archive_query q = {
	    .zTask = f.zTask, .zGpu = f.zGpu, .zKind = f.zKind, .limit = f.limit};
	int json = f.json;
	const char *const *pos = f.azPos;
	int npos = f.nPos;
	const char *sub = npos ? pos[0] : "";
	int rc = 2;
	if (!strcmp(sub, "add") && npos >= 2) {
		struct archive *a = open_db(zDb, 1);
		rc = a ? do_add(a, npos - 1, pos + 1) : 1;
		archive_close(a);
	} else if (!strcmp(sub, "search") && npos <= 2) {
		struct archive *a = open_db(zDb, 0);
		q.zText = npos == 2 ? pos[1] : NULL;
		rc = a ? do_search(a, &q, json) : 1;
		archive_close(a);
	} else if (!strcmp(sub, "show") && npos == 2) {
		struct archive *a = open_db(zDb, 0);
		rc = a ? do_show(a, pos[1], json) : 1;
		archive_close(a);
	} else if (!strcmp(sub, "stats") && npos == 1) {
		struct archive *a = open_db(zDb, 0);
		rc = a ? do_stats(a, json) : 1;
		archive_close(a);
	} else if ((!strcmp(sub, "export") || !strcmp(sub, "import")) && npos == 2) {
		char err[KL_ERRLEN];
		int exp = !strcmp(sub, "export");
		struct archive *a = open_db(zDb, !exp);
		int seen = 0, n = !a    ? -1
		                  : exp ? archive_export(a, pos[1], err)
		                        : archive_import(a, pos[1], &seen, err);
		if (a && n < 0)
			fprintf(stderr, "kloop: %s\n", err);
		else if (a && exp)
			printf("%d entr%s written to %s\n", n, n == 1 ? "y" : "ies", pos[1]);
		else if (a)
			printf("%d entr%s read from %s, %d new\n", seen, seen == 1 ? "y" : "ies",
			       pos[1], n);
		rc = n < 0;
		archive_close(a);
	} else {
		static const char *const subs[] = {"add",   "search", "show",
		                                   "stats", "export", "import"};
		rc = cmd_sub_usage(&cmd_archive_entry, sub, subs, sizeof subs / sizeof *subs);
	}
	flags_free(&f);
	return rc;
}

const struct cmd_entry cmd_archive_entry = {
    .name = "archive",
    .usage = "add SESSION... | search [QUERY] [--task T] [--gpu G] [--kind win|dead_end] [-n N] "
             "[--json] | show ID [--json] | stats [--json] | export FILE.jsonl | import "
             "FILE.jsonl  [--db FILE]",
    .help = "kept in $XDG_DATA_HOME/kloop/archive.db",
    .exec = exec_archive,
};
