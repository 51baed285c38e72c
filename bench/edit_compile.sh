#!/bin/sh
# edit_compile.sh - build and run bench/edit_compile.c (issue 40's edit
# loop, its compile: the softmax CUDA seed and 8 real kernel edits, built
# device-only into the kept host object, whole in two stages, and by the
# one nvcc command of before) against build/libkloop.a.  Needs nvcc, no GPU.
# Usage: sh bench/edit_compile.sh [R]   (from anywhere; R repetitions, default 3)
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
# on a GPU machine without cJSON's headers, the one carry.sh built
B=${BENCH_BIN:-}
if [ -z "$B" ]; then
	sh bench/cc_bench.sh edit_compile
	B=build/bench
fi
echo "# $(uname -sm), $(nproc) cores, $(date +%Y-%m-%d), $(nvcc --version | tail -n 1)"
KLOOP_INCLUDE=include "$B/edit_compile" "${1:-3}"
