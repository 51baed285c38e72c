# shell.sh - the line REPL (`kloop shell`): commands piped in are run one
# after the other, each waiting for the jobs it started, so the output is
# the same every time; errors go to stderr and set the exit status; the
# hand edit through $EDITOR; and the REPL on a terminal (libedit) in tmux.
. tests/e2e/lib.sh
TASK=tests/fixtures/tui_task
B="--backend host --budget 0.2"
S="$T/s.jsonl"
cat >"$T/ed.sh" <<'EOF'
#!/bin/sh
sed -i 's/return 2.0f \* x + 1.0f;/return x + x + 1.0f;/' "$1"
EOF
chmod +x "$T/ed.sh"

cat >"$T/script" <<'EOF'
# a comment, then commands
list
bench 2
sort speedup
filter correct
list
show 1
edit 1
diff 3
diff 1 2
export 3 OUT/cand3.c
filter origin=human
list
filter
jobs
help export
EOF
sed -i "s|OUT|$T|" "$T/script"
D0=$NFAIL
EDITOR="$T/ed.sh" $KLOOP shell $TASK $B --session "$S" <"$T/script" >"$T/out" 2>"$T/err"
rc=$?
check "a piped script runs to its end with exit status 0" test $rc -eq 0
check "nothing on stderr" test ! -s "$T/err"
check "the seeds' verdicts come first (the REPL waits for them)" sh -c "head -2 '$T/out' | grep -q 'candidate 1 (seed.c): correct' && head -2 '$T/out' | grep -q 'candidate 2 (seed_unrolled.c): correct'"
check "list prints the population table" grep -Eq "^[ *?~!] +2 +- seed +correct" "$T/out"
# the best marked as the Population pane marks it, named, with the marks' legend
check "list marks the one best with * and names it" python3 -c '
import re, sys
t = open(sys.argv[1]).read()
best = re.findall(r"^the best: #(\d+) ", t, re.M)
stars = re.findall(r"^\* +(\d+) ", t, re.M)
assert best and stars and set(stars) == set(best), (best, stars)
assert "marks: B banned" in t' "$T/out"
check "bench waits for its job: its verdict comes before the next command's output" \
	sh -c "grep -A1 'candidate 2 (seed_unrolled.c): evaluating' '$T/out' | tail -1 | grep -q 'candidate 2 (seed_unrolled.c): correct'"
check "sort answers with the order" grep -q "^sorted by speedup, descending$" "$T/out"
check "filter answers with the count" grep -q "^filter: correct (2 of 2 candidates shown)$" "$T/out"
# which seed is faster is the machine's business: the check is that the rows
# come in the order of their speedups, whatever they are
check "the sorted list puts the fastest first (rows in descending speedup)" python3 -c '
import re, sys
lines = open(sys.argv[1]).read().split("\n")
i = max(k for k, l in enumerate(lines) if "time ms speedup" in l and k > 0 and "filter: correct" in lines[k - 1])
sp = []
for l in lines[i + 1:]:
    m = re.match(r"^[ *?~!] +\d+ .* ([0-9.]+)x", l)
    if not m:
        break
    sp.append(float(m.group(1)))
