"""no_win.py FILE [NAME CONTROL] - exit 0 when a hostile candidate's verdict
in FILE (`kloop eval --json` lines) is no forged win: it is incorrect,
crashed, refused (compile_error), stopped at its time limit (timeout: no
result, so no time at all), or its time unverified, or no faster than
0.8 of its honest control's; and the control is correct (issue 37's rule for
a hostile class).  The hostile candidate and its control are the first two
lines, or the lines of the candidates whose files are named NAME and
CONTROL."""
import json
import sys

r = []
for line in open(sys.argv[1]).read().splitlines():
    try:
        v = json.loads(line)
    except ValueError:
        continue
    if isinstance(v, dict):
        r.append(v)


def named(n):
    for v in r:
        if str(v.get("source", "")).split("/")[-1] == n:
            return v
    return None


a, s = (named(sys.argv[2]), named(sys.argv[3])) if len(sys.argv) > 3 else \
    (r + [None, None])[:2]
if a is None or s is None:
    sys.exit(1)
t = a.get("timing") if isinstance(a.get("timing"), dict) else {}
ok = (a.get("status") in ("incorrect", "crashed", "compile_error", "timeout")
      or t.get("verified") is False
      or (a.get("time_ms") or 0) >= 0.8 * (s.get("time_ms") or 0))
sys.exit(0 if ok and s.get("status") == "correct" else 1)
