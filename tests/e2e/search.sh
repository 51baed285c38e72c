# search.sh - `kloop search` and `kloop translate` on the host backend: a
# sweep over a #define that changes the work done, without an LLM; a
# multi-round search whose "LLM" answers from a corpus of real softmax
# variants (faster ones, a wrong one, one that does not compile, one that
# crashes: tests/fixtures/search) over real HTTP (the fake server) and as
# the command provider; --seed reproducing the parents; pin, ban, idea and
# the human gate from `kloop shell`; kill -9 then resume; replay.
. tests/e2e/lib.sh
EVAL="--backend host --budget 0.2 --trials 2"
F=tests/fixtures/search
CORPUS="python3 $F/corpus_llm.py"
# pycheck NAME JOURNAL OUT: run the Python on stdin with ev (JOURNAL's
# events), s (the last JSON line of OUT: the summary, or None), src, mark
# (each candidate's corpus marker) and fin (each one's last result); ok
# when it raises nothing, else the assertion in the report
pycheck() {
	_name=$1
	python3 -c 'import json, re, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
s = None
if sys.argv[2] != "-":
    js = [json.loads(l) for l in open(sys.argv[2]) if l.startswith("{")]
    s = js[-1] if js else None
src = {e["id"]: e["source"] for e in ev if e["type"] == "candidate_added"}
mark = {}
for i, t in src.items():
    m = re.search(r"corpus: ([a-z0-9-]+)", t)
    mark[i] = m.group(1) if m else None
fin = {e["candidate"]: e["result"] for e in ev if e["type"] == "eval_finished"}
# ab_between(a, b): an A/B that settled which of a and b is faster: one
# between their machine codes (a copy is the same candidate), not an
# unverified one (its times not bounded by the clock bound: it settles
# nothing, and the search asks it again)
def same(a, b):
    h = lambda i: (fin.get(i) or {}).get("code_hash")
    return a == b or (h(a) is not None and h(a) == h(b))
def ab_between(a, b):
    return any(e["type"] == "ab_compared" and e.get("verified") is not False
               and ((same(e["candidate"], a) and same(e["incumbent"], b))
                    or (same(e["candidate"], b) and same(e["incumbent"], a))) for e in ev)
# fast_not_best(): the fast variants of the corpus that should have been the
# best and are not.  Which one is the best follows from timed numbers: a
# loaded machine may leave a fast one unverified (never ranked) or within
# the noise of the best (then the first holds it); what never holds is a fast
# one, correct and verified, faster outside the noise of the best with no A/B
# between them, that is not the best.  Asserts a fast one was evaluated.
def fast_not_best():
    b = s["best"]["id"]
    fast = [i for i, m in mark.items() if m in ("fast", "fast2") and i in fin]
    assert fast and any(fin[i].get("status") == "correct" for i in fast), fast
    if mark[b] in ("fast", "fast2"):
        return []
    def iv(i):
        t = fin[i].get("timing") or {}
        m = t.get("median_ms")
        return t.get("p10_ms", m), t.get("p90_ms", m)
    return [(i, iv(i), "best", b, iv(b)) for i in fast if fin[i].get("status") == "correct"
            and (fin[i].get("timing") or {}).get("verified") is not False
            and not ab_between(i, b) and iv(i)[1] < iv(b)[0]]
# outranked(): the correct candidates with a verified time, no suspects,
# faster outside the noise of the best (p90 below its p10) with no A/B
# between the two: those the best should not have been kept over.  Which
# candidate is faster is for the machine (a loaded one flattens a sweep); that
# the choice follows the numbers the search saw is the search to answer for
def outranked():
    b = [e for e in ev if e["type"] == "new_best"][-1]["candidate"]
    sus = {e["candidate"] for e in ev if e["type"] == "suspect_flagged"}
    def iv(i):
        t = fin[i].get("timing") or {}
        m = t.get("median_ms")
        return t.get("p10_ms", m), t.get("p90_ms", m)
    return [(i, iv(i), "best", b, iv(b)) for i in fin if i != b and i not in sus
            and fin[i].get("status") == "correct"
            and (fin[i].get("timing") or {}).get("verified") is not False
            and not ab_between(i, b) and iv(i)[1] < iv(b)[0]]
exec(sys.stdin.read())' "$2" "$3" >"$T/py.out" 2>&1
	if [ $? -eq 0 ]; then ok "$_name"; else
		fail "$_name"
		sed 's/^/#| /' "$T/py.out" | tail -5
	fi
}

# exit_is_best NAME OUT RC: RC is the search's exit status as its summary
# (OUT's last JSON line) says it must be: 0 when its best is faster than the
# baseline, 1 when not (or there is none), never 2.  Which it is follows from
# timed numbers (a loaded machine leaves the best of a host softmax near 1x),
# so the check is that the status and the summary agree
exit_is_best() {
	check "$1 (exit $3)" python3 -c '
import json, sys
js = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
s = js[-1] if js else {}
sp = (s.get("best") or {}).get("speedup") or 0
rc = int(sys.argv[2])
sys.exit(0 if s.get("type") == "summary" and rc in (0, 1) and (rc == 0) == (sp > 1) else 1)' "$2" "$3"
}

# seed_unverified JOURNAL: the seed's (#1's) first verdict is correct with a
# time kloop's clock could not bound (a loaded machine: unverified, never
# incorrect, issue 35); it prints why.  A check of the search's control
# flow that needs a ranked seed is then skipped, saying so
seed_unverified() {
	python3 -c 'import json, sys
for l in open(sys.argv[1]):
    e = json.loads(l) if l.strip() else {}
    if e.get("type") == "eval_finished" and e.get("candidate") == 1:
        t = e["result"].get("timing") or {}
        if e["result"].get("status") == "correct" and t.get("verified") is False:
            print(t.get("clock_bound", "unverified")[:200])
            sys.exit(0)
        sys.exit(1)
sys.exit(1)' "$1"
}

