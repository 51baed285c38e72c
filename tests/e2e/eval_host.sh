# eval_host.sh - `kloop eval` on the host backend: each fixture gets its
# verdict, crashes and hangs take down only their worker, and the JSON and
# exit status say so.
. tests/e2e/lib.sh
F=tests/fixtures/host
B="--backend host --budget 0.3 --trials 5"

# verdict FILE STATUS NEEDLE [extra flags]: run eval --json and check
verdict() {
	file=$1 want=$2 needle=$3
	shift 3
	$KLOOP eval softmax "$file" $B --json "$@" >"$T/out.json" 2>"$T/err"
	rc=$?
	got=$(json status "$T/out.json" 2>/dev/null)
	reason=$(json reason "$T/out.json" 2>/dev/null)
	wantrc=1
	[ "$want" = correct ] && wantrc=0
	if [ "$got" = "$want" ] && [ $rc -eq $wantrc ] && echo "$reason" | grep -q -- "$needle"; then
		ok "$(basename "$file"): $want ($reason)"
	else
		fail "$(basename "$file"): expected $want with '$needle', got '$got' rc=$rc: $reason $(cat "$T/err")"
	fi
}

verdict tasks/softmax/seed.c correct ""
sp=$(json speedup "$T/out.json")
bl=$(json baseline_ms "$T/out.json")
tm=$(json time_ms "$T/out.json")
check "the seed's result has time_ms, baseline_ms and speedup ($tm ms, $bl ms, ${sp}x)" \
	python3 -c "import sys; t,b,s=map(float,sys.argv[1:]); assert t>0 and b>0 and abs(b/t-s)<1e-6*s" "$tm" "$bl" "$sp"
check "the correctness object reports five trials" test "$(json correctness.trials "$T/out.json")" = 5
for t in layernorm matmul hgemm gemm_bias_relu bf16_gemm fp8_gemm rmsnorm_bf16 attention_bf16 attention_causal_bf16; do
	$KLOOP eval $t tasks/$t/seed.c $B --json >"$T/$t.json" 2>"$T/err"
	check "the $t host seed is correct" test "$(json status "$T/$t.json")" = correct
done
# fp8: e4m3 operands and per-tensor scales; the precision verdict's
# accumulation emulations reckon with the scales (an emulation that left
# them out would not be the exact product, and none would be reported)
check "fp8_gemm: faithful, fp32 accumulation declared, f16 and bf16 accumulation emulated ($(head -c 300 "$T/fp8_gemm.json"))" \
	python3 -c "
import json; p = json.load(open('$T/fp8_gemm.json'))['precision']
assert p['verdict'] == 'faithful' and p['accumulation'] == 'fp32', p
e = p['emulated']
assert 0 < e['f16_accumulation'] < e['bf16_accumulation'], e"
# an fp8 seed that accumulates in f16 is not a correct fp8 GEMM: at a
# deep K (4096; its small shapes' 512), where it shows (at the host set's
# K of 96 its error hides under the bf16 output's rounding and the task's
# tolerance, which torch._scaled_mm's own error on the GPU sets), and the
# seed beside it is correct there
sed 's/acc += a\[k\] \* bj\[k\];/acc = kl_f16_to_f32(kl_f32_to_f16(acc + a[k] * bj[k]));/' \
	tasks/fp8_gemm/seed.c >"$T/fp8_f16acc.c"
cp tasks/fp8_gemm/seed.c "$T/fp8_seed.c"
$KLOOP eval fp8_gemm "$T/fp8_f16acc.c" "$T/fp8_seed.c" $B --shapes deep_k_64x4096x128 --json \
	>"$T/fp8acc.json" 2>"$T/err"
_st=$(cand_field "$T/fp8acc.json" fp8_f16acc.c status)
_sd=$(cand_field "$T/fp8acc.json" fp8_seed.c status)
check "fp8_gemm accumulated in f16 (the seed edited: $(grep -c kl_f32_to_f16 "$T/fp8_f16acc.c") line), at a deep K: incorrect (got $_st: $(cand_field "$T/fp8acc.json" fp8_f16acc.c reason | cut -c1-200)), the seed correct (got $_sd)" \
	test "$_st/$_sd" = incorrect/correct
