/*
 * test_peaks.c - a roofline for every type (issue 36): a task's compute
 * type (declared, or inferred from the dtypes of a matrix product's or a
 * KernelBench problem's inputs), the floor of that type's peak beside the
 * memory's (the binding one the larger), the datasheet's peaks by device
 * name, and the measured peaks' cache (written, read, a corrupt one ignored
 * with a warning and measured again).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "event.h"
#include "json.h"
#include "peaks.h"
#include "report.h"
#include "roofline.h"
#include "state.h"
#include "util.h"

static struct task_tensor tensor(char *zName, kl_dtype d, int ndim, int64_t a, int64_t b)
{
	struct task_tensor t = {.zName = zName, .dtype = d, .ndim = ndim, .shape = {a, b}};
	return t;
}

/* C[M,N] = A[M,K] B[K,N] in dtype d */
static struct task gemm(kl_dtype d, int64_t M, int64_t N, int64_t K)
{
	struct task t = {.nIn = 2, .nOut = 1};
	t.aIn[0] = tensor("A", d, 2, M, K);
	t.aIn[1] = tensor("B", d, 2, K, N);
	t.aOut[0] = tensor("C", d == KL_I8 ? KL_I32 : d, 2, M, N);
	t.compute = task_compute_infer(&t, 0, &t.zComputeFrom);
	return t;
}

/* a fake device: counts its measurements, fails when told to */
static int nMeasured, failMeasure;
static int fake_peaks(struct backend *b, double *a, double *pMhz, const char **pzFrom, char *err)
{
	(void)b;
	nMeasured++;
	if (failMeasure)
		return kl_err(err, "cuBLASLt could not be loaded");
	for (int c = 0; c < TASK_NCOMPUTE; c++)
		a[c] = 0;
	a[TASK_TF32] = 402.5;
	a[TASK_FP16] = 781.25;
	a[TASK_BF16] = 790.5;
	a[TASK_FP8] = 1450;
	a[TASK_INT8] = 1480;
	*pMhz = 1980;
	*pzFrom = "nvml";
	return 0;
}

