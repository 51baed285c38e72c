# tui_ux.sh - the TUI as a kernel engineer feels it (issue 12), in tmux at
# 80x24 and 140x40: the layout, text that is never cut without a way to
# read it, pop-ups drawn like the code pane, the filter prompt, status lines
# that say when work is done, honest comparisons, the chart, LLM requests as
# jobs (counted, listed, cancelled, confirmed on quit), the ideas' cursor,
# and what the LLM was asked and answered.  Assertions read the screen.
. tests/e2e/lib.sh
if ! command -v tmux >/dev/null 2>&1; then
	skip "tui_ux: tmux is not installed"
	exit 0
fi
trap 'tm kill-server 2>/dev/null; [ -n "$SRV" ] && kill $SRV 2>/dev/null; rm -rf "$T"' EXIT
TASK=tests/fixtures/tui_task
B="--backend host --budget 0.2"
KL=$(cd "$(dirname "$KLOOP")" && pwd)/$(basename "$KLOOP")
# a long directory: the title bar shows …/ux.jsonl instead of a cut path
D="$T/a-session-directory-with-a-long-name-that-does-not-fit-in-the-title-bar"
mkdir -p "$D"
S="$D/ux.jsonl"

# one scripted editor, told what to do by $T/mode
cat >"$T/ed.sh" <<EOF
#!/bin/sh
case \$(cat $T/mode) in
cerr) sed -i 's/return 2.0f \* x + 1.0f;/return 2.0f * x + 1.0f/' "\$1" ;;
wrong) sed -i 's/return 2.0f \* x + 1.0f;/return 2.0f * x + 2.0f;/' "\$1" ;;
good) sed -i 's/return 2.0f \* x + 1.0f;/return x + x + 1.0f;/' "\$1" ;;
slow) sed -i 's/(void)stream;/(void)stream; for (volatile long k = 0; k < 4000000000L; k++) {}/' "\$1" ;;
esac
EOF
chmod +x "$T/ed.sh"

TUI_W=80 TUI_H=24 tui_start "EDITOR=$T/ed.sh $KL $TASK $B --session $S; echo DONE-1"
check "80x24: the TUI opens" wait_for "2 candidates, 2 correct"
screen >"$T/s80"
check "80x24: the panes stack, Code across all 80 columns" grep -Eq "^┌ Code #1 seed.c.{60,}┐$" "$T/s80"
check "80x24: Population and Ideas share the top" grep -q "^┌ Population.*┐┌ Ideas" "$T/s80"
check "80x24: a column cut short ends in an ellipsis (the header, after speedup)" \
	grep -Eq "speedup +[a-z]*…│" "$T/s80"
check "80x24: every line fits in 80 columns" python3 -c "
import sys; sys.exit(any(len(l.rstrip('\\n')) > 80 for l in open(sys.argv[1], encoding='utf-8')))" "$T/s80"
check "the table shows the spread next to each time" wait_for "^│[ *?~!BP] +1 +- seed +correct +[0-9.]+±[0-9]+%"
check "done: the seeds' evaluation is summed up on the message line" \
	wait_for "^done: 2 candidates, 2 correct, fastest [0-9.]+x \(#[12]\)"
check "the Activity pane lists the worker: label, state, jobs done, utilisation (issue 13)" \
	wait_for "│w0 local:0: idle, 2 done, [0-9]+% busy"

keys 1
check "80x24: the footer keeps ? help (first, so that it is never cut)" wait_for "^\? help  q quit"
keys Enter
check "Enter zooms the code: it takes the whole screen" wait_for "^┌ Code #1 seed.c - [0-9]+ lines.* \*.*┐$"
check "zoomed, the code has the rows of all the panes" sh -c "[ \$(grep -c '^│ *[0-9]' '$T/screen') -ge 19 ]"
keys Enter
check "Enter again gives the panes back" wait_for "^┌ Population"

# :show draws tabs as four columns and keeps the highlighting
keys : 'show 1' Enter
check ":show opens the pop-up" wait_for "show #1 - lines"
# the verdict's lines (compile command, tolerance; how many depends on the
# verdict: a busy machine adds the "bound" line) come first: scroll down
# until the source's line 6 shows, which stays in view for many lines more
tab=1
for _ in $(seq 1 30); do
	screen | grep -Eq "^│ +6      return 2\.0f \* x \+ 1\.0f;" && tab=0 && break
	keys Down
	sleep 0.2
