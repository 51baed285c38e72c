#!/usr/bin/env python3
"""call_circles.py - find the call circles inside kloop's source folders.

From the built objects (ROOT/build/**/*.o, after make), with nm: a file A
calls a file B of the same folder when a symbol A leaves undefined (U) is
one B defines (a global symbol: T, D, B, R and the like; static functions,
and the static inline ones of headers, are no symbols and do not count).
Every strongly connected component of more than one file of that graph is
a call circle, printed as "not ok - call circle in FOLDER: a.c <-> b.c
(a.c -> b.c: sym, ...; b.c -> a.c: ...)"; with none, one "ok - " line.
The exit status is 1 when there is a circle (the known exceptions below
aside).  A file that owns a concept is called and does not call back into
its callers (docs/ARCHITECTURE.md; /work/shared/STYLE.md).

A folder is the one a file is in: each sub-folder of engine/measure
(harness/, runner/, pool/, ...) and of sessions (model/, driver/, search/,
archive/) is a folder of its own.  A folder split into sub-folders (one
with no source file of its own, as engine/measure and sessions) is checked
as a whole as well, so that a circle between its sub-folders is found too:
"not ok - call circle across engine/measure/: harness/a.c <-> runner/b.c"
(a circle inside one sub-folder is reported once, as that sub-folder's).

Objects whose source file is gone (a stale build) are left out.

Usage: scripts/call_circles.py [ROOT]   (ROOT: the checkout, default ..)
"""
import os
import subprocess
import sys

FOLDERS = ["cli", "tui", "sessions", "engine", "worker"]

# ---- known exceptions: ONE place, each with its reason ----
# A circle all of whose files are in one entry's set is reported with a
# "#" line, not as a failure.  Remove an entry once the branch that breaks
# its circle has merged (an entry no circle needs any more is reported).
KNOWN = {
}

# nm's letters of a defined global symbol (lowercase ones are local)
DEFINED = set("TDBRGSVWCui")


def objects(root):
    """Each object of ours with its source file: (object path, "dir/x.c")."""
    build = os.path.join(root, "build")
    for top in FOLDERS:
        for dirpath, _, files in os.walk(os.path.join(build, top)):
            for f in sorted(files):
                if not f.endswith(".o"):
                    continue
                obj = os.path.join(dirpath, f)
                src = os.path.relpath(obj, build)[: -len(".o")] + ".c"
                if os.path.isfile(os.path.join(root, src)):
                    yield obj, src


def symbols(objs):
    """{object: (defined, undefined)}: the global symbols each object defines
    and the ones it leaves to others (one nm for them all)."""
    out = {o: (set(), set()) for o in objs}
    if not objs:
        return out
    text = subprocess.run(["nm", "-P", "-A"] + list(objs), capture_output=True, text=True,
                          check=True).stdout
    for line in text.splitlines():
        head, sep, rest = line.partition(": ")
        parts = rest.split()
        if not sep or head not in out or len(parts) < 2:
            continue
        name, kind = parts[0], parts[1]
        if kind == "U":
            out[head][1].add(name)
        elif kind in DEFINED:
            out[head][0].add(name)
    return out


def split_folders(folders):
    """The folders split into sub-folders: each parent of a folder in
    folders that holds no source file of its own (a top folder too, as
    sessions)."""
    out = set()
    for f in folders:
        parent = os.path.dirname(f)
        if parent and parent not in folders:
            out.add(parent)
    return out


def graph(root):
    """({folder: {file: {callee file: sorted symbols}}}, the split folders):
    each folder of sources, and each folder split into sub-folders as a
    whole."""
    objs = dict(objects(root))
    syms = symbols(sorted(objs))
    files = {}  # folder -> {src: (defined, undefined)}
    for obj, src in objs.items():
        files.setdefault(os.path.dirname(src), {})[src] = syms[obj]
    splits = split_folders(set(files))
    for split in splits:
        for folder in list(files):
            if folder.startswith(split + "/"):
                files.setdefault(split, {}).update(files[folder])
    g = {}
    for folder, fs in files.items():
        owner = {}
        for src, (defined, _) in fs.items():
            for s in defined:
                owner[s] = src
        edges = {src: {} for src in fs}
        for src, (_, undefined) in fs.items():
            for s in undefined:
                to = owner.get(s)
                if to and to != src:
                    edges[src].setdefault(to, []).append(s)
        for src in edges:
            for to in edges[src]:
                edges[src][to].sort()
        g[folder] = edges
    return g, splits


def components(edges):
    """The strongly connected components of more than one node (Tarjan's,
    without recursion), each sorted, in the order of their least node."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = 0
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on.add(start)
        while work:
            node, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on.add(nxt)
                    work.append((nxt, iter(sorted(edges[nxt]))))
                elif nxt in on:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    n = stack.pop()
                    on.discard(n)
                    comp.append(n)
                    if n == node:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return sorted(out)


def describe(edges, comp, folder):
    """The calls inside a circle, one "#" line per arrow: "#   a.c -> b.c:
    f, g" (four symbols at most; each file named from folder)."""
    lines = []
    for a in comp:
        for b in comp:
            syms = edges[a].get(b)
            if syms:
                more = " (+%d)" % (len(syms) - 4) if len(syms) > 4 else ""
                lines.append("#   %s -> %s: %s%s" % (os.path.relpath(a, folder),
                                                    os.path.relpath(b, folder),
                                                    ", ".join(syms[:4]), more))
    return lines


def known(comp):
    for files, why in KNOWN.items():
        if set(comp) <= set(files):
            return files, why
    return None, None


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    g, splits = graph(root)
    if not g:
        print("not ok - call circles: no objects under %s (run make first)" %
              os.path.join(root, "build"))
        return 1
    found, used = [], set()
    nfiles = 0
    for folder in sorted(g):
        split = folder in splits
        if not split:
            nfiles += len(g[folder])
        for comp in components(g[folder]):
            if split and len({os.path.dirname(f) for f in comp}) == 1:
                continue  # inside one sub-folder: reported as that folder's
            line = "call circle %s %s/: %s" % ("across" if split else "in", folder,
                                               " <-> ".join(os.path.relpath(f, folder)
                                                            for f in comp))
            files, why = known(comp)
            if files:
                used.add(files)
                print("# known exception (%s): %s" % (why, line))
            else:
                found.append(comp)
                print("not ok - " + line)
            for arrow in describe(g[folder], comp, folder):
                print(arrow)
    for files in sorted(KNOWN):
        if files not in used and all(os.path.isfile(os.path.join(root, f)) for f in files[:1]):
            print("# known exception no longer needed (remove it): %s" % " ".join(files))
    if not found:
        across = "; none across the sub-folders of %s" % " ".join(sorted(splits)) if splits else ""
        print("ok - no call circle inside a folder among %d files of %s%s" %
              (nfiles, " ".join(FOLDERS), across))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
