# ux.sh - issue 12 through the shell: `kloop doctor` shows the configured
# LLM provider, model and base URL and tries the endpoint (a real HTTP
# request to the fake server on 127.0.0.1), --json is one object with
# unique keys; the REPL's compare, prompt, reply and cancel, and the summary
# a piped command prints when its work is done.
. tests/e2e/lib.sh
TASK=tests/fixtures/tui_task
B="--backend host --budget 0.2"

# ---- doctor ----
$KLOOP doctor >"$T/d0" 2>&1
check "doctor without a provider says none is configured" grep -Eq "^llm +-- +no LLM provider is configured" "$T/d0"

check "the fake LLM server starts" fake_llm tests/fixtures/tui_llm.json
URL="http://127.0.0.1:$PORT/v1"
OPENAI_API_KEY=sk-doctor-test $KLOOP doctor --provider openai --model fake-gpt --base-url "$URL" >"$T/d1" 2>&1
check "doctor shows the provider, the model and the base URL" \
	grep -Eq "^llm +ok +provider openai, model fake-gpt, base URL $URL$" "$T/d1"
check "and tries the endpoint: GET /models answered, the model listed" \
	grep -Eq "^endpoint +ok +GET $URL/models: HTTP 200, 2 models, the configured one among them" "$T/d1"
check "the request reached the server, with the key" python3 -c "
import json
g=[json.loads(l) for l in open('$T/server.log') if '\"GET\"' in l]
assert g and g[-1]['path']=='/v1/models' and g[-1]['headers'].get('Authorization')=='Bearer sk-doctor-test'"
check "doctor never prints the key" sh -c "! grep -q sk-doctor-test '$T/d1'"

ANTHROPIC_API_KEY=sk-ant-doctor $KLOOP doctor --provider anthropic --model fake-claude \
	--base-url "http://127.0.0.1:$PORT" >"$T/da" 2>&1
check "doctor tries an Anthropic endpoint the Anthropic way (/v1/models, x-api-key)" sh -c "
grep -Eq '^endpoint +ok +GET http://127.0.0.1:$PORT/v1/models: HTTP 200, 2 models, the configured one' '$T/da' &&
python3 -c \"
import json
g=[json.loads(l) for l in open('$T/server.log') if '\\\"GET\\\"' in l]
h=g[-1]['headers']
assert g[-1]['path']=='/v1/models' and h.get('x-api-key')=='sk-ant-doctor' and h.get('anthropic-version'), h
\""

# the configuration file's settings are what doctor shows
mkdir -p "$T/config/kloop"
printf 'provider = openai\nmodel = not-served\nbase_url = %s\n' "$URL" >"$T/config/kloop/config"
$KLOOP doctor >"$T/d2" 2>&1
check "doctor shows the configuration file's provider, model and base URL" \
	grep -Eq "^llm +ok +provider openai, model not-served, base URL $URL$" "$T/d2"
check "and says when the model is not among those served" grep -q "the configured model is not listed" "$T/d2"
rm "$T/config/kloop/config"

$KLOOP doctor --provider openai --model m --base-url http://127.0.0.1:9/v1 --timeout 3 >"$T/d3" 2>&1
check "an endpoint that cannot be reached is named with the reason" \
	grep -Eq "^endpoint +-- +GET http://127.0.0.1:9/v1/models: (Couldn't connect|Could not connect|Failed to connect|Connection refused|Timeout)" "$T/d3"
check "doctor --timeout rejects a bad number" sh -c "$KLOOP doctor --timeout soon >/dev/null 2>'$T/d4'; test \$? -eq 2 && grep -q -- \"--timeout: expected a number (seconds) from 0.1 to 600, got 'soon'\" '$T/d4'"

OPENAI_API_KEY=sk-x $KLOOP doctor --json --provider openai --model fake-gpt --base-url "$URL" >"$T/dj" 2>&1
check "doctor --json is one JSON object with unique keys" python3 -c "
import json
def once(pairs):
    keys=[k for k,_ in pairs]
    assert len(keys)==len(set(keys)), keys
    return dict(pairs)
d=json.load(open('$T/dj'), object_pairs_hook=once)
assert d['llm']['ok'] and 'fake-gpt' in d['llm']['detail']
assert d['endpoint']['ok'] and 'HTTP 200' in d['endpoint']['detail']
assert 'OPENAI_API_KEY is set' in d['llm key']['detail'] and 'ANTHROPIC_API_KEY' in d['llm key']['detail']"

# ---- the REPL: compare, prompt, reply, cancel, summaries ----
D0=$NFAIL
printf 'bench 1\ncompare 1 2\nprompt 1\ncancel 1\ncancel r3\ncancel nope\ncancel all\n' |
	$KLOOP shell $TASK $B --session "$T/r.jsonl" >"$T/rout" 2>"$T/rerr"
