# profile.sh - profiler facts: the host compiler's vectorisation remarks in
# a result (apart from its warnings) and beside the ptxas report in :show;
# Nsight Compute's CSV (a capture from an H100) read into bandwidth,
# occupancy and top stall, journaled for a candidate and shown by :show and
# in the LLM's prompt; `:profile ID` without ncu says why, and with a
# stand-in for ncu journals what it wrote.  On the GPU with ncu installed,
# tests/e2e/profile_cuda.sh runs ncu itself.
. tests/e2e/lib.sh
B="--backend host --budget 0.2 --trials 2"
CSV=tests/fixtures/ncu/h100_softmax_sgemm_raw.csv
S="$T/s.jsonl"

$KLOOP eval softmax tasks/softmax/seed.c $B --session "$S" --json >"$T/r.json" 2>"$T/err"
check "a host result lists the loops the compiler vectorised (line 30 of the softmax seed)" python3 -c "
import json; c=json.load(open('$T/r.json'))['compile']
v=c['vectorized']; assert any(x['line']==30 and 'vectorized' in x['message'] for x in v), v
assert 'optimized:' not in c['log'], c['log']"
printf 'show 1\n' | $KLOOP shell --session "$S" >"$T/show" 2>&1
check ":show puts the vectoriser's remarks in the results" grep -q "^vector    line 30: loop vectorized using" "$T/show"

$KLOOP profile --parse $CSV --json >"$T/p.json" 2>"$T/err"
check "profile --parse reads ncu's CSV: the longest launch and its facts" python3 -c "
import json; p=json.load(open('$T/p.json'))
k=p['kernels'][p['main']]; assert 'sgemm' in k['name'] and k['occupancy_pct']==12.5, k
s=p['kernels'][1]; assert s['top_stall']=='long_scoreboard' and s['dram_bytes_per_s']>1e12, s
assert p['summary'].startswith('cutlass::Kernel2: 0.4234 ms, DRAM 45.2 GB/s'), p['summary']"
$KLOOP profile softmax tasks/softmax/seed.c --session "$S" --parse $CSV >"$T/out" 2>"$T/err"
check "a profile is journaled for the session's candidate with that source" grep -q '"type":"profile","candidate":1' "$S"
printf 'show 1\n' | $KLOOP shell --session "$S" >"$T/show2" 2>&1
check ":show puts Nsight Compute's facts in the results" \
	grep -q "^ncu       Nsight Compute (one run): cutlass::Kernel2: 0.4234 ms, DRAM 45.2 GB/s (1% of peak), occupancy 12% (theoretical 12%), top stall" "$T/show2"
$KLOOP profile softmax tests/fixtures/host/zeros.c --session "$S" --parse $CSV >"$T/out" 2>"$T/err"
check "a source the session does not have is refused" grep -q "has no candidate with the source of" "$T/err"

if fake_llm tests/fake_llm/softmax.json; then
	$KLOOP ideas softmax --session "$S" --provider openai --model fake-gpt \
		--base-url "http://127.0.0.1:$PORT/v1" $B >"$T/ideas.out" 2>"$T/ideas.err"
	check "the LLM's prompt carries Nsight Compute's facts and the vectoriser's remarks" \
		sh -c "grep -q 'Nsight Compute (one run): cutlass::Kernel2' '$T/server.log' && grep -q 'vector: line 30: loop vectorized' '$T/server.log'"
else
	fail "the fake LLM server starts"
fi

if ! command -v ncu >/dev/null 2>&1; then
	printf 'profile 1\n' | PATH=/usr/bin:/bin $KLOOP shell --session "$S" >"$T/pr" 2>&1
	check ":profile without Nsight Compute says so, naming the fix" \
		grep -q "profile of candidate 1 failed: Nsight Compute (ncu) cannot be run: install it or give --ncu PATH" "$T/pr"
else
	skip "profile: ncu is installed here; profile_cuda.sh runs it"
fi

# a stand-in for ncu: it runs the program after its options (the worker of
# the profile's own, engine/measure/profile/ncu_run.c) and then writes the H100
# capture as its CSV, so that the path from :profile to the journal runs here
mkdir -p "$T/fakencu"
cat >"$T/fakencu/ncu" <<'EOF'
#!/bin/sh
echo "$@" >"$FAKE_NCU_ARGS"
log=
while [ $# -gt 0 ]; do
	case "$1" in
	--log-file) log=$2; shift 2 ;;
	--csv) shift ;;
	--page | --target-processes | --metrics | --launch-count | --kernel-name-base | --kernel-name) shift 2 ;;
	*) break ;;
	esac
done
"$@"
rc=$?
cp "$FAKE_NCU_CSV" "$log"
exit $rc
EOF
chmod +x "$T/fakencu/ncu"
before=$(grep -c '"type":"profile","candidate":1' "$S")
printf 'profile 1\n' | FAKE_NCU_ARGS="$T/ncu.args" FAKE_NCU_CSV="$PWD/$CSV" PATH="$T/fakencu:/usr/bin:/bin" \
	$KLOOP shell --session "$S" >"$T/pr2" 2>&1
