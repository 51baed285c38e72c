#!/usr/bin/env python3
"""tests/fake_llm/server.py - a fake LLM server for kloop's tests.

Real HTTP on 127.0.0.1 (port 0: the kernel picks one, written to --port-file),
speaking both wire formats with scripted replies:

  POST .../chat/completions   OpenAI chat completions (SSE when "stream": true)
  POST .../v1/messages        Anthropic Messages (SSE when "stream": true)
  GET  .../models              a list of two models: fake-gpt and fake-claude
  GET  /stats                 {"requests", "concurrent", "max_concurrent", "rules":
                              {MATCH: the same three for the requests a rule took}}

The script (--script FILE, JSON) is a list of rules; a request takes the first
rule whose "match" string (or every string of a "match" list) occurs in its
prompt (system and messages, decoded),
and the n-th request that a rule takes gets its n-th reply (the last one
repeats).  A reply:

  status        HTTP status (200)            headers   extra headers ({})
  text          the reply text               text_file a file with the text
  repeat        [s, n]: the text is s n times
  program       a program (relative to the script) run with the prompt on its
                stdin; its stdout is the text (a scripted LLM, e.g. a corpus)
  body          a raw body (with status >= 400: the error JSON)
  no_stream     answer with one JSON body even when asked to stream
  piece         characters of text per event (16)
  usage         [input_tokens, output_tokens] ([12, 34]), or "bytes": a
                token per 4 bytes of the prompt and of the reply, the reply
                cut at the request's max_tokens
  delay         seconds to wait before each event (0)
  reply_delay   seconds to wait before answering at all (a model's latency)
  hold          a file name: the reply waits until that file exists (a test
                holds replies back, and lets them go by making the file)
  split         write each event in two halves, cut mid-line, 50 ms apart
  stall_after   after this many events, sleep "stall" seconds (then go on)
  drop_after    after this many events, close the connection at once
  cut_at        send the first half of this event (1-based), then close the
                connection: mid-line, mid-event (with no_end the stream is
                close-delimited and ends cleanly; else its chunked framing is
                left unfinished)
  malformed_at  this event's data (1-based) is not JSON
  empty_choices OpenAI: only events with "choices": [] (and the usage)
  no_end        leave out [DONE] / message_stop and close cleanly
  error_event   Anthropic: send this error object as an "error" event first

--log FILE appends one JSON line per request: method, path, headers, body.
scripted.py answers from the same scripts as kloop's command provider.
"""
import argparse
import json
import os
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

lock = threading.Lock()
stats = {"requests": 0, "concurrent": 0, "max_concurrent": 0, "rules": {}}
counters = {}
args = None
rules = []


def prompt_text(body):
    parts = []
    sysp = body.get("system")
    if isinstance(sysp, str):
        parts.append(sysp)
    elif isinstance(sysp, list):
        parts += [b.get("text", "") for b in sysp if isinstance(b, dict)]
    for m in body.get("messages") or []:
        c = m.get("content") if isinstance(m, dict) else None
        if isinstance(c, str):
            parts.append(c)
        elif isinstance(c, list):
            parts += [b.get("text", "") for b in c if isinstance(b, dict)]
    return "\n".join(parts)


def pick(text):
    """the reply for a prompt, and the rule's stats entry (or None)"""
    for i, r in enumerate(rules):
        m = r.get("match", "")
        if all(x in text for x in (m if isinstance(m, list) else [m])):
            with lock:
                n = counters.get(i, 0)
                counters[i] = n + 1
            replies = r["replies"]
            return replies[min(n, len(replies) - 1)], json.dumps(m) if isinstance(m, list) else m
    return {"status": 404, "body": json.dumps({"error": {"message": "no rule matches"}})}, None


def count(entry, d):
    """add d to the requests in flight of entry (a stats dict)"""
    with lock:
        if d > 0:
            entry["requests"] += 1
        entry["concurrent"] += d
        entry["max_concurrent"] = max(entry["max_concurrent"], entry["concurrent"])