# translations_unverified JOURNAL: every translation's last verdict is
# correct with an unverified time (after the search timed it again); it
# prints the last one's reason
translations_unverified() {
	python3 -c 'import json, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
tr = {e["id"] for e in ev if e["type"] == "candidate_added" and e["origin"] == "translation"}
last = {e["candidate"]: e["result"] for e in ev if e["type"] == "eval_finished" and e["candidate"] in tr}
bad = [r for r in last.values() if r.get("status") == "correct" and (r.get("timing") or {}).get("verified") is False]
if tr and len(bad) == len(tr):
    print(bad[-1]["timing"].get("clock_bound", "unverified")[:200])
    sys.exit(0)
sys.exit(1)' "$1"
}

# unverify JOURNAL: each verdict in it made correct-but-unverified, as a
# busy machine leaves it
unverify() {
	python3 -c 'import json, sys
p = sys.argv[1]
ev = [json.loads(l) for l in open(p)]
for e in ev:
    if e.get("type") == "eval_finished":
        e["result"]["timing"]["verified"] = False
        e["result"]["timing"]["clock_bound"] = "the clock bound was not applied: a busy machine"
open(p, "w").write("".join(json.dumps(e) + "\n" for e in ev))' "$1"
}

# --- sweeps without an LLM: CHUNK=16 sums the exponentials 64/16 = 4 times
run sweep search softmax --from $F/chunked.c --rounds 2 --json --session "$T/sweep.jsonl" $EVAL
check "no provider: --sweep-only implied, and said so" \
	grep -q "no LLM provider is configured: --sweep-only implied" "$T/sweep.err"
_n=$NFAIL
exit_is_best "the sweep ended with the exit status its best's speedup gives" "$T/sweep.out" "$rc"
# once (under make asan; not in a rerun) it ended with 1 before its
# first candidate: what it said
diag $_n "$T/sweep.err" "$T/sweep.out"
pycheck "CHUNK=64 (a quarter of the seed's exponentials) is among the sweep points, and correct" \
	"$T/sweep.jsonl" - <<'PY'
ids = [i for i, t in src.items() if "#define CHUNK 64\n" in t]
assert ids and fin[ids[0]]["status"] == "correct", ids
PY
pycheck "the best is correct, and no verified candidate is faster outside its noise without an A/B that kept it" \
	"$T/sweep.jsonl" - <<'PY'
b = [e for e in ev if e["type"] == "new_best"][-1]
assert fin[b["candidate"]]["status"] == "correct"
assert (fin[b["candidate"]].get("timing") or {}).get("verified") is not False
assert not outranked(), outranked()
PY
pycheck "two rounds, every parent with a reason, every sweep point the child of a parent" \
	"$T/sweep.jsonl" - <<'PY'
assert [e["round"] for e in ev if e["type"] == "round_finished"] == [1, 2]
assert all(p["reason"] for e in ev if e["type"] == "parents_chosen" for p in e["parents"])
chosen = {p["id"] for e in ev if e["type"] == "parents_chosen" for p in e["parents"]}
assert all(e["parents"] and e["parents"][0] in chosen
           for e in ev if e["type"] == "candidate_added" and e["origin"] == "sweep")
assert [e["reason"] for e in ev if e["type"] == "search_finished"] == ["2 rounds done"]
PY
pycheck "--json: one object per event, then the summary (best, lineage back to the seed, rounds)" \
	"$T/sweep.jsonl" "$T/sweep.out" <<'PY'
assert s["type"] == "summary" and s["best"]["origin"] in ("sweep", "seed")
assert s["lineage"][0]["id"] == s["best"]["id"] and s["lineage"][-1]["origin"] == "seed"
assert len(s["search"]["rounds"]) == 2
PY

run sweeptxt search softmax --from $F/chunked.c --rounds 1 --sweep-only --suspect 2 \
	--session "$T/sus.jsonl" $EVAL
check "text: a line per event, the population table and the lineage" \
	sh -c "grep -q '^round 1\$' '$T/sweeptxt.out' && grep -q '^sweep of #1 chunked.c: 4 points' '$T/sweeptxt.out' && grep -q '^id  *name  *origin  *parents  *round' '$T/sweeptxt.out' && grep -q 'search finished: 1 rounds done' '$T/sweeptxt.out'"
pycheck "--suspect 2: every candidate of the search above 2x is held as a suspect, and none of them is the best" \
	"$T/sus.jsonl" - <<'PY'
sus = {e["candidate"] for e in ev if e["type"] == "suspect_flagged"}
seeds = {e["id"] for e in ev if e["type"] == "candidate_added" and e.get("origin") == "seed"}
fast = {i for i, r in fin.items() if r["status"] == "correct" and r["speedup"] > 2}
best = {e["candidate"] for e in ev if e["type"] == "new_best"}
assert fast - seeds == sus and not (best & sus), (fast, seeds, sus, best)
PY
# a seed above the ratio is the person's own: not held back (layernorm's
# CUDA seed is 13x PyTorch eager on an H200), and the search says so
# (fast.c is about 2.4x the host reference, the lowest ratio allowed is 1)
run seedsus search softmax --from $F/fast.c --rounds 1 --sweep-only --suspect 1 \
	--session "$T/seedsus.jsonl" $EVAL
pycheck "--suspect 1: the seed above it is no suspect, it is a parent, and the line says why ($(grep -m1 '^seed #1' "$T/seedsus.out"))" \
	"$T/seedsus.jsonl" - <<'PY'
sus = {e["candidate"] for e in ev if e["type"] == "suspect_flagged"}
parents = {p["id"] for e in ev if e["type"] == "parents_chosen" for p in e["parents"]}
assert 1 not in sus, (fin[1]["speedup"], sus)
assert fin[1].get("timing", {}).get("verified") is False or 1 in parents, (fin[1], parents)
PY
# whether fast.c is above 1x is the machine's (about 2.4x here); above it,
# the search says it let it be
check "... the line: seed #1 fast.c: N x is above 1x, not held back, when it is above 1x" python3 -c '
import json, re, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
sp = [e["result"]["speedup"] for e in ev if e["type"] == "eval_finished" and e["candidate"] == 1][-1]
said = re.search(r"^seed #1 fast.c: .*x is above 1x, not held back \(a seed is not the search.s own\)",
                 open(sys.argv[2]).read(), re.M)
sys.exit(0 if bool(said) == (sp > 1) else 1)' "$T/seedsus.jsonl" "$T/seedsus.out"

