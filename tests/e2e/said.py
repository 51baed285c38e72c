"""said.py FILE... - each verdict in FILE (`kloop eval --json` lines, or a
session journal's eval_finished events) as "NAME: status: reason", joined by
"; " on one line: what a check about verdicts prints of what it got."""
import json
import sys

out = []
for p in sys.argv[1:]:
    try:
        lines = open(p, errors="replace").read().splitlines()
    except OSError as e:
        out.append("%s: %s" % (p, e.strerror))
        continue
    for line in lines:
        try:
            j = json.loads(line)
        except ValueError:
            continue
        if not isinstance(j, dict):
            continue
        if j.get("type") == "eval_finished":
            name, r = "#%s" % j.get("candidate"), j.get("result") or {}
        elif "status" in j:
            name, r = str(j.get("source") or j.get("name") or "?").split("/")[-1], j
        else:
            continue
        if not isinstance(r, dict):
            continue
        t = r.get("timing") if isinstance(r.get("timing"), dict) else {}
        extra = t.get("clock_bound") or ""
        out.append("%s: %s: %s%s" % (name, r.get("status"), str(r.get("reason") or "")[:300],
                                      (" [" + str(extra)[:300] + "]") if extra else ""))
print(("; ".join(out) if out else "no verdict").replace("\033", ""))