sys.exit(0 if len(sp) == 2 and sp == sorted(sp, reverse=True) else 1)' "$T/out"
check "show prints the results and the numbered source" sh -c "grep -q '^verdict   correct' '$T/out' && grep -Eq '^ +4  static float axpb' '$T/out'"
check "edit adds a human candidate from the scripted editor and benchmarks it" sh -c "grep -q 'candidate 3 (human, from #1) added; evaluating' '$T/out' && grep -q 'candidate 3 (cand3.c): correct' '$T/out'"
check "diff 3 compares with the parent by function" grep -Eq "^  changed +axpb" "$T/out"
check "and by line" sh -c "grep -q '^-.*return 2.0f \* x + 1.0f;' '$T/out' && grep -q '^+.*return x + x + 1.0f;' '$T/out'"
check "diff 1 2 compares two candidates" grep -q "^diff #1 (seed.c) -> #2 (seed_unrolled.c)" "$T/out"
check "export writes the source" sh -c "grep -q 'return x + x' '$T/cand3.c' && grep -q 'wrote candidate 3 to' '$T/out'"
check "filter origin=human shows the edited copy only" grep -q "^1 of 3 candidates; sorted by speedup, descending; filter: origin=human" "$T/out"
check "filter alone clears it" grep -q "^no filter (3 candidates shown)" "$T/out"
check "jobs with nothing running says so" grep -q "^no jobs are running" "$T/out"
check "help COMMAND prints its usage" grep -q "^export ID FILE" "$T/out"
check "the journal holds the edit as a human candidate with its parent" python3 -c "
import json
ev=[json.loads(l) for l in open('$S')]
c=[e for e in ev if e['type']=='candidate_added' and e['id']==3][0]
assert c['origin']=='human' and c['parents']==[1] and 'x + x' in c['source']"

# the same script again gives the same output, but for the times.  The
# words that follow from timed numbers are normalised too: whether the
# timing converged within its budget (", not converged"), how two timed
# candidates compare (faster, slower, same within noise), and whether
# kloop's clock could bound a time on a machine this busy (a speedup with a
# "?", the UNVERIFIED line, or a time bounded by the candidate's CPU time
# instead: the "bound" line), and whether the best is confirmed or has
# another candidate within its noise (with or without an A/B) --
# everything else, every line and every other word, must be the same
EDITOR="$T/ed.sh" $KLOOP shell $TASK $B --session "$T/s2.jsonl" <"$T/script" >"$T/out2" 2>&1
norm() {
	sed -E 's/[0-9]+(\.[0-9]+)?(e-?[0-9]+)?/N/g' "$1" | tr -s " " | sed "s/ (cached)//" |
		sed -E 's/, not converged( within the budget)?//; s/ \((faster|slower)(, outside the noise)?\)/ CMP/g; s/, same within noise/ CMP/g' |
		sed -E 's/Nx\?/Nx/' | grep -v "^UNVERIFIED " | grep -v "^bound " |
		sed -E 's/best Nx \(#N(, unconfirmed: #N within noise, no A\/B|, A\/B: #N within noise)?\)/BEST Nx (#N)/g' |
		sed -E 's/^[*?~] N / N /; s/^the best: #N \(.*\)$/the best: #N/' |
		grep -v "session saved"
}
norm "$T/out" >"$T/n1"
norm "$T/out2" >"$T/n2"
nf=$NFAIL
check "a piped script is deterministic (the same lines, numbers aside)" cmp -s "$T/n1" "$T/n2"
diff "$T/n1" "$T/n2" >"$T/ndiff"
diag $nf "$T/ndiff"
diag $D0 "$T/out" "$T/err" "$T/out2"

# errors: named on stderr, the script goes on, the exit status says so
printf 'bench 9\nfrobnicate\nexport 1\nfilter speed>2\nideas 2\naccept 1\nlist\n' |
	$KLOOP shell $TASK $B --session "$T/e.jsonl" >"$T/eout" 2>"$T/eerr"
rc=$?
check "a failed command makes the exit status 1" test $rc -eq 1
check "an unknown candidate is named" grep -q "error: bench: there is no candidate 9" "$T/eerr"
check "an unknown command is named" grep -q "error: unknown command 'frobnicate'" "$T/eerr"
check "a missing argument gives the usage" grep -q "error: export: missing a file name (usage: export ID FILE)" "$T/eerr"
check "a bad filter says what is wrong" grep -q "error: filter: unknown field 'speed'" "$T/eerr"
check "ideas without a provider: no LLM provider is configured" grep -q "error: ideas: no LLM provider is configured" "$T/eerr"
check "so do the other LLM commands" grep -q "error: accept: no LLM provider is configured" "$T/eerr"
check "the script went on after the errors" grep -Eq "^[ *?~!] +2 +- seed +correct" "$T/eout"
check "a missing task is an error with exit status 2" sh -c "echo list | $KLOOP shell no_such_task $B >/dev/null 2>'$T/terr'; test \$? -eq 2 && grep -q 'no_such_task' '$T/terr'"
check "quit ends the script" sh -c "printf 'quit\nlist\n' | $KLOOP shell $TASK $B --session '$T/q.jsonl' | grep -q 'time ms' && exit 1 || exit 0"

