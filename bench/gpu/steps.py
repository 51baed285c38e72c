#!/usr/bin/env python3
"""bench/gpu/steps.py - where a verdict's time goes: reads the lines that
KLOOP_STEP_TRACE=FILE had kloop's worker append (util.h's step_trace: a
runner's setup mapped, its frames, its load; each timing's warm-up,
counted runs, checks, profiled runs, checks after, batch and run after
timing) and prints, per step, how many, the median, the least and the
most milliseconds, in the order the steps first came.
Usage: python3 bench/gpu/steps.py FILE [FILE ...]"""
import json
import statistics
import sys


def main(paths):
    seen, order = {}, []
    for p in paths:
        with open(p) as f:
            for n, line in enumerate(f, 1):
                try:
                    e = json.loads(line)
                    what, ms = str(e["what"]), float(e["ms"])
                except (ValueError, KeyError, TypeError) as err:
                    print("%s:%d: not a step (%s)" % (p, n, err), file=sys.stderr)
                    continue
                if what not in seen:
                    seen[what] = []
                    order.append(what)
                seen[what].append(ms)
    if not order:
        print("no steps in %s" % ", ".join(paths))
        return 1
    print("%-36s %5s %9s %9s %9s" % ("step", "n", "median", "least", "most"))
    for w in order:
        v = seen[w]
        print("%-36s %5d %9.2f %9.2f %9.2f" % (w, len(v), statistics.median(v), min(v), max(v)))
    return 0


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print(__doc__.split("Usage: ")[1].strip(), file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1:]))