# a task's reference.py runs at the shape set in use: its constants named
# as the set's dimensions are set (rows=64 cols=1024 here, 8192 x 4096 in
# the file), where they used to be a mismatch ("pick the matching --shapes")
if python3 -c 'import torch' >/dev/null 2>&1; then
	for t in rmsnorm_bf16 attention_causal_bf16; do
		$KLOOP eval $t tasks/$t/seed.c $B --reference torch --json >"$T/$t.torch.json" 2>"$T/$t.torch.err"
		check "the $t host seed against its reference.py at the host shapes: correct, PyTorch eager the baseline ($(said "$T/$t.torch.json") $(head -c 300 "$T/$t.torch.err"))" \
			python3 -c "
import json; r = json.load(open('$T/$t.torch.json'))
assert r['status'] == 'correct' and 'PyTorch' in r['baseline'], (r['status'], r.get('baseline'))"
	done
else
	skip "eval_host: no PyTorch for python3, the tasks' reference.py at the host shapes not run"
fi

verdict $F/off_by_one.c incorrect "NaN"
verdict $F/zeros.c incorrect "relative L2 error 1"
verdict $F/constant.c incorrect "relative L2"
verdict $F/first_row.c incorrect "at \[1, 0\]"
verdict $F/stateful.c incorrect "trial 2 of 5"
verdict $F/modifies_input.c incorrect "input modified"
verdict $F/oob_write.c incorrect "out-of-bounds write"
verdict $F/returns_error.c incorrect "kl_run returned 7"
verdict $F/syntax_error.c compile_error "error"
verdict $F/no_kl_run.c compile_error "does not define kl_run"
verdict $F/segfault.c crashed "SIGSEGV"
check "a crash says where: the runner's call stack, through the candidate's kl_run, in the verdict's output" python3 -c "
import json; r=json.load(open('$T/out.json')); t=r['stderr_tail']
assert 'kloop runner: SIGSEGV at address (nil); its call stack:' in t, t
assert '/proc/self/fd/' in t and '(kl_run+' in t, t"
verdict $F/abort.c crashed "SIGABRT"
verdict $F/exit.c crashed "exit(3)"
verdict $F/infinite_loop.c timeout "wall-clock" --timeout 3
verdict $F/flood_stdout.c correct ""
# past the memory limit: with a cgroup (kloop doctor's limits line) the
# candidate as a whole is stopped by the OOM killer and the verdict names
# the limit and how much it held; without one, its one process's malloc
# fails and its last words are in the report
case "$($KLOOP doctor | grep '^limits')" in
*"memory v"*)
	KLOOP_MEM_LIMIT_MB=1024 verdict $F/hog_memory.c crashed "memory limit was reached: it held [0-9.]* [GM]iB of its 1.00 GiB"
	;;
*)
	KLOOP_MEM_LIMIT_MB=1024 verdict $F/hog_memory.c crashed "SIGABRT"
	check "a candidate exhausting the memory limit leaves its last words in the report" grep -q "malloc failed after" "$T/out.json"
	;;
esac

# a crash, a hang, then a correct candidate, in one run: fresh workers each time
$KLOOP eval softmax $F/segfault.c $F/infinite_loop.c tasks/softmax/seed.c $B --timeout 3 --json >"$T/multi.json" 2>"$T/err"
rc=$?
statuses=$(python3 -c 'import json,sys; print(" ".join(json.loads(l)["status"] for l in open(sys.argv[1])))' "$T/multi.json")
check "crash, hang, then a correct eval on a fresh worker (got: $statuses, rc $rc)" test "$statuses" = "crashed timeout correct" -a $rc -eq 1

# the crash report carries the candidate's last output
cat >"$T/noisy_crash.c" <<'C'
#include <stdio.h>
#include "kloop.h"
int kl_run(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *stream)
{
	(void)in; (void)n_in; (void)out; (void)n_out; (void)stream;
	fprintf(stderr, "about to fail: index 12345\n");
	fflush(stderr);
	*(volatile int *)0 = 1;
	return 0;
}
C
$KLOOP eval softmax "$T/noisy_crash.c" $B --json >"$T/nc.json" 2>&1
check "a crash reports the last lines the candidate printed" grep -q "about to fail: index 12345" "$T/nc.json"

