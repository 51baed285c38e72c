"""no_win.py FILE - exit 0 when the first verdict of FILE (`kloop eval --json`
lines: a hostile candidate, then its honest control) is no forged win: it is
incorrect, or its time unverified, or no faster than 0.8 of the control's;
and the control is correct (issue 37's rule for a hostile class)."""
import json
import sys

r = [json.loads(line) for line in open(sys.argv[1]).read().splitlines() if line.strip()]
if len(r) < 2:
    sys.exit(1)
a, s = r[0], r[1]
t = a.get("timing") if isinstance(a.get("timing"), dict) else {}
ok = (a.get("status") == "incorrect" or t.get("verified") is False or
      (a.get("time_ms") or 0) >= 0.8 * (s.get("time_ms") or 0))
sys.exit(0 if ok and s.get("status") == "correct" else 1)
