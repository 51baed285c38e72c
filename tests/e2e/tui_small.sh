# tui_small.sh - the small ones of issue 40 in the workbench, in tmux at
# 80x24: "did you mean" on the : line, :compare of two copies (the same
# machine code, said) with its lines wrapped, not cut, the Population's
# all-"-" roofline column giving its room to the idea; the human gate
# of `kloop search` on a terminal refusing a reply of several characters;
# and at 200x50 a replay's Activity listing the events up to the one shown,
# at 100x30 a replay's title keeping the counts beside an unconfirmed best,
# and the workers' setup as long as the worker says it took.
. tests/e2e/lib.sh
if ! command -v tmux >/dev/null 2>&1; then
	skip "tui_small: tmux is not installed"
	exit 0
fi
B="--backend host --budget 0.2"
KL=$(cd "$(dirname "$KLOOP")" && pwd)/$(basename "$KLOOP")

# a session of the seed and a copy of it (a comment more: the same machine
# code), and an A/B between them as a journal holds one
S="$T/copy.jsonl"
(echo "/* a copy */" && cat tasks/softmax/seed.c) >"$T/copy.c"
$KLOOP eval softmax tasks/softmax/seed.c "$T/copy.c" $B --session "$S" >"$T/eval.out" 2>&1
n=$(grep -c . "$S")
echo "{\"type\":\"ab_compared\",\"candidate\":2,\"incumbent\":1,\"pairs\":30,\"wins\":16,\"ratio\":1.02,\"won\":false,\"ts\":$(date +%s),\"seq\":$((n + 1))}" >>"$S"

TUI_W=80 TUI_H=24 tui_start "cd $PWD && $KL softmax $B --session $S; echo DONE-1"
wait_for "2 candidates" 60 >/dev/null
keys : 'compar 1 2' Enter
check "80x24: a typo of a command on the : line: did you mean" \
	wait_for "unknown command 'compar': did you mean 'compare'\?" 10
keys : 'ban memry' Enter
check "80x24: a typo of an idea category: did you mean" \
	wait_for "ban: 'memry': did you mean 'memory access'\?" 10
keys : 'compare 1 2' Enter
check ":compare of two copies says they are the same machine code" \
	wait_for "verdict +same machine code: #1 and #2 compile to the same kernel" 10
# read until both lines are drawn: a screen caught between two draws (make
# asan's slower TUI) showed the verdict line without the A/B's yet
check "... and its A/B line is wrapped at 80 columns, not cut" \
	screen_until "grep -q '^│A/B       #2 against #1: 1.02x over 30 interleaved pairs' '$T/screen' &&
		grep -q '^│  beyond the noise' '$T/screen'" 10
since=$NFAIL
check "... every line of it within 80 columns" python3 -c "
import sys; sys.exit(any(len(l.rstrip('\\n')) > 80 for l in open(sys.argv[1], encoding='utf-8')))" "$T/screen"
diag "$since" "$T/screen"
keys q
keys q
wait_for "quit|y/n|DONE-1" 10 >/dev/null
keys y

# a session whose candidates have an idea, on the host (no roofline: its
# column is "-" in every row)
mkdir -p "$XDG_CONFIG_HOME/kloop"
printf 'provider = command\ncommand = cat >/dev/null; cat tests/fake_llm/replies/correct.txt\n' \
	>"$XDG_CONFIG_HOME/kloop/config"
$KLOOP implement softmax --from tasks/softmax/seed.c --idea "one pass over each row" \
	--session "$T/idea.jsonl" $B --trials 3 --fix 0 -b 1 >"$T/impl.out" 2>&1
rm "$XDG_CONFIG_HOME/kloop/config"
TUI_W=80 TUI_H=24 tui_start "cd $PWD && $KL softmax $B --session $T/idea.jsonl; echo DONE-2"
# the header counts 2 candidates before the Population's rows are drawn (a
# make asan run read the screen between the two): wait for the row
wait_for "2 candidates" 60 >/dev/null
wait_for "^│[ *?~!BP] +2 +1 llm " 30 >/dev/null
since=$NFAIL
check "80x24: the host's all-'-' roofline column is not drawn: the idea has its room" \
	sh -c "grep -Eq '^│ +id +par origin status +time ms speedup +i' '$T/screen' &&
		! grep -q 'roof\|speedup  r' '$T/screen'"
