#!/bin/sh
# bench/gpu/run.sh - kloop's GPU benchmarks (run on the GPU machine; figures
# go to bench/RESULTS.md): end-to-end latency cold and warm, throughput with
# parallel compiles, the load_inline anchor, timing fidelity against
# triton's do_bench and Nsight Compute, and the naive seeds' speedups.
# Usage: bench/gpu/run.sh [OUTDIR]   (BENCH_PARTS="1 2 4" runs some parts only)
set -u
PARTS=${BENCH_PARTS:-"1 2 3 4 5"}
part() { case " $PARTS " in *" $1 "*) return 0 ;; esac; return 1; }
cd "$(dirname "$0")/../.."
O=${1:-/tmp/kloop-bench}
mkdir -p "$O"
K=./bin/kloop
export XDG_CACHE_HOME=${KLOOP_GPU_CACHE:-/tmp/kloop-bench-cache}
CUDA="--backend cuda"
now() { python3 -c 'import time; print("%.3f" % time.time())'; }
field() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); v=r
for k in sys.argv[2].split('.'): v=v[k]
print(v)" "$1" "$2"; }
echo "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader); $(date -u '+%F %H:%M UTC')"

if part 1; then
echo "== 1. end-to-end latency, softmax CUDA seed (reference: the CUDA reference kernel)"
rm -rf "$XDG_CACHE_HOME/kloop/so"
for kind in cold warm warm warm; do
	s=$(now)
	$K eval softmax tasks/softmax/seed.cu $CUDA --reference cuda --budget 0.5 --json >"$O/lat.json" 2>>"$O/err.log"
	e=$(now)
	python3 - "$O/lat.json" "$s" "$e" "$kind" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); s = r["seconds"]; w = float(sys.argv[3]) - float(sys.argv[2])
print("%-5s wall %.2f s: compile %.2f, load %.3f, check %.3f, time %.3f; rest (worker, inputs, reference) %.2f; %s ms" %
      (sys.argv[4], w, s["compile"], s["load"], s["check"], s["time"], w - s["compile"] - s["load"] - s["check"] - s["time"], r["time_ms"]))
PY
done

fi
if part 2; then
echo "== 2. throughput: 32 distinct candidates, parallel compiles on $(nproc) cores, cold cache"
mkdir -p "$O/var"
for i in $(seq 1 32); do
	{ echo "/* variant $i */"; cat tasks/softmax/seed.cu; } >"$O/var/v$i.cu"
