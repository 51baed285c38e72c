#!/bin/sh
# bench/gpu/edit.sh - issue 40's edit loop in a session (item 2: a hand
# edit's verdict in <= 0.6 s on an H200): `kloop shell` on the softmax CUDA
# seed, then `edit 1` eight times, each applying one real kernel edit of
# bench/edits/softmax_cu.json (bench/edits/apply.py as $EDITOR).  Prints
# each edit's seconds from the editor's save (candidate_added) to its
# verdict (eval_finished), and its stages: compile (and whether only its
# device code was built, hostpart.h: "yes", or "nolink" where it was
# written into the kept shared object, fatslot.h), load, check, time, end; then the
# medians.  Prints one "skip" line where there is no GPU.
# Usage: sh bench/gpu/edit.sh   (KLOOP_GPU_FLAGS adds flags, BACKEND=host
# and EDITS=FILE try it on the CPU with the C seed's edits)
set -u
cd "$(dirname "$0")/../.."
K=${KLOOP:-./bin/kloop}
O=${OUT:-/tmp/kloop-edit}
BACKEND=${BACKEND:-cuda}
EDITS=${EDITS:-bench/edits/softmax_cu.json}
mkdir -p "$O"
if [ "$BACKEND" = cuda ] && ! $K doctor --json 2>/dev/null | python3 -c 'import json,sys; sys.exit(0 if json.load(sys.stdin)["gpu"]["ok"] else 1)'; then
	echo "skip: no GPU (kloop doctor finds no usable CUDA device); edit.sh did not run"
	exit 0
fi
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-$O/cache}
N=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["edits"]))' "$EDITS")
S=$O/edit.jsonl
rm -f "$S" "$O/edit.state"
echo "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null); backend $BACKEND; $(date -u '+%F %H:%M UTC'); $(git rev-parse --short HEAD 2>/dev/null)"
i=0
: >"$O/edit.script"
while [ $i -lt "$N" ]; do
	echo "edit 1" >>"$O/edit.script"
	i=$((i + 1))
done
TASK=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["task"])' "$EDITS")
EDITOR="python3 $(pwd)/bench/edits/apply.py" KLOOP_EDITS=$EDITS KLOOP_EDIT_STATE=$O/edit.state \
	$K shell "$TASK" --backend "$BACKEND" ${KLOOP_GPU_FLAGS:-} --session "$S" \
	<"$O/edit.script" >"$O/edit.out" 2>"$O/edit.err"
echo "kloop shell exited $? ($(wc -l <"$O/edit.out") lines out, $(wc -l <"$O/edit.err") on stderr)"
# the session's worker, kept warm on the GPU for the next one, ends here
$K warm stop >/dev/null 2>&1
python3 - "$S" "$EDITS" <<'PY'
import json, sys
evs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
whats = [e["what"] for e in json.load(open(sys.argv[2]))["edits"]]
added, done = {}, {}
for e in evs:
    if e.get("type") == "candidate_added":
        added[e["id"]] = e
    elif e.get("type") == "eval_finished":
        done[e["candidate"]] = e
nan = float("nan")
def g(d, k):
    v = (d or {}).get(k)
    return v if isinstance(v, (int, float)) else nan
print("%-3s %-32s %6s | %7s %6s %6s %6s %6s %6s | %s" % ("id", "edit", "verdict", "compile", "dev",
      "load", "check", "time", "end", "status"))
walls, comps = [], []
k = 0
for cid in sorted(added):
    a = added[cid]
    if a.get("origin") != "human":
        continue
    f = done.get(cid)
    r = (f or {}).get("result") or {}
    sec, comp = r.get("seconds") or {}, r.get("compile") or {}
    wall = f["ts"] - a["ts"] if f else nan
    walls.append(wall)
    comps.append(g(comp, "seconds"))
    print("%-3s %-32s %6.2f | %7.3f %6s %6.3f %6.3f %6.3f %6.3f | %s %s" % (
        cid, whats[k] if k < len(whats) else "?", wall, g(comp, "seconds"),
        ("nolink" if comp.get("no_link") else "yes") if comp.get("device_only") else "no",
        g(sec, "load"), g(sec, "check"),
        g(sec, "time"), g(sec, "end"), r.get("status"),
        (r.get("reason") or r.get("not_timed") or "")[:60]))
    k += 1
def med(v):
    v = sorted(x for x in v if x == x)
    return v[len(v) // 2] if v else nan
print("median: edit to verdict %.2f s, compile %.3f s over %d edits" % (med(walls), med(comps), len(walls)))
PY
