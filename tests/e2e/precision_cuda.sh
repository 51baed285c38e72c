# precision_cuda.sh - the precision verdict on the GPU (issue 25): under
# KernelBench's tolerance, which each of these passes, TF32 tensor cores
# (cuBLAS with CUBLAS_TF32_TENSOR_OP_MATH on torch.rand inputs, and a
# softmax reading its inputs at 10 mantissa bits) and bf16 storage are
# named reduced precision, with
# the cause, against the CUDA reference's float64 outputs and against
# PyTorch's model in float64; so is a softmax that stores through bf16 only
# in the checked timed runs (a row whose max is above 7: the checking sets'
# varied inputs), its checked run named; plain fp32 cuBLAS, the seed and an
# online softmax with __expf stay faithful, in every checked run too.  On
# hgemm, a WMMA kernel accumulating in f16 is reduced, "matches f16
# accumulation" (issue 36), and its fp32-accumulating twin faithful.
# Skipped with one line where there is no GPU.
. tests/e2e/lib.sh
if ! $KLOOP doctor --json 2>/dev/null | python3 -c 'import json,sys; sys.exit(0 if json.load(sys.stdin)["gpu"]["ok"] else 1)'; then
	skip "precision_cuda: no GPU here, the GPU precision suite did not run"
	exit 0
fi
export XDG_CACHE_HOME="${KLOOP_GPU_CACHE:-$T/cache}"
F=tests/fixtures/precision
B="--backend cuda --budget ${KLOOP_GPU_BUDGET:-0.3}"
has_torch=0
python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null && has_torch=1
kb_task softmax "$T/softmax"
kb_task matmul "$T/matmul"
for f in softmax_fast_exp softmax_tf32_inputs softmax_bf16_outputs softmax_checked_bf16; do
	{
		grep -v '#include "softmax_common.cuh"' $F/$f.cu
		cat $F/softmax_common.cuh
	} >"$T/$f.cu"
done
cp tasks/softmax/seed.cu "$T/softmax_seed.cu"

# verdicts LABEL FILE: "name status precision ratio cause" per result line
verdicts() {
	python3 - "$2" <<'PY' >"$T/$1.v"
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    p = r.get("precision") or {}
    print(r["source"].split("/")[-1], r["status"], p.get("verdict"), p.get("ratio"),
          "|", p.get("cause") or p.get("why") or "", "|", r.get("reason", "")[:200])
PY
	cat "$T/$1.v" | sed 's/^/# /'
}
# expect LABEL NAME STATUS VERDICT [CAUSE]
expect() {
	line=$(grep "^$2 " "$T/$1.v")
	check "$1: $2 is $3, precision $4${5:+ ($5)} [$line]" \
		sh -c "echo '$line' | grep -q '^$2 $3 $4 ' && echo '$line' | grep -q '$5'"
}
# reduced LABEL NAME CAUSE: never a faithful win: correct but of reduced
# precision (named), or incorrect outright (the varied trials' outliers can
# take TF32's error past even KernelBench's tolerance)
reduced() {
	line=$(grep "^$2 " "$T/$1.v")
	check "$1: $2 is reduced precision ($3) or incorrect, not a faithful win [$line]" \
		sh -c "echo '$line' | grep -Eq '^$2 (incorrect|correct reduced .*$3)'"
}

for ref in cuda torch; do
	[ $ref = torch ] && [ $has_torch = 0 ] && {
		skip "precision_cuda: no PyTorch with CUDA, the float64 PyTorch reference did not run"
		continue
	}
	nf=$NFAIL
	$KLOOP eval "$T/softmax" "$T/softmax_seed.cu" "$T/softmax_fast_exp.cu" "$T/softmax_tf32_inputs.cu" \
		"$T/softmax_bf16_outputs.cu" "$T/softmax_checked_bf16.cu" $B --reference $ref --json \
		>"$T/sm_$ref.json" 2>"$T/sm_$ref.err"
	verdicts sm_$ref "$T/sm_$ref.json"
	expect sm_$ref softmax_seed.cu correct faithful
	expect sm_$ref softmax_fast_exp.cu correct faithful
	reduced sm_$ref softmax_tf32_inputs.cu "TF32 or f16 inputs"
	reduced sm_$ref softmax_bf16_outputs.cu bf16
	# the checked-run fixture shows where a checked run lands on a set whose
	# data shows bf16 storage (a heavy-tailed one always does; a row with an
	# outlier is one-hot, exact in any precision): again, alone, up to twice,
	# where the first evaluation's checked runs did not
	for k in 1 2; do
		grep -q '^softmax_checked_bf16.cu correct reduced ' "$T/sm_$ref.v" && break
		$KLOOP eval "$T/softmax" "$T/softmax_checked_bf16.cu" $B --reference $ref --json \
			>"$T/scb_$ref.json" 2>>"$T/sm_$ref.err"
		verdicts scb_$ref "$T/scb_$ref.json"
		{ grep -v '^softmax_checked_bf16.cu ' "$T/sm_$ref.v"; cat "$T/scb_$ref.v"; } >"$T/v.tmp"
		mv "$T/v.tmp" "$T/sm_$ref.v"
	done
	expect sm_$ref softmax_checked_bf16.cu correct reduced "faithful in the trials, reduced in checked timed run"
	check "sm_$ref: every checked timed run of the seed and of __expf's softmax faithful" python3 -c "
