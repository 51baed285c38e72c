# sandbox_cuda.sh - the CUDA evil candidates (tests/fixtures/evil_cuda)
# against the sandboxed runner on the GPU: buffers shared with CUDA IPC,
# compared by the worker's own kernels.  Skipped with one line without a GPU.
. tests/e2e/lib.sh
if ! $KLOOP doctor --json 2>/dev/null | python3 -c 'import json,sys; sys.exit(0 if json.load(sys.stdin)["gpu"]["ok"] else 1)'; then
	skip "sandbox_cuda: no GPU here, the CUDA sandbox suite did not run"
	exit 0
fi
export XDG_CACHE_HOME="${KLOOP_GPU_CACHE:-$T/cache}"
E=tests/fixtures/evil_cuda
# the CUDA reference kernel: fresh generated inputs for every timed run
B="--backend cuda --sandbox --reference cuda --budget ${KLOOP_GPU_BUDGET:-1} --timeout 60"
mkdir -p "$T/evil"
for f in $E/*.cu; do
	{ cat "$E/softmax_kernel.cuh"; grep -v '#include "softmax_kernel.cuh"' "$f"; } >"$T/evil/$(basename "$f")"
done
V="$T/evil"
echo "# sandbox: $($KLOOP doctor | grep '^sandbox')"
# ev OUT FILES...: eval_json (lib.sh), then each verdict's time and bound
# as "# " lines
ev() {
	out=$1
	eval_json "$@"
	# what a failing check needs: each result's verdict, time and bound
	python3 - "$out" <<'PY' | sed "s|^|# $(basename "$out"): |"
import json, sys
for l in open(sys.argv[1]):
    try:
        r = json.loads(l)
    except ValueError:
        print(l[:200].strip()); continue
    t = r.get("timing") or {}
    print("%s %s | %s ms, wall %s, frame %s, verified %s, clock %s %s | batch %s runs: reported %s, clock %s (low %s), %s s" % (
        r.get("status"), (r.get("reason") or "")[:160], r.get("time_ms"), t.get("wall_median_ms"),
        t.get("frame_wall_median_ms"), t.get("verified"), t.get("clock"), (t.get("clock_bound") or "")[:120],
        t.get("batch_runs"), t.get("batch_reported_ms"), t.get("batch_clock_ms"), t.get("batch_low_ms"),
        t.get("batch_seconds")))
PY
	[ -s "$out.err" ] && echo "# $(basename "$out") stderr: $(head -c 300 "$out.err" | tr '\n' ' ')"
}

ev "$T/seed.json" tasks/softmax/seed.cu
check "the CUDA seed is correct in the sandbox ($(line_field 0 reason "$T/seed.json"))" test "$(line_field 0 status "$T/seed.json")" = correct
check "some of its timed runs were checked ($(line_field 0 timing.checked_runs "$T/seed.json"))" \
	python3 -c "import sys; assert float(sys.argv[1]) >= 1" "$(line_field 0 timing.checked_runs "$T/seed.json")"

ev "$T/ra.json" $V/retaddr_skip.cu
check "retaddr_skip.cu: correct (every call looks alike), honest speedup ($(line_field 0 speedup "$T/ra.json")x)" \
	python3 -c "import sys; assert sys.argv[1]=='correct' and float(sys.argv[2]) < 20" \
	"$(line_field 0 status "$T/ra.json")" "$(line_field 0 speedup "$T/ra.json")"

ev "$T/cs.json" $V/count_skip.cu
# caught where the timed runs are checked: in one of them (each is checked
# by chance, a few in all: at this size memory holds 3 checking sets), else
# in the run after timing, which is always checked
check "count_skip.cu: incorrect in a checked timed run or the run after timing ($(line_field 0 reason "$T/cs.json"))" \
	sh -c "test '$(line_field 0 status "$T/cs.json")' = incorrect && grep -Eq 'timed run|the run after timing' '$T/cs.json'"

# telling timed runs by the clock, stale device memory for outputs, right at
# the timed shape only (issue 25's classes): each incorrect
ev "$T/ck.json" $V/clock_skip.cu $V/stale_memory.cu $V/shape_special.cu
check "clock_skip.cu: incorrect ($(line_field 0 reason "$T/ck.json" | cut -c1-120))" \
	test "$(line_field 0 status "$T/ck.json")" = incorrect
check "stale_memory.cu: a fresh allocation holds nothing of an earlier run's nor the reference's: incorrect ($(line_field 1 reason "$T/ck.json" | cut -c1-120))" \
	test "$(line_field 1 status "$T/ck.json")" = incorrect
check "shape_special.cu: right at the timed shape only, incorrect at the small shapes ($(line_field 2 reason "$T/ck.json" | cut -c1-120))" \
	sh -c "test '$(line_field 2 status "$T/ck.json")' = incorrect && sed -n 3p '$T/ck.json' | grep -q 'small shapes'"

rm -rf /tmp/kloop-evil-cache-gpu
for i in 1 2 3; do
	ev "$T/oc$i.json" $V/output_cache.cu
	check "output_cache.cu run $i: correct, so no cache hit (a hit returns 77)" test "$(line_field 0 status "$T/oc$i.json")" = correct
done
check "output_cache.cu: nothing written to the host's /tmp" test ! -e /tmp/kloop-evil-cache-gpu

ev "$T/ff.json" $V/forge_fds.cu tasks/softmax/seed.cu
check "forge_fds.cu: nothing forged, both correct" \
	sh -c "! grep -q forged '$T/ff.json' && test '$(line_field 0 status "$T/ff.json") $(line_field 1 status "$T/ff.json")' = 'correct correct'"

# the next request peeked at from a signal's handler as kloop lets the
# runner go (issue 37): held until kl_run, the timer refused
ev "$T/pk.json" $V/peek_request.cu tasks/softmax/seed.cu
check "peek_request.cu: nothing read before the runner, no timer: correct, as the seed (77: it peeked, 78: a timer; got $(said "$T/pk.json"))" \
	test "$(line_field 0 status "$T/pk.json") $(line_field 1 status "$T/pk.json")" = "correct correct"

# checked runs told from the unchecked by their inputs' statistics (issue
# 37): plain draws are among the checked timed runs
ev "$T/ps.json" $V/plain_skip.cu tasks/softmax/seed.cu
check "plain_skip.cu: skipping the work on plain-looking inputs is caught, or no win ($(said "$T/ps.json"))" \
	python3 tests/e2e/no_win.py "$T/ps.json"

ev "$T/pc.json" $V/patch_compare.cu
check "patch_compare.cu: incorrect, NaN seen ($(line_field 0 reason "$T/pc.json"))" \
	sh -c "test '$(line_field 0 status "$T/pc.json")' = incorrect && grep -q NaN '$T/pc.json'"

ev "$T/th.json" $V/threads.cu tasks/softmax/seed.cu
check "threads.cu: it and the innocent seed after it are both correct" \
	test "$(line_field 0 status "$T/th.json") $(line_field 1 status "$T/th.json")" = "correct correct"

# issue 24 on the GPU: a time the candidate cannot forge (tests/e2e/forge.sh
# has the same classes on the host).  The host fixtures that serve both
# backends, with the kernel in front of them
for f in forge_got forge_reply memo_inputs mix_detect print_env mem_hog tmp_fill; do
	{ cat "$E/softmax_kernel.cuh"; grep -v '#include "softmax_body.h"' "tests/fixtures/evil/$f.c"; } \
		>"$V/$f.cu"
done
{ echo '#define SPIN 1'; cat "$V/forge_reply.cu"; } >"$V/forge_spin.cu"
{ echo '#define PERSIST 1'; cat "$V/forge_reply.cu"; } >"$V/forge_persist.cu"

ev "$T/got.json" $V/forge_got.cu tasks/softmax/seed.cu
check "forge_got.cu: correct, its GOT patch refused every way, the seed correct too ($(line_field 0 status "$T/got.json"): $(line_field 0 reason "$T/got.json"))" \
	test "$(line_field 0 status "$T/got.json") $(line_field 1 status "$T/got.json")" = "correct correct"
check "forge_got.cu: the runner confined itself after CUDA's start ($(line_field 0 confinement "$T/got.json"))" \
	grep -q '"confinement":"seccomp filter' "$T/got.json"

# the runner taken over, its replies at 3% (and with SPIN never asleep): on
# the host (forge.sh) timing inconsistent, or unverified for its late
# frames.  On an H200 a round trip is 0.3 ms beside the softmax's 0.095, and
# the frames' spread is of the kernel's order: the clock bound cannot tell
# the forged 0.0075 ms from it; the floor of the task's bytes (issue 25's
# roofline: 268 MB at the HBM's bandwidth) is the check for such a time
caught() { # JSON: incorrect, a time that is not verified, or one below the floor
	st=$(line_field 0 status "$1")
	vf=$(line_field 0 timing.verified "$1")
	su=$(line_field 0 roofline.suspect "$1")
	test "$st" = incorrect -o "$vf" = False -o "$su" != None
}
for f in forge_reply forge_spin; do
	ev "$T/$f.json" $V/$f.cu
	check "$f.cu (the runner taken over, its replies at 3%): not a verified time, or a suspect below the device's floor ($(line_field 0 status "$T/$f.json"): $(line_field 0 reason "$T/$f.json")$(line_field 0 timing.clock_bound "$T/$f.json") $(line_field 0 roofline.suspect "$T/$f.json"))" \
		caught "$T/$f.json"
done

# the same at 60% of its time, its empty frames answered at once: above the
# half that the per-run bound lets pass, and above the floor.  The batch
# bound's (harness_batch.c: 20 ms of runs in one request beside the clock's
# twin's empty ones): forge_part does not know the batch request and ends
# on it, forge_batch computes its batch and reports it at 60% (its runs
# on the buffers it was given, not the batch's slots: the runs checked
# after the batch find them poisoned, issue 37).  The seed
# beside each passes the batch, verified
{ printf '#define FORGE 0.6\n#define PROMPT 1\n'; cat "$V/forge_reply.cu"; } >"$V/forge_part.cu"
{ printf '#define BATCH 1\n'; cat "$V/forge_part.cu"; } >"$V/forge_batch.cu"
for f in forge_part forge_batch; do
	ev "$T/$f.json" $V/$f.cu tasks/softmax/seed.cu
	st=$(line_field 0 status "$T/$f.json")
	rs=$(line_field 0 reason "$T/$f.json")
	cb=$(line_field 0 timing.clock_bound "$T/$f.json")
	check "$f.cu (the runner taken over, its replies at 60%): caught by the batch bound, not the floor ($st: $rs$cb)" \
		python3 -c "import sys; st, vf, rs, cb = sys.argv[1:]; assert (st == 'incorrect' and 'batch of' in rs) or (vf == 'False' and 'batch of' in cb)" \
		"$st" "$(line_field 0 timing.verified "$T/$f.json")" "$rs" "$cb"
	check "$f.cu: the seed beside it correct and verified, its batch held ($(line_field 1 status "$T/$f.json"), verified $(line_field 1 timing.verified "$T/$f.json"), $(line_field 1 timing.batch_runs "$T/$f.json") runs: reported $(line_field 1 timing.batch_reported_ms "$T/$f.json") ms, kloop's clock $(line_field 1 timing.batch_clock_ms "$T/$f.json") ms, $(line_field 1 timing.batch_seconds "$T/$f.json") s)" \
		python3 -c "import sys; assert sys.argv[1:3] == ['correct', 'True'] and int(sys.argv[3]) >= 1 and float(sys.argv[4]) < 0.1" \
		"$(line_field 1 status "$T/$f.json")" "$(line_field 1 timing.verified "$T/$f.json")" "$(line_field 1 timing.batch_runs "$T/$f.json")" "$(line_field 1 timing.batch_seconds "$T/$f.json")"
done

# every call the same call (issue 37, tests/e2e/same_call.sh on the host):
# each hostile beside its honest control (the same file, HONEST defined).
# batch_memo.cu (forge_reply with MEMO) takes its runner over, reports its
# timed runs at 60% and answers its batch's runs from memory (on acafdbb
# they saw one input: a forged win); pool_skip.cu skips plain inputs once
# the checking sets chosen before the call are spent (3 s: time left after
# its slow start)
{ printf '#define FORGE 0.6\n#define PROMPT 1\n#define BATCH 1\n#define MEMO 1\n'; cat "$V/forge_reply.cu"; } \
	>"$V/batch_memo.cu"
for f in batch_memo pool_skip; do
	{ echo '#define HONEST 1'; cat "$V/$f.cu"; } >"$V/${f}_honest.cu"
done
ev "$T/bm.json" $V/batch_memo.cu $V/batch_memo_honest.cu
check "batch_memo.cu: its batch remembered, its timed runs forged: no forged win ($(said "$T/bm.json"))" \
	python3 tests/e2e/no_win.py "$T/bm.json"
$KLOOP eval softmax $V/pool_skip.cu $V/pool_skip_honest.cu --backend cuda --sandbox --reference cuda \
	--budget 3 --timeout 60 --json >"$T/pl.json" 2>"$T/pl.json.err"
check "pool_skip.cu: skipping plain inputs once the checking sets are spent is caught, or no win ($(said "$T/pl.json"))" \
	python3 tests/e2e/no_win.py "$T/pl.json"
check "pool_skip.cu's control: timed runs checked after their call, and its batch's ($(line_field 1 timing.checked_after_runs "$T/pl.json"), $(line_field 1 timing.batch_checked_runs "$T/pl.json"))" \
	python3 -c "import sys; assert int(sys.argv[1]) >= 1 and sys.argv[2] != '0'" \
	"$(line_field 1 timing.checked_after_runs "$T/pl.json")" "$(line_field 1 timing.batch_checked_runs "$T/pl.json")"

ev "$T/fp.json" $V/forge_persist.cu tasks/softmax/seed.cu
check "forge_persist.cu (its times true, a kernel left running between calls): unverified ($(line_field 0 status "$T/fp.json"), verified $(line_field 0 timing.verified "$T/fp.json"): $(line_field 0 timing.clock_bound "$T/fp.json")$(line_field 0 reason "$T/fp.json")); the seed after it verified ($(line_field 1 timing.verified "$T/fp.json"))" \
	sh -c "test '$(line_field 0 timing.verified "$T/fp.json")' = False -o '$(line_field 0 status "$T/fp.json")' = incorrect && test '$(line_field 1 timing.verified "$T/fp.json")' = True"

ev "$T/ow.json" $V/outside_work.cu tasks/softmax/seed.cu
check "outside_work.cu: its thread that outlived kl_run counted, and its time unverified, never ranked ($(line_field 0 status "$T/ow.json"), threads $(line_field 0 timing.threads_left "$T/ow.json"), verified $(line_field 0 timing.verified "$T/ow.json"), $(line_field 0 time_ms "$T/ow.json") ms, the seed $(line_field 1 time_ms "$T/ow.json") ms)" \
	python3 -c "import sys; assert sys.argv[1] == 'correct' and int(sys.argv[2]) >= 1 and sys.argv[3] == 'False'" \
	"$(line_field 0 status "$T/ow.json")" "$(line_field 0 timing.threads_left "$T/ow.json")" "$(line_field 0 timing.verified "$T/ow.json")"
check "outside_work.cu: the seed beside it is verified ($(line_field 1 timing.verified "$T/ow.json"))" \
	test "$(line_field 1 timing.verified "$T/ow.json")" = True

ev "$T/mg.json" $V/memo_inputs.cu
check "memo_inputs.cu, generated inputs: correct, nothing answered from memory ($(line_field 0 status "$T/mg.json"): $(line_field 0 reason "$T/mg.json"))" \
	test "$(line_field 0 status "$T/mg.json")" = correct
$KLOOP eval softmax $V/memo_inputs.cu --backend cuda --sandbox --reference torch --budget 1 --timeout 120 \
	--json >"$T/mt.json" 2>"$T/mt.json.err"
# its timed runs are checked on sets it had not seen: a checking set's, or a
# fresh draw checked after its call (either timing: the quick one may have
# used the checking sets, as in forge.sh)
mt_checked() {
	python3 -c "
import json, sys
r = json.loads(open(sys.argv[1]).readline())
print(sum(int((r.get(k) or {}).get(f) or 0) for k in ('quick_timing', 'timing')
          for f in ('checked_runs', 'checked_after_runs')))" "$T/mt.json" 2>/dev/null || echo 0
}
check "memo_inputs.cu, PyTorch's inputs: correct, nothing answered from memory, timed runs checked on unseen sets ($(line_field 0 status "$T/mt.json"): $(line_field 0 reason "$T/mt.json"); checked $(mt_checked))" \
	python3 -c "import sys; assert sys.argv[1] == 'correct' and int(sys.argv[2]) >= 1" \
	"$(line_field 0 status "$T/mt.json")" "$(mt_checked)"

# PyTorch's inputs told from fresh ones (issue 37, forge.sh's mix_detect on
# the device): every run's inputs are get_inputs() under its own seed, so
# none is a mix of sets it remembers (it returns 77 from a run it tells so),
# and runs are checked after their call
$KLOOP eval tests/fixtures/torch/softmax.py $V/mix_detect.cu --backend cuda --sandbox --budget 0.5 \
	--timeout 120 --json >"$T/mx.json" 2>"$T/mx.json.err"
check "mix_detect.cu, PyTorch's inputs on the GPU: correct, no run's inputs a mix of sets it had seen ($(line_field 0 status "$T/mx.json"): $(line_field 0 reason "$T/mx.json"))" \
	test "$(line_field 0 status "$T/mx.json")" = correct
check "mix_detect.cu: timed runs checked after their call ($(line_field 0 timing.checked_after_runs "$T/mx.json"))" \
	python3 -c 'import sys; assert sys.argv[1] != "None" and int(sys.argv[1]) >= 1' \
	"$(line_field 0 timing.checked_after_runs "$T/mx.json")"

mkdir -p "$XDG_CONFIG_HOME/kloop"
printf 'api_key_env = MYLLM_KEY\n' >"$XDG_CONFIG_HOME/kloop/config"
MYLLM_KEY=kloop-secret-key-9e1 DATABASE_URL=postgres://u:kloop-secret-pw-9e1@db/x \
	ev "$T/env.json" $V/print_env.cu
rm -f "$XDG_CONFIG_HOME/kloop/config"
check "print_env.cu: crashed, and no secret in what it printed ($(line_field 0 status "$T/env.json"))" \
	sh -c "test '$(line_field 0 status "$T/env.json")' = crashed && ! grep -q 'kloop-secret-' '$T/env.json' '$T/env.json.err'"

case "$($KLOOP doctor | grep '^limits')" in
*"memory v"*)
	KLOOP_MEM_LIMIT_MB=1200 ev "$T/mh.json" $V/mem_hog.cu
	check "mem_hog.cu: its forks refused, then stopped at its memory limit, which the verdict names ($(line_field 0 status "$T/mh.json"): $(line_field 0 reason "$T/mh.json"))" \
		sh -c "test '$(line_field 0 status "$T/mh.json")' = crashed && grep -q 'memory limit was reached' '$T/mh.json'"
	;;
*) fail "kloop doctor names a memory limit for the candidate as a whole: $($KLOOP doctor | grep '^limits')" ;;
esac
KLOOP_TMP_LIMIT_MB=24 ev "$T/tf.json" $V/tmp_fill.cu
check "tmp_fill.cu: correct, its /tmp full below 64 MiB ($(line_field 0 status "$T/tf.json"): $(line_field 0 reason "$T/tf.json"))" \
	test "$(line_field 0 status "$T/tf.json")" = correct
check "threads.cu: its 16 threads are counted ($(line_field 0 timing.threads_left "$T/th.json"))" \
	test "$(line_field 0 timing.threads_left "$T/th.json")" = 16
