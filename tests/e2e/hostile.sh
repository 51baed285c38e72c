# hostile.sh - bad input as a class, end to end: FIFOs, devices and
# directories where a file is expected are refused (never a hang); the
# worker protocol refuses a line without end on either side; one writer per
# session journal; no success message after a lost event; and no escape
# sequence from a candidate, a compiler, a task, an LLM or a journal reaches
# the terminal raw (asserted on the captured bytes).
. tests/e2e/lib.sh
TASK=tests/fixtures/tui_task
B="--backend host --budget 0.2 --trials 2"
# every command here runs under timeout: a regression hangs no CI
TO="timeout 60"

# expect2 NAME NEEDLE CMD...: exit status 2 and NEEDLE in stderr
expect2() {
	name=$1 needle=$2
	shift 2
	"$@" >"$T/out" 2>"$T/err" </dev/null
	rc=$?
	if [ $rc -eq 2 ] && grep -q -- "$needle" "$T/err"; then
		ok "$name ($(head -c 200 "$T/err" | tr '\n' ' '))"
	else
		fail "$name: rc=$rc, stderr: $(head -c 600 "$T/err")"
	fi
}
# noraw FILE...: no byte a terminal would obey (C0 but newline and tab, DEL,
# C1 as UTF-8 or as a raw byte) in the files
noraw() {
	python3 - "$@" <<'PY'
import re, sys
bad = re.compile(rb'[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]')
for f in sys.argv[1:]:
    b = open(f, 'rb').read()
    m = bad.search(b)
    if m:
        print("# raw control byte %r at %d of %s: %r" % (m.group(), m.start(), f, b[max(0, m.start()-40):m.start()+40]))
        sys.exit(1)
    try:
        b.decode('utf-8')
    except UnicodeDecodeError as e:
        print("# invalid UTF-8 (a raw C1 byte?) in %s: %s" % (f, e))
        sys.exit(1)
PY
}

# ---- files: refused before they are opened ----
mkfifo "$T/fifo.c" "$T/fifo.jsonl"
expect2 "a source that is a FIFO is refused, not read (no hang)" "fifo.c: is a FIFO" \
	$TO $KLOOP eval $TASK "$T/fifo.c" $B
mkdir "$T/dir.c"
ln -s /dev/zero "$T/zero.c"
expect2 "a source that is a directory is refused" "dir.c: is a directory" $TO $KLOOP eval $TASK "$T/dir.c" $B
expect2 "a source that is a device is refused" "zero.c: is a character device" \
	$TO $KLOOP eval $TASK "$T/zero.c" $B
mkdir "$T/ftask"
mkfifo "$T/ftask/task.json"
expect2 "a task.json that is a FIFO is refused" "task.json: is a FIFO" \
	$TO $KLOOP eval "$T/ftask" $TASK/seed.c $B
expect2 "a session journal that is a FIFO is refused by kloop session" "fifo.jsonl: is a FIFO" \
	$TO $KLOOP session "$T/fifo.jsonl"
expect2 "and by kloop eval --session" "fifo.jsonl: is a FIFO" \
	$TO $KLOOP eval $TASK $TASK/seed.c $B --session "$T/fifo.jsonl"
mkdir -p "$T/config/kloop"
mkfifo "$T/config/kloop/config"
expect2 "a config file that is a FIFO is refused" "config: is a FIFO" $TO $KLOOP eval $TASK $TASK/seed.c $B
rm -f "$T/config/kloop/config"
mkdir "$T/esc"
cp $TASK/reference.c $TASK/seed.c "$T/esc/"
python3 - "$T/esc/task.json" <<'PY'
import json, sys
t = json.load(open("tests/fixtures/tui_task/task.json"))
t["seeds"] = {"host": ["../../../etc/passwd"]}
json.dump(t, open(sys.argv[1], "w"))
PY
expect2 "a seed path leaving the task directory is refused" "seeds.host\[0\]: '../../../etc/passwd' steps out" \
	$TO $KLOOP eval "$T/esc" $TASK/seed.c $B

