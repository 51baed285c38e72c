/*
 * archive_export.c - the archive as JSON lines: exported atomically,
 * imported in one transaction.
 */
#include "archive_priv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "json.h"

int archive_export(struct archive *a, const char *zFile, char *err)
{
	char *tmp = xasprintf("%s.tmp.%d", zFile, (int)getpid());
	FILE *f = fopen(tmp, "w");
	if (!f) {
		kl_err(err, "%s: %s", zFile, strerror(errno));
		free(tmp);
		return -1;
	}
	sqlite3_stmt *s;
	int n = 0, rc = -1;
	if (sqlite3_prepare_v2(a->db, "SELECT json, code FROM entries ORDER BY id", -1, &s, NULL) !=
	    SQLITE_OK) {
		archive_db_err(a, err, "export");
	} else {
		int r;
		while ((r = sqlite3_step(s)) == SQLITE_ROW) {
			cJSON *e = cJSON_Parse((const char *)sqlite3_column_text(s, 0));
			if (!e)
				continue;
			cJSON_AddStringToObject(e, "code", (const char *)sqlite3_column_text(s, 1));
			char *z = json_text(e, 0);
			fprintf(f, "%s\n", z);
			free(z);
			cJSON_Delete(e);
			n++;
		}
		sqlite3_finalize(s);
		rc = r == SQLITE_DONE ? 0 : archive_db_err(a, err, "export");
	}
	if (fflush(f) != 0 || fsync(fileno(f)) != 0)
		rc = rc < 0 ? rc : kl_err(err, "%s: %s", zFile, strerror(errno));
	fclose(f);
	if (rc == 0 && rename(tmp, zFile) != 0)
		rc = kl_err(err, "%s: %s", zFile, strerror(errno));
	if (rc < 0)
		unlink(tmp);
	free(tmp);
	return rc < 0 ? -1 : n;
}

int archive_import(struct archive *a, const char *zFile, int *pSeen, char *err)
{
	FILE *f = fopen(zFile, "r");
	if (!f)
		return kl_err(err, "%s: %s", zFile, strerror(errno));
	/* one transaction, read as it goes: a bad line rolls everything back */
	int rc = archive_exec(a, "BEGIN IMMEDIATE", err);
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int lineNo = 0, seen = 0, added = 0;
	while (rc == 0 && (n = getline(&line, &cap, f)) > 0) {
		lineNo++;
		size_t len = (size_t)n;
		while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			len--;
		if (!len)
			continue;
		cJSON *e = cJSON_ParseWithLength(line, len);
		const char *kind = json_str(e, "kind", "");
		const char *miss = !cJSON_IsObject(e)                                ? NULL
		                   : !*json_str(e, "ukey", "")                       ? "ukey"
		                   : strcmp(kind, "win") && strcmp(kind, "dead_end") ? "kind"
		                   : !*json_str(e, "task", "")                       ? "task"
		                   : !*json_str(e, "session", "")                    ? "session"
		                                                                     : "";
		if (!miss)
			rc = kl_err(err,
			            "%s:%d: not a JSON object (an archive export has one entry a "
			            "line)",
			            zFile, lineNo);
		else if (*miss)
			rc = kl_err(err, "%s:%d: not an archive entry: \"%s\" is missing or wrong",
			            zFile, lineNo, miss);
		else
			rc = archive_put_entry(a, e, 0, 0, &added, err);
		seen++;
		cJSON_Delete(e);
	}
	free(line);
	if (rc == 0 && ferror(f))
		rc = kl_err(err, "%s: %s", zFile, strerror(errno));
	fclose(f);
	if (rc == 0)
		rc = archive_exec(a, "COMMIT", err);
	else
		sqlite3_exec(a->db, "ROLLBACK", NULL, NULL, NULL);
	if (pSeen)
		*pSeen = seen;
	return rc < 0 ? -1 : added;
}
