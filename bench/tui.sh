#!/bin/sh
# bench/tui.sh - the TUI at 10,000 candidates and with 8 jobs in flight
# (bench/tui.py drives it in tmux; bench/gen_journal.py makes the journal).
# Prints a Markdown table for bench/RESULTS.md.  Usage: sh bench/tui.sh [N] [--first-only]
top=$(cd "$(dirname "$0")/.." && pwd)
[ -x "$top/bin/kloop" ] || { echo "bench/tui.sh: build kloop first (make)" >&2; exit 2; }
command -v tmux >/dev/null || { echo "bench/tui.sh: tmux is needed" >&2; exit 2; }
exec python3 "$top/bench/tui.py" "${1:-10000}" ${2:+"$2"}
