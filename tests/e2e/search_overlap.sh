# search_overlap.sh - rounds that overlap (issue 11, "Scheduling"): with
# --overlap 2 the next round's ideas go out while the open round's
# candidates are evaluated; a search killed (kill -9) with two rounds open
# resumes both; --seed gives the same parents.  The "LLM" is the corpus of
# tests/fixtures/search over real HTTP (the fake server, each reply delayed)
# and as the command provider.
#
# Why the order asserted below is not a race: round N + 1 starts in the same
# tick of the search as round N's last implementation request goes out (the
# LLM client has room: 4 in flight, round 1 sends 2), and a reply to one of
# those requests is read from the loop only after that tick, so round N + 1's
# ideas request is journaled before any candidate of round N's replies exists,
# let alone its verdict.  The kill is timed by the fake server holding
# replies back (until a file exists), not by the clock.
. tests/e2e/lib.sh
# no innovation archive: what earlier runs here archived would join the
# prompts, and the fake server tells requests apart by their prompts
export KLOOP_ARCHIVE=off
EVAL="--backend host --budget 0.2 --trials 2"
F=tests/fixtures/search
CORPUS="python3 $F/corpus_llm.py"
PROG=$(pwd)/$F/corpus_llm.py
pycheck() {
	_name=$1
	python3 -c 'import json, re, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
src = {e["id"]: e["source"] for e in ev if e["type"] == "candidate_added"}
rnd = {e["id"]: e.get("round", 0) for e in ev if e["type"] == "candidate_added"}
mark = {i: (re.search(r"corpus: ([a-z0-9-]+)", t) or [None, None])[1] for i, t in src.items()}
def seq(t, **kw):
    return [e["seq"] for e in ev if e["type"] == t and all(e.get(k) == v for k, v in kw.items())]
exec(sys.stdin.read())' "$2" >"$T/py.out" 2>&1
	if [ $? -eq 0 ]; then ok "$_name"; else
		fail "$_name"
		sed 's/^/#| /' "$T/py.out" | tail -5
	fi
}

# a task with two seeds: mid (the faster: round 1's parent) and slow
cp -r tasks/softmax "$T/two"
cp $F/mid.c "$T/two/mid.c"
cp $F/slow.c "$T/two/slow.c"
python3 -c 'import json,sys
j=json.load(open(sys.argv[1])); j["name"]="two"; j["seeds"]={"host": ["mid.c", "slow.c"]}
json.dump(j, open(sys.argv[1], "w"))' "$T/two/task.json"

# the fake LLM: every reply from the corpus after 0.2 s; while $T/go does not
# exist, fixes and round 2's implementations (their prompts list slow's
# ideas as tried on the lineage) are held back
cat >"$T/script.json" <<EOF
[
  {"match": "## The attempt that failed",
   "replies": [{"program": "$PROG", "usage": [100, 50], "reply_delay": 0.2, "hold": "$T/go"}]},
  {"match": ["## The idea to implement", "CORPUS-cerr A helper macro"],
   "replies": [{"program": "$PROG", "usage": [100, 50], "reply_delay": 0.2, "hold": "$T/go"}]},
  {"match": "", "replies": [{"program": "$PROG", "usage": [100, 50], "reply_delay": 0.2}]}
]
EOF
if ! fake_llm "$T/script.json"; then
	fail "the fake LLM server starts"
	exit 1
fi
OPENAI="--provider openai --model fake-gpt --base-url http://127.0.0.1:$PORT/v1"
S="--parents 1 --branches 1 --suspect 100 --sweep-points 0 --json"

# --- the order of events: overlap 2 against overlap 1
touch "$T/go"
run ov2 search "$T/two" --rounds 3 --overlap 2 $S --session "$T/ov2.jsonl" $OPENAI $EVAL
check "overlap 2: exit 0 ($rc)" test "$rc" -eq 0
pycheck "overlap 2: round 2's ideas request is journaled before round 1's last verdict" \
	"$T/ov2.jsonl" <<'PY'
