#!/usr/bin/env python3
"""tests/fake_llm/scripted.py - a scripted LLM for kloop's command provider:

    kloop softmax --command "python3 tests/fake_llm/scripted.py [SCRIPT]"

reads kloop's prompt on stdin and writes to stdout the reply of the first
rule of SCRIPT whose "match" is in the prompt: the fake server's script
format (server.py; default tests/fixtures/tui_llm.json, the replies of
README.md's first session).  No network and no key: README.md's first
session talks to it.  A reply's "piece" and "delay" stream it as the server
does; each process answers one prompt, so a rule gives its first reply (the
server gives a rule's n-th reply to its n-th request).  A prompt that no
rule matches is an error (exit 1), said on stderr.
"""
import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import server  # noqa: E402  (its rules and replies)

DEFAULT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures",
                       "tui_llm.json")


def main():
    p = argparse.ArgumentParser(description="a scripted LLM for kloop's command provider")
    p.add_argument("script", nargs="?", default=DEFAULT)
    server.args = p.parse_args()
    with open(server.args.script) as f:
        server.rules = json.load(f)
    prompt = sys.stdin.read()
    spec, rule = server.pick(prompt)
    if rule is None:
        sys.stderr.write("scripted.py: no rule of %s matches the prompt\n" % server.args.script)
        return 1
    time.sleep(spec.get("reply_delay", 0))
    for piece in server.pieces(server.reply_text(spec, prompt), spec.get("piece", 1 << 20)):
        time.sleep(spec.get("delay", 0))
        sys.stdout.write(piece)
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
