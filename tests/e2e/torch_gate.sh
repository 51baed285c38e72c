# torch_gate.sh - how torchref.py hands the GPU over while torch.compile's
# baseline compiles in the background of a search (GpuGate,
# docs/TORCH_REFERENCE.md): each benchmark inductor runs asks for the GPU,
# waits for the worker's go and says when it is done; a benchmark that
# calls another is one hand-over; the benchmarker is restored after; where
# inductor has no benchmarker object the whole compile is one hand-over;
# an answer other than go is an error; deferring is offered from PyTorch
# 2.5 on.  Inductor's benchmarker is stood in
# for, so this runs with the standard library alone; the real one is used
# on the GPU (eval_cuda.sh).
. "$(dirname "$0")/lib.sh"
export PYTHONDONTWRITEBYTECODE=1

cat >"$T/gate.py" <<'PY'
import io, json, sys, types
sys.path.insert(0, "engine/measure/reference")
import torchref

log = []


class Benchmarker(object):
    def benchmark_gpu(self, fn):
        log.append(("run", len(sent)))
        return fn()

    def benchmark(self, fn):  # dispatches to benchmark_gpu, as inductor's does
        return self.benchmark_gpu(fn)


bench = Benchmarker()
torch = types.ModuleType("torch")
torch.cuda = types.SimpleNamespace(synchronize=lambda: log.append(("sync", len(sent))))
for name in ("torch._inductor", "torch._inductor.runtime", "torch._inductor.runtime.benchmarking"):
    sys.modules[name] = types.ModuleType(name)
sys.modules["torch"] = torch
torch._inductor = sys.modules["torch._inductor"]
torch._inductor.runtime = sys.modules["torch._inductor.runtime"]
torch._inductor.runtime.benchmarking = sys.modules["torch._inductor.runtime.benchmarking"]
torch._inductor.runtime.benchmarking.benchmarker = bench

case = sys.argv[1]
sent = []
torch.compile = lambda m: m
if case == "available":
    got = []
    for v in ("2.11.0+cu130", "2.5.1", "2.4.1", "1.13.1"):
        torch.__version__ = v
        got.append(torchref.GpuGate.available(torch))
    sys.exit(0 if got == [True, True, False, False] else 1)
if case == "whole":
    del torch._inductor.runtime.benchmarking.benchmarker
    stdin = io.StringIO('{"op": "go"}\n')
    with torchref.GpuGate(torch, sent.append, stdin) as g:
        log.append(("compile", len(sent)))
    evs = [m["ev"] for m in sent]
    assert evs == ["gpu", "gpu_done"] and log == [("compile", 1), ("sync", 1)], (evs, log)
    assert g.granted == 1
    print("ok")
if case == "handover":
    stdin = io.StringIO('{"op": "go"}\n{"op": "go"}\n')
    with torchref.GpuGate(torch, sent.append, stdin) as g:
        a = bench.benchmark_gpu(lambda: 1.5)
        b = bench.benchmark(lambda: 2.5)
    evs = [m["ev"] for m in sent]
    assert (a, b) == (1.5, 2.5), (a, b)
    assert evs == ["gpu", "gpu_done", "gpu", "gpu_done"], evs
    # each benchmark ran after its request and before its done, and the
    # device was synchronized before done was said
    assert log == [("run", 1), ("sync", 1), ("run", 3), ("sync", 3)], log
    assert g.granted == 2 and stdin.read() == "", g.granted
    assert "benchmark_gpu" not in vars(bench) and "benchmark" not in vars(bench), vars(bench)
    n = len(sent)
    bench.benchmark_gpu(lambda: 0)
    assert len(sent) == n, "after the gate nothing is asked"
    print("ok")
if case == "refused":
    stdin = io.StringIO('{"op": "fill"}\n')
    try:
        with torchref.GpuGate(torch, sent.append, stdin):
            bench.benchmark_gpu(lambda: 1)
    except torchref.GateError as e:
        print(e)
        assert "benchmark_gpu" not in vars(bench)
        sys.exit(0)
    sys.exit(1)
PY

check "background compiles are offered from PyTorch 2.5 on (2.11 and 2.5 yes, 2.4 and 1.13 no)" \
	python3 "$T/gate.py" available
python3 "$T/gate.py" whole >"$T/w.out" 2>&1
check "where inductor has no benchmarker object the whole compile is one hand-over" \
	grep -qx ok "$T/w.out"
python3 "$T/gate.py" handover >"$T/h.out" 2>&1
check "each benchmark asks for the GPU, runs after go, synchronizes and says done; a nested one is one hand-over; the benchmarker is restored" \
	grep -qx ok "$T/h.out"
python3 "$T/gate.py" refused >"$T/r.out" 2>&1
rc=$?
check "an answer other than go ends the compile with an error naming it" \
	sh -c "test $rc -eq 0 && grep -q 'the worker answered .*fill.* to a request for the GPU' '$T/r.out'"
diag 0 "$T/h.out" "$T/w.out" "$T/r.out"
