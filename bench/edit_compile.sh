#!/bin/sh
# edit_compile.sh - build and run bench/edit_compile.c (issue 40's edit
# loop, its compile: the softmax CUDA seed and 8 real kernel edits, built
# device-only into the kept host object, whole in two stages, and by the
# one nvcc command of before) against build/libkloop.a.  Needs nvcc, no GPU.
# Usage: sh bench/edit_compile.sh [R]   (from anywhere; R repetitions, default 3)
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
make -s build/libkloop.a
mkdir -p build/bench
TS=grammars/node_modules/tree-sitter/vendor/tree-sitter/lib/include
${CC:-cc} -std=c11 -D_GNU_SOURCE -O2 -g -Iinclude -Iengine -Iengine/measure/compile -Iengine/code -I$TS \
	-I/usr/include/cjson -o build/bench/edit_compile bench/edit_compile.c build/libkloop.a \
	-lcjson -ldl -lm -pthread
echo "# $(uname -sm), $(nproc) cores, $(date +%Y-%m-%d), $(nvcc --version | tail -n 1)"
KLOOP_INCLUDE=include ./build/bench/edit_compile "${1:-3}"
