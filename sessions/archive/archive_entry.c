/*
 * archive_entry.c - an entry's fields (numbers, copies, text cut to a
 * size), the entry for people, and an entry brought into a session as an idea.
 */
#include "archive_priv.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emit.h"
#include "json.h"

void archive_add_num(cJSON *o, const char *k, double v)
{
	if (isfinite(v))
		cJSON_AddNumberToObject(o, k, v);
	else
		cJSON_AddNullToObject(o, k);
}

void archive_add_copy(cJSON *o, const char *k, const cJSON *from, const char *kFrom)
{
	const cJSON *v = cJSON_GetObjectItem(from, kFrom);
	if (v)
		cJSON_AddItemToObject(o, k, cJSON_Duplicate(v, 1));
}

char *archive_cut(const char *z, size_t max)
{
	size_t n = strlen(z ? z : "");
	if (n <= max)
		return xstrdup(z ? z : "");
	/* not in the middle of a UTF-8 sequence */
	while (max && ((unsigned char)z[max] & 0xC0) == 0x80)
		max--;
	return xasprintf("%.*s...", (int)max, z);
}

void archive_add_cut(strbuf *sb, const char *z, size_t max)
{
	char *c = archive_cut(z, max);
	sb_adds(sb, c);
	free(c);
}

/* "label  value" on one line (newlines in the value made spaces) */
static void field(strbuf *sb, const char *zLabel, const char *z)
{
	if (!z || !*z)
		return;
	sb_addf(sb, "%-16s ", zLabel);
	size_t at = sb->len;
	archive_add_cut(sb, z, 400);
	for (char *p = sb->buf + at; *p; p++)
		if (*p == '\n' || *p == '\r' || *p == '\t')
			*p = ' ';
	sb_adds(sb, "\n");
}

void archive_entry_text(const cJSON *e, strbuf *sb)
{
	char buf[256];
	int win = !strcmp(json_str(e, "kind", ""), "win");
	sb_addf(sb, "archive entry %.0f: %s\n", json_num(e, "id", -1),
	        win ? "a win" : "a dead end");
	field(sb, "task", json_str(e, "task", ""));
	field(sb, "signature", json_str(e, "signature", ""));
	field(sb, "device", json_str(e, "gpu", ""));
	field(sb, "idea", json_str(e, "idea", ""));
	field(sb, "category", json_str(e, "category", ""));
	field(sb, "description", json_str(e, "idea_description", ""));
	if (!win) {
		snprintf(buf, sizeof buf, "%s after %.0f candidate%s", json_str(e, "failure", ""),
		         json_num(e, "tried", -1), json_num(e, "tried", -1) == 1 ? "" : "s");
		field(sb, "failure", buf);
		field(sb, "reason", json_str(e, "reason", ""));
	}
	if (json_num(e, "time_ms", -1) >= 0) {
		snprintf(buf, sizeof buf, "%.4g ms (p10 %.4g, p90 %.4g)",
		         json_num(e, "time_ms", -1), json_num(e, "p10_ms", -1),
		         json_num(e, "p90_ms", -1));
		field(sb, "time", buf);
	}
	if (json_num(e, "parent_time_ms", -1) >= 0) {
		snprintf(buf, sizeof buf, "%.4g ms (p10 %.4g, p90 %.4g)",
		         json_num(e, "parent_time_ms", -1), json_num(e, "parent_p10_ms", -1),
		         json_num(e, "parent_p90_ms", -1));
		field(sb, "parent's time", buf);
	}
	if (json_num(e, "speedup_parent", -1) >= 0) {
		snprintf(buf, sizeof buf, "%.3gx over the parent",
		         json_num(e, "speedup_parent", -1));
		field(sb, "gain", buf);
	}
	if (json_num(e, "speedup", -1) >= 0) {
		snprintf(buf, sizeof buf, "%.3gx over %s", json_num(e, "speedup", -1),
		         *json_str(e, "baseline", "") ? json_str(e, "baseline", "")
		                                      : "the baseline");
		field(sb, "speedup", buf);
	}
	if (json_num(e, "speedup_compile", -1) >= 0) {
		snprintf(buf, sizeof buf, "%.3gx over torch.compile",
		         json_num(e, "speedup_compile", -1));
		field(sb, "", buf);
	}
	/* an entry archived before the model was said as known: "command " */
	const char *zModel = json_str(e, "model", "");
	size_t nModel = strlen(zModel);
	if (nModel && zModel[nModel - 1] == ' ') {
		snprintf(buf, sizeof buf, "%.*s (no model named)", (int)(nModel - 1), zModel);
		zModel = buf;
	}
	field(sb, "model", zModel);
	snprintf(buf, sizeof buf, "%s, event %.0f, candidate %.0f (%s)", json_str(e, "session", ""),
	         json_num(e, "event", -1), json_num(e, "candidate", -1), json_str(e, "origin", ""));
	field(sb, "from", buf);
	field(sb, "journal", json_str(e, "session_path", ""));
	const cJSON *x;
	strbuf lin = STRBUF_INIT;
	cJSON_ArrayForEach(x, cJSON_GetObjectItem(e, "lineage"))
	{
		sb_addf(&lin, "%s%.0f %s", lin.len ? " -> " : "", json_num(x, "id", -1),
		        json_str(x, "name", ""));
		if (*json_str(x, "idea", ""))
			sb_addf(&lin, " (%s)", json_str(x, "idea", ""));
	}
	field(sb, "lineage", lin.buf);
	sb_free(&lin);
	cJSON_ArrayForEach(x, cJSON_GetObjectItem(e, "resources"))
	{
		snprintf(buf, sizeof buf, "%s: %.0f registers, %.0f B shared, %.0f B spilled",
		         json_str(x, "kernel", ""), json_num(x, "registers", -1),
		         json_num(x, "shared_bytes", -1), json_num(x, "spill_stores", -1));
		field(sb, "resources", buf);
	}
	if (*json_str(e, "diff", ""))
		sb_addf(sb, "\n%s", json_str(e, "diff", ""));
}

int archive_idea_event(struct session *s, const cJSON *e, char *err)
{
	const char *title = json_str(e, "idea", "");
	strbuf d = STRBUF_INIT;
	sb_addf(&d, "%s", json_str(e, "idea_description", ""));
	if (!strcmp(json_str(e, "kind", ""), "win"))
		sb_addf(&d,
		        "%s(From the archive, entry %.0f: %.2fx over its parent on task %s, %s.)",
		        d.len ? "\n\n" : "", json_num(e, "id", -1),
		        json_num(e, "speedup_parent", -1), json_str(e, "task", ""),
		        *json_str(e, "gpu", "") ? json_str(e, "gpu", "") : "an unknown device");
	else
		sb_addf(&d, "%s(From the archive, entry %.0f: a dead end on task %s, %s.)",
		        d.len ? "\n\n" : "", json_num(e, "id", -1), json_str(e, "task", ""),
		        json_str(e, "failure", ""));
	struct ev_idea ei = {.zTitle = *title ? title : "an idea from the archive",
	                     .zDescription = d.buf ? d.buf : "",
	                     .zCategory = *json_str(e, "category", "") ? json_str(e, "category", "")
	                                                               : "other",
	                     .zOrigin = "archive",
	                     .archiveEntry = json_int(e, "id", 0)};
	int id = ev_idea_proposed(s, &ei, err);
	sb_free(&d);
	return id;
}
