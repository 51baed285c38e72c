#!/bin/sh
# cascade_runners.sh - what one runner per candidate (every cascade stage in
# the same process) saves against a runner per stage: `kloop eval` of 16
# distinct variants of the softmax seed in one run (warm compile cache,
# --budget 0.1), by KLOOP_OLD (a bin/ directory built before the change)
# and by this tree, sandboxed and with --no-sandbox; ROUNDS rounds (3),
# interleaved.  Per candidate: wall seconds, the seconds the worker spent
# starting runners (the results' seconds.load), and runners started.
# Usage: KLOOP_OLD=DIR/bin bench/cascade_runners.sh [host|cuda]
# (DIR holds that commit's include/, tasks/ and prompts/ beside bin/)
set -eu
cd "$(dirname "$0")/.."
BE=${1:-host}
EXT=c
[ "$BE" = cuda ] && EXT=cu
OLD=${KLOOP_OLD:?KLOOP_OLD=DIR: a bin/ directory built before the change}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export XDG_CACHE_HOME="$T/cache"
SRCS=""
for i in $(seq 1 16); do
	# distinct machine code (a global of its own), so each is timed
	{ cat tasks/softmax/seed.$EXT; echo "int kl_bench_variant_$i = $i;"; } >"$T/v$i.$EXT"
	SRCS="$SRCS $T/v$i.$EXT"
done
F="--backend $BE --budget 0.1"
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
ok = sum(r.get("status") == "correct" for r in rs)
n = max(len(rs), 1)
wall = (float(sys.argv[3]) - float(sys.argv[2])) / n
load = sum(r["seconds"]["load"] for r in rs) / n
runners = sum(r.get("runners", 2) for r in rs) / n
print("%s %.4f %.4f %.2f %d/%d" % (sys.argv[4], wall, load * 1000, runners, ok, len(rs)))
PY
}
$OLD/kloop eval softmax $SRCS $F --json >/dev/null 2>&1 || true # warm the cache
for r in $(seq 1 "${ROUNDS:-3}"); do
	run old-sandbox "$OLD/kloop" --sandbox
	run new-sandbox ./bin/kloop --sandbox
	run old-nosandbox "$OLD/kloop" --no-sandbox
	run new-nosandbox ./bin/kloop --no-sandbox
done
echo "# $(uname -m), $(nproc) cores, $(date -u '+%F %H:%M UTC'), backend $BE, load $(cut -d' ' -f1 /proc/loadavg)"
echo "# run: s/candidate, load ms/candidate, runners/candidate (old: 2 assumed), correct"
python3 - "$T/rows" <<'PY'
import sys, statistics
rows = {}
for l in open(sys.argv[1]):
    n, w, ld, ru, ok = l.split()
    rows.setdefault(n, []).append((float(w), float(ld), float(ru), ok))
for n, v in rows.items():
    print("%-14s s/cand %s (median %.4f)  load ms/cand %s (median %.1f)  runners %.2f  correct %s" % (
        n, " ".join("%.4f" % x[0] for x in v), statistics.median(x[0] for x in v),
        " ".join("%.1f" % x[1] for x in v), statistics.median(x[1] for x in v), v[0][2], v[0][3]))
PY