# human-readable output and the compiler's own diagnostics
$KLOOP eval softmax $F/syntax_error.c $B >"$T/human.txt" 2>&1
check "a compile error shows the compiler's diagnostics with file and line" grep -q "syntax_error.c:[0-9]*:[0-9]*: error" "$T/human.txt"
# a warning said 200 times is one line in the verdict's log, with its count
# and first place (diagfold.h); the error after it stays
{ for i in $(seq 200); do echo "int f$i(void) { int x; return 0; }"; done
  echo 'int kl_run(void) { return undefined_name; }'; } >"$T/warns.c"
$KLOOP eval softmax "$T/warns.c" $B --json >"$T/warns.json" 2>"$T/err"
check "a warning said 200 times is one line in the verdict's log, the error kept ($(head -c 300 "$T/warns.json"))" python3 -c "
import json; r=json.load(open('$T/warns.json')); log=r['compile']['log']
assert r['status'] == 'compile_error', r['status']
assert log.count('unused variable') == 1 and '(200 times; first at warns.c:1:' in log, log
assert 'warns.c:201:27: error:' in log and 'undefined_name' in r['reason'], log"
$KLOOP eval softmax tasks/softmax/seed.c $B >"$T/human.txt" 2>&1
check "human output names verdict, time and speedup" sh -c "grep -q 'verdict   correct' '$T/human.txt' && grep -q 'speedup' '$T/human.txt'"
check "it says once where the worker's setup went: the inputs, the reference's compile, runs and timing" \
	test "$(grep -Ec '^  setup     the worker was ready after [0-9.]+ s: the inputs drawn and varied in [0-9.]+ s, the reference compiled in [0-9.]+ s and run on every set in [0-9.]+ s, timed in [0-9.]+ s$' "$T/human.txt")" = 1
check "... and names no PyTorch reference data for a kernel reference" sh -c "! grep -q 'reference PyTorch' '$T/human.txt'"
# the same source compiled twice at once (two copies of a file, a repeated
# LLM answer), with nothing in the cache: each compile has a directory of
# its own, so neither is a false compile error
mkdir -p "$T/twice/a" "$T/twice/b"
{ cat tasks/softmax/seed.c; echo "/* never compiled before: $$ $(date +%s%N) */"; } >"$T/twice/a/k.c"
cp "$T/twice/a/k.c" "$T/twice/b/k.c"
XDG_CACHE_HOME="$T/twice/cache" $KLOOP eval softmax "$T/twice/a/k.c" "$T/twice/b/k.c" \
	"$T/twice/a/k.c" $B --json >"$T/twice.json" 2>"$T/twice.err"
check "the same new source three times in one eval: each correct, none a compile error" python3 -c "
import json
rs = [json.loads(l) for l in open('$T/twice.json') if l.strip()]
assert [r['status'] for r in rs] == ['correct'] * 3, [(r['status'], r.get('reason')) for r in rs]"
check "each result carries the worker's setup, its parts within its whole" python3 -c "
import json
for l in open('$T/twice.json'):
    rd = json.loads(l)['reference_data']
    su = rd['setup']
    parts = [su[k] for k in ('inputs', 'reference_compile', 'reference_runs', 'reference_timing')]
    assert list(rd) == ['setup'] and min(parts) >= 0 and sum(parts) <= su['seconds'], rd"
# NaN outputs: the max abs error is over the finite pairs, so the count of
# the non-finite ones is given next to it, not a bare "max abs error 0"
cat >"$T/nan.c" <<'C'
#include <math.h>
#include "kloop.h"
int kl_run(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *stream)
{
	(void)in, (void)n_in, (void)n_out, (void)stream;
	float *y = out[0].data;
	for (int64_t i = 0; i < kl_numel(&out[0]); i++)
		y[i] = NAN;
	return 0;
}
C
$KLOOP eval softmax "$T/nan.c" $B --json >"$T/nan.json" 2>/dev/null
check "NaN outputs: incorrect, every mismatch counted as non-finite in --json" python3 -c "
import json; r = json.load(open('$T/nan.json')); c = r['correctness']
assert r['status'] == 'incorrect' and c['mismatches'] > 0 and c['non_finite'] == c['mismatches'], c"
$KLOOP eval softmax "$T/nan.c" $B >"$T/nan.txt" 2>&1
check "and the text says how many were NaN or Inf" \
	grep -Eq 'mismatches \([0-9]+ of them NaN or Inf where the reference is finite' "$T/nan.txt"
