#!/bin/sh
# staged_check.sh - build and run bench/staged_check.c: the staged CUDA
# build (compile.c, hostpart.h) checked over many sources, each edited in a
# kernel, device-only against whole, byte for byte.  Needs nvcc, no GPU.
# Usage: sh bench/staged_check.sh [FILE.cu ...]   (default: every .cu the
# repository tracks; CUTLASS_DIR=CHECKOUT adds CUTLASS for CuTe sources)
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
sh bench/cc_bench.sh staged_check
echo "# $(uname -sm), $(nproc) cores, $(date +%Y-%m-%d), $(nvcc --version | tail -n 1), $(git rev-parse --short HEAD)"
if [ $# -eq 0 ]; then
	set -- $(git ls-files '*.cu')
fi
KLOOP_INCLUDE=include ./build/bench/staged_check "$@"
