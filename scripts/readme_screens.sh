#!/bin/sh
# scripts/readme_screens.sh OUTDIR - the screens of README.md's "First
# session", captured from the real program: tests/e2e/readme.sh runs the
# session's block of commands and keys as the README writes it (kloop on the
# softmax task, host backend, the scripted LLM of the tests through the
# command provider) in tmux at 100x30, and writes each step's screen to
# OUTDIR/NN-name.txt with `tmux capture-pane`.
set -e
top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: scripts/readme_screens.sh OUTDIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
cd "$top"
SHOTS=$out KLOOP="$top/bin/kloop" sh tests/e2e/readme.sh
echo "screens in $out"
