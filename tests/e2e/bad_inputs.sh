# bad_inputs.sh - bad input from outside (issue 40): a worker that never
# says hello, a task name of 100,000 characters, journal events of the wrong
# shape, a --timeout below a second, a malformed task request to a worker.
# Each gets a clear answer naming what was wrong, and nothing else breaks.
. tests/e2e/lib.sh
B="--backend host --budget 0.5"

# a "worker" that says nothing a kloop-worker says (cat only echoes the task
# request): an error naming it within the hello's limit (25 s), not a
# silence as long as the setup's (900 s); 60 s here is the test's own bound
timeout 60 $KLOOP eval softmax tasks/softmax/seed.c $B --worker /bin/cat >"$T/cat.out" 2>&1
rc=$?
if [ $rc -ne 124 ] && grep -q "said nothing within 25 s" "$T/cat.out" &&
	grep -q "'/bin/cat'" "$T/cat.out"; then
	ok "a worker that never says hello: an error naming it ($(grep -o 'said nothing.*' "$T/cat.out" | head -1))"
else
	fail "a worker that never says hello: rc=$rc (124: still silent after 60 s): $(head -c 600 "$T/cat.out")"
fi

# a task name of 100,000 characters: the reason stays, the name is shortened
long=$(python3 -c "print('a' * 100000)")
$KLOOP shell "$long" </dev/null >"$T/long.out" 2>&1
rc=$?
if [ $rc -ne 0 ] && grep -q "unknown task 'a*\.\.\.a* (100000 bytes)' (bundled tasks: " "$T/long.out" &&
	[ "$(wc -c <"$T/long.out")" -lt 1000 ]; then
	ok "a 100,000-character task name: the reason kept ($(cut -c1-40 "$T/long.out")...$(cut -c150-260 "$T/long.out"))"
else
	fail "a 100,000-character task name: rc=$rc, $(wc -c <"$T/long.out") bytes: $(cut -c1-200 "$T/long.out")...$(tail -c 200 "$T/long.out")"
fi
$KLOOP eval "$T/$long" tasks/softmax/seed.c $B >"$T/longp.out" 2>&1
if grep -q "(1000[0-9][0-9] bytes): no such task directory" "$T/longp.out"; then
	ok "a 100,000-character task path: the reason kept"
else
	fail "a 100,000-character task path: $(cut -c1-200 "$T/longp.out")...$(tail -c 200 "$T/longp.out")"
fi

# journal events of the wrong shape: a warning naming file:line and what
# was expected; the events after them are folded still
J="$T/shapes.jsonl"
cat >"$J" <<'JEOF'
{"type":"session_started","task":"softmax","task_dir":"/x","backend":"host","ts":1,"seq":1}
{"type":"candidate_added","id":1,"name":"a.c","origin":"human","source":"int a;","ts":2,"seq":2}
{"type":"candidate_added","id":2,"name":"b.c","origin":"human","source":"int b;","ts":2,"seq":3}
{"type":"eval_started","candidate":1,"ts":3,"seq":4}
{"type":"eval_finished","candidate":1,"result":{"status":7},"ts":4,"seq":5}
{"type":"eval_started","candidate":2,"ts":3,"seq":6}
{"type":"eval_finished","candidate":2,"result":[1,2,3],"ts":4,"seq":7}
{"type":"candidate_added","id":3,"name":"c.c","origin":"human","source":"int c;","ts":5,"seq":8}
{"type":"eval_started","candidate":3,"ts":6,"seq":9}
{"type":"eval_finished","candidate":3,"result":{"status":"incorrect","reason":"max error 1"},"ts":7,"seq":10}
JEOF
run shapes session "$J"
since=$NFAIL
check "a result whose status is a number: a warning naming the line and what was expected" \
	grep -q "shapes.jsonl:5: .*\"status\" must be a string.*not a number" "$T/shapes.err"
check "a result that is an array: a warning naming the line" \
	grep -q "shapes.jsonl:7: .*\"result\" must be an object, not an array" "$T/shapes.err"
check "neither candidate is made an error by them" \
	sh -c "! grep -E '^ +[12] .* error ' '$T/shapes.out'"
check "the journal after them is folded" grep -qE '^ +3 +c\.c .* incorrect' "$T/shapes.out"
diag "$since" "$T/shapes.out" "$T/shapes.err"

# --timeout below a second: the message gives the limit as given
run tmo eval softmax tasks/softmax/seed.c $B --timeout 0.1
if grep -q "no result after 0.1 s (wall-clock limit)" "$T/tmo.out"; then
	ok "--timeout 0.1: $(grep -o 'no result after [^)]*)' "$T/tmo.out")"
else
	fail "--timeout 0.1: rc=$rc: $(cat "$T/tmo.out" "$T/tmo.err" | head -c 600)"
fi

# a malformed task request leaves the worker without a task: the next
# request is taken as the first (here it names its own problem)
printf '{"op":"task"}\n{"op":"task","dir":"%s/nosuch"}\n' "$T" |
	timeout 60 "$(dirname "$KLOOP")/kloop-worker" --backend host >"$T/wk.out" 2>"$T/wk.err"
if grep -q 'task request without \\"dir\\"' "$T/wk.out" &&
	! grep -q "already loaded" "$T/wk.out" && grep -q "nosuch" "$T/wk.out"; then
	ok "a malformed task request: the next one is loaded ($(grep -c '"ev":"error"' "$T/wk.out") errors, the second about nosuch)"
else
	fail "a malformed task request: $(cat "$T/wk.out")"
fi
[ "$NFAIL" -eq 0 ]