r1 = [i for i in rnd if rnd[i] == 1]
last = max(e["seq"] for e in ev if e["type"] == "eval_finished" and e["candidate"] in r1)
ideas2 = seq("llm_request", purpose="ideas", round=2)
assert r1 and ideas2 and ideas2[0] < last, (ideas2, last)
assert seq("round_started", round=2)[0] < seq("round_finished", round=1)[0]
PY
pycheck "... round 2's parent is the seed round 1 did not take, from the snapshot of round 0 (parents_chosen says so); rounds close in order" \
	"$T/ov2.jsonl" <<'PY'
pc = {e["round"]: e for e in ev if e["type"] == "parents_chosen"}
assert [p["id"] for p in pc[1]["parents"]] == [1] and mark[1] == "mid", pc[1]
assert [p["id"] for p in pc[2]["parents"]] == [2] and mark[2] == "slow", pc[2]
assert pc[2]["snapshot"] == {"through": 0, "busy": [1]}, pc[2]["snapshot"]
assert [e["round"] for e in ev if e["type"] == "round_finished"] == [1, 2, 3]
PY
pycheck "... every candidate, idea and request of the search carries its round; each candidate is a child of its round's parent or of its own fix" \
	"$T/ov2.jsonl" <<'PY'
par = {e["round"]: {p["id"] for p in e["parents"]} for e in ev if e["type"] == "parents_chosen"}
for e in ev:
    if e["type"] == "candidate_added" and e["origin"] == "llm":
        p = e["parents"][0]
        assert p in par[e["round"]] or rnd[p] == e["round"], e["id"]
    if e["type"] in ("idea_proposed", "llm_request"):
        assert e.get("round") in (1, 2, 3), e
PY
$KLOOP replay "$T/ov2.jsonl" >"$T/replay.out" 2>&1
check "replay says which parents came from a lagged snapshot, and what it saw" \
	grep -q 'parents_chosen round 2 by islands: #2 (.*) \[overlapping open rounds: saw rounds to 0, left out 1 former parent\]' "$T/replay.out"
run ov1 search "$T/two" --rounds 3 --overlap 1 $S --session "$T/ov1.jsonl" $OPENAI $EVAL
pycheck "overlap 1 (rounds one after another): round 2's ideas go out after round 1's last verdict and its round_finished" \
	"$T/ov1.jsonl" <<'PY'
r1 = [i for i in rnd if rnd[i] == 1]
last = max(e["seq"] for e in ev if e["type"] == "eval_finished" and e["candidate"] in r1)
assert seq("llm_request", purpose="ideas", round=2)[0] > seq("round_finished", round=1)[0] > last
assert all("snapshot" in e and e["snapshot"]["through"] == -1 for e in ev if e["type"] == "parents_chosen")
PY

run maxc search "$T/two" --max-candidates 3 --overlap 2 $S --session "$T/maxc.jsonl" $OPENAI $EVAL
pycheck "--max-candidates 3 with rounds overlapping: exactly 3 candidates made, though more replies were on their way" \
	"$T/maxc.jsonl" <<'PY'
made = [i for i in src if i > 2]
assert len(made) == 3, made
reason = [e["reason"] for e in ev if e["type"] == "search_finished"][0]
assert "candidate budget is spent (3 of 3)" in reason, reason
impl = [e for e in ev if e["type"] == "llm_request" and e["purpose"] != "ideas"]
assert len(impl) > 3, len(impl)
PY

# --- kill -9 with two rounds open, then resume
rm -f "$T/go"
R="$T/kill.jsonl"
$KLOOP search "$T/two" --rounds 2 --overlap 2 $S --session "$R" $OPENAI $EVAL >"$T/kill.out" 2>&1 &
KPID=$!
# what the held replies leave: round 1's two candidates judged, its crash's
# fix asked for, round 2's three implementations asked for
cat >"$T/ready.py" <<'PY'
import json, sys
try:
    ev = [json.loads(l) for l in open(sys.argv[1]) if l.endswith("\n")]
