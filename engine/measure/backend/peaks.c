/*
 * peaks.c - a device's dense peaks per compute type: the datasheet's table,
 * the cache of the measured ones, and the measurement asked of the backend
 * (peaks.h).
 */
#include "peaks.h"

#include <ctype.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <unistd.h>

#include "json.h"
#include "sha256.h"
#include "util.h"

/* dense (no sparsity) TFLOP/s from NVIDIA's datasheets and architecture
 * whitepapers, at the boost clock: fp32 (CUDA cores), tf32, fp16 and bf16
 * with fp32 accumulation, fp8 e4m3 with fp32 accumulation, int8 (TOP/s);
 * 0 where the device has no such tensor-core path.  The first row whose
 * name is a word of the device's name is taken: the specific rows first */
static const struct {
	const char *zMatch; /* a word (or words) of the device's name */
	const char *zName;  /* the datasheet's product */
	double t[TASK_NCOMPUTE];
} sheet[] = {
    {"GH200", "GH200", {66.9, 494.7, 989.4, 989.4, 1978.9, 1978.9}},
    {"H100 NVL", "H100 NVL", {60, 417.5, 835.5, 835.5, 1670.5, 1670.5}},
    {"H100 PCIe", "H100 PCIe", {51.2, 378, 756, 756, 1513, 1513}},
    {"H100", "H100 SXM", {66.9, 494.7, 989.4, 989.4, 1978.9, 1978.9}},
    {"H200 NVL", "H200 NVL", {60, 417.5, 835.5, 835.5, 1670.5, 1670.5}},
    {"H200", "H200 SXM", {66.9, 494.7, 989.4, 989.4, 1978.9, 1978.9}},
    {"GB200", "GB200", {80, 1250, 2500, 2500, 5000, 5000}},
    {"B200", "B200 (HGX)", {75, 1125, 2250, 2250, 4500, 4500}},
    {"A100", "A100", {19.5, 156, 312, 312, 0, 624}},
    {"A10", "A10", {31.2, 62.5, 125, 125, 0, 250}},
    {"A30", "A30", {10.3, 82, 165, 165, 0, 330}},
    {"A40", "A40", {37.4, 74.8, 149.7, 149.7, 0, 299.3}},
    {"L40S", "L40S", {91.6, 183, 362.05, 362.05, 733, 733}},
    {"L40", "L40", {90.5, 90.5, 181, 181, 362, 362}},
    {"L4", "L4", {30.3, 60, 121, 121, 242.5, 242.5}},
    /* GeForce: fp16 and bf16 with fp32 accumulation at half the fp16
     * accumulation's rate, fp8 likewise */
    {"RTX 4090", "GeForce RTX 4090", {82.6, 82.6, 165.2, 165.2, 330.3, 660.6}},
    {"RTX 3090", "GeForce RTX 3090", {35.6, 35.6, 71, 71, 0, 284}},
    {"V100-PCIE", "V100 PCIe", {14, 0, 112, 0, 0, 0}},
    {"V100", "V100 SXM2", {15.7, 0, 125, 0, 0, 0}},
    {"T4", "T4", {8.1, 0, 65, 0, 0, 130}},
};

static int word_char(char c)
{
	return isalnum((unsigned char)c);
}

/* 1 if w occurs in z as whole words, case-insensitive */
static int has_words(const char *z, const char *w)
{
	size_t n = strlen(w);
	for (const char *p = z; *p; p++)
		if (!strncasecmp(p, w, n) && (p == z || !word_char(p[-1])) && !word_char(p[n]))
			return 1;
	return 0;
}

int peaks_datasheet(const char *zDevice, struct peaks *p)
{
	memset(p->datasheet, 0, sizeof p->datasheet);
	p->zDatasheet = NULL;
	for (size_t i = 0; zDevice && i < sizeof sheet / sizeof *sheet; i++)
		if (has_words(zDevice, sheet[i].zMatch)) {
			memcpy(p->datasheet, sheet[i].t, sizeof p->datasheet);
			p->zDatasheet = sheet[i].zName;
			return 1;
		}
	return 0;
}