done
s=$(now)
$K eval softmax "$O"/var/v*.cu $CUDA --reference cuda --budget 0.3 --jobs "$(nproc)" --json >"$O/thr.json" 2>>"$O/err.log"
e=$(now)
python3 - "$O/thr.json" "$s" "$e" <<'PY'
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1])]
w = float(sys.argv[3]) - float(sys.argv[2])
ok = sum(r["status"] == "correct" for r in rs)
comp = [r["seconds"]["compile"] for r in rs]
print("%d candidates (%d correct) in %.1f s: %.2f s each, %.0f per minute; nvcc %.2f s median per compile" %
      (len(rs), ok, w, w / len(rs), 60 * len(rs) / w, sorted(comp)[len(comp) // 2]))
PY

fi
if part 3; then
echo "== 3. anchor: torch.utils.cpp_extension.load_inline of the same kernel (cold)"
python3 bench/gpu/load_inline_softmax.py 2>>"$O/err.log" | sed 's/^/load_inline: seconds, verdict: /'

fi
if part 4; then
echo "== 4. timing fidelity: the softmax seed timed 10 times by kloop"
for i in $(seq 1 10); do
	$K eval softmax tasks/softmax/seed.cu $CUDA --reference cuda --json >"$O/fid$i.json" 2>>"$O/err.log"
done
python3 - "$O" <<'PY'
import json, sys, statistics
ms = [json.load(open("%s/fid%d.json" % (sys.argv[1], i)))["time_ms"] for i in range(1, 11)]
m = statistics.median(ms)
print("medians (ms): " + " ".join("%.4f" % x for x in ms))
print("spread of the medians: (max - min) / median = %.2f%%" % (100 * (max(ms) - min(ms)) / m))
PY
key=$(field "$O/fid1.json" compile.key)
so="$XDG_CACHE_HOME/kloop/so/$key.so"
db=$(python3 bench/gpu/fidelity.py "$so" do_bench 2>>"$O/err.log")
echo "triton.testing.do_bench median: $db ms"
echo "kloop's own sequence in PyTorch (fresh inputs, read flush, events): $(python3 bench/gpu/fidelity.py "$so" events-flush 2>>"$O/err.log") ms"
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
if [ -n "$NCU" ]; then
	timeout 300 "$NCU" --clock-control none --metrics gpu__time_duration.sum -k regex:softmax_rows \
		--launch-skip 5 --launch-count 10 --csv python3 bench/gpu/fidelity.py "$so" ncu-driver \
		>"$O/ncu.csv" 2>>"$O/err.log"
	# the kernel in kloop's own cache state (its sequence, no cache control of ncu's)
	timeout 300 "$NCU" --clock-control none --cache-control none --metrics gpu__time_duration.sum \
		-k regex:softmax_rows --launch-skip 5 --launch-count 15 --csv \
		python3 bench/gpu/fidelity.py "$so" ncu-flush >"$O/ncu_flush.csv" 2>>"$O/err.log"
	python3 -c "
import csv, statistics, sys
rows = [r for r in csv.reader(l for l in open(sys.argv[1]) if l.startswith('\"'))]
h, d = rows[0], rows[1:]
i, u = h.index('Metric Value'), h.index('Metric Unit')
sc = {'nsecond': 1e-6, 'ns': 1e-6, 'usecond': 1e-3, 'us': 1e-3, 'msecond': 1, 'ms': 1}
v = [float(r[i].replace(',', '')) * sc.get(r[u], float('nan')) for r in d]
print('ncu --cache-control none on that sequence: median %.4f ms over %d launches' % (statistics.median(v), len(v)))
" "$O/ncu_flush.csv"
	python3 - "$O/ncu.csv" <<'PY'
import csv, sys, statistics
rows = [r for r in csv.reader(l for l in open(sys.argv[1]) if l.startswith('"'))]
hdr, data = rows[0], rows[1:]
i, u = hdr.index("Metric Value"), hdr.index("Metric Unit")
vals = []
for r in data:
    v = float(r[i].replace(",", ""))
    unit = r[u]
    scale = {"nsecond": 1e-6, "ns": 1e-6, "usecond": 1e-3, "us": 1e-3, "msecond": 1, "ms": 1,
             "second": 1e3, "s": 1e3}
    vals.append(v * scale.get(unit, float("nan")))
    last_unit = unit
print("ncu gpu__time_duration median over %d launches: %.4f ms (unit in the report: %s)" % (len(vals), statistics.median(vals), last_unit))
open(sys.argv[1] + ".median", "w").write("%.6f" % statistics.median(vals))
PY
else
	echo "ncu: not found"
fi
python3 - "$O" "$db" <<'PY'
import json, os, sys, statistics
ms = [json.load(open("%s/fid%d.json" % (sys.argv[1], i)))["time_ms"] for i in range(1, 11)]
k = statistics.median(ms); d = float(sys.argv[2])
print("kloop median of medians %.4f ms vs do_bench %.4f ms: %+.2f%%" % (k, d, 100 * (k - d) / d))
p = sys.argv[1] + "/ncu.csv.median"
if os.path.exists(p):
    n = float(open(p).read())
    print("kloop median of medians %.4f ms vs ncu gpu__time_duration %.4f ms: %+.2f%%" % (k, n, 100 * (k - n) / n))
print("timing method: " + json.load(open(sys.argv[1] + "/fid1.json"))["timing"]["method"])
PY

fi
if part 5; then
echo "== 5. the naive CUDA seeds against PyTorch eager and torch.compile"
printf "%-16s %10s %10s %10s %8s %8s\n" task seed_ms eager_ms compile_ms vs_eager vs_compile
for t in softmax layernorm matmul hgemm gemm_bias_relu; do
	$K eval $t tasks/$t/seed.cu $CUDA --json >"$O/seed_$t.json" 2>>"$O/err.log"
	python3 - "$O/seed_$t.json" "$t" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
f = lambda k: r.get(k) if r.get(k) is not None else float("nan")
print("%-16s %10.4f %10.4f %10.4f %7.3fx %7.3fx  %s" % (sys.argv[2], f("time_ms"), f("baseline_ms"),
      f("baseline_compile_ms"), f("speedup"), f("speedup_compile"), r["status"]))
PY
done
fi
