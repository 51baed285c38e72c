# dedup.sh - ideas proposed again, and ideas that made nothing (issue 27,
# item 4): an idea the LLM proposes again for the same parent (the same
# title or description, whatever the case, spacing or punctuation; or twice
# in one reply) is journaled as a duplicate and never put before the person
# or the gate, and says so; an accepted idea whose branches all ended
# without a new candidate (their code the same as one the session has) ends
# as "nothing new", which a resumed search and `implement` do not ask again.
. tests/e2e/lib.sh
trap 'tm kill-server 2>/dev/null; rm -rf "$T"' EXIT
KL=$(cd "$(dirname "$KLOOP")" && pwd)/$(basename "$KLOOP")
EVAL="--backend host --budget 0.2 --trials 2"
corpus_steering "$T/slowtask"
# pycheck NAME JOURNAL: run the Python on stdin with ev (JOURNAL's events),
# ideas (idea_proposed by id), rej (idea_rejected by id) and mark (each
# candidate's corpus marker); ok when it raises nothing
pycheck() {
	_name=$1
	python3 -c 'import json, re, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
ideas = {e["id"]: e for e in ev if e["type"] == "idea_proposed"}
rej = {e["id"]: e for e in ev if e["type"] == "idea_rejected"}
mark = {e["id"]: (re.findall(r"corpus: ([a-z0-9-]+)", e["source"]) or [None])[0]
        for e in ev if e["type"] == "candidate_added"}
exec(sys.stdin.read())' "$2" >"$T/py.out" 2>&1
	check "$_name ($(tail -c 300 "$T/py.out"))" test $? -eq 0
}

# --- the human gate: round 2 on the same parent brings round 1's ideas again
printf '%s\n' "search step" "gate human" "reject 2" "set parents 1" "pin 1" "search step" \
	"search status" |
	timeout 300 $KLOOP shell "$T/slowtask" --session "$T/h.jsonl" $EVAL >"$T/h.out" 2>"$T/h.err"
check "shell: the steering ran without an error ($(head -c 300 "$T/h.err"))" \
	sh -c "! grep -q '^error' '$T/h.err'"
pycheck "round 2's ideas for #1 repeat ideas 1-3 (one rejected by the person): each journaled as rejected, a duplicate of the one it repeats" \
	"$T/h.jsonl" <<'PY'
r2 = [i for i, d in ideas.items() if d.get("round") == 2 and d["parent"] == 1]
assert len(r2) == 3, r2
assert rej[2].get("duplicate_of") is None
for i in r2:
    o = [k for k, d in ideas.items() if k < 4 and d["title"] == ideas[i]["title"]][0]
    assert rej[i]["duplicate_of"] == o, rej.get(i)
    assert rej[i]["reason"] == "the same as idea %d for #1 (deduplicated)" % o, rej[i]
PY
pycheck "... never accepted nor implemented, and round 2 closed with no idea waiting at the human gate" \
	"$T/h.jsonl" <<'PY'
r2 = [i for i, d in ideas.items() if d.get("round") == 2]
assert not [e for e in ev if e["type"] == "idea_accepted" and e["id"] in r2]
assert not [e for e in ev if e["type"] == "llm_request" and e.get("idea") in r2]
assert [e["round"] for e in ev if e["type"] == "round_finished"] == [1, 2]
assert [e["value"] for e in ev if e["type"] == "search_set" and e["key"] == "gate"] == ["human"]
PY
check "the shell says no new idea came and which were deduplicated" \
	sh -c "grep -q '^no new ideas from request [0-9]*: each was proposed before' '$T/h.out' &&
		grep -q '^  idea 5 \[algorithm\] CORPUS-broken Skip the normalisation: the same as idea 2 for #1 (deduplicated)' '$T/h.out'"
run hsession session "$T/h.jsonl"
check "kloop session lists them as duplicates, saying of which idea" \
	grep -Eq '^   5  duplicate +algorithm .*\(the same as idea 2 for #1\)' "$T/hsession.out"

# --- the auto gate: one reply repeats its first idea (another case, spacing,
# punctuation) and says it again in other words, whose code is the first's
KLOOP_CORPUS_REPEAT=1 timeout 300 $KLOOP search "$T/slowtask" --rounds 1 --ideas 5 \
	--branches 2 --session "$T/a.jsonl" $EVAL >"$T/a.out" 2>"$T/a.err"
