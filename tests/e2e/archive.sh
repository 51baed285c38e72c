# archive.sh - the innovation archive and the session report with the real
# kloop: sessions made by `kloop implement` / `kloop shell` on the host
# backend against the fake LLM (tests/fake_llm/archive.json, real HTTP on
# 127.0.0.1), from a parent about 8x slower than its children
# (tests/fixtures/archive/slow_softmax.c) so that a win is beyond any noise.
# Backfill (idempotent), search ranking and filters, show, stats, export /
# import, the live hook, the {{archive}} prompt section, two processes at
# once and a kill -9 mid-write, and `kloop report`.
. tests/e2e/lib.sh
if ! fake_llm tests/fake_llm/archive.json; then
	fail "the fake LLM server starts"
	exit 1
fi
LLM="--provider openai --model fake-gpt --base-url http://127.0.0.1:$PORT/v1"
EVAL="--backend host --budget 0.2 --trials 3"
SLOW=tests/fixtures/archive/slow_softmax.c
S1="$T/s1.jsonl"
DB="$XDG_DATA_HOME/kloop/archive.db"
# impl IDEA SESSION [TASK FROM]: one branch of an idea, no fix; the archive
# is off while it runs (every front end archives as it goes), so that
# `archive add` backfills from the journal alone
impl() {
	KLOOP_ARCHIVE=off $KLOOP implement "${3:-softmax}" --from "${4:-$SLOW}" --idea "$1" --session "$2" $LLM $EVAL \
		--fix 0 -b 1 >>"$T/impl.log" 2>&1
}
impl "ARCH-ONEPASS <script>alert(1)</script> & co: one pass over each row: the max, then exp and the sum, then a multiply by the reciprocal" "$S1"
impl "ARCH-TILE tile the rows into blocks of 256 columns" "$S1"
impl "ARCH-ZERO skip the normalisation" "$S1"
# this file tests the archive, not kloop's clock: on a loaded machine an
# honest time can come out unverified (a fresh clone beside others' work:
# the seed's frames 0.145 ms against 0.031 ms before its load), and then no
# win exists and every check after this one fails with it.  The journal's
# times stay as measured; a time left unverified is taken as verified here,
# and a line says so
python3 - "$S1" <<'PY'
import json, sys
p = sys.argv[1]
ev = [json.loads(l) for l in open(p)]
n = 0
for e in ev:
    t = (e.get("result") or {}).get("timing") if e.get("type") == "eval_finished" else None
    if isinstance(t, dict) and t.get("verified") is False:
        t["verified"] = True
        t.pop("clock_bound", None)
        n += 1
open(p, "w").write("".join(json.dumps(e) + "\n" for e in ev))
if n:
    print("# %d unverified time%s of this loaded machine taken as verified for the archive's tests" % (n, "" if n == 1 else "s"))
PY

# ---- backfill ----
$KLOOP archive add "$S1" >"$T/add1" 2>&1
check "archive add: one win and two dead ends, all new ($(cat "$T/add1"); the verdicts: $(said "$S1"))" \
	grep -q ": 1 win, 2 dead ends, 3 new$" "$T/add1"
$KLOOP archive add "$S1" "$S1" >"$T/add2" 2>&1
check "adding the session again adds nothing" \
	test "$(grep -c ': 1 win, 2 dead ends, 0 new$' "$T/add2")" = 2
$KLOOP archive stats --json >"$T/stats1.json"
check "the archive holds 3 entries after three adds" json_true "$T/stats1.json" 'j["entries"] == 3'
$KLOOP archive add "$T/nope.jsonl" >/dev/null 2>"$T/err"
check "a missing journal is an error naming it" sh -c "[ $? -eq 1 ] && grep -q 'nope.jsonl' '$T/err'"

# a second task: a layernorm dead end (the compile error reply, spliced onto its seed)
S2="$T/s2.jsonl"
impl "ARCH-TILE tile layernorm rows into shared blocks" "$S2" layernorm tasks/layernorm/seed.c
$KLOOP archive add "$S2" >"$T/add3" 2>&1
check "a layernorm session adds its dead end ($(cat "$T/add3"); the verdicts: $(said "$S2"))" grep -q ": 0 wins, 1 dead end, 1 new$" "$T/add3"