# the next batch's ring and the next timing's runs' inputs drawn while a
# candidate compiles (harness_ring_ahead, harness_runs_ahead: the worker's
# pump): the hand edit (a function more: other machine code, timed)
# compiles after the seed's timing and batch (the softmax seed's: a few
# runs, as many as may be drawn ahead), so its compile draws the next
# batch's ring and the next timing's runs, which its timing takes;
# KLOOP_RING_AHEAD=0 KLOOP_RUNS_AHEAD=0 draw none
printf '#!/bin/sh\necho "int kloop_hand_edit(int x) { return x + 1; }" >>"$1"\n' >"$T/ed_fn.sh"
chmod +x "$T/ed_fn.sh"
for ra in 1 0; do
	echo "edit 1" | EDITOR="$T/ed_fn.sh" KLOOP_RING_AHEAD=$ra KLOOP_RUNS_AHEAD=$ra \
		KLOOP_STEP_TRACE="$T/ra$ra.jsonl" \
		$KLOOP shell softmax $B --session "$T/ra_s$ra.jsonl" >"$T/ra$ra.out" 2>&1
done
check "the next batch's ring is drawn while the hand edit compiles, after the seed's batch drew its own (where the machine allowed a batch), and none with KLOOP_RING_AHEAD=0" python3 -c '
import json, sys
def steps(p):
    return [json.loads(l)["what"] for l in open(p)]
on, off = steps(sys.argv[1]), steps(sys.argv[2])
first = on.index("batch: its ring prepared") if "batch: its ring prepared" in on else None
# a batch of more runs than may be drawn ahead (64) is drawn by itself
runs = [((json.loads(l).get("result") or {}).get("timing") or {}).get("batch_runs")
        for l in open(sys.argv[3]) if "\"eval_finished\"" in l]
if runs and (runs[0] or 0) > 64:
    first = None
assert first is None or "batch: its ring drawn ahead" in on[first:], sorted(set(on))
assert first is None or "batch: its ring drawn ahead" not in on[:first], on[:first]
assert "batch: its ring drawn ahead" not in off, sorted(set(off))
' "$T/ra1.jsonl" "$T/ra0.jsonl" "$T/ra_s1.jsonl"
check "the next timing's runs are drawn while the hand edit compiles, after the seed's timing, and the edit's timed runs copy them in; none with KLOOP_RUNS_AHEAD=0" python3 -c '
import json, sys
def steps(p):
    return [json.loads(l)["what"] for l in open(p)]
on, off = steps(sys.argv[1]), steps(sys.argv[2])
copied = "a run\x27s preparation: the draw made ahead copied"
ahead = "a timing\x27s runs drawn ahead"
timed = [i for i, w in enumerate(on) if w.endswith("timing: counted runs")]
assert timed, sorted(set(on))
full = [i for i, w in enumerate(on) if w == "full timing: counted runs"]
# none before a first timing (nothing to size them by); the last drawn
# after the full timing of the seed (the one before the edit), and copied
# in by the timing of the edit after it (a reference timed while the seed
# compiles may have had some drawn for the seed too)
assert ahead not in on[:timed[0]], on[:timed[0]]
assert ahead in on, sorted(set(on))
last = max(i for i, w in enumerate(on) if w == ahead)
assert len(full) >= 2 and last > full[-2], (last, full)
assert copied in on[last:] and copied not in on[:timed[0]], sorted(set(on))
# the edit was timed (other machine code), correct
ev = [json.loads(l) for l in open(sys.argv[3]) if "\"eval_finished\"" in l]
assert len(ev) == 2 and all((e.get("result") or {}).get("status") == "correct" for e in ev), ev
assert ahead not in off and copied not in off, sorted(set(off))
' "$T/ra1.jsonl" "$T/ra0.jsonl" "$T/ra_s1.jsonl"