check "bench: the summary when it is done" grep -q "^done: evaluated 1 candidate$" "$T/rout"
check "a verdict gives the spread next to the time" grep -Eq "^candidate 1 \(seed.c\): correct, [0-9.]+ ms ±[0-9]+%, [0-9.]+x$" "$T/rout"
check "compare prints the metrics side by side" \
	grep -Eq "^time +[0-9.]+ ms \(p10-p90 [0-9.]+-[0-9.]+\) +[0-9.]+ ms \(p10-p90 " "$T/rout"
check "and a verdict with the noise in mind" grep -Eq "^verdict +#2 against #1: [0-9.]+x(, same within noise| \((faster|slower), outside the noise\))$" "$T/rout"
check "and the diff" grep -q "^diff #1 (seed.c) -> #2 (seed_unrolled.c)" "$T/rout"
check "prompt on a seed: no LLM request made it" grep -q "error: prompt: candidate 1 (seed.c, origin seed) was not made by the LLM" "$T/rerr"
check "cancel with nothing running says so" grep -q "error: cancel: candidate 1 is not being evaluated" "$T/rerr"
check "cancel rN with no such request says so" grep -q "error: cancel: LLM request 3 is not running" "$T/rerr"
check "cancel with a bad id says what it takes" grep -q "error: cancel: 'nope' is not a candidate id, rN" "$T/rerr"
check "cancel all with nothing running says so" grep -q "error: cancel: nothing is running" "$T/rerr"
diag $D0 "$T/rout" "$T/rerr"

printf 'ideas 3\naccept 1\nimplement 1\nprompt 2\nreply 2\n' |
	OPENAI_API_KEY=sk-shell-test $KLOOP shell softmax $B --provider openai --model fake-gpt \
		--base-url "$URL" --session "$T/l.jsonl" >"$T/lout" 2>"$T/lerr"
check "implement: the summary says what it came to" \
	grep -Eq "^done: implemented 1 idea: 1 candidate, 1 correct, fastest [0-9.]+x \(#2\); overall best [0-9.]+x \(#[12]" "$T/lout"
check "prompt ID prints the request that made the candidate" \
	sh -c "grep -Eq '^candidate #2 idea1-b1.c: LLM request [0-9]+ \(implement, openai fake-gpt\)' '$T/lout' && grep -q '^system$' '$T/lout' && grep -q '^prompt$' '$T/lout'"
check "reply ID prints the answer with the model's explanation" \
	sh -c "grep -Eq '^candidate #2 idea1-b1.c: reply to LLM request [0-9]+ \(ok, [0-9]+ tokens in, [0-9]+ out' '$T/lout' && grep -A1 \"^the model's explanation\" '$T/lout' | grep -q '^This version computes the reciprocal of the sum once per row'"
check "nothing went wrong" test ! -s "$T/lerr"

# the session listing and a replay say the same words
$KLOOP replay "$T/l.jsonl" --at 3 >"$T/rp" 2>&1
check "replay: 1 candidate, singular" grep -q "^after 3 of [0-9]* events: 1 candidate$" "$T/rp"

# a C host task's fix prompt names ```c fences, not ```cuda; one word for a
# revised idea
kill $SRV 2>/dev/null
rm -f "$T/port"
check "the fake LLM server starts again" fake_llm tests/fixtures/ux_nocode.json
printf 'ideas 2\nrevise 2 Reciprocal once per row\naccept 2\nimplement 1\n' |
	OPENAI_API_KEY=sk-x $KLOOP shell softmax $B --provider openai --model fake-gpt \
		--base-url "http://127.0.0.1:$PORT/v1" --session "$T/n.jsonl" >"$T/nout" 2>"$T/nerr"
check "a reply without code is sent back with the fix prompt" grep -q "sending it back (fix 1 of" "$T/nout"
check "the fix prompt of a C task names \`\`\`c fences, not \`\`\`cuda" python3 -c "
import json
b=[json.loads(l)['body'] for l in open('$T/server.log') if '\"POST\"' in l]
fix=[m['content'] for x in b for m in x['messages'] if 'The attempt that failed' in m['content']]
assert fix and 'no fenced block (\`\`\`c ... \`\`\`)' in fix[0] and '\`\`\`cuda' not in fix[0], fix[:1]"
$KLOOP session "$T/n.jsonl" >"$T/ns" 2>&1
check "the session listing says revised, as the TUI and the REPL do" sh -c "grep -q '(revised)' '$T/ns' && ! grep -q '(edited)' '$T/ns' && grep -q '^idea 2 revised' '$T/nout'"