# ---- search ----
$KLOOP archive search "reciprocal multiply" --json >"$T/q1.json"
check "search ranks the entry whose idea matches first" \
	json_true "$T/q1.json" 'j[0]["idea"].startswith("ARCH-ONEPASS") and j[0]["kind"] == "win"'
$KLOOP archive search "tile blocks" --json >"$T/q2.json"
check "search: 'tile blocks' finds both tiling dead ends first, of two tasks" \
	json_true "$T/q2.json" 'sorted(e["task"] for e in j[:2]) == ["layernorm", "softmax"] and all(e["idea"].startswith("ARCH-TILE") for e in j[:2])'
$KLOOP archive search "tile blocks" --task layernorm --json >"$T/q3.json"
check "--task keeps that task's entries only" json_true "$T/q3.json" 'len(j) == 1 and j[0]["task"] == "layernorm"'
$KLOOP archive search "" --kind win --json >"$T/q4.json"
check "--kind win without words lists the wins only" json_true "$T/q4.json" 'len(j) == 1 and j[0]["kind"] == "win"'
dev=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[0]["gpu"][:6])' "$T/q4.json")
$KLOOP archive search softmax --gpu "$dev" --json >"$T/q5.json"
check "--gpu matches part of the device name ($dev)" json_true "$T/q5.json" 'len(j) == 3'
$KLOOP archive search softmax --gpu "H100-NOT-HERE" >"$T/q6" 2>&1
check "--gpu of another device: nothing, exit 1" sh -c "[ $? -eq 1 ] && grep -q 'no archive entry matches' '$T/q6'"
$KLOOP archive search reciprocal >"$T/q7" 2>&1
check "search for people: a row with the gain and the idea" \
	grep -Eq '^ +[0-9]+  win +softmax +[0-9.]+x +\[[a-z ]+\] ARCH-ONEPASS' "$T/q7"

# ---- show ----
id=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[0]["id"])' "$T/q1.json")
$KLOOP archive show "$id" --json >"$T/show.json"
$KLOOP archive show "$id" >"$T/show.txt"
check "show: the diff against the parent, the lineage, the model" \
	sh -c "grep -q '^+		float inv = 1.0f / sum;' '$T/show.txt' && grep -q '^lineage  *1 slow_softmax.c -> 2 ' '$T/show.txt' && grep -q '^model  *openai fake-gpt' '$T/show.txt'"
check "show: the event is the journal's eval_finished of that candidate" python3 -c '
import json,sys
e=json.load(open(sys.argv[1])); ev=[json.loads(l) for l in open(sys.argv[2])]
idx=[i+1 for i,x in enumerate(ev) if x["type"]=="eval_finished" and x["candidate"]==e["candidate"]]
assert e["event"]==idx[-1] and e["session_path"].endswith("s1.jsonl"), (e["event"], idx)' "$T/show.json" "$S1"
check "show: the gain is the parent's median over the child's, both intervals apart" json_true "$T/show.json" \
	'abs(j["speedup_parent"] - j["parent_time_ms"] / j["time_ms"]) < 1e-9 and j["p90_ms"] < j["parent_p10_ms"]'
check "show: the signature names the reference's op and the tensors" json_true "$T/show.json" \
	'j["signature"] == "ops: softmax; in x f32 [64, 4096], out y f32 [64, 4096]"'
$KLOOP archive show 999 >/dev/null 2>"$T/err"
check "show of an id not there: exit 1, says so" sh -c "[ $? -eq 1 ] && grep -q 'no archive entry 999' '$T/err'"
$KLOOP archive show "$id" | grep -q "$(printf '\033')"
check "show prints no escape byte (the idea holds markup, not escapes)" test $? -ne 0

# ---- stats ----
$KLOOP archive stats --json >"$T/stats.json"
$KLOOP archive search "" -n 100 --json >"$T/all.json"
check "stats: counts and median gains per task and category match the entries" python3 -c '
import json,sys,statistics
s=json.load(open(sys.argv[1])); es=json.load(open(sys.argv[2]))
assert s["entries"]==4 and s["wins"]==1 and s["dead_ends"]==3 and s["tasks"]==2, s
for r in s["rows"]:
    g=[e for e in es if e["task"]==r["task"] and e["category"]==r["category"]]
    w=[e["speedup_parent"] for e in g if e["kind"]=="win"]
    assert r["wins"]==len(w) and r["dead_ends"]==len(g)-len(w), r
    assert (r["median_gain"] is None and not w) or abs(r["median_gain"]-statistics.median(w))<1e-9, r
