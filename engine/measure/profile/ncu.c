/*
 * ncu.c - reading Nsight Compute's raw CSV: quoted fields, numbers with
 * thousands separators, a units row under the header.
 */
#include "ncu.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STALL_PREFIX "smsp__average_warps_issue_stalled_"
#define STALL_SUFFIX "_per_issue_active.ratio"

const char *ncu_metrics(void)
{
	return "gpu__time_duration.sum,dram__bytes.sum.per_second,"
	       "dram__throughput.avg.pct_of_peak_sustained_elapsed,"
	       "sm__warps_active.avg.pct_of_peak_sustained_active,"
	       "sm__maximum_warps_per_active_cycle_pct,launch__grid_size,launch__block_size,"
	       "regex:" STALL_PREFIX ".*_per_issue_active\\.ratio";
}

/* split one CSV line into fields (quotes, "" inside quotes); n fields into *pa */
static int split(const char *z, char ***pa)
{
	int n = 0, cap = 16;
	char **a = xmalloc((size_t)cap * sizeof *a);
	strbuf f = STRBUF_INIT;
	const char *p = z;
	for (;;) {
		sb_reset(&f);
		sb_adds(&f, "");
		if (*p == '"') {
			p++;
			while (*p && !(*p == '"' && p[1] != '"')) {
				if (*p == '"')
					p++;
				sb_add(&f, p, 1);
				p++;
			}
			if (*p == '"')
				p++;
		}
		while (*p && *p != ',') {
			sb_add(&f, p, 1);
			p++;
		}
		if (n == cap)
			a = xrealloc(a, (size_t)(cap *= 2) * sizeof *a);
		a[n++] = xstrdup(f.buf);
		if (*p != ',')
			break;
		p++;
	}
	sb_free(&f);
	*pa = a;
	return n;
}

static void free_fields(char **a, int n)
{
	for (int i = 0; i < n; i++)
		free(a[i]);
	free(a);
}

/* "1,121,508,704,061.90" -> 1121508704061.9; NAN for "" or text */
static double num(const char *z)
{
	char buf[64];
	size_t k = 0;
	for (const char *p = z; *p && k + 1 < sizeof buf; p++)
		if (*p != ',')
			buf[k++] = *p;
	buf[k] = 0;
	char *end;
	double v = strtod(buf, &end);
	return k && !*end ? v : NAN;
}

static int col(char **h, int n, const char *zName)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(h[i], zName))
			return i;
	return -1;
}

static void add_num(cJSON *o, const char *k, double v)
{
	if (isfinite(v))
		cJSON_AddNumberToObject(o, k, v);
	else
		cJSON_AddNullToObject(o, k);
}

