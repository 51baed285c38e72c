# cascade.sh - the evaluation cascade on the host backend (compile, small
# shapes, full shapes, quick timing, full timing, A/B): candidates made from
# the softmax seed by one change each, so that where each one stops is
# certain, and the stage it stopped at is in its result.
. tests/e2e/lib.sh
EVAL="--backend host --budget 0.2 --trials 2"
SEED=tasks/softmax/seed.c
COLS='int64_t cols = in\[0\].shape\[in\[0\].ndim - 1\];'
# rows taken to be 4096 long (the host set's cols): wrong at the small
# shapes (cols 512), yet inside its buffers
sed "s/$COLS/int64_t cols = 4096;/" $SEED >"$T/small_wrong.c"
# a SIGSEGV unless the rows are 4096 long: a crash at the small shapes
sed "s/$COLS/& if (cols != 4096) *(volatile int *)0 = 0;/" $SEED >"$T/small_crash.c"
# the last row left at zero when the rows are 4096 long: wrong at the full shapes only
sed 's|yr\[c\] /= sum;|yr[c] = cols == 4096 \&\& r == rows - 1 ? 0.0f : yr[c] / sum;|' $SEED \
	>"$T/full_wrong.c"
cp $SEED "$T/seed.c"
printf 'int kl_run(void) { return undeclared; }\n' >"$T/no_compile.c"
# stage FILE STATUS STAGE PASSED: kloop eval FILE --json stops at STAGE with
# STATUS, having passed the stages PASSED (comma-separated)
stage() {
	$KLOOP eval softmax "$1" --json $EVAL >"$T/r.json" 2>"$T/r.err"
	python3 - "$T/r.json" "$2" "$3" "$4" <<'PY' >"$T/py.out" 2>&1
import json, sys
r = json.load(open(sys.argv[1]))
passed = [s["stage"] for s in r["stages"]]
assert r["status"] == sys.argv[2], (r["status"], r["reason"])
assert r["stage"] == sys.argv[3], (r["stage"], r["reason"])
assert passed == [x for x in sys.argv[4].split(",") if x], passed
PY
}
for c in "small_wrong incorrect:small shapes:compile" \
	"small_crash crashed:small shapes:compile" \
	"full_wrong incorrect:full shapes:compile,small shapes" \
	"no_compile compile_error:compile:" \
	"seed correct:full timing:compile,small shapes,full shapes,quick timing,full timing"; do
	f=${c%% *}
	rest=${c#* }
	st=${rest%%:*}
	rest=${rest#*:}
	sg=${rest%%:*}
	stage "$T/$f.c" "$st" "$sg" "${rest#*:}"
	if [ $? -eq 0 ]; then ok "cascade: $f.c is $st at stage '$sg'"; else
		fail "cascade: $f.c is $st at stage '$sg'"
		sed 's/^/#   /' "$T/py.out" | tail -3
	fi
done

# --- one runner for every stage: it maps the small and the full shapes'
# buffers at its start; a failure at the full shapes is checked again in a
# fresh runner, so that state a candidate keeps from its small-shapes calls
# (here: the size of its first call's input, so the full shapes' rows past
# it stay unwritten) is named, not taken for its verdict
$KLOOP eval softmax "$T/seed.c" --json $EVAL >"$T/one.json" 2>"$T/one.err"
check "a correct candidate went through every stage in one runner (\"runners\": 1)" python3 -c "
import json; r=json.load(open('$T/one.json'))
assert r['status']=='correct' and r['runners']==1, (r['status'], r.get('runners'))
assert [s['stage'] for s in r['stages']][1:3]==['small shapes','full shapes'], r['stages']
assert 'kept_state' not in r"
sed -e 's/^\(\tint64_t rows = .*\)$/\1\n\tstatic int64_t n0;\n\tif (!n0)\n\t\tn0 = rows * cols;\n\tif (n0 < rows * cols)\n\t\trows = n0 \/ cols;/' \
	$SEED >"$T/kept.c"
$KLOOP eval softmax "$T/kept.c" --json $EVAL >"$T/kept.json" 2>"$T/kept.err"
check "a candidate that keeps its first call's size is correct, from a fresh runner (\"runners\": 2)" \
	python3 -c "
import json; r=json.load(open('$T/kept.json'))
assert r['status']=='correct' and r['runners']==2, (r['status'], r.get('reason'), r.get('runners'))"
check "and its verdict names what happened in the shared runner (kept_state)" python3 -c "
import json; r=json.load(open('$T/kept.json'))
k=r['kept_state']
assert k.startswith('incorrect at the full shapes in the process that had run the small shapes'), k
assert 'correct in a fresh one' in k and 'keeps state' in k, k"
$KLOOP eval softmax "$T/kept.c" $EVAL >"$T/kept.out" 2>&1
check "kloop eval prints it as a warning" grep -q '^  warning   incorrect at the full shapes in the process that had run the small shapes' "$T/kept.out"
printf '%s\n' "add $T/kept.c" "show 2" | $KLOOP shell softmax --session "$T/kept.jsonl" $EVAL \
	>"$T/kept_show.out" 2>&1
check "and the shell's show (the TUI's results pane) too" \
	grep -q '^warning   incorrect at the full shapes in the process that had run the small shapes' "$T/kept_show.out"
$KLOOP eval softmax "$T/full_wrong.c" --json $EVAL >"$T/fw.json" 2>"$T/fw.err"
check "a candidate wrong at the full shapes is wrong in the fresh runner too: incorrect, no kept_state" \
	python3 -c "
import json; r=json.load(open('$T/fw.json'))
assert r['status']=='incorrect' and r['stage']=='full shapes' and r['runners']==2, r
assert 'kept_state' not in r and 'at the small shapes' not in r['reason'], r['reason']"
diag 0 "$T/kept.json" "$T/kept.c"

# --- the interleaved A/B: `bench 2 --ab 1` in the shell times #2 against #1
# alternately whatever their times; the result is an ab_compared event
# (its pairs and wins: no assertion on which one is faster) that replay shows
printf '%s\n' "add tests/fixtures/search/chunked.c" "bench 2 --ab 1" |
	$KLOOP shell softmax --session "$T/ab.jsonl" $EVAL >"$T/ab.out" 2>"$T/ab.err"
python3 - "$T/ab.jsonl" <<'PY' >"$T/py.out" 2>&1
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
ab = [e for e in ev if e["type"] == "ab_compared"]
assert len(ab) == 1, ab
a = ab[0]
assert (a["candidate"], a["incumbent"]) == (2, 1), a
assert 12 <= a["pairs"] <= 20 and 0 <= a["wins"] <= a["pairs"], a
assert isinstance(a["won"], bool) and a["rule"].startswith("sign test: faster in"), a
fin = [e["result"] for e in ev if e["type"] == "eval_finished" and e["candidate"] == 2][-1]
assert fin["stage"] == "a/b" and fin["ab"]["pairs"] == a["pairs"], fin.get("stage")
assert [s["stage"] for s in fin["stages"]][-1] == "a/b"
PY
if [ $? -eq 0 ]; then ok "bench 2 --ab 1: an ab_compared event with its pairs and wins; the result's stage is a/b"; else
	fail "bench 2 --ab 1: an ab_compared event with its pairs and wins; the result's stage is a/b"
	sed 's/^/#   /' "$T/py.out" "$T/ab.err" | tail -4
fi
check "the shell's verdict line carries the A/B: 'A/B vs #1: faster in W of N pairs'" \
	grep -Eq 'candidate 2 \(chunked.c\): correct, .*; A/B vs #1: faster in [0-9]+ of [0-9]+ pairs' \
	"$T/ab.out"
$KLOOP replay "$T/ab.jsonl" >"$T/replay.out" 2>&1
check "replay shows the A/B: 'ab_compared #2 vs #1: ... over N pairs, faster in W'" \
	grep -Eq 'ab_compared #2 vs #1: .* over [0-9]+ pairs, faster in [0-9]+' "$T/replay.out"

# --- the physical limit by FLOPs: a task giving its FLOP count, and a peak so
# low (1 MFLOP/s) that every candidate's time is below what its FLOPs take:
# every correct one is a suspect, none the best
cp -r tasks/softmax "$T/flopmax"
python3 -c 'import json,sys
j=json.load(open(sys.argv[1])); j["name"]="flopmax"; j["flops"]="5*rows*cols"
json.dump(j, open(sys.argv[1], "w"))' "$T/flopmax/task.json"
$KLOOP search "$T/flopmax" --from tests/fixtures/search/chunked.c --rounds 1 --sweep-only \
	--peak-tflops 0.000001 --session "$T/flops.jsonl" $EVAL >"$T/flops.out" 2>"$T/flops.err"
python3 - "$T/flops.jsonl" <<'PY' >"$T/py.out" 2>&1
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
fin = {e["candidate"]: e["result"] for e in ev if e["type"] == "eval_finished"}
ok = {i for i, r in fin.items() if r["status"] == "correct"}
sus = {e["candidate"]: e["why"] for e in ev if e["type"] == "suspect_flagged"}
best = [e for e in ev if e["type"] == "new_best"]
assert ok and set(sus) == ok and not best, (ok, sus, best)
assert all("its 0.001311 GFLOP take at 1e-06 TFLOP/s" in w for w in sus.values()), sus
PY
if [ $? -eq 0 ]; then ok "--peak-tflops: a time below the task's flops (5*rows*cols) at the peak is a suspect, never the best"; else
	fail "--peak-tflops: a time below the task's flops (5*rows*cols) at the peak is a suspect, never the best"
	sed 's/^/#   /' "$T/py.out" "$T/flops.err" | tail -4
fi
python3 -c 'import json,sys
j=json.load(open(sys.argv[1])); j["flops"]="2*rows*depth"
json.dump(j, open(sys.argv[1], "w"))' "$T/flopmax/task.json"
$KLOOP eval "$T/flopmax" tasks/softmax/seed.c $EVAL >"$T/bad.out" 2>"$T/bad.err"
check "a flops expression naming an unknown dimension is an error naming the field and the name" \
	grep -q "flops: 'depth' is not a dimension of shape set 'host'" "$T/bad.err"

# --- the quick timing's stop: --quick-stop 0.000001 ends every candidate the
# search evaluates after its 5 quick runs (each is far slower than a
# millionth of the baseline), still correct: it passed the full shapes
$KLOOP search softmax --from tests/fixtures/search/chunked.c --rounds 1 --sweep-only \
	--quick-stop 0.000001 --session "$T/quick.jsonl" $EVAL >"$T/quick.out" 2>"$T/quick.err"
python3 - "$T/quick.jsonl" <<'PY' >"$T/py.out" 2>&1
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
src = {e["id"]: e["origin"] for e in ev if e["type"] == "candidate_added"}
fin = {}
for e in ev:  # each one's first verdict (one that looks faster is evaluated again, with an A/B)
    if e["type"] == "eval_finished":
        fin.setdefault(e["candidate"], e["result"])
sweep = [i for i, o in src.items() if o == "sweep"]
assert sweep, src
for i in sweep:
    r = fin[i]
    assert r["status"] == "correct" and r["stage"] == "quick timing", (i, r["status"], r["stage"])
    assert r["timing"]["count"] == 5 and "stopped after the quick timing" in r["timing"]["stopped"]
    assert [s["stage"] for s in r["stages"]][-2:] == ["full shapes", "quick timing"]
assert fin[1]["stage"] == "full timing"  # the seed, evaluated before the search began
PY
if [ $? -eq 0 ]; then ok "--quick-stop: the sweep points stop after 5 quick runs, correct, stage 'quick timing'"; else
	fail "--quick-stop: the sweep points stop after 5 quick runs, correct, stage 'quick timing'"
	sed 's/^/#   /' "$T/py.out" "$T/quick.err" | tail -4
fi
