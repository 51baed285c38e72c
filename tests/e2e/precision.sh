# precision.sh - reduced precision is named, not taken as a win (issue 25):
# on softmax and matmul judged by KernelBench's tolerance, kloop eval names
# outputs stored through bf16 and a coarse exponential (correct there) as
# reduced precision, with the cause, and exits 1 for them unless --precision
# any; inputs rounded to 10 mantissa bits (TF32 or f16 tensor cores) are
# reduced precision or, where a varied checking set takes their error past
# the tolerance, incorrect; the seed and an exponential a few ulp off stay
# faithful.
# The verdict is in the JSON, the journal and `kloop session`; a reference
# that cannot write float64 outputs gives "unknown" with the reason.
. tests/e2e/lib.sh
F=tests/fixtures/precision
B="--backend host --budget 0.05 --trials 3"
kb_task softmax "$T/softmax"
kb_task matmul "$T/matmul"
# the softmax fixtures: their #defines, then the shared body
for f in softmax_tf32_inputs softmax_bf16_outputs softmax_approx_exp softmax_fast_exp \
	softmax_checked_bf16; do
	{
		grep -v '#include "softmax_common.h"' $F/$f.c
		cat $F/softmax_common.h
	} >"$T/$f.c"
done
cp tasks/softmax/seed.c "$T/softmax_seed.c"
cp tasks/matmul/seed.c "$T/matmul_seed.c"
cp $F/matmul_tf32.c "$T/"

# verdict NAME TASK FILE [flags]: eval --json, then in words; $rc of the first
verdict() {
	n=$1 task=$2 file=$3
	shift 3
	$KLOOP eval "$task" "$file" $B --json "$@" >"$T/$n.json" 2>"$T/$n.err"
	rc=$?
	$KLOOP eval "$task" "$file" $B "$@" >"$T/$n.txt" 2>&1
}
field() { json "precision.$1" "$T/$2.json" 2>/dev/null; }

for n in softmax_seed softmax_fast_exp; do
	nf=$NFAIL
	verdict $n "$T/softmax" "$T/$n.c"
	check "$n: correct and faithful, exit 0 (precision $(field verdict $n), ratio $(field ratio $n))" \
		test "$(json status "$T/$n.json")/$(field verdict $n)/$rc" = correct/faithful/0
	check "... its words say faithful, against float64" \
		grep -q "^  precision faithful: relative L2 error [0-9.e+-]* against float64" "$T/$n.txt"
	diag $nf "$T/$n.txt" "$T/$n.err"
