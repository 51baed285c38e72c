# typos.sh - a typo of a command, a subcommand, a flag or a task is an
# error that names the nearest word (issue 27, item 11), exit status 2, and
# nothing starts: no session is written, no workbench opens.
. tests/e2e/lib.sh

# typo NAME NEEDLE ARGS...: kloop ARGS exits 2 with NEEDLE on stderr's first
# line, and no journal appeared in the state directory
typo() {
	name=$1 needle=$2
	shift 2
	timeout 20 $KLOOP "$@" </dev/null >"$T/out" 2>"$T/err"
	rc=$?
	first=$(head -n 1 "$T/err")
	n=$(find "$T/state" -name '*.jsonl' 2>/dev/null | wc -l)
	if [ $rc -eq 2 ] && [ "$first" = "$needle" ] && [ "$n" -eq 0 ]; then
		ok "$name ($first)"
	else
		fail "$name: rc=$rc, journals $n, stderr: $(cat "$T/err")"
	fi
}

typo "a command's letters swapped name the command" \
	"kloop: 'serach' is not a command: did you mean 'kloop search'?" serach softmax
typo "a command with a letter left out" \
	"kloop: 'doctr' is not a command: did you mean 'kloop doctor'?" doctr
typo "a task's typo names the task" \
	"kloop: 'softmx' is not a task: did you mean 'softmax'?" softmx
typo "a word near nothing is neither a command nor a task" \
	"kloop: 'zzqq' is neither a command nor a task" zzqq
grep -q '^  commands: .*search' "$T/err" && grep -q '^  tasks: .*softmax' "$T/err"
check "... and the error lists both the commands and the tasks" test $? -eq 0
typo "a subcommand's typo names the subcommand" \
	"kloop: archive: unknown subcommand 'serch': did you mean 'search'?" archive serch x
typo "no subcommand says one is expected" \
	"kloop: archive: which one? a subcommand is expected" archive
typo "a known subcommand with the wrong arguments says so" \
	"kloop: archive show: wrong arguments" archive show
typo "a flag's typo names the flag" \
	"kloop: search: unknown option --round: did you mean --rounds?" search softmax --round 3
typo "a flag given with = names the flag too" \
	"kloop: eval: unknown option --trails=3: did you mean --trials?" eval softmax x.c --trails=3
typo "a flag near none is unknown, with no guess" \
	"kloop: eval: unknown option --zzzzzz" eval softmax x.c --zzzzzz
# a real task still opens: `kloop tasks` is a command, a path a task
$KLOOP tasks >"$T/tasks.out" 2>&1
check "a command spelt right still runs (kloop tasks)" grep -q softmax "$T/tasks.out"
exit $((NFAIL > 0))
