#!/bin/sh
# bench/gpu/tasks_check.sh - the tensor-core tasks' CUDA seeds on the GPU
# (issue 36, item 7): for each task, `kloop eval TASK tasks/TASK/seed.cu
# --backend cuda` at its cuda shapes and at every other named shape set
# (--shapes SET; against PyTorch eager, reference.py at that set's
# dimensions, where PyTorch is there; KLOOP_GPU_FLAGS="--reference cuda"
# for the CUDA reference kernel), one line each: status, time, baseline,
# speedup, roofline fraction, precision verdict (and the reason when not correct). Where
# cuobjdump is on PATH it also says how many HMMA instructions each seed's
# SASS holds (the tensor cores really used). Prints one "skip: no GPU" line
# and exits 0 where there is no usable GPU.
# Usage: sh bench/gpu/tasks_check.sh [TASK ...]
#   (default: bf16_gemm hgemm fp8_gemm rmsnorm_bf16 attention_bf16 attention_causal_bf16;
#    KLOOP_GPU_FLAGS adds flags, e.g. "--reference cuda" or "--budget 2";
#    SETS="cuda square_1024" limits the shape sets)
set -u
cd "$(dirname "$0")/../.."
K=${KLOOP:-./bin/kloop}
O=${OUT:-/tmp/kloop-tasks-check}
mkdir -p "$O"
export XDG_CACHE_HOME=${KLOOP_GPU_CACHE:-$O/cache}
if ! $K doctor --json 2>/dev/null | python3 -c 'import json,sys; sys.exit(0 if json.load(sys.stdin)["gpu"]["ok"] else 1)'; then
	echo "skip: no GPU (kloop doctor finds no usable CUDA device); tasks_check.sh did not run"
	exit 0
fi
TASKS=${*:-"bf16_gemm hgemm fp8_gemm rmsnorm_bf16 attention_bf16 attention_causal_bf16"}
B="--backend cuda --budget ${KLOOP_GPU_BUDGET:-1} ${KLOOP_GPU_FLAGS:-}"
echo "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null); $(date -u '+%F %H:%M UTC')"
$K tasks --json >"$O/tasks.json"
printf "%-22s %-22s %-10s %10s %10s %9s %6s %s\n" task shapes status time_ms base_ms speedup roof precision
fails=0
for t in $TASKS; do
	if command -v cuobjdump >/dev/null 2>&1; then
		nvcc -std=c++17 -O3 -arch="${KLOOP_CUDA_ARCH:-sm_90}" -Iinclude -cubin \
			-o "$O/$t.cubin" "tasks/$t/seed.cu" 2>"$O/$t.nvcc" &&
			echo "# $t seed.cu: $(cuobjdump -sass "$O/$t.cubin" | grep -c HMMA) HMMA instructions in its SASS"
	fi
	sets=${SETS:-$(python3 -c "
import json, sys
t = {x['name']: x for x in json.load(open(sys.argv[1]))['tasks']}[sys.argv[2]]
print(' '.join(s for s in t['shapes'] if s != 'host'))" "$O/tasks.json" "$t")}
	for s in $sets; do
		$K eval "$t" "tasks/$t/seed.cu" $B --shapes "$s" --json >"$O/$t.$s.json" 2>"$O/$t.$s.err"
		python3 - "$O/$t.$s.json" "$t" "$s" "$O/$t.$s.err" <<'PY' || fails=$((fails + 1))
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except Exception:
    print("%-22s %-22s %-10s %s" % (sys.argv[2], sys.argv[3], "error", open(sys.argv[4]).read()[-300:].replace("\n", " ")))
    sys.exit(1)
f = lambda v: "%.4f" % v if isinstance(v, (int, float)) else "-"
roof = (r.get("roofline") or {}).get("fraction")
prec = (r.get("precision") or {}).get("verdict", "-")
line = "%-22s %-22s %-10s %10s %10s %9s %6s %s" % (sys.argv[2], sys.argv[3], r.get("status"), f(r.get("time_ms")),
       f(r.get("baseline_ms")), f(r.get("speedup")), "%.0f%%" % (100 * roof) if roof else "-", prec)
if r.get("status") != "correct":
    line += "  | " + (r.get("reason") or "").replace("\n", " ")[:300]
print(line)
sys.exit(0 if r.get("status") == "correct" else 1)
PY
	done
done
echo "# $fails not correct; JSON results in $O"
[ $fails -eq 0 ]
