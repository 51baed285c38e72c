#!/usr/bin/env python3
"""tests/e2e/report_check.py REPORT.html SESSION.json - checks `kloop report`'s page
against the session's fold (`kloop session --json`), for tests/e2e/archive.sh.

Prints one "ok - ..." or "not ok - ..." line per check:
  - the page parses with html.parser, every non-void element is closed in order
  - nothing is fetched or run: no <script>, no src= / href= to another host
  - one lineage node per candidate, one table row per candidate
  - the winning path: as many marked nodes as the best candidate's lineage is long
  - the best speedup printed is the fold's best, to two decimals
  - one dot in the time chart per correct, timed candidate whose time is a win
    (verified, faithful precision), a hollow one per other correct, timed one;
    a bar per generation from the first with a ranked candidate on, the last
    one the best
"""
import json
import sys
from html.parser import HTMLParser

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta",
        "source", "track", "wbr"}


class Page(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack = []
        self.errors = []
        self.tags = []  # (tag, attrs) of every element
        self.text = {}  # id -> text inside
        self.capture = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append((tag, a))
        if tag not in VOID:
            self.stack.append(tag)
            self.capture.append((a.get("id"), []))

    def handle_startendtag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.errors.append("</%s> at line %d closes <%s>" % (
                tag, self.getpos()[0], self.stack[-1] if self.stack else "nothing"))
            return
        self.stack.pop()
        ident, parts = self.capture.pop()
        t = "".join(parts)
        if ident:
            self.text[ident] = t
        if self.capture:
            self.capture[-1][1].append(t)

    def handle_data(self, data):
        if self.capture:
            self.capture[-1][1].append(data)


def main():
    html = open(sys.argv[1], encoding="utf-8").read()
    ses = json.load(open(sys.argv[2]))
    p = Page()
    p.feed(html)
    p.close()
    res = []

    def check(name, cond):
        res.append(cond)
        print(("ok - " if cond else "not ok - ") + "report: " + name)

    check("the page parses as HTML with every element closed in order (%s)" %
          "; ".join(p.errors[:3] + ["unclosed: %s" % p.stack] * bool(p.stack)),
          not p.errors and not p.stack and html.startswith("<!DOCTYPE html>"))
    ext = [a.get("src") or a.get("href") for _, a in p.tags
           if (a.get("src") or "").strip() or (a.get("href") or "").startswith(("http", "//"))]
    check("self-contained: no script, nothing fetched (%s)" % ext,
          not any(t == "script" for t, _ in p.tags) and not ext)
    cands = ses["candidates"]
    nodes = [a for t, a in p.tags if t == "circle" and a.get("class") == "node"]
    check("one lineage node per candidate (%d, the fold has %d)" % (len(nodes), len(cands)),
          len(nodes) == len(cands))
    rows = [a for t, a in p.tags if t == "tr" and (a.get("id") or "").startswith("c")]
    check("one table row per candidate (%d)" % len(rows), len(rows) == len(cands))
    # the ranked ones (state_cand_rankable): correct, a speedup, its time
    # verified, faithful in precision (the default policy)
    good = [c for c in cands if c["status"] == "correct" and c["speedup"]
            and not c.get("unverified") and c.get("precision") != "reduced"]
    by_id = {c["id"]: c for c in cands}
    # the fold's one best (state_best(): kloop session --json names it)
    best = by_id[ses["best"]["id"]] if ses.get("best") else None
    path = []
    c = best
    while c is not None and c["id"] not in [x["id"] for x in path]:
        path.append(c)
        c = by_id.get(c["parents"][0]) if c["parents"] else None
    marked = [a for t, a in p.tags if t == "g" and a.get("class") == "cand win"]
    check("the winning path marks %d nodes (the best's lineage: %s)" %
          (len(marked), [x["id"] for x in reversed(path)]), len(marked) == len(path))
    want = "%.2fx" % best["speedup"] if best else None
    check("the best speedup shown is the fold's (%s, page says %s)" %
          (want, p.text.get("best-speedup")), p.text.get("best-speedup") == want)
    dots = [a for t, a in p.tags if t == "circle" and a.get("class") == "eval"]
    check("one dot per correct, timed candidate in the time chart (%d of %d)" %
          (len(dots), len(good)), len(dots) == len(good))
    # an unverified or reduced-precision time is a hollow dot, never a win
    timed = [c for c in cands if c["status"] == "correct" and c["speedup"]]
    hollow = [a for t, a in p.tags if t == "circle" and a.get("class") == "eval-suspect"]
    check("a hollow dot per correct candidate whose time is not a win (%d of %d)" %
          (len(hollow), len(timed) - len(good)), len(hollow) == len(timed) - len(good))
    depth = {}
    for c in cands:
        depth[c["id"]] = max([depth.get(q, -1) + 1 for q in c["parents"]] or [0])
    # a bar per generation from the first with a ranked candidate on: the
    # session's best through it (issue 39), the last one the best the head names
    gens = {depth[c["id"]] for c in good}
    deepest = max(depth.values()) if depth else 0
    bars = [a for t, a in p.tags if t == "rect" and a.get("class") == "round"]
    want = deepest - min(gens) + 1 if gens else 0
    check("a bar per generation from the first with a ranked candidate (%d, expected %d)" %
          (len(bars), want), len(bars) == want)
    last = p.text.get("gen-best-%d" % deepest)
    check("the last generation's bar is the best the head names (%s, the best %s)" %
          (last, "%.2fx" % best["speedup"] if best else None),
          (last == "%.2fx" % best["speedup"]) if best else last is None)
    return 0 if all(res) else 1


if __name__ == "__main__":
    sys.exit(main())
