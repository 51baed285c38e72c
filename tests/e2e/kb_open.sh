# kb_open.sh - a KernelBench problem file opened as a user would: the TUI
# warns at once when PyTorch is missing, naming the --python fix; `:add FILE`
# adds any source as a candidate (TUI and shell); without a terminal and
# with no candidates kloop says what to do and exits non-zero; `kloop ideas`
# on a parent whose evaluation failed says so.
. tests/e2e/lib.sh
FX=tests/fixtures/torch
B="--backend host --budget 0.2 --trials 2"
KL=$(cd "$(dirname "$KLOOP")" && pwd)/$(basename "$KLOOP")
# an interpreter without site-packages: PyTorch is missing for it wherever it is installed
printf '#!/bin/sh\nexec python3 -S "$@"\n' >"$T/py-nosite"
chmod +x "$T/py-nosite"
# the fix named: Debian's python3 when it has PyTorch (make deps installs
# python3-torch), else any Python with torch
DEBTORCH=0
/usr/bin/python3 -c 'import torch' >/dev/null 2>&1 && DEBTORCH=1
if [ $DEBTORCH = 1 ]; then
	FIX=", /usr/bin/python3 has it: start kloop with --python /usr/bin/python3"
else
	FIX=": start kloop with --python PATH"
fi

$KLOOP $FX/softmax.py $B --python "$T/py-nosite" --session "$T/a.jsonl" </dev/null >"$T/out" 2>"$T/err"
rc=$?
check "without a terminal and with no candidates kloop exits non-zero" test $rc -ne 0
check "... saying what to do (kloop eval PROBLEM FILE, or :add FILE)" \
	grep -q "softmax has no candidates to evaluate.*kloop eval .*softmax.py FILE.*:add FILE" "$T/err"
check "... and warns that PyTorch is missing, naming the --python fix ($FIX)" \
	grep -qF "PyTorch is not installed for $T/py-nosite$FIX" "$T/err"
mkdir -p "$T/cfg/kloop"
printf 'python = %s\n' "$T/py-nosite" >"$T/cfg/kloop/config"
XDG_CONFIG_HOME="$T/cfg" $KLOOP doctor >"$T/doc" 2>&1
if [ $DEBTORCH = 1 ]; then
	check "doctor names the Python that has PyTorch" \
		grep -qF "PyTorch is not installed for $T/py-nosite; /usr/bin/python3 has it: give --python /usr/bin/python3" "$T/doc"
	XDG_CONFIG_HOME="$T/cfg" $KLOOP doctor --python /usr/bin/python3 >"$T/doc2" 2>&1
	check "doctor takes the --python it advises, and checks that one" sh -c \
		"grep -q '^python  *ok  */usr/bin/python3: Python' '$T/doc2' && grep -q '^pytorch  *ok  *torch' '$T/doc2'"
	$KLOOP eval $FX/softmax.py tasks/softmax/seed.c $B --python "$T/py-nosite" >/dev/null 2>"$T/ev.err"
	check "eval of a problem file names it too" \
		grep -qF "/usr/bin/python3 has it: give --python /usr/bin/python3" "$T/ev.err"
else
	check "doctor says PyTorch is missing" grep -qF "PyTorch is not installed for $T/py-nosite (PyTorch references need it)" "$T/doc"
fi

printf 'add tasks/softmax/seed.c\nadd %s/nope.cu\nadd README.md\nlist\n' "$T" |
	$KLOOP shell softmax $B --session "$T/b.jsonl" >"$T/sh.out" 2>"$T/sh.err"
check ":add FILE adds the source as a human candidate and evaluates it" \
	sh -c "grep -q 'candidate 2 (seed.c, human) added from tasks/softmax/seed.c; evaluating' '$T/sh.out' && grep -Eq '^[ *?~!] +2 +- human +correct' '$T/sh.out'"
check ":add of a missing file says so" grep -q "add: .*nope.cu" "$T/sh.err"
check ":add of a file that is not a source says so" grep -q "add: README.md: not a .c, .cpp, .cu or ModelNew .py source" "$T/sh.err"

if command -v tmux >/dev/null 2>&1; then
	trap 'tm kill-server 2>/dev/null; rm -rf "$T"' EXIT
	TUI_W=140 tui_start "$KL $FX/softmax.py $B --python $T/py-nosite --session $T/c.jsonl"
	check "the TUI opens on a problem file with a warning that PyTorch is missing, naming --python" \
		wait_for "PyTorch is not installed for .*py-nosite(: start kloop with --python PATH|, /usr/bin/python3 has it)"
	keys q
	tui_start "$KL softmax $B --session $T/d.jsonl"
	wait_for "1 candidates?, 1 correct" 20 >/dev/null
	keys ":add tasks/softmax/seed.c" Enter
	check "the TUI's :add adds and evaluates the file" wait_for "2 candidates, 2 correct" 20
	keys q
else
	skip "kb_open: tmux is not installed, the TUI part did not run"
fi

if fake_llm tests/fake_llm/softmax.json; then
	$KLOOP ideas $FX/softmax.py --from tasks/softmax/seed.c --python "$T/py-nosite" --provider openai \
		--model fake-gpt --base-url "http://127.0.0.1:$PORT/v1" $B >"$T/ideas.out" 2>"$T/ideas.err"
	check "kloop ideas on a parent whose evaluation failed says so, with the reason" \
		grep -q "the parent seed.c was not evaluated successfully (its evaluation failed: PyTorch is not installed" "$T/ideas.out"
	check "... and does not label it a bare 'error'" sh -c "! grep -q '; error' '$T/ideas.out'"
else
	fail "the fake LLM server starts"
fi
