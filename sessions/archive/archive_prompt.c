/*
 * archive_prompt.c - the {{archive}} prompt section: wins from other tasks
 * that match the task and the idea, then the dead ends met on this task.
 */
#include "archive_priv.h"

#include <stdlib.h>
#include <string.h>

#include "json.h"

/* one win, as the prompt shows it, in at most max bytes */
static void prompt_win(const cJSON *e, size_t max, strbuf *out)
{
	strbuf sb = STRBUF_INIT;
	double sp = cJSON_GetNumberValue(cJSON_GetObjectItem(e, "speedup_parent"));
	double sb0 = cJSON_GetNumberValue(cJSON_GetObjectItem(e, "speedup"));
	sb_addf(&sb, "- Task %s", json_str(e, "task", ""));
	if (*json_str(e, "signature", ""))
		sb_addf(&sb, " (%s)", json_str(e, "signature", ""));
	if (*json_str(e, "gpu", ""))
		sb_addf(&sb, " on %s", json_str(e, "gpu", ""));
	sb_addf(&sb, ": \"%s\" [%s], %.2fx faster than its parent", json_str(e, "idea", ""),
	        json_str(e, "category", ""), sp);
	if (sb0 > 0)
		sb_addf(&sb, " (%.2fx the baseline)", sb0);
	sb_adds(&sb, ".\n");
	if (*json_str(e, "idea_description", "")) {
		sb_adds(&sb, "  ");
		archive_add_cut(&sb, json_str(e, "idea_description", ""), 400);
		sb_adds(&sb, "\n");
	}
	const char *diff = json_str(e, "diff", "");
	if (*diff && sb.len + 64 < max) {
		sb_adds(&sb, "  The change against its parent:\n  ```diff\n");
		size_t room = max - sb.len - 16;
		/* whole lines of the diff that fit */
		size_t n = 0;
		for (const char *p = diff; *p;) {
			const char *nl = strchr(p, '\n');
			size_t len = nl ? (size_t)(nl - p) + 1 : strlen(p);
			if (n + len + 2 > room)
				break;
			sb_adds(&sb, "  ");
			sb_add(&sb, p, len);
			n += len + 2;
			p += len;
		}
		if (sb.buf[sb.len - 1] != '\n')
			sb_adds(&sb, "\n");
		sb_adds(&sb, "  ```\n");
	}
	if (sb.len <= max)
		sb_add(out, sb.buf, sb.len);
	sb_free(&sb);
}

void archive_prompt(const struct state *st, const char *zIdea, int k, size_t maxBytes, strbuf *out)
{
	char err[KL_ERRLEN];
	if (!st->zTask || k <= 0)
		return;
	struct archive *a = archive_live(0, err);
	if (!a)
		return;
	/* the signature loads the task: once per task a process */
	static char *zSigKey, *zSig;
	char *key = xasprintf("%s\n%s\n%s", st->zTaskDir ? st->zTaskDir : "",
	                      st->zBackend ? st->zBackend : "", st->zShapes ? st->zShapes : "");
	if (!zSig || strcmp(key, zSigKey)) {
		free(zSigKey);
		free(zSig);
		zSigKey = key;
		zSig = archive_state_signature(st);
	} else {
		free(key);
	}
	const char *sig = zSig;
	char *sid = archive_session_id(st, NULL);
	/* the task, its signature (operations, tensor names and dtypes: the
	 * sizes are numbers, which the query leaves out), the idea */
	char *words = xasprintf("%s %s %s", st->zTask, sig, zIdea ? zIdea : "");
	struct archive_query q = {.zText = words, .zKind = "win", .limit = k};
	if (st->tsStarted > 0)
		q.zNotSession = sid;
	cJSON *wins = archive_search(a, &q, err);
	struct archive_query qd = {.zText = zIdea && *zIdea ? zIdea : NULL,
	                           .zTask = st->zTask,
	                           .zKind = "dead_end",
	                           .limit = k};
	cJSON *dead = archive_search(a, &qd, err);
	size_t start = out->len;
	int nw = cJSON_GetArraySize(wins), nd = cJSON_GetArraySize(dead);
	int added = 0;
	if (nw) {
		static const char head[] =
		    "Wins archived from earlier sessions (other tasks or sessions; adapt the idea, "
		    "do not copy blindly):\n";
		size_t room = maxBytes * 3 / 4,
		       each = room > sizeof head ? (room - sizeof head) / (size_t)nw : 0;
		strbuf sb = STRBUF_INIT;
		const cJSON *w;
		cJSON_ArrayForEach(w, wins)
		{
			cJSON *e = archive_get(
			    a, (long)cJSON_GetNumberValue(cJSON_GetObjectItem(w, "id")), err);
			size_t before = sb.len;
			if (e)
				prompt_win(e, each, &sb);
			added += sb.len > before;
			cJSON_Delete(e);
		}
		if (added) {
			sb_adds(out, head);
			sb_add(out, sb.buf, sb.len);
		}
		sb_free(&sb);
	}
	if (nd) {
		strbuf sb = STRBUF_INIT;
		int lines = 0;
		sb_addf(&sb,
		        "%sIdeas that already failed on this task (do not propose them again "
		        "unless you fix why):\n",
		        added ? "\n" : "");
		const cJSON *d;
		cJSON_ArrayForEach(d, dead)
		{
			cJSON *e = archive_get(
			    a, (long)cJSON_GetNumberValue(cJSON_GetObjectItem(d, "id")), err);
			if (!e)
				continue;
			strbuf line = STRBUF_INIT;
			sb_addf(&line, "- \"%s\" [%s]: %s", json_str(e, "idea", ""),
			        json_str(e, "category", ""), json_str(e, "failure", ""));
			if (*json_str(e, "reason", "")) {
				sb_adds(&line, " (");
				archive_add_cut(&line, json_str(e, "reason", ""), 160);
				sb_adds(&line, ")");
			}
			sb_adds(&line, "\n");
			for (char *p = line.buf + 2; *p && p < line.buf + line.len - 1; p++)
				if (*p == '\n' || *p == '\r')
					*p = ' ';
			if (out->len - start + sb.len + line.len <= maxBytes) {
				sb_add(&sb, line.buf, line.len);
				lines++;
			}
			sb_free(&line);
			cJSON_Delete(e);
		}
		if (lines && out->len - start + sb.len <= maxBytes)
			sb_add(out, sb.buf, sb.len);
		sb_free(&sb);
	}
	if (out->len - start > maxBytes) { /* cannot happen; keep the bound anyway */
		out->len = start + maxBytes;
		out->buf[out->len] = 0;
	}
	cJSON_Delete(wins);
	cJSON_Delete(dead);
	free(words);
	free(sid);
}
