/*
 * resources.c - turns `ptxas -v` lines into a per-kernel resource report and
 * finds the first error in a compiler log.
 */
#include "resources.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* the number just before `unit` in line (e.g. "Used 32 registers"), or -1 */
static long number_before(const char *line, const char *unit)
{
	const char *p = strstr(line, unit);
	if (!p || p == line)
		return -1;
	const char *q = p;
	while (q > line && q[-1] == ' ')
		q--;
	const char *e = q;
	while (q > line && q[-1] >= '0' && q[-1] <= '9')
		q--;
	if (q == e)
		return -1;
	return strtol(q, NULL, 10);
}

static cJSON *find_kernel(cJSON *arr, const char *name)
{
	cJSON *k;
	cJSON_ArrayForEach(k, arr)
	{
		const char *n = cJSON_GetStringValue(cJSON_GetObjectItem(k, "kernel"));
		if (n && !strcmp(n, name))
			return k;
	}
	return NULL;
}

static void set_num(cJSON *o, const char *key, long v)
{
	if (v < 0)
		return;
	cJSON *old = cJSON_GetObjectItem(o, key);
	if (old)
		cJSON_SetNumberValue(old, (double)v);
	else
		cJSON_AddNumberToObject(o, key, (double)v);
}

static cJSON *new_kernel(cJSON *arr, const char *name, const char *arch)
{
	cJSON *k = find_kernel(arr, name);
	if (k)
		return k;
	k = cJSON_CreateObject();
	cJSON_AddStringToObject(k, "kernel", name);
	cJSON_AddStringToObject(k, "arch", arch ? arch : "");
	const char *keys[] = {"registers",    "shared_bytes", "const_bytes", "stack_bytes",
	                      "spill_stores", "spill_loads",  "barriers"};
	for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
		cJSON_AddNumberToObject(k, keys[i], 0);
	cJSON_AddItemToArray(arr, k);
	return k;
}

/* copy the text between the first pair of quotes after `after` */
static char *quoted(const char *line, const char *after)
{
	const char *p = strstr(line, after);
	if (!p)
		return NULL;
	p = strchr(p + strlen(after), '\'');
	if (!p)
		return NULL;
	const char *e = strchr(p + 1, '\'');
	return e ? xstrndup(p + 1, (size_t)(e - p - 1)) : NULL;
}

cJSON *resources_parse_ptxas(const char *zLog)
{
	if (!zLog || !strstr(zLog, "ptxas"))
		return NULL;
	cJSON *arr = cJSON_CreateArray();
	cJSON *cur = NULL;   /* kernel whose "Used ..." line comes next */
	cJSON *props = NULL; /* kernel whose properties line comes next */
	const char *p = zLog;
	while (*p) {
		size_t n = strcspn(p, "\n");
		char *line = xstrndup(p, n);
		p += n + (p[n] == '\n');
		char *name;
		if ((name = quoted(line, "Compiling entry function"))) {
			char *arch = quoted(line, "for");
			cur = new_kernel(arr, name, arch);
			free(arch);
			free(name);
		} else if (strstr(line, "Function properties for ")) {
			const char *q = strstr(line, "Function properties for ") + 24;
			char *nm = xstrndup(q, strcspn(q, " \r"));
			props = find_kernel(arr, nm);
			free(nm);
		} else if (strstr(line, "bytes stack frame")) {
			if (props) {
				set_num(props, "stack_bytes",
				        number_before(line, "bytes stack frame"));
				set_num(props, "spill_stores",
				        number_before(line, "bytes spill stores"));
				set_num(props, "spill_loads",
				        number_before(line, "bytes spill loads"));
			}
			props = NULL;
		} else if (strstr(line, "Used ") && strstr(line, "registers") && cur) {
			set_num(cur, "registers", number_before(line, "registers"));
			set_num(cur, "shared_bytes", number_before(line, "bytes smem"));
			set_num(cur, "const_bytes", number_before(line, "bytes cmem[0]"));
			set_num(cur, "barriers", number_before(line, "barriers"));
			cur = NULL;
		}
		free(line);
	}
	if (!cJSON_GetArraySize(arr)) {
		cJSON_Delete(arr);
		return NULL;
	}
	return arr;
}

char *resources_first_error(const char *zLog)
{
	const char *p = zLog;
	while (p && *p) {
		size_t n = strcspn(p, "\n");
		char *line = xstrndup(p, n);
		if (strstr(line, "error:") || strstr(line, ": error") ||
		    strstr(line, "undefined reference") || strstr(line, "fatal error"))
			return line;
		free(line);
		p += n + (p[n] == '\n');
	}
	return NULL;
}

cJSON *resources_parse_vec(const char *zLog, const char *zSkipDir, char **pzRest)
{
	cJSON *arr = cJSON_CreateArray();
	strbuf rest = STRBUF_INIT;
	sb_adds(&rest, "");
	for (const char *p = zLog ? zLog : ""; *p;) {
		size_t k = strcspn(p, "\n");
		char *line = xstrndup(p, k);
		p += k + (p[k] == '\n');
		const char *m = strstr(line, ": optimized: ");
		const char *mr = strstr(line, ": remark: ");
		int clang = mr && strstr(line, "[-Rpass=loop-vectorize]");
		if (!m && !clang) {
			sb_addf(&rest, "%s\n", line);
			free(line);
			continue;
		}
		const char *msg = m ? m + 13 : mr + 10;
		/* a remark on kloop's own headers (kloop.h's helpers, the ATen
		 * stand-in's code inlined into an extension) is not the
		 * candidate's: its line is another file's */
		size_t ni = zSkipDir ? strlen(zSkipDir) : 0;
		if (ni && !strncmp(line, zSkipDir, ni) && line[ni] == '/') {
			free(line);
			continue;
		}
		/* file:line:column: before the marker */
		unsigned ln = 0, col = 0;
		const char *end = m ? m : mr, *c2 = end;
		while (c2 > line && c2[-1] != ':')
			c2--;
		const char *c1 = c2 > line ? c2 - 1 : line;
		while (c1 > line && c1[-1] != ':')
			c1--;
		if (c1 > line && c2 > c1) {
			ln = (unsigned)strtoul(c1, NULL, 10);
			col = (unsigned)strtoul(c2, NULL, 10);
		}
		cJSON *o = cJSON_CreateObject();
		cJSON_AddNumberToObject(o, "line", ln);
		cJSON_AddNumberToObject(o, "column", col);
		char *mm = xstrdup(msg);
		char *br = clang ? strstr(mm, " [-Rpass=loop-vectorize]") : NULL;
		if (br)
			*br = 0;
		cJSON_AddStringToObject(o, "message", mm);
		free(mm);
		cJSON_AddItemToArray(arr, o);
		free(line);
	}
	if (pzRest) {
		/* keep the log's own ending: no newline added where it had none */
		size_t n = strlen(zLog ? zLog : "");
		if (rest.len && (!n || zLog[n - 1] != '\n'))
			rest.buf[--rest.len] = 0;
		*pzRest = sb_detach(&rest);
	} else {
		sb_free(&rest);
	}
	return arr;
}
