# kill9.sh - kill -9 at random points of sessions that evaluate (host
# backend), stream (the fake LLM server, real HTTP on 127.0.0.1) and write
# their journal, KILL9_N times (200) on one session journal.  After each
# kill, deterministic checks: the journal before the kill is a byte prefix
# of the journal after it (no event that reached the file is ever lost or
# rewritten: every flushed eval_finished is still there), and the journal
# opens (`kloop session`).  Each run resumes the journal the last one was
# killed on; at the end an unkilled REPL resumes it, re-runs the
# evaluations cut short and ends with every candidate judged.
# The kill points are random (KILL9_SEED picks them; it is printed); no
# assertion depends on when a kill lands.
. tests/e2e/lib.sh
N=${KILL9_N:-200}
SEED=${KILL9_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
echo "# kill9: $N kills, KILL9_SEED=$SEED"
cat >"$T/script.json" <<'JSON'
[
 {"match": "Propose", "replies": [{"text_file": "../../tests/fake_llm/replies/ideas.txt", "piece": 24, "delay": 0.01}]},
 {"match": "This is variant 1 of", "replies": [{"text_file": "../../tests/fake_llm/replies/correct.txt", "piece": 48, "delay": 0.01}]},
 {"match": "This is variant 2 of", "replies": [{"text_file": "../../tests/fake_llm/replies/incorrect.txt", "piece": 48, "delay": 0.01}]},
 {"match": "## The attempt that failed", "replies": [{"text_file": "../../tests/fake_llm/replies/fixed.txt", "piece": 48}]}
]
JSON
sed -i "s|\.\./\.\./tests/|$(pwd)/tests/|" "$T/script.json"
if ! fake_llm "$T/script.json"; then
	fail "the fake LLM server starts"
	exit 1
fi
export OPENAI_API_KEY=sk-kill9
LLM="--provider openai --model fake-gpt --base-url http://127.0.0.1:$PORT/v1"
B="--backend host --budget 0.05 --trials 2"
S="$T/s.jsonl"
# the kill points: seconds after the start, from the seed
python3 -c "import random; random.seed($SEED); print('\n'.join('%.3f' % random.uniform(0.02, 1.5) for _ in range($N)))" >"$T/delays"

lost=0 unopened=0 bad_exit=0 i=0 cut_line=0 killed=0
: >"$T/prev"
while read -r delay; do
	i=$((i + 1))
	# three kinds of run, in turn: ideas (a stream), implement (streams and
	# evaluations), the REPL (seeds and the evaluations cut short, resumed)
	case $((i % 3)) in
	0) set -- ideas softmax -n 3 --session "$S" $LLM $B ;;
	1) set -- implement softmax --idea "one reciprocal per row" -b 2 --fix 1 --session "$S" $LLM $B ;;
	2) set -- shell softmax --session "$S" $B ;;
	esac
	printf 'bench 1\nlist\n' | $KLOOP "$@" >"$T/run.out" 2>&1 &
	pid=$!
	sleep "$delay"
	kill -9 $pid 2>/dev/null
	wait $pid 2>/dev/null
	rc=$?
	[ $rc -eq 137 ] && killed=$((killed + 1))
	# a run that ended by itself before the kill must have ended well
	# (0, or 1 = "a candidate is not correct"); 137 is the kill
	if [ $rc -ne 137 ] && [ $rc -ne 0 ] && [ $rc -ne 1 ]; then
		bad_exit=$((bad_exit + 1))
		echo "# run $i ($1) exited $rc: $(tail -3 "$T/run.out" | tr '\n' ' ')"
	fi
	[ -f "$S" ] || continue
	# what was in the file before is still there, byte for byte
	n=$(wc -c <"$T/prev")
	if ! cmp -s -n "$n" "$T/prev" "$S"; then
		lost=$((lost + 1))
		echo "# run $i ($1, killed at $delay s): the journal before it is no longer a prefix"
	fi
	cp "$S" "$T/prev"
	# where the kill landed, for the record: mid-line, mid-evaluation, mid-stream
	[ -s "$S" ] && [ "$(tail -c 1 "$S" | od -An -c | tr -d ' ')" != '\n' ] && cut_line=$((cut_line + 1))
	if ! $KLOOP session "$S" >"$T/ses.out" 2>&1; then
		unopened=$((unopened + 1))
		echo "# after run $i: kloop session fails: $(tail -2 "$T/ses.out")"
	fi
done <"$T/delays"

events() { python3 -c "
import json, sys
n = 0
for l in open(sys.argv[1], 'rb'):
    try:
        e = json.loads(l)
    except ValueError:
        continue
    n += isinstance(e, dict) and e.get('type') == sys.argv[2]
print(n)" "$S" "$1"; }
echo "# $killed of $N runs were killed before they ended; $cut_line kills left a line cut short"
check "$N kills: no event that reached the journal was lost or changed ($lost runs lost some)" test $lost -eq 0
check "$N kills: the journal opens after every one ($unopened did not)" test $unopened -eq 0
check "runs that ended before their kill ended well ($bad_exit did not)" test $bad_exit -eq 0
fin=$(events eval_finished)
check "the killed runs still finished and journaled evaluations ($fin eval_finished, $(events candidate_added) candidates, $(events llm_response) LLM replies)" \
	test "$fin" -gt 0
# resume: an unkilled REPL re-runs the evaluations cut short and ends cleanly
printf 'list\n' | $KLOOP shell softmax --session "$S" $B >"$T/final.out" 2>"$T/final.err"
rc=$?
check "the journal resumes: a REPL on it runs to its end (exit $rc: $(tail -2 "$T/final.err" | tr '\n' ' '))" \
	sh -c "[ $rc -eq 0 ] || [ $rc -eq 1 ]"
check "and the prefix still holds after the resume" cmp -s -n "$(wc -c <"$T/prev")" "$T/prev" "$S"
$KLOOP session "$S" --json >"$T/final.json" 2>/dev/null
check "after the resume no candidate is left evaluating" python3 -c "
import json
s = json.load(open('$T/final.json'))
c = s['candidates']
left = [x['id'] for x in c if x['status'] in ('evaluating', 'new')]
assert c and not left, left
"
check "and no later eval_finished is missing: each candidate's last eval_started has one after it" python3 -c "
import json
started, finished = {}, {}
for k, l in enumerate(open('$S', 'rb')):
    try:
        e = json.loads(l)
    except ValueError:
        continue
    if not isinstance(e, dict):
        continue
    if e.get('type') == 'eval_started':
        started[e['candidate']] = k
    if e.get('type') == 'eval_finished':
        finished[e['candidate']] = k
missing = [c for c, k in started.items() if finished.get(c, -1) < k]
assert not missing, missing
"