const char *peaks_unit_name(task_compute c)
{
	return c == TASK_FP32 ? "FMA" : "tensor-core";
}

void peaks_key(const struct backend *b, char *buf, size_t n)
{
	snprintf(buf, n, "%s|%s|cc %d.%d|driver %d", b->zDevice, b->zUuid, b->cc / 10, b->cc % 10,
	         b->driver);
}

char *peaks_cache_path(const char *zCacheDir, const char *zKey)
{
	struct sha256 h;
	char hex[65];
	sha256_init(&h);
	sha256_update(&h, zKey, strlen(zKey));
	sha256_hex(&h, hex);
	return xasprintf("%s/device/peaks-%.32s.json", zCacheDir, hex);
}

int peaks_save(const char *zPath, const char *zKey, const struct peaks *p, char *err)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "format", PEAKS_FORMAT);
	cJSON_AddStringToObject(o, "key", zKey);
	cJSON *m = cJSON_AddObjectToObject(o, "measured_tflops");
	for (int c = 0; c < TASK_NCOMPUTE; c++)
		if (p->measured[c] > 0)
			cJSON_AddNumberToObject(m, task_compute_name(c), p->measured[c]);
	/* the datasheet's beside them, for whoever reads the file (a load takes
	 * the table's: kloop's own, which a newer kloop may correct) */
	if (p->zDatasheet) {
		cJSON_AddStringToObject(o, "datasheet", p->zDatasheet);
		cJSON *ds = cJSON_AddObjectToObject(o, "datasheet_tflops");
		for (int c = 0; c < TASK_NCOMPUTE; c++)
			if (p->datasheet[c] > 0)
				cJSON_AddNumberToObject(ds, task_compute_name(c), p->datasheet[c]);
	}
	cJSON_AddNumberToObject(o, "clock_mhz", p->clockMhz);
	cJSON_AddStringToObject(o, "clock_from", p->zClockFrom ? p->zClockFrom : "");
	cJSON_AddNumberToObject(o, "seconds", p->seconds);
	char *z = cJSON_Print(o);
	cJSON_Delete(o);
	char *dir = xstrdup(zPath);
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = 0;
	int rc =
	    (slash ? mkdir_p(dir, err) : 0) < 0 ? -1 : write_file_atomic(zPath, z, strlen(z), err);
	free(dir);
	free(z);
	return rc;
}

int peaks_load(const char *zPath, const char *zKey, struct peaks *p, char *err)
{
	if (!path_exists(zPath))
		return 0;
	strbuf sb = STRBUF_INIT;
	if (read_file(zPath, &sb, 1 << 16, err) < 0) {
		sb_free(&sb);
		return -1;
	}
	cJSON *o = cJSON_Parse(sb.buf ? sb.buf : "");
	sb_free(&sb);
	const cJSON *m = cJSON_GetObjectItem(o, "measured_tflops");
	const char *why = NULL;
	double measured[TASK_NCOMPUTE] = {0};
	if (!cJSON_IsObject(o))
		why = "not a JSON object";
	else if (json_num(o, "format", 0) != PEAKS_FORMAT)
		why = "another format";
	else if (strcmp(json_str(o, "key", ""), zKey))
		why = "another device's";
	else if (!cJSON_IsObject(m))
		why = "no measured_tflops";
	const cJSON *e, *each = why ? NULL : m;
	cJSON_ArrayForEach(e, each)
	{
		task_compute c;
		if (task_compute_parse(e->string, &c) < 0 || !cJSON_IsNumber(e) ||
		    !(e->valuedouble > 0 && e->valuedouble < 1e6)) {
			why = "a measured peak that is not a compute type's positive TFLOP/s";
			break;
		}
		measured[c] = e->valuedouble;
	}
	if (why) {
		cJSON_Delete(o);
		return kl_err(err, "%s: %s", zPath, why);
	}
	memcpy(p->measured, measured, sizeof measured);
	p->clockMhz = json_num(o, "clock_mhz", 0);
	p->clockMhz = p->clockMhz > 0 && p->clockMhz < 1e5 ? p->clockMhz : 0;
	const char *from = json_str(o, "clock_from", "");
	p->zClockFrom = !strcmp(from, "nvml") ? "nvml" : *from ? "the device's peak clock" : NULL;
	p->seconds = json_num(o, "seconds", 0);
	p->cached = 1;
	cJSON_Delete(o);
	return 1;
}

