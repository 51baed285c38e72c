# honest.sh - honest numbers (issue 39) with the real kloop on the host
# backend: one baseline a session (a re-measure journaled and shown), one
# best named the same by every view of one journal, the archive filing no
# win an A/B refuted, settings on a finished search that evaluate nothing,
# a finished search going on with a new budget, and the replay's title.
# The journal the views read is crafted (python) from a real session, so
# that no check depends on a timed number or the order of two of them.
. tests/e2e/lib.sh
EVAL="--backend host --budget 0.05 --trials 1"
S="$T/s.jsonl"
printf 'baseline\n' | $KLOOP shell softmax --session "$S" $EVAL >"$T/s.out" 2>&1
check "a session begins with its baseline, shown with where it came from ($(head -c 300 "$T/s.out"))" \
	grep -Eq "^baseline [0-9.]+ ms on .+, timed when the session began$" "$T/s.out"
if ! grep -q '"status": *"correct"' "$S"; then
	fail "the seed is correct ($(said "$S"))"
	exit 1
fi

# ---- one baseline: a re-measure is an event, and every speedup follows it ----
printf 'baseline remeasure\nbaseline\n' | $KLOOP shell --session "$S" $EVAL >"$T/rm.out" 2>&1
check "baseline remeasure says what it did and what came of it ($(head -c 400 "$T/rm.out"))" \
	sh -c "grep -q 're-measuring the baseline: the workers start afresh' '$T/rm.out' &&
	grep -Eq 'baseline re-measured on .+: [0-9.]+ ms \(it was [0-9.]+ ms\): every speedup in the session is against it now' '$T/rm.out' &&
	grep -Eq '^baseline [0-9.]+ ms on .+, re-measured$' '$T/rm.out'"
$KLOOP session "$S" --json >"$T/s.json"
check "the re-measure is a baseline event of the journal, and every speedup is the session's baseline over the median" python3 -c '
import json,sys
ev=[json.loads(l) for l in open(sys.argv[1])]
b=[e for e in ev if e["type"]=="baseline"]
assert len(b)==1 and b[0]["median_ms"]>0 and b[0]["previous_ms"]>0 and b[0]["device"], b
j=json.load(open(sys.argv[2]))
base=j["baselines"][0]
assert base["remeasured"] and base["ms"]==b[0]["median_ms"], base
for c in j["candidates"]:
    if c["status"]=="correct":
        assert abs(c["speedup"]-base["ms"]/c["time_ms"])<1e-9*c["speedup"], c' "$S" "$T/s.json"

# ---- a crafted journal: one best, named the same everywhere ----
# From the real session: its start and its seed (#1, time T0 against the
# baseline B; its spread set to +-2%).  #11 is 2x faster outside the seed's noise; #12 is #11's
# machine code, not timed again, its result against another run's
# baseline (a reopen's); #13 is within #11's noise, faster by its median,
# and its A/B against #11 found them within the noise; #14 is #11's child,
# faster outside the noise by separate timings, but its A/B against #11 was
# not beyond the noise.  The best is #11, whatever the numbers happen to be.
C="$T/c.jsonl"
python3 - "$S" "$C" <<'EOF'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
out = []
seed = None
for e in ev:
    if e["type"] in ("session_started", "candidate_added"):
        out.append(e)
    elif e["type"] == "eval_finished" and seed is None:
        seed = e["result"]
        out.append(e)
r0 = seed
dev, base, t0 = r0["device"], r0["baseline_ms"], r0["timing"]["median_ms"]
# the seed's spread made as tight as the others': a loaded machine timed it
# at +-67% once, and #11 was then within its noise (no number of this
# journal may decide what its checks see)
r0["timing"].update({"p10_ms": t0 * 0.98, "p90_ms": t0 * 1.02, "rse": 0.01})
ts = ev[-1]["ts"]

def res(m, lo, hi, extra=None, b=base):
    r = {"status": "correct", "reason": "", "device": dev, "baseline_ms": b,
         "baseline": r0.get("baseline", ""), "speedup": b / m, "time_ms": m,
         "timing": {"median_ms": m, "p10_ms": lo, "p90_ms": hi, "method": "clock"},
         "correctness": {}}
    r.update(extra or {})
    return r

