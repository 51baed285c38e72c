# gate.sh - the human gate (issue 27, items 1-3): `kloop search --session F`
# on a session whose ideas wait at the human gate says so and how to go on
# when no person can answer, instead of waiting silently; a session file
# that is not there, with no task, is an error naming it; `kloop search
# --gate human` on a terminal puts round 1's ideas to the person.
. tests/e2e/lib.sh
EVAL="--backend host --budget 0.2 --trials 2"
corpus_steering "$T/slowtask"

# pending JOURNAL: how many of its ideas no one has accepted or rejected
pending() {
	python3 -c 'import json,sys
st={}
for e in map(json.loads, filter(str.strip, open(sys.argv[1]))):
    if e["type"]=="idea_proposed": st[e["id"]]="pending"
    elif e["type"] in ("idea_accepted","idea_rejected"): st[e["id"]]="done"
print(sum(v=="pending" for v in st.values()))' "$1"
}

# a round under the human gate, left with its ideas pending
printf '%s\n' "search step" "gate human" "search step" |
	$KLOOP shell "$T/slowtask" --session "$T/g.jsonl" $EVAL >"$T/sh.out" 2>"$T/sh.err"
np=$(pending "$T/g.jsonl")
check "the shell left the round's ideas pending at the human gate ($np)" test "$np" -ge 1

timeout 120 $KLOOP search --session "$T/g.jsonl" --rounds 6 </dev/null >"$T/r.out" 2>"$T/r.err"
rc=$?
check "resumed, the search at the human gate ends with status 3, not a silent wait (rc $rc)" \
	test $rc -eq 3
if [ "$np" -eq 1 ]; then w="1 idea waits"; else w="$np ideas wait"; fi
check "... and says how many ideas wait for a person ($(grep 'human gate' "$T/r.err"))" \
	grep -q "the search waits at the human gate: $w for a person" "$T/r.err"
check "... and how to go on: the workbench, the shell, or --gate auto" \
	sh -c "grep -q 'kloop open --session $T/g.jsonl' '$T/r.err' &&
		grep -q 'kloop shell --session $T/g.jsonl' '$T/r.err' &&
		grep -q 'kloop search --session $T/g.jsonl --gate auto' '$T/r.err'"
np1=$(pending "$T/g.jsonl")
check "... and decides none of them ($np1 still pending)" test "$np1" -eq "$np"
timeout 300 $KLOOP search --session "$T/g.jsonl" --rounds 3 --gate auto </dev/null \
	>"$T/a.out" 2>"$T/a.err"
rc=$?
check "--gate auto goes on from there (rc $rc, 0 or 1: a verdict, not the gate's 3)" \
	test $rc -eq 0 -o $rc -eq 1
np2=$(pending "$T/g.jsonl")
check "... and decides the ideas that waited ($np2 pending)" test "$np2" -eq 0

# a session file that is not there, and no task
timeout 20 $KLOOP search --session "$T/typo.jsonl" </dev/null >"$T/t.out" 2>"$T/t.err"
rc=$?
check "search --session MISSING without a task: exit 2 ($(cat "$T/t.err"))" test $rc -eq 2
check "... the error names the file and how to start a new search in it" \
	grep -q "search: $T/typo.jsonl: no such session file (to start a new search in it, give the TASK too" "$T/t.err"
check "... and no journal was written" test ! -e "$T/typo.jsonl"
# the gate set before the search starts (issue 27 item 1): round 1 obeys it
# r1 JOURNAL: "ok" when its search_started says gate human, round 1's ideas
# all wait for a person (none decided) and no code came of any
r1() {
	python3 - "$1" <<'PY'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
st = [e for e in ev if e["type"] == "search_started"]
assert st and st[0]["settings"]["gate"] == "human", st
ideas = [e["id"] for e in ev if e["type"] == "idea_proposed" and e.get("origin") == "llm"]
done = [e["id"] for e in ev if e["type"] in ("idea_accepted", "idea_rejected")]
assert ideas and not done, (ideas, done)
assert not [e for e in ev if e["type"] == "candidate_added" and e.get("idea_id")]
print("ok")
PY
}
printf '%s\n' "gate humn" "gate human" "search step" |
	$KLOOP shell "$T/slowtask" --session "$T/pre.jsonl" $EVAL >"$T/pre.out" 2>"$T/pre.err"
check "shell: gate before search step: round 1's ideas wait for the person ($(r1 "$T/pre.jsonl" 2>&1 | tail -1))" \
	test "$(r1 "$T/pre.jsonl" 2>/dev/null)" = ok
check "... it said the setting is for the search started next" \
	grep -q "^search setting gate = human: from the first round of the search started next" "$T/pre.out"
