#!/bin/sh
# bench/search_overlap.sh - rounds that overlap (issue 11, "Scheduling"): the
# same search run with --overlap 1 (each round's ideas asked for only once
# the previous round's candidates are all evaluated) and --overlap 2 (the
# next round starts as soon as the open round's implementation requests are
# out), on the host backend, against the fake LLM server
# (tests/fake_llm/server.py) answering from the scripted corpus
# (tests/fixtures/search/corpus_llm.py) after DELAY seconds per reply, a
# model's latency.  The task is softmax with three seeds (the corpus's
# slow, mid and chunked variants).  For each: candidates per minute and the
# share of the search's wall time the worker sat idle (no evaluation queued
# or running), from bench/search_stats.py.
# IN_FLIGHT sets the LLM requests at once (llm_max_in_flight, 4 by default).
# Usage: bench/search_overlap.sh [OUTDIR]  (DELAY=1.0 ROUNDS=4 REPS=2 IN_FLIGHT=4)
set -u
cd "$(dirname "$0")/.."
O=${1:-$(mktemp -d "${TMPDIR:-/tmp}/kloop-bench-overlap.XXXXXX")}
mkdir -p "$O"
K=./bin/kloop
DELAY=${DELAY:-1.0}
ROUNDS=${ROUNDS:-4}
REPS=${REPS:-2}
IN_FLIGHT=${IN_FLIGHT:-4}
F=tests/fixtures/search
export XDG_CACHE_HOME="$O/cache" XDG_STATE_HOME="$O/state" XDG_CONFIG_HOME="$O/config"
export KLOOP_ARCHIVE=off
mkdir -p "$O/config/kloop"
printf 'llm_max_in_flight = %s\n' "$IN_FLIGHT" >"$O/config/kloop/config"
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY
echo "$(uname -m), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); $(date -u '+%F %H:%M UTC')"
echo "fake LLM: ${DELAY} s per reply, $IN_FLIGHT requests at once; $ROUNDS rounds, 2 parents, 3 ideas, 2 branches; host backend, one worker"

rm -rf "$O/three"
cp -r tasks/softmax "$O/three"
cp $F/slow.c $F/mid.c $F/chunked.c "$O/three/"
python3 -c 'import json,sys
j=json.load(open(sys.argv[1])); j["name"]="three"; j["seeds"]={"host": ["slow.c", "mid.c", "chunked.c"]}
json.dump(j, open(sys.argv[1], "w"))' "$O/three/task.json"
cat >"$O/script.json" <<EOF
[{"match": "", "replies": [{"program": "$(pwd)/$F/corpus_llm.py", "usage": [100, 50],
  "reply_delay": $DELAY}]}]
EOF
python3 tests/fake_llm/server.py --script "$O/script.json" --port-file "$O/port" >/dev/null 2>&1 &
SRV=$!
trap 'kill $SRV 2>/dev/null' EXIT
i=0
while [ ! -s "$O/port" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
PORT=$(cat "$O/port")
for rep in $(seq 1 "$REPS"); do
	for ov in 1 2; do
		J="$O/overlap$ov-$rep.jsonl"
		rm -f "$J"
		# a cold compile cache for each run: no run reuses another's compiles
		rm -rf "$O/cache"
		$K search "$O/three" --rounds "$ROUNDS" --parents 2 --ideas 3 --branches 2 \
			--overlap $ov --suspect 100 --json --provider openai --model fake-gpt \
			--base-url "http://127.0.0.1:$PORT/v1" --backend host --budget 0.2 --trials 2 \
			--session "$J" >"$O/overlap$ov-$rep.out" 2>"$O/overlap$ov-$rep.err"
		echo "== --overlap $ov (run $rep): exit $?"
		python3 bench/search_stats.py "$J" | tail -n +2
	done
done
