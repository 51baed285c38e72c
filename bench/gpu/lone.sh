#!/bin/sh
# bench/gpu/lone.sh - a lone `kloop eval` and where its seconds go (issue
# 40, item 1: warm <= 1.0 s, cold <= 2.5 s on an H200 for the softmax CUDA
# seed against the CUDA reference).  Runs it once cold (an empty cache)
# and N times warm, one line each: the wall time of the command; the
# worker's setup (ready after, of it: the inputs drawn and varied, the
# reference compiled, the reference's runs on every set with its runners'
# starts, its timing); the candidate's own seconds (compile, load, check,
# time, end) and how many of its runners were started ahead; and what is
# left (kloop's start, the worker's start and its device context, the
# float64 reference).  The cold run starts no worker kept warm (kloop warm
# stop first); the warm runs attach to the one it left (kloop eval's
# default on the GPU: --warm 300), "kept" says whether they did.  Prints
# one "skip" line where there is no GPU.
# Usage: sh bench/gpu/lone.sh [N]   (KLOOP_GPU_FLAGS adds flags;
# LONE_REFERENCE=torch times it against the PyTorch reference instead)
set -u
cd "$(dirname "$0")/../.."
K=${KLOOP:-./bin/kloop}
O=${OUT:-/tmp/kloop-lone}
N=${1:-3}
mkdir -p "$O"
if ! $K doctor --json 2>/dev/null | python3 -c 'import json,sys; sys.exit(0 if json.load(sys.stdin)["gpu"]["ok"] else 1)'; then
	echo "skip: no GPU (kloop doctor finds no usable CUDA device); lone.sh did not run"
	exit 0
fi
export XDG_CACHE_HOME=$O/cache
rm -rf "$XDG_CACHE_HOME"
$K warm stop >/dev/null 2>&1
echo "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null); $(date -u '+%F %H:%M UTC'); $(git rev-parse --short HEAD 2>/dev/null)"
printf '%-6s %6s | %6s %6s %6s %6s %6s | %6s %6s %6s %6s %6s %5s | %6s %4s\n' run wall ready inputs rcomp rruns rtime \
	compile load check time end ahead rest kept
i=0
while [ $i -le "$N" ]; do
	name=warm$i
	[ $i = 0 ] && name=cold
	s=$(python3 -c 'import time; print(time.time())')
	$K eval softmax tasks/softmax/seed.cu --backend cuda --reference "${LONE_REFERENCE:-cuda}" ${KLOOP_GPU_FLAGS:-} \
		--json >"$O/$name.json" 2>"$O/$name.err"
	e=$(python3 -c 'import time; print(time.time())')
	python3 - "$O/$name.json" "$name" "$s" "$e" <<'PY'
import json, sys
path, name, s, e = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
try:
    r = json.loads(open(path).readline())
except Exception as x:
    print("%-6s %6.2f  no result (%s)" % (name, e - s, x))
    sys.exit(0)
su = (r.get("reference_data") or {}).get("setup") or {}
sec = r.get("seconds") or {}
g = lambda d, k: d.get(k) if isinstance(d.get(k), (int, float)) else float("nan")
cand = sum(g(sec, k) for k in ("compile", "load", "check", "time", "end"))
rest = (e - s) - g(su, "seconds") - cand
print("%-6s %6.2f | %6.2f %6.2f %6.2f %6.2f %6.2f | %6.2f %6.2f %6.2f %6.2f %6.2f %5s | %6.2f %4s  %s" % (
    name, e - s, g(su, "seconds"), g(su, "inputs"), g(su, "reference_compile"), g(su, "reference_runs"),
    g(su, "reference_timing"), g(sec, "compile"), g(sec, "load"), g(sec, "check"), g(sec, "time"),
    g(sec, "end"), "%s/%s" % (r.get("runners_ahead"), r.get("runners")), rest,
    "yes" if "warm" in su else "no", r.get("status")))
if "worker_start" in su:
    print("       of the setup: the worker's start to its hello %.2f s, the small shapes' reference %.2f s "
          "(in its runs), the float64 reference %.2f s" % (g(su, "worker_start"), g(su, "small_reference"),
                                                         g(su, "float64_reference")))
PY
	i=$((i + 1))
done
$K warm stop >/dev/null 2>&1