done
check ":show draws a tab as four columns (as the code pane does)" test $tab -eq 0
tm capture-pane -e -p -t "$K" | sed 's/\x1b\[49m//g' >"$T/showe"
check ":show keeps the highlighting (the keyword and the number in colour)" \
	sh -c "grep -q '33mreturn' '$T/showe' && grep -q '35m2.0f' '$T/showe'"
keys q
wait_gone "show #1 - lines"
keys : 'diff 1 2' Enter
check ":diff opens the pop-up" wait_for "diff - lines"
# the colours, read again until the lines are there (a busy machine draws
# the pop-up's title first)
for _ in $(seq 1 100); do
	tm capture-pane -e -p -t "$K" | sed 's/\x1b\[49m//g' >"$T/diffe"
	grep -q '32m+' "$T/diffe" && grep -q '31m-' "$T/diffe" && break
	sleep 0.1
done
check ":diff keeps the code pane's diff colours (added green, removed red)" \
	sh -c "grep -q '32m+' '$T/diffe' && grep -q '31m-' '$T/diffe'"
# (waited for: the pop-up's title can be drawn before its lines on a busy machine)
check ":diff draws tabs as four columns (after the - column)" \
	wait_for "^│-    return 2\.0f \* x \+ 1\.0f;"
keys q
wait_gone "diff - lines"

# the / prompt of the Population (the Code pane, which Enter focused,
# searches its text): the filter so far and a space; its own history
keys 1 / 'correct' Enter
check "/ correct filters" wait_for "filter: correct \(2 of 2 candidates shown\)"
keys / 'origin=seed' Enter
check "/ is pre-filled with the filter and a space: what is typed is one more term" \
	wait_for "filter: correct origin=seed \(2 of 2 candidates shown\)"
keys : 'sort id' Enter
wait_for "sorted by id"
keys / C-u Up
check "/ walks the filters' history (not the commands')" wait_for "^/correct origin=seed"
keys Escape
keys : Up
check ": walks the commands' history (not the filters')" wait_for "^:sort id"
keys Escape
keys / C-u Enter
wait_for "no filter"

# a status line that does not go stale: bench says when it is done
keys : 'bench 1' Enter
check "bench: the message says the evaluation is running" wait_for "candidate 1 \(seed.c\): evaluating"
check "and, when it is done, what it came to" wait_for "^done: evaluated 1 candidate"

# a compile error, in words; the error line in Activity wraps
echo cerr >"$T/mode"
keys 1 g e
check "a candidate that does not compile says compile error (not compile_err)" \
	wait_for "^│[ *?~!BP] +3 +1 human +compile error"
check "Results: verdict compile error" wait_for "verdict   compile error"
# (read zoomed, the whole log in view: at 80x24 the pane's six lines
# scroll the error out under a longer line after it, such as a loaded
# machine's "unconfirmed: #2 within noise" best)
keys 5 z
check "Activity wraps the error line: the compiler's message goes on, indented, on the next lines" \
	screen_until "python3 -c '