run bw search softmax --from $F/chunked.c --rounds 1 --sweep-only --bandwidth 1 \
	--session "$T/bw.jsonl" $EVAL
pycheck "--bandwidth 1: a time below moving the task's 2.1 MB at 1 GB/s (2.097 ms) is a suspect, never the best" \
	"$T/bw.jsonl" - <<'PY'
floor = 2 * 64 * 4096 * 4 / 1e9 * 1e3
sus = {e["candidate"]: e["why"] for e in ev if e["type"] == "suspect_flagged"}
fast = {i for i, r in fin.items() if r["status"] == "correct" and r["time_ms"] < floor}
best = {e["candidate"] for e in ev if e["type"] == "new_best"}
assert set(sus) == fast and not (best & fast), (sus, fast, best)
assert all("that moving its 2.1 MB at 1 GB/s takes" in w for w in sus.values())
PY
run allsus search softmax --from $F/chunked.c --rounds 1 --sweep-only --bandwidth 0.001 \
	--session "$T/allsus.jsonl" $EVAL
if why=$(seed_unverified "$T/allsus.jsonl"); then
	skip "a search whose only correct candidate is a suspect: the seed's time was unverified on this loaded machine ($why)"
else
	check "a search whose only correct candidate is a suspect stops, says which and how to clear it (exit $rc)" \
		sh -c "test $rc = 1 && grep -q 'search finished: no correct candidate to be a parent: #1 is a suspect, .* (clear 1)' '$T/allsus.out'"
fi
run maxc search softmax --from $F/chunked.c --max-candidates 2 --json --session "$T/maxc.jsonl" $EVAL
if why=$(seed_unverified "$T/maxc.jsonl"); then
	skip "--max-candidates 2: the seed's time was unverified on this loaded machine, so no round started from it ($why)"
else
	pycheck "--max-candidates 2: two candidates made, then it stops and says why" "$T/maxc.jsonl" - <<'PY'
assert len(src) == 3, len(src)
assert "candidate budget is spent (2 of 2)" in [e["reason"] for e in ev if e["type"] == "search_finished"][0]
PY
fi
run target search softmax --from $F/chunked.c --target 0.001 --json --session "$T/target.jsonl" $EVAL
if why=$(seed_unverified "$T/target.jsonl"); then
	skip "--target: the seed's time was unverified on this loaded machine, so it ranks nowhere ($why)"
else
	pycheck "--target: reached by the seed itself, no round is run" "$T/target.jsonl" - <<'PY'
assert not [e for e in ev if e["type"] == "round_started"]
assert "target speedup is reached" in [e["reason"] for e in ev if e["type"] == "search_finished"][0]
PY
fi

# --- the corpus over real HTTP (the OpenAI wire format)
if ! fake_llm tests/fake_llm/corpus.json; then
	fail "the fake LLM server starts"
	exit 1
fi
OPENAI="--provider openai --model fake-gpt --base-url http://127.0.0.1:$PORT/v1"
run http search softmax --from $F/slow.c --rounds 3 --branches 1 --suspect 100 --json \
	--price-input 1 --price-output 2 --session "$T/http.jsonl" $OPENAI $EVAL
exit_is_best "corpus over HTTP: the exit status is the best's" "$T/http.out" "$rc"
pycheck "the best is the corpus's fastest correct variant (one pass of exponentials), or one within its noise" \
	"$T/http.jsonl" "$T/http.out" <<'PY'
assert not fast_not_best(), fast_not_best()
PY
pycheck "the wrong, the uncompilable and the crashing variants were evaluated as such" \
	"$T/http.jsonl" "$T/http.out" <<'PY'
st = {c["id"]: c["status"] for c in s["candidates"]}
assert {mark[i] for i in st if st[i] == "incorrect"} == {"broken"}
assert {mark[i] for i in st if st[i] == "compile_error"} == {"cerr"}
assert {mark[i] for i in st if st[i] == "crashed"} == {"crash"}
PY
pycheck "three rounds; every parent correct; the compile error sent back and fixed" \
	"$T/http.jsonl" "$T/http.out" <<'PY'
st = {c["id"]: c["status"] for c in s["candidates"]}
assert [e["round"] for e in ev if e["type"] == "round_finished"] == [1, 2, 3]
assert all(st[p["id"]] == "correct" for e in ev if e["type"] == "parents_chosen" for p in e["parents"])
fx = [c for c in s["candidates"] if mark[c["id"]] == "cerr-fixed"][0]
assert fx["status"] == "correct" and mark[fx["parents"][0]] == "cerr"
PY
pycheck "later ideas prompts carry the ideas tried on the lineage, with their outcome" \
	"$T/http.jsonl" - <<'PY'
ps = [e["prompt"] for e in ev if e["type"] == "llm_request" and e["purpose"] == "ideas"]
later = [p for p in ps if "corpus: mid" in p.split("## The current candidate")[1].split("\n## ")[0]]
assert later
for p in later:
    assert "## Ideas already tried on this lineage" in p
    assert re.search(r"CORPUS-mid Sum the exponentials fewer times: correct, [0-9.]+x", p)
    assert "CORPUS-broken Skip the normalisation: incorrect" in p
PY
pycheck "every request journaled went over HTTP; the cost is totalled from the price settings" \
	"$T/http.jsonl" "$T/http.out" <<'PY'
n = len([e for e in ev if e["type"] == "llm_request"])
log = [l for l in open(sys.argv[1].replace("http.jsonl", "server.log"))]
assert len(log) == n, (len(log), n)
assert abs(s["llm"]["cost"] - n * (100 * 1 + 50 * 2) / 1e6) < 1e-9, s["llm"]["cost"]
PY
# --budget-usd is never passed: a request goes out only when what was
# spent, what the requests in flight may cost and what it may cost fit in
# the budget (a token per 4 bytes in; out the longest reply yet, else
# 1024); the server counts tokens the same way here, as a real one about
# does, four requests in flight at once
kill $SRV 2>/dev/null
rm -f "$T/port"
if ! fake_llm tests/fake_llm/corpus_bytes.json; then
	fail "the fake LLM server starts again (usage by bytes)"
	exit 1
