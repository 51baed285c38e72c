#!/bin/sh
# scripts/readme_screens.sh OUTDIR - the screens of README.md's "First
# session", captured from the real program: kloop on the softmax task (host
# backend) with the fake LLM server of the tests (tests/fake_llm/server.py,
# 127.0.0.1), driven in tmux at 100x30 as a person would; each screen is
# written to OUTDIR/NN-name.txt with `tmux capture-pane`.
set -e
top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: scripts/readme_screens.sh OUTDIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
cd "$top"
KLOOP="$top/bin/kloop"
. tests/e2e/lib.sh
trap 'kill $SRV 2>/dev/null; tm kill-server 2>/dev/null; rm -rf "$T"' EXIT
fake_llm tests/fixtures/tui_llm.json
# the session under a short name, as the title bar shows it
mkdir -p "$T/home"
TUI_W=100 TUI_H=30 tui_start "cd $T/home && HOME=$T/home OPENAI_API_KEY=sk-readme $KLOOP softmax \
--backend host --provider openai --model fake-gpt --base-url http://127.0.0.1:$PORT/v1 \
--session $T/home/first.jsonl"
shot() { screen >"$out/$1.txt"; }
wait_for "1 candidate, 1 correct" 60
wait_for "^done:" 30
shot 01-opened
keys : 'ideas 3' Enter
wait_for "Ideas - 3 pending of 3" 60
shot 02-ideas
keys Enter
wait_for "idea 1:"
shot 03-idea
keys q a
wait_for "1 accepted"
keys : 'implement 2' Enter
wait_for "implementing 1 idea, 2 branches each - "
shot 04-implementing
wait_for "^done: implemented" 120
keys 1 G
shot 05-done
keys : 'compare 1 4' Enter
wait_for "compare #1 #4"
shot 06-compare
keys q : 'reply 4' Enter
wait_for "reply #4"
shot 07-reply
keys q q
echo "screens in $out"
