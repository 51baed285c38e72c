# same_call.sh - every call is the same call (issue 37): a hostile
# candidate of each class beside its honest control (the same file with the
# trick switched off, HONEST), judged by tests/e2e/no_win.py (incorrect,
# unverified, or no faster than 0.8 of the control), on the host backend,
# sandboxed.  batch_memo: its timed runs forged at 60% (the runner's timer
# start moved), its batch's runs answered from memory; pool_skip: the work
# skipped on plain-looking inputs once the checking sets kloop chose before
# the call are spent (it counts the varied ones).  Each won on acafdbb,
# before these checks (correct, verified, 0.6x and 0.1x of its control).  Their CUDA versions are in tests/fixtures/evil_cuda
# (sandbox_cuda.sh).
. tests/e2e/lib.sh
E=tests/fixtures/evil
if ! ./bin/kloop doctor | grep -q '^sandbox *ok'; then
	fail "bubblewrap runs here (kloop doctor: $(./bin/kloop doctor | grep '^sandbox'))"
	exit 0
fi
mkdir -p "$T/evil"
for f in batch_memo pool_skip; do
	{ grep '^#define _GNU_SOURCE' "$E/$f.c"; grep -v '#include "softmax_body.h"' "$E/softmax_body.h"
	  grep -v -e '#include "softmax_body.h"' -e '^#define _GNU_SOURCE' "$E/$f.c"; } >"$T/evil/$f.c"
	{ echo '#define HONEST 1'; cat "$T/evil/$f.c"; } >"$T/evil/${f}_honest.c"
done
V="$T/evil"
B="--backend host --budget 0.5"

# 1. the batch remembered (item 2): at a size whose runs are too short for
# each run's own CPU time to resolve a forgery at 60% (under 0.15 ms), the
# batch is what refutes it; its runs each on inputs of their own
cp -r tasks/softmax "$T/small"
python3 - "$T/small/task.json" <<'PY'
import json, sys
p = sys.argv[1]
d = json.load(open(p))
d["shapes"]["host"] = {"rows": 16, "cols": 1024}
json.dump(d, open(p, "w"), indent=1)
PY
$KLOOP eval "$T/small" $V/batch_memo.c $V/batch_memo_honest.c $B --json >"$T/bm.json" 2>"$T/bm.err"
n0=$NFAIL
check "batch_memo: its timed runs forged, its batch remembered, no forged win ($(said "$T/bm.json"))" \
	python3 tests/e2e/no_win.py "$T/bm.json"
diag "$n0" "$T/bm.json" "$T/bm.err"

# 2. the checked runs counted before the call (item 1): its slow warm-up
# and quick timing spend kloop's checking sets early (3 s of budget: time
# left to skip after them); the control's timing says runs were checked
# after their call
$KLOOP eval softmax $V/pool_skip.c $V/pool_skip_honest.c --backend host --budget 3 --json \
	>"$T/pk.json" 2>"$T/pk.err"
n0=$NFAIL
check "pool_skip: skipping the work on plain inputs once the checking sets are spent is caught, or no win ($(said "$T/pk.json"))" \
	python3 tests/e2e/no_win.py "$T/pk.json"
check "pool_skip's control: some of its timed runs checked after their call, some of its batch's" \
	python3 -c 'import json, sys
r = [json.loads(l) for l in open(sys.argv[1]) if l.strip()][1]
t = r["timing"]
assert t["checked_after_runs"] >= 1 and t.get("batch_checked_runs", 1) >= 1, t' "$T/pk.json"
diag "$n0" "$T/pk.json" "$T/pk.err"
