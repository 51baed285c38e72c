/*
 * test_ncu.c - reading Nsight Compute's raw CSV: a capture from an H100
 * (ncu 2025.3, torch's softmax and an sgemm, four launches) gives each
 * kernel's duration, DRAM bandwidth, occupancy and top stall (selected and
 * not_selected are not stalls); the summary line names the longest kernel;
 * text that is not ncu's table is refused.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ncu.h"
#include "util.h"

static double num(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItem(o, k);
	return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

int main(void)
{
	char err[KL_ERRLEN] = "";
	strbuf csv = STRBUF_INIT;
	CHECK(read_file("tests/fixtures/ncu/h100_softmax_sgemm_raw.csv", &csv, 1 << 20, err) == 0,
	      "the captured CSV is there (%s)", err);
	cJSON *p = ncu_parse_csv(csv.buf, err);
	CHECK(p != NULL, "the capture parses (%s)", err);
	const cJSON *ks = cJSON_GetObjectItem(p, "kernels");
	CHECK(cJSON_GetArraySize(ks) == 4, "four kernel launches (got %d)", cJSON_GetArraySize(ks));
	const cJSON *sm = cJSON_GetArrayItem(ks, 1);
	CHECK(strstr(cJSON_GetStringValue(cJSON_GetObjectItem(sm, "name")),
	             "cunn_SoftMaxForward") != NULL,
	      "launch 1 is torch's softmax");
	CHECK(fabs(num(sm, "dram_bytes_per_s") - 1499107891727.03) < 1 &&
	          fabs(num(sm, "occupancy_pct") - 49.11) < 1e-9 &&
	          fabs(num(sm, "occupancy_theoretical_pct") - 50) < 1e-9,
	      "its bandwidth 1.499 TB/s (thousands separators read), occupancy 49.11%% of 50%%");
	CHECK(!strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(sm, "top_stall")),
	              "long_scoreboard") &&
	          fabs(num(sm, "top_stall_ratio") - 2.26) < 1e-9,
	      "its top stall is long_scoreboard (2.26): not_selected (2.9) is not a stall");
	CHECK(!cJSON_GetObjectItem(cJSON_GetObjectItem(sm, "stalls"), "selected"),
	      "selected is not listed among the stalls");
	CHECK(num(p, "main") == 3, "the longest launch is the sgemm (index 3)");
	strbuf line = STRBUF_INIT;
	ncu_summary(p, &line);
	CHECK(!strncmp(line.buf,
	               "cutlass::Kernel2: 0.4234 ms, DRAM 45.2 GB/s (1% of peak), "
	               "occupancy 12% (theoretical 12%), top stall ",
	               101),
	      "the summary names the longest kernel with its facts: %s", line.buf);
	CHECK(strstr(line.buf, "4 kernel launches profiled") != NULL,
	      "and says how many there were");
	sb_free(&line);
	cJSON_Delete(p);

	/* ncu's own lines only, or some other CSV */
	CHECK(!ncu_parse_csv("==PROF== Disconnected from process 1\n", err) &&
	          strstr(err, "no ncu table"),
	      "no table: refused (%s)", err);
	CHECK(!ncu_parse_csv("\"a\",\"b\"\n\"1\",\"2\"\n", err) && strstr(err, "not ncu's raw CSV"),
	      "another CSV: refused (%s)", err);
	CHECK(!ncu_parse_csv("\"Kernel Name\",\"gpu__time_duration.sum\"\n\"\",\"ns\"\n", err) &&
	          strstr(err, "profiled no kernel"),
	      "a table without launches: no kernel ran (%s)", err);
	sb_free(&csv);
	return check_done();
}
