# tolerance.sh - correct kernels are not rejected: on tasks judged with
# KernelBench's tolerance ("tolerance": "kernelbench"), a tiled matmul that
# accumulates in fp64 and a block scan cumsum (outputs near zero, where an fp32
# reference's rounding shows) pass, with how much of the tolerance they use
# shown; wrong ones still fail; --atol/--rtol tighten it back.
. tests/e2e/lib.sh
F=tests/fixtures/kbtol
B="--backend host --budget 0.2 --trials 3"

# run TASK FILE [flags]: eval --json into $T/out.json, plain text into $T/out.txt
run() {
	task=$1 file=$2
	shift 2
	$KLOOP eval "$task" "$file" $B --json "$@" >"$T/out.json" 2>"$T/err"
	$KLOOP eval "$task" "$file" $B "$@" >"$T/out.txt" 2>&1
}

run $F/matmul $F/matmul/tiled_f64.c
check "a tiled fp64-accumulated matmul is correct under KernelBench's tolerance" \
	test "$(json status "$T/out.json")" = correct
check "the result names the tolerance it was judged by (f32, atol 0.01, rtol 0.01, kernelbench)" python3 -c "
import json; c=json.load(open('$T/out.json'))['correctness']; t=c['tolerance']
assert (t['dtype'],t['atol'],t['rtol'],t['from'])==('f32',0.01,0.01,'kernelbench'), t
assert t['rel_l2'] is None, t
assert 0 < c['tol_fraction'] < 1, c"
check "eval shows how far inside the tolerance it is" \
	grep -Eq "^  tolerance max err [0-9.e-]+; worst element at [0-9.e-]+ of tolerance \(f32 atol 0.01 \+ rtol 0.01\*\|ref\|, KernelBench's\)" "$T/out.txt"
run $F/matmul $F/matmul/tiled_f64.c --atol 1e-5 --rtol 1e-4
check "the same kernel fails a tight --atol 1e-5 --rtol 1e-4 (its error near zero outputs)" \
	test "$(json status "$T/out.json")" = incorrect
check "... and the result says it is outside, judged by --atol/--rtol" \
	grep -q "of tolerance (f32 atol 1e-05 + rtol 0.0001\*|ref|, --atol/--rtol; outside)" "$T/out.txt"
run $F/matmul $F/matmul/tiled_wrong.c
check "a matmul that drops the last k tile still fails" test "$(json status "$T/out.json")" = incorrect

run $F/cumsum $F/cumsum/block_scan.c
check "a block scan cumsum in fp64 is correct under KernelBench's tolerance" \
	test "$(json status "$T/out.json")" = correct
run $F/cumsum $F/cumsum/block_scan.c --atol 1e-5 --rtol 1e-4
check "the block scan fails a tight tolerance where the running sum is near zero" \
	test "$(json status "$T/out.json")" = incorrect
run $F/cumsum $F/cumsum/exclusive_scan.c
check "an exclusive scan (the wrong one) still fails" test "$(json status "$T/out.json")" = incorrect
check "... with the worst element far outside its tolerance" python3 -c "
import json; c=json.load(open('$T/out.json'))['correctness']
assert c['tol_fraction'] > 10 and c['mismatches'] > 0, c"

$KLOOP eval $F/matmul $F/matmul/tiled_f64.c $B --atol -1 >"$T/bad" 2>&1
check "a negative --atol is refused with the flag named" grep -q "^kloop: --atol: expected a number (absolute tolerance) from 0 to 1000000, got .-1." "$T/bad"

# with no tolerance at all a one-ulp difference fails, and the mismatch line
# prints enough digits to show it (6 digits printed "expected 0.00263952, got
# 0.00263952")
{
	echo '#define kl_run seed_kl_run'
	cat tasks/softmax/seed.c
	echo '#undef kl_run'
	echo '#include <math.h>'
	echo 'int kl_run(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *stream)'
	echo '{'
	echo '	int rc = seed_kl_run(in, n_in, out, n_out, stream);'
	echo '	float *y = (float *)out[0].data;'
	echo '	y[3] = nextafterf(y[3], INFINITY);'
	echo '	return rc;'
	echo '}'
} >"$T/ulp.c"
$KLOOP eval softmax "$T/ulp.c" $B --atol 0 --rtol 0 >"$T/ulp.out" 2>&1
check "with --atol 0 --rtol 0 the mismatch shows two different numbers ($(grep -o 'expected [^(]*' "$T/ulp.out" | head -1))" \
	python3 -c "
import re, sys
m = re.search(r'expected ([-0-9.e+]+), got ([-0-9.e+]+)', open('$T/ulp.out').read())
assert m and m.group(1) != m.group(2) and float(m.group(1)) != float(m.group(2)), m and m.groups()"

# --atol/--rtol set the float dtypes' tolerance only: an i32 output is still
# compared exactly, and its tolerance line says where that comes from
mkdir -p "$T/quant"
cat >"$T/quant/task.json" <<'J'
{"name": "quant", "inputs": [{"name": "x", "dtype": "f32", "shape": ["n"]}],
 "outputs": [{"name": "q", "dtype": "i32", "shape": ["n"]}],
 "shapes": {"host": {"n": 4096}}, "reference": {"host": "reference.c"}}
J
cat >"$T/quant/reference.c" <<'C'
#include <math.h>
#include "kloop.h"
int kl_run(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *stream)
{
	(void)n_in, (void)n_out, (void)stream;
	const float *x = in[0].data;
	int *q = out[0].data;
	for (int64_t i = 0; i < kl_numel(&in[0]); i++)
		q[i] = (int)floorf(x[i] * 8.0f);
	return 0;
}
C
run "$T/quant" "$T/quant/reference.c" --atol 0.5
st=$(json status "$T/out.json")
check "an i32 output under --atol 0.5: $st, judged exactly by kloop's default, not said to come from --atol/--rtol ($(grep -o 'tolerance (i32[^)]*)' "$T/out.txt"))" \
	sh -c "test $st = correct && grep -q 'tolerance (i32 atol 0 + rtol 0\*|ref|, kloop.s default)' '$T/out.txt'"
