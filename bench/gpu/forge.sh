#!/bin/sh
# bench/gpu/forge.sh - issue 24 on the GPU, one build against another in
# one call (figures for bench/RESULTS.md):
#   1. what a candidate costs: 16 distinct softmax candidates (a constant
#      each), evaluated in one kloop eval: wall seconds per candidate and
#      where they went (load, check, time), and how many times were verified;
#   2. the seeds' times, 5 evaluations each of softmax and layernorm: the
#      median of the medians (the confinement and the hold must not move
#      them), the frame and wall medians, and every one verified;
#   3. the hostile candidates of the issue's classes (tests/fixtures/evil
#      and evil_cuda, with the CUDA kernel in front): their verdicts and
#      times (the old build forges; the new one must not).
# Usage: bench/gpu/forge.sh OUTDIR [KLOOP...]   (each KLOOP a kloop binary
# with its kloop-worker and libkloop-cuda.so beside it; default ./bin/kloop)
set -u
cd "$(dirname "$0")/../.."
O=${1:-/tmp/kloop-bench-forge}
shift
[ $# -gt 0 ] || set -- ./bin/kloop
mkdir -p "$O/evil"
if ! nvidia-smi -L >/dev/null 2>&1; then
	echo "skip: no GPU (nvidia-smi -L failed)"
	exit 0
fi
echo "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader); $(date -u '+%F %H:%M UTC'); $(nproc) cores"
for f in forge_got forge_reply memo_inputs; do
	{ cat tests/fixtures/evil_cuda/softmax_kernel.cuh; grep -v '#include "softmax_body.h"' "tests/fixtures/evil/$f.c"; } >"$O/evil/$f.cu"
done
{ echo '#define SPIN 1'; cat "$O/evil/forge_reply.cu"; } >"$O/evil/forge_spin.cu"
{ cat tests/fixtures/evil_cuda/softmax_kernel.cuh; grep -v '#include "softmax_kernel.cuh"' tests/fixtures/evil_cuda/outside_work.cu; } >"$O/evil/outside_work.cu"
for i in $(seq 1 16); do
	sed "s/#define THREADS 256/#define THREADS 256\n#define KLOOP_VARIANT $i\n__device__ int kloop_variant = $i;/" tasks/softmax/seed.cu >"$O/v$i.cu"
done
summary() { # JSONL LABEL
	python3 - "$1" "$2" <<'PY'
import json, statistics as st, sys
rs = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
def sec(k): return [r.get("seconds", {}).get(k, 0) for r in rs]
ok = sum(r["status"] == "correct" for r in rs)
ver = sum((r.get("timing") or {}).get("verified") is True for r in rs)
print("  %-28s %d results, %d correct, %d verified; per candidate: load %.3f s, check %.3f s, time %.3f s (medians)" %
      (sys.argv[2], len(rs), ok, ver, st.median(sec("load")), st.median(sec("check")), st.median(sec("time"))))
PY
}
for K in "$@"; do
	echo "== build $K"
	export XDG_CACHE_HOME="$O/cache-$(echo "$K" | tr '/.' '__')"
	B="--backend cuda --reference cuda"
	s=$(date +%s.%N)
	$K eval softmax "$O"/v*.cu $B --json >"$O/cost.jsonl" 2>"$O/cost.err"
	e=$(date +%s.%N)
	python3 -c "import sys; print('  16 distinct candidates in one kloop eval: %.1f s, %.2f s each' % (float(sys.argv[2]) - float(sys.argv[1]), (float(sys.argv[2]) - float(sys.argv[1])) / 16))" "$s" "$e"
	summary "$O/cost.jsonl" "distinct softmax candidates"
	for t in softmax layernorm; do
		: >"$O/seed-$t.jsonl"
		for i in 1 2 3 4 5; do
			$K eval $t tasks/$t/seed.cu $B --json >>"$O/seed-$t.jsonl" 2>>"$O/seed.err"
		done
		python3 - "$O/seed-$t.jsonl" "$t" <<'PY'
import json, statistics as st, sys
rs = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
t = [r["timing"] for r in rs if r.get("timing")]
med = [x["median_ms"] for x in t]
print("  %-9s seed: medians %s ms (median %.5f); frames %.4f ms, walls %.4f ms (medians); verified %d of %d" %
      (sys.argv[2], " ".join("%.5f" % m for m in med), st.median(med) if med else 0,
       st.median([x.get("frame_wall_median_ms", 0) for x in t]) if t else 0,
       st.median([x.get("wall_median_ms", 0) for x in t]) if t else 0,
       sum(x.get("verified") is True for x in t), len(rs)))
PY
	done
	for f in forge_got forge_reply forge_spin outside_work memo_inputs; do
		$K eval softmax "$O/evil/$f.cu" tasks/softmax/seed.cu $B --json >"$O/$f.jsonl" 2>"$O/$f.err"
		python3 - "$O/$f.jsonl" "$f" <<'PY'
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
def one(r): return "%s%s %s ms%s" % (r["status"], "" if r["status"] == "correct" else " (" + r.get("reason", "")[:110] + ")",
                                    r.get("time_ms"), "" if (r.get("timing") or {}).get("verified") is not False else " unverified")
print("  %-13s %s; the seed beside it: %s" % (sys.argv[2], one(rs[0]) if rs else "no result", one(rs[1]) if len(rs) > 1 else "-"))
PY
	done
	$K eval softmax "$O/evil/memo_inputs.cu" --backend cuda --reference torch --json >"$O/memo_torch.jsonl" 2>"$O/memo_torch.err"
	python3 -c 'import json,sys; r=json.loads(open(sys.argv[1]).readline()); print("  memo_inputs with PyTorch inputs: %s %s ms (%s); checked runs %s" % (r["status"], r.get("time_ms"), r.get("reason","")[:100], (r.get("timing") or {}).get("checked_runs")))' "$O/memo_torch.jsonl" 2>/dev/null || echo "  memo_inputs with PyTorch inputs: no result ($(head -c 300 "$O/memo_torch.err"))"
done
