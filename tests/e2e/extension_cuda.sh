# extension_cuda.sh - issue 38 on the GPU: a CUDA PyTorch extension and a
# KernelBench ModelNew with cuda_sources are correct candidates of the
# bundled softmax and of KernelBench problem files, on kloop's ATen stand-in
# (kloop's stream from getCurrentCUDAStream, kernels on the legacy default
# stream joined to it); an output written in place or copied from the
# call's arena (the verdict says which).  Skipped with one line where there
# is no GPU; the problem files where python3's PyTorch has no CUDA.
. tests/e2e/lib.sh
if ! $KLOOP doctor --json 2>/dev/null | python3 -c 'import json,sys; sys.exit(0 if json.load(sys.stdin)["gpu"]["ok"] else 1)'; then
	skip "extension_cuda: no GPU here, the CUDA extensions did not run"
	exit 0
fi
export XDG_CACHE_HOME="${KLOOP_GPU_CACHE:-$T/cache}"
F=tests/fixtures/torchext
B="--backend cuda --budget ${KLOOP_GPU_BUDGET:-1} ${KLOOP_GPU_FLAGS:-}"


$KLOOP eval softmax $F/softmax.cu $F/modelnew_cuda.py $F/copy.cu $B --json >"$T/sm.json" 2>"$T/sm.err"
n0=$NFAIL
for c in softmax.cu modelnew_cuda.py copy.cu; do
	check "$c is correct on the bundled softmax (its verdict: $(cand_field "$T/sm.json" $c status): $(cand_field "$T/sm.json" $c reason))" \
		test "$(cand_field "$T/sm.json" $c status)" = correct
	echo "# $c: $(cand_field "$T/sm.json" $c time_ms) ms, timed $(cand_field "$T/sm.json" $c timing.method); form $(cand_field "$T/sm.json" $c candidate_form)"
done
check "softmax.cu: a CUDA extension, its output written in place" \
	test "$(cand_field "$T/sm.json" softmax.cu candidate_form)" = \
	'{"form": "extension", "via": "stand-in", "language": "cuda", "entry": "forward"}'
check "modelnew_cuda.py: a ModelNew whose forward calls softmax_cuda, its sources as CUDA" \
	test "$(cand_field "$T/sm.json" modelnew_cuda.py candidate_form.form) $(cand_field "$T/sm.json" modelnew_cuda.py candidate_form.via) $(cand_field "$T/sm.json" modelnew_cuda.py candidate_form.language) $(cand_field "$T/sm.json" modelnew_cuda.py candidate_form.entry)" = \
	"modelnew stand-in cuda softmax_cuda"
check "modelnew_cuda.py: its load_inline flags kloop does not use are named as ignored ($(cand_field "$T/sm.json" modelnew_cuda.py candidate_form.notes))" \
	sh -c "echo '$(cand_field "$T/sm.json" modelnew_cuda.py candidate_form.notes)' | grep -q 'extra_cflags ignored'"
check "copy.cu: its result copied from the arena into the output, and said so" \
	test "$(cand_field "$T/sm.json" copy.cu candidate_form.copied)" = '["y"]'
diag $n0 "$T/sm.err"

if ! python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
	skip "extension_cuda: python3's PyTorch has no CUDA, the KernelBench problem files did not run"
	exit 0
fi
$KLOOP eval tests/fixtures/torch/kb/23_Softmax.py $F/softmax.cu $F/modelnew_cuda.py \
	--shapes batch_size=256,dim=16384 $B --json >"$T/kb.json" 2>"$T/kb.err"
n0=$NFAIL
for c in softmax.cu modelnew_cuda.py; do
	check "$c is correct on KernelBench's 23_Softmax ($(cand_field "$T/kb.json" $c status): $(cand_field "$T/kb.json" $c reason))" \
		test "$(cand_field "$T/kb.json" $c status)" = correct
	echo "# 23_Softmax $c: $(cand_field "$T/kb.json" $c time_ms) ms, speedup $(cand_field "$T/kb.json" $c speedup)x"
done
diag $n0 "$T/kb.err"

# what the stand-in lacks, on the GPU: at::softmax on kloop's stream and a
# kernel on the legacy default stream, built against python3's PyTorch
$KLOOP eval softmax $F/aten_softmax.cu --python python3 $B --json >"$T/pt.json" 2>"$T/pt.err"
n0=$NFAIL
check "aten_softmax.cu: built against PyTorch's own headers, correct ($(cand_field "$T/pt.json" aten_softmax.cu status): $(cand_field "$T/pt.json" aten_softmax.cu reason))" \
	test "$(cand_field "$T/pt.json" aten_softmax.cu status) $(cand_field "$T/pt.json" aten_softmax.cu candidate_form.via)" = "correct pytorch"
echo "# aten_softmax.cu: $(cand_field "$T/pt.json" aten_softmax.cu time_ms) ms; compile $(cand_field "$T/pt.json" aten_softmax.cu compile.seconds) s; form $(cand_field "$T/pt.json" aten_softmax.cu candidate_form)"
diag $n0 "$T/pt.err"