# a seed that needs CUTLASS (issue 36: hgemm's seed_cutlass.cu) is one of
# the session's seeds where kloop finds CUTLASS, and left out, said so,
# where it does not (CUTLASS_DIR alone is looked in where it is set)
mkdir -p "$T/nt/fake_cutlass/include/cutlass" "$T/nt/fake_cutlass/tools/util/include"
cp $TASK/reference.c $TASK/seed.c $TASK/seed_unrolled.c "$T/nt/"
: >"$T/nt/fake_cutlass/include/cutlass/cutlass.h"
sed 's|"seed_unrolled.c"\]|{"file": "seed_unrolled.c", "needs": "cutlass"}]|' $TASK/task.json >"$T/nt/task.json"
echo list | CUTLASS_DIR="$T/nt/none" $KLOOP shell "$T/nt" $B --session "$T/nc.jsonl" >"$T/nc.out" 2>&1
check "a seed that needs CUTLASS is left out where CUTLASS is not found, said why ($(grep -m1 'left out' "$T/nc.out"))" \
	sh -c "grep -q 'seed seed_unrolled.c left out: it needs CUTLASS, which kloop does not find here' '$T/nc.out' && ! grep -q 'seed_unrolled.c): correct' '$T/nc.out'"
echo list | CUTLASS_DIR="$T/nt/fake_cutlass" $KLOOP shell "$T/nt" $B --session "$T/yc.jsonl" >"$T/yc.out" 2>&1
check "... and is a seed where it is found ($(grep -c 'correct' "$T/yc.out") correct lines)" \
	grep -q 'candidate 2 (seed_unrolled.c): correct' "$T/yc.out"

# the pool's workers (issue 13): jobs lists them; bench --on W pins an
# evaluation to one of them, and a worker that does not exist is named
printf 'bench 1 --on 0\njobs\nbench 1 --on 3\nbench 1 --on x\nbench 1 --of 0\n' |
	$KLOOP shell $TASK $B --session "$T/w.jsonl" >"$T/wout" 2>"$T/werr"
check "bench ID --on 0 evaluates on worker 0" sh -c "grep -q '^candidate 1 (seed.c): evaluating on worker 0$' '$T/wout' && grep -A1 'evaluating on worker 0' '$T/wout' | tail -1 | grep -q 'candidate 1 (seed.c): correct'"
check "jobs lists the worker: label, state, jobs done (the seeds and the bench), host, device" \
	grep -Eq "^w0 local:0: idle, 3 done, [0-9]+% busy, $(uname -n), .+$" "$T/wout"
check "bench --on a worker the pool does not have is named" \
	grep -q "error: bench: there is no worker 3 (the pool has 1: 0 to 0)" "$T/werr"
check "bench --on a word that is not a number says so" \
	grep -q "error: bench: --on wants a worker number (0, 1, ...), got 'x'" "$T/werr"
check "bench ID with another word gives the usage" \
	grep -q "error: bench: expected --on W or --ab OTHER after the id, got '--of' (usage: bench ID \[--on W | --ab OTHER\])" "$T/werr"
check "the pinned evaluation is journaled like any other" python3 -c "
import json
ev=[json.loads(l) for l in open('$T/w.jsonl')]
f=[e for e in ev if e['type']=='eval_finished' and e['candidate']==1]
assert len(f)==2 and f[-1]['result']['status']=='correct', f"

