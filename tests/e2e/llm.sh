# llm.sh - `kloop ideas` and `kloop implement` on the host backend against
# the fake LLM server (tests/fake_llm/server.py, real HTTP on 127.0.0.1,
# scripted by tests/fake_llm/softmax.json): ideas in both wire formats,
# implementations that are correct, wrong or do not compile, fixes, replies
# without usable code, the session journal, the command provider, and the
# API key nowhere in what kloop writes.
. tests/e2e/lib.sh
KEY=sk-e2e-SECRET-9876
export OPENAI_API_KEY=$KEY ANTHROPIC_API_KEY=$KEY
if ! fake_llm tests/fake_llm/softmax.json; then
	fail "the fake LLM server starts"
	exit 1
fi
OPENAI="--provider openai --model fake-gpt --base-url http://127.0.0.1:$PORT/v1"
EVAL="--backend host --budget 0.2 --trials 3"
n=0
# py NAME EXPR: json_true over $T/NAME.out (lib.sh), quiet
py() { json_true "$T/$1.out" "$2" 2>/dev/null; }

run ideas ideas softmax --json $OPENAI $EVAL
check "ideas --json: exit 0 with three ideas ($(tr -d '\n' <"$T/ideas.err"))" \
	py ideas 'len(j["ideas"]) == 3'
check "each idea has a title, a description and one of the categories" \
	py ideas 'all(i["title"] and i["description"] and i["category"] in ("memory access","asynchrony and latency hiding","precision","compute and instructions","parallelism and occupancy","fusion","algorithm","other") for i in j["ideas"])'
check "the ideas are the reply's: the online softmax, an algorithm idea" \
	py ideas 'j["ideas"][0] == {"id": 1, "title": "One pass for the max and the sum", "description": j["ideas"][0]["description"], "category": "algorithm"} and j["llm"]["requests"] == 1 and j["llm"]["input_tokens"] == 12'
check "the request went to /v1/chat/completions with the model asked for" \
	grep -q '"path": "/v1/chat/completions".*"model": "fake-gpt"' "$T/server.log"

run ideas_anth ideas softmax --json --provider anthropic --model fake-claude \
	--base-url "http://127.0.0.1:$PORT" $EVAL -n 2
check "ideas from the anthropic provider (/v1/messages); -n 2 keeps two" \
	py ideas_anth 'len(j["ideas"]) == 2 and j["llm"]["provider"] == "anthropic"'
check "the anthropic request carried the key in x-api-key" \
	grep -q '"path": "/v1/messages".*"x-api-key"' "$T/server.log"

run ideas_human ideas softmax $OPENAI $EVAL --no-eval
check "ideas for people: numbered, with categories ($rc)" \
	grep -q '^ 2\. \[compute and instructions\] Multiply by the reciprocal' "$T/ideas_human.out"

run impl implement softmax --idea "Normalise with one reciprocal per row" -b 2 --fix 0 --json $OPENAI $EVAL
check "implement -b 2: exit 0 (a correct candidate) ($(tr -d '\n' <"$T/impl.err"))" test $rc -eq 0
check "branch 1 is correct, with its time and speedup" \
	py impl '[c for c in j["candidates"] if c["branch"] == 1][0]["status"] == "correct" and [c for c in j["candidates"] if c["branch"] == 1][0]["time_ms"] > 0 and [c for c in j["candidates"] if c["branch"] == 1][0]["speedup"] > 0'
check "branch 2 (no normalisation) is incorrect, with the reason" \
	py impl '[c for c in j["candidates"] if c["branch"] == 2][0]["status"] == "incorrect" and "differs from the reference" in [c for c in j["candidates"] if c["branch"] == 2][0]["reason"]'
check "two candidates, no fix sent (--fix 0), the parent is the seed" \
	py impl 'len(j["candidates"]) == 2 and j["parent"]["name"] == "seed.c" and j["parent"]["status"] == "correct" and j["llm"]["requests"] == 2'

S="$T/session.jsonl"
run fix implement softmax --idea "Normalise with one reciprocal per row" -b 2 --json --session "$S" $OPENAI $EVAL
check "with a fix: the incorrect branch is sent back and its fix is correct" \
	py fix 'len(j["candidates"]) == 3 and [c["status"] for c in j["candidates"] if c["branch"] == 2] == ["incorrect", "correct"]'
check "the fix's parent is the candidate it fixes" \
	py fix '[c for c in j["candidates"] if c["attempt"] == 1][0]["parents"] == [[c for c in j["candidates"] if c["branch"] == 2 and c["attempt"] == 0][0]["id"]]'
check "stderr says the candidate was sent back" grep -q "is incorrect; sending it back (fix 1 of 1)" "$T/fix.err"
$KLOOP session "$S" --json >"$T/state.out" 2>"$T/state.err"
check "the journal folds: the idea accepted, llm candidates carrying its id, 3 requests" \
	py state 'j["ideas"][0]["status"] == "accepted" and j["ideas"][0]["origin"] == "human" and [c["idea_id"] for c in j["candidates"] if c["origin"] == "llm"] == [1, 1, 1] and j["llm"]["requests"] == 3'
check "every request and reply is journaled with its text, tokens and latency" \
	python3 -c 'import json,sys