# ---- numbers: the flag table's range checks (NaN, inf, overflow) ----
expect2 "--budget nan is refused" "--budget: expected a number (seconds) from 0.01 to 86400, got 'nan'" $TO $KLOOP eval $TASK $TASK/seed.c --backend host --budget nan
expect2 "--timeout inf is refused" "--timeout: expected a number (seconds) from 0.1 to 604800, got 'inf'" $TO $KLOOP eval $TASK $TASK/seed.c --backend host --timeout inf
expect2 "--trials 3e9 is refused, not cast" "--trials: expected a whole number (trials) from 1 to 1000000, got '3e9'" \
	$TO $KLOOP eval $TASK $TASK/seed.c --backend host --trials 3e9
mkdir "$T/huge"
cp $TASK/*.c "$T/huge/"
python3 - "$T/huge/task.json" <<'PY'
import json, sys
t = json.load(open("tests/fixtures/tui_task/task.json"))
for x in t["inputs"] + t["outputs"]:
    x["shape"] = [4294967296, 4294967296]
t["seeds"] = {}
json.dump(t, open(sys.argv[1], "w"))
PY
expect2 "a [2^32, 2^32] tensor is refused, not wrapped to 0 elements" "the element count overflows 64 bits" \
	$TO $KLOOP eval "$T/huge" $TASK/seed.c $B

# ---- the worker protocol: a line without end ----
cat >"$T/bigline.sh" <<'SH'
#!/bin/sh
# a worker that answers with 1 GiB and no newline
head -c 1073741824 /dev/zero | tr '\0' a
SH
printf 'worker = sh %s/bigline.sh\n' "$T" >"$T/config/kloop/config"
$TO $KLOOP eval $TASK $TASK/seed.c $B >"$T/out" 2>"$T/err"
rc=$?
# the pool retries a lost worker, then the candidate's verdict names why (exit 1)
check "a worker sending a 1 GiB line without newline is a protocol error (rc=$rc: $(head -c 300 "$T/out"))" \
	sh -c "[ $rc -eq 1 ] && grep -q 'protocol error: the worker sent a line of more than 67108864 bytes' '$T/out'"
rm -f "$T/config/kloop/config"
head -c 100000000 /dev/zero | tr '\0' a | $TO "$(dirname "$KLOOP")/kloop-worker" --backend host >"$T/wout" 2>&1
rc=$?
check "the worker refuses a request line over the limit (rc=$rc)" \
	sh -c "[ $rc -eq 2 ] && grep -q 'protocol error: a request line of more than 67108864 bytes' '$T/wout'"

# ---- one writer per session journal ----
D0=$NFAIL
S="$T/s.jsonl"
mkfifo "$T/cmds"
# a REPL holds the journal while its input stays open
$KLOOP shell $TASK $B --session "$S" <"$T/cmds" >"$T/shell.out" 2>"$T/shell.err" &
SHELL_PID=$!
exec 9>"$T/cmds"
i=0
while ! grep -q eval_finished "$S" 2>/dev/null && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
$TO $KLOOP eval $TASK $TASK/seed.c $B --session "$S" >"$T/out" 2>"$T/err"
rc=$?
check "a second kloop on the same session exits 2 ($rc)" test $rc -eq 2
check "and says who holds it: pid and command ($(cat "$T/err"))" \
	sh -c "grep -q 'open for writing in another process (pid $SHELL_PID: .*kloop shell' '$T/err'"
$TO $KLOOP session "$S" >"$T/out" 2>"$T/err"
check "kloop session still reads it while the REPL holds it" sh -c "[ $? -eq 0 ] && grep -q 'candidates' '$T/out'"
$TO $KLOOP replay "$S" >"$T/out" 2>&1 </dev/null
check "and kloop replay lists its events" grep -q "events: " "$T/out"
echo quit >&9
exec 9>&-
wait $SHELL_PID
check "the REPL ends saved" grep -q "^kloop: session saved in $S" "$T/shell.out"
$TO $KLOOP eval $TASK $TASK/seed.c $B --session "$S" >"$T/out" 2>"$T/err"
check "once it has quit, the journal is free again (exit $?)" sh -c "grep -q correct '$T/out'"
diag $D0 "$T/out" "$T/err" "$T/shell.out" "$T/shell.err"

# ---- an event the journal refuses: never "saved" ----
# a file size limit the journal soon hits (SIGXFSZ ignored: the write fails instead)
(
	trap '' XFSZ
	ulimit -f 4 # 512-byte blocks (dash, POSIX): room for the first events only
	echo list | $TO $KLOOP shell $TASK $B --session "$T/full.jsonl" >"$T/full.out" 2>"$T/full.err"
	echo $? >"$T/full.rc"
)
check "a REPL whose journal writes fail exits 2 ($(cat "$T/full.rc"))" test "$(cat "$T/full.rc")" = 2
check "and prints no 'session saved'" sh -c "! grep -q 'session saved' '$T/full.out' '$T/full.err'"
check "but says events were lost and why ($(tail -1 "$T/full.err"))" \
	grep -q "could not be written to the session journal .*full.jsonl (the first: .*File too large" "$T/full.err"
check "the journal still ends on a whole line and opens" sh -c "tail -c 1 '$T/full.jsonl' | od -c | grep -q '\\\\n' && $KLOOP session '$T/full.jsonl' >/dev/null"

# ---- terminal output: shown, never obeyed ----
ESC=$(printf '\033')
BEL=$(printf '\007')
EVIL="${ESC}[2J${ESC}]52;c;ZXZpbA==${BEL}"
cp $TASK/seed.c "$T/${EVIL}evil.c"
# a candidate that prints escape sequences and crashes: its output is in the verdict
cat >"$T/crash.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include "kloop.h"
int kl_run(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *stream)
{
	(void)in, (void)n_in, (void)out, (void)n_out, (void)stream;
	fprintf(stderr, "\033[2J\033]52;c;c2VjcmV0\007\x9b" "31m\302\233" "6n crash\n");
	fflush(stderr);
	abort();
}
C
# a compile error whose log quotes a line holding escape sequences
printf '#include "kloop.h"\nint kl_run(void) { return %s1; }\n' "$EVIL" >"$T/cerr.c"
$TO $KLOOP eval $TASK "$T/${EVIL}evil.c" "$T/crash.c" "$T/cerr.c" $B --session "$T/evil.jsonl" \
	>"$T/eval.out" 2>"$T/eval.err"
check "kloop eval: the candidate's name, its crash output and the compiler log reach the terminal escaped" \
	noraw "$T/eval.out" "$T/eval.err"
check "the name is shown with \\e" grep -q '\\e\[2J\\e\]52;c;ZXZpbA==\\x07evil.c' "$T/eval.out"
check "the crash output is shown (its own words, escaped: c2VjcmV0 ... crash)" \
	grep -q 'c2VjcmV0.* crash' "$T/eval.out"
check "the compile error is shown (the compiler's diagnostic on cerr.c's line 2)" \
	grep -Eq 'cerr\.c:2:[0-9]+: error' "$T/eval.out"
$TO $KLOOP session "$T/evil.jsonl" >"$T/ses.out" 2>&1
check "kloop session: names from the journal escaped" noraw "$T/ses.out"
check "kloop session shows the name (escaped, cut to its column)" \
	grep -q '\\e\[2J\\e\]52;c;ZXZpbA' "$T/ses.out"
$TO $KLOOP replay "$T/evil.jsonl" >"$T/rep.out" 2>&1 </dev/null
check "kloop replay: events described escaped" noraw "$T/rep.out"
# a task whose description holds escape sequences
mkdir -p "$T/tasks/evil"
cp $TASK/*.c "$T/tasks/evil/"
python3 - "$T/tasks/evil/task.json" <<'PY'
import json, sys
t = json.load(open("tests/fixtures/tui_task/task.json"))
t["name"] = "evil"
t["description"] = "\x1b[2J\x1b]52;c;ZXZpbA==\x07 clears the screen"
json.dump(t, open(sys.argv[1], "w"))
PY
KLOOP_TASKS="$T/tasks" $TO $KLOOP tasks >"$T/tasks.out" 2>&1
check "kloop tasks: a task description shown ($(grep evil "$T/tasks.out" | head -c 200))" grep -q "clears the screen" "$T/tasks.out"
check "kloop tasks output is clean" noraw "$T/tasks.out"
printf 'model = %s\n' "$EVIL" >"$T/config/kloop/config"
$TO $KLOOP doctor >"$T/doc.out" 2>&1
check "kloop doctor: a config value escaped" noraw "$T/doc.out"
rm -f "$T/config/kloop/config"
printf 'static float f(float x) { return x; }\n/* %s */\n__global__ void k%s(float *p) {}\n' "$EVIL" "$EVIL" >"$T/o.cu"
$TO $KLOOP outline "$T/o.cu" >"$T/outline.out" 2>&1
check "kloop outline: escaped" noraw "$T/outline.out"
# LLM titles with escape sequences, through kloop ideas (the fake server, real HTTP)
cat >"$T/ideas.txt" <<'TXT'
Ideas:

