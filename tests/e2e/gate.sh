# gate.sh - the human gate when no person can answer it (issue 27, items 2
# and 3): `kloop search --session F` on a session whose ideas wait at the
# human gate says so and how to go on, instead of waiting silently; a
# session file that is not there, with no task, is an error naming it.
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
exit $((NFAIL > 0))