void peaks_get(struct backend *b, const char *zCacheDir, int force, struct peaks *p, char *zWarn,
               size_t nWarn)
{
	memset(p, 0, sizeof *p);
	zWarn[0] = 0;
	peaks_datasheet(b->zDevice, p);
	if (!b->peaks)
		return;
	char key[512], err[KL_ERRLEN];
	peaks_key(b, key, sizeof key);
	char *path = zCacheDir ? peaks_cache_path(zCacheDir, key) : NULL;
	int got = path && !force ? peaks_load(path, key, p, err) : 0;
	/* one measurement of a device at a time: workers started together on
	 * one GPU would measure each other's load; the later ones wait, then
	 * read what the first cached */
	int lock = -1;
	if (got <= 0 && path) {
		char *dir = xstrdup(path), *lp = xasprintf("%s.lock", path);
		*strrchr(dir, '/') = 0;
		char e2[KL_ERRLEN];
		if (mkdir_p(dir, e2) == 0 &&
		    (lock = open(lp, O_CREAT | O_RDWR | O_CLOEXEC, 0600)) >= 0 &&
		    flock(lock, LOCK_EX) == 0 && got == 0 && !force)
			got = peaks_load(path, key, p, err);
		free(dir);
		free(lp);
	}
	if (got < 0)
		snprintf(zWarn, nWarn, "ignoring the device's peaks cache (%s): measuring again",
		         err);
	if (got <= 0) {
		double t0 = now_s();
		if (b->peaks(b, p->measured, &p->clockMhz, &p->zClockFrom, err) < 0) {
			size_t u = strlen(zWarn);
			snprintf(zWarn + u, nWarn - u,
			         "%scould not measure the device's peaks: %s (the datasheet's are "
			         "used)",
			         u ? "; " : "", err);
			memset(p->measured, 0, sizeof p->measured);
		} else {
			p->seconds = now_s() - t0;
			if (path && peaks_save(path, key, p, err) < 0) {
				size_t u = strlen(zWarn);
				snprintf(zWarn + u, nWarn - u, "%scould not cache the peaks: %s",
				         u ? "; " : "", err);
			}
		}
	}
	if (lock >= 0)
		close(lock);
	free(path);
}

cJSON *peaks_json(const struct peaks *p)
{
	cJSON *o = cJSON_CreateObject();
	if (p->zDatasheet)
		cJSON_AddStringToObject(o, "datasheet", p->zDatasheet);
	if (p->clockMhz > 0) {
		cJSON_AddNumberToObject(o, "clock_mhz", p->clockMhz);
		cJSON_AddStringToObject(o, "clock_from", p->zClockFrom ? p->zClockFrom : "");
	}
	cJSON_AddBoolToObject(o, "cached", p->cached);
	cJSON_AddNumberToObject(o, "seconds", p->seconds);
	cJSON *ty = cJSON_AddObjectToObject(o, "types");
	for (int c = 0; c < TASK_NCOMPUTE; c++) {
		if (!(p->datasheet[c] > 0) && !(p->measured[c] > 0))
			continue;
		cJSON *x = cJSON_AddObjectToObject(ty, task_compute_name(c));
		if (p->datasheet[c] > 0)
			cJSON_AddNumberToObject(x, "datasheet_tflops", p->datasheet[c]);
		if (p->measured[c] > 0)
			cJSON_AddNumberToObject(x, "measured_tflops", p->measured[c]);
	}
	return o;
}
