#!/usr/bin/env python3
"""bench/search_stats.py JOURNAL... - a search's figures from its journal:
best speedup per round, candidates evaluated per minute of search wall time,
and the time spent in compile / check / time (summed over evaluations, from
each result's "seconds") and waiting on the LLM (summed request latency), as
shares of the wall time (work overlaps, so shares may add up past 100%); and
the share of the search's wall time (search_started to its end, by the
events' ts) in which no evaluation was queued or running: the time the
worker(s) sat idle while the search waited (on the LLM, or on itself), and
how many rounds were open at once at most; and the cascade's stages
(compile, small shapes, full shapes, quick timing, full timing, a/b) summed
over evaluations; and the rate after the first evaluation (whose time is
mostly the worker's start: PyTorch, the eager and torch.compile baselines),
with where that setup went (the first result's reference_data.setup).
"""
import json
import sys


def worker_idle(ev):
    """(seconds with no evaluation queued or running, seconds) between
    search_started and the search's end, or None"""
    t0 = next((e["ts"] for e in ev if e["type"] == "search_started"), None)
    t1 = next((e["ts"] for e in ev if e["type"] in ("search_finished", "search_stopped")), None)
    if t0 is None or t1 is None or t1 <= t0:
        return None
    # evaluations are followed from the journal's start: one started before
    # the search (its seed's, with the reference's and the baseline's set-up)
    # keeps the worker busy into it; busy spans are clipped to the search
    busy, since, n = 0.0, None, 0
    for e in ev:
        if e["type"] not in ("eval_started", "eval_finished") or e["ts"] > t1:
            continue
        if e["type"] == "eval_started":
            if n == 0:
                since = e["ts"]
            n += 1
        elif n > 0:
            n -= 1
            if n == 0:
                busy += max(0.0, e["ts"] - max(since, t0))
    if n > 0:
        busy += t1 - max(since, t0)
    return (t1 - t0 - busy, t1 - t0)


def max_open(ev):
    n = m = 0
    for e in ev:
        if e["type"] == "round_started" and e.get("round", 0) >= 1:
            n += 1
            m = max(m, n)
        elif e["type"] == "round_finished" and e.get("round", 0) >= 1:
            n -= 1
    return m


def fmt_s(v):
    return "%.1f s" % v if isinstance(v, (int, float)) else "-"


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
    idle, maxOpen = worker_idle(ev), max_open(ev)
    fin = [e.get("reason") for e in ev if e["type"] == "search_finished"]
    best = [e for e in ev if e["type"] == "new_best"]
    print("%s (%s)" % (task, path))
    print("  best speedup per round: %s" % (", ".join("r%d %.3gx" % (r, b) for r, b in rounds) or "-"))
    print("  best: %s" % ("%.3gx (candidate %d)" % (best[-1]["speedup"], best[-1]["candidate"]) if best else "-"))
    print("  %d candidates evaluated in %.1f s: %.1f per minute" % (
        len(res), wall, len(res) / (wall / 60) if wall > 0 else 0))
    # the steady state: from the end of the first evaluation (the seed's,
    # which also pays the worker's start: PyTorch's import and the eager and
    # torch.compile baselines) to the end of the search
    t0 = next((e["ts"] for e in ev if e["type"] == "search_started" and "ts" in e), None)
    fins = [e["ts"] for e in ev if e["type"] == "eval_finished" and "ts" in e]
    if t0 is not None and len(fins) > 1 and fins[-1] > fins[0]:
        print("  after the first evaluation (%.1f s: the worker's start and the baselines): "
              "%d in %.1f s: %.1f per minute" % (fins[0] - t0, len(fins) - 1, fins[-1] - fins[0],
                                                 (len(fins) - 1) / ((fins[-1] - fins[0]) / 60)))
    # where the worker's setup went (the first candidate waited for it)
    su = next((r["reference_data"]["setup"] for r in res
               if isinstance((r.get("reference_data") or {}).get("setup"), dict)), None)
    if su:
        print("  the worker's setup: %.1f s (PyTorch start %s, reference data %s, baselines %s%s, "
              "the helper's end %s)" % (
                  su.get("seconds", 0), fmt_s(su.get("helper")), fmt_s(su.get("reference_data")),
                  fmt_s(su.get("baselines")),
                  ", cached" if su.get("baselines_cached") else
                  (", torch.compile compiling %s" % fmt_s(su.get("torch_compile")) if "torch_compile" in su
                   else ""), fmt_s(su.get("helper_end"))))
    # torch.compile's baseline compiled in the background (a search on the GPU)
    cb = [e for e in ev if e["type"] == "compile_baseline"]
    for e in cb:
        c = e.get("compile") or {}
        if "median_ms" in c:
            print("  torch.compile's baseline, compiled in the background: %.4g ms; compiling took "
                  "%s, %d benchmarks were given the GPU for %s between candidates; in %s after "
                  "the search started" % (
                      c["median_ms"], fmt_s(c.get("compile_seconds")), c.get("benchmarks", 0),
                      fmt_s(c.get("benchmark_seconds")),
                      fmt_s(e["ts"] - t0 if t0 is not None and "ts" in e else None)))
        else:
            print("  torch.compile's baseline, compiled in the background: %s" % c.get("error", "?"))
    if cb:
        k = ev.index(cb[0])
        before = [e for e in ev[:k] if e["type"] == "eval_finished"
                  and isinstance(e["result"].get("speedup"), (int, float))]
        after = [e for e in ev[k:] if e["type"] == "eval_finished"
                 and isinstance(e["result"].get("speedup_compile"), (int, float))]
        print("  correct results before it: %d (the compile_baseline event gives them their speedup "
              "against torch.compile); after it, carrying their own: %d" % (len(before), len(after)))
    if wall > 0:
        print("  share of wall time: compile %.0f%%, load %.0f%%, check %.0f%%, time %.0f%%, LLM wait %.0f%%" % (
            100 * sec["compile"] / wall, 100 * sec["load"] / wall, 100 * sec["check"] / wall,
            100 * sec["time"] / wall, 100 * llm / wall))
    # the cascade's stages, summed over evaluations (each result's "stages")
    st = {}
    for r in res:
        for s in r.get("stages") or []:
            if isinstance(s, dict) and isinstance(s.get("seconds"), (int, float)):
                st[s.get("stage", "?")] = st.get(s.get("stage", "?"), 0.0) + s["seconds"]
    if st and wall > 0:
        print("  cascade stages, summed: " + ", ".join(
            "%s %.1f s (%.0f%%)" % (k, v, 100 * v / wall) for k, v in st.items()))
    if idle is not None:
        print("  worker idle (no evaluation queued or running): %.0f%% of %.1f s; rounds open at once: %d" % (
            100 * idle[0] / idle[1], idle[1], maxOpen))
    print("  stopped: %s" % (fin[0] if fin else "(not finished)"))


for p in sys.argv[1:]:
    stats(p)
