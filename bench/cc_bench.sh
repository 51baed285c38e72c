#!/bin/sh
# cc_bench.sh - build bench/NAME.c against build/libkloop.a into
# build/bench/NAME (the benchmarks that drive kloop's own modules, such as
# the compiler service: edit_compile.c, staged_check.c).
# Usage: sh bench/cc_bench.sh NAME   (from the repository's top)
set -eu
make -s build/libkloop.a
mkdir -p build/bench
TS=grammars/node_modules/tree-sitter/vendor/tree-sitter/lib/include
${CC:-cc} -std=c11 -D_GNU_SOURCE -O2 -g -Iinclude -Iengine -Iengine/measure/compile -Iengine/code -I$TS \
	-Ibench -I/usr/include/cjson -o "build/bench/$1" "bench/$1.c" build/libkloop.a -lcjson -ldl -lm -pthread