def reply_text(spec, prompt=""):
    if "program" in spec:
        base = os.path.dirname(os.path.abspath(args.script))
        out = subprocess.run([os.path.join(base, spec["program"])], input=prompt.encode(),
                             stdout=subprocess.PIPE, check=False)
        return out.stdout.decode()
    if "text_file" in spec:
        base = os.path.dirname(os.path.abspath(args.script))
        with open(os.path.join(base, spec["text_file"])) as f:
            return f.read()
    if "repeat" in spec:
        s, n = spec["repeat"]
        return s * n
    return spec.get("text", "")


def pieces(text, k):
    return [text[i:i + k] for i in range(0, len(text), k)] or [""]


def openai_events(spec, text, model):
    inp, out = spec.get("usage", [12, 34])
    base = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "model": model}
    ev = []
    if spec.get("empty_choices"):
        ev.append(dict(base, choices=[]))
        ev.append(dict(base, choices=[], usage={"prompt_tokens": inp, "completion_tokens": out}))
    else:
        ev.append(dict(base, choices=[{"index": 0, "delta": {"role": "assistant", "content": ""},
                                        "finish_reason": None}]))
        for p in pieces(text, spec.get("piece", 16)):
            ev.append(dict(base, choices=[{"index": 0, "delta": {"content": p}, "finish_reason": None}]))
        ev.append(dict(base, choices=[{"index": 0, "delta": {}, "finish_reason": "stop"}]))
        ev.append(dict(base, choices=[], usage={"prompt_tokens": inp, "completion_tokens": out,
                                                "total_tokens": inp + out}))
    lines = [("", json.dumps(e)) for e in ev]
    if not spec.get("no_end"):
        lines.append(("", "[DONE]"))
    return lines


def anthropic_events(spec, text, model):
    inp, out = spec.get("usage", [12, 34])
    ev = []
    if spec.get("error_event"):
        ev.append(("error", {"type": "error", "error": spec["error_event"]}))
    ev.append(("message_start", {"type": "message_start", "message": {
        "id": "msg_fake", "type": "message", "role": "assistant", "model": model, "content": [],
        "stop_reason": None, "usage": {"input_tokens": inp, "output_tokens": 1}}}))
    ev.append(("content_block_start", {"type": "content_block_start", "index": 0,
                                       "content_block": {"type": "text", "text": ""}}))
    ev.append(("ping", {"type": "ping"}))
    for p in pieces(text, spec.get("piece", 16)):
        ev.append(("content_block_delta", {"type": "content_block_delta", "index": 0,
                                           "delta": {"type": "text_delta", "text": p}}))
    ev.append(("content_block_stop", {"type": "content_block_stop", "index": 0}))
    ev.append(("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn"},
                                 "usage": {"output_tokens": out}}))
    if not spec.get("no_end"):
        ev.append(("message_stop", {"type": "message_stop"}))
    return [(name, json.dumps(data)) for name, data in ev]