```json
{"ideas": [
  {"title": "\u001b[2J\u001b]52;c;ZXZpbA==\u0007Clear the screen", "description": "\u009b31m red \u001b[5m blink", "category": "memory access"}
]}
```
TXT
python3 -c "import json,sys; json.dump([{'match': 'Propose', 'replies': [{'text_file': sys.argv[1]}]}], open(sys.argv[2], 'w'))" \
	"$T/ideas.txt" "$T/script.json"
if fake_llm "$T/script.json"; then
	OPENAI_API_KEY=sk-x $TO $KLOOP ideas $TASK --provider openai --model m --base-url "http://127.0.0.1:$PORT/v1" \
		$B --no-eval >"$T/ideas.out" 2>"$T/ideas.err"
	check "kloop ideas: the LLM's title is shown ($(head -c 200 "$T/ideas.err"))" \
		grep -q 'e\]52;c;ZXZpbA==\\x07Clear the screen' "$T/ideas.out"
	check "kloop ideas: titles and descriptions reach the terminal escaped" noraw "$T/ideas.out" "$T/ideas.err"
	mkdir -p "$T/config/kloop/prompts"
	mkfifo "$T/config/kloop/prompts/ideas.md"
	OPENAI_API_KEY=sk-x $TO $KLOOP ideas $TASK --provider openai --model m --base-url "http://127.0.0.1:$PORT/v1" \
		$B --no-eval >"$T/out" 2>&1 </dev/null
	rc=$?
	check "a prompt template that is a FIFO is refused, not read (rc=$rc: $(grep FIFO "$T/out"))" \
		sh -c "[ $rc -eq 1 ] && grep -q 'no ideas: .*prompts/ideas.md: is a FIFO' '$T/out'"
	rm -f "$T/config/kloop/prompts/ideas.md"
