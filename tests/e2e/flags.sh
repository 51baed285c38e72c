# flags.sh - every command's flags come from one table: a number that is
# not a finite number in its range (NaN, inf, negative, a fraction of a
# count, too large to hold) is refused before anything runs, with exit 2 and
# a message naming the flag and the value; an option a command does not
# take is an unknown option.
. tests/e2e/lib.sh

# refused NAME NEEDLE CMD...: exit status 2, NEEDLE in stderr, nothing on stdout
refused() {
	name=$1 needle=$2
	shift 2
	"$@" >"$T/out" 2>"$T/err"
	rc=$?
	if [ $rc -eq 2 ] && grep -q -- "$needle" "$T/err" && [ ! -s "$T/out" ]; then
		ok "$name ($(head -n 1 "$T/err"))"
	else
		fail "$name: rc=$rc, stderr: $(cat "$T/err"), stdout: $(head -c 200 "$T/out")"
	fi
}

E="$KLOOP eval softmax tasks/softmax/seed.c --backend host"
refused "--budget nan" "--budget: expected a number (seconds) from 0.01 to 86400, got 'nan'" $E --budget nan
refused "--timeout inf" "--timeout: expected a number (seconds) from 0.1 to 604800, got 'inf'" $E --timeout inf
refused "--trials 3e9" "--trials: expected a whole number (trials) from 1 to 1000000, got '3e9'" $E --trials 3e9
refused "--trials 2.5" "--trials: expected a whole number" $E --trials 2.5
refused "--budget -1" "--budget: .* got '-1'" $E --budget -1
refused "--budget 1e400 (overflows a double)" "got '1e400'" $E --budget 1e400
refused "--jobs of 20 digits" "--jobs: expected a whole number (parallel compiles) from 1 to 4096" \
	$E --jobs 99999999999999999999
refused "--budget with trailing text" "got '1s'" $E --budget 1s
# numbers as a person writes them: strtod alone took these (issue 24)
refused "--trials 0x10 (hexadecimal)" "--trials: expected a whole number (trials) from 1 to 1000000, got '0x10'" $E --trials 0x10
refused "--budget ' 2' (a leading space)" "got ' 2'" $E --budget ' 2'
refused "--budget infinity" "got 'infinity'" $E --budget infinity
mkdir -p "$XDG_CONFIG_HOME/kloop"
printf 'timeout = 0x20\n' >"$XDG_CONFIG_HOME/kloop/config"
refused "timeout = 0x20 in the configuration" "timeout: '0x20' is not a number" $E
rm -f "$XDG_CONFIG_HOME/kloop/config"
refused "--reference of an unknown kind" "--reference: expected host, cuda or torch, got 'gpu'" \
	$E --reference gpu
refused "--backend of an unknown kind" "--backend: expected host, cuda or auto, got 'tpu'" \
	$E --backend tpu
refused "ideas -n 0" "-n: expected a whole number (ideas) from 1 to 64, got '0'" \
	$KLOOP ideas softmax -n 0 --provider command
refused "implement -b 65" "-b: expected a whole number (branches) from 1 to 64, got '65'" \
	$KLOOP implement softmax --idea x -b 65 --provider command
refused "implement --fix -1" "--fix: expected a whole number (fix prompts) from 0 to 16" \
	$KLOOP implement softmax --idea x --fix -1 --provider command
refused "replay --at -3" "--at: expected a whole number (events) from 0 to 100000000, got '-3'" \
	$KLOOP replay "$T/none.jsonl" --at -3
S="$KLOOP search softmax --sweep-only"
refused "search --seed nan" "--seed: expected a whole number (seed values) from 0 to 4294967295, got 'nan'" \
	$S --seed nan
refused "search --time inf" "--time: expected a number (seconds) from 0 to 1000000000, got 'inf'" \
	$S --time inf
refused "search --budget-usd -1" "--budget-usd: expected a number (dollars) from 0 to 1000000000, got '-1'" \
	$S --budget-usd -1
refused "search --max-candidates of 20 digits" "--max-candidates: expected a whole number (candidates)" \
	$S --max-candidates 99999999999999999999
refused "search --rounds 2.5" "--rounds: expected a whole number (rounds)" $S --rounds 2.5
refused "search --parents 17" "--parents: expected a whole number (parents) from 1 to 16, got '17'" \
	$S --parents 17
refused "search with a second task names it" "search: unexpected argument 'layernorm'" \
	$S layernorm
refused "search --crossover 2 --no-crossover contradict each other" \
	"--no-crossover contradicts --crossover 2" $S --crossover 2 --no-crossover
refused "doctor with an argument names it" "doctor: unexpected argument 'extra'" $KLOOP doctor extra
refused "translate -b 0" "-b: expected a whole number (translations) from 1 to 16, got '0'" \
	$KLOOP translate softmax -b 0 --command true
refused "a search flag is unknown to eval" "eval: unknown option --rounds" $E --rounds 3
refused "a flag another command takes is unknown here" "eval: unknown option --at" $E --at 3
refused "a flag without its value" "eval: --budget needs a value" $E --budget
# the commands that run no session take their flags from the same table
refused "doctor --timeout 0" "--timeout: expected a number (seconds) from 0.1 to 600, got '0'" \
	$KLOOP doctor --timeout 0
refused "doctor --timeout nan" "--timeout: expected a number (seconds) from 0.1 to 600, got 'nan'" \
	$KLOOP doctor --timeout nan