fi
OPENAI="--provider openai --model fake-gpt --base-url http://127.0.0.1:$PORT/v1"
: >"$T/server.log"
run budget search softmax --from $F/slow.c --budget-usd 0.02 --branches 2 --ideas 3 \
	--suspect 100 --json --price-input 1 --price-output 2 --session "$T/budget.jsonl" \
	$OPENAI $EVAL
pycheck "--budget-usd: the spend never passes the budget, and the search says why it stopped" \
	"$T/budget.jsonl" - <<'PY'
req = [e for e in ev if e["type"] == "llm_request"]
resp = [e for e in ev if e["type"] == "llm_response"]
spent = sum(e["cost"] for e in resp)
assert len(resp) == len(req) >= 3, (len(req), len(resp))
assert 0 < spent <= 0.02, spent
reason = [e["reason"] for e in ev if e["type"] == "search_finished"][0]
assert "LLM budget is spent" in reason, reason
PY
# ... because each request carries the reply's cap the budget was held for:
# a reply longer than any before cannot pass it (one did, by $0.000667)
check "--budget-usd: every request caps its reply (max_tokens), 512 tokens at least" python3 -c '
import json,sys
bs=[json.loads(l)["body"] for l in open(sys.argv[1])]
bs=[json.loads(b) if isinstance(b,str) else b for b in bs]
caps=[b.get("max_tokens") for b in bs]
assert bs and all(isinstance(c,int) and c >= 512 for c in caps), caps' "$T/server.log"

# --- the command provider, and --seed
run cmd search softmax --from $F/slow.c --rounds 3 --branches 1 --suspect 100 --json \
	--policy random --seed 7 --command "$CORPUS" --session "$T/seed1.jsonl" $EVAL
# the exit status is the best's: 0 when it is faster than the baseline
exit_is_best "the command provider (--command): its exit status is the best's" "$T/cmd.out" "$rc"
pycheck "... the corpus's fastest variant found, every request through the command provider" \
	"$T/seed1.jsonl" "$T/cmd.out" <<'PY'
assert not fast_not_best(), fast_not_best()
assert {e["provider"] for e in ev if e["type"] == "llm_request"} == {"command"}
PY
run cmd2 search softmax --from $F/slow.c --rounds 3 --branches 1 --suspect 100 --json \
	--policy random --seed 7 --command "$CORPUS" --session "$T/seed2.jsonl" $EVAL
# the draw is a function of the seed and of the candidates it is drawn
# from; which candidates are eligible depends on each time being verified,
# and a loaded machine may leave one unverified in one run and not in the
# other (then the rounds from that one on are drawn from other candidates:
# said, not compared)
python3 -c 'import hashlib, json, sys
def rounds(f):
    ev = [json.loads(l) for l in open(f) if l.strip()]
    sha, ok, out = {}, set(), []
    for e in ev:
        if e["type"] == "candidate_added":
            sha[e["id"]] = hashlib.sha256(e["source"].encode()).hexdigest()
        elif e["type"] == "eval_finished":
            r = e["result"]
            good = r.get("status") == "correct" and (r.get("timing") or {}).get("verified") is not False
            (ok.add if good else ok.discard)(e["candidate"])
        elif e["type"] == "parents_chosen":
            out.append((sorted(sha[i] for i in ok), [p["source_sha256"] for p in e["parents"]]))
    return out
a, b = rounds(sys.argv[1]), rounds(sys.argv[2])
same = len(a) == len(b) == 3
for r, (x, y) in enumerate(zip(a, b), 1):
    if x[0] != y[0]:
        print("# round %d on: drawn from other eligible candidates (%d and %d), not compared" % (r, len(x[0]), len(y[0])))
        break
    same = same and x[1] == y[1]
    print("# round %d: %d eligible, %s" % (r, len(x[0]), "the same parents" if x[1] == y[1] else "other parents"))
print(same, a, b)' "$T/seed1.jsonl" "$T/seed2.jsonl" >"$T/seeds" 2>&1
check "--seed 7 twice: the same parents (by source) in each round drawn from the same candidates" grep -q '^True' "$T/seeds"
grep '^# round' "$T/seeds" | sed 's/^#/#|/'

run xo search softmax --from $F/slow.c --rounds 2 --branches 1 --suspect 100 --crossover 2 --json \
	--command "$CORPUS" --session "$T/xo.jsonl" $EVAL
pycheck "--crossover 2: the function-level crossover and the LLM's crossover prompt, each a child of two parents of different islands" \
	"$T/xo.jsonl" - <<'PY'
xs = [e for e in ev if e["type"] == "candidate_added" and e["origin"] == "crossover"]
fn = [e for e in xs if "request" not in e]
llm = [e for e in xs if "request" in e]
assert fn and all(len(e["parents"]) == 2 for e in fn), fn
req = {e["request"]: e for e in ev if e["type"] == "llm_request"}
assert llm and all(req[e["request"]]["purpose"] == "crossover" and mark[e["id"]] == "blend" and len(e["parents"]) == 2 for e in llm), llm
idea = [e for e in ev if e["type"] == "idea_proposed" and e["origin"] == "search"]
assert idea and idea[0]["title"].startswith("Combine #")
PY

# --- steering from `kloop shell` (a pipe: each line's work is waited for;
# one request at a time, so ids are those of the script below)
corpus_steering "$T/slowtask"
# round 1 on the seed gives 2 mid, 3 broken, 4 cerr, 5 its fix (cerr-fixed);
# ideas 1-3; `idea` makes idea 4; round 2 ideas 5-6; round 3 idea 7
printf '%s\n' "search step" "ban 2" "pin 5" "idea CORPUS-fast Use one pass and a reciprocal" \
	"set parents 1" "search step" "gate human" "search step" "reject 7" "search status" |
	$KLOOP shell "$T/slowtask" --session "$T/steer.jsonl" $EVAL >"$T/steer.out" 2>"$T/steer.err"
check "shell: the steering commands ran without an error ($(head -c 300 "$T/steer.err"))" \
	sh -c "! grep -q '^error' '$T/steer.err'"