else
	fail "the fake LLM server starts"
fi

# ---- the TUI: what it draws is sanitised too (tmux set to accept OSC 52) ----
if command -v tmux >/dev/null 2>&1; then
	trap 'tm kill-server 2>/dev/null; [ -n "$SRV" ] && kill $SRV 2>/dev/null; rm -rf "$T"' EXIT
	printf 'set -g remain-on-exit on\nset -g status off\nset -g set-clipboard on\n' >"$T/tmux.conf"
	KL=$(cd "$(dirname "$KLOOP")" && pwd)/$(basename "$KLOOP")
	tui_start "sleep 0.5; $KL $TASK $B --session $T/evil.jsonl; echo DONE-TUI"
	tm pipe-pane -o -t "$K" "cat >>$T/tui.raw"
	check "the TUI opens the session with the hostile names" wait_for "3 candidates"
	keys j j
	check "the compile log's quoted line is drawn escaped (code and results panes)" \
		wait_for 'return \\e\[2J\\e\]52;c'
	keys k k
	check "the candidate's name is drawn escaped in the pane title" wait_for 'Code #1 \\e\[2J\\e\]52'
	# a second TUI on the same journal is refused with the holder named, exit 2
	K1=$K
	tui_start "$KL $TASK $B --session $T/evil.jsonl; echo DONE-SECOND \$?"
	check "a second TUI on a session in use is refused with exit status 2" wait_for "DONE-SECOND 2" 30
	screen_all | tr -d '\n' >"$T/second"
	check "the refusal names the running kloop: its pid and command" \
		grep -q "open for writing in another process (pid [0-9]*: .*kloop" "$T/second"
	K=$K1
	keys q
	wait_for DONE-TUI >/dev/null
	check "no OSC 52 reached tmux: no paste buffer was made" sh -c "[ -z \"\$(tm list-buffers 2>/dev/null)\" ]"
	check "the raw bytes the TUI wrote hold no OSC 52 and no candidate's ESC[2J" python3 -c "
b = open('$T/tui.raw', 'rb').read()
assert len(b) > 1000, len(b)
assert b'\x1b]52;' not in b, 'a raw OSC 52'
assert b'\x1b[2J\x1b]' not in b, 'the candidate ESC[2J raw'
"
else
	skip "hostile: the TUI part needs tmux"
fi