check "... and the candidate of the idea shows its start" wait_for "^│[ *?~!BP] +2 +1 llm .* o…│" 10
diag "$since" "$T/screen"
keys q
wait_for "quit|y/n|DONE-2" 10 >/dev/null
keys y

# --- the Activity says a branch's reason once: an LLM that answers ideas
# but no code (the command provider), an idea implemented: the reply with
# no code is sent back once, and the branch ends; each said in one line
# (the reason was said twice for each reply, a second apart)
cat >"$T/llm.sh" <<'EOS'
#!/bin/sh
if grep -q "Propose"; then cat tests/fake_llm/replies/ideas.txt; else echo "I would rather not write code today."; fi
EOS
printf 'provider = command\ncommand = sh %s\n' "$T/llm.sh" >"$XDG_CONFIG_HOME/kloop/config"
TUI_W=250 TUI_H=50 tui_start "cd $PWD && $KL softmax $B --session $T/nocode.jsonl; echo DONE-3"
wait_for "^done:" 60 >/dev/null
keys : 'ideas 3' Enter
wait_for "Ideas - 3 pending" 30 >/dev/null
keys : 'accept 1' Enter
keys : 'implement 1' Enter
since=$NFAIL
if wait_for "idea 1, branch 1: .*\(no candidate\)" 60; then
	grep -a "the reply holds no code" "$T/screen" >"$T/nocode.lines"
	check "Activity: the reply without code said once with its fix, once at the branch's end ($(grep -c . "$T/nocode.lines") lines)" \
		test "$(grep -c . "$T/nocode.lines")" -eq 2
	check "... no line said twice" sh -c "test -z \"\$(sed 's/^│[0-9:]* //; s/ *││.*//' '$T/nocode.lines' | sort | uniq -d)\""
else
	fail "Activity: the branch of a reply without code did not end"
fi
diag "$since" "$T/screen"
rm "$XDG_CONFIG_HOME/kloop/config"
keys q
wait_for "quit|y/n|DONE-3" 10 >/dev/null
keys y

# --- kloop search --gate human on a terminal: "rx" is not a reject
corpus_steering "$T/slowtask"
TUI_W=200 TUI_H=50 tui_start "cd $PWD && $KL search $T/slowtask --gate human --rounds 1 --branches 1 $B --trials 2 --session $T/h.jsonl; echo DONE-\$?; sleep 30"
if wait_for "accept, reject, or quit \(the ideas wait\)\? \[a/r/q\]" 120; then
	keys rx Enter
	check "the gate refuses 'rx', a reply that is not one of its answers" \
		wait_for "'rx' is not an answer: a \(accept\), r \(reject\) or q" 10
	check "... and asks again" sh -c "grep -v '^ *$' '$T/screen' | tail -1 | grep -q 'accept, reject, or quit'"
	keys q Enter
	wait_for "DONE-" 60 >/dev/null
	check "... and rejected nothing" sh -c "! grep -q '\"idea_rejected\"' '$T/h.jsonl'"
else
	fail "search --gate human on a terminal put no idea to the person"
fi