pycheck "pin 5: round 2's only parent is #5, 'pinned by a person'" "$T/steer.jsonl" - <<'PY'
r2 = [e for e in ev if e["type"] == "parents_chosen" and e["round"] == 2][0]
assert [(p["id"], p["reason"].startswith("pinned by a person")) for p in r2["parents"]] == [(5, True)], r2
assert mark[5] == "cerr-fixed"
PY
pycheck "ban 2: the banned candidate (the best of round 1) is never a parent after the ban" \
	"$T/steer.jsonl" - <<'PY'
k = [i for i, e in enumerate(ev) if e["type"] == "ban"][0]
assert ev[k]["candidate"] == 2 and mark[2] == "mid"
assert all(p["id"] != 2 for e in ev[k:] if e["type"] == "parents_chosen" for p in e["parents"])
PY
pycheck "idea TEXT: a person's idea, implemented in the next round on its parent" \
	"$T/steer.jsonl" - <<'PY'
d = [e for e in ev if e["type"] == "idea_proposed" and e["id"] == 4][0]
assert d["origin"] == "human" and [e["idea"] for e in ev if e["type"] == "idea_injected"] == [4]
c = [e for e in ev if e["type"] == "candidate_added" and e.get("idea_id") == 4]
assert c and c[0]["parents"] == [5] and mark[c[0]["id"]] == "fast", c
assert [e["round"] for e in ev if e["type"] == "round_started" and e["seq"] < c[0]["seq"]][-1] == 2
PY
pycheck "gate human: round 3's idea waited for the person, who rejected it: no code for it, the round closed" \
	"$T/steer.jsonl" - <<'PY'
assert not [e for e in ev if e["type"] == "idea_accepted" and e["id"] == 7]
assert [e for e in ev if e["type"] == "idea_rejected" and e["id"] == 7]
assert not [e for e in ev if e["type"] == "candidate_added" and e.get("idea_id") == 7]
assert [e["round"] for e in ev if e["type"] == "round_finished"] == [1, 2, 3]
assert [e["value"] for e in ev if e["type"] == "search_set" and e["key"] == "gate"] == ["human"]
PY
check "search status shows each round's parents and why they were chosen" \
	grep -q '^  parent #5 idea3-b1-fix1.c: pinned by a person' "$T/steer.out"
# prefer / ban an idea category: round 2's ideas are an algorithm one and a
# memory-access one (the crash); round 3's is a precision one
# (named as a person types them: a prefix, another case; a misspelt one is
# refused with the list, never journaled as a ban that matches nothing)
printf '%s\n' "search step" "prefer algo" "ban Precision" "ban memroy access" "search step" \
	"search step" |
	$KLOOP shell "$T/slowtask" --session "$T/cat.jsonl" $EVAL >"$T/cat.out" 2>"$T/cat.err"
check "ban with a misspelt category is refused, with the one it is near and the categories" \
	grep -q "^error: ban: 'memroy access': did you mean 'memory access'? (it is neither a candidate id nor an idea category, which are: memory access, .*, other" "$T/cat.err"
pycheck "prefer algo, ban Precision: journaled as the categories they name" "$T/cat.jsonl" - <<'PY'
assert [e["category"] for e in ev if e["type"] == "prefer_category"] == ["algorithm"]
assert [e["category"] for e in ev if e["type"] == "ban_category"] == ["precision"]
PY
pycheck "prefer algorithm: the gate rejects the other category's idea for the same parent; ban precision: rejects that category's" \
	"$T/cat.jsonl" - <<'PY'
rej = {e["id"]: e.get("reason") for e in ev if e["type"] == "idea_rejected"}
ideas = {e["id"]: e for e in ev if e["type"] == "idea_proposed"}
crash = [i for i, d in ideas.items() if "CORPUS-crash" in d["title"]]
slow = [i for i, d in ideas.items() if "CORPUS-slowdown" in d["title"]]
# an idea proposed again for the same parent is a duplicate of the one the
# gate rejected (issue 27 item 4), never before the gate again
dup = {e["id"]: e["duplicate_of"] for e in ev if e["type"] == "idea_rejected" and e.get("duplicate_of")}
gated = lambda i, why: rej.get(i) == why or (i in dup and rej.get(dup[i]) == why)
assert crash and all(gated(i, "another idea for this parent is in a preferred category") for i in crash) and not all(i in dup for i in crash), rej
assert slow and all(gated(i, "its category is banned") for i in slow) and not all(i in dup for i in slow), rej
assert not [e for e in ev if e["type"] == "candidate_added" and e.get("idea_id") in crash + slow]
assert [e["round"] for e in ev if e["type"] == "round_finished"] == [1, 2, 3]
PY
rm "$XDG_CONFIG_HOME/kloop/config"

# kill9_when PID TEXT FILE: kill -9 PID once FILE holds TEXT (at most 30 s)
kill9_when() {
	i=0
	while [ $i -lt 600 ] && ! grep -q "$2" "$3" 2>/dev/null; do
		sleep 0.05
		i=$((i + 1))
	done
	kill -9 "$1" 2>/dev/null
	wait "$1" 2>/dev/null
}

# --- kill -9 in the middle, then resume
R="$T/resume.jsonl"
$KLOOP search softmax --from $F/slow.c --rounds 3 --branches 1 --suspect 100 --json \
	--command "$CORPUS" --session "$R" $EVAL >"$T/kill.out" 2>&1 &
kill9_when "$!" '"type":"parents_chosen","round":2' "$R"
cut=$(wc -l <"$R")
check "the search was killed in round 2" grep -q '"type":"parents_chosen","round":2' "$R"
run resume search --session "$R" --json --command "$CORPUS" $EVAL
exit_is_best "resume (kloop search --session F): the exit status is the best's" "$T/resume.out" "$rc"
pycheck "after the resume: no finished evaluation run again, no round started twice, the same 3-round budget, a fast variant found" \
	"$R" "$T/resume.out" <<PY
cut = $cut
done = {e["candidate"] for e in ev[:cut] if e["type"] == "eval_finished"}
# an A/B of a finished candidate against the incumbent is no evaluation
# run again: the search asks for one where two times are close, which is
# the machine's to decide
again = [e for e in ev[cut:] if e["type"] == "eval_started" and e["candidate"] in done
         and not e.get("ab_with")]
