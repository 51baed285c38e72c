# outline.sh - `kloop outline FILE [--json]` on the fixture kernels: the
# text and JSON outlines, partial results for sources with syntax errors,
# and exit status 2 with "kloop: FILE: ..." for files it cannot take.
. tests/e2e/lib.sh
F=tests/fixtures/cuda_src
if [ ! -x "$KLOOP" ]; then
	skip "kloop outline: $KLOOP is not built"
	exit 0
fi

$KLOOP outline $F/gemm_tiled.cu >"$T/gemm.txt" 2>"$T/gemm.err"
check "outline exits 0 on a clean source" test $? -eq 0
check "the text outline lists the template kernel with its lines" \
	grep -q "^  12-50 *gemm_tiled<int BM, int BN, int BK>(" "$T/gemm.txt"
check "it shows __launch_bounds__" grep -q "__launch_bounds__(THREADS, MIN_BLOCKS)" "$T/gemm.txt"
check "it lists the launch with its configuration" \
	grep -q "gemm_tiled<64, 64, TILE_K><<<grid, block, 0, (cudaStream_t)stream>>>  in kl_run" "$T/gemm.txt"
check "it lists the tunables" grep -q "TILE_K = 8  (define)" "$T/gemm.txt"

$KLOOP outline $F/softmax_coop.cu --json >"$T/softmax.json"
check "--json exits 0" test $? -eq 0
check "--json: kernels with name and line" python3 -c "
import json; j=json.load(open('$T/softmax.json'))
k={x['name']:x for x in j['kernels']}
assert k['softmax_rows']['line']==29 and k['softmax_rows']['launch_bounds']=='BLOCK', k
assert k['scale_rows']['line']==62
assert [d['name'] for d in j['device_functions']]==['warp_max','warp_sum']"
check "--json: launches with kernel, line and config" python3 -c "
import json; j=json.load(open('$T/softmax.json'))
l=j['launches']
assert [x['kernel'] for x in l]==['softmax_rows','scale_rows'], l
assert l[1]['line']==75 and l[1]['config']['grid']=='(n + 255) / 256' and l[1]['config']['block']=='256'"
check "--json: tunables with name, value and line" python3 -c "
import json; j=json.load(open('$T/softmax.json'))
t={x['name']:x for x in j['tunables']}
assert t['BLOCK']['value']==256 and t['BLOCK']['line']==10
assert t['scale_rows.block']['value']==256 and t['scale_rows.block']['kind']=='launch_block'
assert j['errors']==[]"

$KLOOP outline $F/pragma_unroll.cu >"$T/pragma.txt" 2>&1
check "#pragma unroll between an unbraced for and its loop is no syntax error" \
	grep -q "^$F/pragma_unroll.cu: 2 kernels, .*, 0 syntax errors" "$T/pragma.txt"

for f in wmma_gemm.cu inline_asm.cu lambda.cu multi_launch.cu host_sum.c; do
	$KLOOP outline --json $F/$f >"$T/$f.json" 2>"$T/$f.err"
	check "outline of $f exits 0 with valid JSON and no errors" python3 -c "
import json; j=json.load(open('$T/$f.json')); assert j['errors']==[], j['errors']"
done

$KLOOP outline --json $F/device_lambda.cu >"$T/partial.json"
check "a syntax error is a partial result: exit 0" test $? -eq 0
check "the error is reported with its line, the functions around it still listed" python3 -c "
import json; j=json.load(open('$T/partial.json'))
assert j['errors'][0]['line']==16, j['errors']
assert [k['name'] for k in j['kernels']]==['apply'] and j['launches'][0]['kernel']=='apply'"

: >"$T/empty.cu"
$KLOOP outline "$T/empty.cu" >"$T/empty.txt"
check "an empty file is outlined (exit 0)" test $? -eq 0

head -c 4096 /dev/urandom >"$T/random.bin"
printf '\000\001\002' >>"$T/random.bin"
$KLOOP outline "$T/random.bin" >"$T/bin.out" 2>"$T/bin.err"
check "a binary file exits 2" test $? -eq 2
check "with kloop: FILE: binary file" grep -q "^kloop: $T/random.bin: binary file" "$T/bin.err"

python3 -c "import sys; sys.stdout.write('int a;\n' * 1500000)" >"$T/big.cu"
$KLOOP outline "$T/big.cu" >/dev/null 2>"$T/big.err"
check "a 10 MB file exits 2" test $? -eq 2
check "saying it is over the limit" grep -q "^kloop: $T/big.cu: file is .* over the limit" "$T/big.err"

$KLOOP outline "$T/nope.cu" 2>"$T/nope.err"
check "a missing file exits 2" test $? -eq 2
check "naming the file" grep -q "^kloop: $T/nope.cu: cannot open" "$T/nope.err"

printf '/* never closed\n__global__ void k(float *x) { x[0] = 1; }\n' >"$T/open.cu"
$KLOOP outline --json "$T/open.cu" >"$T/open.json"
check "an unterminated comment: exit 0 and an error at 1:1" python3 -c "
import json; j=json.load(open('$T/open.json')); e=j['errors'][0]
assert (e['line'], e['column'])==(1, 1), e"
{ cat $F/gemm_tiled.cu; printf '// stray \377 byte\n__global__ void k\376(float *x) { x[0] = 1; }\n'; } >"$T/utf8.cu"
$KLOOP outline --json "$T/utf8.cu" >"$T/utf8.json"
check "a few invalid UTF-8 bytes: exit 0, valid JSON, the kernels listed" python3 -c "
import json; j=json.load(open('$T/utf8.json', encoding='utf-8'))
assert j['kernels'][0]['name']=='gemm_tiled' and j['errors'], j"