def add(i, parent, m, lo, hi, extra=None, b=base):
    global ts
    ts += 1
    out.append({"type": "candidate_added", "id": i, "name": "c%d.c" % i, "origin": "human",
                "parents": [parent], "source": "/* %d */\n" % i, "ts": ts})
    out.append({"type": "eval_finished", "candidate": i, "ts": ts,
                "result": res(m, lo, hi, extra, b)})

def ab(c, inc, won):
    global ts
    ts += 1
    out.append({"type": "ab_compared", "candidate": c, "incumbent": inc, "pairs": 20,
                "wins": 19 if won else 10, "ratio": 1.5 if won else 1.01, "won": won,
                "rule": "sign test", "ts": ts})

h = t0 / 2
add(11, 1, h, h * 0.98, h * 1.02, {"code_hash": "h11"})
add(12, 1, h, h * 0.98, h * 1.02,
    {"code_hash": "h11", "same_code_as": 11, "not_timed": "same machine code as #11"},
    b=base * 0.6)
add(13, 1, h * 0.99, h * 0.97, h * 1.01)
ab(13, 11, False)
add(14, 11, h * 0.7, h * 0.69, h * 0.71)
ab(14, 11, False)
for i, e in enumerate(out):
    e["seq"] = i + 1
with open(sys.argv[2], "w") as f:
    for e in out:
        f.write(json.dumps(e) + "\n")
EOF
$KLOOP session "$C" >"$T/c.txt" 2>&1
$KLOOP session "$C" --json >"$T/c.json" 2>&1
check "kloop session: the best is #11, and the A/B that found #13 within its noise is said, never \"no A/B\" ($(grep best "$T/c.txt"))" \
	sh -c "grep -Eq '^best [0-9.]+x \(#11, A/B: #13 within noise\)$' '$T/c.txt' && ! grep -q 'no A/B' '$T/c.txt'"
check "the same machine code has the same speedup, whatever baseline its run timed (#11, #12)" python3 -c '
import json,sys
j=json.load(open(sys.argv[1])); c={x["id"]:x for x in j["candidates"]}
assert c[11]["speedup"]==c[12]["speedup"] and j["best"]["id"]==11 and j["best"]["speedup"]==c[11]["speedup"], (c[11], c[12], j["best"])' "$T/c.json"
$KLOOP report "$C" -o "$T/c.html" >/dev/null 2>&1
check "kloop report names the same best with the same number" python3 -c '
import json,re,sys
h=open(sys.argv[1],encoding="utf-8").read(); j=json.load(open(sys.argv[2]))
m=re.search(r"Best: candidate (\d+) .*?<b id=\"best-speedup\">([0-9.]+)x</b>", h)
assert m and int(m.group(1))==j["best"]["id"] and m.group(2)=="%.2f" % j["best"]["speedup"], m and m.groups()
assert "an A/B found candidate 13 within its timing noise" in h' "$T/c.html" "$T/c.json"
python3 tests/e2e/report_check.py "$T/c.html" "$T/c.json"
$KLOOP export "$C" best --source "$T/best.c" >"$T/exp.out" 2>"$T/exp.err"
check "kloop export --best writes the same one ($(cat "$T/exp.out" "$T/exp.err" | head -c 300))" \
	grep -q "#11\|candidate 11" "$T/exp.out"

# the archive: #14's win over its parent was refuted by their A/B
$KLOOP archive add "$C" >"$T/arch.out" 2>&1
$KLOOP archive search "" --kind win --json >"$T/wins.json" 2>&1
check "the archive files no win an A/B refuted (#14), and #11's gain is the session's ($(cat "$T/arch.out"))" python3 -c '
import json,sys
w=json.load(open(sys.argv[1])); j=json.load(open(sys.argv[2]))
ids=sorted(e["candidate"] for e in w)
assert 14 not in ids and 11 in ids, ids
e=[x for x in w if x["candidate"]==11][0]
assert abs(e["speedup"]-j["best"]["speedup"])<1e-9, (e["speedup"], j["best"])' "$T/wins.json" "$T/c.json"

# ---- a finished search: settings evaluate nothing; a new budget goes on ----
F="$T/f.jsonl"
python3 - "$C" "$F" <<'EOF'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
ts = ev[-1]["ts"]
def e(t, **k):
    global ts
    ts += 1
    d = {"type": t, "ts": ts, "elapsed_s": 1.0}
    d.update(k)
    ev.append(d)