assert not again, again
assert [e["round"] for e in ev if e["type"] == "round_started"] == [1, 2, 3]
assert [e["round"] for e in ev if e["type"] == "round_finished"] == [1, 2, 3]
assert [e["type"] for e in ev[cut:] if e["type"].startswith("search_")][0] == "search_resumed"
# a fast variant is the best, unless the load left every fast one unverified
# or within the best's noise
ok = [i for i, m in mark.items() if m in ("fast", "fast2") and i in fin
      and fin[i].get("status") == "correct"
      and (fin[i].get("timing") or {}).get("verified") is not False]
assert not ok or not fast_not_best(), fast_not_best()
assert len(set(src.values())) == len(src), "a candidate made twice"
PY
# killed a while after its last search event (evaluations and replies go
# on meanwhile): the resumed search counts that time too
R2="$T/resume2.jsonl"
$KLOOP search softmax --from $F/slow.c --rounds 3 --branches 1 --suspect 100 --json \
	--command "$CORPUS" --session "$R2" $EVAL >"$T/kill2.out" 2>&1 &
kp=$!
i=0
while [ $i -lt 600 ] && ! grep -q '"type":"parents_chosen","round":1' "$R2" 2>/dev/null; do
	sleep 0.05
	i=$((i + 1))
done
sleep 1
kill -9 $kp 2>/dev/null
wait $kp 2>/dev/null
cut=$(wc -l <"$R2")
run resume2 search --session "$R2" --json --command "$CORPUS" --rounds 1 $EVAL
pycheck "the resumed search counts the time spent before the kill, up to the journal's last event, not only to its last search event" \
	"$R2" - <<PY
cut = $cut
t0 = [e["ts"] for e in ev if e["type"] == "search_started"][0]
last = max(e["ts"] for e in ev[:cut] if "ts" in e)
resumed = [e for e in ev[cut:] if e["type"] == "search_resumed"][0]
# elapsed_s runs on the monotonic clock, ts on the wall clock: a little slack
assert resumed["elapsed_s"] >= (last - t0) - 0.05, (resumed["elapsed_s"], last - t0)
PY
# --- kill -9 while a fix request is out: the resumed search sends it again
cat >"$T/slowfix.sh" <<EOF
p=\$(cat)
case "\$p" in *"## The attempt that failed"*"corpus: cerr"*) sleep 120 ;; esac
printf '%s' "\$p" | python3 $F/corpus_llm.py
EOF
# cut_fix SCRIPT JOURNAL PATTERN WHAT: a one-round search with the command
# provider SCRIPT, killed -9 once JOURNAL shows a fix request matching
# PATTERN; cut is the journal's length then
cut_fix() {
	$KLOOP search softmax --from $F/slow.c --rounds 1 --branches 1 --suspect 100 --json \
		--command "sh $1" --session "$2" $EVAL >"$2.out" 2>&1 &
	kill9_when "$!" "\"purpose\":\"fix\".*$3" "$2"
	pkill -f "$1" 2>/dev/null
	cut=$(wc -l <"$2")
	check "killed with $4 out" grep -q "\"purpose\":\"fix\".*$3" "$2"
}
RF="$T/fixcut.jsonl"
cut_fix "$T/slowfix.sh" "$RF" "corpus: cerr" "the fix of the candidate that did not compile"
run fixres search --session "$RF" --json --command "$CORPUS" $EVAL
pycheck "after the resume: the fix cut short is asked again for the same branch, and its reply is evaluated ($rc)" \
	"$RF" "$T/fixres.out" <<PY
cut = $cut
resp = {e["request"] for e in ev if e["type"] == "llm_response"}
cutfix = [e for e in ev[:cut] if e["type"] == "llm_request" and e["purpose"] == "fix" and e["request"] not in resp]
assert cutfix, "no fix request was cut short"
for q in cutfix:
    again = [e for e in ev[cut:] if e["type"] == "llm_request" and e["purpose"] == "fix"
             and (e["idea"], e["branch"], e["attempt"], e.get("fixes")) == (q["idea"], q["branch"], q["attempt"], q.get("fixes"))]
    assert again, ("not asked again", q["idea"], q["branch"])
    if "corpus: cerr" in q["prompt"]:  # the corpus answers it with cerr_fixed
        made = [e["id"] for e in ev[cut:] if e["type"] == "candidate_added" and e.get("request") == again[0]["request"]]
        assert made and made[0] in fin and mark[made[0]] == "cerr-fixed", ("its reply made no evaluated candidate", made)
assert any("corpus: cerr" in q["prompt"] for q in cutfix)
done = {e["candidate"] for e in ev[:cut] if e["type"] == "eval_finished"}
assert not [e for e in ev[cut:] if e["type"] == "eval_started" and e["candidate"] in done]
PY
# --- kill -9 while the fix of a reply without code is out: the resumed
# search sends that fix again, with the reply (not the implementation
# request from scratch)
cat >"$T/nocode.sh" <<EOF
p=\$(cat)
case "\$p" in
*NOCODE-REPLY*) sleep 120 ;;
*"## The idea to implement"*"CORPUS-mid"*) echo "NOCODE-REPLY: I would sum the exponentials fewer times." ;;
*) printf '%s' "\$p" | python3 $F/corpus_llm.py ;;
esac
EOF
RN="$T/nocode.jsonl"
cut_fix "$T/nocode.sh" "$RN" NOCODE-REPLY "the fix of a reply without code"
# resumed, the "LLM" answers that fix with the variant the idea asked for
cat >"$T/nocode2.sh" <<EOF
p=\$(cat)
case "\$p" in
*NOCODE-REPLY*) printf '\140\140\140c\n'; python3 $F/corpus_llm.py --emit mid; printf '\140\140\140\n' ;;
*) printf '%s' "\$p" | python3 $F/corpus_llm.py ;;
esac
EOF
run nocoderes search --session "$RN" --json --command "sh $T/nocode2.sh" $EVAL
pycheck "after the resume: that fix is sent again, with the reply, for the same branch and attempt; no implementation asked again ($rc)" \
	"$RN" "$T/nocoderes.out" <<PY
