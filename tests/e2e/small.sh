# small.sh - the small ones of issue 40 from the command line: "did you
# mean" in kloop shell, `kloop open --command`, `kloop tasks PROBLEM.py`
# saying what it does and which python3 has PyTorch, `export ... best`
# naming the missing flag, `archive show`'s model of the command provider,
# and "tokens not counted" where the provider counts none.
. tests/e2e/lib.sh
B="--backend host --budget 0.2"
REPLY_IDEAS='cat >/dev/null; cat tests/fake_llm/replies/ideas.txt'
REPLY_CODE='cat >/dev/null; cat tests/fake_llm/replies/correct.txt'

# --- kloop shell: a typo of a command or of an idea category
printf '%s\n' "compar 1 2" "ban memry" "prefer fuson" |
	$KLOOP shell softmax $B --session "$T/sh.jsonl" >"$T/sh.out" 2>"$T/sh.err"
since=$NFAIL
check "shell: a typo of a command: did you mean" \
	grep -q "unknown command 'compar': did you mean 'compare'?" "$T/sh.err"
check "shell: a typo of an idea category (ban): did you mean" \
	grep -q "ban: 'memry': did you mean 'memory access'? (it is neither a candidate id nor an idea category" "$T/sh.err"
check "shell: a typo of an idea category (prefer): did you mean" \
	grep -q "prefer: 'fuson': did you mean 'fusion'? (it is neither" "$T/sh.err"
diag "$since" "$T/sh.err"

# --- kloop open --command (and kloop shell, which takes open's flags)
$KLOOP open softmax $B --session "$T/open.jsonl" --command "$REPLY_IDEAS" </dev/null \
	>"$T/open.out" 2>"$T/open.err"
rc=$?
check "open --command is taken (rc $rc: $(head -c 200 "$T/open.err"))" \
	sh -c "test $rc -eq 0 && ! grep -q 'unknown option' '$T/open.err'"
printf 'ideas 3\n' | $KLOOP shell softmax $B --session "$T/cmd.jsonl" --command "$REPLY_IDEAS" \
	>"$T/cmd.out" 2>"$T/cmd.err"
check "shell --command: its program answers the ideas ($(grep -c '^  idea' "$T/cmd.out") ideas)" \
	grep -q "^  idea 3 \[memory access\] Vectorize the row loops" "$T/cmd.out"

# --- kloop tasks PROBLEM.py: says what it does while PyTorch runs the problem
P=tests/fixtures/torch/kb/23_Softmax.py
$KLOOP tasks "$P" --shapes batch_size=4,dim=64 >"$T/tk.out" 2>"$T/tk.err"
check "tasks PROBLEM.py says on stderr what runs before it runs ($(head -c 160 "$T/tk.err"))" \
	grep -q "^kloop: tasks: describing $P with .*: importing PyTorch, then the problem's get_init_inputs(), get_inputs() and forward()" "$T/tk.err"
if python3 -c 'import torch' >/dev/null 2>&1; then
	check "... and how long it took" grep -Eq "^kloop: tasks: described in [0-9.]+ s" "$T/tk.err"
fi
# a python3 without PyTorch first on PATH, while this machine has one with it
# (a venv of copies: a venv of links is the python3 it links to)
for py in /usr/bin/python3 /usr/local/bin/python3; do
	if [ -x "$py" ] && "$py" -c 'import torch' >/dev/null 2>&1 &&
		"$py" -m venv --without-pip --copies "$T/venv" >/dev/null 2>&1; then
		WITH=$py
		break
	fi
done
if [ -n "${WITH:-}" ]; then
	PATH="$T/venv/bin:$PATH" $KLOOP tasks "$P" >"$T/np.out" 2>"$T/np.err"
	rc=$?
	check "tasks PROBLEM.py with a python3 without PyTorch: names the one that has it (rc $rc)" \
		sh -c "test $rc -eq 2 && grep -q 'kloop: $WITH has PyTorch: give --python $WITH' '$T/np.err'"
	diag "$since" "$T/np.err"
else
	skip "tasks: no python3 with PyTorch beside one without (venv) on this machine"
fi

# --- a session by the command provider: export, archive show, tokens
# (the provider from the configuration, as a person has it)
mkdir -p "$XDG_CONFIG_HOME/kloop"
printf 'provider = command\ncommand = %s\n' "$REPLY_CODE" >"$XDG_CONFIG_HOME/kloop/config"
$KLOOP implement softmax --from tests/fixtures/archive/slow_softmax.c --idea "one pass" \
	--session "$T/a.jsonl" $B --trials 3 --fix 0 -b 1 >"$T/impl.out" 2>&1
rm "$XDG_CONFIG_HOME/kloop/config"
check "implement by the command provider: its usage says tokens not counted ($(tail -1 "$T/impl.out"))" \
	grep -q "^command: 1 requests, tokens not counted" "$T/impl.out"
$KLOOP export "$T/a.jsonl" best >"$T/ex.out" 2>"$T/ex.err"
rc=$?
check "export F best without an output flag names the flags (rc $rc: $(head -1 "$T/ex.err"))" \
	sh -c "test $rc -eq 2 && grep -q 'export: nothing to write: give where, with --kernelbench OUT.py .*--cuda OUT.cu .*--source OUT' '$T/ex.err'"
$KLOOP archive show 1 >"$T/ar.out" 2>&1
check "archive show: the command provider's model as known ($(grep '^model' "$T/ar.out"))" \
	grep -Eq "^model +command \(no model named\)$" "$T/ar.out"
$KLOOP report "$T/a.jsonl" -o "$T/r.html" >"$T/rep.out" 2>&1
check "report: the command provider's tokens not counted, not 0 + 0 ($(grep -o 'LLM requests[^<]*' "$T/r.html"))" \
	sh -c "grep -q '1 LLM requests, tokens not counted' '$T/r.html' && ! grep -q '0 + 0 tokens' '$T/r.html'"
[ "$NFAIL" -eq 0 ]