done
# bf16 storage and a coarse exp err by a share of every element: within
# KernelBench's 1e-2 on any inputs, so correct, and reduced precision
for c in "softmax_bf16_outputs:softmax:bf16" "softmax_approx_exp:softmax:"; do
	n=${c%%:*} rest=${c#*:}
	task=${rest%%:*} cause=${rest#*:}
	nf=$NFAIL
	verdict $n "$T/$task" "$T/$n.c"
	check "$n: correct within KernelBench's tolerance, but reduced precision, exit 1 ($(field ratio $n)x; $(field cause $n))" \
		test "$(json status "$T/$n.json")/$(field verdict $n)/$rc" = correct/reduced/1
	check "... named in words, with the cause${cause:+ ($cause)}" \
		sh -c "grep '^  PRECISION reduced precision: relative L2 error' '$T/$n.txt' | grep -q '$cause'"
	diag $nf "$T/$n.txt" "$T/$n.err"
done
# 10-bit inputs err with the inputs' magnitude: on the varied checking sets
# (scaled up to 8x, heavy tails) that can pass KernelBench's tolerance or
# not, by the draw; either way no faithful win: reduced precision (named,
# with its cause) or incorrect, and exit 1
for c in "softmax_tf32_inputs:softmax" "matmul_tf32:matmul"; do
	n=${c%%:*} task=${c#*:}
	nf=$NFAIL
	verdict $n "$T/$task" "$T/$n.c"
	st="$(json status "$T/$n.json")/$(field verdict $n)/$rc"
	check "$n: reduced precision or incorrect, exit 1, never a faithful win ($st; $(field cause $n))" \
		sh -c "case '$st' in correct/reduced/1 | incorrect/*/1) exit 0 ;; *) exit 1 ;; esac"
	check "... its words say which, with the cause (TF32 or f16 inputs)" \
		sh -c "grep -q '^  PRECISION reduced precision: relative L2 error.*TF32 or f16 inputs' '$T/$n.txt' || grep -q '^  verdict   incorrect' '$T/$n.txt'"
	diag $nf "$T/$n.txt" "$T/$n.err"
done
# and in-process, with no checking set of the timed runs to fail on, 10-bit
# inputs are reduced precision every time (tests/unit/test_precision.c)
verdict any "$T/softmax" "$T/softmax_bf16_outputs.c" --precision any
check "--precision any: the same candidate exits 0, still labelled reduced" \
	test "$(field verdict any)/$rc" = reduced/0
# the policy is the session's: journaled (search_set), so kloop session on
# that journal ranks the candidate as the exit status did (the best, unless
# the load left its time unverified: then its row says so with ?)
$KLOOP eval "$T/softmax" "$T/softmax_bf16_outputs.c" $B --precision any \
	--session "$T/any.jsonl" >"$T/anys.txt" 2>&1
rc=$?
run anysession session "$T/any.jsonl"
nf=$NFAIL
check "... with a session: exit $rc, the journal holds the policy, kloop session agrees ($(grep -E '^best|^ +1 ' "$T/anysession.out" | tr -s ' \n' ' '))" \
	sh -c "test $rc = 0 && grep -q '\"type\":\"search_set\",\"key\":\"precision\",\"value\":\"any\"' '$T/any.jsonl' &&
		{ grep -q '^best [0-9.e+]*x (#1' '$T/anysession.out' || grep -Eq '^ +1 .* [0-9.e+]+x\?~' '$T/anysession.out'; }"
diag $nf "$T/anys.txt" "$T/anysession.out"
run badflag eval "$T/softmax" "$T/softmax_seed.c" $B --precision some
check "--precision some: a usage error naming the words (exit $rc)" \
	sh -c "test $rc = 2 && grep -q 'expected faithful or any' '$T/badflag.err'"
verdict matmul_seed "$T/matmul" "$T/matmul_seed.c"
check "the matmul seed (float accumulation, $(field ratio matmul_seed)x the exact result's rounding) is faithful" \
	test "$(field verdict matmul_seed)/$rc" = faithful/0

# reduced only in the timed runs that are checked: bf16 outputs on a row
# whose max is above 7, which only the checking sets' varied inputs have
# (under --trials 3 the trials and the run after timing are plain).  The
# checking sets have float64 outputs too, so the checked run is named; the
# honest neighbours stay faithful in every checked run.  --budget 0.2: a few
# checked runs, spread at random; bf16 storage shows on the second checking
# set (heavy-tailed) every time, on the others by the draw (a row with an
# outlier is one-hot, exact in any precision), so an evaluation whose only
# checked run is the first set's may not see it: up to 3 evaluations
C="--budget 0.2"
n=softmax_checked_bf16_c
nf=$NFAIL
# each evaluation's words, JSON (from its journal) and journal are its own:
# the checks below judge one evaluation, the first of up to 5 that saw it
for k in 1 2 3 4 5; do
	$KLOOP eval "$T/softmax" "$T/softmax_checked_bf16.c" $B $C --session "$T/c.jsonl" >"$T/$n.txt" 2>"$T/$n.err"
	rc=$?
	python3 -c "
import json,sys
r=[json.loads(l) for l in open(sys.argv[1]) if '\"eval_finished\"' in l][-1]['result']
json.dump(r, open(sys.argv[2], 'w'))" "$T/c.jsonl" "$T/$n.json"
	[ "$(field verdict $n)" = reduced ] && break
	echo "# $n: evaluation $k faithful, its checked runs $(field checked_runs $n | tr -d '\n' | cut -c1-200)"
	rm -f "$T/c.jsonl"
done
check "$n: faithful in the trials, bf16 in its checked timed runs: reduced, exit 1 ($(field cause $n | cut -c1-140))" \
	sh -c "test '$(json status "$T/$n.json")/$(field verdict $n)/$rc' = correct/reduced/1 &&
		echo '$(field cause $n)' | grep -q '^faithful in the trials, reduced in checked timed runs* [0-9]'"
check "... faithful in the run after timing ($(field after_timing_rel_l2 $n) against $(field rel_l2 $n)); each checked run with its verdict" python3 -c "
import json; p=json.load(open('$T/$n.json'))['precision']
assert p['after_timing_rel_l2'] < p['rel_l2'] / 100, p
runs=p['checked_runs']; assert runs and any(r['verdict'] == 'reduced' for r in runs), runs
assert all(set(r) >= {'run', 'verdict', 'rel_l2', 'ratio'} for r in runs), runs"
check "... named in words" grep -q '^  PRECISION reduced precision: .*faithful in the trials, reduced in checked timed runs* [0-9]' "$T/$n.txt"
diag $nf "$T/$n.txt" "$T/$n.err"
for f in softmax_seed softmax_fast_exp; do
	verdict ${f}_c "$T/softmax" "$T/$f.c" $C
	check "$n: faithful in the trials and in all $(python3 -c "import json; print(len(json.load(open('$T/$n.json'))['precision'].get('checked_runs', [])))" 2>/dev/null) checked timed runs, in words too" \
		sh -c "test '$(field verdict $n)/$rc' = faithful/0 && python3 -c \"
import json; runs=json.load(open('$T/$n.json'))['precision']['checked_runs']
assert runs and all(r['verdict'] == 'faithful' for r in runs), runs\" &&
			grep -q '^  precision faithful: .*; faithful in the [0-9]* checked timed runs* too' '$T/$n.txt'"
done
check "the journal keeps the checked runs' verdicts and the one named" python3 -c "
import json
def find(o):
    if isinstance(o, dict):
        if isinstance(o.get('precision'), dict) and 'checked_runs' in o['precision']:
            return o['precision']
        o = list(o.values())
    for v in o if isinstance(o, list) else []:
        p = find(v)
        if p: return p
ps = [find(json.loads(l)) for l in open('$T/c.jsonl')]
p = [x for x in ps if x][-1]
assert p['verdict'] == 'reduced' and 'reduced in checked timed run' in p['cause'], p"
# the same with PyTorch's model in float64 as the reference, where a Python
# with torch is here: its checking sets drawn and varied again by the helper
PY=
for py in python3 /usr/bin/python3; do $py -c 'import torch' >/dev/null 2>&1 && PY=$py && break; done
if [ -n "$PY" ]; then
	mkdir -p "$T/smt"
	cp "$T/softmax/"* "$T/smt/"
	sed -i 's/^rows = .*/rows = 64/; s/^cols = .*/cols = 4096/' "$T/smt/reference.py"
	# as above: until a checked run sees it (a run on the second checking
	# set or a varied one by the draw); 3 tries missed it once in a loaded
	# run; 5 with twice the budget make a miss much rarer
	for k in 1 2 3 4 5; do
		$KLOOP eval "$T/smt" "$T/softmax_checked_bf16.c" "$T/softmax_fast_exp.c" $B --budget 0.4 \
			--reference torch --python $PY --json >"$T/smt.json" 2>"$T/smt.err"
		grep -q '"verdict": *"reduced"' "$T/smt.json" && break
	done
	check "against PyTorch in float64: the checked-run candidate reduced, its checked run named; __expf's neighbour faithful in every checked run" python3 -c "
import json
rs = {r['source'].split('/')[-1]: r['precision'] for r in map(json.loads, open('$T/smt.json'))}
a, b = rs['softmax_checked_bf16.c'], rs['softmax_fast_exp.c']
assert a['verdict'] == 'reduced' and 'reduced in checked timed run' in a['cause'], a
assert b['verdict'] == 'faithful' and b['checked_runs'], b
assert all(r['verdict'] == 'faithful' for r in b['checked_runs']), b
assert 'checked_runs_unjudged' not in a and 'checked_runs_unjudged' not in b, (a, b)"
	diag $nf "$T/smt.err"
else
	skip "precision: no Python with torch here, the checked runs against PyTorch in float64 did not run"
fi

# the journal keeps it: kloop session marks the speedup, its JSON says it
$KLOOP eval "$T/softmax" "$T/softmax_seed.c" "$T/softmax_bf16_outputs.c" $B \
	--session "$T/s.jsonl" >/dev/null 2>&1
run session session "$T/s.jsonl"
check "kloop session marks the reduced-precision speedup with ~ and says what it means" \
	sh -c "grep -E '^ +2 +softmax_bf16_outputs.* [0-9.]+x~' '$T/session.out' >/dev/null &&
		grep -q '~: reduced precision' '$T/session.out'"
run replay replay "$T/s.jsonl"
check "replay says it too: 'eval_finished #2: correct, reduced precision'" \
	grep -q 'eval_finished #2: correct, reduced precision' "$T/replay.out"
run sessionj session "$T/s.jsonl" --json
check "... and its JSON names each candidate's precision" python3 -c "
import json; d=json.load(open('$T/sessionj.out'))
c={x['name']:x.get('precision') for x in d['candidates']}
assert c=={'softmax_seed.c':'faithful','softmax_bf16_outputs.c':'reduced'}, c"

# hgemm declares fp32 accumulation (compute fp16, from its f16 inputs):
# accumulating in f16 as mma's f16 accumulator does is reduced, named as
# f16 accumulation (issue 36), where its error stays within KernelBench's
# tolerance on every set kloop checks; on a set where it does not (a sum
# that cancels to near zero: 0.0216 for 0.0106 on one varied set), it is
# incorrect by that output: never faithful, either way.  The checked sets
# are drawn afresh in each evaluation, so each run is judged by the verdict
# it got.  The fp32-accumulating seed stays faithful.
kb_task hgemm "$T/hgemm"
nf=$NFAIL
verdict hgemm_seed "$T/hgemm" tasks/hgemm/seed.c
check "hgemm_seed: correct, faithful, exit 0 ($(field verdict hgemm_seed), $(field rel_l2 hgemm_seed) against f16 accumulation's $(field emulated.f16_accumulation hgemm_seed); the verdict: $(said "$T/hgemm_seed.json"))" \
	test "$(json status "$T/hgemm_seed.json")/$(field verdict hgemm_seed)/$rc" = correct/faithful/0
diag $nf "$T/hgemm_seed.txt" "$T/hgemm_seed.err"
nf=$NFAIL
n=hgemm_f16_acc
verdict $n "$T/hgemm" "$F/hgemm_f16_acc.c"
check "$n: reduced where correct, else incorrect by an output, exit 1 ($(json status "$T/$n.json"), $(field verdict $n), $(field rel_l2 $n) against f16 accumulation's $(field emulated.f16_accumulation $n); the verdict: $(said "$T/$n.json"))" \
	sh -c "test $rc = 1 && { test '$(json status "$T/$n.json")/$(field verdict $n)' = correct/reduced ||
		{ test '$(json status "$T/$n.json")' = incorrect && grep -q 'output C differs from the reference' '$T/$n.json'; }; }"
if grep -q "^  verdict   correct" "$T/$n.txt"; then
	check "... the reduced one's words name f16 accumulation" \
		grep -q "^  PRECISION reduced precision: .*matches f16 accumulation" "$T/$n.txt"
else
	check "... the incorrect one's words name the output and the element ($(grep '^  verdict' "$T/$n.txt"))" \
		grep -q "^  verdict   incorrect: .*output C differs from the reference at \[" "$T/$n.txt"
fi
diag $nf "$T/$n.txt" "$T/$n.err"

# a reference that writes only floats: no verdict, and why
mkdir -p "$T/kb"
cp tests/fixtures/kbtol/matmul/* "$T/kb/"
verdict unknown "$T/kb" tests/fixtures/kbtol/matmul/tiled_f64.c
check "a reference that cannot write float64 outputs: precision unknown, with why, exit 0 ($(field why unknown | cut -c1-90))" \
	sh -c "test '$(field verdict unknown)/$rc' = unknown/0 && grep -q '^  precision unknown: .*KL_F64' '$T/unknown.txt'"
exit 0