cut = $cut
resp = {e["request"] for e in ev if e["type"] == "llm_response"}
cutfix = [e for e in ev[:cut] if e["type"] == "llm_request" and e["purpose"] == "fix"
          and "NOCODE-REPLY" in e["prompt"] and e["request"] not in resp]
assert len(cutfix) == 1, cutfix
q = cutfix[0]
key = lambda e: (e["idea"], e["branch"])
again = [e for e in ev[cut:] if e["type"] == "llm_request" and key(e) == key(q)]
assert again and again[0]["purpose"] == "fix", [e["purpose"] for e in again]
assert "NOCODE-REPLY" in again[0]["prompt"] and again[0]["attempt"] == q["attempt"], again[0]["attempt"]
assert "could not be used as code" in again[0]["prompt"]
assert not [e for e in again if e["purpose"] == "implement"]
made = [e["id"] for e in ev[cut:] if e["type"] == "candidate_added" and e.get("request") == again[0]["request"]]
assert made and made[0] in fin, ("its reply made no evaluated candidate", made)
PY
run again search --session "$R" --command "$CORPUS" $EVAL
check "a finished search is not run again: exit 2 and what to give" \
	sh -c "test $rc -eq 2 && grep -q 'has finished (3 rounds done); give a new budget' '$T/again.err'"
cut2=$(wc -l <"$R")
run more search --session "$R" --rounds 4 --json --command "$CORPUS" $EVAL
pycheck "... a new budget (--rounds 4) goes on: round 4 runs, nothing finished before is evaluated again" \
	"$R" - <<PY
cut = $cut2
done = {e["candidate"] for e in ev[:cut] if e["type"] == "eval_finished"}
assert not [e for e in ev[cut:] if e["type"] == "eval_started" and e["candidate"] in done]
assert [e["round"] for e in ev if e["type"] == "round_finished"] == [1, 2, 3, 4]
assert [e["value"] for e in ev[cut:] if e["type"] == "search_set"] == [4]
PY
$KLOOP replay "$R" >"$T/replay.out" 2>&1
check "replay (no terminal): each round and why each parent was chosen" \
	sh -c "grep -Eq 'parents_chosen round 1 by islands: #1 \\(island 1' '$T/replay.out' && grep -Eq 'round_finished 3: best #[0-9]+' '$T/replay.out'"

# --- round 0: a task without a seed is translated first
cp -r tasks/softmax "$T/noseed"
python3 -c 'import json,sys
j=json.load(open(sys.argv[1])); j["name"]="noseed"; j["seeds"]={}
json.dump(j, open(sys.argv[1], "w"))' "$T/noseed/task.json"
run tr0 search "$T/noseed" --rounds 1 --translations 2 --branches 1 --suspect 100 --json \
	--command "$CORPUS" --session "$T/tr0.jsonl" $EVAL
if why=$(translations_unverified "$T/tr0.jsonl"); then
	skip "no seed: round 1 after round 0's translations: each translation's time stayed unverified on this loaded machine, timed again too ($why)"
else
	pycheck "no seed: round 0 translates the reference (translate prompt), then round 1 improves it" \
		"$T/tr0.jsonl" "$T/tr0.out" <<'PY'
assert [e["round"] for e in ev if e["type"] == "round_started"] == [0, 1]
tr = [e for e in ev if e["type"] == "candidate_added" and e["origin"] == "translation"]
assert tr and not tr[0]["parents"] and fin[tr[0]["id"]]["status"] == "correct"
assert [e["purpose"] for e in ev if e["type"] == "llm_request"][0] == "translate"
assert s["best"] and s["best"]["round"] == 1
PY
fi
run tr translate "$T/noseed" -b 2 --json --command "$CORPUS" $EVAL
pycheck "kloop translate -b 2: two translations, evaluated, exit 0" "$T/tr0.jsonl" "$T/tr.out" <<PY
assert $rc == 0 and len(s["candidates"]) == 2 and all(c["origin"] == "translation" and c["status"] == "correct" for c in s["candidates"])
PY
run trbad search "$T/noseed" --rounds 1 --translations 1 --fix 0 \
	--command "echo 'int kl_run(void) { return 0; }'" --session "$T/trbad.jsonl" $EVAL
check "a round 0 whose translation is wrong says no correct candidate yet, not 'best 0 (none) 0x' ($(grep 'round 0 done' "$T/trbad.out" "$T/trbad.err" | head -1))" \
	sh -c "test $rc -eq 1 && grep -hq 'round 0 done: 1 candidate made; no correct candidate yet' '$T/trbad.out' '$T/trbad.err'"
run trnone translate "$T/noseed" $EVAL
check "translate without a provider: exit 2 and how to give one" \
	sh -c "test $rc -eq 2 && grep -q 'no LLM provider: give --provider' '$T/trnone.err'"

# --- usage
run u1 search softmax --rounds many
check "a bad number: exit 2 naming the flag and the value" \
	sh -c "test $rc -eq 2 && grep -q -- \"--rounds: expected a whole number (rounds) from 0 to 100000, got 'many'\" '$T/u1.err'"
run u2 search softmax --policy best
check "an unknown policy: exit 2 listing the policies" \
	sh -c "test $rc -eq 2 && grep -q -- '--policy: expected islands, greedy or random' '$T/u2.err'"
run u3 search no-such-task --sweep-only
check "an unknown task: exit 2" test "$rc" -eq 2
# an LLM that cannot be asked is said before anything runs, exit 2
run u4 search softmax --rounds 1 --provider command $EVAL
check "--provider command without a command: exit 2 before any evaluation" sh -c \
	"test $rc -eq 2 && grep -q 'search: the command provider needs a command' '$T/u4.err' && ! grep -q 'correct' '$T/u4.out'"
run u5 search softmax --rounds 1 --provider openai $EVAL
check "--provider openai without a model: exit 2 naming the fix" sh -c \
	"test $rc -eq 2 && grep -q 'no model for the openai provider: give --model NAME' '$T/u5.err'"
run u6 search softmax --rounds 1 --provider openai --command /bin/true $EVAL
check "--command with another --provider: exit 2 (it would be ignored)" sh -c \
	"test $rc -eq 2 && grep -q -- '--command CMD selects the command provider; it cannot go with --provider openai' '$T/u6.err'"