import re, sys
s = open(sys.argv[1]).read().splitlines()
sys.exit(not any(\"candidate 3 (cand3.c): compile error\" in a and re.match(\"│  [^ ]\", b)
                 and \"expected\" in a + b for a, b in zip(s, s[1:])))' '$T/screen'"
keys z 1
check "and the Results title says compile error" wait_for "Results #3 compile error" 10
keys d
check "d on a candidate with a parent: its diff" wait_for "diff against #1"
keys 1 g
check "a seed in diff mode: no 'diff against 0'" wait_for "Code #1 seed.c - a seed has no parent to diff against"
check "and never 'diff against 0'" sh -c "! grep -q 'diff against 0' '$T/screen'"
keys 3 d 1

# an incorrect candidate: its mismatch message is read whole in Results
echo wrong >"$T/mode"
keys g e
check "an incorrect candidate" wait_for "^│ +4 +1 human +incorrect" 30
keys 4 z
check "zoomed Results show the verdict" wait_for "verdict   incorrect"
screen >"$T/res"
check "zoomed Results wrap the mismatch message: no line in the pane is cut (no ellipsis)" sh -c "! grep -q '^│.*…' '$T/res'"
keys z 1

# a correct edit: Results compare it with its parent and its seed
echo good >"$T/mode"
keys g e
check "a correct edit" wait_for "^│[ *!?~] +5 +1 human +correct" 30
tm resize-window -t "$K" -x 140 -y 40
check "140x40: Population beside Code again" wait_for "^┌ Population.*┐┌ Code #5"
# Results holds more lines than its pane (compile, vectoriser, tolerance): zoomed, all show
keys 4 z
check "Results compare with the parent (honest: with the noise)" \
	wait_for "versus +parent #1: [0-9.]+x(, same within noise| \((faster|slower), outside the noise\))"
keys z 1
wait_for "#1\.\.#5  bold: the best" >/dev/null
check "the title bar shows the session as …/ux.jsonl" wait_for "\| …/ux\.jsonl"
check "the chart has its axes labelled: the speedups and the candidates" \
	sh -c "grep -q 'Best speedup .* by candidate' '$T/screen' && grep -q '#1..#5  bold: the best' '$T/screen' && grep -Eq '[0-9.]+x +[▁▂▃▄▅▆▇█]' '$T/screen'"
keys : 'compare 1 5' Enter
check ":compare A B: the metrics side by side" wait_for "compare #1 #5 - lines"
# (cand5's x + x is 2.0f * x compiled: the same machine code, which the
# verdict says rather than a ratio of one timing to itself)
check "with the spread of each time and a verdict: on the noise, or the same machine code" \
	sh -c "grep -Eq '^│time +[0-9.]+ ms \(p10-p90 [0-9.]+-[0-9.]+\) +[0-9.]+ ms \(p10-p90' '$T/screen' && grep -Eq '#5 against #1: [0-9.]+x|verdict +same machine code: #1 and #5' '$T/screen'"
check "then the code diff from A to B" wait_for "diff #1 \(seed\.c\) -> #5 \(cand5\.c\)"
keys q

# cancel: an evaluation is killed and recorded
echo slow >"$T/mode"
keys 1 g e
check "a slow candidate is being evaluated: 1 job" wait_for "\| 1 job( \||$)"
keys : 'cancel 6' Enter
check ":cancel ID stops an evaluation: the activity log says so" wait_for "candidate 6 \(cand6.c\): cancelled"
check "the row says cancelled" wait_for "^│ +6 +1 human +cancelled"
check "no job is left" wait_for "\| 0 jobs( \||$)"
check "the journal records it" python3 -c "
import json
ev=[json.loads(l) for l in open('$S')]
assert [e for e in ev if e['type']=='eval_finished' and e['candidate']==6 and e['result']['status']=='cancelled']"
keys : 'cancel 6' Enter
check ":cancel on nothing running says so" wait_for "cancel: candidate 6 is not being evaluated"
keys q
wait_for "^DONE-1"

# replay at event 0: the journal's name, not '? (?)'
tui_start "$KL replay $S $B; echo DONE-2"
wait_for "kloop replay"
keys '<'
check "replay at event 0 names the journal, not '? (?)'" wait_for "kloop replay \| ux.jsonl \| event 0 of [0-9]+ \| 0 candidates"
check "no '? (?)'" sh -c "! grep -qF '? (?)' '$T/screen'"
keys q
wait_for "Pane is dead"

# ---- the LLM: requests are jobs; the ideas' cursor; the LLM's words ----
check "the fake LLM server starts" fake_llm tests/fixtures/ux_llm.json
LLM="--provider openai --model fake-gpt --base-url http://127.0.0.1:$PORT/v1"
L="$T/llm.jsonl"
echo slow >"$T/mode"
TUI_W=80 TUI_H=24 tui_start "EDITOR=$T/ed.sh OPENAI_API_KEY=sk-ux-test $KL softmax $B $LLM --session $L; echo DONE-3"
wait_for "1 candidate, 1 correct"
# ideas about a candidate still being evaluated wait for it; cancel all
# stops both, and no request goes out
keys e
wait_for "^│ +2 +1 human"
keys : 'ideas 2' Enter
check "an ideas request waiting for its parent's evaluation is a job too" \
	wait_for "LLM ideas #2: waits for #2's result"
keys : 'cancel all' Enter
check "cancel all stops the evaluation and the work waiting for it" wait_for "\| 0 jobs( \||$)" 30
check "no request went out for it" python3 -c "
import json
ev=[json.loads(l) for l in open('$L')]
assert not [e for e in ev if e['type']=='llm_request'], 'a request was sent'
assert [e for e in ev if e['type']=='eval_finished' and e['candidate']==2 and e['result']['status']=='cancelled']"
keys 1 g
keys : 'ideas 3' Enter
check "an LLM request is a job: counted in the title bar" wait_for "\| 1 job( \||$)"
check "and listed in Activity with its id" wait_for "r1 LLM ideas #1: (~[0-9]+ tokens|waiting)"
keys : 'cancel r1' Enter
check ":cancel rN stops an LLM request" wait_for "(LLM request 1|from request 1: )cancelled"
check "no job is left" wait_for "\| 0 jobs( \||$)"
check "the journal has its response, cancelled" python3 -c "
import json
ev=[json.loads(l) for l in open('$L')]
assert [e for e in ev if e['type']=='llm_response' and e['request']==1 and e['status']=='cancelled']"

keys : 'ideas 3' Enter
check "the ideas arrive (a narrow Ideas pane: a short title)" wait_for "Ideas 3/3 pending"
keys 2 a
check "a accepts idea 1 (short statuses in a narrow pane)" wait_for "1 acc +One pass"
keys Enter
check "the cursor went to the next pending idea (2), not with idea 1 down the list" wait_for "idea 2: Multiply by the reciprocal"
keys q
keys j j
keys r
check "r on an accepted idea asks first: one stray key does not flip it" wait_for "idea 1 is accepted; reject it\? \(y/n\)"
keys n
check "n keeps it" wait_for "nothing changed"
check "idea 1 is still accepted" wait_for "1 acc +One" 10
keys G Enter
check "an idea's description wraps: read whole at 80 columns" wait_for "^│ +times\. +│"
check "at a space, not mid-word" wait_for "instead of three *│$"
keys q

keys : 'implement 1' Enter
check "implement: the message line follows the work" wait_for "implementing 1 idea, 1 branch each - [0-9]+ jobs? running"
# (its evaluation may wait long on a loaded machine: a fresh clone's make
# test saw it queued 40 s, and the :cancel all below then cancelled it too)
check "and sums it up when it is done" wait_for "^done: implemented 1 idea: 1 candidate, 1 correct, fastest [0-9.]+x \(#3\)" 240
check "the implemented idea says so (impl, short for implemented, in a narrow pane)" wait_for "1 impl +One pass"
keys 2 G Enter
check "and implemented on its page" wait_for "status    implemented"
keys q
keys : 'prompt 3' Enter
check ":prompt ID shows what the LLM was asked for the candidate" wait_for "prompt #3 - lines"
check "the request with its purpose and model" wait_for "candidate #3 idea1-b1.c: LLM request [0-9]+ \(implement, openai fake-gpt\)" 10
keys q
keys : 'reply 3' Enter
check ":reply ID shows what it answered, with its explanation" wait_for "reply #3 - lines"
check "the reply's text" wait_for "This version computes the reciprocal of the sum once per row"
keys q
keys : 'prompt 1' Enter
check ":prompt on a seed says no request made it" wait_for "prompt: candidate 1 .* was not made by the LLM"

# a mistaken implement 8 is stopped
keys 2 g a
wait_for "2 acc +Multiply"
keys : 'implement 8' Enter
check "implement 8: its requests are jobs" wait_for "\| [5-9] jobs( \||$)"
keys : 'cancel all' Enter
check ":cancel all stops them" wait_for "\| 0 jobs( \||$)" 30
check "every request of it is journaled as cancelled" python3 -c "
import json
ev=[json.loads(l) for l in open('$L')]
c=[e for e in ev if e['type']=='llm_response' and e['status']=='cancelled']
assert len(c) >= 8, len(c)"

# quit while a request streams: asked, and the journal closes the request
keys : 'ideas 2' Enter
wait_for "\| 1 job( \||$)"
keys q
check "q while an LLM request runs asks first" wait_for "1 job is running \(LLM requests are cancelled\); quit anyway\? \(y/n\)"
keys y
check "y quits" wait_for "^DONE-3"
check "every llm_request in the journal has its llm_response" python3 -c "
import json
ev=[json.loads(l) for l in open('$L')]
req={e['request'] for e in ev if e['type']=='llm_request'}
resp={e['request'] for e in ev if e['type']=='llm_response'}
assert req and req == resp, (req, resp)"

# the LLM's words in a replay
tui_start "$KL replay $L $B; echo DONE-4"
wait_for "kloop replay"
keys : 'reply 3' Enter
check ":reply works in a replay" wait_for "This version computes the reciprocal"
keys q : 'prompt 3' Enter
check ":prompt works in a replay" wait_for "prompt #3 - lines"
keys q q
# the replay ended: the shell's echo comes after it, then tmux's "Pane is
# dead" (either may be what the capture holds)
check "q q ends the replay" wait_for "^DONE-4|Pane is dead" 30