except (OSError, ValueError):
    sys.exit(1)
rnd = {e["id"]: e.get("round") for e in ev if e["type"] == "candidate_added"}
fin = [e for e in ev if e["type"] == "eval_finished" and rnd.get(e["candidate"]) == 1]
req = [e for e in ev if e["type"] == "llm_request"]
ok = len(fin) == 2 and [e for e in req if e["purpose"] == "fix" and e.get("round") == 1] and \
    len([e for e in req if e["purpose"] == "implement" and e.get("round") == 2]) == 3
sys.exit(0 if ok else 1)
PY
i=0
while [ $i -lt 1200 ] && kill -0 $KPID 2>/dev/null && ! python3 "$T/ready.py" "$R"; do
	sleep 0.05
	i=$((i + 1))
done
kill -9 $KPID 2>/dev/null
wait $KPID 2>/dev/null
cut=$(wc -l <"$R")
pycheck "killed (kill -9) with rounds 1 and 2 open, round 1's candidates judged, requests of both in flight" \
	"$R" <<'PY'
assert [e["round"] for e in ev if e["type"] == "round_started"] == [1, 2]
assert not [e for e in ev if e["type"] == "round_finished"]
assert len([e for e in ev if e["type"] == "eval_finished" and rnd[e["candidate"]] == 1]) == 2
PY
touch "$T/go"
run resume search --session "$R" $OPENAI $EVAL --json
check "resume: exit 0 ($rc)" test "$rc" -eq 0
pycheck "after the resume: both rounds went on and closed once, in order; nothing finished was evaluated again; no ideas asked twice; round 2's implementations cut short asked again" \
	"$R" <<PY
cut = $cut
done = {e["candidate"] for e in ev[:cut] if e["type"] == "eval_finished"}
again = [e["candidate"] for e in ev[cut:] if e["type"] == "eval_started" and e["candidate"] in done]
assert not again, again
assert [e["round"] for e in ev if e["type"] == "round_started"] == [1, 2]
assert [e["round"] for e in ev if e["type"] == "round_finished"] == [1, 2]
assert [e["type"] for e in ev[cut:] if e["type"].startswith("search_")][:1] == ["search_resumed"]
assert not [e for e in ev[cut:] if e["type"] == "llm_request" and e["purpose"] == "ideas"]
before = sorted(e["idea"] for e in ev[:cut] if e["type"] == "llm_request" and e["purpose"] == "implement" and e["round"] == 2)
after = sorted(e["idea"] for e in ev[cut:] if e["type"] == "llm_request" and e["purpose"] == "implement" and e["round"] == 2)
assert before == after and len(after) == 3, (before, after)
assert [i for i in rnd if rnd[i] == 2 and src[i] not in [src[k] for k in rnd if k < i]]
assert len(set(src.values())) == len(src), "a candidate made twice"
PY

# --- --seed: two runs with overlapping rounds choose the same parents
for k in 1 2; do
	run seed$k search "$T/two" --rounds 3 --overlap 2 --policy random --seed 11 $S \
		--command "$CORPUS" --session "$T/seed$k.jsonl" $EVAL
done
python3 -c 'import json,sys
def parents(f):
    return [(e["round"], e["snapshot"], [p["source_sha256"] for p in e["parents"]]) for e in map(json.loads, open(f)) if e["type"] == "parents_chosen"]
a, b = parents(sys.argv[1]), parents(sys.argv[2])
print(a == b and len(a) == 3 and any(s["through"] >= 0 for _, s, _ in a), a, b)' \
	"$T/seed1.jsonl" "$T/seed2.jsonl" >"$T/seeds" 2>&1
check "--seed 11 twice, rounds overlapping: the same parents (by source) and snapshots in each of the 3 rounds" \
	grep -q '^True' "$T/seeds"