check ":profile runs ncu around a kloop-worker of its own, unsandboxed, and journals what ncu wrote" \
	grep -q 'candidate 1: ncu cutlass::Kernel2: 0.4234 ms' "$T/pr2"
check "ncu's program is a kloop-worker, unsandboxed ($(cat "$T/ncu.args" | tail -c 120))" \
	grep -q -- '--log-file .*/kloop-worker --backend host.* --no-sandbox$' "$T/ncu.args"
check "the profile is journaled for candidate 1" \
	test "$(grep -c '"type":"profile","candidate":1' "$S")" -eq $((before + 1))

# a profiler injected into the runner (ncu sets CUDA_INJECTION64_PATH in the
# environment of what it profiles): the runner does not confine itself (the
# profiler's hooks patch the code the confinement keeps unchangeable: on an
# H200 every runner died of SIGSEGV at the load under ncu), and its times
# are unverified, never a win.  Asked for the sandbox, such a worker runs its
# candidates without it and says so: in bubblewrap the profiler's injection
# reached the runner without what ties it to ncu and died (H200, ncu around
# kloop eval), and the runner is unconfined anyway
CUDA_INJECTION64_PATH=/nonexistent/libinjection.so $KLOOP eval softmax tasks/softmax/seed.c $B \
	--no-sandbox --json >"$T/inj.json" 2>"$T/inj.err"
check "a runner with a profiler injected is not confined, and its time is unverified ($(json confinement "$T/inj.json"); verified $(json timing.verified "$T/inj.json"))" \
	python3 -c "
import json; r=json.load(open('$T/inj.json'))
assert r['status'] == 'correct', r['status']
assert r['confinement'].startswith('none: a tool is injected'), r['confinement']
assert r['timing']['verified'] is False and 'not confined' in r['timing']['clock_bound'], r['timing']"
CUDA_INJECTION64_PATH=/nonexistent/libinjection.so $KLOOP eval softmax tasks/softmax/seed.c $B \
	--sandbox --json >"$T/inj2.json" 2>"$T/inj2.err"
check "... asked for the sandbox, it runs the candidate without it and says why ($(json sandbox "$T/inj2.json"); $(head -c 200 "$T/inj2.err"))" \
	python3 -c "
import json; r=json.load(open('$T/inj2.json'))
assert r['status'] == 'correct' and r['sandbox'] == 'none', r
assert r['confinement'].startswith('none: a tool is injected'), r['confinement']
assert r['timing']['verified'] is False, r['timing']
e=open('$T/inj2.err').read()
assert 'a profiler is injected into kloop-worker' in e and 'without bubblewrap' in e, e"

# Nsight Compute 2025's injection names no variable once loaded: it tracks
# the processes it follows by a configuration variable of its own and named
# pipes under /tmp/NVIDIA-treetracker-*, inherited (on an H200 a runner
# without them died of SIGSEGV in its first CUDA call).  With that
# configuration in the worker's environment the runner keeps those pipes,
# and no other descriptor: this candidate is correct only where descriptor 9
# (a pipe of the tracker's) is open in the runner, and 8 (another file) closed
mkdir -p "$T/NVIDIA-treetracker-test"
mkfifo "$T/NVIDIA-treetracker-test/pipe-0"
sed 's/^int kl_run(const kl_tensor \*in, int n_in, kl_tensor \*out, int n_out, void \*stream)$/&\n{\n\tif (fcntl(9, F_GETFD) < 0 || fcntl(8, F_GETFD) >= 0)\n\t\treturn 7;\n\treturn kl_run0(in, n_in, out, n_out, stream);\n}\nint kl_run0(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *stream)/' \
	tasks/softmax/seed.c >"$T/fds.c"
sed -i '1i #include <fcntl.h>\n#include "kloop.h"\nint kl_run0(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *stream);' "$T/fds.c"
env 'NVIDIA-PROCESS-TRACKING-CONFIGURATION=tree-tracker-id: /tmp/x' $KLOOP eval softmax "$T/fds.c" \
	$B --no-sandbox --json 9<>"$T/NVIDIA-treetracker-test/pipe-0" 8<"$T/fds.c" >"$T/trk.json" 2>"$T/trk.err"
check "under Nsight's process tracking the runner keeps its pipes, not other files, unconfined ($(json status "$T/trk.json"): $(json reason "$T/trk.json"))" \
	python3 -c "
import json; r=json.load(open('$T/trk.json'))
assert r['status'] == 'correct', r
assert r['confinement'].startswith('none: a tool is injected'), r['confinement']
assert r['timing']['verified'] is False, r['timing']"
$KLOOP eval softmax "$T/fds.c" $B --no-sandbox --json 9<>"$T/NVIDIA-treetracker-test/pipe-0" \
	>"$T/trk2.json" 2>"$T/trk2.err"
check "... and without a profiler it keeps none of them: the same candidate fails ($(json status "$T/trk2.json"))" \
	python3 -c "
import json; r=json.load(open('$T/trk2.json'))
assert r['status'] != 'correct' and r['confinement'].startswith('seccomp filter'), r"
