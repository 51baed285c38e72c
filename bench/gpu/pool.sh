#!/bin/sh
# bench/gpu/pool.sh - the worker pool on a host with two (or more) GPUs:
# 64 distinct CUDA candidates (the softmax seed, each with a comment of its
# own, so every one is compiled), cold compile cache, evaluated with one GPU
# (--workers local:1) and with every GPU (--workers local); wall time,
# candidates per minute, per-GPU utilisation (nvidia-smi, sampled) and the
# same kernel's time on each GPU.  Figures go to bench/RESULTS.md.
# Usage: bench/gpu/pool.sh [OUTDIR]
set -u
cd "$(dirname "$0")/../.."
O=${1:-/tmp/kloop-pool-bench}
mkdir -p "$O/var"
K=./bin/kloop
ngpu=$(nvidia-smi -L | wc -l)
echo "device: $ngpu x $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); $(nproc) cores; $(date -u '+%F %H:%M UTC')"
for i in $(seq 1 64); do
	{ echo "/* variant $i */"; cat tasks/softmax/seed.cu; } >"$O/var/v$i.cu"
done
now() { python3 -c 'import time; print("%.3f" % time.time())'; }
for spec in local:1 local; do
	export XDG_CACHE_HOME="$O/cache-$spec"
	rm -rf "$XDG_CACHE_HOME"
	nvidia-smi --query-gpu=index,utilization.gpu --format=csv,noheader,nounits -lms 250 >"$O/util-$spec.csv" &
	smi=$!
	s=$(now)
	$K eval softmax "$O"/var/v*.cu --backend cuda --reference cuda --budget 0.3 \
		--workers "$spec" --json >"$O/r-$spec.json" 2>"$O/err-$spec.log"
	e=$(now)
	kill $smi 2>/dev/null
	python3 - "$O/r-$spec.json" "$s" "$e" "$spec" "$O/util-$spec.csv" <<'PY'
import json, sys, statistics as st, collections
rs = [json.loads(l) for l in open(sys.argv[1]) if l.strip().startswith("{")]
w = float(sys.argv[3]) - float(sys.argv[2])
ok = sum(r.get("status") == "correct" for r in rs)
by = collections.defaultdict(list)
for r in rs:
    if r.get("status") == "correct":
        by[r.get("worker", {}).get("label", "?")].append(r["time_ms"])
util = collections.defaultdict(list)
for line in open(sys.argv[5]):
    p = line.strip().split(",")
    if len(p) == 2:
        util[p[0].strip()].append(float(p[1]))
print("%-8s %d candidates (%d correct) in %.1f s: %.0f per minute" % (sys.argv[4], len(rs), ok, w, 60 * len(rs) / w))
for k in sorted(by):
    v = sorted(by[k])
    print("   %-8s %2d candidates, kernel median %.4f ms (p10 %.4f, p90 %.4f)" % (k, len(v), st.median(v), v[len(v) // 10], v[(9 * len(v)) // 10]))
for k in sorted(util):
    print("   GPU %s utilisation %.0f%% mean over the run" % (k, st.mean(util[k])))
PY
done
