# forge.sh - a time the candidate cannot forge (issue 24), each class of the
# issue's reproductions on the host backend, sandboxed: the runner's code
# and GOT out of its reach (forge_got), the runner taken over and its
# replies forged, with late empty frames or never asleep (forge_reply,
# forge_spin; at 60%, caught by the batch bound: forge_part, forge_batch),
# work done outside the timed call (outside_work), repeated
# inputs memorized, generated or PyTorch-given (memo_inputs), PyTorch-given
# inputs told from fresh ones (mix_detect), a configured
# key or a password read from bubblewrap's environment at run or compile
# time (print_env, include_environ), the candidate limited as a whole
# (mem_hog, tmp_fill, a compile of /dev/zero), and threads it leaves behind
# counted (threads).  The same classes on the GPU: sandbox_cuda.sh.
. tests/e2e/lib.sh
E=tests/fixtures/evil
B="--backend host --budget 0.3 --trials 5"
if ! ./bin/kloop doctor | grep -q '^sandbox *ok'; then
	fail "bubblewrap runs here (kloop doctor: $(./bin/kloop doctor | grep '^sandbox'))"
	exit 0
fi
mkdir -p "$T/evil"
for f in $E/*.c; do
	{ grep '^#define _GNU_SOURCE' "$f"; grep -v '#include "softmax_body.h"' "$E/softmax_body.h"
	  grep -v -e '#include "softmax_body.h"' -e '^#define _GNU_SOURCE' "$f"; } >"$T/evil/$(basename "$f")"
done
V="$T/evil"
{ echo '#define SPIN 1'; cat "$V/forge_reply.c"; } >"$V/forge_spin.c"
# honest TIME SEED: the candidate's time is no better than half the seed's
# (the forgeries were 7 to 33 times better; a bound this loose is no race)
honest() {
	python3 -c 'import sys; t, s = float(sys.argv[1]), float(sys.argv[2]); sys.exit(0 if t >= 0.5 * s else 1)' "$1" "$2"
}

# 1. the runner's GOT rewritten from inside: kl_run returns 77 once it has
# patched anything, 78 when it found nothing to patch
eval_json "$T/got.json" $V/forge_got.c tasks/softmax/seed.c
n0=$NFAIL
check "forge_got: correct, so its GOT patch was refused every way (mprotect, /proc/self/mem, process_vm_writev), the seed beside it correct too ($(line_field 0 status "$T/got.json"): $(line_field 0 reason "$T/got.json"); $(line_field 1 status "$T/got.json"))" \
	test "$(line_field 0 status "$T/got.json") $(line_field 1 status "$T/got.json")" = "correct correct"
check "forge_got: its time is its own ($(line_field 0 time_ms "$T/got.json") ms, the seed $(line_field 1 time_ms "$T/got.json") ms)" \
	honest "$(line_field 0 time_ms "$T/got.json")" "$(line_field 1 time_ms "$T/got.json")"
check "forge_got: the result says what confined the runner ($(line_field 0 confinement "$T/got.json"))" \
	grep -q '"confinement":"seccomp filter' "$T/got.json"
diag "$n0" "$T/got.json.err"

# 2. the runner taken over: its replies forged, its empty frames late
eval_json "$T/fr.json" $V/forge_reply.c
st=$(line_field 0 status "$T/fr.json")
vf=$(line_field 0 timing.verified "$T/fr.json")
check "forge_reply (late frames): timing inconsistent, or unverified because it lengthens them ($st, verified $vf: $(line_field 0 reason "$T/fr.json")$(line_field 0 timing.clock_bound "$T/fr.json"))" \
	sh -c "(test '$st' = incorrect && grep -q 'timing inconsistent' '$T/fr.json') || (test '$st' = correct -a '$vf' = False && grep -q 'lengthens them' '$T/fr.json')"
eval_json "$T/fs.json" $V/forge_spin.c
st=$(line_field 0 status "$T/fs.json")
vf=$(line_field 0 timing.verified "$T/fs.json")
check "forge_spin (never asleep): no verified time ($st, verified $vf: $(line_field 0 reason "$T/fs.json"))" \
	sh -c "test '$st' = incorrect || test '$st' = correct -a '$vf' = False"

# the same at 60% of its time, its empty frames answered at once: above the
# half that the per-run bound lets pass.  The batch bound's
# (harness_batch.c: about 20 ms of runs in one request beside the clock's
# twin's empty ones): forge_part does not know the batch request and ends
# on it, forge_batch computes its batch and reports it at 60% (its runs
# on the buffers it was given, not the batch's slots: the runs checked
# after the batch find them poisoned, issue 37).  The seed
# beside each passes the batch, verified
{ printf '#define FORGE 0.6\n#define PROMPT 1\n'; cat "$V/forge_reply.c"; } >"$V/forge_part.c"
{ printf '#define BATCH 1\n'; cat "$V/forge_part.c"; } >"$V/forge_batch.c"
for f in forge_part forge_batch; do
	eval_json "$T/$f.json" $V/$f.c tasks/softmax/seed.c
	st=$(line_field 0 status "$T/$f.json")
	vf=$(line_field 0 timing.verified "$T/$f.json")
	check "$f (replies at 60%, frames at once): timing inconsistent, or unverified ($st, verified $vf: $(line_field 0 reason "$T/$f.json")$(line_field 0 timing.clock_bound "$T/$f.json"))" \
		sh -c "(test '$st' = incorrect && grep -Eq 'timing inconsistent|kloop.s batch of' '$T/$f.json') || (test '$st' = correct -a '$vf' = False)"
	check "$f: the seed beside it correct, never a liar ($(line_field 1 status "$T/$f.json"), verified $(line_field 1 timing.verified "$T/$f.json"), $(line_field 1 timing.batch_runs "$T/$f.json") runs: reported $(line_field 1 timing.batch_reported_ms "$T/$f.json") ms, kloop's clock $(line_field 1 timing.batch_clock_ms "$T/$f.json") ms$(line_field 1 timing.clock_bound "$T/$f.json"))" \
		test "$(line_field 1 status "$T/$f.json")" = correct
done

# checked runs told from unchecked ones by their inputs' statistics (issue
# 37): plain_skip writes 1/cols wherever an input looks plain, past its
# first calls, and computes in a batch and on the call after it; plain
# draws are among the checked timed runs
eval_json "$T/ps.json" $V/plain_skip.c tasks/softmax/seed.c
check "plain_skip: skipping the work on plain-looking inputs is caught in a checked timed run, or its time is no win ($(said "$T/ps.json"))" \
	python3 tests/e2e/no_win.py "$T/ps.json"

# 3. a thread that works while the harness writes the next run's inputs:
# held between calls it cannot, and what it does once a request lets the
# runner go is in kloop's own clock, which times such a candidate
eval_json "$T/ow.json" $V/outside_work.c tasks/softmax/seed.c
n0=$NFAIL
check "outside_work: correct ($(line_field 0 status "$T/ow.json"): $(line_field 0 reason "$T/ow.json"))" \
	test "$(line_field 0 status "$T/ow.json")" = correct
check "outside_work: its thread outlived kl_run and is counted, and its time is kloop's clock's or unverified ($(line_field 0 timing.threads_left "$T/ow.json"), clock $(line_field 0 timing.clock "$T/ow.json"), verified $(line_field 0 timing.verified "$T/ow.json"))" \
	sh -c "test '$(line_field 0 timing.threads_left "$T/ow.json")' = 1 && { test '$(line_field 0 timing.clock "$T/ow.json")' = kloop || test '$(line_field 0 timing.verified "$T/ow.json")' = False; }"
# (where the machine is too busy for kloop's clock to time it, its time is
# the runner's and unverified: never ranked, and said so; on a busy 2-core
# VM the thread then had the rows ready before the timer started, 0.15 ms)
check "outside_work: its time is its own, or unverified ($(line_field 0 time_ms "$T/ow.json") ms, verified $(line_field 0 timing.verified "$T/ow.json"), the seed $(line_field 1 time_ms "$T/ow.json") ms)" \
	sh -c "test '$(line_field 0 timing.verified "$T/ow.json")' = False || python3 -c 'import sys; t, s = float(sys.argv[1]), float(sys.argv[2]); sys.exit(0 if t >= 0.5 * s else 1)' '$(line_field 0 time_ms "$T/ow.json")' '$(line_field 1 time_ms "$T/ow.json")'"
diag "$n0" "$T/ow.json.err"

# 4. remembered answers: no timed run sees bytes seen before, drawn or
# given (kl_run returns 77 from a call it answered from memory)
eval_json "$T/mg.json" $V/memo_inputs.c
check "memo_inputs, generated inputs: correct, nothing answered from memory ($(line_field 0 status "$T/mg.json"): $(line_field 0 reason "$T/mg.json"))" \
	test "$(line_field 0 status "$T/mg.json")" = correct
if /usr/bin/python3 -c 'import torch' 2>/dev/null; then
	$KLOOP eval tests/fixtures/torch/softmax.py $V/memo_inputs.c --backend host --budget 0.3 \
		--python /usr/bin/python3 --json >"$T/mt.json" 2>"$T/mt.json.err"
	n0=$NFAIL
	check "memo_inputs, PyTorch's inputs: correct, nothing answered from memory ($(line_field 0 status "$T/mt.json"): $(line_field 0 reason "$T/mt.json"))" \
		test "$(line_field 0 status "$T/mt.json")" = correct
	# (in the quick timing or the full one: where the quick timing spent
	# every checking set and the full one began again, as it does after a
	# quick timing that went device-wide, the full one has none left)
	check "memo_inputs, PyTorch's inputs: timed runs checked on sets it had not seen ($(line_field 0 quick_timing.checked_runs "$T/mt.json") in the quick timing, $(line_field 0 timing.checked_runs "$T/mt.json") in the full)" \
		python3 -c 'import sys; assert sum(int(x) for x in sys.argv[1:] if x != "None") >= 1' \
		"$(line_field 0 quick_timing.checked_runs "$T/mt.json")" "$(line_field 0 timing.checked_runs "$T/mt.json")"
	diag "$n0" "$T/mt.json.err"
	# PyTorch's inputs told from fresh ones (issue 37): a timed run's given
	# inputs were mixes of the problem's plain sets, which a candidate that
	# remembers the sets it saw can tell (and then skip the work: no check
	# covered them); mix_detect returns 77 from a run it tells so.  Each run's
	# inputs are get_inputs() under its own seed now, and any can be checked
	# after its call by the problem's own forward
	$KLOOP eval tests/fixtures/torch/softmax.py $V/mix_detect.c --backend host --budget 0.3 \
		--python /usr/bin/python3 --json >"$T/mx.json" 2>"$T/mx.json.err"
	n0=$NFAIL
	check "mix_detect, PyTorch's inputs: correct, no run's inputs a mix of sets it had seen ($(line_field 0 status "$T/mx.json"): $(line_field 0 reason "$T/mx.json"))" \
		test "$(line_field 0 status "$T/mx.json")" = correct
	check "mix_detect, PyTorch's inputs: timed runs and batch runs checked after their call ($(line_field 0 timing.checked_after_runs "$T/mx.json") timed, $(line_field 0 timing.batch_checked_runs "$T/mx.json") of the batch)" \
		python3 -c 'import sys; assert all(x != "None" and int(x) >= 1 for x in sys.argv[1:])' \
		"$(line_field 0 timing.checked_after_runs "$T/mx.json")" "$(line_field 0 timing.batch_checked_runs "$T/mx.json")"
	diag "$n0" "$T/mx.json.err"
else
	fail "Debian's python3 has PyTorch (make deps installs python3-torch)"
fi

# 5. secrets in the environment: a key named by api_key_env, a password in
# a URL, read from every /proc/*/environ at run time and at compile time
mkdir -p "$XDG_CONFIG_HOME/kloop"
printf 'api_key_env = MYLLM_KEY\n' >"$XDG_CONFIG_HOME/kloop/config"
printf '#include "/proc/1/environ"\nint kl_run(void) { return 0; }\n' >"$V/include_environ.c"
MYLLM_KEY=kloop-secret-key-9e1 DATABASE_URL=postgres://u:kloop-secret-pw-9e1@db/x \
	$KLOOP eval softmax $V/print_env.c $V/include_environ.c $B --json --session "$T/env.jsonl" \
	>"$T/env.json" 2>"$T/env.json.err"
