# profiled_cuda.sh - the profiled runs on the GPU (issue 39), kloop's
# default after a timing under 0.07 ms: the softmax seed at the host shapes
# (64 x 4096, a few microseconds) against the CUDA reference: its timing has profiled
# runs, each checked, and either their median is the timing's ("method":
# "kernel durations", within the agreement harness_profiled_agrees()
# allows of the events' median beside it) or the result says why not (a
# driver that lets only administrators profile, a runner whose
# confinement refuses the profiler).  (That every profiled run is checked,
# and a candidate that skips its profiled runs is caught: test_profiled.)
# At the full shapes the profiled runs are there exactly where the events'
# median is under 0.07 ms; KLOOP_CUPTI=0 asks for none.  A kernel on a
# stream of its own (own_stream.cu) is never timed by its stream's events
# alone.  Against the CUDA reference the candidate's profiled runs run (the
# reference's runner never holds the profiling hardware).  Skipped with
# one line without a GPU.
. tests/e2e/lib.sh
if ! $KLOOP doctor --json 2>/dev/null | python3 -c 'import json,sys; sys.exit(0 if json.load(sys.stdin)["gpu"]["ok"] else 1)'; then
	skip "profiled_cuda: no GPU here, the profiled runs did not run"
	exit 0
fi
export XDG_CACHE_HOME="${KLOOP_GPU_CACHE:-$T/cache}"
B="--backend cuda --shapes host --reference cuda --budget ${KLOOP_GPU_BUDGET:-1}"
unset KLOOP_CUPTI KLOOP_PROFILED_RUNS
$KLOOP eval softmax tasks/softmax/seed.cu $B --json >"$T/p.json" 2>"$T/p.err"
echo "# $(python3 -c "
import json; t=json.load(open('$T/p.json')).get('timing') or {}
print('method', t.get('method'), 'median', t.get('median_ms'), 'profiled', json.dumps(t.get('profiled')))" 2>&1)"
check "by default: the seed at the host shapes is correct, its timing has profiled runs, every one checked, and they stand or say why not ($(json status "$T/p.json" 2>/dev/null): $(json reason "$T/p.json" 2>/dev/null)$(head -c 300 "$T/p.err"))" python3 -c "
import json; r=json.load(open('$T/p.json')); t=r['timing']; p=t['profiled']
assert r['status'] == 'correct', r['status']
assert p['checked'] >= p['runs'] >= 1 or p.get('why_not'), p
assert (p['used'] and t['method'] == 'kernel durations' and t['median_ms'] <= p['events_median_ms'] * 1.02 + 0.0005) or (not p['used'] and p['why_not']), p"
# the reference's runner, kept for the worker's life, never holds the
# device's profiling hardware: the candidate's profiler opens its windows
# (before, every one failed CUPTI_ERROR_HARDWARE_BUSY against a CUDA
# reference, and a short kernel was timed by its events)
check "against the CUDA reference the candidate's profiled runs ran: its windows opened, none refused as the hardware busy ($(json timing.profiled.why_not "$T/p.json" 2>/dev/null))" python3 -c "
import json; p=json.load(open('$T/p.json'))['timing']['profiled']
assert p['runs'] >= 1 and 'HARDWARE_BUSY' not in (p.get('why_not') or ''), p"
# the full shapes: profiled runs exactly where the events read under 0.07 ms
$KLOOP eval softmax tasks/softmax/seed.cu --backend cuda --reference cuda --budget ${KLOOP_GPU_BUDGET:-1} --json >"$T/f.json" 2>"$T/f.err"
check "by default at the full shapes: profiled runs if and only if the events' median is under 0.07 ms ($(json status "$T/f.json" 2>/dev/null): $(json timing.median_ms "$T/f.json" 2>/dev/null) ms$(head -c 300 "$T/f.err"))" python3 -c "
import json; r=json.load(open('$T/f.json')); t=r['timing']; p=t.get('profiled')
assert r['status'] == 'correct', r['status']
em = p['events_median_ms'] if p and 'events_median_ms' in p else t['median_ms']
assert (p is not None) == (em < 0.07), (em, p)"
KLOOP_CUPTI=0 $KLOOP eval softmax tasks/softmax/seed.cu $B --json >"$T/z.json" 2>"$T/z.err"
check "KLOOP_CUPTI=0: no profiled runs, the events' time ($(json status "$T/z.json" 2>/dev/null): $(json timing.method "$T/z.json" 2>/dev/null)$(head -c 300 "$T/z.err"))" python3 -c "
import json; r=json.load(open('$T/z.json')); t=r['timing']
assert r['status'] == 'correct', r['status']
assert 'profiled' not in t and t['method'] in ('stream', 'device-wide'), t"
# a kernel on a stream of its own, a few microseconds at the host shapes:
# what the strict probes' allowance may not see, the profiler does; its
# time is never its stream's events alone
$KLOOP eval softmax tests/fixtures/cuda/own_stream.cu $B --json >"$T/o.json" 2>"$T/o.err"
echo "# own_stream: $(python3 -c "
import json; t=json.load(open('$T/o.json')).get('timing') or {}
print('method', t.get('method'), 'median', t.get('median_ms'), 'profiled', json.dumps(t.get('profiled')))" 2>&1)"
check "own_stream.cu's time is device-wide or its kernels', never its stream's events ($(json status "$T/o.json" 2>/dev/null): $(json timing.method "$T/o.json" 2>/dev/null)$(head -c 300 "$T/o.err"))" python3 -c "
import json; r=json.load(open('$T/o.json')); t=r['timing']
assert r['status'] == 'correct', r['status']
assert t['method'] in ('device-wide', 'kernel durations'), t['method']"
# a run of two kernels: the verdict has each one's median duration, in
# launch order (the first reads its row twice and takes the exponentials,
# the second only rescales it), and its words say so
$KLOOP eval softmax tests/fixtures/cuda/two_kernels.cu $B --json >"$T/k.json" 2>"$T/k.err"
$KLOOP eval softmax tests/fixtures/cuda/two_kernels.cu $B >"$T/k.txt" 2>&1
echo "# two_kernels: $(python3 -c "
import json; t=json.load(open('$T/k.json')).get('timing') or {}
print('method', t.get('method'), 'median', t.get('median_ms'), 'profiled', json.dumps(t.get('profiled')))" 2>&1)"
check "two_kernels.cu: each kernel's median in launch order, the first the longer, together the run's time ($(json status "$T/k.json" 2>/dev/null): $(json timing.profiled.per_kernel "$T/k.json" 2>/dev/null) $(json timing.profiled.why_not "$T/k.json" 2>/dev/null)$(head -c 300 "$T/k.err"))" python3 -c "
import json; r=json.load(open('$T/k.json')); t=r['timing']; p=t['profiled']
assert r['status'] == 'correct', r['status']
assert p['used'] and t['method'] == 'kernel durations' and p['kernels'] == 2, p
k = p['per_kernel']['median_ms']
assert len(k) == 2 and k[0] > k[1] > 0 and p['per_kernel']['order'] == 'launch', k
assert abs(sum(k) / t['median_ms'] - 1) < 0.15, (k, t['median_ms'])"
check "... and kloop eval's words say how it was timed, kernel by kernel ($(grep -a '^  method' "$T/k.txt"))" \
	grep -aq "^  method    its kernels' durations (gpu__time_duration.*kernel by kernel, in launch order: [0-9.]* us, [0-9.]* us" "$T/k.txt"
[ $NFAIL -eq 0 ]
