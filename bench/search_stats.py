#!/usr/bin/env python3
"""bench/search_stats.py JOURNAL... - a search's figures from its journal:
best speedup per round, candidates evaluated per minute of search wall time,
and the time spent in compile / check / time (summed over evaluations, from
each result's "seconds") and waiting on the LLM (summed request latency), as
shares of the wall time (work overlaps, so shares may add up past 100%)."""
import json
import sys


def stats(path):
    ev = [json.loads(l) for l in open(path) if l.strip()]
    task = next((e.get("task") for e in ev if e["type"] == "session_started"), "?")
    rounds = [(e["round"], e.get("best_speedup", -1)) for e in ev if e["type"] == "round_finished"]
    wall = max([e.get("elapsed_s", 0) for e in ev if "elapsed_s" in e] or [0])
    res = [e["result"] for e in ev if e["type"] == "eval_finished"]
    sec = {"compile": 0.0, "load": 0.0, "check": 0.0, "time": 0.0}
    for r in res:
        s = r.get("seconds")
        if isinstance(s, dict):
            for k in sec:
                sec[k] += s.get(k) or 0
    llm = sum(e.get("latency_s") or 0 for e in ev if e["type"] == "llm_response")
    fin = [e.get("reason") for e in ev if e["type"] == "search_finished"]
    best = [e for e in ev if e["type"] == "new_best"]
    print("%s (%s)" % (task, path))
    print("  best speedup per round: %s" % (", ".join("r%d %.3gx" % (r, b) for r, b in rounds) or "-"))
    print("  best: %s" % ("%.3gx (candidate %d)" % (best[-1]["speedup"], best[-1]["candidate"]) if best else "-"))
    print("  %d candidates evaluated in %.1f s: %.1f per minute" % (
        len(res), wall, len(res) / (wall / 60) if wall > 0 else 0))
    if wall > 0:
        print("  share of wall time: compile %.0f%%, load %.0f%%, check %.0f%%, time %.0f%%, LLM wait %.0f%%" % (
            100 * sec["compile"] / wall, 100 * sec["load"] / wall, 100 * sec["check"] / wall,
            100 * sec["time"] / wall, 100 * llm / wall))
    print("  stopped: %s" % (fin[0] if fin else "(not finished)"))


for p in sys.argv[1:]:
    stats(p)
