# stats.sh - inputs a statistic cannot guess (issue 25): on KernelBench's
# MSELoss at host size, judged by KernelBench's tolerance, an answer written
# without reading the inputs (2.0, the expected value for two standard
# normals) and a mean over every 64th element both fail, on a varied trial
# (scaled, heavy-tailed, outliers) if not on a plain one, while the honest
# loss passes, faithful in precision; the result says how each trial's
# inputs were varied.  Where a way of varying takes the inputs out of the
# problem's domain (log of a negative number), the reference says so by its
# NaN, those sets are drawn plain, and the result names the unsound way;
# `"vary": false` in an input's init keeps its distribution.
. tests/e2e/lib.sh
F=tests/fixtures/stats
B="--backend host --budget 0.05"

$KLOOP eval $F/mse $F/mse/honest.c $F/mse/analytic.c $F/mse/partial.c $B --json >"$T/mse.json" 2>"$T/mse.err"
python3 - "$T/mse.json" <<'PY' >"$T/mse.v"
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    c = r.get("correctness") or {}
    print(r["source"].split("/")[-1], r["status"], (r.get("precision") or {}).get("verdict"),
          json.dumps((c.get("inputs") or {}).get("trials")), "|", r.get("reason", "")[:200])
PY
nf=$NFAIL
check "the honest MSE is correct and faithful ($(grep '^honest' "$T/mse.v"))" grep -q '^honest.c correct faithful' "$T/mse.v"
check "... its trials' inputs: three plain (the precision verdict's), then varied" \
	grep -q '^honest.c correct faithful \["plain", "plain", "plain", "scaled+outliers", "heavy-tailed"\]' "$T/mse.v"
# an fp32 sum of 2^20 squares errs more on varied inputs (outliers: up to
# twice 2 u sqrt(L)) than on plain ones: faithful there too, each checked
# timed run naming its inputs (it was called reduced in 1 evaluation of 3)
check "... faithful in every checked timed run, each naming its inputs" python3 -c "
import json
r = [json.loads(l) for l in open('$T/mse.json') if '/honest.c' in l][0]
runs = r['precision'].get('checked_runs', [])
assert runs and all(x['verdict'] == 'faithful' and x['inputs'] for x in runs), runs
assert any(x['inputs'] != 'plain' for x in runs), runs"
check "the analytical answer (2.0 without reading the inputs) is incorrect on a varied trial ($(grep '^analytic' "$T/mse.v" | cut -d'|' -f2))" \
	sh -c "grep '^analytic.c incorrect' '$T/mse.v' | grep -Eq 'inputs\\)'"
check "the mean over every 64th element is incorrect ($(grep '^partial' "$T/mse.v" | cut -d'|' -f2))" \
	grep -q '^partial.c incorrect' "$T/mse.v"
diag $nf "$T/mse.v" "$T/mse.err"

# a varied trial says how it was varied when it fails
$KLOOP eval $F/mse $F/mse/analytic.c $B >"$T/an.txt" 2>&1
check "the failing trial names its inputs' variation" \
	grep -Eq 'trial [0-9] of [0-9] \((scaled|heavy-tailed|outliers)[a-z+-]* inputs\)' "$T/an.txt"

# log(x): scaled and outlier inputs can be negative, out of log's domain
$KLOOP eval $F/log $F/log/logf.c $B --json >"$T/log.json" 2>"$T/log.err"
check "log: correct, the ways out of its domain dropped and named ($(json correctness.inputs "$T/log.json"))" python3 -c "
import json; r=json.load(open('$T/log.json'))
v=r['correctness']['inputs']
assert r['status']=='correct', r['reason']
assert 'scaled' in v['unsound'] and 'outliers' in v['unsound'], v
assert 'heavy-tailed' in v['trials'], v"
mkdir -p "$T/logfixed"
cp $F/log/reference.c "$T/logfixed/"
sed 's/"dist": "uniform", "lo": 0.5, "hi": 2.0}/"dist": "uniform", "lo": 0.5, "hi": 2.0, "vary": false}/' \
	$F/log/task.json >"$T/logfixed/task.json"
$KLOOP eval "$T/logfixed" $F/log/logf.c $B --json >"$T/lf.json" 2>"$T/lf.err"
_n=$NFAIL
check "\"vary\": false keeps the input's distribution: every trial plain, nothing unsound" python3 -c "
import json; r=json.load(open('$T/lf.json'))
v=r['correctness']['inputs']
assert r['status']=='correct' and set(v['trials'])=={'plain'} and 'unsound' not in v, v"
# once (under make asan; not again in 11 runs) this failed without a word
diag $_n "$T/lf.json" "$T/lf.err"
sed 's/"vary": false/"vary": "no"/' "$T/logfixed/task.json" >"$T/logfixed/t2.json"
mkdir -p "$T/logbad"
cp "$T/logfixed/t2.json" "$T/logbad/task.json"
cp $F/log/reference.c "$T/logbad/"
$KLOOP eval "$T/logbad" $F/log/logf.c $B >"$T/lb.out" 2>&1
check "\"vary\": \"no\" is an error naming the field ($(head -c 150 "$T/lb.out"))" \
	grep -q 'inputs\[0\].init.vary: expected true or false' "$T/lb.out"
# the same on KernelBench's problem file, PyTorch's reference varying its
# forward inputs (where PyTorch is installed)
if python3 -c 'import torch' >/dev/null 2>&1; then
	KB=tests/fixtures/torch/kb/94_MSELoss.py
	$KLOOP eval $KB $F/mse/honest.c $F/mse/analytic.c $F/mse/partial.c $B --python python3 \
		--json >"$T/kb.json" 2>"$T/kb.err"
	python3 - "$T/kb.json" <<'PY' >"$T/kb.v"
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    print(r["source"].split("/")[-1], r["status"], (r.get("precision") or {}).get("verdict"), "|", r.get("reason", "")[:160])
PY
	nf=$NFAIL
	check "KernelBench 94_MSELoss: the honest loss correct and faithful ($(grep '^honest' "$T/kb.v"))" \
		grep -q '^honest.c correct faithful' "$T/kb.v"
	check "... the analytical 2.0 incorrect ($(grep '^analytic' "$T/kb.v" | cut -d'|' -f2))" grep -q '^analytic.c incorrect' "$T/kb.v"
	check "... the mean over every 64th element incorrect ($(grep '^partial' "$T/kb.v" | cut -d'|' -f2))" grep -q '^partial.c incorrect' "$T/kb.v"
	diag $nf "$T/kb.v" "$T/kb.err"
else
	skip "stats: PyTorch is not installed for python3: KernelBench's 94_MSELoss did not run"
fi
exit 0
