#!/bin/sh
# bench/gpu/carry.sh - on the development VM, what a GPU machine that has
# nvcc, PyTorch and the driver but none of kloop's own dependencies needs
# in order to run kloop's GPU suites and benchmarks: a build in
# build-gpu/ (make BUILD=build-gpu/obj BIN=build-gpu/bin) and .devdeps/
# (gitignored): lib/ (libcjson, libedit: what such machines lack), bin/bwrap,
# cutlass/ (include/ and tools/util/include/, from a CUTLASS checkout or a
# bare git mirror given as the argument, e.g. the one `fetch` brings), and
# lib.sh, which a command there sources first:
#
#   . .devdeps/lib.sh; step eval_cuda 300 env E2E=eval_cuda sh tests/run.sh; pack
#
# lib.sh puts the libraries and bwrap first, copies build-gpu/bin to the
# tree's bin/ (kloop finds its data beside it) and points KLOOP there, CUTLASS_DIR at the carried headers, KLOOP_GPU_CACHE at /tmp/kgc and
# BENCH_BIN at build-gpu/bin (edit_compile and staged_check, built here),
# and gives step NAME SECONDS CMD... (the command's output in $OUT/NAME.log,
# its OUT $OUT/NAME,
# a line in $OUT/summary: its exit status, seconds, ok and not ok counts)
# and pack (what is under $OUT listed, then all of it but compile caches
# moved into $OUT/logs.tgz beside summary: the device tool brings back at
# most 8 files).
# Carry "build-gpu/bin" and ".devdeps".  Usage: bench/gpu/carry.sh [CUTLASS]
set -eu
cd "$(dirname "$0")/../.."
D=.devdeps
mkdir -p "$D/lib" "$D/bin"
make BUILD=build-gpu/obj BIN=build-gpu/bin -j2 all >"$D/build.log" 2>&1 ||
	{ tail -20 "$D/build.log"; exit 1; }
# the build is the tree's: a stale one carried would test old code
strings build-gpu/bin/kloop-worker | grep -q "kloop_torch_real.h" ||
	{ echo "carry: build-gpu/bin/kloop-worker is not this tree's build" >&2; exit 1; }
for l in libcjson.so.1 libedit.so.2; do
	p=$(ldconfig -p | awk -v l="$l" '$1 == l && /x86-64/ {print $NF; exit}')
	[ -n "$p" ] && cp -L "$p" "$D/lib/"
done
cp -L "$(command -v bwrap)" "$D/bin/"
# the benchmarks that drive kloop's compiler service (BENCH_BIN there)
for b in edit_compile staged_check; do
	sh bench/cc_bench.sh $b && cp build/bench/$b build-gpu/bin/
done
if [ $# -ge 1 ]; then
	rm -rf "$D/cutlass" && mkdir -p "$D/cutlass"
	if [ -d "$1/include/cutlass" ]; then
		cp -r "$1/include" "$D/cutlass/" && mkdir -p "$D/cutlass/tools/util" &&
			cp -r "$1/tools/util/include" "$D/cutlass/tools/util/"
	else
		git --git-dir="$1" archive HEAD include tools/util/include | tar -x -C "$D/cutlass"
	fi
fi
cat >"$D/lib.sh" <<'LIB'
# .devdeps/lib.sh - sourced first on the GPU machine (bench/gpu/carry.sh)
D=$(pwd)/.devdeps
export LD_LIBRARY_PATH="$D/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PATH="$D/bin:$PATH"
# kloop finds include/, tasks/ and its helpers beside its bin/ (exe_data_dir):
# the carried build runs from the tree's bin/, which is not carried
rm -rf bin && cp -a build-gpu/bin bin
export KLOOP="$(pwd)/bin/kloop"
export KLOOP_GPU_CACHE=/tmp/kgc
export BENCH_BIN="$(pwd)/bin"
[ -d "$D/cutlass/include/cutlass" ] && export CUTLASS_DIR="$D/cutlass"
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
S="$OUT/summary"
step() {
	_n=$1 _t=$2
	shift 2
	_s=$(date +%s)
	mkdir -p "$OUT/$_n"
	OUT="$OUT/$_n" timeout "$_t" "$@" >"$OUT/$_n.log" 2>&1
	_rc=$?
	echo "$_n: exit $_rc, $(($(date +%s) - _s)) s, $(grep -c '^ *ok - ' "$OUT/$_n.log") ok, $(grep -c '^ *not ok - ' "$OUT/$_n.log") not ok" >>"$S"
}
pack() {
	# the device tool brings back at most 8 files: every log in one archive
	ls -laR "$OUT" >"$OUT/files"
	(cd "$OUT" && tar czf /tmp/logs.tgz --exclude=cache . &&
		find . -mindepth 1 -maxdepth 1 ! -name summary -exec rm -rf {} + && mv /tmp/logs.tgz .)
	cat "$S"
}
LIB
echo "carry: build-gpu/bin and $D ready ($(du -sh "$D" build-gpu/bin | awk '{print $1}' | tr '\n' ' '))"
