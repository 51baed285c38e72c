# cutlass_cuda.sh - a CUTLASS 3 SM90 GEMM (TMA + wgmma,
# tasks/hgemm/seed_cutlass.cu) evaluated on the bundled hgemm task
# with no flag and no variable but CUTLASS_DIR: kloop builds the device's
# arch-specific target (sm_90a) by itself, gives the source CUTLASS because
# it includes it, and the kernel is correct.  Built for plain sm_90
# (KLOOP_CUDA_ARCH=sm_90) the same kernel's body is compiled out, and the
# verdict says that the target is the cause.  Skipped with one line without a
# GPU or without a compute capability 9.0 one; its CUTLASS part without
# CUTLASS.  Code built for another GPU (KLOOP_CUDA_ARCH=sm_100a) gets a
# verdict naming the target and the device.
. tests/e2e/lib.sh
unset KLOOP_CUDA_ARCH
$KLOOP doctor --json >"$T/doctor.json" 2>/dev/null
dj() { json "$1" "$T/doctor.json" 2>/dev/null; }
if [ "$(dj gpu.ok)" != True ]; then
	skip "cutlass: no GPU here, the CUTLASS suite did not run"
	exit 0
fi
if [ "$(dj target.device_cc)" != 9.0 ]; then
	skip "cutlass: the GPU has compute capability $(dj target.device_cc), not 9.0 (the fixture is an SM90 kernel)"
	exit 0
fi
echo "# target $(dj target.detail)"
check "doctor --json names the target sm_90a and its flag ($(dj target.name), $(dj target.flag))" \
	sh -c '[ "$1" = sm_90a ] && [ "$2" = "-gencode=arch=compute_90a,code=sm_90a" ]' _ \
	"$(dj target.name)" "$(dj target.flag)"
export XDG_CACHE_HOME="${KLOOP_GPU_CACHE:-$T/cache}"
# code for another GPU (sm_100a on this 9.0): the verdict names both (the
# reference PyTorch's: a CUDA reference would be built for sm_100a too)
if python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
	KLOOP_CUDA_ARCH=sm_100a $KLOOP eval hgemm tasks/hgemm/seed.cu --reference torch --json \
		>"$T/b.json" 2>"$T/b.err"
	check "KLOOP_CUDA_ARCH=sm_100a on a 9.0 device: the verdict names the target, the device and the fix ($(json status "$T/b.json" 2>/dev/null): $(json reason "$T/b.json" 2>/dev/null | head -c 400)$(head -c 300 "$T/b.err"))" python3 -c "
import json; r=json.load(open('$T/b.json'))
assert r['status']!='correct' and 'built for sm_100a' in r['reason'] and 'compute capability 9.0' in r['reason'] and 'unset KLOOP_CUDA_ARCH' in r['reason'], r.get('reason')"
else
	skip "cutlass: no PyTorch on the GPU here: the sm_100a verdict was not tried"
fi
if [ "$(dj 'lib cutlass.ok')" != True ]; then
	skip "cutlass: CUTLASS is not here (set CUTLASS_DIR to a checkout): $(dj 'lib cutlass.detail')"
	exit 0
fi
echo "# $(dj 'lib cutlass.detail')"
G=tasks/hgemm/seed_cutlass.cu
$KLOOP eval hgemm $G --json >"$T/c.json" 2>"$T/c.err"
_n=$NFAIL
check "the CUTLASS SM90 GEMM is correct on hgemm with no flag ($(json status "$T/c.json" 2>/dev/null): $(json reason "$T/c.json" 2>/dev/null | head -c 400))" \
	test "$(json status "$T/c.json" 2>/dev/null)" = correct
check "its verdict names the target sm_90a, the device's 9.0, and the command builds sm_90a with CUTLASS and --expt-relaxed-constexpr" python3 -c "
import json; c=json.load(open('$T/c.json'))['compile']
assert c.get('target')=='sm_90a' and c.get('device_cc')=='9.0', c.get('target')
cmd=c['command']; assert '-gencode=arch=compute_90a,code=sm_90a' in cmd and '--expt-relaxed-constexpr' in cmd and '/include' in cmd, cmd"
echo "# CUTLASS SM90 GEMM: $(json time_ms "$T/c.json" 2>/dev/null) ms, baseline $(json baseline "$T/c.json" 2>/dev/null) $(json baseline_ms "$T/c.json" 2>/dev/null) ms, compile $(python3 -c "import json; print(json.load(open('$T/c.json'))['compile']['seconds'])" 2>/dev/null) s"
diag $_n "$T/c.err"
# the same source for plain sm_90: CUTLASS compiles its kernel's body out
_n=$NFAIL
KLOOP_CUDA_ARCH=sm_90 $KLOOP eval hgemm $G --json >"$T/p.json" 2>"$T/p.err"
check "built for sm_90 (KLOOP_CUDA_ARCH) the verdict is not correct and names the target and the device ($(json status "$T/p.json" 2>/dev/null): $(json reason "$T/p.json" 2>/dev/null | head -c 500))" python3 -c "
import json; r=json.load(open('$T/p.json'))
assert r['status']!='correct' and 'built for sm_90 ' in r['reason'] and 'compute capability 9.0' in r['reason'], r.get('reason')"
diag $_n "$T/p.err"
[ $NFAIL -eq 0 ]
