#!/bin/sh
# bench/gpu/peaks.sh - a roofline for every type (issue 36), on the GPU
# machine: the device's dense peaks per compute type measured by `kloop
# doctor --peaks` (cuBLASLt, twice: how steady) beside the datasheet's and
# the SM clock; a worker's first start (it measures them) against a warm
# one (the cache: nothing measured); and hgemm's rooflines, the naive seed's
# and a WMMA kernel's, each against its fp16 tensor-core floor.  The
# figures go to bench/RESULTS.md.
# Usage: bench/gpu/peaks.sh [OUTDIR]
set -u
cd "$(dirname "$0")/../.."
O=${1:-/tmp/kloop-peaks}
mkdir -p "$O"
K=${KLOOP:-./bin/kloop}
export XDG_CACHE_HOME=$O/cache
now() { python3 -c 'import time; print("%.3f" % time.time())'; }
echo "device: $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader); $(date -u '+%F %H:%M UTC')"

echo "== 1. kloop doctor --peaks, twice"
for i in 1 2; do
	$K doctor --peaks --json >"$O/peaks$i.json" 2>"$O/peaks$i.err"
	python3 - "$O/peaks$i.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))["peaks"]
p = d.get("peaks") or {}
print("  %s" % d["detail"])
for t, v in p.get("types", {}).items():
    m, s = v.get("measured_tflops"), v.get("datasheet_tflops")
    print("  %-5s measured %8s  datasheet %8s  %s" % (t, "%.1f" % m if m else "-", "%.1f" % s if s else "-",
          "%.0f%%" % (100 * m / s) if m and s else ""))
PY
done

echo "== 2. a worker's first start measures the peaks; a warm one reads them"
rm -rf "$XDG_CACHE_HOME/kloop/device"
for kind in cold warm warm; do
	s=$(now)
	$K eval softmax tasks/softmax/seed.cu --backend cuda --reference cuda --budget 0.2 --json \
		>"$O/$kind.json" 2>"$O/$kind.err"
	e=$(now)
	echo "  $kind: wall $(python3 -c "print('%.2f' % ($e - $s))") s; $(ls "$XDG_CACHE_HOME"/kloop/device/ 2>/dev/null | tr '\n' ' ')$(grep -h 'warning' "$O/$kind.err" | head -2)"
done

echo "== 3. hgemm's rooflines (4096^3 f16, fp32 accumulation: compute fp16)"
cp tests/fixtures/precision/hgemm_wmma.cu "$O/"
$K eval hgemm tasks/hgemm/seed.cu "$O/hgemm_wmma.cu" --backend cuda --reference cuda --budget 0.5 \
	--json >"$O/hgemm.json" 2>"$O/hgemm.err"
python3 - "$O/hgemm.json" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    f = r.get("roofline") or {}
    print("  %-14s %-9s %8s ms  %s  bound %s at %s of the %s floor (%.4g ms; peak %s, measured %s at %s MHz); precision %s" % (
        r["source"].split("/")[-1], r["status"], r.get("time_ms"), f.get("compute"), f.get("bound"),
        "%.3f" % f["fraction"] if "fraction" in f else "-", f.get("compute"), f.get("floor_ms", 0),
        f.get("peak_tflops"), f.get("measured_peak_tflops"), f.get("clock_mhz"),
        (r.get("precision") or {}).get("verdict")))
PY
