# profile_cuda.sh - Nsight Compute on the GPU: `kloop profile` runs ncu once
# on the softmax CUDA seed's kernel (only it: kloop's own kernels and the
# reference's are filtered out by name) and reports its bandwidth, occupancy
# and top stall; `:profile ID` in a session journals them.  Skipped with one
# line without a GPU or without ncu.  ncu around `kloop eval` too.
. tests/e2e/lib.sh
if ! command -v ncu >/dev/null 2>&1 || ! $KLOOP doctor --json 2>/dev/null |
	python3 -c 'import json,sys; sys.exit(0 if json.load(sys.stdin)["gpu"]["ok"] else 1)'; then
	skip "profile_cuda: no GPU or no Nsight Compute (ncu) here"
	exit 0
fi
export XDG_CACHE_HOME="${KLOOP_GPU_CACHE:-$T/cache}"
B="--backend cuda"
$KLOOP profile softmax tasks/softmax/seed.cu $B --json >"$T/p.json" 2>"$T/err"
check "kloop profile: ncu ran on the seed's kernel only ($(tail -c 300 "$T/err"))" python3 -c "
import json; p=json.load(open('$T/p.json'))
names={k['name'] for k in p['kernels']}; assert names and all('softmax_rows' in n for n in names), names
k=p['kernels'][p['main']]
assert k['dram_bytes_per_s']>1e9 and 0<k['occupancy_pct']<=100 and k['top_stall'], k
print('#', p['summary'])"
S="$T/s.jsonl"
$KLOOP eval softmax tasks/softmax/seed.cu $B --budget 0.5 --session "$S" >/dev/null 2>&1
printf 'profile 1\nshow 1\n' | $KLOOP shell --session "$S" >"$T/sh" 2>&1
f0=$NFAIL
check ":profile 1 profiles the seed's kernel" grep -q "candidate 1: ncu softmax_rows: .* ms, DRAM" "$T/sh"
check "... journals the profile, and :show lists it" sh -c "
grep -q '\"type\":\"profile\",\"candidate\":1' '$S' &&
grep -q '^ncu       Nsight Compute (one run): softmax_rows: ' '$T/sh'"
diag "$f0" "$T/sh"

# ncu around kloop eval itself, sandbox asked for: the worker runs its
# candidates where ncu can follow them (in bubblewrap its injection died in
# the runner's first CUDA call), unconfined, their times unverified, and ncu
# profiles the candidate's kernel
ncu --target-processes all --launch-count 2 --kernel-name-base function \
	--kernel-name 'regex:^(softmax_rows)(<.*)?$' $KLOOP eval softmax tasks/softmax/seed.cu $B \
	--reference cuda --sandbox --trials 1 --budget 0.05 --json >"$T/n.out" 2>"$T/n.err"
f0=$NFAIL
check "ncu around kloop eval: the seed correct, unsandboxed, unverified, and its kernel profiled" python3 -c "
import json
lines=open('$T/n.out').read().splitlines()
r=[json.loads(l) for l in lines if l.startswith('{')][0]
assert r['status']=='correct' and r['sandbox']=='none', r
assert r['timing']['verified'] is False, r['timing']
assert sum(l.startswith('==PROF== Profiling \"softmax_rows\"') for l in lines)==2, lines"
check "... and the worker says why it left the sandbox" grep -q "a profiler is injected into kloop-worker" "$T/n.err"
diag "$f0" "$T/n.out" "$T/n.err"