ev=[json.loads(l) for l in open(sys.argv[1])]
rq=[e for e in ev if e["type"]=="llm_request"]; rs=[e for e in ev if e["type"]=="llm_response"]
assert [e["purpose"] for e in rq] == ["implement","implement","fix"], rq
assert all("## The idea to implement" in e["prompt"] and e["system"] and e["model"]=="fake-gpt" for e in rq[:2])
assert all(e["status"]=="ok" and "```c" in e["text"] and e["output_tokens"]==34 and e["latency_s"]>0 for e in rs)
assert "## The attempt that failed" in rq[2]["prompt"] and "differs from the reference" in rq[2]["prompt"]' "$S"

# ideas into the session, then implement one of them by its id
run sideas ideas softmax --json --session "$S" $OPENAI $EVAL
run byid implement softmax --idea 3 -b 1 --fix 0 --json --session "$S" $OPENAI $EVAL
check "ideas join the session; --idea 3 implements the session's idea 3" \
	py byid 'j["idea"]["title"] == "Multiply by the reciprocal" and j["candidates"][0]["status"] == "correct"'

run cross implement softmax --idea "Take the best of both" --with tasks/softmax/reference.c -b 1 \
	--fix 0 --json --session "$T/cross.jsonl" $OPENAI $EVAL
check "--with: a crossover of the seed and the reference, with both as parents" \
	py cross 'j["candidates"][0]["origin"] == "crossover" and j["candidates"][0]["parents"] == [1, 2] and j["candidates"][0]["status"] == "correct"'
check "... asked with the crossover prompt" grep -q '"purpose":"crossover"' "$T/cross.jsonl"

run cerr implement softmax --idea "COMPILE-ERROR please" -b 2 --fix 0 --json --session "$T/cerr.jsonl" \
	$OPENAI $EVAL
check "a branch whose code does not compile: compile_error with the compiler's message" \
	py cerr '[c for c in j["candidates"] if c["branch"] == 2][0]["status"] == "compile_error" and "error" in [c for c in j["candidates"] if c["branch"] == 2][0]["reason"]'
check "its reply gave only kl_run, spliced into the seed (the journal says what changed)" \
	grep -q '"name":"idea1-b2.c".*"changes":"replaced kl_run"' "$T/cerr.jsonl"

run nocode implement softmax --idea "NOCODE idea" -b 1 --json $OPENAI $EVAL
check "a reply without code, sent back once, still without: exit 1, no candidate, a clear reason" \
	py nocode 'j["candidates"] == [] and "holds no code" in j["failures"][0]["error"] and j["llm"]["requests"] == 2'
check "stderr says there was no usable code" grep -q "no usable code in the reply" "$T/nocode.err"
check "... and the exit status is 1" test $rc -eq 1

run unparsable implement softmax --idea "UNPARSABLE idea" -b 1 --fix 0 --json $OPENAI $EVAL
check "a reply whose code does not parse: the block, the reply line and the error" \
	py unparsable 'j["candidates"] == [] and "code block 1 does not parse: reply line 4" in j["failures"][0]["error"]'

# the key: sent, never written
S2="$T/leak.jsonl"
run leak implement softmax --idea "ECHO-KEY idea" -b 1 --fix 0 --session "$S2" $OPENAI $EVAL
$KLOOP session "$S2" --json >"$T/leakstate.out" 2>&1
check "the key went to the server in the Authorization header" grep -q "Bearer $KEY" "$T/server.log"
check "a reply that echoes the key is journaled redacted" grep -q 'Your key is \[redacted\]' "$S2"
leaks=$(grep -l -- "$KEY" "$S" "$S2" "$T"/*.out "$T"/*.err 2>/dev/null)
check "the key appears in no journal, stdout, stderr or session export (${leaks:-none})" test -z "$leaks"

# the command provider
mkdir -p "$XDG_CONFIG_HOME/kloop"
printf 'provider = command\ncommand = cat >/dev/null; cat tests/fake_llm/replies/ideas.txt\n' \
	>"$XDG_CONFIG_HOME/kloop/config"
run cmd ideas softmax --json $EVAL --no-eval
check "the command provider: the program's stdout is the reply (3 ideas)" \
	py cmd 'len(j["ideas"]) == 3 and j["llm"]["provider"] == "command"'
printf 'provider = command\ncommand = cat >/dev/null; echo "model llama-9b not found" >&2; exit 3\n' \
	>"$XDG_CONFIG_HOME/kloop/config"
run cmdfail ideas softmax --json $EVAL --no-eval
check "a command that exits non-zero: exit 1 and why ($rc)" \
	py cmdfail 'j["ideas"] == [] and "exited with status 3: model llama-9b not found" in j["error"]'
rm "$XDG_CONFIG_HOME/kloop/config"

run noprov ideas softmax --json $EVAL
check "no provider configured: exit 2 and how to give one" \
	sh -c "test $rc -eq 2 && grep -q 'no LLM provider: give --provider' '$T/noprov.err'"
run badflag implement softmax -b 2 $OPENAI
check "implement without --idea: usage, exit 2" \
	sh -c "test $rc -eq 2 && grep -q 'usage: kloop implement' '$T/badflag.err'"
