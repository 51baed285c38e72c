# tui_steer.sh - steering a search as a person in the workbench (issue 27),
# in tmux at 80x24 and 200x50: the end of a search said with its reason
# (Activity, the title bar, `:search status`); marks for pinned, banned and
# suspect candidates with their legend; `:compare` with the A/B run; `*`
# selects the best, the follow mode (on while a search runs, off when the
# selection is moved by hand, f cycles it); what comes first at 80x24; the
# words of the idea states; `q` asks while the search waits at the human
# gate.  Assertions read the screen and wait for it; none depends on timing.
. tests/e2e/lib.sh
if ! command -v tmux >/dev/null 2>&1; then
	skip "tui_steer: tmux is not installed"
	exit 0
fi
trap 'tm kill-server 2>/dev/null; rm -rf "$T"' EXIT
F=tests/fixtures/search
KL=$(cd "$(dirname "$KLOOP")" && pwd)/$(basename "$KLOOP")
EVAL="--backend host --budget 0.2 --trials 2"
# pyj JOURNAL EXPR: print EXPR over the journal's events ev
pyj() {
	python3 -c 'import json, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
print(eval(sys.argv[2]))' "$1" "$2"
}

# ---- a search without an LLM (sweeps), 80x24: it ends by itself ----
cp -r tasks/softmax "$T/chunktask"
cp $F/chunked.c "$T/chunktask/seed.c"
S="$T/sweep.jsonl"
TUI_W=80 TUI_H=24 tui_start "$KL $T/chunktask $EVAL --session $S; echo DONE-1"
check "80x24: the TUI opens on the task" wait_for "1 candidate, 1 correct" 30
keys R
check "80x24: the title bar says the search ended (its state never cut first)" \
	wait_for "^ kloop \| (softmax \(host\) \| )?search finished, round [0-9]+" 120
check "... and keeps the best (or the unconfirmed leader) beside it" \
	wait_for "^ kloop .*search finished.*\| (best|leader) [0-9.]+x \(#[0-9]+" 10
check "Activity says why the search ended (the journal's reason)" \
	wait_for "[0-9:]{8} search finished after round"
WHY=$(pyj "$S" '[e["reason"] for e in ev if e["type"] == "search_finished"][-1]')
# Activity zoomed (5 z), so that later lines cannot scroll the reason off:
# the reason as the journal says it, however the pane wraps it
keys 5 z
found=1
end=$(($(date +%s) + 15))
while [ -n "$WHY" ] && [ "$(date +%s)" -lt "$end" ]; do
	screen | tr -d '│\n' | tr -s ' ' | grep -qF "$(echo "$WHY" | tr -s ' ')" && found=0 && break
	sleep 0.1
done
check "the reason is the journal's ($WHY)" test $found -eq 0
keys z 1
keys : 'search status' Enter
check ":search status says why it ended" wait_for "^│finished: $WHY"
keys q
wait_gone "search - lines"

# 8: at 80x24 the Results pane starts with the verdict, its speedup and time
keys 1 g
wait_for "^│verdict   correct, [0-9.]+x \([0-9.]+ ms\)" >/dev/null
check "80x24: Results start with the verdict, the speedup and the time" \
	awk '/┌ Results #1 /{getline; ok = /^│verdict   correct, [0-9.]+x \([0-9.]+ ms\)/} END{exit !ok}' "$T/screen"
check "... the compiler's command is not among the first lines" sh -c "! grep -q 'cc -std' '$T/screen'"

# 6: marks for banned and pinned candidates, in the Population and Results
N=$(pyj "$S" 'max(e["id"] for e in ev if e["type"] == "candidate_added")')
keys : 'ban 1' Enter
check ":ban 1: the seed's row is marked B" wait_for "^│B +1 +- seed"
check "... and Results say it is banned" wait_for "BANNED +never a parent"
keys : "pin $N" Enter
keys G
check ":pin $N: its row is marked P" wait_for "^│P +$N "
check "... and Results say it is pinned" wait_for "PINNED +the next round's parent"

# 7: * selects the best; f follows the newest (on while a search runs)
BEST=$(grep -Eo "(best|leader) [0-9.]+x \(#[0-9]+" "$T/screen" | head -1 | grep -Eo "#[0-9]+" | tr -d '#')
keys 1 g '*'
check "* selects the best (#$BEST): the Code pane shows it" wait_for "^┌ Code #$BEST "
check "... and says so" wait_for "the best: #$BEST"
keys f
check "f follows the newest: the Code pane shows #$N" wait_for "^┌ Code #$N "
check "... the Population says so in its title" wait_for "^┌ Population [0-9]+/[0-9]+ \[follow new\]"
check "... and keeps the selection visible" wait_for "^│P +$N " 10
keys f
check "f again follows the best" wait_for "\[follow best\]"
check "... the Code pane on #$BEST" wait_for "^┌ Code #$BEST "
keys k
check "moving the selection by hand turns the follow mode off" wait_gone "\[follow (new|best)\]"