refused "doctor: an option it does not take" "doctor: unknown option --budget" $KLOOP doctor --budget 1
refused "doctor --json=x (only --workers takes =VALUE)" "doctor: unknown option --json=x" \
	$KLOOP doctor --json=x
refused "doctor: a positional argument" "usage: kloop doctor" $KLOOP doctor softmax
refused "export --cuda without its value" "export: --cuda needs a value" \
	$KLOOP export "$T/none.jsonl" 1 --cuda
refused "export: an option it does not take" "export: unknown option --json" \
	$KLOOP export "$T/none.jsonl" 1 --source "$T/x.c" --json
refused "export: a third positional argument" "usage: kloop export" \
	$KLOOP export "$T/none.jsonl" 1 2 --source "$T/x.c"
refused "profile passes eval's flags on, checked: --backend tpu" \
	"--backend: expected host, cuda or auto, got 'tpu'" \
	$KLOOP profile softmax tasks/softmax/seed.c --backend tpu
refused "profile --trials 2.5" "--trials: expected a whole number (trials) from 1 to 1000000, got '2.5'" \
	$KLOOP profile softmax tasks/softmax/seed.c --trials 2.5
refused "profile: a search flag is unknown" "profile: unknown option --rounds" \
	$KLOOP profile softmax tasks/softmax/seed.c --rounds 3
refused "profile --ncu without its value" "profile: --ncu needs a value" \
	$KLOOP profile softmax tasks/softmax/seed.c --ncu
refused "outline: an option it does not take" "outline: unknown option --xml" \
	$KLOOP outline tests/fixtures/cuda_src/gemm_tiled.cu --xml
refused "archive --kind of an unknown kind" "--kind: expected win or dead_end, got 'wins'" \
	$KLOOP archive search --kind wins --db "$T/a.db"
refused "archive -n -1" "-n: expected a whole number (results) from 0 to 1000000, got '-1'" \
	$KLOOP archive search -n -1 --db "$T/a.db"
refused "archive -n 2.5" "-n: expected a whole number (results)" \
	$KLOOP archive search -n 2.5 --db "$T/a.db"
refused "report: an option it does not take" "report: unknown option --json" \
	$KLOOP report "$T/none.jsonl" --json
refused "report -o without its value" "report: -o needs a value" $KLOOP report "$T/none.jsonl" -o
check "archive: a refused flag makes no database" sh -c "[ ! -e '$T/a.db' ]"
# a good value still runs
$E --budget 0.05 --trials 1 --json >"$T/ok.json" 2>"$T/ok.err"
check "in-range values run (exit $?)" grep -q '"status":"correct"' "$T/ok.json"
# a number flag that a command keeps in its own member (tasks --size) reaches
# it as a number: the problem is described at that size, no crash (it was
# once read as a string: a segmentation fault before Python was asked)
$KLOOP tasks tests/fixtures/torch/softmax.py --size 4 --python /nonexistent/python3 \
	>"$T/size.out" 2>"$T/size.err"
rc=$?
check "tasks PROBLEM.py --size 4 goes as far as the Python it names (exit $rc)" \
	sh -c "test $rc = 2 && grep -q \"interpreter '/nonexistent/python3' cannot be run\" '$T/size.err'"

# every command answers --help (or -h) with its usage and what it does, exit 0
out=$($KLOOP search --help 2>&1)
rc=$?
check "kloop search --help: its usage and help, saying a budget of 0 is no limit, exit 0 (rc $rc)" \
	sh -c 'test "$1" -eq 0 && echo "$2" | grep -q "^usage: kloop search TASK" && echo "$2" | grep -q "(--rounds 0, .*) is no limit"' - "$rc" "$out"
out=$($KLOOP eval softmax -h 2>&1)
rc=$?
check "kloop eval softmax -h: its usage and its flags, exit 0, nothing evaluated (rc $rc)" \
	sh -c 'test "$1" -eq 0 && echo "$2" | grep -q "^usage: kloop eval TASK SOURCE" && echo "$2" | grep -q "^  --budget N  *seconds of timing per candidate" && ! echo "$2" | grep -q "^softmax"' - "$rc" "$out"
# every flag a command's usage names has a line of its own in its --help
# (issue 27 item 12: not one sentence for forty flags)
for c in open shell replay eval import tasks session ideas implement outline doctor archive report export \
	profile search translate; do
	$KLOOP $c --help >"$T/help.$c" 2>&1
done
python3 - "$T" >"$T/helpcheck" 2>&1 <<'PY'
import re, sys
bad = []
for c in "open shell replay eval import tasks session ideas implement outline doctor archive report export profile search translate".split():
    t = open("%s/help.%s" % (sys.argv[1], c)).read()
    usage, rest = t.split("\n", 1)
    flags = set(re.findall(r"[\[ ](--?[a-z][a-z0-9-]*)", usage))
    lines = [l.strip() for l in rest.split("\n")]
    for f in sorted(flags):
        if not any(re.match(re.escape(f) + r"([ ,\[=]|$)", l) for l in lines):
            bad.append("%s %s" % (c, f))
print("; ".join(bad) or "none")
PY
check "every flag in a command's usage has its own line in kloop CMD --help (missing: $(cat "$T/helpcheck"))" \
	test "$(cat "$T/helpcheck")" = none
