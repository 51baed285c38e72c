#!/usr/bin/env python3
"""bench/gpu/pool_stats.py - one arm of bench/gpu/pool.sh in figures.

  pool_stats.py ARM RESULTS WALL_S CPU_BUSY [GPU_UTIL_CSV]

RESULTS is `kloop eval --json`'s output (one result a line) or a session
journal (a search's: its eval_finished events' results).  Prints one
line of tab-separated figures (after a header line when ARM is "-header")
and, on stderr, the per-worker detail:
  candidates, timed (the rest: "not timed again", the same machine code as
  an earlier one, or no timing: a failed check), correct, wall seconds,
  candidates a minute; per candidate, medians of the stages kloop records in
  each result's "seconds" (compile, load = the runner's start, end = its
  end, check, time) and their sums' shares of the summed cost; the GPU's
  share (check + time over all stages); the CPU's busy share over the run
  (every core, /proc/stat); the GPUs' mean utilisation (nvidia-smi samples);
  per worker: its candidates and the median kernel time (the kernels differ
  by one constant, so the medians of two GPUs should agree within the noise).
  On stderr also the spares' start: the seconds a worker spent starting
  spare runners while a candidate ran ("seconds.spares", part of its load
  and end: the fork and exec on the candidate's path; the context is the
  spare's own).
"""
import collections
import json
import statistics as st
import sys

STAGES = ("compile", "load", "end", "check", "time")
HEAD = ["arm", "cands", "timed", "correct", "wall_s", "per_min"] + \
       ["med_%s_s" % s for s in STAGES] + ["share_%s" % s for s in STAGES] + \
       ["gpu_share", "cpu_busy", "gpu_util", "per_worker"]


def results(path):
    out = []
    for line in open(path):
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            o = json.loads(line)
        except ValueError:
            continue
        if o.get("type") == "eval_finished":
            o = o.get("result") or {}
        elif "type" in o:
            continue
        if "status" in o:
            out.append(o)
    return out


def main():
    if sys.argv[1] == "-header":
        print("\t".join(HEAD))
        return
    arm, path, wall, cpu = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
    rs = results(path)
    n = len(rs)
    timed = sum(1 for r in rs if r.get("time_ms") is not None and not r.get("not_timed"))
    ok = sum(1 for r in rs if r.get("status") == "correct")
    sec = {s: [float((r.get("seconds") or {}).get(s) or 0) for r in rs] for s in STAGES}
    tot = {s: sum(v) for s, v in sec.items()}
    allt = sum(tot.values()) or 1
    med = {s: (st.median(v) if v else 0) for s, v in sec.items()}
    by = collections.defaultdict(list)
    for r in rs:
        w = (r.get("worker") or {}).get("label", "?")
        if r.get("time_ms") is not None and not r.get("not_timed"):
            by[w].append(float(r["time_ms"]))
        else:
            by[w]
    util = ""
    if len(sys.argv) > 5:
        u = collections.defaultdict(list)
        try:
            for line in open(sys.argv[5]):
                p = [x.strip() for x in line.split(",")]
                if len(p) == 2 and p[1].replace(".", "", 1).isdigit():
                    u[p[0]].append(float(p[1]))
        except OSError:
            pass
        util = " ".join("gpu%s:%.0f%%" % (k, st.mean(v)) for k, v in sorted(u.items()) if v)
    per_worker = " ".join("%s:%d/%s" % (k, len(v), "%.4fms" % st.median(v) if v else "-")
                          for k, v in sorted(by.items()))
    row = [arm, n, timed, ok, "%.1f" % wall, "%.1f" % (60 * n / wall if wall > 0 else 0)]
    row += ["%.3f" % med[s] for s in STAGES]
    row += ["%.0f%%" % (100 * tot[s] / allt) for s in STAGES]
    row += ["%.0f%%" % (100 * (tot["check"] + tot["time"]) / allt), cpu, util or "-", per_worker]
    print("\t".join(str(x) for x in row))
    sp = [float((r.get("seconds") or {}).get("spares") or 0) for r in rs
          if "spares" in (r.get("seconds") or {})]
    if sp:
        print("  %s spares' start on the candidates' path: median %.4f s, max %.4f s, %.2f s in all" %
              (arm, st.median(sp), max(sp), sum(sp)), file=sys.stderr)
    for k, v in sorted(by.items()):
        if len(v) >= 2:
            print("  %s %s: %d timed, kernel median %.4f ms (min %.4f, max %.4f)" %
                  (arm, k, len(v), st.median(v), min(v), max(v)), file=sys.stderr)


if __name__ == "__main__":
    main()