# :compare A B: the A/B that was run between them, or that none was
AB=$(pyj "$S" '" ".join("%d %d" % (e["incumbent"], e["candidate"]) for e in ev if e["type"] == "ab_compared" and not e.get("error"))')
if [ -n "$AB" ]; then
	set -- $AB
	keys : "compare $1 $2" Enter
	check ":compare shows the A/B run between them" wait_for "^│A/B +#$2 against #$1: [0-9.]+x over [0-9]+ interleaved pairs"
else
	keys : "compare 1 $N" Enter
	check ":compare says no A/B was run between them" wait_for "^│A/B +none run between #1 and #$N"
fi
keys q

# 5 at 200x50: the title bar has room for the reason's short form
tm resize-window -t "$K" -x 200 -y 50
check "200x50: the title bar gives the reason it ended" \
	wait_for "^ kloop \| softmax \(host\) \| search finished, round [0-9]+ \(${WHY##*: }\)"
check "... and the rest of the search's status" wait_for "search finished.*best #[0-9]+" 10
keys '?'
check "the ? help has the marks' legend" wait_for "B banned \(never a parent\), P pinned"
check "... R for the search" wait_for "^│ +R +the search: start it, pause it, resume it" 10
check "... * and f" sh -c "grep -Eq '^│ +\* +select the best' '$T/screen' && grep -Eq '^│ +f +follow the newest' '$T/screen'"
check "... and what a stage's number counts" wait_for "full shapes N +checked at the task's shapes, trial N" 10
keys q
keys q
check "q with nothing running quits at once" wait_for "^DONE-1"

# ---- the human gate with the corpus LLM (the command provider) ----
mkdir -p "$XDG_CONFIG_HOME/kloop"
printf 'provider = command\ncommand = python3 %s/corpus_llm.py\nllm_max_in_flight = 1\n' \
	"$(pwd)/$F" >"$XDG_CONFIG_HOME/kloop/config"
cp -r tasks/softmax "$T/slowtask"
cp $F/slow.c "$T/slowtask/seed.c"
G="$T/gate.jsonl"
TUI_W=200 TUI_H=50 tui_start "$KL $T/slowtask $EVAL --session $G; echo DONE-2"
check "200x50: the TUI opens" wait_for "1 candidate, 1 correct" 30
keys : 'search step' Enter
check "one round under the auto gate" wait_for "search paused, round 1" 120
keys 5 z
wait_for "^┌ Activity" >/dev/null
# the round's later lines may have scrolled the ideas' line up: page back
# (PgUp) until it shows, keeping every page seen
: >"$T/act"
found=1
for _ in $(seq 1 12); do
	screen >>"$T/act"
	grep -q "ideas from the LLM (the search's auto gate decides them)" "$T/act" && found=0 && break
	keys PPage
	sleep 0.3
done
check "Activity: the auto gate decides the LLM's ideas (no 'accept, revise or reject them')" \
	sh -c "test $found -eq 0 && ! grep -q 'accept, revise or reject them' '$T/act'"
keys End z 1
keys : 'gate human' Enter
keys : 'search step' Enter
check "the title bar says the search waits at the gate" \
	wait_for "search running, round 2, waits at the gate \| [0-9]+ candidates.* \| 0 jobs" 120
check "the follow mode is on while the search runs" wait_for "\[follow new\]" 10
check "200x50: the Ideas title has its whole hint" \
	wait_for "Ideas - [1-9][0-9]* pending of [0-9]+ \(a accept, e revise, r reject\)" 10
check "... and says pending, the word of every pane" wait_for "│ +[0-9]+ pending +CORPUS" 10
keys q
check "q while the search waits at the human gate asks first" \
	wait_for "^quit\? the search waits at the human gate: [1-9][0-9]* ideas? pending \(y/n"
keys n
check "n: not quitting" wait_for "^not quitting"
tm resize-window -t "$K" -x 80 -y 24
check "80x24: the search's state first in the title bar, never cut, the best beside it" \
	wait_for "^ kloop \| (softmax \(host\) \| )?search running, round 2, waits at the gate \| (best|leader) [0-9.]+x \(#[0-9]+"
check "80x24: the Ideas pane's title fits" wait_for "Ideas [0-9]+/[0-9]+ pending( \*)? ─*┐$"
check "80x24: the pending ideas are in view (first), with the short word pend" \
	wait_for "│ +[0-9]+ pend +CORPUS" 10
keys q
check "80x24: q asks here too" wait_for "^quit\? the search waits at the human gate"
keys y
check "y quits" wait_for "^DONE-2" 30