# the LLM commands against the fake LLM server, piped: each waits for its
# requests and the evaluations they start (a row's mark, before its id, is
# any of list's: a loaded machine leaves a time unverified, "?")
check "the fake LLM server starts" fake_llm tests/fixtures/tui_llm.json
printf 'ideas 3\naccept 1\nreject 3\nrevise 2 Reciprocal once per row\nimplement 2\nlist\naccept 9\n' |
	OPENAI_API_KEY=sk-shell-test $KLOOP shell softmax $B --provider openai --model fake-gpt \
		--base-url "http://127.0.0.1:$PORT/v1" --session "$T/llm.jsonl" >"$T/lout" 2>"$T/lerr"
check "ideas prints the LLM's ideas with their ids and categories" sh -c "grep -q '3 ideas from the LLM' '$T/lout' && grep -q '  idea 1 \[algorithm\] One pass for the max and the sum' '$T/lout'"
check "accept, reject and revise answer" sh -c "grep -q '^idea 1 accepted' '$T/lout' && grep -q '^idea 3 rejected' '$T/lout' && grep -q '^idea 2 revised: Reciprocal once per row' '$T/lout'"
check "implement 2 makes two llm candidates from the accepted idea and evaluates them" \
	sh -c "[ \$(grep -Ec '^[ *?~!BP]+[0-9]+ +1 llm +(correct|incorrect)' '$T/lout') -eq 2 ]"
check "the wrong branch is sent back with the fix prompt" grep -q "sending it back (fix 1 of 1)" "$T/lout"
check "and the fix is evaluated too" grep -Eq "^[ *?~!BP]+[0-9]+ +[0-9]+ llm +correct .*One pass" "$T/lout"
check "an unknown idea is an error" grep -q "error: accept: there is no idea 9" "$T/lerr"
check "the journal holds the ideas' decisions" sh -c "grep -q '\"type\":\"idea_accepted\"' '$T/llm.jsonl' && grep -q '\"type\":\"idea_rejected\"' '$T/llm.jsonl' && grep -q '\"type\":\"idea_edited\"' '$T/llm.jsonl'"

# replay without a terminal lists the events
$KLOOP replay "$S" >"$T/rp" 2>&1
check "replay without a terminal lists the events" sh -c "grep -Eq '^ +1  session_started \(axpb on host\)' '$T/rp' && grep -q 'candidate_added #3 (human, parents 1)' '$T/rp'"
$KLOOP replay "$S" --at 3 >"$T/rp3" 2>&1
check "replay --at 3 stops after three events (1 candidate, singular)" grep -q "^after 3 of [0-9]* events: 1 candidate$" "$T/rp3"

# the REPL on a terminal: libedit's prompt, completion, history
if command -v tmux >/dev/null 2>&1; then
	KL=$(cd "$(dirname "$KLOOP")" && pwd)/$(basename "$KLOOP")
	# tall enough for :show (results, tolerance, vectoriser and source lines) on one screen
	TUI_H=50 tui_start "$KL shell $TASK $B --session $T/tty.jsonl; echo DONE-S"
	check "on a terminal the REPL shows its prompt" wait_for "^kloop>"
	check "and prints verdicts as they come" wait_for "candidate 2 \(seed_unrolled.c\): correct"
	keys 'sh' Tab '1' Enter
	check "Tab completes a command name (sh -> show)" wait_for "^candidate #1  seed.c"
	keys 'li' Tab Enter
	check "list after completion" wait_for "^2 of 2 candidates"
	keys Up Up Enter
	check "up walks the history" wait_for "candidate #1  seed.c.*[^$]" 5
	keys 'bench 1' Enter
	check "a job's verdict is printed while the prompt waits" wait_for "candidate 1 \(seed.c\): correct, .*x$"
	keys C-d
	check "Ctrl-D ends the REPL" wait_for "^DONE-S"
	check "the history is saved under \$XDG_STATE_HOME/kloop" grep -Eqx 'bench( |\\040)1' "$T/state/kloop/history"
else
	skip "the REPL on a terminal: tmux is not installed"
fi
