#!/usr/bin/env python3
"""include_cycles.py - find the include circles of kloop's C sources.

A module is a file's path without its extension: X.c and X.h are one node
"X".  X points to Y when X.c or X.h includes "Y.h" (quoted includes only,
resolved as the compiler does: the including file's folder first, then the
Makefile's -I folders).  Every elementary cycle of that graph is printed as
"not ok - include cycle: a -> b -> a"; with none, one "ok - " line.  The
exit status is 1 when there is a cycle.

Usage: scripts/include_cycles.py [ROOT]   (ROOT: the checkout, default ..)
"""
import os
import re
import sys

FOLDERS = ["cli", "tui", "sessions", "engine", "worker", "include"]
# the Makefile's -I folders, lowest layer first (a name is found in the first);
# engine/measure's and sessions' are their sub-folders, one concept each
# (MEASURE_DIRS, SESS_DIRS)
MEASURE_DIRS = ["harness", "verdict", "backend", "runner", "compile", "pool", "reference",
                "profile"]
SESS_DIRS = ["model", "driver", "search", "archive"]
INC_PATH = (["include", "engine"] + ["engine/measure/" + d for d in MEASURE_DIRS] +
            ["engine/code", "engine/llm"] + ["sessions/" + d for d in SESS_DIRS] +
            ["tui", "cli"])

# ---- known exceptions: ONE place, each with its reason ----
# (from, to): an edge left out of the graph, the one that points back.
# Remove an entry once the branch that breaks its loop has merged (a stale
# entry, whose edge is gone, is reported).
KNOWN = {
}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def sources(root):
    for top in FOLDERS:
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for f in files:
                if f.endswith((".c", ".h")):
                    yield os.path.relpath(os.path.join(dirpath, f), root)


def resolve(root, here, name):
    for d in [os.path.dirname(here)] + INC_PATH:
        p = os.path.normpath(os.path.join(d, name))
        if os.path.isfile(os.path.join(root, p)):
            return p
    return None  # a system or generated header


def module(path):
    """The module a file belongs to: X.c and X.h are X, and so is X's
    private header X_priv.h (what X's own files share)."""
    node = os.path.splitext(path)[0]
    if path.endswith(".h") and node.endswith("_priv"):
        return node[: -len("_priv")]
    return node


def graph(root, known=None):
    """The graph {node: set of nodes}, without the edges of known (which are
    added to it when seen, if it is a set)."""
    g = {}
    for f in sources(root):
        node = module(f)
        g.setdefault(node, set())
        with open(os.path.join(root, f), encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        for name in INCLUDE.findall(text):
            p = resolve(root, f, name)
            if not p:
                continue
            to = module(p)
            if to == node:
                continue
            if (node, to) in KNOWN:
                if known is not None:
                    known.add((node, to))
                continue
            g[node].add(to)
            g.setdefault(to, set())
    return g


def cycles(g):
    """Every elementary cycle, each once, starting at its least node."""
    out = []
    nodes = sorted(g)
    order = {n: i for i, n in enumerate(nodes)}
    for start in nodes:
        # only nodes after start: each cycle is found from its least node
        stack = [(start, iter(sorted(g[start])))]
        path = [start]
        on = {start}
        while stack:
            node, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                stack.pop()
                on.discard(path.pop())
                continue
            if nxt == start:
                out.append(path + [start])
            elif order[nxt] > order[start] and nxt not in on:
                path.append(nxt)
                on.add(nxt)
                stack.append((nxt, iter(sorted(g[nxt]))))
    return out


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    seen = set()
    g = graph(root, seen)
    found = cycles(g)
    for c in found:
        print("not ok - include cycle: " + " -> ".join(c))
    for (a, b), why in sorted(KNOWN.items()):
        if (a, b) in seen:
            print("# known exception, left out: %s -> %s (%s)" % (a, b, why))
        else:
            print("# known exception no longer needed (remove it): %s -> %s" % (a, b))
    if not found:
        print("ok - no include cycle among %d modules of %s" % (len(g), " ".join(FOLDERS)))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
