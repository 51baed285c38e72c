# sandbox_cuda.sh - the CUDA evil candidates (tests/fixtures/evil_cuda)
# against the sandboxed runner on the GPU: buffers shared with CUDA IPC,
# compared by the worker's own kernels.  Skipped with one line without a GPU.
. tests/e2e/lib.sh
if ! $KLOOP doctor --json 2>/dev/null | python3 -c 'import json,sys; sys.exit(0 if json.load(sys.stdin)["gpu"]["ok"] else 1)'; then
	skip "sandbox_cuda: no GPU here, the CUDA sandbox suite did not run"
	exit 0
fi
export XDG_CACHE_HOME="${KLOOP_GPU_CACHE:-$T/cache}"
E=tests/fixtures/evil_cuda
# the CUDA reference kernel: fresh generated inputs for every timed run
B="--backend cuda --sandbox --reference cuda --budget ${KLOOP_GPU_BUDGET:-1} --timeout 60"
mkdir -p "$T/evil"
for f in $E/*.cu; do
	{ cat "$E/softmax_kernel.cuh"; grep -v '#include "softmax_kernel.cuh"' "$f"; } >"$T/evil/$(basename "$f")"
done
V="$T/evil"
echo "# sandbox: $($KLOOP doctor | grep '^sandbox')"
field() {
	python3 -c 'import json,sys
v=json.loads(open(sys.argv[3]).read().splitlines()[int(sys.argv[1])])
for k in sys.argv[2].split("."):
    v=v.get(k) if isinstance(v,dict) else None
print(v)' "$1" "$2" "$3"
}
ev() {
	out=$1
	shift
	$KLOOP eval softmax "$@" $B --json >"$out" 2>"$out.err"
	echo "# $(basename "$out"): $(cut -c1-300 "$out" | tr '\n' ' ') $(head -c 300 "$out.err")"
}

ev "$T/seed.json" tasks/softmax/seed.cu
check "the CUDA seed is correct in the sandbox ($(field 0 reason "$T/seed.json"))" test "$(field 0 status "$T/seed.json")" = correct
check "some of its timed runs were checked ($(field 0 timing.checked_runs "$T/seed.json"))" \
	python3 -c "import sys; assert float(sys.argv[1]) >= 1" "$(field 0 timing.checked_runs "$T/seed.json")"

ev "$T/ra.json" $V/retaddr_skip.cu
check "retaddr_skip.cu: correct (every call looks alike), honest speedup ($(field 0 speedup "$T/ra.json")x)" \
	python3 -c "import sys; assert sys.argv[1]=='correct' and float(sys.argv[2]) < 20" \
	"$(field 0 status "$T/ra.json")" "$(field 0 speedup "$T/ra.json")"

ev "$T/cs.json" $V/count_skip.cu
check "count_skip.cu: incorrect in a checked timed run ($(field 0 reason "$T/cs.json"))" \
	sh -c "test '$(field 0 status "$T/cs.json")' = incorrect && grep -q 'timed run' '$T/cs.json'"

rm -rf /tmp/kloop-evil-cache-gpu
for i in 1 2 3; do
	ev "$T/oc$i.json" $V/output_cache.cu
	check "output_cache.cu run $i: correct, so no cache hit (a hit returns 77)" test "$(field 0 status "$T/oc$i.json")" = correct
done
check "output_cache.cu: nothing written to the host's /tmp" test ! -e /tmp/kloop-evil-cache-gpu

ev "$T/ff.json" $V/forge_fds.cu tasks/softmax/seed.cu
check "forge_fds.cu: nothing forged, both correct" \
	sh -c "! grep -q forged '$T/ff.json' && test '$(field 0 status "$T/ff.json") $(field 1 status "$T/ff.json")' = 'correct correct'"

ev "$T/pc.json" $V/patch_compare.cu
check "patch_compare.cu: incorrect, NaN seen ($(field 0 reason "$T/pc.json"))" \
	sh -c "test '$(field 0 status "$T/pc.json")' = incorrect && grep -q NaN '$T/pc.json'"

ev "$T/th.json" $V/threads.cu tasks/softmax/seed.cu
check "threads.cu: it and the innocent seed after it are both correct" \
	test "$(field 0 status "$T/th.json") $(field 1 status "$T/th.json")" = "correct correct"
