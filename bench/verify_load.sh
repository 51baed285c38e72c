#!/bin/sh
# bench/verify_load.sh - how often kloop's clock bound leaves an honest
# candidate unverified (or calls it a liar) on this machine: idle, with
# every core busy, and with bursts of load (issue 24: "keep honest
# candidates on a loaded 2-core machine verified").  The host seeds of
# softmax, layernorm and matmul, a 4 us candidate (the libs fixture, where
# the frames weigh most) and a 10 ms tiled matmul (tests/fixtures/kbtol),
# each evaluated N times (VERIFY_N, default 20) by kloop eval on the host
# backend.  Prints one line per candidate and load: verified, unverified,
# timing inconsistent, other; how the verified ones were bounded (kloop's
# clock, or the CPU time where the clock could not tell runs from waits),
# and the largest ratio of an evaluation's frame CPU time to that before
# the load (frames_lengthened's test, 3x + 30 us); then the batch bound's
# (harness_batch.c) cost: the evaluations whose batch held, its runs and
# its seconds a candidate (medians); an evaluation's wall time; and why
# the unverified ones were.  VERIFY_LOADED=0: the machine as it is only;
# VERIFY_BURSTY=0: without the bursts.  VERIFY_BACKEND=cuda: the CUDA
# seeds of softmax, layernorm, matmul and gemm_bias_relu on the GPU instead
# (the reference kernel their reference), with a line that says there is
# no GPU where there is none; VERIFY_TASKS, some of the four.
# VERIFY_IDLE=0: without the idle arm.
# Issue 35's arms after those: "suite", the test suite itself as the load
# (tests/run.sh over VERIFY_SUITE's e2e scripts, in a loop, as CI runs it
# beside nothing else); "compile", two parallel C compiles of kloop's own
# sources in a loop plus a memory-streaming process (memcpy of 256 MiB
# buffers) stopped and let go in turns of 0.1 to 0.7 s (the suite arm runs
# tests/run.sh in this tree, which empties tests/out: run the bench in a
# clone of its own while another suite runs).  VERIFY_SUITE=0 /
# VERIFY_COMPILE=0: without them.  Issue 35's honest fixtures are among the
# candidates on the host: the sweep's chunked softmax and a precision
# fixture (each once called a liar on this kind of machine).
# Each line also gives the parts of the bounds' model (KLOOP_BOUND_TRACE):
# the timed runs' report over their own CPU time less the frame's, run by
# run (its median, and the share of runs under 0.8: what
# harness_paired_cpu() judges), and across moments the timed median over
# the batch's CPU time a run (min and max: what the batch no longer holds
# the host's timed runs to); and, per arm, the steal the kernel reports
# (/proc/stat) beside a probe's CPU time for a fixed loop (p90 over p10:
# what the host takes unreported).
# Usage: bench/verify_load.sh [KLOOP]
set -u
cd "$(dirname "$0")/.."
K=${1:-./bin/kloop}
N=${VERIFY_N:-20}
T=$(mktemp -d)
trap 'kill $LOAD 2>/dev/null; kill -CONT $LOAD 2>/dev/null; [ -n "$SUITE" ] && kill -TERM -- "-$SUITE" 2>/dev/null; rm -rf "$T"' EXIT
LOAD=""
SUITE=""
cp -r tests/fixtures/libs "$T/libs"
mkdir -p "$T/libs/lib"
cc -shared -fPIC -O2 -I"$T/libs/include" -o "$T/libs/lib/libkloop_scale.so" "$T/libs/src/kloop_scale.c" -lm
export XDG_CACHE_HOME="$T/cache"
P=tests/fixtures/precision
sed "/^#include \"softmax_common.h\"/{r $P/softmax_common.h
d}" "$P/softmax_fast_exp.c" >"$T/fast_exp.c"
# a fixed loop's CPU time, 200 times: p90 / p10 (1.00: the CPU time is
# the work's; more: the host takes the virtual CPU and the guest counts it)
cat >"$T/probe.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static int cmp(const void *a, const void *b) { double d = *(double *)a - *(double *)b; return (d > 0) - (d < 0); }
int main(void)
{
	double c[200];
	volatile double x = 1;
	for (int r = 0; r < 200; r++) {
		struct timespec a, b;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
		for (int i = 0; i < 2000000; i++)
			x = x * 1.0000001 + 1e-9;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
		c[r] = (b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) * 1e-6;
	}
	qsort(c, 200, sizeof *c, cmp);
	printf("probe: a fixed loop's CPU time p10 %.3f ms, p90 %.3f ms (%.2fx), max %.3f ms\n", c[20], c[180], c[180] / c[20], c[199]);
	return 0;
}
C
cc -O2 -o "$T/probe" "$T/probe.c"
steal() { awk '/^cpu /{print $9}' /proc/stat; }
probe() { # the arm's steal and the probe
	s0=$(steal)
	"$T/probe"
	echo "steal the kernel reports: $(( $(steal) - s0 )) ticks over the probe"
}
one() { # LABEL TASK SOURCE
	: >"$T/runs"
	: >"$T/walls"
	: >"$T/trace"
	for _ in $(seq 1 "$N"); do
		s=$(date +%s.%N)
		KLOOP_BOUND_TRACE="$T/trace" $K eval "$2" "$3" $BACKEND --budget 0.3 --json 2>/dev/null |
			head -1 >>"$T/runs"
		echo "$s $(date +%s.%N)" >>"$T/walls"
	done
	python3 - "$LOADNAME" "$1" "$N" "$T/runs" "$T/walls" "$T/trace" <<'PY'
import json, sys
load, label, n, path = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
# the parts: each counted run's report over its own CPU time less its
# frame's, and the timed median over each batch's CPU time a run
rat, cross = [], []
for l in open(sys.argv[6]):
    try:
        d = json.loads(l)
    except ValueError:
        continue
    if d.get("gpu") or not d.get("ms"):
        continue
    if d["step"] == "bound" and d["inc"] != 0:
        continue
    ms = d["ms"]
    if d["step"] == "bound":
        for r, c, f in zip(ms, d["cpu"], d["near_cpu"]):
            if c >= 0 and f >= 0 and c - f > 0.05:
                rat.append(r / (c - f))
    b = d.get("batch")
    if d["step"] == "batch" and b and b.get("cpu", -1) > 0:
        cross.append(sorted(ms)[len(ms) // 2] / b["cpu"])
walls = sorted(float(b) - float(a) for a, b in (l.split() for l in open(sys.argv[5])))
clock = cpu = unver = inc = other = 0
ratio, bruns, bsec, why = [], [], [], {}
for l in open(path):
    try:
        r = json.loads(l)
    except ValueError:
        other += 1
        continue
    t = r.get("timing") or {}
    if "timing inconsistent" in (r.get("reason") or ""):
        inc += 1
    elif t.get("verified") is True:
        clock += t.get("bound") != "cpu"
        cpu += t.get("bound") == "cpu"
    elif t.get("verified") is False:
        unver += 1
        k = (t.get("clock_bound") or r.get("reason") or "?")[:160]; why[k] = why.get(k, 0) + 1
    else:
        other += 1
    if t.get("batch_runs"):
        bruns.append(t["batch_runs"])
        bsec.append(t["batch_seconds"])
    a, b = t.get("frame_cpu_median_ms"), t.get("frame_cpu_before_load_ms")
    if a and b:
        ratio.append(a / b)
med = lambda v: sorted(v)[len(v) // 2] if v else float("nan")
print("%-7s %-11s %3d verified (%d by the clock, %d by CPU time), %3d unverified, %3d inconsistent, %3d other (of %d); frame CPU after/before the load: max %.2fx; batch in %d: %s runs, %.3f s (max %.3f s); an evaluation %.1f s (median)"
      % (load, label, clock + cpu, clock, cpu, unver, inc, other, n, max(ratio) if ratio else float("nan"),
         len(bsec), med(bruns), med(bsec), max(bsec) if bsec else float("nan"), walls[len(walls) // 2]))
if rat:
    print("        parts: %d runs' report / own CPU: median %.3f, under 0.8 in %d (%.1f%%); timed median / batch CPU (other moments) in %d batches: %.2f to %.2f"
          % (len(rat), med(rat), sum(x < 0.8 for x in rat), 100.0 * sum(x < 0.8 for x in rat) / len(rat),
             len(cross), min(cross) if cross else float("nan"), max(cross) if cross else float("nan")))
for w, k in sorted(why.items(), key=lambda x: -x[1]):
    print("        unverified %dx: %s" % (k, w))
PY
}
CUDA=0
[ "${VERIFY_BACKEND:-host}" = cuda ] && CUDA=1
BACKEND="--backend host"
if [ $CUDA = 1 ]; then
	if ! nvidia-smi -L >/dev/null 2>&1; then
		echo "skip: no GPU (nvidia-smi -L failed)"
		exit 0
	fi
	BACKEND="--backend cuda --reference cuda"
	echo "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
fi
all() {
	if [ $CUDA = 1 ]; then
		for t in ${VERIFY_TASKS:-softmax layernorm matmul gemm_bias_relu}; do
			one "$t" "$t" "tasks/$t/seed.cu"
		done
		return
	fi
	one softmax softmax tasks/softmax/seed.c
	one chunked softmax tests/fixtures/search/chunked.c
	one "fast exp" softmax "$T/fast_exp.c"
	one layernorm layernorm tasks/layernorm/seed.c
	one matmul matmul tasks/matmul/seed.c
	one "4us (libs)" "$T/libs" "$T/libs/uses_lib.c"
	one "tiled f64" tests/fixtures/kbtol/matmul tests/fixtures/kbtol/matmul/tiled_f64.c
}
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); $(date -u '+%F %H:%M UTC')"
LOADNAME=idle
[ "${VERIFY_IDLE:-1}" = 0 ] || { probe; all; }
[ "${VERIFY_LOADED:-1}" = 0 ] && exit 0
# spin N: N plain spinning processes more, their pids in LOAD
spin() {
	for _ in $(seq 1 "$1"); do
		sh -c 'while :; do :; done' &
		LOAD="$LOAD $!"
	done
}
# every core busy with a plain spinning process, which the scheduler shares
# with kloop's: the waits are the bound's to tell apart
spin "$(nproc)"
LOADNAME=loaded
probe
all
arms_35() {
	# the test suite itself as the load, in a loop (its own output thrown
	# away: its verdicts are not this bench's)
	kill $LOAD 2>/dev/null
	kill -CONT $LOAD 2>/dev/null
	LOAD=""
	if [ "${VERIFY_SUITE:-1}" != 0 ]; then
		# in a session of its own, so that it and only it is stopped (a
		# pkill by name ended every other test suite on the machine)
		setsid sh -c 'while :; do E2E="'"${VERIFY_SUITE_E2E:-search cascade stats precision eval_host}"'" sh tests/run.sh >/dev/null 2>&1; done' &
		SUITE=$!
		LOADNAME=suite
		probe
		all
		kill -TERM -- "-$SUITE" 2>/dev/null
		LOAD=""
	fi
	# parallel compiles and a bursty memory-streaming process
	if [ "${VERIFY_COMPILE:-1}" != 0 ]; then
		printf '#include <stdlib.h>\n#include <string.h>\nint main(void){size_t n=256u<<20;char*a=malloc(n),*b=malloc(n);memset(a,1,n);for(;;)memcpy(b,a,n);}\n' >"$T/stream.c"
		cc -O2 -o "$T/stream" "$T/stream.c"
		"$T/stream" &
		STREAM=$!
		sh -c 'while :; do kill -STOP '"$STREAM"'; sleep 0.$(( $(od -An -N1 -tu1 /dev/urandom) % 7 + 1 )); kill -CONT '"$STREAM"'; sleep 0.$(( $(od -An -N1 -tu1 /dev/urandom) % 7 + 1 )); done' &
		LOAD="$! $STREAM"
		for _ in 1 2; do
			sh -c 'while :; do for f in engine/*.c engine/measure/*/*.c; do cc -std=c11 -D_GNU_SOURCE -O2 -Iinclude -Iengine $(for d in engine/measure/*/; do printf -- "-I%s " "${d%/}"; done) -Iengine/code -Iengine/llm -I/usr/include/cjson -Igrammars/node_modules/tree-sitter/vendor/tree-sitter/lib/include -c "$f" -o /dev/null 2>/dev/null; done; done' &
			LOAD="$LOAD $!"
		done
		LOADNAME=compile
		probe
		all
		kill $LOAD 2>/dev/null
		kill -CONT $STREAM 2>/dev/null
		kill $STREAM 2>/dev/null
		LOAD=""
	fi
}
[ "${VERIFY_BURSTY:-1}" = 0 ] && { arms_35; exit 0; }
# load that comes and goes, as a neighbour's build or test suite does: twice
# as many spinning processes as cores, stopped and let go in turns of 0.1 to
# 0.7 s (the burst that once made the batch bound call an honest candidate a
# liar: its runs 1.7x their median in two batches back to back)
kill $LOAD 2>/dev/null
LOAD=""
spin "$((2 * $(nproc)))"
SPIN=$LOAD
sh -c 'while :; do kill -STOP '"$SPIN"'; sleep 0.$(( $(od -An -N1 -tu1 /dev/urandom) % 7 + 1 )); kill -CONT '"$SPIN"'; sleep 0.$(( $(od -An -N1 -tu1 /dev/urandom) % 7 + 1 )); done' &
LOAD="$! $SPIN"
LOADNAME=bursty
probe
all
arms_35
