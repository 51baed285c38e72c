#!/bin/sh
# bench/gpu/kb_refs.sh - KernelBench problems at today's sizes on the GPU: the
# PyTorch helper draws every set on the device and writes inputs and
# reference outputs straight into the worker's buffers (CUDA IPC).  For each
# problem: one set's size, the trials kept, the peak GPU memory, the wall
# time from start to result and the candidate's verdict; nothing but the
# baselines' timing is written to the cache.  Figures go to bench/RESULTS.md.
# Usage: bench/gpu/kb_refs.sh [OUTDIR]   (KB_PROBLEMS="23 2" runs some only;
# KB_SIZE=0.25 passes --size 0.25)
set -u
cd "$(dirname "$0")/../.."
O=${1:-/tmp/kloop-kb-refs}
mkdir -p "$O"
K=${KLOOP:-./bin/kloop}
export XDG_CACHE_HOME=${KLOOP_GPU_CACHE:-$O/cache}
PROBLEMS=${KB_PROBLEMS:-"23 2 76 63 89"}
SIZE=${KB_SIZE:+--size $KB_SIZE}
FX=tests/fixtures/torch/kb
echo "device: $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader); torch $(python3 -c 'import torch; print(torch.__version__)'); $(date -u '+%F %H:%M UTC')"
printf '%-48s %10s %6s %10s %8s %9s %10s %10s  %s\n' problem set_GB trials peak_GiB ready_s wall_s cand_ms eager_ms verdict
for p in $PROBLEMS; do
	case $p in
	23) prob=$FX/23_Softmax.py cand=tasks/softmax/seed.cu ;;
	2) prob=$FX/2_Standard_matrix_multiplication_.py cand=tasks/matmul/seed.cu ;;
	76) prob=$FX/76_Gemm_Add_ReLU.py cand=tasks/gemm_bias_relu/seed.cu ;;
	63) prob=$FX/63_conv_standard_2D__square_input__square_kernel.py cand=$FX/conv2d_naive.cu ;;
	89) prob=$FX/89_cumsum.py cand=$FX/cumsum_rows.cu ;;
	*) echo "unknown problem $p" >&2; continue ;;
	esac
	nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 100 >"$O/mem.$p" 2>/dev/null &
	mon=$!
	s=$(date +%s.%N)
	$K eval "$prob" "$cand" --backend cuda --budget 1 $SIZE --json >"$O/r.$p.json" 2>"$O/err.$p"
	e=$(date +%s.%N)
	kill $mon 2>/dev/null
	wait $mon 2>/dev/null
	python3 - "$O/r.$p.json" "$O/mem.$p" "$s" "$e" "$prob" "$O/err.$p" $SIZE <<'PY'
import json, sys, os, subprocess
rf, mf, s, e, prob, ef = sys.argv[1:7]
size = sys.argv[7:]
peak = max([int(x) for x in (open(mf).read() if os.path.exists(mf) else "").split()
            if x.strip().isdigit()] or [0]) / 1024.0
try:
    r = json.load(open(rf))
except Exception:
    print("%-48s failed: %s" % (os.path.basename(prob), open(ef).read().strip().splitlines()[-1:]))
    sys.exit(0)
d = json.loads(subprocess.run([os.environ.get("KLOOP", "./bin/kloop"), "tasks", prob, "--json"] + size,
                              capture_output=True, text=True).stdout or "{}")
def nbytes(t):
    n = {"f32": 4, "f16": 2, "bf16": 2, "f64": 8, "i32": 4, "i64": 8, "i8": 1, "u8": 1}[t["dtype"]]
    for x in t["shape"]:
        n *= x
    return n
setb = sum(nbytes(t) for t in d.get("inputs", []) + d.get("outputs", []))
c = r.get("correctness") or {}
tm = (r.get("timing") or {}).get("median_ms")
rd = r.get("reference_data") or {}
print("%-48s %10.2f %6s %10.1f %8.2f %9.1f %10s %10s  %s" % (
    os.path.basename(prob), setb / 1e9, c.get("trials"), peak, rd.get("seconds", float("nan")), float(e) - float(s),
    "%.3f" % tm if tm else "-", "%.3f" % r["baseline_ms"] if r.get("baseline_ms") else "-",
    r.get("status") + (": " + r.get("reason", "")[:80] if r.get("status") != "correct" else "")))
if rd.get("note"):
    print("    note: " + rd["note"])
PY
done
echo "cache after the runs (reference data never written; only *.timing.json and compiled .so):"
find "$XDG_CACHE_HOME" -type f | sed 's|.*/||' | sed 's/^[0-9a-f]\{64\}/HASH/' | sort | uniq -c
