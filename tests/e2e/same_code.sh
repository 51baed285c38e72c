# same_code.sh - a candidate whose machine code equals one already timed in
# the session (issue 11) is checked but not timed again: it gets the earlier
# timing with a note, in the journal, `kloop session`, `kloop replay` and the
# verdict, also across a resume; a real change of code is timed.
. tests/e2e/lib.sh
B="--backend host --budget 0.2"
S="$T/s.jsonl"
SEED=tasks/softmax/seed.c
# the same code: a comment, renamed locals, an unused static function
python3 - "$SEED" "$T/same.c" "$T/other.c" <<'PY'
import sys
src = open(sys.argv[1]).read()
same = "/* the seed again, said differently */\nstatic float never_used(float v) { return v * 3.0f; }\n" + \
    src.replace("sum", "total").replace("const float *xr", "const float *row_in")\
       .replace("xr[", "row_in[").replace("xr =", "row_in =")
open(sys.argv[2], "w").write(same)
# other code, still correct: one reciprocal, then multiplies
other = src.replace("yr[c] /= sum;", "yr[c] *= inv;").replace(
    "for (int64_t c = 0; c < cols; c++)\n\t\t\tyr[c] *= inv;",
    "float inv = 1.0f / sum;\n\t\tfor (int64_t c = 0; c < cols; c++)\n\t\t\tyr[c] *= inv;")
assert "inv = 1.0f" in other
open(sys.argv[3], "w").write(other)
PY
$KLOOP eval softmax "$SEED" $B --session "$S" --json >"$T/1.json" 2>"$T/1.err"
check "the seed is correct and timed, with a code hash" python3 -c "
import json; r=json.load(open('$T/1.json'))
r=r[0] if isinstance(r,list) else r
assert r['status']=='correct' and r['time_ms']>0 and r['seconds']['time']>0, r
assert len(r['code_hash'])==64 and r['compile']['code_hash']==r['code_hash'] and 'not_timed' not in r"
# a resumed session: the workers learn what was timed from the journal
$KLOOP eval softmax "$T/same.c" $B --session "$S" --json >"$T/2.json" 2>"$T/2.err"
check "the same machine code is checked but not timed again, with the seed's timing" python3 -c "
import json; a=json.load(open('$T/1.json')); b=json.load(open('$T/2.json'))
a=a[0] if isinstance(a,list) else a; b=b[0] if isinstance(b,list) else b
assert b['status']=='correct' and b['correctness']['trials_passed']>0, b
assert b['code_hash']==a['code_hash'], (a['code_hash'], b['code_hash'])
assert b['not_timed']=='same machine code as #1, not timed again' and b['same_code_as']==1, b
assert b['seconds']['time']==0 and b['timing']==a['timing'] and b['time_ms']==a['time_ms'], b"
check "the journal says so in the candidate's eval_finished" python3 -c "
import json
ev=[json.loads(l) for l in open('$S')]
f=[e for e in ev if e['type']=='eval_finished' and e['candidate']==2][0]['result']
assert f['not_timed']=='same machine code as #1, not timed again' and f['same_code_as']==1"
$KLOOP eval softmax "$T/other.c" $B --session "$S" --json >"$T/3.json" 2>"$T/3.err"
check "other machine code is timed" python3 -c "
import json; a=json.load(open('$T/1.json')); c=json.load(open('$T/3.json'))
a=a[0] if isinstance(a,list) else a; c=c[0] if isinstance(c,list) else c
assert c['status']=='correct' and c['code_hash']!=a['code_hash'], c
assert 'not_timed' not in c and c['seconds']['time']>0, c"
$KLOOP session "$S" >"$T/session" 2>&1
check "kloop session shows the note on candidate 2 only" sh -c "
grep -E '^ +2 .*same machine code as #1, not timed again' '$T/session' >/dev/null &&
! grep -E '^ +(1|3) .*not timed' '$T/session' >/dev/null"
$KLOOP session "$S" --json >"$T/s.json" 2>&1
check "kloop session --json carries code_hash, not_timed and same_code_as" python3 -c "
import json; c=json.load(open('$T/s.json'))['candidates']
assert c[1]['same_code_as']==1 and c[1]['not_timed'].startswith('same machine code as #1')
assert c[0]['code_hash']==c[1]['code_hash']!=c[2]['code_hash'] and 'not_timed' not in c[2]"
$KLOOP replay "$S" </dev/null >"$T/replay" 2>&1
check "kloop replay shows it on the eval_finished event" \
	grep -q 'eval_finished #2: correct (same machine code as #1, not timed again)' "$T/replay"
# one session, both at once: the worker itself remembers what it timed
S2="$T/s2.jsonl"
$KLOOP eval softmax "$SEED" "$T/same.c" $B --session "$S2" >"$T/both" 2>&1
check "two of the same code in one run: the second is not timed, the report says so" \
	grep -q 'timing    same machine code as #1, not timed again' "$T/both"
python3 - "$S2" <<'PY' >"$T/hash_check"
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
r = {e["candidate"]: e["result"] for e in ev if e["type"] == "eval_finished"}
print("same" if r[1]["code_hash"] == r[2]["code_hash"] and r[2].get("same_code_as") == 1 else "differ")
PY
check "and its journal records the same code hash for both, #2 as the same code as #1" \
	grep -q same "$T/hash_check"
# the REPL's verdict line; benching the timed candidate again times it again
printf 'bench 2\nbench 1\n' | $KLOOP shell softmax $B --session "$S" >"$T/repl" 2>&1
check "the REPL's verdict line says so" \
	grep -Eq '^candidate 2 \(same.c\): correct, .* \(same machine code as #1, not timed again\)$' "$T/repl"
check "a candidate benched again is timed again" python3 -c "
import json
ev=[json.loads(l) for l in open('$S')]
f=[e for e in ev if e['type']=='eval_finished' and e['candidate']==1][-1]['result']
assert 'not_timed' not in f and f['seconds']['time']>0, f"