int main(void)
{
	/* the compute type */
	struct task h = gemm(KL_F16, 4096, 4096, 4096);
	CHECK(h.compute == TASK_FP16 && !strcmp(h.zComputeFrom, "the inputs' dtypes"),
	      "an f16 matrix product (hgemm) computes in fp16 (got %s, from %s)",
	      task_compute_name(h.compute), h.zComputeFrom);
	struct task b16 = gemm(KL_BF16, 256, 256, 256);
	CHECK(b16.compute == TASK_BF16, "a bf16 one in bf16 (got %s)",
	      task_compute_name(b16.compute));
	struct task i8 = gemm(KL_I8, 256, 256, 256);
	CHECK(i8.compute == TASK_INT8, "an int8 one in int8 (got %s)",
	      task_compute_name(i8.compute));
	struct task i8s = gemm(KL_I8, 256, 256, 256);
	i8s.aIn[i8s.nIn++] = tensor("scale", KL_F32, 1, 256, 0);
	CHECK(task_compute_infer(&i8s, 0, NULL) == TASK_INT8,
	      "... with an f32 scale per column too (a 1-D input is no operand)");
	struct task f32 = gemm(KL_F32, 256, 256, 256);
	CHECK(f32.compute == TASK_FP32 && !strcmp(f32.zComputeFrom, "the default"),
	      "an fp32 one stays fp32, never tf32 (got %s)", task_compute_name(f32.compute));
	struct task sm = {.nIn = 1, .nOut = 1};
	sm.aIn[0] = tensor("x", KL_F16, 2, 4096, 8192);
	sm.aOut[0] = tensor("y", KL_F16, 2, 4096, 8192);
	CHECK(task_compute_infer(&sm, 0, NULL) == TASK_FP32,
	      "an f16 softmax is no matrix product: fp32 (its arithmetic is not a product's)");
	/* a KernelBench conv: x[N,C,H,W] input, weight parameter f16 */
	struct task kb = {.nIn = 2, .nOut = 1};
	kb.aIn[0] = tensor("x", KL_F16, 4, 16, 64);
	kb.aIn[1] = tensor("conv.weight", KL_F16, 4, 64, 64);
	kb.aOut[0] = tensor("out0", KL_F16, 4, 16, 64);
	const char *from = NULL;
	CHECK(task_compute_infer(&kb, 1, &from) == TASK_FP16 &&
	          task_compute_infer(&kb, 0, NULL) == TASK_FP32,
	      "a KernelBench problem whose inputs and parameters are f16 computes in fp16 "
	      "(a task.json of that shape would not be inferred)");
	kb.aIn[0].dtype = kb.aIn[1].dtype = kb.aOut[0].dtype = KL_BF16;
	CHECK(task_compute_infer(&kb, 1, NULL) == TASK_BF16, "... bf16 ones in bf16");
	kb.aIn[0].dtype = kb.aIn[1].dtype = kb.aOut[0].dtype = KL_F32;
	CHECK(task_compute_infer(&kb, 1, NULL) == TASK_FP32, "... fp32 ones in fp32, not tf32");
	task_compute c;
	CHECK(task_compute_parse("fp8", &c) == 0 && c == TASK_FP8 &&
	          task_compute_parse("e4m3", &c) < 0 && task_compute_parse(NULL, &c) < 0,
	      "compute names parse: fp8 yes, e4m3 and nothing no");

	/* the datasheet by device name */
	static const struct {
		const char *zDev, *zRow;
		double fp16;
	} rows[] = {
	    {"NVIDIA H100 80GB HBM3 (sm_90, 132 SMs)", "H100 SXM", 989.4},
	    {"NVIDIA H100 PCIe", "H100 PCIe", 756},
	    {"NVIDIA H100 NVL", "H100 NVL", 835.5},
	    {"NVIDIA H200 (sm_90, 132 SMs, L2 60 MB)", "H200 SXM", 989.4},
	    {"NVIDIA GH200 480GB", "GH200", 989.4},
	    {"NVIDIA B200", "B200 (HGX)", 2250},
	    {"NVIDIA A100-SXM4-80GB", "A100", 312},
	    {"NVIDIA A10", "A10", 125},
	    {"NVIDIA L40S", "L40S", 362.05},
	    {"NVIDIA L40", "L40", 181},
	    {"NVIDIA L4", "L4", 121},
	    {"NVIDIA GeForce RTX 4090", "GeForce RTX 4090", 165.2},
	    {"Tesla V100-PCIE-16GB", "V100 PCIe", 112},
	    {"Tesla T4", "T4", 65},
	};
	struct peaks pk;
	for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
		int found = peaks_datasheet(rows[i].zDev, &pk);
		CHECK(found && !strcmp(pk.zDatasheet, rows[i].zRow) &&
		          pk.datasheet[TASK_FP16] == rows[i].fp16,
		      "'%s' is the datasheet's %s, fp16 %g TFLOP/s (got %s, %g)", rows[i].zDev,
		      rows[i].zRow, rows[i].fp16, found ? pk.zDatasheet : "none",
		      pk.datasheet[TASK_FP16]);
	}
	peaks_datasheet("NVIDIA A100-SXM4-80GB", &pk);
	CHECK(pk.datasheet[TASK_FP8] == 0 && pk.datasheet[TASK_INT8] == 624,
	      "an A100 has no fp8, int8 624 TOP/s");
	CHECK(!peaks_datasheet("NVIDIA RTX PRO 9000 Imaginary", &pk) && !pk.zDatasheet &&
	          pk.datasheet[TASK_FP16] == 0,
	      "a device the table lacks has no datasheet peaks");

	/* the floor of the type: the CUDA-L2 fp16 GEMM of issue 36, 4096^3 in
	 * 0.2017 ms on an H200 (4.8 TB/s, fp16 989.4 TFLOP/s dense) */
	struct roofline_dev d = {.bwGbs = 4800, .bwMeasuredGbs = 4100, .tflops = 66.9};
	cJSON *r = roofline_json(&h, &d, 0.2017);
	const char *bound = cJSON_GetStringValue(cJSON_GetObjectItem(r, "bound"));
	double fr = cJSON_GetNumberValue(cJSON_GetObjectItem(r, "fraction"));
	CHECK(bound && !strcmp(bound, "memory") && fabs(fr - 0.104) < 0.001,
	      "without fp16 peaks known: the memory roofline at %.3f, as issue 36 saw (%s)", fr,
	      bound ? bound : "none");
	cJSON_Delete(r);
	peaks_datasheet("NVIDIA H200", &d.pk);
	d.pk.measured[TASK_FP16] = 781.25;
	d.pk.clockMhz = 1980;
	r = roofline_json(&h, &d, 0.2017);
	bound = cJSON_GetStringValue(cJSON_GetObjectItem(r, "bound"));
	fr = cJSON_GetNumberValue(cJSON_GetObjectItem(r, "fraction"));
	double cmp = cJSON_GetNumberValue(cJSON_GetObjectItem(r, "compute_floor_ms"));
	double mem = cJSON_GetNumberValue(cJSON_GetObjectItem(r, "memory_floor_ms"));
	CHECK(bound && !strcmp(bound, "compute") && fabs(fr - 0.6887) < 0.001 && cmp > mem &&
	          !cJSON_GetObjectItem(r, "suspect"),
	      "with them: compute-bound at %.4f of the fp16 floor (%.4g ms over the memory's %.4g "
	      "ms), no suspect",
	      fr, cmp, mem);
	CHECK(!strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(r, "compute")), "fp16") &&
	          json_num(r, "peak_tflops", 0) == 989.4 &&
	          json_num(r, "measured_peak_tflops", 0) == 781.25 &&
	          json_num(r, "clock_mhz", 0) == 1980,
	      "the result names the type, both peaks and the clock");
	char line[400];
	roofline_line(r, line, sizeof line);
	CHECK(strstr(line, "69% of the fp16 tensor-core roofline (137.4 GFLOP at 989.4 TFLOP/s, "
	                   "the datasheet's; 781.2 measured at 1980 MHz: 0.1389 ms)"),
	      "in words: %s", line);
	/* at the measured clock (issue 39): an H200 settles near 1440 MHz at its
	 * power cap in a sustained bf16 GEMM, and the datasheet's peak is at the
	 * device's peak clock */
	d.clockPeakMhz = 1980;
	CHECK(roofline_at_clock(r, &d, 1900) == 1 && !cJSON_GetObjectItem(r, "timing_clock_mhz"),
	      "a timing within 5%% of the peak's clock says nothing of it");
	CHECK(roofline_at_clock(r, &d, 1440) == 0 && json_num(r, "timing_clock_mhz", 0) == 1440 &&
	          fabs(json_num(r, "fraction_at_clock", 0) - 0.6887 * 1980 / 1440) < 0.001,
	      "one at 1440 MHz: its fraction at that clock is %.4f",
	      json_num(r, "fraction_at_clock", 0));
	roofline_line(r, line, sizeof line);
	CHECK(strstr(line, "0.1389 ms); the SM clock fell to 1440 MHz during the timing (the peak "
	                   "is at 1980 MHz): 95% at that clock"),
	      "in words: %s", line);
	cJSON_Delete(r);
	/* a memory-bound roofline is not the SM clock's */
	struct task small = gemm(KL_F16, 64, 64, 64);
	r = roofline_json(&small, &d, 0.01);
	CHECK(roofline_at_clock(r, &d, 1000) == 1 && !cJSON_GetObjectItem(r, "fraction_at_clock"),
	      "a memory-bound time is not judged at the SM clock");
	cJSON_Delete(r);
	/* the Results pane (and kloop eval's words: result_describe) say it */
	struct state st;
	state_init(&st);
	char serr[KL_ERRLEN] = "";
	cJSON *r2 = roofline_json(&h, &d, 0.2017);
	char *zr = cJSON_PrintUnformatted(r2);
	cJSON_Delete(r2);
	const char *evs[] = {"{\"type\":\"session_started\",\"task\":\"hgemm\",\"ts\":1}",
	                     "{\"type\":\"candidate_added\",\"id\":1,\"source\":\"x\",\"ts\":1}"};
	for (int k = 0; k < 2; k++) {
		cJSON *e = cJSON_Parse(evs[k]);
		state_apply(&st, e, serr);
		cJSON_Delete(e);
	}
	cJSON *fin = cJSON_Parse("{\"type\":\"eval_finished\",\"candidate\":1,\"ts\":2,"
	                         "\"result\":{\"status\":\"correct\",\"speedup\":1.04,"
	                         "\"timing\":{\"median_ms\":0.2017}}}");
	cJSON_AddItemToObject(cJSON_GetObjectItem(fin, "result"), "roofline", cJSON_Parse(zr));
	free(zr);
	CHECK(state_apply(&st, fin, serr) == 0, "the result applied (%s)", serr);
	cJSON_Delete(fin);
	strbuf rs = STRBUF_INIT;
	report_results(&st, state_cand(&st, 1), &rs);
	CHECK(strstr(rs.buf, "roofline  69% of the fp16 tensor-core roofline (137.4 GFLOP at 989.4 "
	                     "TFLOP/s, the datasheet's; 781.2 measured at 1980 MHz"),
	      "the Results pane names the floor, its type, peaks and clock: %s", rs.buf);
	sb_free(&rs);
	state_free(&st);
	r = roofline_json(&h, &d, 0.1);
	const char *why = cJSON_GetStringValue(cJSON_GetObjectItem(r, "suspect"));
	CHECK(why && strstr(why, "at the fp16 peak, 989.4 TFLOP/s") && strstr(why, "forged"),
	      "0.1 ms is below the fp16 floor: a suspect (%s)", why ? why : "none");
	cJSON_Delete(r);
	/* the fp32 task's suspect stays */
	struct task f = gemm(KL_F32, 4096, 4096, 4096);
	r = roofline_json(&f, &d, 0.2017);
	why = cJSON_GetStringValue(cJSON_GetObjectItem(r, "suspect"));
	CHECK(why && strstr(why, "fp32 peak, 66.9 TFLOP/s (tensor cores"),
	      "the same product in fp32 at 0.2017 ms beats the fp32 peak: suspect (%s)",
	      why ? why : "none");
	cJSON_Delete(r);
	/* a measured peak above the datasheet's floors it; int8 in TOP/s */
	d.pk.measured[TASK_INT8] = 2100;
	/* ... and a skinny fp16 product (M = 16): the memory floor binds, the
	 * fp16 one is said beside it */
	struct {
		struct task t;
		double ms;
		const char *want, *what;
	} lines[] = {
	    {gemm(KL_I8, 4096, 4096, 4096), 1.0,
	     "7% of the int8 tensor-core roofline (137.4 GOP at 2100 TOP/s measured at 1980 MHz; "
	     "the datasheet's 1979: 0.06545 ms)",
	     "an int8 product, its measured peak over the datasheet's"},
	    {gemm(KL_F16, 16, 4096, 4096), 0.05,
	     "14% of the memory roofline (33.8 MB at 4800 GB/s: 0.007045 ms; the fp16 tensor-core "
	     "floor 0.0005426 ms)",
	     "a skinny fp16 product is memory-bound, its fp16 floor beside"},
	};
	for (size_t i = 0; i < sizeof lines / sizeof *lines; i++) {
		r = roofline_json(&lines[i].t, &d, lines[i].ms);
		roofline_line(r, line, sizeof line);
		CHECK(strstr(line, lines[i].want), "%s: %s", lines[i].what, line);
		cJSON_Delete(r);
	}
	/* no fp8 on an A100: its fp8 task has the memory floor only */
	struct task f8 = gemm(KL_U8, 4096, 4096, 4096);
	f8.compute = TASK_FP8;
	f8.zComputeFrom = "task.json";
	struct roofline_dev a100 = {.bwGbs = 2039};
	peaks_datasheet("NVIDIA A100-SXM4-80GB", &a100.pk);
	r = roofline_json(&f8, &a100, 1.0);
	CHECK(r && !cJSON_GetObjectItem(r, "compute_floor_ms") &&
	          !strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(r, "bound")), "memory"),
	      "an fp8 task where the device has no fp8: the memory floor alone");
	cJSON_Delete(r);

	/* the cache of the measured peaks */
	char dir[] = "/tmp/kloop-test-peaks.XXXXXX";
	CHECK(mkdtemp(dir) != NULL, "a temporary cache");
	struct backend fake = {.zName = "cuda", .cc = 90, .driver = 13000, .peaks = fake_peaks};
	snprintf(fake.zDevice, sizeof fake.zDevice, "NVIDIA H200 (sm_90, 132 SMs)");
	snprintf(fake.zUuid, sizeof fake.zUuid, "GPU-1234");
	char key[512], warn[KL_ERRLEN], err[KL_ERRLEN];
	peaks_key(&fake, key, sizeof key);
	char *path = peaks_cache_path(dir, key);
	CHECK(strstr(key, "NVIDIA H200") && strstr(key, "GPU-1234") && strstr(key, "cc 9.0") &&
	          strstr(key, "driver 13000") && strstr(path, "/device/peaks-"),
	      "the key is the device's name, UUID, compute capability and driver (%s): %s", key,
	      path);
	CHECK(peaks_load(path, key, &pk, err) == 0, "no cache yet: nothing read");
	peaks_get(&fake, dir, 0, &pk, warn, sizeof warn);
	CHECK(nMeasured == 1 && !pk.cached && pk.measured[TASK_FP16] == 781.25 &&
	          pk.clockMhz == 1980 && !warn[0] && path_exists(path) &&
	          pk.datasheet[TASK_FP16] == 989.4,
	      "a cold start measures once and writes the cache (measured %d, warning '%s')",
	      nMeasured, warn);
	strbuf file = STRBUF_INIT;
	read_file(path, &file, 1 << 16, err);
	cJSON *fj = cJSON_Parse(file.buf ? file.buf : "");
	CHECK(!strcmp(json_str(fj, "datasheet", ""), "H200 SXM") &&
	          json_num(cJSON_GetObjectItem(fj, "datasheet_tflops"), "fp16", 0) == 989.4 &&
	          json_num(cJSON_GetObjectItem(fj, "measured_tflops"), "fp16", 0) == 781.25 &&
	          json_num(fj, "clock_mhz", 0) == 1980,
	      "the file holds the measured peaks, the clock and the datasheet's beside them: %s",
	      file.buf ? file.buf : err);
	cJSON_Delete(fj);
	sb_free(&file);
	struct peaks back;
	memset(&back, 0, sizeof back);
	int got = peaks_load(path, key, &back, err);
	CHECK(got == 1 && back.cached && !memcmp(back.measured, pk.measured, sizeof pk.measured) &&
	          back.clockMhz == 1980 && !strcmp(back.zClockFrom, "nvml"),
	      "the cache reads back what was measured (%d%s%s)", got, got < 0 ? ": " : "",
	      got < 0 ? err : "");
	peaks_get(&fake, dir, 0, &pk, warn, sizeof warn);
	CHECK(nMeasured == 1 && pk.cached && pk.measured[TASK_BF16] == 790.5 && !warn[0],
	      "a warm start reads the cache and measures nothing (measured %d)", nMeasured);
	CHECK(peaks_load(path, "another|GPU-9|cc 9.0|driver 13000", &back, err) < 0 &&
	          strstr(err, "another device's"),
	      "another device's key is not this one's: %s", err);
	write_file_atomic(path, "{\"format\": 1, \"key\": \"tr", 25, NULL);
	CHECK(peaks_load(path, key, &back, err) < 0 && strstr(err, path) &&
	          strstr(err, "not a JSON object"),
	      "a corrupt cache is an error naming the file: %s", err);
	peaks_get(&fake, dir, 0, &pk, warn, sizeof warn);
	CHECK(nMeasured == 2 && !pk.cached && pk.measured[TASK_FP16] == 781.25 &&
	          strstr(warn, "ignoring the device's peaks cache") && strstr(warn, path) &&
	          peaks_load(path, key, &back, err) == 1,
	      "... which is ignored with a warning and measured again, then cached whole (%s)",
	      warn);
	char *bad = xasprintf("{\"format\": 1, \"key\": \"%s\", \"measured_tflops\": {\"fp16\": "
	                      "-3}}",
	                      key);
	write_file_atomic(path, bad, strlen(bad), NULL);
	free(bad);
	CHECK(peaks_load(path, key, &back, err) < 0 && strstr(err, "positive"),
	      "a negative peak is corrupt too: %s", err);
	peaks_get(&fake, dir, 1, &pk, warn, sizeof warn);
	CHECK(nMeasured == 3 && !pk.cached && !warn[0], "force measures again (doctor --peaks)");
	/* two workers starting on one device: the second waits for the first's
	 * measurement and reads it, rather than measuring the first's load */
	unlink(path);
	int pfd[2];
	CHECK(pipe(pfd) == 0, "a pipe");
	pid_t kid = fork();
	if (kid == 0) {
		char *lp = xasprintf("%s.lock", path);
		int fd = open(lp, O_CREAT | O_RDWR, 0600);
		flock(fd, LOCK_EX);
		if (write(pfd[1], "L", 1) != 1)
			_exit(1);
		usleep(300000); /* measuring */
		struct peaks other = {.clockMhz = 1755};
		other.measured[TASK_FP16] = 555;
		peaks_save(path, key, &other, err);
		_exit(0);
	}
	char c1;
	CHECK(read(pfd[0], &c1, 1) == 1, "the first worker holds the device's lock");
	int before = nMeasured;
	peaks_get(&fake, dir, 0, &pk, warn, sizeof warn);
	int kst = 0;
	waitpid(kid, &kst, 0);
	CHECK(nMeasured == before && pk.cached && pk.measured[TASK_FP16] == 555 &&
	          pk.clockMhz == 1755,
	      "... the second waits and reads the first's peaks, measuring nothing (measured %d "
	      "more; fp16 %g)",
	      nMeasured - before, pk.measured[TASK_FP16]);
	close(pfd[0]);
	close(pfd[1]);
	failMeasure = 1;
	unlink(path);
	peaks_get(&fake, dir, 0, &pk, warn, sizeof warn);
	CHECK(pk.measured[TASK_FP16] == 0 && pk.datasheet[TASK_FP16] == 989.4 &&
	          strstr(warn, "could not measure the device's peaks: cuBLASLt could not be "
	                       "loaded (the datasheet's are used)") &&
	          !path_exists(path),
	      "a measurement that fails leaves the datasheet's, says why, caches nothing: %s",
	      warn);
	cJSON *j = peaks_json(&pk);
	const cJSON *ty = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "types"), "fp8");
	CHECK(!strcmp(json_str(j, "datasheet", ""), "H200 SXM") &&
	          json_num(ty, "datasheet_tflops", 0) == 1978.9,
	      "peaks_json names the datasheet row and each type's peaks");
	cJSON_Delete(j);
	free(path);
	char *cmd = xasprintf("rm -rf %s", dir);
	CHECK(system(cmd) == 0, "cleaned up");
	free(cmd);
	return check_done();
}