def whole_body(anthropic, spec, text, model):
    inp, out = spec.get("usage", [12, 34])
    if anthropic:
        return {"id": "msg_fake", "type": "message", "role": "assistant", "model": model,
                "content": [{"type": "text", "text": text}], "stop_reason": "end_turn",
                "usage": {"input_tokens": inp, "output_tokens": out}}
    return {"id": "chatcmpl-fake", "object": "chat.completion", "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                         "finish_reason": "stop"}],
            "usage": {"prompt_tokens": inp, "completion_tokens": out}}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *a):
        pass

    def do_GET(self):
        if self.path.endswith("/models"):
            # the model list (what `kloop doctor` asks for), logged like a POST
            if args.log:
                with lock, open(args.log, "a") as f:
                    f.write(json.dumps({"method": "GET", "path": self.path,
                                        "headers": dict(self.headers.items())}) + "\n")
            return self.send_json(200, {"object": "list", "data": [
                {"id": "fake-gpt", "object": "model"}, {"id": "fake-claude", "object": "model"}]})
        if self.path == "/stats":
            with lock:
                data = json.dumps(stats).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        else:
            self.send_error(404)

    def do_POST(self):
        count(stats, 1)
        self.rule = None
        try:
            self.handle_post()
        finally:
            count(stats, -1)
            if self.rule:
                count(self.rule, -1)

    def handle_post(self):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n)
        try:
            body = json.loads(raw)
        except ValueError:
            body = {}
        if args.log:
            with lock, open(args.log, "a") as f:
                f.write(json.dumps({"method": "POST", "path": self.path,
                                    "headers": dict(self.headers.items()), "body": body}) + "\n")
        anthropic = self.path.endswith("/v1/messages")
        if not anthropic and not self.path.endswith("/chat/completions"):
            return self.send_json(404, {"error": {"message": "no such endpoint " + self.path}})
        prompt = prompt_text(body)
        spec, match = pick(prompt)
        if match is not None:
            with lock:
                self.rule = stats["rules"].setdefault(
                    match, {"requests": 0, "concurrent": 0, "max_concurrent": 0})
            count(self.rule, 1)
        if spec.get("reply_delay"):
            time.sleep(spec["reply_delay"])
        while spec.get("hold") and not os.path.exists(spec["hold"]):
            time.sleep(0.02)
        status = spec.get("status", 200)
        if status != 200 or "body" in spec:
            return self.send_raw(status, spec.get("body", ""), spec.get("headers", {}))
        model = body.get("model", "")
        text = reply_text(spec, prompt)
        # a reply is cut at the request's max_tokens, as a real server cuts
        # it (a token per 4 bytes where usage is "bytes")
        cap = body.get("max_tokens")
        if spec.get("usage") == "bytes" and isinstance(cap, int) and len(text.encode()) // 4 > cap:
            text = text.encode()[:cap * 4].decode("utf-8", "ignore")
        if spec.get("usage") == "bytes":
            spec = dict(spec, usage=[len(prompt.encode()) // 4, len(text.encode()) // 4])
        if not body.get("stream") or spec.get("no_stream"):
            return self.send_json(200, whole_body(anthropic, spec, text, model))
        events = anthropic_events(spec, text, model) if anthropic else openai_events(spec, text, model)
        self.stream(spec, events)

    def send_raw(self, status, text, headers):
        data = text.encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def send_json(self, status, obj):
        self.send_raw(status, json.dumps(obj), {})

    def chunk(self, data):
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def stream(self, spec, events):
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        no_end = spec.get("no_end")
        if no_end:
            self.send_header("Connection", "close")
        else:
            self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        write = self.wfile.write if no_end else self.chunk
        for i, (name, data) in enumerate(events, 1):
            if spec.get("malformed_at") == i:
                data = '{"choices": [{"delta": {"content": "x"}'
            if spec.get("delay"):
                time.sleep(spec["delay"])
            line = ("event: %s\n" % name if name else "") + "data: %s\n\n" % data
            raw = line.encode()
            if spec.get("cut_at") == i:
                write(raw[:len(raw) // 2])
                self.wfile.flush()
                self.connection.shutdown(socket.SHUT_RDWR)
                self.close_connection = True
                return
            if spec.get("split"):
                half = len(raw) // 2
                write(raw[:half])
                time.sleep(0.05)
                write(raw[half:])
            else:
                write(raw)
            if spec.get("drop_after") == i:
                self.wfile.flush()
                self.connection.shutdown(socket.SHUT_RDWR)
                self.close_connection = True
                return
            if spec.get("stall_after") == i:
                time.sleep(spec.get("stall", 30))
        if no_end:
            self.wfile.flush()
            self.close_connection = True
        else:
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass  # a client that went away (a timeout, a cancel) is part of the tests


def main():
    global args, rules
    p = argparse.ArgumentParser()
    p.add_argument("--script", required=True)
    p.add_argument("--port-file")
    p.add_argument("--log")
    args = p.parse_args()
    with open(args.script) as f:
        rules = json.load(f)
    srv = Server(("127.0.0.1", 0), Handler)
    port = srv.server_address[1]
    if args.port_file:
        tmp = args.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write("%d\n" % port)
        os.rename(tmp, args.port_file)
    print("port %d" % port, flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    sys.exit(main())
