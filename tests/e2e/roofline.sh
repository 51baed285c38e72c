# roofline.sh - a roofline for every type, as the report shows it (issue
# 36): a session whose best is an fp16 GEMM at 69% of the fp16 tensor-core
# floor (the CUDA-L2 4096^3 kernel's result on an H200, written by hand:
# the measuring needs a GPU, eval_cuda.sh runs it there) says in kloop
# report which floor binds, its type, its peaks and the clock they were
# measured at, in the best's line and in the table cell's title.
. tests/e2e/lib.sh
export PYTHONDONTWRITEBYTECODE=1
cat >"$T/s.jsonl" <<'J'
{"type":"session_started","task":"hgemm","ts":1,"seq":1}
{"type":"candidate_added","id":1,"source":"int x;","name":"cutlass_4096.cu","ts":1,"seq":2}
{"type":"eval_finished","candidate":1,"ts":2,"seq":3,"result":{"status":"correct","speedup":1.04,"baseline_ms":0.21,"timing":{"median_ms":0.2017},"roofline":{"bytes":100663296,"bandwidth_gbs":4800,"memory_floor_ms":0.02097,"compute":"fp16","compute_unit":"tensor-core","flops":137438953472,"peak_tflops":989.4,"measured_peak_tflops":781.25,"clock_mhz":1980,"compute_floor_ms":0.1389,"floor_ms":0.1389,"bound":"compute","fraction":0.6887}}}
J
$KLOOP report "$T/s.jsonl" -o "$T/r.html" >"$T/out" 2>&1
want="69% of the fp16 tensor-core roofline (137.4 GFLOP at 989.4 TFLOP/s, the datasheet&#39;s; 781.2 measured at 1980 MHz: 0.1389 ms)"
check "report: the best's line names the binding floor, its type, peaks and clock ($(grep -o 'best-roofline[^<]*' "$T/r.html"; cat "$T/out"))" \
	grep -qF "Roofline: $want." "$T/r.html"
check "report: the table's roofline cell is 69%, its words in its title" \
	grep -qF "title=\"$want\">69%</td>" "$T/r.html"
# a KernelBench problem's compute type from the dtypes that reach its
# products (torchref.py traces a forward; torch_serve.sh runs it with
# PyTorch): the mapping, with the standard library alone
check "torchref.py: f16 operands are fp16, bf16 bf16, fp8 fp8, int8 alone int8, fp32 stays fp32, none is none" \
	python3 - <<'PY'
import sys, types
sys.path.insert(0, "engine/measure/reference")
import torchref
class D:
    def __init__(self, f):
        self.is_floating_point = f
t = types.SimpleNamespace(float16=D(True), bfloat16=D(True), float32=D(True), int8=D(False),
                          float8_e4m3fn=D(True))
c = torchref.compute_of_dtypes
got = [c(t, set()), c(t, {t.float16, t.float32}), c(t, {t.bfloat16}), c(t, {t.float8_e4m3fn}),
       c(t, {t.int8}), c(t, {t.int8, t.float32}), c(t, {t.float32})]
want = [None, "fp16", "bf16", "fp8", "int8", "fp32", "fp32"]
assert got == want, got
PY
exit 0
