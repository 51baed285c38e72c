# warm.sh - kloop eval's worker kept warm for the next eval of the same
# task (--warm SECONDS; issue 40: a lone eval's seconds went to the
# worker's start and the reference's runs): the next eval attaches to it
# and says so, gets the same verdicts and the same baseline; a crash in it
# still shows the candidate's last output, and one that prints megabytes
# waits on nothing; another task, a changed task
# file or --warm 0 gets a worker of its own, and a third on the device
# stops the oldest idle one; `kloop warm` lists them and `kloop warm stop`
# ends them; one that waits out its seconds ends.
. tests/e2e/lib.sh
B="--backend host --budget 0.3 --trials 3"
cp -r tasks/softmax "$T/sm"

# pids of the workers kept warm for this test (their sockets in $T/run)
warm_pids() { $KLOOP warm 2>/dev/null | awk '$1 == "pid" {print $2}' | sort; }
# gone PID...: every one has ended (within 10 s; a zombie counts as ended)
gone() {
	for _i in $(seq 100); do
		_left=0
		for _p in "$@"; do
			_s=$(awk '{print $3}' "/proc/$_p/stat" 2>/dev/null)
			[ -n "$_s" ] && [ "$_s" != Z ] && _left=1
		done
		[ $_left = 0 ] && return 0
		sleep 0.1
	done
	return 1
}

n0=$NFAIL
run e1 eval "$T/sm" tasks/softmax/seed.c $B --warm 600 --json
rc1=$rc
check "the first eval (--warm 600) is correct and made its own setup (rc $rc1)" \
	json_true "$T/e1.out" 'j["status"] == "correct" and "warm" not in j["reference_data"]["setup"]'
p1=$(warm_pids)
check "its worker waits after it, listed by kloop warm ($p1)" test -n "$p1"
run e2 eval "$T/sm" tasks/softmax/seed.c $B --warm 600 --json
check "the second eval attached to it: its setup says kept warm, its eval 2" \
	json_true "$T/e2.out" 'j["status"] == "correct" and j["reference_data"]["setup"]["warm"]["evals"] == 2'
check "the same baseline both times (one reference timing, kept)" \
	test "$(json baseline_ms "$T/e1.out")" = "$(json baseline_ms "$T/e2.out")"
check "the second eval's candidate was timed again (not 'the same machine code' of the first eval)" \
	json_true "$T/e2.out" '"not_timed" not in j and j["timing"]["count"] > 0'
check "still one worker kept warm, the same ($(warm_pids))" test "$(warm_pids)" = "$p1"
$KLOOP doctor >"$T/doc.out" 2>&1
check "kloop doctor says a worker is kept warm, its task and pid ($(grep '^warm' "$T/doc.out"))" \
	grep -q "^warm .*1 worker kept warm .*softmax (pid $p1, idle)" "$T/doc.out"
run e2h eval "$T/sm" tasks/softmax/seed.c $B --warm 600
check "the human output says the worker was kept warm" grep -q "the worker kept warm was ready" "$T/e2h.out"
# two candidates in one eval: both through the one attach, and the worker
# it attached to is still the one kept warm after them
{ echo "/* a second candidate */"; cat tasks/softmax/seed.c; } >"$T/seed3.c"
run two eval "$T/sm" tasks/softmax/seed.c "$T/seed3.c" $B --warm 600 --json
check "two candidates in one eval against the warm worker: both correct, both through its one attach ($(grep -c . "$T/two.out") results)" \
	python3 -c "
