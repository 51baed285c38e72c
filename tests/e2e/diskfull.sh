# diskfull.sh - a session journal that cannot be written any more (a full
# disk; here a file size limit, `ulimit -f`, which kloop takes as the write
# error it is): the work under way ends whole in memory, nothing more is
# appended (the journal stays a whole prefix of the session that resumes),
# a search stops, and kloop says how many events were lost and exits 2,
# never hanging or dying of the signal.  A file that is not a journal is
# never appended to.
. tests/e2e/lib.sh
EVAL="--backend host --budget 0.1 --trials 2"
F=tests/fixtures/search
# LIMIT: 24 blocks of 512 bytes (12 KB): room for the session's start and
# the seed, not for the sweep's round
LIMIT=24
(
	ulimit -S -f $LIMIT
	exec timeout 300 $KLOOP search softmax --from $F/chunked.c --rounds 2 --sweep-only \
		--session "$T/s.jsonl" $EVAL
) >"$T/s.out" 2>"$T/s.err"
rc=$?
check "a search whose journal fills exits 2 (not a hang, not killed by SIGXFSZ: $rc)" test $rc -eq 2
check "it says the journal cannot be written and nothing more is saved" \
	grep -q "cannot append to the session journal: File too large: nothing more of this session is saved" "$T/s.err"
check "it counts the events lost, and never says 'session saved'" sh -c \
	"grep -Eq 'error: [0-9]+ events? could not be written to the session journal .*it holds the session up to there' '$T/s.err' && ! grep -q 'session saved' '$T/s.out' '$T/s.err'"
check "the search stopped for that reason" \
	grep -q "search finished: the session journal cannot be written" "$T/s.out"
check "the journal is a whole prefix: every line an event, none cut" python3 -c "
import json
data = open('$T/s.jsonl', 'rb').read()
assert data.endswith(b'\n'), 'a partial last line'
ev = [json.loads(l) for l in data.decode().splitlines()]
assert [e['seq'] for e in ev] == list(range(1, len(ev) + 1)), 'a hole'
assert any(e['type'] == 'eval_finished' for e in ev) and ev[-1]['type'] != 'search_finished'"
diag 0 "$T/s.err" "$T/s.out"

# resumed with room: what the journal holds finished is not evaluated again
cp "$T/s.jsonl" "$T/r.jsonl"
timeout 300 $KLOOP search softmax --rounds 2 --sweep-only --session "$T/r.jsonl" $EVAL \
	>"$T/r.out" 2>"$T/r.err"
rc=$?
check "the cut journal resumes with room: the search finishes ($rc)" sh -c \
	"{ [ $rc -eq 0 ] || [ $rc -eq 1 ]; } && grep -q 'search finished: 2 rounds done' '$T/r.out'"
check "and evaluates nothing the cut journal held finished" python3 -c "
import json
cut = [json.loads(l) for l in open('$T/s.jsonl')]
done = {e['candidate'] for e in cut if e['type'] == 'eval_finished'}
ev = [json.loads(l) for l in open('$T/r.jsonl')][len(cut):]
again = [e['candidate'] for e in ev if e['type'] == 'eval_started' and e['candidate'] in done]
assert done and not again, (done, again)
assert any(e['type'] == 'candidate_added' for e in ev), 'nothing new'"
diag 0 "$T/r.err" "$T/r.out"

# the shell: the command that filled it ends, the next one runs, exit 2
(
	ulimit -S -f $LIMIT
	printf '%s\n' "add $F/chunked.c" "search step" "list" |
		exec timeout 300 $KLOOP shell softmax --session "$T/sh.jsonl" $EVAL
) >"$T/sh.out" 2>"$T/sh.err"
rc=$?
check "the shell goes on to the next command and exits 2 ($rc)" sh -c \
	"[ $rc -eq 2 ] && grep -q 'of [0-9]* candidates' '$T/sh.out' && grep -q 'could not be written' '$T/sh.err'"
diag 0 "$T/sh.err" "$T/sh.out"

# --- a file that is not a journal is refused, and left as it was
cp tasks/softmax/seed.c "$T/mine.c"
run notj search softmax --sweep-only --rounds 1 --session "$T/mine.c" $EVAL
check "a C source as --session is refused with exit 2 ($rc)" test $rc -eq 2
check "the error names it and its first line" \
	grep -q "mine.c is not a kloop session journal (it does not start with '{'; first: .*mine.c:1: not valid JSON" "$T/notj.err"
check "and the file is unchanged" cmp -s tasks/softmax/seed.c "$T/mine.c"
printf 'my notes\n' >"$T/notes.txt"
printf 'list\n' | $KLOOP shell softmax --session "$T/notes.txt" $EVAL >"$T/n.out" 2>"$T/n.err"
rc=$?
check "the shell refuses it too ($rc), the notes unchanged" sh -c \
	"[ $rc -eq 2 ] && [ \"\$(cat '$T/notes.txt')\" = 'my notes' ] && grep -q 'is not a kloop session journal' '$T/n.err'"
# another tool's JSON lines whose "type" is one of kloop's events (message)
printf '{"type":"message","text":"hi"}\n' >"$T/other.jsonl"
run other search softmax --sweep-only --rounds 1 --session "$T/other.jsonl" $EVAL
check "JSON lines without a session_started are refused too ($rc), the file unchanged" sh -c \
	"[ $rc -eq 2 ] && [ \"\$(wc -l <'$T/other.jsonl')\" -eq 1 ] && grep -q 'other.jsonl is not a kloop session journal (it has no session_started event' '$T/other.err'"
exit $((NFAIL > 0))
