#!/bin/sh
# staged_check.sh - build and run bench/staged_check.c: the staged CUDA
# build (compile.c, hostpart.h) checked over many sources, each edited in a
# kernel, device-only against whole, byte for byte.  Needs nvcc, no GPU.
# Usage: sh bench/staged_check.sh [FILE.cu ...]   (default: every .cu the
# repository tracks; CUTLASS_DIR=CHECKOUT adds CUTLASS for CuTe sources)
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
# on a GPU machine without cJSON's headers, the one carry.sh built
B=${BENCH_BIN:-}
if [ -z "$B" ]; then
	sh bench/cc_bench.sh staged_check
	B=build/bench
fi
echo "# $(uname -sm), $(nproc) cores, $(date +%Y-%m-%d), $(nvcc --version | tail -n 1), $(git rev-parse --short HEAD 2>/dev/null)"
if [ $# -eq 0 ]; then
	set -- $(git ls-files '*.cu' 2>/dev/null || find bench engine tasks tests -name '*.cu' | sort)
fi
KLOOP_INCLUDE=include "$B/staged_check" "$@"
