# same_code.sh - a candidate whose machine code equals one already timed in
# the session (issue 11) is checked but not timed again: it gets the earlier
# timing with a note, in the journal, `kloop session`, `kloop replay` and the
# verdict, also across a resume; a real change of code is timed, and so is
# one byte of a note that the code reads (note_path, issue 37; on the GPU
# too, skipped with one line without one).
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
# (the copy carries the seed's timing, and its flags: on a loaded machine
# "its time unverified" stands between the verdict and the note)
check "kloop replay shows it on the eval_finished event ($(grep -m1 'eval_finished #2' "$T/replay"))" \
	grep -Eq 'eval_finished #2: correct(, [a-z ]+)? \(same machine code as #1, not timed again\)' "$T/replay"
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

# a byte the code reads, in a section that is loaded but was not hashed (a
# note, issue 37): twins but for that byte, the slow one timed on its own.
# note_pair EXT HEADER: $T/note_fast.EXT and note_slow.EXT, tests/fixtures/
# evil/note_path.c with the honest softmax of HEADER in front (as forge.sh
# does: the sandboxed compiler sees no other file)
note_pair() {
	{ grep -v '#include "softmax_body.h"' "$2"; grep -v '#include "softmax_body.h"' \
		tests/fixtures/evil/note_path.c; } >"$T/note_fast.$1"
	sed 's/^#define NOTE_SLOW 0$/#define NOTE_SLOW 1/' "$T/note_fast.$1" >"$T/note_slow.$1"
}
# note_checks OUT WHAT EXT: the slow twin timed, its time and code hash its own
note_checks() {
	check "$2: the twins differ in one byte of source" \
		test "$(cmp -l "$T/note_fast.$3" "$T/note_slow.$3" | wc -l)" = 1
	check "$2: the fast twin correct and timed, the slow one correct, timed on its own: no same_code_as, another code hash, its own timing ($(python3 -c "
import json; r=[json.loads(l) for l in open('$1')]
print([(x.get('status'), x.get('time_ms'), x.get('not_timed'), x.get('code_hash', '')[:12]) for x in r])" 2>&1))" python3 -c "
import json; f, s = [json.loads(l) for l in open('$1')]
assert f['status'] == s['status'] == 'correct', (f['status'], s['status'])
assert 'not_timed' not in f and 'not_timed' not in s and 'same_code_as' not in s, s
assert len(s['code_hash']) == 64 and f['code_hash'] != s['code_hash']
assert s['seconds']['time'] > 0 and s['timing'] != f['timing'] and s['time_ms'] != f['time_ms']"
}
note_pair c tests/fixtures/evil/softmax_body.h
$KLOOP eval softmax "$T/note_fast.c" "$T/note_slow.c" $B --json >"$T/note.json" 2>"$T/note.err"
n0=$NFAIL
note_checks "$T/note.json" "note_path.c (host)" c
diag "$n0" "$T/note.err"
# the same on the GPU: the byte in the host object's note, the kernel
# launched once or ten times
if ! $KLOOP doctor --json 2>/dev/null | python3 -c 'import json,sys; sys.exit(0 if json.load(sys.stdin)["gpu"]["ok"] else 1)'; then
	skip "same_code: no GPU here, the CUDA note_path twins did not run"
else
	note_pair cu tests/fixtures/evil_cuda/softmax_kernel.cuh
	$KLOOP eval softmax "$T/note_fast.cu" "$T/note_slow.cu" --backend cuda --sandbox \
		--budget "${KLOOP_GPU_BUDGET:-1}" --timeout 60 --json >"$T/note_cu.json" 2>"$T/note_cu.err"
	n0=$NFAIL
	note_checks "$T/note_cu.json" "note_path (CUDA)" cu
	diag "$n0" "$T/note_cu.err"
fi
