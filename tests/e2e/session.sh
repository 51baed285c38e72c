# session.sh - `kloop eval --session` journals candidates and results;
# `kloop session` folds them back, also after a crash mid-write.
. tests/e2e/lib.sh
B="--backend host --budget 0.2"
S="$T/s.jsonl"
$KLOOP eval softmax tasks/softmax/seed.c $B --session "$S" >/dev/null 2>&1
$KLOOP eval softmax tests/fixtures/host/zeros.c $B --session "$S" >/dev/null 2>&1
$KLOOP session "$S" --json >"$T/s.json"
check "the session holds two candidates" test "$(json candidates "$T/s.json" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')" = 2
check "the seed is recorded with origin seed and status correct" \
	test "$(json candidates.0.origin "$T/s.json") $(json candidates.0.status "$T/s.json")" = "seed correct"
check "the hand-given candidate is human and incorrect" \
	test "$(json candidates.1.origin "$T/s.json") $(json candidates.1.status "$T/s.json")" = "human incorrect"
check "the seed's median time is recorded" python3 -c "import json; c=json.load(open('$T/s.json'))['candidates'][0]; assert c['time_ms']>0 and c['speedup']>0"
check "events: started + 2 x (added, started, running, finished)" test "$(json events "$T/s.json")" = 9
check "every journal line is one JSON object" python3 -c "import json; [json.loads(l) for l in open('$S')]"
check "no line of the journal is an API key or an environment dump" sh -c "! grep -q 'API_KEY' '$S'"
printf '{"type":"candidate_added","id":9,"na' >>"$S"
$KLOOP session "$S" >"$T/human" 2>"$T/err"
check "a truncated last line is reported, the rest is folded" sh -c "grep -q truncated '$T/err' && grep -q '2 candidates' '$T/human'"
$KLOOP eval softmax tasks/softmax/seed.c $B --session "$S" >/dev/null 2>&1
$KLOOP session "$S" --json >"$T/s2.json" 2>/dev/null
check "appending after the truncated line works (3 candidates)" test "$(json candidates.2.id "$T/s2.json")" = 3
$KLOOP eval layernorm tasks/layernorm/seed.c $B --session "$S" >"$T/out" 2>"$T/err"
check "a session of another task is refused with exit 2" sh -c "test $? -eq 2 && grep -q \"is for task 'softmax'\" '$T/err'"
# an empty file, or one of no events, is no session (as kloop replay says)
: >"$T/empty.jsonl"
$KLOOP session "$T/empty.jsonl" >"$T/e.out" 2>"$T/e.err"
check "kloop session of an empty file: exit 2, 'the journal holds no events'" sh -c \
	"test $? -eq 2 && grep -q 'empty.jsonl: the journal holds no events' '$T/e.err'"
printf 'not json\n\001\002binary\n' >"$T/junk.jsonl"
$KLOOP session "$T/junk.jsonl" >"$T/j.out" 2>"$T/j.err"
check "and of a file of junk lines: exit 2, each line named" sh -c \
	"test $? -eq 2 && grep -q 'junk.jsonl:1: not valid JSON' '$T/j.err' && grep -q 'holds no events (every line was ignored' '$T/j.err'"
# a rejected event is named by its line in the file, by replay as by session
python3 - "$S" "$T/dup.jsonl" <<'PY'
import sys
lines = open(sys.argv[1]).read().splitlines(True)
lines = [l for l in lines if l.strip().endswith("}")]
dup = '{"type":"candidate_added","id":1,"origin":"human","name":"dup.c","source":"x"}\n'
out = lines[:3] + ["garbage\n", "more garbage\n", dup] + lines[3:]
open(sys.argv[2], "w").write("".join(out))
PY
$KLOOP session "$T/dup.jsonl" >/dev/null 2>"$T/d1.err"
$KLOOP replay "$T/dup.jsonl" </dev/null >"$T/d2.out" 2>"$T/d2.err"
check "kloop session names the rejected event's line (6)" grep -q 'dup.jsonl:6: event ignored' "$T/d1.err"
check "kloop replay names the same line" grep -q 'dup.jsonl:6: event 4 ignored' "$T/d2.err"
diag 0 "$T/d1.err" "$T/d2.err"

# --json is JSON: DEL, the C1 controls and bytes that are not UTF-8 (a
# candidate's name, a journal's text) are escaped as JSON escapes them,
# never rewritten by the terminal guard into "\x7F", an invalid escape
printf '{"type":"session_started","ts":1,"task":"soft\177max\302\233y\377","backend":"host"}\n' >"$T/ctl.jsonl"
$KLOOP session "$T/ctl.jsonl" --json >"$T/ctl.json" 2>"$T/ctl.err"
check "kloop session --json of control bytes is strict JSON, escaped (\\u007f, \\u009b, \\ufffd)" python3 -c '
import json, sys
raw = open(sys.argv[1], "rb").read()
raw.decode("utf-8")  # valid UTF-8
assert b"\\x7F" not in raw and b"\\\\x" not in raw, raw[:200]
assert json.loads(raw)["task"] == "soft\x7fmax\x9by\ufffd", json.loads(raw)["task"]' "$T/ctl.json"
exit $((NFAIL > 0))