# --- what the LLM says is shown, never obeyed: an idea titled with escape
# sequences is printed escaped, as in every other command
cat >"$T/evil_llm.sh" <<'SH'
#!/bin/sh
cat >/dev/null
printf '%s\n' '{"ideas": [{"title": "EVIL \u001b[31mred\u0007 \u001b]0;pwned\u0007", "description": "d", "category": "memory access"}]}'
SH
chmod +x "$T/evil_llm.sh"
run evil search softmax --rounds 1 --parents 1 --ideas 1 --branches 1 --command "$T/evil_llm.sh" $EVAL
check "an idea's title with escape sequences is printed escaped (\\e[31m, \\x07)" \
	grep -q 'EVIL \\e\[31mred\\x07 \\e\]0;pwned\\x07' "$T/evil.out"
check "and no escape byte from it reaches the output" sh -c \
	"! grep -q \"\$(printf '\\033')\" '$T/evil.out' '$T/evil.err'"

# --- a journal's search settings are checked as the flags are: a hand-edited
# search_started (a policy that does not exist, -5 parents) is not run as
# given but skipped with a warning naming its line, and the search resumes
# with the flags' settings
python3 - "$T/sweep.jsonl" "$T/edited.jsonl" <<'PY'
import json, sys
out = []
for l in open(sys.argv[1]):
    e = json.loads(l)
    if e["type"] == "search_started":
        e["settings"]["parents"] = -5
    out.append(e)
    if e["type"] == "eval_finished":
        break
open(sys.argv[2], "w").write("".join(json.dumps(e) + "\n" for e in out))
PY
n=$(grep -n '"search_started"' "$T/edited.jsonl" | cut -d: -f1)
run u7 search softmax --rounds 1 --sweep-only --session "$T/edited.jsonl" $EVAL
check "a search_started with -5 parents is skipped, naming its line and the setting" \
	grep -q "edited.jsonl:$n: event ignored: parents: expected a whole number from 1 to 16, got '-5'" "$T/u7.err"
check "and the search runs with the flags' settings (2 parents)" \
	grep -q "^policy islands, seed 1, 2 parents" "$T/u7.out"

# --- the TUI: R starts the search; the header and the Population show it
if ! command -v tmux >/dev/null 2>&1; then
	skip "search in the TUI: tmux is not installed"
	exit 0
fi
cp -r tasks/softmax "$T/chunktask"
cp $F/chunked.c "$T/chunktask/seed.c"
KL=$(cd "$(dirname "$KLOOP")" && pwd)/$(basename "$KLOOP")
TUI_W=160 tui_start "$KL $T/chunktask --backend host --budget 0.2 --trials 2 --session $T/tui.jsonl; echo DONE-S"
check "the TUI opens on the task" wait_for "Population"
wait_for "correct" 30 >/dev/null
keys R
check "R starts the search: the header shows its state and round" \
	wait_for "search (running|finished), round [1-9]" 30
# the best, or (when two candidates are within the noise of each other,
# which depends on the timings) the leader, unconfirmed
check "... it ends by itself (nothing new to try) and the header says so" \
	wait_for "search finished, round [1-9].*(best #[0-9]+|leader [0-9.]+x \(#[0-9]+)|(best #[0-9]+|leader [0-9.]+x \(#[0-9]+).*search finished, round [1-9]" 90
check "the Population shows each sweep point's round and setting" wait_for "r1 sweep CHUNK=64"
check "the chart has a bar per round, its x axis the rounds" \
	sh -c "grep -Eq '(Best|Leader) speedup [0-9.]+x \(#[0-9]+(, unconfirmed)?\) by round' '$T/screen' && grep -Eq 'round 1\.\.[2-9]  bold: the best' '$T/screen'"
keys q
check "q quits" wait_for "DONE-S" 15
check "the TUI's search is journaled like any other" \
	grep -q '"type":"search_finished"' "$T/tui.jsonl"

# --- issue 35: a seed whose time a busy machine left unverified is timed
# again, not dropped: a session whose seed's verdict says its bound could
# not be applied, then a search on it without an LLM (before, it stopped at
# once: "no correct candidate to be a parent")
$KLOOP eval softmax tasks/softmax/seed.c $EVAL --session "$T/rt.jsonl" >/dev/null 2>&1
unverify "$T/rt.jsonl"
run retime search softmax --session "$T/rt.jsonl" --rounds 1 --sweep-only $EVAL
check "an unverified seed is timed again before the search gives up on it ($(grep -m1 'round 0' "$T/retime.out"))" \
	grep -q "round 0: seed #1's time was unverified (the clock bound was not applied: a busy machine): timing it again (1 of 2)" "$T/retime.out"
check "... and once verified it is the parent of round 1, not dropped (exit $rc; $(grep -m1 -E 'no correct|parents' "$T/retime.out"))" \
	sh -c "grep -q '#1 seed.c: island 1' '$T/retime.out' && ! grep -q 'no correct candidate to be a parent' '$T/retime.out'"

# ... and so is a translation, the start of a task without a seed (a CI
# run's search on such a task translated in round 0 and, both translations'
# times unverified on a loaded machine, stopped before round 1)
run rtt translate "$T/noseed" -b 1 --json --command "$CORPUS" --session "$T/rtt.jsonl" $EVAL
unverify "$T/rtt.jsonl"
run retimet search "$T/noseed" --session "$T/rtt.jsonl" --rounds 1 --branches 1 --command "$CORPUS" $EVAL
check "an unverified translation is timed again before the search translates anew or stops ($(grep -m1 'round 0' "$T/retimet.out"))" \
	grep -q "round 0: translation #1's time was unverified (the clock bound was not applied: a busy machine): timing it again (1 of 2)" "$T/retimet.out"
check "... and once verified it is the parent of round 1 ($(grep -m1 -E 'no correct|island 1' "$T/retimet.out"))" \
	sh -c "grep -q '#1 translation-b1.c: island 1' '$T/retimet.out' && ! grep -q 'no correct candidate to be a parent' '$T/retimet.out'"