import json, sys
r = [json.loads(l) for l in open('$T/two.out') if l.strip()]
ev = [x['reference_data']['setup'].get('warm', {}).get('evals') for x in r]
assert len(r) == 2 and all(x['status'] == 'correct' for x in r), [x['status'] for x in r]
assert ev[0] is not None and ev[0] == ev[1], ev"
check "... and the worker kept warm after them is still the same ($(warm_pids))" test "$(warm_pids)" = "$p1"
# an eval that cannot attach while another is attached (it waits a second
# for the hello) makes a worker of its own; the attach it abandoned in the
# first one's queue does not end that one once it is free again
{
	cat tasks/softmax/seed.c
	printf '%s\n' '#include <unistd.h>' \
		'__attribute__((constructor)) static void nap(void) { sleep(6); }'
} >"$T/nap.c"
$KLOOP eval "$T/sm" "$T/nap.c" $B --warm 600 --json >"$T/na.out" 2>"$T/na.err" &
napjob=$!
# the second starts once the first has attached (the worker says busy)
i=0
while [ $i -lt 200 ] && ! $KLOOP warm 2>/dev/null | grep -q "^pid $p1 .* busy "; do
	sleep 0.05
	i=$((i + 1))
done
run nb eval "$T/sm" tasks/softmax/seed.c $B --warm 600 --json
wait $napjob
check "an eval beside an attached one is correct with a worker of its own, the attached one correct too" \
	json_true "$T/nb.out" 'j["status"] == "correct" and "warm" not in j["reference_data"]["setup"]' &&
	json_true "$T/na.out" 'j["status"] == "correct" and "warm" in j["reference_data"]["setup"]'
sleep 1
check "... and the worker it could not attach to is still kept warm ($p1: $(warm_pids | tr '\n' ' '))" \
	sh -c "$KLOOP warm 2>/dev/null | grep -q '^pid $p1 '"
$KLOOP warm stop >/dev/null 2>&1
gone $(warm_pids)
run e2w eval "$T/sm" tasks/softmax/seed.c $B --warm 600 --json
p1=$(warm_pids)
diag "$n0" "$T/e1.out" "$T/e1.err" "$T/e2.out" "$T/e2.err" "$T/e2h.out" "$T/two.out" "$T/two.err"

# a candidate's crash in the warm worker: its verdict and last output, and
# the worker goes on for the next
n0=$NFAIL
sed 's|#include <stddef.h>|#include <stddef.h>\n#include <stdio.h>|; s|\*p = |fprintf(stderr, "about to crash\\n"), fflush(stderr), *p = |' \
	tests/fixtures/host/segfault.c >"$T/crash.c"
run cr eval "$T/sm" "$T/crash.c" $B --warm 600 --json
check "a crashing candidate in the warm worker is crashed, its last output kept ($(said "$T/cr.out"))" \
	json_true "$T/cr.out" 'j["status"] == "crashed" and "about to crash" in (j.get("stderr_tail") or "")'
run e3 eval "$T/sm" tasks/softmax/seed.c $B --warm 600 --json
check "the next eval after the crash is correct and attached" \
	json_true "$T/e3.out" 'j["status"] == "correct" and "warm" in j["reference_data"]["setup"]'
run fl eval "$T/sm" tests/fixtures/host/flood_stdout.c $B --warm 600 --json
check "a candidate printing megabytes a run in the warm worker is correct: its output is relayed, nothing waits on it ($(said "$T/fl.out"))" \
	json_true "$T/fl.out" 'j["status"] == "correct" and "warm" in j["reference_data"]["setup"]'
# a candidate whose constructor prints 2 MiB while it is loaded: the warm
# worker passes it on while it waits for the load (it waited on the runner
# alone, the runner on the full pipe)
{
	cat tasks/softmax/seed.c
	printf '%s\n' '#include <stdio.h>' \
		'__attribute__((constructor)) static void loud(void)' \
		'{' \
		'	for (int i = 0; i < 32768; i++)' \
		'		fputs("loud while loading: sixty-four bytes of a line, again and again\\n", stdout);' \
		'	fflush(stdout);' \
		'}'
} >"$T/loud.c"
run ld eval "$T/sm" "$T/loud.c" $B --warm 600 --json
check "a candidate printing 2 MiB while it is loaded in the warm worker is correct ($(said "$T/ld.out"))" \
	json_true "$T/ld.out" 'j["status"] == "correct" and "warm" in j["reference_data"]["setup"]'
diag "$n0" "$T/cr.out" "$T/cr.err" "$T/e3.out" "$T/e3.err" "$T/fl.out" "$T/ld.out"

