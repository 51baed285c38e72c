#!/bin/sh
# bench/fuzz_long.sh - the long fuzzing runs behind bench/RESULTS.md: each
# reader's libFuzzer target (make fuzz-readers builds them) for RUNS
# executions or SECONDS, whichever ends first, one process each at nice 19,
# from its corpus in build/fuzz/corpus_NAME and its seeds; prints one line
# per target: executions, seconds, executions/s, corpus size, crashes.
# usage: sh bench/fuzz_long.sh [RUNS [SECONDS [TARGET...]]]
set -u
cd "$(dirname "$0")/.."
RUNS=${1:-10000000}
SECS=${2:-3600}
shift 2 2>/dev/null || shift $#
TARGETS=${*:-protocol sse task journal reply}
make -s fuzz-readers FUZZ_SECONDS=1 >/dev/null || exit 1
mkdir -p build/fuzz/long
for t in $TARGETS; do
	log=build/fuzz/long/$t.log
	start=$(date +%s)
	(cd build/fuzz && nice -n 19 ./fuzz_$t -runs="$RUNS" -max_total_time="$SECS" -max_len=65536 \
		-timeout=30 -rss_limit_mb=4096 -print_final_stats=1 -artifact_prefix=long/crash-$t- \
		corpus_$t ../../tests/fuzz/seeds/$t) >"$log" 2>&1
	rc=$?
	secs=$(($(date +%s) - start))
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	corp=$(ls build/fuzz/corpus_$t | wc -l)
	crashes=$(ls build/fuzz/long/crash-$t-* 2>/dev/null | wc -l)
	echo "fuzz_$t: ${execs:-?} executions in $secs s ($(( ${execs:-0} / (secs > 0 ? secs : 1) ))/s), corpus $corp inputs, $crashes crashes, exit $rc"
done
