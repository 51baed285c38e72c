#!/bin/sh
# bench/pool_sim.sh - the pool's own cost with many workers that answer at
# once (bench/fake_worker.c, bench/pool_sim.c): jobs per second, overhead
# per job and memory, for 1, 16, 64 and 256 workers.  Figures go to
# bench/RESULTS.md ("Worker pool").
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
make -s build/libkloop.a
mkdir -p build/bench
# engine/measure's headers: one folder per concept (the Makefile's MEASURE_DIRS)
M=$(for d in engine/measure/*/; do printf -- '-I%s ' "${d%/}"; done)
I="-Iinclude -Iengine $M -I/usr/include/cjson"
${CC:-cc} -std=c11 -D_GNU_SOURCE -O2 $I -o build/bench/fake_worker bench/fake_worker.c
${CC:-cc} -std=c11 -D_GNU_SOURCE -O2 $I -o build/bench/pool_sim bench/pool_sim.c build/libkloop.a \
	-lcjson -ldl -lm -pthread
echo "# $(uname -sm), $(nproc) cores, $(date +%Y-%m-%d)"
for n in 1 16 64 256; do
	./build/bench/pool_sim "$top/build/bench/fake_worker" "$n" 20000
done