# another task's state is never reused: a changed file, other flags, the
# environment; and of those left idle on the device, the newest one is
# kept beside the new one, the older stopped (their sets hold device memory)
n0=$NFAIL
printf '\n/* changed */\n' >>"$T/sm/reference.c"
run ch eval "$T/sm" tasks/softmax/seed.c $B --warm 600 --json
check "a changed task file gets a worker of its own" \
	json_true "$T/ch.out" 'j["status"] == "correct" and "warm" not in j["reference_data"]["setup"]'
p2=$(warm_pids | tr '\n' ' ')
check "the first (idle) and the new one are kept warm ($p2)" test "$(warm_pids | wc -l)" -eq 2
run sh eval "$T/sm" tasks/softmax/seed.c $B --warm 600 --trials 2 --json
check "other flags (--trials 2) get a worker of their own" \
	json_true "$T/sh.out" '"warm" not in j["reference_data"]["setup"]'
check "the third one stopped the oldest idle one, the first ($p1)" gone $p1
KLOOP_TMP_LIMIT_MB=600 $KLOOP eval "$T/sm" tasks/softmax/seed.c $B --warm 600 --json >"$T/env.out" 2>"$T/env.err"
check "a setting of the worker's environment (KLOOP_TMP_LIMIT_MB) gets a worker of its own" \
	json_true "$T/env.out" '"warm" not in j["reference_data"]["setup"]'
$KLOOP warm >"$T/ls3.out" 2>&1
check "two workers kept warm on the device, no more ($(warm_pids | wc -l))" test "$(warm_pids | wc -l)" -eq 2
run z eval "$T/sm" "$T/crash.c" $B --warm 0 --json
check "--warm 0 neither attaches nor leaves one more" test "$(warm_pids | wc -l)" -eq 2
diag "$n0" "$T/ls3.out" "$T/ch.err" "$T/sh.err"

# kloop warm stop ends them all, and their runners
n0=$NFAIL
all=$(warm_pids)
run stop warm stop
check "kloop warm stop says it stopped each ($(grep -c stopped "$T/stop.out"))" \
	test "$(grep -c '^stopped the warm worker' "$T/stop.out")" -eq 2
check "and they end" gone $all
run ls warm
check "kloop warm then lists none" grep -q "no worker is kept warm" "$T/ls.out"
$KLOOP doctor --json >"$T/doc.json" 2>/dev/null
check "... and kloop doctor --json says 0 kept warm" python3 -c "
import json; d=json.load(open('$T/doc.json'))['warm']; assert d['ok'] and d['detail'].startswith('0 workers kept warm'), d"
run bad warm start
check "kloop warm start is a usage error naming stop (rc $rc)" sh -c "[ $rc -eq 2 ] && grep -q stop '$T/bad.err'"
diag "$n0" "$T/stop.out" "$T/ls.out" "$T/bad.err"

# one that waits out its seconds ends by itself
n0=$NFAIL
run l1 eval "$T/sm" tasks/softmax/seed.c $B --warm 1 --json
p=$(warm_pids)
check "a worker kept 1 s is listed after its eval ($p)" test -n "$p"
check "and ends by itself once the second is out" gone $p
diag "$n0" "$T/l1.out" "$T/l1.err"

# a PyTorch reference's worker too: its helper writes into the relay, and
# the next eval has the helper's data without starting Python again
n0=$NFAIL
if python3 -c 'import torch' >/dev/null 2>&1; then
	run t1 eval "$T/sm" tasks/softmax/seed.c $B --reference torch --warm 600 --json
	run t2 eval "$T/sm" tasks/softmax/seed.c $B --reference torch --warm 600 --json
	check "against the PyTorch reference the second eval attached, correct, the same baseline" \
		sh -c "python3 -c 'import json,sys; a,b=(json.loads(open(f).readline()) for f in sys.argv[1:]); sys.exit(0 if a[\"status\"]==b[\"status\"]==\"correct\" and \"warm\" in b[\"reference_data\"][\"setup\"] and a[\"baseline_ms\"]==b[\"baseline_ms\"] else 1)' '$T/t1.out' '$T/t2.out'"
	$KLOOP warm stop >/dev/null 2>&1
