#!/usr/bin/env python3
"""bench/gpu/draw_parts.py - where the PyTorch helper's draw of a run's
inputs goes (issue 40, item 2: about 45 ms of an edit's verdict against a
PyTorch reference is the helper's draws, 0.88-1.15 ms each as kloop's step
trace saw them).  In the helper's own process (torchref.py's Server, the
task's reference.py on the GPU), medians over N draws, ms:

  seed           _seed_all() (torch and its CUDA generators, random, numpy)
  get_inputs     get_inputs() on the device (queued)
  describe       describe_tensor() of each input
  put            the copy into the target (queued)
  sync           torch.cuda.synchronize() (the device's part of it all)
  whole draw     Server.draw() as the helper runs it for one request
  after a sleep  the whole draw after a 2 ms sleep (as the helper's after
                 its wait for a request), and after a 2 ms spin
  after compile  the whole draw again once torch.compile has run here
  batch of N     N draws, one synchronize at the end, per draw
  manual_seed    torch.manual_seed() alone, and whether a CUDA draw after it
                 is the one after it and torch.cuda.manual_seed_all() (the
                 second seeding the helper made until the twentieth session)
  round trip     a JSON line to a child python3 and its answer (the pipe's
                 cost a request adds)

Prints one "skip" line where there is no GPU or no PyTorch.
Usage: python3 bench/gpu/draw_parts.py [TASK_DIR] [N]
"""
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "engine", "measure", "reference"))


def med(xs):
    return statistics.median(xs) * 1e3


