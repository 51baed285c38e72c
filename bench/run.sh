#!/bin/sh
# bench/run.sh - `make bench`: every benchmark of kloop itself that runs on
# this machine, one after the other, each printing its own table for
# bench/RESULTS.md.  GPU benchmarks (bench/gpu/) need a GPU and are run by hand.
set -u
cd "$(dirname "$0")/.."
status=0
for b in bench/parse_highlight.sh bench/host_eval.sh bench/tui.sh bench/sandbox.sh; do
	echo "## $b"
	sh "$b" || { echo "bench/run.sh: $b failed" >&2; status=1; }
	echo
done
exit $status
