# tui_find.sh - the text views search as vim and less do (issue 40), in
# tmux at 80x24: `/` in the Code pane, Results and the pages (show, diff,
# help) finds a text and marks it, n and N go to the next and the previous
# match and say when they went round the end, "pattern not found" when
# there is none; `/` in the Population still filters; w wraps long lines
# (a match past the right edge is said, then seen).
. tests/e2e/lib.sh
tui_needs tui_find
B="--backend host --budget 0.2"

# the seed and a copy of it with one long line (a comment, past 80 columns,
# ending in a word found nowhere else)
S="$T/find.jsonl"
LONG="/* the exponential of each element less the row maximum, kept in y for the sum and the division below: TAILWORD */"
sed "s|^\(.*yr\[c\] = expf(xr\[c\] - m);\)\$|\1 $LONG|" tasks/softmax/seed.c >"$T/long.c"
$KLOOP eval softmax tasks/softmax/seed.c "$T/long.c" $B --session "$S" >"$T/eval.out" 2>&1
N=$(grep -o "cols" tasks/softmax/seed.c | grep -c .) # the matches of "cols"

# is_marked WORD: the screen shows WORD in reverse video (SGR 7, then
# perhaps a colour), as a match is marked
E=$(printf '\033')
is_marked() {
	tm capture-pane -e -p -t "$K" | grep -aEq "$E\[([0-9]+;)*7(;[0-9]+)*m($E\[[0-9;]*m)*$1"
}

TUI_W=80 TUI_H=24 tui_start "cd $PWD && $KL softmax $B --session $S; echo DONE-1"
wait_for "2 candidates" 60 >/dev/null

# --- the Code pane: / n N
keys 3 /
check "/ in the Code pane opens a search, its hint says so" \
	wait_for "^/ +find a text in the Code pane \(n/N: next/previous\)" 10
keys expf Enter
check "/expf in the Code pane finds it, not a filter of the population" \
	wait_for "^/expf: match 1 of 1, line 27" 10
since=$NFAIL
check "... its line shown in the Code pane" wait_for "│  27 .*yr\[c\] = expf\(xr\[c\] - m\);" 10
check "... and the match marked (reverse video)" is_marked expf
diag "$since" "$T/screen"
keys n
check "n with one match: itself again, round the end, said" \
	wait_for "^/expf: match 1 of 1, line 27 \(search hit BOTTOM, continuing at TOP\)" 10
keys g / cols Enter
check "/cols: the first of its $N matches" wait_for "^/cols: match 1 of $N, line " 10
first=$(sed -n 's|^/cols: match 1 of [0-9]*, line \([0-9]*\).*|\1|p' "$T/screen")
keys n
check "n: the next match" wait_for "^/cols: match 2 of $N, line " 10
keys N
check "N: the previous match" wait_for "^/cols: match 1 of $N, line $first\$" 10
keys N
check "N before the first: the last, round the start, said" \
	wait_for "^/cols: match $N of $N, line [0-9]+ \(search hit TOP, continuing at BOTTOM\)" 10
keys / nosuchthing Enter
check "a text that is nowhere: pattern not found" wait_for "^pattern not found: nosuchthing" 10

# --- the Population: / filters as before
keys 1 /
check "/ in the Population is the filter (its hint says so)" \
	wait_for "^/ +filter the population: correct, origin=llm" 10
keys expf Enter
check "... and /expf there is a filter term" wait_for "^filter: 'expf' is neither a status" 10
keys / C-u Enter
wait_for "Population 2/2" 10 >/dev/null

# --- a long line: past the right edge, then wrapped with w
keys j 3 / tailword Enter
check "a match past the right edge is said, with the key that shows it" \
	wait_for "^/tailword: match 1 of 1, line 27, past the right edge \(w wraps long lines\)" 10
check "... it is not on screen (the line is cut)" sh -c "! grep -q TAILWORD '$T/screen'"
keys w
check "w wraps long lines: the Code pane says so" wait_for "Code #2 long.c - 34 lines, wrapped" 10
since=$NFAIL
check "... the end of the long line is seen, in the pane's 80 columns" \
	wait_for "^│ +TAILWORD \*/ +│$" 10
check "... marked (case ignored: the text has no capital)" is_marked TAILWORD
diag "$since" "$T/screen"
keys w
check "w again: cut at the edge" wait_for "^long lines are cut at the edge \(w: wrap them\)" 10

# --- Results
keys 4 / verdict Enter
check "/ in Results finds its text" wait_for "^/verdict: match 1 of 1, line 1\$" 10
check "... marked" is_marked verdict

# --- the pages over the panes: show, diff, help
keys : 'show 2' Enter
wait_for "show #2 - lines" 10 >/dev/null
keys / Tailword Enter
check "a page: a capital makes case matter (Tailword is not there)" \
	wait_for "^pattern not found: Tailword" 10
keys / TAILWORD Enter
check "a page (show): /TAILWORD found, its source line" wait_for "^/TAILWORD: match 1 of 1, line 27" 10
keys w
check "... w wraps the page's source" wait_for "show #2 - lines .*, wrapped \(q closes\)" 10
check "... and its match is seen, marked" is_marked TAILWORD
keys q w : 'diff 1 2' Enter
wait_for "^┌ diff - lines" 10 >/dev/null
keys / tailword Enter
check "a diff page: the added line found" wait_for "^/tailword: match 1 of 1, line [0-9]+, past the right edge" 10
keys q '?'
wait_for "help - lines" 10 >/dev/null
keys / 'wrap the long' Enter
check "the help says w" wait_for "^/wrap the long: match 1 of 1" 10
keys / 'n / N' Enter
check "... and / n N in the text views" wait_for "^/n / N: match 1 of 1" 10
keys q
keys : 'quit!' Enter
wait_for "DONE-1" 10 >/dev/null
[ "$NFAIL" -eq 0 ]