assert sum(r["wins"]+r["dead_ends"] for r in s["rows"])==4' "$T/stats.json" "$T/all.json"
$KLOOP archive stats >"$T/stats.txt"
check "stats for people: totals, then a row per task and category" \
	sh -c "grep -q '^4 entries: 1 win, 3 dead ends, over 2 tasks' '$T/stats.txt' && grep -Eq '^layernorm +[a-z ]+ +0 +1 +0%' '$T/stats.txt'"

# ---- export / import ----
$KLOOP archive export "$T/a.jsonl" >"$T/exp" 2>&1
check "export writes one line per entry" sh -c "grep -q '^4 entries written' '$T/exp' && [ \$(wc -l <'$T/a.jsonl') -eq 4 ]"
$KLOOP archive import "$T/a.jsonl" --db "$T/b.db" >"$T/imp1" 2>&1
$KLOOP archive import "$T/a.jsonl" --db "$T/b.db" >"$T/imp2" 2>&1
check "import into another archive adds 4, a second import none" \
	sh -c "grep -q '4 entries read from .*, 4 new' '$T/imp1' && grep -q '4 entries read from .*, 0 new' '$T/imp2'"
$KLOOP archive export "$T/b.jsonl" --db "$T/b.db" >/dev/null 2>&1
check "the round trip keeps every entry whole (code and diff included)" python3 -c '
import json,sys
a=sorted((json.loads(l) for l in open(sys.argv[1])), key=lambda e:e["ukey"])
b=sorted((json.loads(l) for l in open(sys.argv[2])), key=lambda e:e["ukey"])
for x in a+b: x.pop("id", None)
assert a==b and all(x["code"] for x in a)' "$T/a.jsonl" "$T/b.jsonl"
{ head -n 2 "$T/a.jsonl"; echo '{"kind": "win", "task": "x"}'; } >"$T/bad.jsonl"
$KLOOP archive import "$T/bad.jsonl" --db "$T/c.db" >/dev/null 2>"$T/err"
rc=$?
$KLOOP archive stats --json --db "$T/c.db" >"$T/c.json" 2>/dev/null
check "a line that is not an entry: exit 1, FILE:LINE, nothing imported" \
	sh -c "[ $rc -eq 1 ] && grep -q 'bad.jsonl:3: not an archive entry: \"ukey\"' '$T/err' && python3 -c 'import json; assert json.load(open(\"$T/c.json\"))[\"entries\"]==0'"

# ---- the prompt section ----
: >"$T/server.log"
$KLOOP ideas layernorm $LLM $EVAL -n 2 --no-eval >/dev/null 2>&1
$KLOOP ideas softmax $LLM $EVAL -n 2 --no-eval >/dev/null 2>&1
check "the rendered ideas prompt carries the archive: the softmax win for layernorm, the dead ends for softmax" python3 -c '
import json,sys
ps=[]
for l in open(sys.argv[1]):
    b=json.loads(l)["body"]; b=json.loads(b) if isinstance(b,str) else b
    ps.append(b["messages"][-1]["content"])
ln,sm=ps[0],ps[1]
i=ln.index("## From the archive of earlier sessions")
sec=ln[i:ln.index("## What to do")]
assert "Task softmax (ops: softmax" in sec and "ARCH-ONEPASS" in sec and "+\t\tfloat inv = 1.0f / sum;" in sec, sec
assert "Ideas that already failed on this task" in sec and "ARCH-TILE tile layernorm" in sec and "compile_error" in sec, sec
assert len(sec.encode()) <= 4096 + 100, len(sec)
j=sm.index("## From the archive of earlier sessions")
s2=sm[j:sm.index("## What to do")]
assert "ARCH-TILE tile the rows" in s2 and "ARCH-ZERO skip the normalisation" in s2 and ": incorrect" in s2, s2
' "$T/server.log"

# the search's ideas requests go through the same pipeline: they carry it too
# (on a copy of the archive, which the search's own dead ends go into)
for f in "$DB" "$DB-wal"; do [ -e "$f" ] && cp "$f" "$T/search-archive.db${f#"$DB"}"; done
: >"$T/server.log"
KLOOP_ARCHIVE="$T/search-archive.db" $KLOOP search layernorm $LLM $EVAL --rounds 1 --ideas 2 --branches 1 --fix 0 \
	--no-crossover --sweep-points 0 --session "$T/search.jsonl" >"$T/search.out" 2>&1
