#!/bin/sh
# bench/gpu/precision.sh - calibrating the precision verdict (issue 25): for
# the bundled tasks (CUDA reference with float64 outputs, and PyTorch in
# float64) and KernelBench problems (matmul with rand and randn inputs,
# softmax, Gemm+Add+ReLU, conv, cumsum, GELU), the relative L2 error against
# float64 of faithful candidates and of reduced-precision ones, the
# reference's own, the rounding floor, and what TF32/f16 and bf16 inputs
# would make (emulated on the same data).  One line per candidate; the
# table goes to bench/RESULTS.md.
# Usage: bench/gpu/precision.sh [OUTDIR]
set -u
cd "$(dirname "$0")/../.."
O=${1:-/tmp/kloop-precision}
mkdir -p "$O"
K=${KLOOP:-./bin/kloop}
export XDG_CACHE_HOME=${KLOOP_GPU_CACHE:-$O/cache}
P=tests/fixtures/precision
KB=tests/fixtures/torch/kb
G=bench/gpu/precision
B="--backend cuda --budget 0.2"
echo "device: $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader); torch $(python3 -c 'import torch; print(torch.__version__)' 2>/dev/null); $(date -u '+%F %H:%M UTC')"
# KernelBench's matmul with torch.randn inputs, and GELU's tanh form
sed 's/torch.rand(M, K)/torch.randn(M, K)/; s/torch.rand(K, N)/torch.randn(K, N)/' \
	$KB/2_Standard_matrix_multiplication_.py >"$O/2_matmul_randn.py"
{
	echo '#define GELU_TANH'
	cat $G/gelu.cu
} >"$O/gelu_tanh.cu"
# the softmax fixtures, each whole
for f in softmax_fast_exp softmax_tf32_inputs softmax_bf16_outputs; do
	{
		grep -v '#include "softmax_common.cuh"' $P/$f.cu
		cat $P/softmax_common.cuh
	} >"$O/$f.cu"
done
# one: LABEL PROBLEM [flags] -- CANDIDATE...
one() {
	label=$1 prob=$2
	shift 2
	flags=""
	while [ "$1" != "--" ]; do
		flags="$flags $1"
		shift
	done
	shift
	$K eval "$prob" "$@" $B $flags --json >"$O/$label.json" 2>"$O/$label.err"
	python3 - "$O/$label.json" "$label" "$O/$label.err" <<'PY'
import json, sys
f, label, ef = sys.argv[1:4]
n = 0
for line in open(f):
    n += 1
    r = json.loads(line)
    p = r.get("precision") or {}
    em = p.get("emulated") or {}
    def g(x):
        return "%.2e" % x if isinstance(x, (int, float)) else "-"
    print("%-22s %-26s %-9s %-9s %9s %9s %9s %8s %9s %9s %9s  %s" % (
        label, r["source"].split("/")[-1][:26], r["status"][:9], str(p.get("verdict"))[:9],
        g(p.get("rel_l2")), g(p.get("reference_rel_l2")), g(p.get("rounding_rel_l2")),
        ("%.3g" % p["ratio"]) if isinstance(p.get("ratio"), (int, float)) else "-",
        g(em.get("tf32_f16_inputs")), g(em.get("tf32_truncated_inputs")), g(em.get("bf16_inputs")),
        (p.get("cause") or p.get("why") or r.get("reason") or "")[:90]))
if not n:
    print("%-22s failed: %s" % (label, " ".join(open(ef).read().split())[-300:]))
PY
}
printf '%-22s %-26s %-9s %-9s %9s %9s %9s %8s %9s %9s %9s  %s\n' problem candidate status precision \
	rel_l2 ref_l2 round_l2 ratio tf32_in tf32z_in bf16_in cause
for ref in cuda torch; do
	one softmax_$ref tasks/softmax --reference $ref -- tasks/softmax/seed.cu "$O/softmax_fast_exp.cu" \
		"$O/softmax_tf32_inputs.cu" "$O/softmax_bf16_outputs.cu"
	one layernorm_$ref tasks/layernorm --reference $ref -- tasks/layernorm/seed.cu
	one matmul_$ref tasks/matmul --reference $ref --libs cublas -- tasks/matmul/seed.cu \
		tests/fixtures/cuda/cublas_matmul.cu $P/cublas_tf32.cu
	one gemm_bias_relu_$ref tasks/gemm_bias_relu --reference $ref -- tasks/gemm_bias_relu/seed.cu
	one hgemm_$ref tasks/hgemm --reference $ref -- tasks/hgemm/seed.cu
done
one kb2_matmul_rand $KB/2_Standard_matrix_multiplication_.py --size 0.5 --libs cublas -- \
	tasks/matmul/seed.cu tests/fixtures/cuda/cublas_matmul.cu $P/cublas_tf32.cu
one kb2_matmul_randn "$O/2_matmul_randn.py" --size 0.5 --libs cublas -- \
	tasks/matmul/seed.cu tests/fixtures/cuda/cublas_matmul.cu $P/cublas_tf32.cu
one kb23_softmax $KB/23_Softmax.py --size 0.05 -- tasks/softmax/seed.cu "$O/softmax_fast_exp.cu" \
	"$O/softmax_tf32_inputs.cu" "$O/softmax_bf16_outputs.cu"
one kb76_gemm_relu $KB/76_Gemm_Add_ReLU.py --size 0.25 -- tasks/gemm_bias_relu/seed.cu
one kb63_conv $KB/63_conv_standard_2D__square_input__square_kernel.py --size 0.25 -- $KB/conv2d_naive.cu
one kb89_cumsum $KB/89_cumsum.py --size 0.125 -- $KB/cumsum_rows.cu
one kb26_gelu $G/26_GELU_.py -- $G/gelu.cu "$O/gelu_tanh.cu"