# a reference whose output has NaN (here at one element): NaN never passes,
# so a candidate that leaves that element unwritten (the NaN poison stays)
# or copies the NaN must not match it; the fault is the reference's, and
# the error says so
cp -r tasks/softmax "$T/nanref"
sed 's|^\treturn 0;|\ty[0] = NAN;\n\treturn 0;|' tasks/softmax/reference.c >"$T/nanref/reference.c"
cp "$T/nanref/reference.c" "$T/nanref_copy.c"
$KLOOP eval "$T/nanref" "$T/nanref_copy.c" $B --json >"$T/nanref.json" 2>"$T/nanref.err"
rc=$?
check "a reference with a NaN output: a candidate with the same NaN does not pass (exit $rc)" \
	sh -c "test $rc -ne 0 && ! grep -q '\"status\":\"correct\"' '$T/nanref.json'"
check "... and the error puts the fault on the reference ($(head -c 300 "$T/nanref.err"))" \
	grep -q "the reference's output y has 1 NaN of .* elements: NaN never passes" "$T/nanref.err"
# a write just before or after a read-only input lands in its guard band:
# an out-of-bounds write (crashed), not "input modified"; a write inside it is
for w in "-1:before" "numel:after" "3:inside"; do
	at=${w%%:*} where=${w#*:}
	[ "$at" = numel ] && at="kl_numel(in)"
	sed "s|^\treturn 0;|\t((float *)in[0].data)[$at] = 1;\n\treturn 0;|" tasks/softmax/seed.c \
		>"$T/inw_$where.c"
	$KLOOP eval softmax "$T/inw_$where.c" $B --json >"$T/inw_$where.json" 2>/dev/null
done
check "a write just before input x: crashed, an out-of-bounds write into its guard band" python3 -c "
import json; r = json.load(open('$T/inw_before.json'))
assert r['status'] == 'crashed' and 'out-of-bounds write: the candidate wrote into the guard band before read-only input x' in r['reason'], r['reason']"
check "just after it: the same, after" python3 -c "
import json; r = json.load(open('$T/inw_after.json'))
assert r['status'] == 'crashed' and 'guard band after read-only input x' in r['reason'], r['reason']"
check "inside it: input modified" python3 -c "
import json; r = json.load(open('$T/inw_inside.json'))
assert 'input modified: the candidate wrote to its read-only input x' in r['reason'], r['reason']"

# KLOOP_STEP_TRACE: the worker's steps, which bench/gpu/steps.py summarizes
# (where a verdict's time goes)
rm -f "$T/steps.jsonl"
KLOOP_STEP_TRACE=$T/steps.jsonl $KLOOP eval softmax tasks/softmax/seed.c $B --json >"$T/st.json" 2>/dev/null
python3 bench/gpu/steps.py "$T/steps.jsonl" >"$T/steps.txt" 2>&1
check "KLOOP_STEP_TRACE: a runner's mapping, frames and load, the full timing's counted runs and batch, a run's preparation (its five parts) and call, the batch's ring, runs and checks, each with its milliseconds ($(tr '\n' ';' <"$T/steps.txt" | head -c 600))" python3 -c "
import json, sys
steps = {}
for l in open('$T/steps.jsonl'):
    e = json.loads(l)
    assert isinstance(e['pid'], int) and e['ms'] >= 0, e
    steps.setdefault(e['what'], []).append(e['ms'])
for w in ('runner frames', 'runner loaded', 'full timing: counted runs', 'full timing: batch', 'quick timing: counted runs',
          \"a run's preparation\", 'frames: 21 calibrating', 'a timed run, its call and clock reads',
          'runner round trip: a run', 'batch: its ring prepared', 'batch: its runs', 'batch: its runs checked'):
    assert w in steps, (w, sorted(steps))
assert any(w.startswith('runner mapped') for w in steps), sorted(steps)
assert sum(steps['full timing: counted runs']) > 0
# a preparation's parts, as many as the preparations, none longer than it
parts = [w for w in steps if w.startswith(\"a run's preparation: \")]
assert len(parts) == 5 and all(len(steps[w]) == len(steps[\"a run's preparation\"]) for w in parts), parts
assert sum(sum(steps[w]) for w in parts) <= sum(steps[\"a run's preparation\"]) + 0.002 * len(parts) * len(steps[\"a run's preparation\"])
"
check "steps.py prints a line for the full timing's counted runs" grep -q "^full timing: counted runs " "$T/steps.txt"
