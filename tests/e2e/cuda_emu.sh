# cuda_emu.sh - the bundled tensor-core tasks' CUDA seeds run on the CPU
# through tests/cuda_emu/emu.h (their CUDA built-ins emulated: threads,
# barriers, shuffles, WMMA, cp.async), each checked against a double
# reference at shapes that exercise its edges (partial tiles, K not a
# multiple of the K tile, causal masking, both head dims). It checks the
# seeds' indexing and logic where there is no GPU; the GPU's own verdicts
# are bench/gpu/tasks_check.sh's and eval_cuda.sh's.
. tests/e2e/lib.sh
E=tests/cuda_emu
if ! echo '#include <barrier>
int main(){std::barrier<> b(1); b.arrive_and_wait();}' | g++ -std=c++20 -x c++ - -o "$T/probe" -pthread 2>/dev/null; then
	skip "cuda_emu: no g++ with C++20 <barrier> here, the emulated seeds did not run"
	exit 0
fi
# build TASK: the seed rewritten for emu.h and linked with the harness
build() {
	python3 $E/emu_cu.py tasks/$1/seed.cu "$T/$1.cpp" &&
		g++ -std=c++20 -O2 -w -I$E -Iinclude -o "$T/$1" "$T/$1.cpp" $E/harness.cpp -pthread 2>"$T/$1.err"
}
# emu TASK ARGS...: run the harness (its own ok / not ok line)
emu() {
	t=$1
	shift
	if [ ! -x "$T/$t" ]; then
		fail "$t: the emulated seed did not build: $(head -c 400 "$T/$t.err" 2>/dev/null)"
		return
	fi
	out=$("$T/$t" "$@" 2>&1)
	case "$out" in
	"ok - "*) echo "$out" | sed "s/^ok - /ok - $t seed.cu: /" ;;
	*) fail "$t seed.cu: $out" ;;
	esac
}
for t in bf16_gemm hgemm fp8_gemm rmsnorm_bf16 attention_bf16 attention_causal_bf16; do build $t; done
emu bf16_gemm gemm_bf16 200 136 72
emu bf16_gemm gemm_bf16 256 256 256
emu bf16_gemm gemm_bf16 16 128 32
emu bf16_gemm refuse_gemm_bf16 64 100 64
emu fp8_gemm gemm_fp8 200 136 80
emu fp8_gemm gemm_fp8 256 128 512
emu fp8_gemm refuse_gemm_fp8 64 128 72
emu hgemm gemm_f16 200 136 72
emu hgemm gemm_f16 256 128 512
emu rmsnorm_bf16 rmsnorm 3 1032
emu rmsnorm_bf16 rmsnorm 4 8192
emu attention_bf16 attention 1 2 128 64
emu attention_bf16 attention 1 1 128 128
emu attention_causal_bf16 attention_causal 1 2 128 64
emu attention_causal_bf16 attention_causal 2 1 192 128
# the harness can fail: the unmasked seed judged as a causal one
if [ -x "$T/attention_bf16" ]; then
	out=$("$T/attention_bf16" attention_causal 1 1 128 64 2>&1)
	check "the harness fails a wrong answer: the unmasked seed against the causal reference ($out)" \
		sh -c "echo '$out' | grep -q '^not ok - .* elements mismatch'"
fi
[ $NFAIL -eq 0 ]
