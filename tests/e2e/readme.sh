# readme.sh - README.md's first session as written (issue 40): the block of
# commands and keys at the top of its "First session", read from the
# README, run in a directory laid out as a clone after `make deps` (bin/ is
# this build's, tests/ this tree's), the keys typed into the workbench in
# tmux at 100x30; each step waits for what the README says it shows.  A
# line of the block this test does not know fails it: when the README's
# session changes, this test must change with it.  With SHOTS=DIR each
# step's screen is written to DIR/NN-name.txt (scripts/readme_screens.sh).
. tests/e2e/lib.sh
tui_needs readme
top=$PWD
C="$T/clone"
mkdir -p "$C"
ln -s "$(dirname "$KL")" "$C/bin"
ln -s "$top/tests" "$C/tests"

# the block: the first ``` block after "## First session"
awk '/^## First session/ {s = 1; next} s && /^## / {exit}
	s && /^```/ {if (b) exit; b = 1; next} b' README.md >"$T/steps"
check "README.md's first session opens with its commands and keys ($(grep -c . "$T/steps") lines)" \
	grep -q '^\$ bin/kloop softmax ' "$T/steps"

shot() { [ -z "${SHOTS:-}" ] || screen >"$SHOTS/$1.txt"; }
# keys KEYS: what a step's key column types: words are keys, and a word
# that starts with ':' is a command line, the rest of the column, then Enter
type_keys() {
	rest=$1
	while [ -n "$rest" ]; do
		case $rest in
		:*)
			keys : "${rest#:}" Enter
			return
			;;
		*" "*)
			keys "${rest%% *}"
			rest=${rest#* }
			;;
		*)
			keys "$rest"
			return
			;;
		esac
	done
}

n=0
while IFS= read -r line <&3; do
	[ -n "$line" ] || continue
	n=$((n + 1))
	case $line in
	'$ make')
		# the tree is built: the suite runs after make (make asan: its build)
		ok "step $n: $line (built already)"
		;;
	'$ bin/kloop softmax '*)
		cmd=${line#\$ }
		tui_start "cd $C && $cmd; echo DONE-OPEN"
		check "step $n: $cmd: the seed is evaluated, the message line says what it came to" \
			wait_for "^done: 1 candidate, 1 correct" 120
		check "... with the session's journal, first.jsonl" wait_for "first\.jsonl" 10
		shot 01-opened
		;;
	'$ bin/kloop replay first.jsonl')
		ev=$(grep -c . "$C/first.jsonl")
		tui_start "cd $C && ${line#\$ }; echo DONE-REPLAY"
		check "step $n: ${line#\$ } opens at its end, event $ev of $ev" \
			wait_for "kloop replay \| .*event $ev of $ev" 30
		check "... Activity lists its events up to there" \
			wait_for "│ *$ev [a-z]+_[a-z_]+" 10
		keys q
		check "... q ends it" wait_for "DONE-REPLAY|Pane is dead" 10
		;;
	*)
		k=$(printf '%s\n' "$line" | sed 's/   *.*//')
		type_keys "$k"
		case $k in
		':ideas 3')
			check "step $n: $k: the LLM's three ideas land in the Ideas pane" \
				wait_for "Ideas - 3 pending of 3" 60
			shot 02-ideas
			;;
		'Enter')
			check "step $n: Enter: the idea under the cursor, whole" wait_for "^│idea 1: " 10
			shot 03-idea
			;;
		'q a')
			check "step $n: q a: back to the panes, the idea accepted" \
				wait_for "Ideas - 2 pending of 3" 10
			;;
		':implement 2')
			check "step $n: $k: two implementations asked for" \
				wait_for "implementing 1 idea, 2 branches each" 30
			shot 04-implementing
			check "... done: a correct one, an incorrect one and its fix" \
				wait_for "^done: implemented 1 idea: 3 candidates, 2 correct" 180
			;;
		'1 G')
			check "step $n: $k: the Population's last candidate, the fix #4, correct" \
				wait_for "^┌ Code #4 idea1-b2-fix1.c" 10
			check "... correct" wait_for "^│[ *?~!BP]+4 +[23] llm +correct" 10
			shot 05-done
			;;
		':compare 1 4')
			check "step $n: $k: the two side by side" wait_for "compare #1 #4 - lines" 10
			check "... the fix compiles to the seed's machine code, said" \
				wait_for "^│verdict   same machine code: #1 and #4" 10
			shot 06-compare
			;;
		'q :reply 4')
			check "step $n: $k: what the LLM answered for #4" wait_for "reply #4 - lines" 10
			check "... its explanation" wait_for "^│The normalisation was missing" 10
			shot 07-reply
			;;
		'q q')
			check "step $n: q q: the page closed, the workbench ends" wait_for "DONE-OPEN" 10
			;;
		*)
			fail "step $n: the README's first session has a line this test does not know: $line"
			;;
		esac
		;;
	esac
done 3<"$T/steps"
check "every step of the block was taken ($n)" test "$n" -ge 10
[ "$NFAIL" -eq 0 ]
