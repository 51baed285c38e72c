#!/bin/sh
# sandbox.sh - what the sandboxed runner and the checked timed runs cost per
# candidate: `kloop eval` of 8 variants of the softmax seed (each with a
# global of its own, so each is timed) in one run (warm compile cache,
# --budget 0.5), as kloop did before issue 14 (KLOOP_OLD: a bin/ directory
# built from an earlier commit, when given, with include/, tasks/ and
# prompts/ beside it: the first wave is ebe0be3), with
# --no-sandbox (a runner process, checked runs, no bubblewrap) and with
# bubblewrap; on the GPU also with bubblewrap and the spare runner off and
# started after a runner ends (KLOOP_SPARE_RUNNER; the default is "ready":
# started as soon as the previous runner is ready); 3 rounds, interleaved.
# Per candidate: wall seconds, timed runs, checked runs, the median round
# trip of a run beyond the time it reported (the runner's per-run
# overhead), the milliseconds spent starting (load) and ending (end) its
# runners, and the median of the candidates' timed medians (whether a spare
# starting beside a timed candidate moves its time).
# Usage: bench/sandbox.sh [host|cuda]     (cuda: run on the GPU machine)
set -eu
cd "$(dirname "$0")/.."
BE=${1:-host}
EXT=c
[ "$BE" = cuda ] && EXT=cu
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export XDG_CACHE_HOME="$T/cache"
SRCS=""
for i in 1 2 3 4 5 6 7 8; do
	# distinct machine code (a global of its own): identical copies would be
	# checked but not timed again (same machine code), which is not the cost
	# of a candidate
	{ cat tasks/softmax/seed.$EXT; echo "int kl_bench_copy_$i = $i;"; } >"$T/c$i.$EXT"
	SRCS="$SRCS $T/c$i.$EXT"
done
F="--backend $BE --budget 0.5"
[ "$BE" = cuda ] && F="$F --reference cuda"
run() { # run NAME KLOOP [flags]
	name=$1 k=$2
	shift 2
	s=$(python3 -c 'import time; print(time.time())')
	$k eval softmax $SRCS $F --json "$@" >"$T/r.json" 2>"$T/err" || true
	e=$(python3 -c 'import time; print(time.time())')
	python3 - "$T/r.json" "$s" "$e" "$name" <<'PY' >>"$T/rows"
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
ok = [r for r in rs if r.get("status") == "correct"]
wall = (float(sys.argv[3]) - float(sys.argv[2])) / max(len(rs), 1)
runs = sum(r["timing"]["count"] for r in ok) / max(len(ok), 1)
chk = sum(r["timing"].get("checked_runs", 0) for r in ok) / max(len(ok), 1)
over = [r["timing"]["wall_median_ms"] - r["timing"]["median_ms"] for r in ok if "wall_median_ms" in r["timing"]]
over = sorted(over)[len(over) // 2] * 1000 if over else float("nan")
med = lambda a: sorted(a)[len(a) // 2] if a else float("nan")
load = med([r["seconds"]["load"] * 1000 for r in ok if "seconds" in r])
end = med([r["seconds"].get("end", float("nan")) * 1000 for r in ok if "seconds" in r])
tmed = med([r["timing"]["median_ms"] for r in ok])
print("%s %.3f %.0f %.1f %.1f %d %.1f %.1f %.5f" % (sys.argv[4], wall, runs, chk, over, len(ok), load, end, tmed))
PY
}
# warm the compile cache
./bin/kloop eval softmax $SRCS $F --json >/dev/null 2>&1 || true
: >"$T/rows"
for round in 1 2 3; do
	[ -n "${KLOOP_OLD:-}" ] && run before "$KLOOP_OLD/kloop"
	run no-sandbox ./bin/kloop --no-sandbox
	run sandbox ./bin/kloop --sandbox
	if [ "$BE" = cuda ]; then
		run spare-off "env KLOOP_SPARE_RUNNER=off ./bin/kloop" --sandbox
		run spare-after "env KLOOP_SPARE_RUNNER=after ./bin/kloop" --sandbox
	fi
done
echo "machine: $(uname -m), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load $(cut -d' ' -f1-3 /proc/loadavg); $(date -u +%F); backend $BE"
python3 - "$T/rows" <<'PY'
import sys, collections
rows = collections.OrderedDict()
for l in open(sys.argv[1]):
    n, *v = l.split()
    rows.setdefault(n, []).append([float(x) for x in v])
med = lambda a: sorted(a)[len(a) // 2]
base = med([r[0] for r in rows["before"]]) if "before" in rows else None
print("%-11s %12s %10s %8s %8s %9s %9s %8s %7s %10s" % ("", "s/candidate", "vs before", "runs", "checked", "rt us/run", "correct",
      "load ms", "end ms", "timed ms"))
for n, rs in rows.items():
    w = med([r[0] for r in rs])
    print("%-11s %12.3f %10s %8.0f %8.1f %9.1f %9s %8.1f %7.1f %10.5f" % (n, w, "%+.1f%%" % (100 * (w / base - 1)) if base else "-",
          med([r[1] for r in rs]), med([r[2] for r in rs]), med([r[3] for r in rs]),
          "/".join(str(int(r[4])) for r in rs), med([r[5] for r in rs]), med([r[6] for r in rs]), med([r[7] for r in rs])))
PY