check "print_env: crashed, include_environ: not correct ($(line_field 0 status "$T/env.json") $(line_field 1 status "$T/env.json"))" \
	sh -c "test '$(line_field 0 status "$T/env.json")' = crashed -a '$(line_field 1 status "$T/env.json")' != correct"
check "print_env: it read environments (the sandbox's own)" grep -q 'environ: ' "$T/env.json"
check "no secret in the results, the messages or the journal" \
	sh -c "! grep -q 'kloop-secret-' '$T/env.json' '$T/env.json.err' '$T/env.jsonl'"
rm -f "$XDG_CONFIG_HOME/kloop/config"

# 6. the candidate limited as a whole: one memory limit for all of it
# (kl_run returns 77 when a fork succeeded), a sized /tmp (77: 64 MiB or
# more fitted; 78: not ENOSPC), a memory limit for compiles
mem=$(./bin/kloop doctor | grep '^limits')
case "$mem" in
*"memory v"*)
	KLOOP_MEM_LIMIT_MB=600 eval_json "$T/mh.json" $V/mem_hog.c
	n0=$NFAIL
	check "mem_hog: its forks refused, then stopped at its memory limit, and the verdict says which and how much ($(line_field 0 status "$T/mh.json"): $(line_field 0 reason "$T/mh.json"))" \
		sh -c "test '$(line_field 0 status "$T/mh.json")' = crashed && grep -q 'memory limit was reached: it held [0-9.]* MiB of its 600 MiB' '$T/mh.json'"
	check "mem_hog: what it printed names the refused forks" grep -q '0 of 3 children started (Operation not permitted)' "$T/mh.json"
	diag "$n0" "$T/mh.json.err"
	;;
