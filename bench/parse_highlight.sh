#!/bin/sh
# parse_highlight.sh - build and run the code-pane benchmark (first paint,
# keystroke, outline, tunables: bench/parse_highlight.c) against build/libkloop.a; the generated
# 5,000-line source is written to build/bench/gen_5000.cu (not committed).
# Usage: sh bench/parse_highlight.sh   (from anywhere)
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
make -s build/libkloop.a
mkdir -p build/bench
${CC:-cc} -std=c11 -D_GNU_SOURCE -O2 -g -Iengine -Iengine/code -Igrammars/node_modules/tree-sitter/vendor/tree-sitter/lib/include \
	-I/usr/include/cjson -o build/bench/parse_highlight bench/parse_highlight.c build/libkloop.a \
	-lcjson -ldl -lm -pthread
echo "# $(uname -sm), $(nproc) cores, $(date +%Y-%m-%d)"
./build/bench/parse_highlight build/bench/gen_5000.cu