check "... and a typo of the value is refused once, with the nearest word ($(grep humn "$T/pre.err"))" \
	grep -qx "error: gate: expected one of auto|human, got 'humn': did you mean 'human'?" "$T/pre.err"

# --gate human with no person: stdin not a terminal
timeout 20 $KLOOP search "$T/slowtask" --gate human $EVAL --session "$T/np.jsonl" </dev/null \
	>"$T/np.out" 2>"$T/np.err"
rc=$?
check "search --gate human from a pipe: exit 2, saying a person is needed and where ($(head -c 150 "$T/np.err"))" \
	sh -c "test $rc -eq 2 && grep -q 'needs a person at the keyboard: run kloop search on a terminal' '$T/np.err' && test ! -e '$T/np.jsonl'"

# --- the workbench: :gate human, then R: round 1's ideas wait
if command -v tmux >/dev/null 2>&1; then
	KL=$(cd "$(dirname "$KLOOP")" && pwd)/$(basename "$KLOOP")
	TUI_W=80 TUI_H=24 tui_start "cd $PWD && $KL $T/slowtask $EVAL --session $T/tg.jsonl; echo DONE-TG"
	wait_for "1 candidate, 1 correct" 60 >/dev/null
	keys : 'gate human' Enter
	check "the workbench at 80x24: :gate human before a search is taken for the next one" \
		wait_for "search setting gate = human: from the first round" 20
	keys R
	check "... R starts it, and the title bar says it waits at the gate" wait_for "waits at the gate" 120
	check "... round 1's ideas wait for the person ($(r1 "$T/tg.jsonl" 2>&1 | tail -1))" \
		test "$(r1 "$T/tg.jsonl" 2>/dev/null)" = ok
	keys q
	wait_for "quit|y/n" 10 >/dev/null
	keys y
	wait_for "DONE-TG" 30 >/dev/null
fi

# --- kloop search --gate human on a terminal (issue 27 item 1): round 1's
# ideas are put to the person, who accepts the first and rejects the rest;
# only the accepted idea is implemented
if ! command -v tmux >/dev/null 2>&1; then
	skip "kloop search --gate human on a terminal: tmux is not installed"
	exit $((NFAIL > 0))
fi
KL=$(cd "$(dirname "$KLOOP")" && pwd)/$(basename "$KLOOP")
TUI_W=200 TUI_H=50 tui_start "cd $PWD && $KL search $T/slowtask --gate human --rounds 1 --branches 1 $EVAL --session $T/h.jsonl; echo DONE-\$?; sleep 30"
check "search --gate human on a terminal (200x50) puts round 1's first idea to the person" \
	wait_for "accept, reject, or quit \(the ideas wait\)\? \[a/r/q\]" 90
first=$(grep -Eo '^idea [0-9]+' "$T/screen" | tail -1 | cut -d' ' -f2)
keys a Enter
# each further idea put to the person is rejected, until the search ends
answered=" $first "
end=$(($(date +%s) + 180))
while [ "$(date +%s)" -lt "$end" ]; do
	screen >"$T/screen"
	grep -q "DONE-" "$T/screen" && break
	id=$(grep -Eo '^idea [0-9]+' "$T/screen" | tail -1 | cut -d' ' -f2)
	if [ -n "$id" ] && grep -v "^ *$" "$T/screen" | tail -1 | grep -q "accept, reject, or quit" &&
		! echo "$answered" | grep -q " $id "; then
		answered="$answered$id "
		keys r Enter
	fi
	sleep 0.2
done
check "... and the search ends once the accepted idea is implemented" wait_for "DONE-[01]" 60
python3 - "$T/h.jsonl" "$first" >"$T/hpy" 2>&1 <<'PY'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
first = int(sys.argv[2])
st = [e for e in ev if e["type"] == "search_started"][0]
assert st["settings"]["gate"] == "human", st
r1 = [e["id"] for e in ev if e["type"] == "idea_proposed" and e.get("origin") == "llm"]
acc = [e["id"] for e in ev if e["type"] == "idea_accepted"]
rej = [e["id"] for e in ev if e["type"] == "idea_rejected"]
assert len(r1) >= 2 and acc == [first], (acc, first, r1)
assert sorted(rej) == sorted(i for i in r1 if i != first), (rej, r1)
impl = {e.get("idea_id") for e in ev if e["type"] == "candidate_added" and e.get("idea_id")}
assert impl == {first}, impl
PY
check "the person's decisions are round 1's: the accepted idea alone implemented ($(tail -1 "$T/hpy"))" \
	test $? -eq 0
exit $((NFAIL > 0))