check "a search's ideas prompt carries the archive section too" python3 -c '
import json,sys
ps=[]
for l in open(sys.argv[1]):
    b=json.loads(l)["body"]; b=json.loads(b) if isinstance(b,str) else b
    ps.append(b["messages"][-1]["content"])
ideas=[p for p in ps if "Propose 2 distinct ideas" in p]
assert ideas, [p[:200] for p in ps]
sec=ideas[0][ideas[0].index("## From the archive of earlier sessions"):]
assert "Task softmax (ops: softmax" in sec and "ARCH-ONEPASS" in sec, sec[:2000]
' "$T/server.log"

# ---- a live session archives as it goes (kloop shell, the REPL) ----
cp -r tasks/softmax "$T/slowsoft"
cp "$SLOW" "$T/slowsoft/seed.c"
$KLOOP archive search "running max rescale" --json >"$T/q7.json"
printf 'ideas 2\naccept 1\nimplement 1\n' | $KLOOP shell "$T/slowsoft" --session "$T/live.jsonl" $LLM $EVAL >"$T/live.out" 2>&1
$KLOOP archive search "running max rescale" --json >"$T/q8.json"
# a win is a verified time clear of its parent's: on a machine loaded enough
# to leave either time unverified there is none, and the archive must then
# not hold one (archive add, which decides the same way, says which it is)
$KLOOP archive add "$T/live.jsonl" >"$T/add4" 2>&1
if grep -q ": 1 win, 0 dead ends" "$T/add4"; then
	check "a live session's win is in the archive without archive add" \
		json_true "$T/q8.json" 'j[0]["kind"] == "win" and j[0]["idea"] == "One pass for the max and the sum" and j[0]["session"].startswith("softmax@")'
else
	check "a live session without a verified win adds none to the archive ($(cat "$T/add4"); the verdicts: $(said "$T/live.jsonl"))" \
		sh -c "grep -q ': 0 wins, ' '$T/add4' && grep -q unverified '$T/live.out' && python3 -c '
