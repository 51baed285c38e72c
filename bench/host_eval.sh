#!/bin/sh
# host_eval.sh - wall time of `kloop eval` on the host softmax seed, with a
# cold and a warm compiler cache, split into compile, load, check and time
# (and the rest: worker start, inputs, the reference).  Prints a table.
# KLOOP=PATH times another build (a before and after on one machine).
set -eu
cd "$(dirname "$0")/.."
K=${KLOOP:-./bin/kloop}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
run() {
	s=$(python3 -c 'import time; print(time.time())')
	XDG_CACHE_HOME="$T/cache" $K eval softmax tasks/softmax/seed.c --backend host --json "$@" >"$T/r.json"
	e=$(python3 -c 'import time; print(time.time())')
	python3 - "$T/r.json" "$s" "$e" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); s = r["seconds"]
wall = float(sys.argv[3]) - float(sys.argv[2])
rest = wall - s["compile"] - s["load"] - s["check"] - s["time"]
print("%6.3f %7.3f %6.4f %6.3f %6.3f %6.3f   %s ms, %d runs" % (wall, s["compile"], s["load"], s["check"], s["time"], rest,
      "%.4g" % r["time_ms"], r["timing"]["count"]))
PY
}
echo "machine: $(uname -m), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); $(date -u +%F)"
echo "  wall compile   load  check   time   rest   (seconds; rest = worker start, inputs, reference)"
printf "cold "; run
for i in 1 2 3; do printf "warm "; run; done
echo "with --budget 0.5:"
for i in 1 2 3; do printf "warm "; run --budget 0.5; done
