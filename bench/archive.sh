#!/bin/sh
# archive.sh - the innovation archive's figures for bench/RESULTS.md: import
# of N synthetic entries (bench/gen_archive.py), search latency and the
# prompt section at that size (bench/archive_bench.c, in one process), the
# same search through `kloop archive search` (a process each), size per entry,
# and backfill speed from a 10,000-candidate journal (bench/gen_journal.py).
# Usage: sh bench/archive.sh [N]   (default 100000; files in build/bench/)
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
N=${1:-100000}
make -s all build/libkloopsess.a
mkdir -p build/bench
# engine/measure's and sessions' headers: one folder per concept (the
# Makefile's MEASURE_DIRS and SESS_DIRS)
M=$(for d in engine/measure/*/; do printf -- '-I%s ' "${d%/}"; done)
S=$(for d in sessions/*/; do printf -- '-I%s ' "${d%/}"; done)
${CC:-cc} -std=c11 -D_GNU_SOURCE -O2 -g -Iinclude -Iengine $M -Iengine/code -Iengine/llm \
	$S -I/usr/include/cjson -o build/bench/archive_bench bench/archive_bench.c \
	build/libkloopsess.a build/libkloop.a -lcjson -ldl -lm -pthread -lsqlite3
D=build/bench/archive
rm -rf "$D"
mkdir -p "$D"
export KLOOP_ARCHIVE="$D/archive.db"
echo "# $(uname -sm), $(nproc) cores, $(date +%Y-%m-%d), SQLite $(python3 -c 'import sqlite3; print(sqlite3.sqlite_version)')"
python3 bench/gen_archive.py "$N" "$D/entries.jsonl"
t0=$(date +%s.%N)
./bin/kloop archive import "$D/entries.jsonl" >/dev/null
t1=$(date +%s.%N)
echo "import: $N entries ($(du -m "$D/entries.jsonl" | cut -f1) MB of JSON lines) in $(python3 -c "print('%.1f s, %.0f entries/s' % ($t1-$t0, $N/($t1-$t0)))")"
python3 -c 'import sqlite3,sys; sqlite3.connect(sys.argv[1]).execute("pragma wal_checkpoint(truncate)")' "$KLOOP_ARCHIVE"
echo
./build/bench/archive_bench "$KLOOP_ARCHIVE" 50
echo
python3 - "$KLOOP_ARCHIVE" <<'PY'
import subprocess, sys, time
ts = []
for _ in range(20):
    t0 = time.perf_counter()
    subprocess.run(["./bin/kloop", "archive", "search", "vectorize shared memory", "--json"],
                   stdout=subprocess.DEVNULL, check=True)
    ts.append((time.perf_counter() - t0) * 1000)
ts.sort()
print("kloop archive search 'vectorize shared memory' (a process each, open included): "
      "median %.1f ms, p90 %.1f ms" % (ts[10], ts[18]))
PY
python3 bench/gen_journal.py 10000 "$D/big.jsonl"
t0=$(date +%s.%N)
out=$(./bin/kloop archive add "$D/big.jsonl")
t1=$(date +%s.%N)
ev=$(wc -l <"$D/big.jsonl")
echo "backfill: $out"
echo "backfill: $ev events ($(du -m "$D/big.jsonl" | cut -f1) MB) in $(python3 -c "print('%.2f s, %.0f events/s' % ($t1-$t0, $ev/($t1-$t0)))")"
t0=$(date +%s.%N)
./bin/kloop archive add "$D/big.jsonl" >/dev/null
t1=$(date +%s.%N)
echo "backfill again (nothing new): $(python3 -c "print('%.2f s' % ($t1-$t0))")"
./build/bench/archive_bench "$D/live.db" 20 --live "$D/big.jsonl"