rc=$?
check "search with a repeating LLM: exit 0 or 1 ($rc)" test $rc -le 1
pycheck "a repeat within one reply is journaled as a duplicate and never implemented" \
	"$T/a.jsonl" <<'PY'
assert ideas[4]["title"] == "corpus-MID  sum the exponentials, fewer times!", ideas[4]
assert rej[4]["duplicate_of"] == 1, rej.get(4)
assert not [e for e in ev if (e["type"] == "idea_accepted" and e["id"] == 4) or (e["type"] == "llm_request" and e.get("idea") == 4)]
PY
check "kloop search says it deduplicated the repeat" \
	grep -q '^  idea 4 \[algorithm\] corpus-MID  sum the exponentials, fewer times!: the same as idea 1 for #1 (deduplicated)' "$T/a.out"
pycheck "idea 5 (the same change in other words) was implemented in 2 branches, each reply the same code as idea 1's candidate: no candidate, each response says same_as" \
	"$T/a.jsonl" <<'PY'
req = [e["request"] for e in ev if e["type"] == "llm_request" and e.get("idea") == 5]
resp = {e["request"]: e for e in ev if e["type"] == "llm_response"}
mid = [e["id"] for e in ev if e["type"] == "candidate_added" and e.get("idea_id") == 1][0]
assert len(req) == 2 and all(resp[r].get("same_as") == mid for r in req), (req, mid)
assert mark[mid] == "mid"
assert not [e for e in ev if e["type"] == "candidate_added" and e.get("idea_id") == 5]
PY
run asession session "$T/a.jsonl"
mid=$(grep '"idea_id":1,' "$T/a.jsonl" | head -1 | sed 's/.*"id":\([0-9]*\).*/\1/')
check "kloop session: idea 5 made nothing, the same code as #$mid; idea 4 a duplicate; 1-3 implemented" \
	sh -c "grep -q '^   5  nothing new algorithm .*(no new code: the same as #$mid)' '$T/asession.out' &&
		grep -q '^   4  duplicate ' '$T/asession.out' &&
		test \$(grep -c '^   [123]  implemented ' '$T/asession.out') -eq 3"
$KLOOP replay "$T/a.jsonl" </dev/null >"$T/rp" 2>&1
check "kloop replay lists the duplicate's rejection with its reason, and the replies whose code was #$mid's" \
	sh -c "grep -q 'idea_rejected #4: the same as idea 1 for #1 (deduplicated)' '$T/rp' &&
		test \$(grep -c 'llm_response r[0-9]*: the same code as #$mid, not added again' '$T/rp') -ge 2"
# the shell's implement: every accepted idea that waits for code; none does
cut=$(wc -l <"$T/a.jsonl")
printf 'implement\n' | timeout 60 $KLOOP shell --session "$T/a.jsonl" >"$T/i.out" 2>"$T/i.err"
check "implement: idea 5 made nothing, so no accepted idea waits for code" \
	grep -q 'implement: no accepted idea waits for code' "$T/i.err"
# the workbench's Ideas pane says the same words
TUI_W=200 TUI_H=50 tui_start "$KL open --session $T/a.jsonl $EVAL; echo DONE-1"
check "the workbench's Ideas pane says idea 5 is nothing new, as kloop session does" \
	wait_for "5 nothing new +CORPUS-mid Fewer passes"
check "... and idea 4 a duplicate" wait_for "4 duplicate +corpus-MID" 10
keys q
wait_for "^DONE-1" 20 >/dev/null
timeout 300 $KLOOP search --session "$T/a.jsonl" --rounds 2 </dev/null >"$T/r.out" 2>"$T/r.err"
rc=$?
check "resumed for a second round: exit 0 or 1 ($rc)" test $rc -le 1
pycheck "after the resume and implement: nothing asked again of ideas 4 and 5, round 2 ran" \
	"$T/a.jsonl" <<PY
cut = $cut
assert not [e for e in ev[cut:] if e["type"] == "llm_request" and e.get("idea") in (4, 5)]
assert [e["round"] for e in ev if e["type"] == "round_finished"] == [1, 2]
PY
run asession2 session "$T/a.jsonl"
check "... and idea 5 still made nothing" \
	grep -q '^   5  nothing new ' "$T/asession2.out"
exit $((NFAIL > 0))
