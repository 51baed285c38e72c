#!/usr/bin/env python3
"""bench/edits/apply.py - an $EDITOR for benchmarks: applies the next edit
of $KLOOP_EDITS (a JSON file of {"edits": [{what, from, to}]}, such as
softmax_cu.json) to the file it is given, counting in $KLOOP_EDIT_STATE
(a file holding how many it has applied), and exits 1 with a line saying
why when the edit does not apply."""
import json
import os
import sys


def main():
    path = sys.argv[1]
    edits = json.load(open(os.environ["KLOOP_EDITS"]))["edits"]
    state = os.environ["KLOOP_EDIT_STATE"]
    n = int(open(state).read() or 0) if os.path.exists(state) else 0
    if n >= len(edits):
        sys.exit("apply.py: all %d edits were applied" % len(edits))
    e = edits[n]
    src = open(path).read()
    if e["from"] not in src:
        sys.exit("apply.py: edit %d (%s) does not apply to %s" % (n + 1, e["what"], path))
    open(path, "w").write(src.replace(e["from"], e["to"], 1))
    open(state, "w").write(str(n + 1))


if __name__ == "__main__":
    main()
