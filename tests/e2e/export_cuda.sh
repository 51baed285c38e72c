# export_cuda.sh - `kloop export --kernelbench` on the GPU: for every bundled
# task's CUDA seed and for a KernelBench problem file (76_Gemm_Add_ReLU at
# today's size), the exported ModelNew, moved to the GPU, has Model's
# signatures and matches Model on fresh inputs (KernelBench's tolerance).
# Skipped with one line without a GPU or without PyTorch with CUDA.
. tests/e2e/lib.sh
if ! python3 -c 'import torch; assert torch.cuda.is_available()' >/dev/null 2>&1; then
	skip "export_cuda: no GPU (or no PyTorch with CUDA) here"
	exit 0
fi
export XDG_CACHE_HOME="${KLOOP_GPU_CACHE:-$T/cache}"
B="--backend cuda --budget ${KLOOP_GPU_BUDGET:-0.5} --trials 2"
compare() {
	python3 - "$1" <<'PY'
import importlib.util, inspect, sys, torch
spec = importlib.util.spec_from_file_location("exported", sys.argv[1])
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
assert inspect.signature(m.ModelNew.forward) == inspect.signature(m.Model.forward)
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
torch.manual_seed(7)
ref = m.Model(*m.get_init_inputs()).cuda()
torch.manual_seed(7)
new = m.ModelNew(*m.get_init_inputs()).cuda()
for trial in range(2):
    torch.manual_seed(2000 + trial)
    x = [t.cuda() for t in m.get_inputs()]
    with torch.no_grad():
        a, b = ref(*x), new(*x)
    torch.cuda.synchronize()
    assert a.shape == b.shape and a.dtype == b.dtype
    assert torch.allclose(a.float(), b.float(), atol=1e-2, rtol=1e-2), (a - b).abs().max().item()
PY
}
for t in softmax layernorm matmul hgemm gemm_bias_relu; do
	rm -f "$T/s.jsonl"
	$KLOOP eval $t tasks/$t/seed.cu $B --session "$T/s.jsonl" >/dev/null 2>&1
	$KLOOP export "$T/s.jsonl" 1 --kernelbench "$T/$t.py" --cuda "$T/$t.cu" 2>"$T/e"
	check "$t: the exported ModelNew matches its reference.py's Model on the GPU ($(head -c 200 "$T/e"))" compare "$T/$t.py"
	check "$t: --cuda writes the plain source" cmp -s "$T/$t.cu" tasks/$t/seed.cu
done
KB=tests/fixtures/torch/kb/76_Gemm_Add_ReLU.py
rm -f "$T/s.jsonl"
$KLOOP eval $KB tasks/gemm_bias_relu/seed.cu $B --size 0.25 --session "$T/s.jsonl" >/dev/null 2>&1
$KLOOP export "$T/s.jsonl" 1 --kernelbench "$T/76.py" 2>"$T/e"
check "76_Gemm_Add_ReLU (today's size): the exported ModelNew matches Model on the GPU" compare "$T/76.py"