e("search_started", settings={"rounds": 1, "sweep_only": 1, "sweep_points": 2, "ideas": 1})
sp = [x for x in ev if x["type"] == "eval_finished"][0]["result"]["speedup"]
e("new_best", candidate=1, speedup=sp)
e("round_started", round=1, best=1)
e("round_finished", round=1, best=11, best_speedup=1, made=0)
e("search_finished", reason="round 1 made no new candidate: nothing new to try")
for i, x in enumerate(ev):
    x["seq"] = i + 1
open(sys.argv[2], "w").write("".join(json.dumps(x) + "\n" for x in ev))
EOF
cp "$F" "$T/f2.jsonl"
cp "$F" "$T/f3.jsonl"
$KLOOP session "$F" >"$T/f0.txt" 2>&1
printf 'set bandwidth_gbs 0.001\nsearch status\n' | $KLOOP shell --session "$T/f2.jsonl" $EVAL >"$T/set.out" 2>&1
$KLOOP session "$T/f2.jsonl" >"$T/f1.txt" 2>&1
check "set on a finished search evaluates nothing and says so ($(grep -m1 'search setting' "$T/set.out"))" \
	sh -c "grep -q 'search setting bandwidth_gbs = 0.001 (the search has finished: nothing is evaluated now' '$T/set.out' &&
	! grep -q eval_started '$T/f2.jsonl' && ! grep -q suspect_flagged '$T/f2.jsonl' && [ \"\$(grep '^best' '$T/f0.txt')\" = \"\$(grep '^best' '$T/f1.txt')\" ]"
check "search status names the session's best (#11, as kloop session does), not the search's first incumbent" \
	grep -Eq "^search finished, round 1/1, .*best #11 [0-9.]+x" "$T/set.out"
$KLOOP search --session "$F" --rounds 1 $EVAL >"$T/spent.out" 2>"$T/spent.err"
rc=$?
check "kloop search --session F --rounds 1 with that round done: exit 2, saying a budget counts the whole search ($(tail -1 "$T/spent.err"))" \
	sh -c "test $rc -eq 2 && grep -q 'with 1 rounds done: a budget counts the whole search (give more than 1 to go on)' '$T/spent.err'"
$KLOOP search --session "$F" --rounds 2 --sweep-points 2 $EVAL >"$T/go.out" 2>"$T/go.err"
check "kloop search --session F --rounds 2 goes on with a finished search, its last round's \"nothing new\" no longer stopping it ($(grep -m1 'goes on' "$T/go.out"))" python3 -c '
import json,sys
ev=[json.loads(l) for l in open(sys.argv[1])]
r=[e for e in ev if e["type"]=="search_resumed"]
assert r and r[-1].get("continued") is True, r
assert any(e["type"]=="round_started" and e["round"]==2 for e in ev), "no round 2"
f=[e for e in ev if e["type"]=="search_finished"]
assert len(f)==2 and f[-1]["reason"] in ("2 rounds done",
    "round 2 made no new candidate: nothing new to try"), f[-1]' "$F"
$KLOOP session "$F" >"$T/f4.txt" 2>&1
check "its summary names the session's best as kloop session does ($(grep '^session:' "$T/go.out"))" \
	grep -qxF "session: $(grep '^best' "$T/f4.txt")" "$T/go.out"
check "the summary never says no candidate holds the best above a best" \
	sh -c "! grep -q 'no candidate holds the best' '$T/go.out' || ! grep -q '^session: best [0-9]' '$T/go.out'"

# ---- the replay's title: the task, the search's state and the best ----
if command -v tmux >/dev/null 2>&1; then
	TUI_W=80 tui_start "$KLOOP replay $T/f3.jsonl; echo DONE-R"
	wait_for "kloop replay" 15 >/dev/null
	keys '>'
	check "replay at its end: the title keeps the task, the search's state and the best at 80 columns" \
		wait_for "^ kloop replay \| softmax.*(search finished.*best [0-9.]+x \(#11|best [0-9.]+x \(#11.*search finished)"
	keys '['
	keys '['
	check "... a step back too: the search running" \
		wait_for "^ kloop replay \| softmax.*(search running.*best [0-9.]+x \(#11|best [0-9.]+x \(#11.*search running)"
	keys q
	wait_for "^DONE-R" 15 >/dev/null
	tm kill-server 2>/dev/null
else
	skip "the replay's title (no tmux)"
fi
exit 0