*) fail "kloop doctor names a memory limit for the candidate as a whole ($mem)" ;;
esac
KLOOP_TMP_LIMIT_MB=24 eval_json "$T/tf.json" $V/tmp_fill.c
check "tmp_fill: correct, so its /tmp filled up below 64 MiB with ENOSPC ($(line_field 0 status "$T/tf.json"): $(line_field 0 reason "$T/tf.json"))" \
	test "$(line_field 0 status "$T/tf.json")" = correct
printf '#include "/dev/zero"\nint kl_run(void) { return 0; }\n' >"$V/zero.c"
KLOOP_COMPILE_MEM_MB=300 eval_json "$T/z.json" $V/zero.c
check "a compile of /dev/zero: compile_error, its reason the memory limit ($(line_field 0 status "$T/z.json"): $(line_field 0 reason "$T/z.json"))" \
	test "$(line_field 0 status "$T/z.json"): $(line_field 0 reason "$T/z.json")" = "compile_error: the compile reached its memory limit of 300 MiB (KLOOP_COMPILE_MEM_MB)"

# 7. threads left running after kl_run are counted (and cannot work between calls)
eval_json "$T/th.json" "$V/threads.c"
check "threads: correct, with the 16 threads it left counted ($(line_field 0 timing.threads_left "$T/th.json"))" \
	test "$(line_field 0 status "$T/th.json") $(line_field 0 timing.threads_left "$T/th.json")" = "correct 16"