import json,sys
w=[[e[\"id\"] for e in json.load(open(p)) if e[\"kind\"] == \"win\"] for p in sys.argv[1:]]
assert w[0] == w[1], w' '$T/q7.json' '$T/q8.json'"
fi
check "backfilling that session afterwards adds nothing ($(cat "$T/add4"))" grep -q ", 0 new$" "$T/add4"

# ---- the archive command in the REPL and the TUI ----
wid=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[0]["id"])' "$T/q1.json")
printf 'archive reciprocal row\narchive idea %s\narchive cand %s\narchive idea 999\n' "$wid" "$wid" |
	$KLOOP shell softmax --session "$T/repl.jsonl" $EVAL >"$T/repl.out" 2>&1
check "REPL: archive QUERY lists the entries, the matching win first" \
	grep -Eq "^ +$wid  win +softmax +[0-9.]+x +\[[a-z ]+\] ARCH-ONEPASS" "$T/repl.out"
$KLOOP session "$T/repl.jsonl" --json >"$T/repl.json"
check "REPL: archive idea ID proposes it with origin archive; archive cand ID adds its code" python3 -c '
import json,sys
j=json.load(open(sys.argv[1])); ex=[json.loads(l) for l in open(sys.argv[2])]
w=[e for e in ex if e["kind"]=="win"][0]
d=j["ideas"][0]; c=j["candidates"][-1]
assert d["origin"]=="archive" and d["title"]==w["idea"] and "From the archive, entry" in d["description"], d
src=[json.loads(l) for l in open(sys.argv[3]) if "candidate_added" in l][-1]["source"]
assert c["origin"]=="human" and src==w["code"] and c["status"]=="correct", c' "$T/repl.json" "$T/a.jsonl" "$T/repl.jsonl"
check "REPL: an entry that is not there is an error naming it" grep -q "archive idea: no archive entry 999" "$T/repl.out"
if command -v tmux >/dev/null 2>&1; then
	tui_start "$KLOOP softmax --backend host --budget 0.2 --session $T/tui.jsonl; echo DONE-T"
	wait_for "1 candidates?, 1 correct" 30 >/dev/null
	keys ":archive reciprocal row" Enter
	check "TUI: :archive QUERY shows the results in the viewer" wait_for "entr(y|ies) of the archive for \"reciprocal row\""
	check "TUI: the win is listed with its gain" wait_for "win +softmax +[0-9.]+x"
	keys q
	keys q
	wait_for "^DONE-T" 15 >/dev/null
	tm kill-server 2>/dev/null
else
	skip "TUI: :archive (no tmux)"
fi

# ---- two processes at once, and a kill -9 mid-write ----
# 40 distinct sessions: copies of s1 with their own session_started time
python3 -c '
import json,sys
src=[l for l in open(sys.argv[1])]
for k in range(40):
    with open("%s/c%02d.jsonl" % (sys.argv[2], k), "w") as f:
        for l in src:
            e=json.loads(l)
            if e["type"]=="session_started": e["ts"]=e["ts"]+1000+k
            f.write(json.dumps(e)+"\n")' "$S1" "$T"
before=$(python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("select count(*) from entries").fetchone()[0])' "$DB")
(for k in 00 01 02 03 04 05 06 07 08 09 10 11 12 13 14 15 16 17 18 19; do
	$KLOOP archive add "$T/c$k.jsonl" || echo "add c$k failed"
	$KLOOP archive search "reciprocal" --json >/dev/null || echo "search failed"
done) >"$T/p1.log" 2>&1 &
P1=$!
(for k in 20 21 22 23 24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39; do
	$KLOOP archive add "$T/c$k.jsonl" || echo "add c$k failed"
	$KLOOP archive search "tile" --task softmax --json >/dev/null || echo "search failed"
done) >"$T/p2.log" 2>&1 &
P2=$!
wait $P1 $P2
check "two processes adding and searching at once: no failure" \
	sh -c "! grep -q failed '$T/p1.log' '$T/p2.log' && [ \$(grep -c ', 3 new' '$T/p1.log' '$T/p2.log' | awk -F: '{s+=\$2} END {print s}') -eq 40 ]"
mid=$((before + 120))
# a big import (copies of the export with keys of their own), killed while it writes
python3 -c '
import json,sys
es=[json.loads(l) for l in open(sys.argv[1])]
with open(sys.argv[2],"w") as f:
    for k in range(3000):
        e=dict(es[k % len(es)]); e["ukey"]="bulk:%d" % k; e["session"]="bulk%d" % k
        f.write(json.dumps(e)+"\n")' "$T/a.jsonl" "$T/bulk.jsonl"
$KLOOP archive import "$T/bulk.jsonl" >/dev/null 2>&1 &
P3=$!
$KLOOP archive search "reciprocal" --json >/dev/null 2>&1 &
P4=$!
# kill it once its transaction has written 1 MB to the WAL (or after 10 s)
w0=$(stat -c %s "$DB-wal" 2>/dev/null || echo 0)
i=0
while [ $i -lt 1000 ] && kill -0 $P3 2>/dev/null &&
	[ $(($(stat -c %s "$DB-wal" 2>/dev/null || echo 0) - w0)) -lt 1000000 ]; do
	sleep 0.01
	i=$((i + 1))
done
kill -9 $P3 2>/dev/null && echo "# import killed with the WAL $(($(stat -c %s "$DB-wal" 2>/dev/null || echo 0) - w0)) bytes larger"
wait $P3 $P4 2>/dev/null
check "after kill -9 mid-import: integrity_check ok (the table and both FTS5 indexes), every session entry once, the import all or nothing" python3 -c '
import sqlite3,sys
db=sqlite3.connect(sys.argv[1])
assert db.execute("pragma integrity_check").fetchone()[0]=="ok"
db.execute("insert into entries_fts(entries_fts) values(\"integrity-check\")")
db.execute("insert into code_fts(code_fts) values(\"integrity-check\")")
n=db.execute("select count(*) from entries").fetchone()[0]
bulk=db.execute("select count(*) from entries where session like \"bulk%\"").fetchone()[0]
dup=db.execute("select count(*) from (select ukey from entries group by ukey having count(*)>1)").fetchone()[0]
assert dup==0 and bulk in (0,3000) and n==int(sys.argv[2])+bulk, (n,bulk,dup)
print("# bulk rows after the kill: %d" % bulk)' "$DB" "$mid"
$KLOOP archive import "$T/bulk.jsonl" >/dev/null 2>&1
check "the interrupted import, run again, completes (3000 bulk entries)" python3 -c '
import sqlite3,sys
assert sqlite3.connect(sys.argv[1]).execute("select count(*) from entries where session like \"bulk%\"").fetchone()[0]==3000' "$DB"

# ---- the report ----
$KLOOP report "$S1" -o "$T/r.html" >"$T/rep" 2>&1
check "report: written, says where ($(cat "$T/rep"))" sh -c "grep -q 'report written to $T/r.html' '$T/rep' && [ -s '$T/r.html' ]"
$KLOOP session "$S1" --json >"$T/s1.json"
python3 tests/e2e/report_check.py "$T/r.html" "$T/s1.json"
check "report: what the session holds is escaped (the idea's <script> is text)" \
	sh -c "! grep -q '<script' '$T/r.html' && grep -q '&lt;script&gt;alert(1)&lt;/script&gt; &amp; co' '$T/r.html'"
# a journal whose every string is hostile markup (names, origins, ideas, reasons)
python3 -c '
import json,sys
out=open(sys.argv[2],"w")
for l in open(sys.argv[1]):
    e=json.loads(l)
    for k in ("name","origin","idea","title","reason","task"):
        if isinstance(e.get(k),str): e[k]="<b onclick=x>"+e[k]+"</b>&amp;"
    r=e.get("result")
    if isinstance(r,dict) and isinstance(r.get("reason"),str): r["reason"]="<i>"+r["reason"]+"\u001b[31m"
    out.write(json.dumps(e)+"\n")' "$S1" "$T/evil.jsonl"
$KLOOP report "$T/evil.jsonl" -o "$T/evil.html" >/dev/null 2>&1
check "report: hostile markup in every field of a journal stays text, escape bytes are not passed on" python3 -c '
import sys
h=open(sys.argv[1],encoding="utf-8").read()
assert "<b onclick" not in h and "<b>" not in h and "<i>" not in h and "\x1b" not in h and "&lt;b onclick=x&gt;" in h and "&amp;amp;" in h' "$T/evil.html"
$KLOOP report "$T/live.jsonl" -o "$T/r2.html" >/dev/null 2>&1
$KLOOP session "$T/live.jsonl" --json >"$T/live.json"
python3 tests/e2e/report_check.py "$T/r2.html" "$T/live.json"
# the same session with its child's time unverified (what a loaded machine
# can give): a hollow dot, no win on the best line
python3 -c '
import json,sys
out=open(sys.argv[2],"w")
for l in open(sys.argv[1]):
    e=json.loads(l)
    r=e.get("result")
    if e.get("type")=="eval_finished" and e.get("candidate")==2 and isinstance(r,dict) and isinstance(r.get("timing"),dict):
        r["timing"]["verified"]=False
    out.write(json.dumps(e)+"\n")' "$T/live.jsonl" "$T/unv.jsonl"
$KLOOP report "$T/unv.jsonl" -o "$T/unv.html" >/dev/null 2>&1
$KLOOP session "$T/unv.jsonl" --json >"$T/unv.json"
python3 tests/e2e/report_check.py "$T/unv.html" "$T/unv.json" | grep "dot"
check "report: an unverified child is a hollow dot that says so" python3 -c '
import sys,json
h=open(sys.argv[1],encoding="utf-8").read()
c=[x for x in json.load(open(sys.argv[2]))["candidates"] if x["id"]==2][0]
assert c.get("unverified") and c["status"]=="correct", c
assert h.count("class=\"eval-suspect\"")==1 and "(unverified: not a win)" in h, h[h.find("chart-time"):][:1500]' "$T/unv.html" "$T/unv.json"
$KLOOP report "$T/nope.jsonl" >/dev/null 2>"$T/err"
check "report of a missing journal: exit 1, names it" sh -c "[ $? -eq 1 ] && grep -q nope.jsonl '$T/err'"
CHROME=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -z "$CHROME" ]; then
	skip "report renders in a headless browser: no chromium (apt-get install chromium)"
else
	timeout 120 "$CHROME" --headless --no-sandbox --disable-gpu --hide-scrollbars \
		--window-size=1200,2400 --screenshot="$T/r.png" "file://$T/r.html" >"$T/chrome.log" 2>&1
	rc=$?
	check "report renders in headless chromium: exit 0 and a PNG screenshot ($rc)" python3 -c '
import sys
b=open(sys.argv[1],"rb").read()
assert b[:8]==b"\x89PNG\r\n\x1a\n" and len(b)>20000, len(b)' "$T/r.png"
fi