def main():
    task = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "tasks", "softmax")
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 32
    try:
        import torch
    except ImportError:
        print("skip: no PyTorch; draw_parts.py did not run")
        return 0
    if not torch.cuda.is_available():
        print("skip: no GPU (torch.cuda.is_available() is false); draw_parts.py did not run")
        return 0
    import torchref as tr
    srv = tr.Server(torch, os.path.join(task, "reference.py"), "cuda", 1234)
    srv.describe()
    dsts = []
    for i in range(srv.n_fwd):
        e = srv.entries[i]
        dsts.append(torch.empty(e["shape"], dtype=tr._torch_dtype(torch, e["dtype"]), device="cuda"))
    srv.targets.tensor = lambda tgt, e: dsts[tgt["i"]]
    tgts = [{"i": i} for i in range(srv.n_fwd)]
    parts = {k: [] for k in ("seed", "get_inputs", "describe", "put", "sync")}
    for k in range(n + 3):
        t0 = time.perf_counter()
        tr._seed_all(torch, 77 + k)
        t1 = time.perf_counter()
        with torch.device("cuda"):
            xs = srv.module.get_inputs()
        t2 = time.perf_counter()
        for x in xs:
            tr.describe_tensor(torch, x, "input")
        t3 = time.perf_counter()
        with torch.no_grad():
            for i, x in enumerate(xs):
                tr._put(dsts[i], x)
        t4 = time.perf_counter()
        torch.cuda.synchronize()
        t5 = time.perf_counter()
        del xs
        if k >= 3:
            for key, a, b in (("seed", t0, t1), ("get_inputs", t1, t2), ("describe", t2, t3),
                              ("put", t3, t4), ("sync", t4, t5)):
                parts[key].append(b - a)
    # torch.manual_seed() seeds the CUDA generators too: was the helper's
    # second seeding (torch.cuda.manual_seed_all) needed for the same draw?
    once, same = [], True
    for k in range(n + 3):
        torch.manual_seed(300 + k)
        torch.cuda.manual_seed_all(300 + k)
        a = torch.randn(1024, device="cuda")
        t0 = time.perf_counter()
        torch.manual_seed(300 + k)
        t1 = time.perf_counter()
        b = torch.randn(1024, device="cuda")
        same = same and bool(torch.equal(a, b))
        if k >= 3:
            once.append(t1 - t0)
    whole = []
    for k in range(n + 3):
        t0 = time.perf_counter()
        srv.draw(500 + k, tgts, "a run's inputs")
        if k >= 3:
            whole.append(time.perf_counter() - t0)
    # each draw after a pause, as the helper's follows its wait for the next
    # request: asleep (time.sleep, the thread descheduled as in a blocking
    # read) or spinning (the core kept busy): is a woken helper's draw the
    # slow one?
    slept, spun = [], []
    for k in range(n + 3):
        time.sleep(0.002)
        t0 = time.perf_counter()
        srv.draw(600 + k, tgts, "a run's inputs")
        if k >= 3:
            slept.append(time.perf_counter() - t0)
        end = time.perf_counter() + 0.002
        while time.perf_counter() < end:
            pass
        t0 = time.perf_counter()
        srv.draw(650 + k, tgts, "a run's inputs")
        if k >= 3:
            spun.append(time.perf_counter() - t0)
    # the same after torch.compile has run in this process (as the helper
    # compiles the baseline): does dynamo's presence slow the draws?
    after = []
    try:
        cm = torch.compile(srv.model)
        xs = tr.make_inputs(torch, srv.module, 1, "cuda", srv.model, on_device=True)
        with torch.no_grad():
            cm(*xs)
        torch.cuda.synchronize()
        del xs
        for k in range(n + 3):
            t0 = time.perf_counter()
            srv.draw(700 + k, tgts, "a run's inputs")
            if k >= 3:
                after.append(time.perf_counter() - t0)
    except Exception as e:  # noqa: BLE001 - a probe: say why and go on
        print("torch.compile: %s" % (str(e).splitlines() or ["?"])[0][:200])
    batch = []
    for rep in range(5):
        t0 = time.perf_counter()
        for k in range(n):
            inputs = tr.make_inputs(torch, srv.module, 900 + k, "cuda", srv.model, on_device=True)
            with torch.no_grad():
                for i, x in enumerate(inputs):
                    tr._put(dsts[i], x)
            del inputs
        torch.cuda.synchronize()
        batch.append((time.perf_counter() - t0) / n)
    child = subprocess.Popen([sys.executable, "-c",
                              "import sys, json\n"
                              "for l in sys.stdin:\n"
                              "    json.loads(l); sys.stdout.write('{\"ev\": \"drawn\"}\\n'); sys.stdout.flush()\n"],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
    rt = []
    q = json.dumps({"op": "draw", "seed": 4503599627370497, "inputs": [{"ipc": "00" * 64}]})
    for k in range(n + 3):
        t0 = time.perf_counter()
        child.stdin.write(q + "\n")
        child.stdin.flush()
        child.stdout.readline()
        if k >= 3:
            rt.append(time.perf_counter() - t0)
    child.stdin.close()
    child.wait()
    sizes = ", ".join("%s %s" % (e["dtype"], "x".join(str(d) for d in e["shape"]))
                      for e in srv.entries[:srv.n_fwd])
    print("task %s (%s), %s, torch %s, N %d" % (os.path.basename(task.rstrip("/")), sizes,
                                                torch.cuda.get_device_name(), torch.__version__, n))
    print("%-34s %8s" % ("part, median", "ms"))
    for key in ("seed", "get_inputs", "describe", "put", "sync"):
        print("%-34s %8.3f" % (key, med(parts[key])))
    print("%-34s %8.3f  (the same draws: %s)" % ("torch.manual_seed alone", med(once),
                                                 "yes" if same else "NO"))
    print("%-34s %8.3f" % ("whole draw (Server.draw)", med(whole)))
    print("%-34s %8.3f" % ("whole draw after a 2 ms sleep", med(slept)))
    print("%-34s %8.3f" % ("whole draw after a 2 ms spin", med(spun)))
    if after:
        print("%-34s %8.3f" % ("whole draw after torch.compile", med(after)))
    print("%-34s %8.3f" % ("batch of %d, per draw" % n, med(batch)))
    print("%-34s %8.3f" % ("round trip (JSON line, pipe)", med(rt)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