# --- the replay's Activity: the journal's events up to the one shown (it
# showed only that one), as `kloop replay --at K` lists them
$KLOOP replay "$S" --at 4 | sed -n 's/^ *\([0-9]*\)  \(.*\)/\1 \2/p' >"$T/events4"
TUI_W=200 TUI_H=50 tui_start "cd $PWD && $KL replay $S; echo DONE-R"
wait_for "kloop replay" 30 >/dev/null
keys '<' ']' ']' ']'
if wait_for "replay: event 3 of" 10; then
	since=$NFAIL
	for i in 1 2 3; do
		line=$(sed -n "${i}p" "$T/events4")
		d=${line#* }
		check "replay at event 3: Activity lists event $i ($d)" wait_for_text "  $i $d" 10
	done
	d=$(sed -n '4s/^[0-9]* //p' "$T/events4")
	check "... and not event 4, past the one shown ($d)" sh -c "! grep -qF '  4 $d' '$T/screen'"
	diag "$since" "$T/screen"
else
	fail "replay: stepping to event 3"
fi
keys q
wait_for "quit|y/n|DONE-R" 10 >/dev/null
keys y

# --- a replay at 100 columns whose best is unconfirmed (a rival within its
# noise, no A/B: a loaded machine's seeds): the title bar shortens the
# best's caveat, then leaves it out, before it loses the counts (the
# Population's marks and Activity keep the caveat)
U="$T/unconfirmed.jsonl"
python3 - "$S" "$U" <<'PY'
import copy, json, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
ev = [e for e in ev if e.get("type") != "ab_compared"]
fin = [e for e in ev if e.get("type") == "eval_finished" and e.get("candidate") == 1][-1]
add = [e for e in ev if e.get("type") == "candidate_added" and e.get("id") == 1][0]
a = dict(add, id=3, name="rival.c", origin="human", parents=[1],
         source="/* a rival */\n" + add["source"])
r = copy.deepcopy(fin)
r["candidate"] = 3
for k in ("code_hash", "same_code_as", "not_timed"):
    r["result"].pop(k, None)
t = r["result"]["timing"]
m = t["median_ms"] * 0.99
t.update(median_ms=m, p10_ms=m * 0.97, p90_ms=m * 1.03)
r["result"]["time_ms"] = m
out = ev + [a, r]
for i, e in enumerate(out):
    e["seq"] = i + 1
open(sys.argv[2], "w").write("".join(json.dumps(e) + "\n" for e in out))
PY
$KLOOP session "$U" >"$T/unconfirmed.txt" 2>&1
TUI_W=100 TUI_H=30 tui_start "cd $PWD && $KL replay $U; echo DONE-U"
check "a replay at 100 columns whose best is unconfirmed ($(grep -m1 '^best' "$T/unconfirmed.txt")): the title keeps the counts" \
	wait_for "^ kloop replay \| softmax \(host\) \| event [0-9]+ of [0-9]+ \| 3 candidates, 3 correct \| best [0-9.]+x \(#1" 30
keys q
wait_for "quit|y/n|DONE-U" 10 >/dev/null
keys y

# --- the workers' setup as the worker counts it (as `kloop eval` says it),
# not the moment the loop saw: a PyTorch reference's (the TUI said
# "setup 0.0 s" where kloop eval said 3.71 s), else a C reference's
if python3 -c 'import torch' >/dev/null 2>&1; then
	OPEN="tests/fixtures/torch/softmax.py $B --session $T/setup.jsonl"
	what="a PyTorch reference"
else
	OPEN="softmax $B --session $T/setup.jsonl"
	what="a C reference"
fi
TUI_W=200 TUI_H=50 tui_start "cd $PWD && $KL $OPEN; echo DONE-S"
wait_for "kloop" 30 >/dev/null
case $OPEN in *.py*) keys : 'add tasks/softmax/seed.c' Enter ;; esac
if wait_for "^done: 1 candidate" 120; then
	sec=$(python3 -c 'import json,sys
for l in open(sys.argv[1]):
    e = json.loads(l)
    if e.get("type") == "eval_finished":
        print(e["result"]["reference_data"]["setup"]["seconds"])' "$T/setup.jsonl")
	s1=$(printf '%.1f' "$sec")
	s2=$(printf '%.2f' "$sec")
	keys 5 z
	check "$what: Activity's setup is the worker's own, $s1 s (its journal: $sec)" \
		wait_for "setup done in $s1 s: the worker started" 10
	keys z 4 z
	check "... and Results say it as kloop eval does: the worker was ready after $s2 s" \
		wait_for "^│setup +the worker was ready after $s2 s" 10
else
	fail "$what: the candidate's evaluation did not end"
fi
keys : 'quit!' Enter
wait_for "DONE-S" 10 >/dev/null
[ "$NFAIL" -eq 0 ]
