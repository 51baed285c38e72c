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
# Usage: bench/verify_load.sh [KLOOP]
set -u
cd "$(dirname "$0")/.."
K=${1:-./bin/kloop}
N=${VERIFY_N:-20}
T=$(mktemp -d)
trap 'kill $LOAD 2>/dev/null; kill -CONT $LOAD 2>/dev/null; rm -rf "$T"' EXIT
LOAD=""
cp -r tests/fixtures/libs "$T/libs"
mkdir -p "$T/libs/lib"
cc -shared -fPIC -O2 -I"$T/libs/include" -o "$T/libs/lib/libkloop_scale.so" "$T/libs/src/kloop_scale.c" -lm
export XDG_CACHE_HOME="$T/cache"
one() { # LABEL TASK SOURCE
	: >"$T/runs"
	: >"$T/walls"
	for _ in $(seq 1 "$N"); do
		s=$(date +%s.%N)
		$K eval "$2" "$3" $BACKEND --budget 0.3 --json 2>/dev/null | head -1 >>"$T/runs"
		echo "$s $(date +%s.%N)" >>"$T/walls"
	done
	python3 - "$LOADNAME" "$1" "$N" "$T/runs" "$T/walls" <<'PY'
import json, sys
load, label, n, path = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
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
	one layernorm layernorm tasks/layernorm/seed.c
	one matmul matmul tasks/matmul/seed.c
	one "4us (libs)" "$T/libs" "$T/libs/uses_lib.c"
	one "tiled f64" tests/fixtures/kbtol/matmul tests/fixtures/kbtol/matmul/tiled_f64.c
}
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); $(date -u '+%F %H:%M UTC')"
LOADNAME=idle
[ "${VERIFY_IDLE:-1}" = 0 ] || all
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
all
[ "${VERIFY_BURSTY:-1}" = 0 ] && exit 0
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
all