else
	skip "no PyTorch for python3: the PyTorch reference's warm worker is not tried"
fi
diag "$n0" "$T/t1.out" "$T/t1.err" "$T/t2.out" "$T/t2.err"

# the workbench's worker too (issue 40, item 3: the TUI's first verdict
# waited for the worker's whole setup, 5.9 s warm on an H200): a second
# `kloop shell` of the task attaches to the first's worker, its seeds'
# verdicts made against the same sets and baseline, and `--warm 0` still
# gets a worker of its own
n0=$NFAIL
$KLOOP warm stop >/dev/null 2>&1
# the verdicts of a shell session's journal J: status, the setup's warm
# object's evals (0 where it made its own setup), baseline_ms
shell_setup() {
	python3 -c "
import json, sys
for l in open(sys.argv[1]):
    e = json.loads(l)
    if e.get('type') == 'eval_finished':
        r = e.get('result') or {}
        su = (r.get('reference_data') or {}).get('setup') or {}
        print(r.get('status'), (su.get('warm') or {}).get('evals', 0), r.get('baseline_ms'))
        break" "$1"
}
echo list | $KLOOP shell "$T/sm" $B --warm 600 --session "$T/sh1.jsonl" >"$T/sh1.out" 2>"$T/sh1.err"
p=$(warm_pids)
check "a kloop shell (--warm 600) leaves its worker waiting ($p)" test -n "$p"
echo list | $KLOOP shell "$T/sm" $B --warm 600 --session "$T/sh2.jsonl" >"$T/sh2.out" 2>"$T/sh2.err"
s1=$(shell_setup "$T/sh1.jsonl")
s2=$(shell_setup "$T/sh2.jsonl")
check "the next kloop shell of the task attached: its seed's verdict made by the kept worker, the same baseline ($s1 / $s2)" \
	sh -c "echo '$s1' | grep -q '^correct 0 ' && echo '$s2' | grep -Eq '^correct [2-9] ' && [ '$(echo "$s1" | cut -d' ' -f3)' = '$(echo "$s2" | cut -d' ' -f3)' ]"
check "still the one worker kept warm ($(warm_pids))" test "$(warm_pids)" = "$p"
echo list | $KLOOP shell "$T/sm" $B --warm 0 --session "$T/sh3.jsonl" >"$T/sh3.out" 2>"$T/sh3.err"
s3=$(shell_setup "$T/sh3.jsonl")
check "--warm 0: a worker of its own ($s3)" sh -c "echo '$s3' | grep -q '^correct 0 '"
$KLOOP warm stop >/dev/null 2>&1
check "and kloop warm stop ends the workbench's worker" gone $p
diag "$n0" "$T/sh1.out" "$T/sh1.err" "$T/sh2.out" "$T/sh2.err" "$T/sh3.err"

# under a profiler (Nsight Compute around kloop: its injection in the
# environment) nothing is kept warm, even when asked: the profiler waits
# for every process it follows
n0=$NFAIL
$KLOOP warm stop >/dev/null 2>&1
CUDA_INJECTION64_PATH=/nonexistent/libinjection.so $KLOOP eval "$T/sm" tasks/softmax/seed.c $B --warm 600 >"$T/pr.out" 2>"$T/pr.err"
check "under a profiler's injection kloop eval --warm 600 leaves no worker waiting ($(warm_pids | tr '\n' ' '))" test -z "$(warm_pids)"
echo list | CUDA_INJECTION64_PATH=/nonexistent/libinjection.so $KLOOP shell "$T/sm" $B --warm 600 --session "$T/pr.jsonl" >"$T/prs.out" 2>"$T/prs.err"
check "... nor does kloop shell ($(warm_pids | tr '\n' ' '))" test -z "$(warm_pids)"
$KLOOP warm stop >/dev/null 2>&1
diag "$n0" "$T/pr.out" "$T/pr.err" "$T/prs.err"
