#!/bin/sh
# same_call.sh - what "every call is the same call" (issue 37, items 1 and
# 2) costs an evaluation on the host: `kloop eval TASK seed` with a build
# before and one after, interleaved (so that both see the machine's load
# alike), for the host seeds of softmax, layernorm and matmul, N rounds
# each (SAME_CALL_N, default 5) at the default budget, compilers' cache
# warm.  Prints each build's medians: the wall time of the evaluation, the
# result's check and time seconds, the batch's seconds, the runs checked
# after their call and after the batch; and after/before of the wall time.
# The figures go into bench/RESULTS.md; nothing here is asserted.
# Usage: bench/same_call.sh BEFORE_KLOOP [AFTER_KLOOP]   (default ./bin/kloop)
set -eu
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { echo "usage: bench/same_call.sh BEFORE_KLOOP [AFTER_KLOOP]" >&2; exit 2; }
B=$1
A=${2:-./bin/kloop}
N=${SAME_CALL_N:-5}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
echo "machine: $(uname -m), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); $(date -u '+%F %H:%M UTC'); load $(cut -d' ' -f1-3 /proc/loadavg)"
one() { # KLOOP LABEL TASK
	s=$(python3 -c 'import time; print(time.time())')
	XDG_CACHE_HOME="$T/cache-$2" $1 eval "$3" "tasks/$3/seed.c" --backend host --json >"$T/r.json" 2>/dev/null || true
	e=$(python3 -c 'import time; print(time.time())')
	python3 - "$T/r.json" "$s" "$e" "$2" "$3" >>"$T/all.jsonl" <<'PY'
import json, sys
try:
    r = json.loads(open(sys.argv[1]).readline())
except ValueError:
    r = {}
t = r.get("timing") or {}
s = r.get("seconds") or {}
print(json.dumps({"build": sys.argv[4], "task": sys.argv[5], "status": r.get("status"),
                  "wall": float(sys.argv[3]) - float(sys.argv[2]), "check": s.get("check"),
                  "time": s.get("time"), "batch": t.get("batch_seconds"), "ms": r.get("time_ms"),
                  "after": t.get("checked_after_runs"), "batch_checked": t.get("batch_checked_runs"),
                  "verified": t.get("verified")}))
PY
}
for task in softmax layernorm matmul; do
	one "$B" before $task # the compilers' caches warmed
	one "$A" after $task
	: >"$T/all.jsonl"
	for i in $(seq 1 "$N"); do
		one "$B" before $task
		one "$A" after $task
	done
	python3 - "$T/all.jsonl" "$task" <<'PY'
import json, statistics as st, sys
rs = [json.loads(l) for l in open(sys.argv[1])]
def med(b, k):
    v = [r[k] for r in rs if r["build"] == b and isinstance(r.get(k), (int, float))]
    return st.median(v) if v else float("nan")
for b in ("before", "after"):
    ok = sum(r["status"] == "correct" for r in rs if r["build"] == b)
    ver = sum(r["verified"] is True for r in rs if r["build"] == b)
    print("  %-9s %-6s wall %6.3f s  check %6.3f  time %6.3f  batch %6.3f  (%d correct, %d verified; %s ms; checked after the call %s, after the batch %s)" %
          (sys.argv[2], b, med(b, "wall"), med(b, "check"), med(b, "time"), med(b, "batch"), ok, ver,
           "%.4g" % med(b, "ms"), med(b, "after"), med(b, "batch_checked")))
print("  %-9s after/before wall %.3f" % (sys.argv[2], med("after", "wall") / med("before", "wall")))
PY
done