cJSON *ncu_parse_csv(const char *zCsv, char *err)
{
	char **h = NULL;
	int nh = 0, row = 0;
	cJSON *kernels = cJSON_CreateArray();
	const char *p = zCsv ? zCsv : "";
	int iName = -1, iDur = -1, iBw = -1, iBwPct = -1, iOcc = -1, iOccT = -1, iGrid = -1,
	    iBlock = -1;
	while (*p) {
		size_t k = strcspn(p, "\n");
		char *line = xstrndup(p, k);
		p += k + (p[k] == '\n');
		size_t ln = strlen(line);
		if (ln && line[ln - 1] == '\r')
			line[--ln] = 0;
		if (!ln || !strncmp(line, "==", 2)) {
			free(line);
			continue;
		}
		char **f;
		int nf = split(line, &f);
		free(line);
		if (!h) {
			h = f, nh = nf;
			iName = col(h, nh, "Kernel Name");
			iDur = col(h, nh, "gpu__time_duration.sum");
			iBw = col(h, nh, "dram__bytes.sum.per_second");
			iBwPct = col(h, nh, "dram__throughput.avg.pct_of_peak_sustained_elapsed");
			iOcc = col(h, nh, "sm__warps_active.avg.pct_of_peak_sustained_active");
			iOccT = col(h, nh, "sm__maximum_warps_per_active_cycle_pct");
			iGrid = col(h, nh, "Grid Size");
			iBlock = col(h, nh, "Block Size");
			if (iName < 0 || iDur < 0) {
				free_fields(h, nh);
				cJSON_Delete(kernels);
				return kl_err(err, "not ncu's raw CSV (no Kernel Name and "
				                   "gpu__time_duration.sum columns)"),
				       NULL;
			}
			continue;
		}
		if (row++ == 0 || nf < nh) { /* the units row; a short line */
			free_fields(f, nf);
			continue;
		}
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "name", f[iName]);
		add_num(o, "duration_ns", num(f[iDur]));
		add_num(o, "dram_bytes_per_s", iBw >= 0 ? num(f[iBw]) : NAN);
		add_num(o, "dram_pct_of_peak", iBwPct >= 0 ? num(f[iBwPct]) : NAN);
		add_num(o, "occupancy_pct", iOcc >= 0 ? num(f[iOcc]) : NAN);
		add_num(o, "occupancy_theoretical_pct", iOccT >= 0 ? num(f[iOccT]) : NAN);
		cJSON_AddStringToObject(o, "grid", iGrid >= 0 ? f[iGrid] : "");
		cJSON_AddStringToObject(o, "block", iBlock >= 0 ? f[iBlock] : "");
		cJSON *st = cJSON_AddObjectToObject(o, "stalls");
		const char *top = NULL;
		double topV = -1;
		size_t pl = strlen(STALL_PREFIX), sl = strlen(STALL_SUFFIX);
		for (int i = 0; i < nh; i++) {
			size_t n = strlen(h[i]);
			if (n <= pl + sl || strncmp(h[i], STALL_PREFIX, pl) ||
			    strcmp(h[i] + n - sl, STALL_SUFFIX))
				continue;
			char *reason = xstrndup(h[i] + pl, n - pl - sl);
			double v = num(f[i]);
			if (isfinite(v) && strcmp(reason, "selected") &&
			    strcmp(reason, "not_selected")) {
				cJSON_AddNumberToObject(st, reason, v);
				if (v > topV) {
					topV = v;
					top = cJSON_GetArrayItem(st, cJSON_GetArraySize(st) - 1)
					          ->string;
				}
			}
			free(reason);
		}
		if (top) {
			cJSON_AddStringToObject(o, "top_stall", top);
			cJSON_AddNumberToObject(o, "top_stall_ratio", topV);
		}
		cJSON_AddItemToArray(kernels, o);
		free_fields(f, nf);
	}
	if (h)
		free_fields(h, nh);
	if (!h || !cJSON_GetArraySize(kernels)) {
		cJSON_Delete(kernels);
		return kl_err(err,
		              h ? "ncu profiled no kernel (none of the candidate's kernels ran?)"
		                : "no ncu table in the output"),
		       NULL;
	}
	int best = 0;
	double bestD = -1;
	for (int i = 0; i < cJSON_GetArraySize(kernels); i++) {
		double d = cJSON_GetNumberValue(
		    cJSON_GetObjectItem(cJSON_GetArrayItem(kernels, i), "duration_ns"));
		if (d > bestD)
			bestD = d, best = i;
	}
	cJSON *o = cJSON_CreateObject();
	cJSON_AddItemToObject(o, "kernels", kernels);
	cJSON_AddNumberToObject(o, "main", best);
	return o;
}

static double get(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItem(o, k);
	return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

void ncu_summary(const cJSON *prof, strbuf *sb)
{
	const cJSON *ks = cJSON_GetObjectItem(prof, "kernels");
	const cJSON *k = cJSON_GetArrayItem(ks, (int)get(prof, "main"));
	if (!k)
		return;
	const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(k, "name"));
	/* the function's name without its parameter list or template arguments */
	char shortName[96];
	size_t n = name ? strcspn(name, "(<") : 0;
	snprintf(shortName, sizeof shortName, "%.*s", (int)(n < 90 ? n : 90), name ? name : "?");
	if (!strncmp(shortName, "void ", 5))
		memmove(shortName, shortName + 5, strlen(shortName + 5) + 1);
	sb_addf(sb, "%s: %.4g ms", shortName, get(k, "duration_ns") / 1e6);
	double bw = get(k, "dram_bytes_per_s"), pct = get(k, "dram_pct_of_peak");
	if (isfinite(bw))
		sb_addf(sb, ", DRAM %.3g GB/s", bw / 1e9);
	if (isfinite(pct))
		sb_addf(sb, " (%.0f%% of peak)", pct);
	double oc = get(k, "occupancy_pct"), ot = get(k, "occupancy_theoretical_pct");
	if (isfinite(oc))
		sb_addf(sb, ", occupancy %.0f%%", oc);
	if (isfinite(ot))
		sb_addf(sb, " (theoretical %.0f%%)", ot);
	const char *top = cJSON_GetStringValue(cJSON_GetObjectItem(k, "top_stall"));
	if (top)
		sb_addf(sb, ", top stall %s (%.3g cycles per instruction)", top,
		        get(k, "top_stall_ratio"));
	int nk = cJSON_GetArraySize(ks);
	if (nk > 1)
		sb_addf(sb, "; %d kernel launches profiled, the longest shown", nk);
}