import json
n = 0
for r in map(json.loads, open('$T/sm_$ref.json')):
    if r['source'].split('/')[-1] in ('softmax_seed.cu', 'softmax_fast_exp.cu'):
        runs = r['precision'].get('checked_runs', [])
        assert all(x['verdict'] == 'faithful' for x in runs), runs
        n += len(runs)
assert n, 'no checked run judged'"
	$KLOOP eval "$T/matmul" tests/fixtures/cuda/cublas_matmul.cu $F/cublas_tf32.cu $B --libs cublas \
		--reference $ref --json >"$T/mm_$ref.json" 2>"$T/mm_$ref.err"
	verdicts mm_$ref "$T/mm_$ref.json"
	expect mm_$ref cublas_matmul.cu correct faithful
	# uniform(-1, 1) inputs over K = 4096: TF32 is outside even KernelBench's
	# tolerance at the outputs near zero
	expect mm_$ref cublas_tf32.cu incorrect None
	diag $nf "$T/sm_$ref.err" "$T/mm_$ref.err"
done

# hgemm on tensor cores (issue 36): WMMA with fp32 accumulation is
# faithful, its roofline the fp16 tensor-core floor; with an f16
# accumulator (CUDA-L2's SM80_16x8x16_F16F16F16F16) reduced precision,
# "matches f16 accumulation", or incorrect outright where an outlier takes
# it past KernelBench's tolerance
kb_task hgemm "$T/hgemm"
cp $F/hgemm_wmma.cu "$T/hgemm_wmma.cu"
{
	echo '#define ACC_HALF'
	cat $F/hgemm_wmma.cu
} >"$T/hgemm_wmma_f16acc.cu"
nf=$NFAIL
$KLOOP eval "$T/hgemm" "$T/hgemm_wmma.cu" "$T/hgemm_wmma_f16acc.cu" $B --reference cuda --json \
	>"$T/hg.json" 2>"$T/hg.err"
verdicts hg "$T/hg.json"
expect hg hgemm_wmma.cu correct faithful
reduced hg hgemm_wmma_f16acc.cu "matches f16 accumulation"
check "hg: WMMA's roofline is the fp16 tensor-core floor, compute-bound ($(grep hgemm_wmma.cu "$T/hg.json" | python3 -c 'import json,sys; print(json.loads(sys.stdin.readline()).get("roofline"))' 2>&1))" \
	python3 -c "
import json
rs = {x['source'].split('/')[-1]: x for x in map(json.loads, open('$T/hg.json'))}
r = rs['hgemm_wmma.cu']['roofline']
assert r['compute'] == 'fp16' and r['compute_unit'] == 'tensor-core' and r['bound'] == 'compute', r
assert r.get('peak_tflops', 0) > 0 or r.get('measured_peak_tflops', 0) > 0, r"
diag $nf "$T/hg.err"

# a KernelBench problem file (torch.rand inputs, as the issue's reproduction):
# PyTorch's model in float64 is the reference
if [ $has_torch = 1 ]; then
	KB=tests/fixtures/torch/kb/2_Standard_matrix_multiplication_.py
	$KLOOP eval $KB tests/fixtures/cuda/cublas_matmul.cu $F/cublas_tf32.cu $B --libs cublas \
		--size 0.5 --python python3 --json >"$T/kb.json" 2>"$T/kb.err"
	verdicts kb "$T/kb.json"
	expect kb cublas_matmul.cu correct faithful
	reduced kb cublas_tf32.cu TF32
	$KLOOP eval $KB $F/cublas_tf32.cu $B --libs cublas --size 0.5 --python python3 >"$T/kb.txt" 2>&1
	rc=$?
	check "kloop eval exits 1 for it (exit $rc) and says why in words ($(grep -E '^  (precision|verdict)' "$T/kb.txt" | cut -c1-150 | tr '\n' ' '))" \
		sh -c "test $rc = 1 && grep -Eq '^  (PRECISION reduced precision: .*TF32|verdict   incorrect)' '$T/kb.txt'"
fi
exit 0
