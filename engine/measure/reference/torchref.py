#!/usr/bin/env python3
"""torchref.py - turn a PyTorch reference into kloop reference data, and time
PyTorch baselines.

kloop's worker runs this helper (standard library + torch only) on the machine
that has the GPU:

    python3 torchref.py --problem FILE --out DIR --trials N [--seed S]
                        [--device cuda|cpu] [--time] [--time-budget-ms MS]
                        [--no-compile] [--verbose]
    python3 torchref.py --check

FILE is a KernelBench-style problem: a Python file defining
``class Model(nn.Module)``, ``get_inputs()`` and ``get_init_inputs()``.  The
model is built under ``torch.manual_seed(S)``; trial t (0..N, the last one is
the timing set) draws its inputs under ``torch.manual_seed(S + 1 + t)``.  Every
tensor is written to DIR as raw contiguous little-endian bytes and
DIR/manifest.json, written last and atomically, describes them.  The format is
in docs/TORCH_REFERENCE.md.

``--check`` prints one JSON line saying whether PyTorch (and CUDA) can be used
from this interpreter, and exits 0 even when torch is missing.

Errors print one line ``torchref: FILE: what went wrong`` on stderr and exit 1
(2 for usage errors).  Tracebacks are shown only with ``--verbose``.

The module can also be imported: ``check()``, ``load_problem()``,
``build_model()``, ``make_inputs()``, ``generate()``, ``time_model()`` and
``main()`` are the entry points.  Importing it does not import torch.
"""

import argparse
import contextlib
import ctypes
import hashlib
import importlib.machinery
import importlib.util
import inspect
import itertools
import json
import math
import os
import platform
import random
import statistics
import tempfile
import sys
import threading
import time
import traceback

FORMAT = 1
DEFAULT_SEED = 1234
DEFAULT_TRIALS = 5
DEFAULT_BUDGET_MS = 2000.0
MAX_DIMS = 8  # kl_tensor.shape[8]

# timing (the same method as kloop's worker)
WARMUP_MIN_RUNS = 3
WARMUP_MIN_S = 0.025
WARMUP_MAX_RUNS = 10000
TIMED_MIN_RUNS = 10
TIMED_MAX_RUNS = 10000
TARGET_RSE = 0.005
DEFAULT_L2_BYTES = 100 * 1000 * 1000

# kloop's dtype names (the kl_dtype values) by torch dtype attribute name;
# bool is written as u8 (0 or 1)
_DTYPE_NAMES = [
    ("float32", "f32"), ("float16", "f16"), ("bfloat16", "bf16"), ("float64", "f64"),
    ("int32", "i32"), ("int64", "i64"), ("int8", "i8"), ("uint8", "u8"), ("bool", "u8"),
    ("float8_e4m3fn", "e4m3"),
]
SUPPORTED_DTYPES = "f32 f16 bf16 f64 i32 i64 i8 u8 e4m3 (float8_e4m3fn; bool is written as u8)"

_module_counter = itertools.count()


class RefError(Exception):
    """An expected failure: reported as one line, without a traceback unless
    --verbose asks for one.  ``cause`` is the exception behind it, if any."""

    def __init__(self, message, cause=None):
        Exception.__init__(self, message)
        self.cause = cause


def _one_line(text, limit=600):
    """Collapse text to one line of at most ``limit`` characters."""
    s = " ".join(str(text).split())
    if len(s) > limit:
        s = s[:limit - 3] + "..."
    return s


def _describe(exc):
    """'TypeName: message' for an exception, on one line."""
    msg = _one_line(exc)
    return "%s: %s" % (type(exc).__name__, msg) if msg else type(exc).__name__


def _no_torch_message():
    return "PyTorch is not installed for python3 (%s)" % sys.executable


def import_torch():
    """Import and return torch, or raise RefError saying it is not installed
    (or fails to import) for this interpreter."""
    try:
        with contextlib.redirect_stdout(sys.stderr):
            import torch  # noqa: F401
    except ModuleNotFoundError as e:
        if e.name == "torch":
            err = RefError(_no_torch_message(), e)
            err.no_torch = True
            raise err
        raise RefError("PyTorch failed to import for python3 (%s): %s" % (sys.executable, _describe(e)), e)
    except Exception as e:  # a broken install: missing shared libraries, ...
        raise RefError("PyTorch failed to import for python3 (%s): %s" % (sys.executable, _describe(e)), e)
    return torch


def check():
    """Say whether PyTorch and CUDA can be used from this interpreter.

    Returns a dict {"python", "executable", "torch", "cuda", "device", "error"}:
    the Python version, sys.executable, torch.__version__ (None when torch is
    missing), whether CUDA is available, the current CUDA device's name (None
    without CUDA) and a one-line reason when torch cannot be used (else None).
    Never raises for a missing or broken torch."""
    info = {"python": platform.python_version(), "executable": sys.executable,
            "torch": None, "cuda": False, "device": None, "error": None}
    try:
        torch = import_torch()
    except RefError as e:
        info["error"] = str(e)
        return info
    info["torch"] = str(torch.__version__)
    try:
        with contextlib.redirect_stdout(sys.stderr):
            if torch.cuda.is_available():
                info["cuda"] = True
                info["device"] = str(torch.cuda.get_device_name(torch.cuda.current_device()))
    except Exception as e:
        info["cuda"] = False
        info["device"] = None
        info["error"] = "CUDA query failed: %s" % _describe(e)
    return info


# ---------------------------------------------------------------- problems

def _assigning(source, path, values):
    """The problem's code with each top-level ``NAME = expr`` of a name in
    ``values`` made ``NAME = value``, so that constants computed from it
    (``bias_shape = (out_features,)``) follow.  Returns (code, names set)."""
    import ast
    tree = ast.parse(source, path)
    done = set()
    for node in tree.body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name) and node.targets[0].id in values):
            node.value = ast.copy_location(ast.Constant(values[node.targets[0].id]), node.value)
            done.add(node.targets[0].id)
    ast.fix_missing_locations(tree)
    return compile(tree, path, "exec"), done


def load_problem(path, values=None):
    """Import a KernelBench-style problem file under a unique module name,
    with its directory first on sys.path.  ``values`` {name: int} replaces
    the values its top-level assignments give those names (see
    _assigning; a name assigned otherwise is set after the import).
    Returns the module; raises RefError when it cannot be imported or lacks
    Model or get_inputs()."""
    path = os.path.abspath(path)
    if not os.path.isfile(path):
        raise RefError("no such file" if not os.path.exists(path) else "not a regular file")
    directory = os.path.dirname(path)
    if not sys.path or sys.path[0] != directory:
        sys.path.insert(0, directory)
    name = "kloop_problem_%d_%d" % (os.getpid(), next(_module_counter))
    loader = importlib.machinery.SourceFileLoader(name, path)
    spec = importlib.util.spec_from_loader(name, loader)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    saved = sys.dont_write_bytecode
    sys.dont_write_bytecode = True  # leave no __pycache__ beside the problem
    try:
        with contextlib.redirect_stdout(sys.stderr):
            if values:
                with open(path) as f:
                    code, done = _assigning(f.read(), path, values)
                module.__file__ = path
                exec(code, module.__dict__)
                for k, v in values.items():
                    if k not in done:
                        setattr(module, k, v)
            else:
                loader.exec_module(module)
    except SyntaxError as e:
        del sys.modules[name]
        raise RefError("syntax error at line %s: %s" % (e.lineno, e.msg), e)
    except ImportError as e:
        del sys.modules[name]
        raise RefError("importing the problem failed: %s" % _describe(e), e)
    except SystemExit as e:
        del sys.modules[name]
        raise RefError("importing the problem called sys.exit(%s)" % (e.code,), e)
    except Exception as e:
        del sys.modules[name]
        raise RefError("importing the problem failed: %s" % _describe(e), e)
    finally:
        sys.dont_write_bytecode = saved
    missing = [n for n in ("Model", "get_inputs") if not hasattr(module, n)]
    if missing:
        raise RefError("the problem defines no %s (a KernelBench problem defines class Model, "
                       "get_inputs() and get_init_inputs())" % " and no ".join(missing))
    if not inspect.isclass(module.Model):
        raise RefError("Model is not a class")
    if not callable(module.get_inputs):
        raise RefError("get_inputs is not a function")
    if hasattr(module, "get_init_inputs") and not callable(module.get_init_inputs):
        raise RefError("get_init_inputs is not a function")
    return module


def _seed_all(torch, seed):
    """Seed torch (and its CUDA generators), random and, if loaded, numpy.
    torch.manual_seed() seeds every CUDA device's generator itself (the same
    draws as with torch.cuda.manual_seed_all() after it, a second seeding
    each draw paid until the twentieth session: bench/gpu/draw_parts.py
    checks it)."""
    torch.manual_seed(seed)
    random.seed(seed)
    np = sys.modules.get("numpy")
    if np is not None:
        try:
            np.random.seed(seed % (2 ** 32))
        except Exception:
            pass


def _call(what, fn, *args, **kwargs):
    """Call fn, turning any exception into a RefError naming ``what``."""
    try:
        with contextlib.redirect_stdout(sys.stderr):
            return fn(*args, **kwargs)
    except RefError:
        raise
    except SystemExit as e:
        raise RefError("%s called sys.exit(%s)" % (what, e.code), e)
    except Exception as e:
        raise RefError("%s failed: %s" % (what, _describe(e)), e)


def build_model(torch, module, seed, device):
    """Build module.Model(*get_init_inputs()) under torch.manual_seed(seed)
    (parameters are initialised on the CPU, as KernelBench does, so a seed
    gives the same weights whatever the device), move it to ``device`` and
    put it in eval mode.  Returns the model."""
    _seed_all(torch, seed)
    init = []
    if hasattr(module, "get_init_inputs"):
        init = _call("get_init_inputs()", module.get_init_inputs)
    if init is None:
        init = []
    if isinstance(init, dict):
        model = _call("Model(**get_init_inputs())", module.Model, **init)
    elif isinstance(init, (list, tuple)):
        model = _call("Model(*get_init_inputs())", module.Model, *init)
    else:
        raise RefError("get_init_inputs() returned a %s, not a list" % type(init).__name__)
    if not isinstance(model, torch.nn.Module):
        raise RefError("Model is not a torch.nn.Module")
    model = _call("moving the model to %s" % device, model.to, device)
    model.eval()
    return model


def init_inputs(module):
    """What get_init_inputs() gives Model's constructor, for the candidates
    that take numbers from it (a ModelNew's self.X set from __init__'s
    argument, an extension's scalar parameters): a list of {"name": N,
    "type": T, "value": V} for a number (T bool, int in int64's range,
    float that is finite), {"name": N, "type": T} for anything else (a
    tuple, a string; T Python's name of its type), in order; names are __init__'s parameters' where the list is positional
    (init0, init1... where the signature does not say), the keys of a
    dict.  Returns (entries, by_name)."""
    init = []
    if hasattr(module, "get_init_inputs"):
        init = _call("get_init_inputs()", module.get_init_inputs)
    if init is None:
        init = []
    by_name = isinstance(init, dict)
    if by_name:
        items = [(str(k), v) for k, v in init.items()]
    elif isinstance(init, (list, tuple)):
        names = []
        try:
            params = list(inspect.signature(module.Model.__init__).parameters.values())[1:]
            for p in params:
                if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
                    names.append(p.name)
        except (TypeError, ValueError, AttributeError):
            names = []
        items = [(names[i] if i < len(names) else "init%d" % i, v) for i, v in enumerate(init)]
    else:
        raise RefError("get_init_inputs() returned a %s, not a list" % type(init).__name__)
    out = []
    for name, v in items:
        e = {"name": name, "type": type(v).__name__}
        if (isinstance(v, bool) or (isinstance(v, int) and -2 ** 63 <= v < 2 ** 63)
                or (isinstance(v, float) and math.isfinite(v))):
            e["type"] = "bool" if isinstance(v, bool) else "int" if isinstance(v, int) else "float"
            e["value"] = v
        out.append(e)
    return out, by_name


def forward_names(model, n):
    """Names of the first n forward() arguments from inspect.signature when
    they match (n positional parameters, none of them *args), else in0, in1..."""
    fallback = ["in%d" % i for i in range(n)]
    try:
        params = list(inspect.signature(model.forward).parameters.values())
    except (TypeError, ValueError):
        return fallback
    names = []
    for p in params:
        if p.kind == p.VAR_POSITIONAL:
            break
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            names.append(p.name)
    if len(names) < n:
        return fallback
    for p in params[n:]:  # the rest must be optional for the call to match
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty:
            return fallback
    return names[:n]


def model_tensors(model):
    """The module's parameters then buffers in module order, deduplicated:
    a list of (name, tensor, kind) with kind "parameter" or "buffer"."""
    seen = set()
    out = []
    for kind, items in (("parameter", model.named_parameters()), ("buffer", model.named_buffers())):
        for name, t in items:
            if t is None or id(t) in seen:
                continue
            seen.add(id(t))
            out.append((name, t, kind))
    return out


def _unique(names):
    """Make names unique by suffixing _2, _3... to repeats."""
    used = set()
    out = []
    for n in names:
        m, k = n, 2
        while m in used:
            m = "%s_%d" % (n, k)
            k += 1
        used.add(m)
        out.append(m)
    return out


def dtype_name(torch, dtype):
    """kloop's name for a torch dtype, or None when kloop has none."""
    for attr, name in _DTYPE_NAMES:
        if getattr(torch, attr, None) == dtype:
            return name
    return None


# the aten operators of matrix products, convolutions and attention: the
# dtypes of their operands (tensors of two or more dimensions) are the
# problem's compute type (kloop's task.compute, docs/TASKS.md)
_PRODUCT_OPS = frozenset((
    "mm", "bmm", "addmm", "addbmm", "baddbmm", "addmv", "mv", "convolution", "_convolution",
    "cudnn_convolution", "cudnn_convolution_transpose", "_scaled_mm", "_int_mm",
    "_scaled_dot_product_flash_attention", "_scaled_dot_product_efficient_attention",
    "_scaled_dot_product_cudnn_attention", "_flash_attention_forward",
    "_efficient_attention_forward"))


def compute_of_dtypes(torch, dtypes):
    """kloop's compute type of the operands' dtypes: "fp16", "bf16", "fp8",
    "int8" (no float operand), "fp32" (fp32 stays fp32: TF32 is off), or
    None where no operand was seen."""
    if not dtypes:
        return None
    if torch.float16 in dtypes:
        return "fp16"
    if torch.bfloat16 in dtypes:
        return "bf16"
    f8 = [getattr(torch, n, None) for n in ("float8_e4m3fn", "float8_e4m3fnuz")]
    if any(d is not None and d in dtypes for d in f8):
        return "fp8"
    if torch.int8 in dtypes and not any(d.is_floating_point for d in dtypes):
        return "int8"
    return "fp32"


def product_compute(torch, fn):
    """The compute type of the dtypes that reach the matrix products and
    convolutions of one call of fn() (a forward), traced with a dispatch
    mode; None where none does, or where tracing is not possible."""
    try:
        from torch.utils._python_dispatch import TorchDispatchMode
    except Exception:
        return None
    seen = set()

    class _Products(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            packet = getattr(func, "_overloadpacket", None)
            if getattr(packet, "__name__", "") in _PRODUCT_OPS:
                for a in list(args) + list(kwargs.values()):
                    if isinstance(a, torch.Tensor) and a.dim() >= 2:
                        seen.add(a.dtype)
            return func(*args, **kwargs)

    try:
        with torch.no_grad(), _Products():
            fn()
    except Exception:
        return None
    return compute_of_dtypes(torch, seen)


def product_flops(torch, fn):
    """The floating-point operations of one call of fn() (a forward), as
    PyTorch's own counter (torch.utils.flop_counter, PyTorch 2.1 on) counts
    them: its matrix products, convolutions and attention; None where the
    counter is missing, fails or counts nothing (a roofline then has no
    compute floor)."""
    try:
        from torch.utils.flop_counter import FlopCounterMode
    except Exception:
        return None
    try:
        counter = FlopCounterMode(display=False)
        with torch.no_grad(), counter:
            fn()
        n = int(counter.get_total_flops())
    except Exception:
        return None
    return n if n > 0 else None


def describe_tensor(torch, t, what):
    """{"dtype", "shape"} for a tensor, or RefError naming ``what`` when kloop
    cannot take it (dtype, layout, more than 8 dimensions)."""
    name = dtype_name(torch, t.dtype)
    if name is None:
        raise RefError("%s has dtype %s, which kloop does not support (supported: %s)"
                       % (what, str(t.dtype).replace("torch.", ""), SUPPORTED_DTYPES))
    layout = getattr(t, "layout", None)
    strided = getattr(torch, "strided", None)
    if layout is not None and strided is not None and layout != strided:
        raise RefError("%s has layout %s; kloop takes dense (strided) tensors only" % (what, layout))
    shape = [int(d) for d in t.shape]
    if len(shape) > MAX_DIMS:
        raise RefError("%s has %d dimensions; kloop takes at most %d" % (what, len(shape), MAX_DIMS))
    return {"dtype": name, "shape": shape}


def write_tensor(torch, t, path):
    """Write a tensor's elements as raw contiguous little-endian bytes (bool
    as one byte 0/1) to path.  Returns the sha256 hex digest of the bytes."""
    c = t.detach()
    if c.dtype == torch.bool:
        c = c.to(torch.uint8)
    c = c.to("cpu")
    if hasattr(c, "resolve_neg"):
        c = c.resolve_neg()
    c = c.contiguous()
    n = int(c.numel()) * int(c.element_size())
    h = hashlib.sha256()
    with open(path, "wb") as f:
        if n:
            buf = (ctypes.c_char * n).from_address(c.data_ptr())  # c stays alive meanwhile
            h.update(buf)
            f.write(buf)
            del buf
    return h.hexdigest()


def tensor_digest(torch, t):
    """The sha256 of the bytes write_tensor() would write for t."""
    c = t.detach()
    if c.dtype == torch.bool:
        c = c.to(torch.uint8)
    c = c.to("cpu")
    if hasattr(c, "resolve_neg"):
        c = c.resolve_neg()
    c = c.contiguous()
    n = int(c.numel()) * int(c.element_size())
    h = hashlib.sha256()
    if n:
        h.update((ctypes.c_char * n).from_address(c.data_ptr()))
    return h.hexdigest()


def make_inputs(torch, module, seed, device, model=None, on_device=False, times=None):
    """Seed with ``seed``, call get_inputs() and move each tensor to device
    (dtypes kept).  With ``on_device`` (and PyTorch 2, which has default
    devices) get_inputs() runs with ``device`` as the default device, so
    that torch.randn() and friends draw the inputs on the GPU itself.
    Returns the list of tensors; RefError when an input is not a tensor
    (naming it by its forward() argument when ``model`` is given)."""
    _seed_all(torch, seed)
    if times is not None:
        times.append(time.perf_counter())
    if on_device and torch.device(device).type != "cpu" and hasattr(torch, "set_default_device"):
        with torch.device(device):
            inputs = _call("get_inputs()", module.get_inputs)
    else:
        inputs = _call("get_inputs()", module.get_inputs)
    if times is not None:
        times.append(time.perf_counter())
    if isinstance(inputs, tuple):
        inputs = list(inputs)
    if not isinstance(inputs, list):
        if torch.is_tensor(inputs):
            inputs = [inputs]
        else:
            raise RefError("get_inputs() returned a %s, not a list of tensors" % type(inputs).__name__)
    names = forward_names(model, len(inputs)) if model is not None else None
    out = []
    for i, x in enumerate(inputs):
        if not torch.is_tensor(x):
            label = "input %d" % i
            if names is not None and i < len(names) and names[i] != "in%d" % i:
                label += " (%s)" % names[i]
            value = ""
            if isinstance(x, (bool, int, float, str)):
                value = " %r" % (x,)
            raise RefError("%s from get_inputs() is a %s%s, not a tensor; non-tensor inputs are "
                           "not supported as kernel inputs (make it a tensor, or move it to "
                           "get_init_inputs())" % (label, type(x).__name__, value))
        out.append(x.to(device))
    return out


def _outputs_list(torch, out):
    if torch.is_tensor(out):
        return [out]
    if isinstance(out, (tuple, list)):
        for j, y in enumerate(out):
            if not torch.is_tensor(y):
                raise RefError("output %d of forward() is a %s, not a tensor" % (j, type(y).__name__))
        if not out:
            raise RefError("forward() returned no outputs")
        return list(out)
    raise RefError("forward() returned a %s; kloop needs a tensor or a tuple/list of tensors"
                   % type(out).__name__)


# ---------------------------------------------------------------- timing

def _percentile(sorted_values, q):
    """Linear-interpolated percentile (q in 0..1) of a sorted list."""
    n = len(sorted_values)
    if n == 1:
        return sorted_values[0]
    pos = q * (n - 1)
    lo = int(math.floor(pos))
    hi = min(lo + 1, n - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def summarize(times_ms, converged, warmup_runs=None):
    """The timing record for a list of run times in milliseconds."""
    s = sorted(times_ms)
    n = len(s)
    mean = sum(s) / n
    rse = None
    if n >= 2 and mean > 0:
        rse = statistics.stdev(s) / math.sqrt(n) / mean
    rec = {"median_ms": statistics.median(s), "p10_ms": _percentile(s, 0.10),
           "p90_ms": _percentile(s, 0.90), "mean_ms": mean, "min_ms": s[0],
           "count": n, "rse": rse, "converged": bool(converged)}
    if warmup_runs is not None:
        rec["warmup_runs"] = warmup_runs
    return rec


def time_model(torch, fn, device, budget_ms=DEFAULT_BUDGET_MS, flush=None):
    """Time fn() the way kloop's worker times candidates.

    Warm-up: at least 3 runs and 25 ms.  Then repeated runs; on CUDA, before
    each run and outside the timed region the L2 is flushed by writing
    ``flush`` (a uint8 buffer of at least twice the L2 size) and the device is
    synchronized; CUDA events are recorded on the current stream around the
    run, with a device-wide torch.cuda.synchronize() before the end event so
    that work on other streams is measured too.  On the CPU, perf_counter
    around the run.  Runs repeat until the relative standard error of the mean
    is at most 0.5% with at least 10 runs, or ``budget_ms`` of measured time
    is spent, or 10,000 runs.  Returns summarize()'s record."""
    cuda = torch.device(device).type == "cuda"
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    sync()
    t0 = time.perf_counter()
    warm = 0
    while warm < WARMUP_MIN_RUNS or time.perf_counter() - t0 < WARMUP_MIN_S:
        fn()
        sync()
        warm += 1
        if warm >= WARMUP_MAX_RUNS:
            break
    if cuda:
        stream = torch.cuda.current_stream()
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
    times = []
    total = 0.0
    mean = m2 = 0.0  # Welford's running mean and sum of squared deviations
    converged = False
    while True:
        if cuda:
            if flush is not None:
                flush.fill_(len(times) & 0xFF)
            torch.cuda.synchronize()
            start.record(stream)
            fn()
            torch.cuda.synchronize()
            end.record(stream)
            end.synchronize()
            ms = float(start.elapsed_time(end))
        else:
            a = time.perf_counter()
            fn()
            ms = (time.perf_counter() - a) * 1e3
        times.append(ms)
        total += ms
        n = len(times)
        d = ms - mean
        mean += d / n
        m2 += d * (ms - mean)
        if n >= TIMED_MIN_RUNS and mean > 0:
            rse = math.sqrt(m2 / (n - 1)) / math.sqrt(n) / mean
            if rse <= TARGET_RSE:
                converged = True
                break
        if total >= budget_ms or n >= TIMED_MAX_RUNS:
            break
    return summarize(times, converged, warm)


def l2_flush_bytes(torch):
    """Twice the current CUDA device's L2 size (100 MB assumed if unknown)."""
    l2 = 0
    try:
        props = torch.cuda.get_device_properties(torch.cuda.current_device())
        l2 = int(getattr(props, "L2_cache_size", 0) or 0)
    except Exception:
        l2 = 0
    if l2 <= 0:
        l2 = DEFAULT_L2_BYTES
    return 2 * l2


def _flush_buffer(torch, device):
    """The L2 flush buffer on CUDA (and its size), else (None, None)."""
    if torch.device(device).type != "cuda":
        return None, None
    nbytes = l2_flush_bytes(torch)
    return _call("allocating the L2 flush buffer", torch.empty, nbytes, dtype=torch.uint8,
                 device=device), nbytes


def compile_model(torch, model, inputs, device):
    """torch.compile(model) and its first call on ``inputs``, which compiles
    it (under no_grad, as it is timed).  Returns (compiled, seconds); a
    failure raises."""
    t0 = time.perf_counter()
    with contextlib.redirect_stdout(sys.stderr), torch.no_grad():
        compiled = torch.compile(model)
        compiled(*inputs)  # compiles
        if torch.device(device).type == "cuda":
            torch.cuda.synchronize()
    return compiled, time.perf_counter() - t0


def time_compiled(torch, compiled, inputs, device, budget_ms, flush, compile_seconds):
    """The compiled model's timing record, with what compiling took
    ("compile_seconds") and what timing it took ("seconds")."""
    t0 = time.perf_counter()
    with torch.no_grad():
        rec = _call("timing the compiled model", time_model, torch, lambda: compiled(*inputs),
                    device, budget_ms, flush)
    rec["compile_seconds"] = compile_seconds
    rec["seconds"] = time.perf_counter() - t0
    return rec


def _compile_failed(e):
    cause = e.cause if isinstance(e, RefError) and e.cause is not None else e
    return {"error": "torch.compile failed: %s" % _describe(cause)}


_GEMM_OPS = frozenset(("mm", "bmm", "addmm", "baddbmm", "addbmm", "_scaled_mm"))

# the BLAS baselines a GEMM author compares with (issue 36): the eager
# model again with PyTorch's BLAS preference set to cuBLAS, to cuBLASLt (its
# heuristic's first algorithm), and to cuBLASLt through TunableOp, which times
# the candidate algorithms of each GEMM shape and keeps the fastest
BLAS_BASELINES = (("cublas", "cuBLAS (cublasGemmEx)"),
                  ("cublaslt", "cuBLASLt, its heuristic's choice"),
                  ("cublaslt_autotuned", "cuBLASLt autotuned (TunableOp: the fastest of its "
                   "algorithms, timed)"))


def reaches_gemm(torch, fn):
    """Whether one call of fn() reaches a dense matrix product (mm, bmm,
    addmm, ...), traced with a dispatch mode; False where it cannot be
    traced."""
    try:
        from torch.utils._python_dispatch import TorchDispatchMode
    except Exception:
        return False
    seen = []

    class _Gemms(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            packet = getattr(func, "_overloadpacket", None)
            if getattr(packet, "__name__", "") in _GEMM_OPS:
                seen.append(1)
            return func(*args, **(kwargs or {}))

    try:
        with torch.no_grad(), _Gemms():
            fn()
    except Exception:
        return False
    return bool(seen)


def _time_blas(torch, key, fn, device, budget_ms, flush):
    """fn() timed with PyTorch's BLAS set for ``key`` (BLAS_BASELINES); the
    preference and TunableOp are put back as they were.  A record, or
    {"error": why} where this PyTorch cannot choose its BLAS so."""
    cuda_be = torch.backends.cuda
    pref = getattr(cuda_be, "preferred_blas_library", None)
    tunable = getattr(torch.cuda, "tunable", None)
    if pref is None:
        return {"error": "this PyTorch (%s) cannot choose its BLAS library "
                "(torch.backends.cuda.preferred_blas_library)" % torch.__version__}
    if key == "cublaslt_autotuned" and tunable is None:
        return {"error": "this PyTorch (%s) has no TunableOp (torch.cuda.tunable)"
                % torch.__version__}
    before = pref()
    was = tunable.is_enabled() if tunable is not None else False
    t0 = time.perf_counter()
    try:
        pref("cublas" if key == "cublas" else "cublaslt")
        if key == "cublaslt_autotuned":
            tunable.enable(True)
            tunable.tuning_enable(True)
            # its results file, written at exit in the working directory by
            # default: not there (PyTorch 2.11 has no write_file_on_exit)
            if hasattr(tunable, "write_file_on_exit"):
                tunable.write_file_on_exit(False)
            if hasattr(tunable, "set_filename"):
                tunable.set_filename(os.path.join(tempfile.gettempdir(),
                                                  "kloop-tunableop-%d.csv" % os.getpid()))
            fn()  # tunes each GEMM shape once
            torch.cuda.synchronize()
            tunable.tuning_enable(False)
        rec = time_model(torch, fn, device, budget_ms, flush)
    except Exception as e:
        return {"error": "%s: %s" % (key, _describe(e))}
    finally:
        pref(before)
        if tunable is not None:
            tunable.enable(was)
    rec["seconds"] = time.perf_counter() - t0
    return rec


def time_blas_baselines(torch, model, inputs, device, budget_ms, flush):
    """The BLAS baselines of a model whose forward reaches a matrix product
    on CUDA: {key: record or {"error"}} with each one's "library"; None
    where there is none to take (no GPU, no GEMM)."""
    if torch.device(device).type != "cuda" or not reaches_gemm(torch, lambda: model(*inputs)):
        return None
    out = {}
    with torch.no_grad():
        for key, what in BLAS_BASELINES:
            rec = _time_blas(torch, key, lambda: model(*inputs), device, budget_ms, flush)
            rec["library"] = what
            out[key] = rec
    return out


def time_baselines(torch, model, inputs, device, budget_ms=DEFAULT_BUDGET_MS, compile=True):
    """Time the eager model and torch.compile(model) on ``inputs``.  Returns
    the manifest's "timing" object; a torch.compile failure is recorded as
    {"error": reason}, --no-compile as "compile": null."""
    cuda = torch.device(device).type == "cuda"
    timing = {"method": "cuda-events" if cuda else "cpu-wall-clock", "budget_ms": budget_ms,
              "target_rse": TARGET_RSE, "l2_flush_bytes": None}
    flush, timing["l2_flush_bytes"] = _flush_buffer(torch, device)
    with torch.no_grad():
        t0 = time.perf_counter()
        timing["eager"] = _call("timing the eager model", time_model, torch,
                                lambda: model(*inputs), device, budget_ms, flush)
        timing["eager"]["seconds"] = time.perf_counter() - t0
    libs = time_blas_baselines(torch, model, inputs, device, budget_ms, flush)
    if libs is not None:
        timing["libraries"] = libs
    if not compile:
        timing["compile"] = None
    else:
        try:
            compiled, seconds = compile_model(torch, model, inputs, device)
            timing["compile"] = time_compiled(torch, compiled, inputs, device, budget_ms, flush,
                                              seconds)
        except GateError:
            raise
        except Exception as e:
            timing["compile"] = _compile_failed(e)
    del flush
    return timing


class GateError(RefError):
    """The worker broke the GPU's hand-over (GpuGate): fatal, not a
    torch.compile failure."""


class GpuGate(object):
    """While torch.compile compiles in the background of a search, the GPU
    belongs to the worker's candidates.  Every benchmark inductor runs to
    choose a kernel's configuration first asks the worker for the GPU
    ({"ev": "gpu"}), waits for {"op": "go"} (the worker sends it between two
    candidates and runs none until it hears back) and then says
    {"ev": "gpu_done"}: no candidate's timing shares the GPU with inductor's,
    and inductor's choice is not skewed by a candidate running beside it.

    It patches the methods of inductor's one benchmarker object
    (torch._inductor.runtime.benchmarking.benchmarker, PyTorch 2.5 and
    later); where it finds none, the whole compile is one hand-over (the
    search waits for it, as it would without the background).  available()
    says whether deferring is worth it, from the version alone: importing
    inductor takes seconds, which the background compile pays instead."""

    METHODS = ("benchmark_gpu", "benchmark")

    def __init__(self, torch, send, stdin):
        self.torch = torch
        self.send = send
        self.stdin = stdin
        self.depth = 0
        self.granted = 0  # hand-overs so far
        self.lock = threading.RLock()  # one hand-over at a time, whichever thread asks
        self.patched = []
        self.whole = False  # the whole compile is one hand-over

    @staticmethod
    def benchmarker(torch):
        try:
            from torch._inductor.runtime import benchmarking
        except Exception:
            return None
        return getattr(benchmarking, "benchmarker", None)

    @staticmethod
    def available(torch):
        try:
            major, minor = (int(x) for x in str(torch.__version__).split(".")[:2])
        except ValueError:
            return False
        return (major, minor) >= (2, 5) and hasattr(torch, "compile")

    def _acquire(self):
        self.send({"ev": "gpu"})
        line = self.stdin.readline()
        try:
            req = json.loads(line) if line.strip() else None
        except ValueError:
            req = None
        if not isinstance(req, dict) or req.get("op") != "go":
            raise GateError("the worker answered %r to a request for the GPU (expected "
                            "{\"op\": \"go\"})" % (line.strip()[:80] or "nothing"))
        self.granted += 1

    def _release(self):
        try:
            self.torch.cuda.synchronize()
        finally:
            self.send({"ev": "gpu_done"})

    def _gated(self, fn):
        def gated(*args, **kwargs):
            with self.lock:
                if self.depth:  # benchmark() calling benchmark_gpu(): one hand-over
                    return fn(*args, **kwargs)
                self.depth += 1
                try:
                    self._acquire()
                    try:
                        return fn(*args, **kwargs)
                    finally:
                        self._release()
                finally:
                    self.depth -= 1
        return gated

    def __enter__(self):
        b = self.benchmarker(self.torch)
        for m in self.METHODS:
            fn = getattr(b, m, None) if b is not None else None
            if callable(fn):
                setattr(b, m, self._gated(fn))
                self.patched.append((b, m))
        if not self.patched:
            self._acquire()
            self.whole = True
        return self

    def __exit__(self, *exc):
        for b, m in self.patched:
            try:
                delattr(b, m)  # the class's method again
            except AttributeError:
                pass
        self.patched = []
        if self.whole:
            self.whole = False
            self._release()
        return False


# ---------------------------------------------------------------- generation

def _resolve_device(torch, device):
    if device is None:
        device = "cuda" if torch.cuda.is_available() else "cpu"
    if device not in ("cuda", "cpu"):
        raise RefError("unknown device %r (cuda or cpu)" % device)
    if device == "cuda":
        try:
            ok = torch.cuda.is_available()
        except Exception as e:
            raise RefError("CUDA is not available to PyTorch %s: %s" % (torch.__version__, _describe(e)), e)
        if not ok:
            built = getattr(getattr(torch, "version", None), "cuda", None)
            why = "built without CUDA" if not built else "built for CUDA %s, but no usable GPU or driver was found" % built
            raise RefError("--device cuda: CUDA is not available to PyTorch %s (%s)" % (torch.__version__, why))
    return device


def _file_sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _write_json_atomic(path, obj):
    tmp = os.path.join(os.path.dirname(path), ".%s.tmp.%d" % (os.path.basename(path), os.getpid()))
    try:
        with open(tmp, "w") as f:
            json.dump(obj, f, indent=1)
            f.write("\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _disable_tf32(torch):
    """Full fp32 precision for matmuls and convolutions: the reference (and the
    baseline) must be as exact as what kloop asks of candidates."""
    with contextlib.suppress(Exception):
        torch.backends.cuda.matmul.allow_tf32 = False
    with contextlib.suppress(Exception):
        torch.backends.cudnn.allow_tf32 = False
    with contextlib.suppress(Exception):
        torch.set_float32_matmul_precision("highest")


def generate(problem, out, trials=DEFAULT_TRIALS, seed=DEFAULT_SEED, device=None, time_it=False,
             budget_ms=DEFAULT_BUDGET_MS, compile=True):
    """Write the reference data for ``problem`` to directory ``out`` and
    return the manifest (also written, last and atomically, as
    out/manifest.json).  device None: cuda when available, else cpu.  Raises
    RefError for expected failures."""
    if sys.byteorder != "little":
        raise RefError("this machine is big-endian; kloop's reference files are little-endian")
    if trials < 0:
        raise RefError("--trials must be at least 0")
    torch = import_torch()
    device = _resolve_device(torch, device)
    problem = os.path.abspath(problem)
    module = load_problem(problem)
    problem_sha = _file_sha256(problem)
    try:
        os.makedirs(out, exist_ok=True)
        manifest_path = os.path.join(out, "manifest.json")
        if os.path.lexists(manifest_path):
            os.unlink(manifest_path)  # no stale manifest over half-written files
    except OSError as e:
        raise RefError("cannot prepare the output directory %s: %s" % (out, e.strerror or e), e)
    _disable_tf32(torch)
    if device == "cuda":
        dev_name = str(torch.cuda.get_device_name(torch.cuda.current_device()))
    else:
        dev_name = "cpu"

    model = build_model(torch, module, seed, device)
    params = model_tensors(model)

    entries = None   # manifest "inputs"
    outputs = None   # manifest "outputs"
    n_fwd = None
    trial_list = []
    param_files = []
    param_digests = []
    inputs = None
    try:
        for t in range(trials + 1):
            tseed = seed + 1 + t
            inputs = make_inputs(torch, module, tseed, device, model)
            if entries is None:
                n_fwd = len(inputs)
                names = _unique(forward_names(model, n_fwd) + [p[0] for p in params])
                entries = []
                for i, x in enumerate(inputs):
                    d = describe_tensor(torch, x, "input %d (%s)" % (i, names[i]))
                    entries.append({"name": names[i], "dtype": d["dtype"], "shape": d["shape"], "kind": "input"})
                for k, (pname, p, kind) in enumerate(params):
                    name = names[n_fwd + k]
                    d = describe_tensor(torch, p, "%s %s" % (kind, pname))
                    fname = "param%d.bin" % k
                    param_digests.append(write_tensor(torch, p, os.path.join(out, fname)))
                    param_files.append(fname)
                    entries.append({"name": name, "dtype": d["dtype"], "shape": d["shape"],
                                    "kind": kind, "file": fname})
            elif len(inputs) != n_fwd:
                raise RefError("trial %d: get_inputs() returned %d tensors, trial 0 returned %d"
                               % (t, len(inputs), n_fwd))
            in_files = []
            for i, x in enumerate(inputs):
                e = entries[i]
                d = describe_tensor(torch, x, "input %d (%s)" % (i, e["name"]))
                if d["dtype"] != e["dtype"] or d["shape"] != e["shape"]:
                    raise RefError("trial %d: input %s is %s %s, trial 0's was %s %s; kloop needs the "
                                   "same dtypes and shapes in every trial"
                                   % (t, e["name"], d["dtype"], d["shape"], e["dtype"], e["shape"]))
                fname = "t%d_in%d.bin" % (t, i)
                write_tensor(torch, x, os.path.join(out, fname))  # before forward() can touch it
                in_files.append(fname)
            with torch.no_grad():
                result = _call("forward()", model, *inputs)
            ys = _outputs_list(torch, result)
            if outputs is None:
                outputs = []
                for j, y in enumerate(ys):
                    d = describe_tensor(torch, y, "output %d" % j)
                    outputs.append({"name": "out%d" % j, "dtype": d["dtype"], "shape": d["shape"]})
            elif len(ys) != len(outputs):
                raise RefError("trial %d: forward() returned %d outputs, trial 0 returned %d"
                               % (t, len(ys), len(outputs)))
            out_files = []
            for j, y in enumerate(ys):
                d = describe_tensor(torch, y, "output %d" % j)
                o = outputs[j]
                if d["dtype"] != o["dtype"] or d["shape"] != o["shape"]:
                    raise RefError("trial %d: output %d is %s %s, trial 0's was %s %s"
                                   % (t, j, d["dtype"], d["shape"], o["dtype"], o["shape"]))
                fname = "t%d_out%d.bin" % (t, j)
                write_tensor(torch, y, os.path.join(out, fname))
                out_files.append(fname)
            del result, ys
            trial_list.append({"seed": tseed, "inputs": in_files + param_files, "outputs": out_files})
    except OSError as e:
        raise RefError("writing to %s failed: %s" % (out, e.strerror or e), e)

    for (pname, p, kind), digest in zip(params, param_digests):
        if tensor_digest(torch, p) != digest:
            raise RefError("forward() changed %s %s in place; kloop needs parameters and buffers "
                           "to stay the same in every trial" % (kind, pname))

    timing = None
    if time_it:
        timing = time_baselines(torch, model, inputs, device, budget_ms, compile)

    manifest = {
        "format": FORMAT,
        "problem": problem,
        "problem_sha256": problem_sha,
        "torch": str(torch.__version__),
        "device": dev_name,
        "device_type": device,
        "seed": seed,
        "tf32": False,
        "inputs": entries,
        "outputs": outputs,
        "trials": trial_list,
        "timing": timing,
    }
    try:
        _write_json_atomic(os.path.join(out, "manifest.json"), manifest)
    except OSError as e:
        raise RefError("writing %s failed: %s" % (os.path.join(out, "manifest.json"), e.strerror or e), e)
    return manifest


# ---------------------------------------------------------------- sizes

SIZE_MIN = 32  # module-level integers below this are not dimensions --size scales


def apply_sizes(module, shapes=None, size=None):
    """The changes to a problem's module-level integer constants that
    ``shapes`` and ``size`` ask for (load_problem(path, values) makes them,
    before the model and its inputs are made).  ``shapes`` is "name=value,name=value": each name must be a
    module-level integer, except one written "?name" (a task's shape set
    given to its reference.py), which is passed over where it is not.  ``size`` F scales every other module-level integer
    of at least 32 (batch sizes and dimensions; kernel sizes, strides and
    small channel counts stay) to round(v * F), at least 1, kept a multiple of
    16 (at least 16) when v was one; so are such integers inside a
    module-level tuple of integers (``input_shape = (32768,)``).  Returns {name: [old, new]} for every
    constant changed; RefError for a bad name or value."""
    changed = {}
    given = {}
    if shapes:
        for item in shapes.split(","):
            item = item.strip()
            if not item:
                continue
            if "=" not in item:
                raise RefError("--shapes: expected name=value, got %r" % item)
            name, value = (x.strip() for x in item.split("=", 1))
            optional = name.startswith("?")
            name = name.lstrip("?")
            old = getattr(module, name, None)
            if optional and (isinstance(old, bool) or not isinstance(old, int)):
                continue  # a task's dimension the problem has no constant for
            if isinstance(old, bool) or not isinstance(old, int):
                ints = sorted(k for k, v in vars(module).items()
                              if not k.startswith("_") and isinstance(v, int) and not isinstance(v, bool))
                raise RefError("--shapes: %s is not a module-level integer of the problem (it has: %s)"
                               % (name, ", ".join(ints) or "none"))
            try:
                new = int(value)
            except ValueError:
                raise RefError("--shapes: %s=%s: expected an integer" % (name, value))
            if new < 1:
                raise RefError("--shapes: %s=%s: expected a positive integer" % (name, value))
            given[name] = new
    if size is not None and not (size > 0 and math.isfinite(size)):
        raise RefError("--size: expected a positive number, got %r" % (size,))
    def scaled(v):
        if v % 16 == 0:
            return max(16, int(round(v * size / 16.0)) * 16)
        return max(1, int(round(v * size)))

    for name, v in list(vars(module).items()):
        if (size is not None and size != 1 and name not in given and isinstance(v, tuple) and v
                and all(isinstance(x, int) and not isinstance(x, bool) for x in v)
                and any(x >= SIZE_MIN for x in v)):
            new = tuple(scaled(x) if x >= SIZE_MIN else x for x in v)
            if new != v:
                changed[name] = [list(v), list(new)]
            continue
        if name.startswith("_") or isinstance(v, bool) or not isinstance(v, int):
            continue
        if name in given:
            new = given[name]
        elif size is not None and size != 1 and v >= SIZE_MIN:
            new = scaled(v)
        else:
            continue
        if new != v:
            changed[name] = [v, new]
    return changed


# ---------------------------------------------------------------- serving

class _CudaArray(object):
    """Device memory at ``ptr`` (n bytes) as __cuda_array_interface__, for
    torch.as_tensor."""

    def __init__(self, ptr, n):
        self.__cuda_array_interface__ = {"shape": (n,), "typestr": "|u1", "data": (ptr, False),
                                         "version": 2, "strides": None}


class _IpcMemHandle(ctypes.Structure):
    _fields_ = [("reserved", ctypes.c_char * 64)]


def _cudart():
    """The CUDA runtime library torch loaded (from /proc/self/maps), else one
    found by name; RefError when there is none."""
    paths = []
    with contextlib.suppress(OSError):
        with open("/proc/self/maps") as f:
            for line in f:
                part = line.split()
                if len(part) >= 6 and "libcudart" in os.path.basename(part[-1]) and part[-1] not in paths:
                    paths.append(part[-1])
    paths += ["libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0", "libcudart.so"]
    for p in paths:
        try:
            lib = ctypes.CDLL(p)
            lib.cudaIpcOpenMemHandle.argtypes = [ctypes.POINTER(ctypes.c_void_p), _IpcMemHandle, ctypes.c_uint]
            lib.cudaIpcCloseMemHandle.argtypes = [ctypes.c_void_p]
            lib.cudaSetDevice.argtypes = [ctypes.c_int]
            return lib
        except (OSError, AttributeError):
            continue
    raise RefError("cannot find the CUDA runtime (libcudart) to open the worker's device buffers")


class Targets(object):
    """Where a fill writes: the worker's buffers, as torch tensors.  A target
    is {"ipc": HEX} (a cudaIpcMemHandle_t of a buffer on the GPU, 128 hex
    digits) or {"memfd": FD, "offset": OFF} (bytes at OFF in the shared memory
    file inherited as descriptor FD).  Opened IPC handles stay open until
    close(): a worker buffer lives as long as the session."""

    def __init__(self, torch, device, cuda_index):
        self.torch = torch
        self.device = device
        self.cuda_index = cuda_index
        self.lib = None
        self.ipc = {}    # hex -> device pointer
        self.maps = {}   # fd -> mmap

    def tensor(self, tgt, entry):
        torch = self.torch
        dt = _torch_dtype(torch, entry["dtype"])
        shape = entry["shape"]
        numel = 1
        for d in shape:
            numel *= d
        nbytes = numel * torch.tensor([], dtype=dt).element_size()
        if "ipc" in tgt:
            if self.lib is None:
                self.lib = _cudart()
                self.lib.cudaSetDevice(self.cuda_index)
            key = tgt["ipc"]
            ptr = self.ipc.get(key)
            if ptr is None:
                raw = bytes.fromhex(key)
                if len(raw) != 64:
                    raise RefError("a CUDA IPC handle has 64 bytes, got %d" % len(raw))
                h = _IpcMemHandle()
                ctypes.memmove(ctypes.addressof(h), raw, 64)
                p = ctypes.c_void_p()
                rc = self.lib.cudaIpcOpenMemHandle(ctypes.byref(p), h, 1)
                if rc != 0:
                    raise RefError("cudaIpcOpenMemHandle failed with CUDA error %d (is the worker on "
                                   "the same GPU, cuda:%d?)" % (rc, self.cuda_index))
                ptr = self.ipc[key] = p.value
            if nbytes == 0:
                return torch.empty(shape, dtype=dt, device=self.device)
            base = torch.as_tensor(_CudaArray(ptr, nbytes), device=self.device)
        else:
            import mmap
            fd = int(tgt["memfd"])
            mm = self.maps.get(fd)
            if mm is None:
                size = os.fstat(fd).st_size
                mm = self.maps[fd] = mmap.mmap(fd, size)
            off = int(tgt.get("offset", 0))
            if off + nbytes > len(mm):
                raise RefError("a shared buffer target (%d bytes at %d) is past the end of the "
                               "shared memory (%d bytes)" % (nbytes, off, len(mm)))
            if nbytes == 0:
                return torch.empty(shape, dtype=dt)
            base = torch.frombuffer(mm, dtype=torch.uint8, count=nbytes, offset=off)
        return base.view(dt).view(shape)

    def close(self):
        if self.lib is not None:
            self.torch.cuda.synchronize()
            for p in self.ipc.values():
                self.lib.cudaIpcCloseMemHandle(ctypes.c_void_p(p))
        self.ipc = {}
        for mm in self.maps.values():
            with contextlib.suppress(Exception):
                mm.close()
        self.maps = {}


def _torch_dtype(torch, name):
    for attr, n in _DTYPE_NAMES:
        if n == name and attr != "bool":
            d = getattr(torch, attr, None)
            if d is None:
                raise RefError("dtype %s needs torch.%s, which this PyTorch (%s) lacks"
                               % (name, attr, torch.__version__))
            return d
    raise RefError("unknown dtype %r" % name)


def _round_mantissa(torch, t, bits, truncate=False):
    """t with its float elements rounded to ``bits`` explicit mantissa bits,
    to nearest even (10: TF32 or f16, 7: bf16) or toward zero (truncate), as
    compare_round_mantissa() does; unchanged when bits is 0 or the type has
    no more bits."""
    have = {torch.float32: 23, torch.float64: 52, torch.float16: 10}.get(t.dtype, 0)
    if bits <= 0 or not t.is_floating_point() or bits >= have:
        return t
    if t.dtype == torch.float16:  # exact in float32, and back
        return _round_mantissa(torch, t.float(), bits, truncate).half()
    ity = torch.int32 if t.dtype == torch.float32 else torch.int64
    drop = have - bits
    u = t.contiguous().view(ity)
    one = torch.ones((), dtype=ity, device=t.device)
    if truncate:
        r = u & ~((one << drop) - 1)
    else:
        half = (one << (drop - 1)) - 1
        odd = (u >> drop) & 1
        r = (u + half + odd) & ~((one << drop) - 1)
    exp_mask = 0x7f800000 if t.dtype == torch.float32 else 0x7ff0000000000000
    finite = (u & exp_mask) != exp_mask
    return torch.where(finite, r, u).view(t.dtype).view(t.shape)


def _vary(torch, xs, flags, seed):
    """The float tensors of xs varied as rng_vary() does (kloop's rng.h),
    with a generator seeded from seed: 1 scaled (x a + b, a log-uniform in
    [1/8, 8], b in [-2, 2] a sd), 2 heavy tails (x e^g, g normal), 4
    outliers (one element in 2048 at random places, +-(8..64) max |x|);
    integer tensors and flags 0 give xs as they are."""
    if not flags:
        return xs
    out = []
    for k, x in enumerate(xs):
        if not x.is_floating_point() or x.numel() == 0:
            out.append(x)
            continue
        dev = x.device
        g = torch.Generator(device=dev)
        g.manual_seed((int(seed) * 1000003 + k * 7919 + 0x7661727931) & 0x7FFFFFFFFFFFFFFF)
        wt = torch.float64 if x.dtype == torch.float64 else torch.float32
        y = x.detach().to(wt)
        sd = float(y.std()) if y.numel() > 1 else abs(float(y.mean()))
        amax = float(y.abs().max())
        if not sd > 0:
            sd = amax if amax > 0 else 1.0
        if flags & 1:
            u = torch.rand(2, generator=g, device=dev, dtype=torch.float64).tolist()
            a = 2.0 ** (-3 + 6 * u[0])
            b = (4 * u[1] - 2) * a * sd
            y = y * a + b
            amax = amax * a + abs(b)
        if flags & 2:
            y = y * torch.exp(torch.randn(y.shape, generator=g, device=dev, dtype=wt))
            amax = max(amax, float(y.abs().max()))
        if flags & 4:
            m = max(1, y.numel() // 2048)
            idx = torch.randint(0, y.numel(), (m,), generator=g, device=dev)
            v = (8 + 56 * torch.rand(m, generator=g, device=dev, dtype=wt)) * (amax if amax > 0 else 1.0)
            sign = torch.randint(0, 2, (m,), generator=g, device=dev).to(wt) * 2 - 1
            y = y.reshape(-1).clone()
            y[idx] = v * sign
            y = y.view(x.shape)
        out.append(y.to(x.dtype))
    return out


# the random draws of torch that _varied_draws() varies at their source
_DRAWS = ("randn", "rand", "randn_like", "rand_like", "normal")


def _varied_draws(torch, make, flags, seed):
    """make()'s inputs (get_inputs()), varied as _vary() says where they are
    drawn: each float tensor that torch.randn, rand, randn_like, rand_like
    or normal gives get_inputs() is varied as it is drawn, so what
    get_inputs() makes of it (b.t().contiguous(), a mask x > 0, a symmetric
    x + x.T, indices valid for another input) keeps its relation in the
    varied set as in a plain one (issue 37).  Where get_inputs() draws
    nothing through them (torch.tensor, an in-place uniform_), its inputs
    are varied one by one afterwards, as before."""
    if not flags:
        return make()
    drawn = [0]
    busy = [False]
    saved = {name: getattr(torch, name) for name in _DRAWS if hasattr(torch, name)}

    def wrap(fn):
        def draw(*a, **k):
            x = fn(*a, **k)
            if busy[0] or k.get("out") is not None or not torch.is_tensor(x) \
                    or not x.is_floating_point():
                return x
            busy[0] = True  # _vary() draws through torch.randn itself
            try:
                drawn[0] += 1
                return _vary(torch, [x], flags, int(seed) * 8191 + drawn[0])[0]
            finally:
                busy[0] = False
        return draw

    for name, fn in saved.items():
        setattr(torch, name, wrap(fn))
    try:
        xs = make()
    finally:
        for name, fn in saved.items():
            setattr(torch, name, fn)
    return xs if drawn[0] else _vary(torch, xs, flags, seed)


def _put(dst, src):
    """Copy tensor src into target dst (bool as 0/1 bytes)."""
    s = src.detach()
    if s.dtype != dst.dtype:
        s = s.to(dst.dtype)
    dst.copy_(s.reshape(dst.shape))


class Server(object):
    """One problem, serving the worker (see serve())."""

    def __init__(self, torch, problem, device, seed, cuda_index=0, shapes=None, size=None):
        self.torch = torch
        self.problem = os.path.abspath(problem)
        self.device = device
        self.seed = seed
        self.module = load_problem(self.problem)
        self.sizes = apply_sizes(self.module, shapes, size)
        if self.sizes:
            self.module = load_problem(self.problem, {k: tuple(v[1]) if isinstance(v[1], list) else v[1]
                                                      for k, v in self.sizes.items()})
        _disable_tf32(torch)
        if device == "meta":  # shapes only: nothing is allocated or computed
            self.model = build_model(torch, self.module, seed, "cpu").to("meta")
        else:
            self.model = build_model(torch, self.module, seed, device)
        self.params = model_tensors(self.model)
        self.init, self.init_by_name = init_inputs(self.module)
        self.digests = None
        if device != "meta":
            self.digests = [tensor_digest(torch, p) for _, p, _ in self.params]
        self.targets = Targets(torch, device, cuda_index)
        self.entries = None
        self.outputs = None
        self.n_fwd = None
        self.cached = None  # (seed, inputs, outputs) of the last set made
        self.pending = None  # (compiled, inputs, seconds) between compile and time_compile

    def _run(self, tseed, label, vary=0):
        """Inputs drawn under tseed on the device (varied as ``vary`` says:
        _vary()), and the forward's outputs."""
        torch = self.torch
        inputs = self._varied_inputs(tseed, vary)
        if self.n_fwd is not None and len(inputs) != self.n_fwd:
            raise RefError("%s: get_inputs() returned %d tensors, the first set had %d"
                           % (label, len(inputs), self.n_fwd))
        versions = [getattr(x, "_version", None) for x in inputs]
        with torch.no_grad():
            ys = _outputs_list(torch, _call("forward()", self.model, *inputs))
        # a forward that changed an input in place (x.mul_(2)) must not hand
        # the candidate the changed input: the set is drawn again from its
        # seed (get_inputs() under the same seed gives the same tensors), so
        # in[] holds what forward() was given
        if any(v is None or getattr(x, "_version", None) != v for x, v in zip(inputs, versions)):
            del inputs
            inputs = self._varied_inputs(tseed, vary)
        return inputs, ys

    def _varied_inputs(self, tseed, vary):
        """get_inputs() under tseed, varied at the source (_varied_draws():
        what get_inputs() derives from a draw, a transpose, a mask, keeps
        its relation to it)."""
        torch = self.torch
        return _varied_draws(torch, lambda: make_inputs(torch, self.module, tseed, self.device,
                                                        self.model, on_device=True), vary, tseed)

    def describe(self):
        """Make the first set and describe in[] and out[] (the manifest's
        "inputs" and "outputs", without files)."""
        torch = self.torch
        tseed = self.seed + 1
        inputs, ys = self._run(tseed, "set 0")
        self.n_fwd = len(inputs)
        names = _unique(forward_names(self.model, self.n_fwd) + [p[0] for p in self.params])
        self.entries = []
        for i, x in enumerate(inputs):
            d = describe_tensor(torch, x, "input %d (%s)" % (i, names[i]))
            self.entries.append({"name": names[i], "dtype": d["dtype"], "shape": d["shape"], "kind": "input"})
        for k, (pname, p, kind) in enumerate(self.params):
            d = describe_tensor(torch, p, "%s %s" % (kind, pname))
            self.entries.append({"name": names[self.n_fwd + k], "dtype": d["dtype"], "shape": d["shape"],
                                 "kind": kind})
        self.outputs = []
        for j, y in enumerate(ys):
            d = describe_tensor(torch, y, "output %d" % j)
            self.outputs.append({"name": "out%d" % j, "dtype": d["dtype"], "shape": d["shape"]})
        if self.device == "cuda":
            del inputs, ys
        else:
            self.cached = (tseed, inputs, ys)
        # what reaches its products: one more forward, traced, on inputs of
        # its own (a forward may change its inputs in place)
        compute = product_compute(torch, lambda: self.model(*make_inputs(
            torch, self.module, tseed, self.device, self.model, on_device=True)))
        flops = product_flops(torch, lambda: self.model(*make_inputs(
            torch, self.module, tseed, self.device, self.model, on_device=True)))
        if self.device == "cuda":
            # hold nothing while the worker measures its free memory and allocates:
            # drawing the set again on the GPU costs milliseconds
            torch.cuda.synchronize()
            torch.cuda.empty_cache()
        dev_name = self.device
        if self.device == "cuda":
            dev_name = str(torch.cuda.get_device_name(torch.cuda.current_device()))
        return {"ev": "describe", "format": FORMAT, "problem": self.problem,
                "problem_sha256": _file_sha256(self.problem), "torch": str(torch.__version__),
                "device": dev_name, "device_type": self.device, "seed": self.seed, "tf32": False,
                "sizes": self.sizes, "inputs": self.entries, "outputs": self.outputs,
                "init": self.init, "init_by_name": self.init_by_name, "compute": compute,
                "flops": flops}

    def fill(self, tseed, ins, outs, label, vary=0):
        """Draw the set of seed tseed (its inputs varied as ``vary`` says,
        where the model's outputs stay finite: else plain) and write its in[]
        and reference out[] into the targets ins and outs (lists parallel to
        in[] and out[]).  Returns (varied, unsound): the flags applied, and
        those found out of the problem's domain."""
        torch = self.torch
        if len(ins) != len(self.entries) or len(outs) != len(self.outputs):
            raise RefError("%s: %d input and %d output targets for %d inputs and %d outputs"
                           % (label, len(ins), len(outs), len(self.entries), len(self.outputs)))
        unsound = 0
        if not vary and self.cached is not None and self.cached[0] == tseed:
            _, inputs, ys = self.cached
        else:
            inputs, ys = self._run(tseed, label, vary)
            if vary and not all(bool(torch.isfinite(y).all()) for y in ys if y.is_floating_point()):
                unsound, vary = vary, 0
                del inputs, ys
                inputs, ys = self._run(tseed, label, 0)
        self.cached = None  # one set at a time in memory
        for i, x in enumerate(inputs):
            e = self.entries[i]
            d = describe_tensor(torch, x, "input %d (%s)" % (i, e["name"]))
            if d["dtype"] != e["dtype"] or d["shape"] != e["shape"]:
                raise RefError("%s: input %s is %s %s, the first set's was %s %s; kloop needs the "
                               "same dtypes and shapes in every set"
                               % (label, e["name"], d["dtype"], d["shape"], e["dtype"], e["shape"]))
        if len(ys) != len(self.outputs):
            raise RefError("%s: forward() returned %d outputs, the first set %d" % (label, len(ys), len(self.outputs)))
        for j, y in enumerate(ys):
            d = describe_tensor(torch, y, "output %d" % j)
            o = self.outputs[j]
            if d["dtype"] != o["dtype"] or d["shape"] != o["shape"]:
                raise RefError("%s: output %d is %s %s, the first set's was %s %s"
                               % (label, j, d["dtype"], d["shape"], o["dtype"], o["shape"]))
        with torch.no_grad():
            for i, x in enumerate(inputs):
                _put(self.targets.tensor(ins[i], self.entries[i]), x)
            for k, (_, p, _) in enumerate(self.params):
                _put(self.targets.tensor(ins[self.n_fwd + k], self.entries[self.n_fwd + k]), p)
            for j, y in enumerate(ys):
                _put(self.targets.tensor(outs[j], self.outputs[j]), y)
        del inputs, ys
        if self.device == "cuda":
            torch.cuda.synchronize()
            torch.cuda.empty_cache()
        return vary, unsound

    def draw(self, tseed, ins, label):
        """Draw the forward's inputs of seed tseed (get_inputs() under it, as
        a set's) into the targets ins (one per forward input: the parameters
        are the same in every set, and kloop copies them itself): a timed
        run's fresh inputs (issue 37)."""
        torch = self.torch
        if len(ins) != self.n_fwd:
            raise RefError("%s: %d input targets for %d forward inputs" % (label, len(ins), self.n_fwd))
        t = [time.perf_counter()]
        inputs = make_inputs(torch, self.module, tseed, self.device, self.model, on_device=True,
                             times=t)
        if len(inputs) != self.n_fwd:
            raise RefError("%s: get_inputs() returned %d tensors, the first set had %d"
                           % (label, len(inputs), self.n_fwd))
        t.append(time.perf_counter())
        with torch.no_grad():
            for i, x in enumerate(inputs):
                e = self.entries[i]
                d = describe_tensor(torch, x, "input %d (%s)" % (i, e["name"]))
                if d["dtype"] != e["dtype"] or d["shape"] != e["shape"]:
                    raise RefError("%s: input %s is %s %s, the first set's was %s %s; kloop needs "
                                   "the same dtypes and shapes in every set"
                                   % (label, e["name"], d["dtype"], d["shape"], e["dtype"], e["shape"]))
                _put(self.targets.tensor(ins[i], e), x)
        del inputs
        t.append(time.perf_counter())
        if self.device == "cuda":
            torch.cuda.synchronize()
        t.append(time.perf_counter())
        # where it went (the answer's "parts" when kloop traces its steps)
        return {"seed": t[1] - t[0], "get_inputs": t[2] - t[1], "inputs": t[3] - t[2],
                "put": t[4] - t[3], "sync": t[5] - t[4]}

    def _model64(self, bits, truncate):
        """The model in float64 (its float parameters and buffers rounded to
        ``bits`` mantissa bits first when bits > 0), made once per rounding."""
        torch = self.torch
        if not hasattr(self, "models64"):
            self.models64 = {}
        m = self.models64.get((bits, truncate))
        if m is None:
            import copy
            m = copy.deepcopy(self.model)
            with torch.no_grad():
                for t in list(m.parameters()) + list(m.buffers()):
                    if t.is_floating_point():
                        t.copy_(_round_mantissa(torch, t, bits, truncate))
            m = self.models64[(bits, truncate)] = m.double()
        return m

    def fill64(self, tseed, outs, bits, truncate, label, vary=0):
        """The outputs of set tseed's inputs (varied as ``vary`` says, as
        fill() applied it; their floats rounded to ``bits`` mantissa bits
        first when bits > 0) through the model in float64, written into the
        targets outs (each {"dtype": ...} says the type the worker holds it
        in: f64 for a float output)."""
        torch = self.torch
        if len(outs) != len(self.outputs):
            raise RefError("%s: %d output targets for %d outputs" % (label, len(outs), len(self.outputs)))
        inputs = self._varied_inputs(tseed, vary)
        xs = [_round_mantissa(torch, x, bits, truncate).double() if x.is_floating_point() else x
              for x in inputs]
        with torch.no_grad():
            ys = _outputs_list(torch, _call("forward() in float64", self._model64(bits, truncate),
                                            *xs))
        if len(ys) != len(self.outputs):
            raise RefError("%s: forward() in float64 returned %d outputs, in its own precision %d"
                           % (label, len(ys), len(self.outputs)))
        with torch.no_grad():
            for j, y in enumerate(ys):
                entry = {"dtype": outs[j].get("dtype", self.outputs[j]["dtype"]),
                         "shape": self.outputs[j]["shape"]}
                _put(self.targets.tensor(outs[j], entry), y)
        del inputs, xs, ys
        if self.device == "cuda":
            torch.cuda.synchronize()
            torch.cuda.empty_cache()

    def check_params(self):
        if self.digests is None:
            return
        for (pname, p, kind), digest in zip(self.params, self.digests):
            if tensor_digest(self.torch, p) != digest:
                raise RefError("forward() changed %s %s in place; kloop needs parameters and buffers "
                               "to stay the same in every set" % (kind, pname))

    def time(self, tseed, budget_ms, compile=True):
        """The baselines' timing; compile="defer" times the eager model only
        and says {"pending": true} for torch.compile, which compile_start()
        and time_compile() measure later (only on CUDA with a torch whose
        benchmarks can be handed over: else both are timed now)."""
        defer = compile == "defer" and self.device == "cuda" and GpuGate.available(self.torch)
        inputs, _ = self._run(tseed, "the timing set")
        try:
            t = time_baselines(self.torch, self.model, inputs, self.device, budget_ms,
                               bool(compile) and not defer)
            if defer:
                t["compile"] = {"pending": True}
            return t
        finally:
            del inputs
            if self.device == "cuda":
                self.torch.cuda.empty_cache()

    def compile_start(self, tseed, gate):
        """Compile torch.compile(model) on the timing set (its first call),
        handing the GPU over through gate; the compiled model and the set are
        kept for time_compile().  Returns {"compile_seconds": S} or
        {"error": ...}."""
        inputs, _ = self._run(tseed, "the timing set")
        self.pending = None
        if self.device != "cuda":  # no GPU to hand over
            gate = contextlib.nullcontext(gate)
        try:
            with gate:
                compiled, seconds = compile_model(self.torch, self.model, inputs, self.device)
        except GateError:
            raise
        except Exception as e:
            del inputs
            return _compile_failed(e)
        self.pending = (compiled, inputs, seconds)
        return {"compile_seconds": seconds,
                "benchmarks": gate.granted if isinstance(gate, GpuGate) else 0}

    def time_compile(self, budget_ms):
        """Time the model compile_start() compiled: the baselines' "compile"
        record (or {"error": ...})."""
        if not self.pending:
            raise RefError("time_compile without a compiled model (compile first)")
        compiled, inputs, seconds = self.pending
        self.pending = None
        flush = None
        try:
            flush, _ = _flush_buffer(self.torch, self.device)
            return time_compiled(self.torch, compiled, inputs, self.device, budget_ms, flush,
                                 seconds)
        except Exception as e:
            return _compile_failed(e)
        finally:
            del compiled, inputs, flush
            if self.device == "cuda":
                self.torch.cuda.empty_cache()


def serve(problem, device=None, seed=DEFAULT_SEED, cuda_index=0, shapes=None, size=None,
          stdin=None, stdout=None):
    """Serve one problem to kloop's worker over JSON lines: the reference data
    is made on the device and written straight into the worker's buffers
    (CUDA IPC on the GPU, a shared memory file on the CPU), never to disk.

    First this prints {"ev": "describe", ...} (in[] and out[] as the
    manifest's "inputs" and "outputs", plus "sizes": the constants --shapes
    and --size changed), then answers each request line:

    * {"op": "fill", "set": S, "seed": SEED, "vary": FLAGS, "inputs":
      [TARGET...], "outputs": [TARGET...]}: draws the set's inputs under SEED
      on the device, varies the forward's float inputs as FLAGS says
      (_vary(): 1 scaled, 2 heavy tails, 4 outliers; where the outputs are
      then not finite, the set is drawn again plain), runs the model, writes
      in[] (forward inputs, then parameters and buffers) and out[] into the
      targets; answers {"ev": "filled", "set": S, "varied": FLAGS applied,
      "unsound": FLAGS found out of the problem's domain}
    * {"op": "fill64", "set": S, "seed": SEED, "vary": FLAGS, "round": BITS,
      "truncate": BOOL, "outputs": [TARGET...]}: the float64 reference of the
      precision verdict: draws the set's inputs under SEED, varies them as
      FLAGS says (what "fill" applied to that set), rounds their floats (and
      the model's parameters) to BITS mantissa bits when BITS > 0 (toward
      zero with "truncate"), runs the model in
      float64 and writes out[] into the targets, each in the TARGET's
      "dtype" (f64 for a float output); answers {"ev": "filled", "set": S}
    * {"op": "time", "seed": SEED, "budget_ms": MS, "compile": BOOL}: times
      the eager and compiled model on that set; answers {"ev": "timing",
      "timing": {...}} (the manifest's "timing").  "compile": "defer" (a
      search on CUDA) times the eager model only, with "compile":
      {"pending": true}, when the GPU can be handed over (GpuGate); else
      both, as with true
    * {"op": "compile", "seed": SEED}: compiles torch.compile(model) on that
      set; each benchmark inductor runs meanwhile sends {"ev": "gpu"}, waits
      for the line {"op": "go"} and sends {"ev": "gpu_done"} after it.
      Answers {"ev": "compiled", "compile_seconds": S} or {"ev": "compiled",
      "error": "torch.compile failed: ..."}
    * {"op": "time_compile", "budget_ms": MS}: times the model "compile"
      compiled; answers {"ev": "timing", "compile": {...}} (the baselines'
      "compile" record, or {"error": ...})
    * {"op": "draw", "seed": SEED, "inputs": [TARGET...]}: draws the
      forward's inputs of SEED (get_inputs() under it) into the targets, one
      per forward input (a timed run's fresh inputs); answers {"ev": "drawn",
      "seconds": S} (S: the draw's own time in the helper; with "parts": true
      also "parts": {"seed", "get_inputs", "inputs", "put", "sync"}, its
      seconds)
    * {"op": "check"}: checks that forward() left the parameters alone (a
      helper kept for the session's draws); answers {"ev": "checked"}
    * {"op": "quit"}: checks that forward() left the parameters alone,
      answers {"ev": "bye"} and exits 0.

    Any failure answers {"ev": "error", "message": "one line"} and exits 1."""
    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    _die_with_parent()

    def send(obj):
        stdout.write(json.dumps(obj) + "\n")
        stdout.flush()

    t0 = time.perf_counter()
    torch = import_torch()
    t_import = time.perf_counter() - t0
    device = _resolve_device(torch, device)
    if device == "cuda":
        torch.cuda.set_device(cuda_index)
    srv = Server(torch, problem, device, seed, cuda_index, shapes, size)
    d = srv.describe()
    # where the helper's start went: importing torch, then the device, the
    # model and its first forward
    d["seconds"] = {"import_torch": t_import, "model": time.perf_counter() - t0 - t_import}
    send(d)
    try:
        for line in stdin:
            line = line.strip()
            if not line:
                continue
            try:
                req = json.loads(line)
            except ValueError:
                raise RefError("malformed request line (expected JSON)")
            op = req.get("op")
            if op == "fill":
                s = int(req.get("set", 0))
                varied, unsound = srv.fill(int(req["seed"]), req["inputs"], req["outputs"],
                                           "set %d" % s, int(req.get("vary", 0)))
                send({"ev": "filled", "set": s, "varied": varied, "unsound": unsound})
            elif op == "fill64":
                s = int(req.get("set", 0))
                srv.fill64(int(req["seed"]), req["outputs"], int(req.get("round", 0)),
                           bool(req.get("truncate", False)), "set %d in float64" % s,
                           int(req.get("vary", 0)))
                send({"ev": "filled", "set": s})
            elif op == "time":
                c = req.get("compile", True)
                t = srv.time(int(req["seed"]), float(req.get("budget_ms", DEFAULT_BUDGET_MS)),
                             "defer" if c == "defer" else bool(c))
                send({"ev": "timing", "timing": t})
            elif op == "compile":
                r = srv.compile_start(int(req["seed"]), GpuGate(torch, send, stdin))
                r["ev"] = "compiled"
                send(r)
            elif op == "time_compile":
                send({"ev": "timing",
                      "compile": srv.time_compile(float(req.get("budget_ms", DEFAULT_BUDGET_MS)))})
            elif op == "draw":
                t = time.perf_counter()
                parts = srv.draw(int(req["seed"]), req["inputs"], "a run's inputs")
                # the helper's own part of the request (kloop's step trace
                # tells it from the request's way there and back)
                a = {"ev": "drawn", "seconds": round(time.perf_counter() - t, 6)}
                if req.get("parts"):
                    a["parts"] = {k: round(v, 6) for k, v in parts.items()}
                send(a)
            elif op == "check":
                srv.check_params()
                send({"ev": "checked"})
            elif op == "quit":
                srv.check_params()
                srv.targets.close()
                send({"ev": "bye"})
                return 0
            else:
                raise RefError("unknown op %r" % (op,))
    finally:
        srv.targets.close()
    # the worker is gone (its end of the pipe closed without "quit": a helper
    # kept for a session's draws): what this helper started (torch.compile's
    # workers, a problem's own processes) ends with it, as torchref_kill()
    # would end them
    _end_own_group()
    return 0


def _die_with_parent():
    """kloop starts the helper to die with its worker (SIGKILL, which would
    leave what the helper started, torch.compile's workers or a problem's
    own processes, running): a helper that leads its process group takes
    SIGTERM instead, and on SIGTERM (its worker's end, or a stop from outside
    such as Slurm's) it ends its group by SIGTERM, itself included, so that
    nothing it started outlives a session that kept it."""
    import signal
    if os.getpgid(0) != os.getpid():
        return

    def on_term(sig, frame):
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.killpg(os.getpid(), signal.SIGTERM)

    signal.signal(signal.SIGTERM, on_term)
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() == 1:  # the worker ended before the line above
        on_term(signal.SIGTERM, None)


def _end_own_group():
    """Kill this helper's process group, where it leads one (kloop starts it
    so), itself included."""
    import signal
    if os.getpgid(0) == os.getpid():
        sys.stdout.flush()
        os.killpg(os.getpid(), signal.SIGKILL)


# ---------------------------------------------------------------- command line

class _Parser(argparse.ArgumentParser):
    def error(self, message):
        sys.stderr.write("torchref: usage: %s (see --help)\n" % _one_line(message))
        sys.exit(2)


def _parser():
    p = _Parser(prog="torchref.py", description="Turn a KernelBench-style PyTorch problem into "
                "kloop reference data (docs/TORCH_REFERENCE.md), and time PyTorch baselines.")
    p.add_argument("--check", action="store_true",
                   help="print one JSON line about python3, torch and CUDA, and exit 0")
    p.add_argument("--problem", metavar="FILE", help="the problem file (class Model, get_inputs(), get_init_inputs())")
    p.add_argument("--out", metavar="DIR", help="the output directory (created if needed)")
    p.add_argument("--trials", metavar="N", type=int, default=DEFAULT_TRIALS,
                   help="correctness trials (one more, the timing set, is always written; default %d)" % DEFAULT_TRIALS)
    p.add_argument("--seed", metavar="S", type=int, default=DEFAULT_SEED,
                   help="model seed; trial t uses S+1+t (default %d)" % DEFAULT_SEED)
    p.add_argument("--device", choices=("cuda", "cpu"), default=None,
                   help="where to run the model (default: cuda when available, else cpu)")
    p.add_argument("--time", action="store_true", help="time the eager and compiled model on the timing set")
    p.add_argument("--time-budget-ms", metavar="MS", type=float, default=DEFAULT_BUDGET_MS,
                   help="measured time per baseline before timing stops (default %g)" % DEFAULT_BUDGET_MS)
    p.add_argument("--no-compile", action="store_true", help="with --time, skip torch.compile")
    p.add_argument("--serve", action="store_true",
                   help="serve the problem to kloop's worker over JSON lines on stdin/stdout (see serve())")
    p.add_argument("--cuda-device", metavar="N", type=int, default=0, help="with --serve: the GPU (default 0)")
    p.add_argument("--shapes", metavar="NAME=V,...", default=None,
                   help="set the problem's module-level integer constants (e.g. batch_size=256,dim=4096)")
    p.add_argument("--size", metavar="F", type=float, default=None,
                   help="scale the problem's module-level integers of at least 32 by F (e.g. 0.25)")
    p.add_argument("--describe", action="store_true",
                   help="print in[] and out[] of the problem (one JSON line) and exit")
    p.add_argument("--verbose", action="store_true", help="show tracebacks")
    return p


def main(argv=None):
    """Run the command line; returns the exit status (0, 1 error, 2 usage)."""
    p = _parser()
    args = p.parse_args(argv)
    if args.check:
        print(json.dumps(check()))
        sys.stdout.flush()
        return 0
    if not args.problem:
        p.error("--problem FILE is required")
    if args.serve or args.describe:
        label = args.problem
        proto = sys.stdout
        try:
            # the protocol keeps the real stdout; anything the problem prints goes to stderr
            proto = os.fdopen(os.dup(1), "w")
            os.dup2(2, 1)
            sys.stdout = sys.stderr
            if args.describe:
                torch = import_torch()
                desc = None
                if args.device is None and hasattr(torch, "set_default_device"):
                    # PyTorch 2: shapes on the meta device, without allocating today's sizes
                    try:
                        desc = Server(torch, args.problem, "meta", args.seed, 0, args.shapes,
                                      args.size).describe()
                    except RefError as e:
                        if str(e).startswith(("--shapes", "--size")):
                            raise
                        desc = None
                    except Exception:
                        desc = None
                if desc is None:
                    device = _resolve_device(torch, args.device or "cpu")
                    desc = Server(torch, args.problem, device, args.seed, args.cuda_device, args.shapes,
                                  args.size).describe()
                proto.write(json.dumps(desc) + "\n")
                proto.flush()
                return 0
            rc = serve(args.problem, args.device, args.seed, args.cuda_device, args.shapes, args.size,
                       stdout=proto)
            # "bye" is sent: end now.  The interpreter's own ending waits on
            # torch.compile's pool of compile workers (about 10 s after a
            # compile on a 16-core GPU host), and the worker waits for this
            # process; the worker then kills this process group, the pool's
            # workers with it
            sys.stderr.flush()
            os._exit(rc)
        except RefError as e:
            msg = _one_line(e)
            sent = False
            with contextlib.suppress(Exception):
                proto.write(json.dumps({"ev": "error", "message": msg}) + "\n")
                proto.flush()
                sent = True
            # an interpreter without torch is the worker's to explain (it
            # names a python3 that has it): the protocol line is enough
            if not (sent and args.serve and getattr(e, "no_torch", False)):
                sys.stderr.write("torchref: %s: %s\n" % (label, msg))
            if args.verbose and e.cause is not None:
                traceback.print_exception(type(e.cause), e.cause, e.cause.__traceback__)
            return 1
        except Exception as e:
            msg = "unexpected %s" % _describe(e)
            with contextlib.suppress(Exception):
                proto.write(json.dumps({"ev": "error", "message": msg}) + "\n")
                proto.flush()
            sys.stderr.write("torchref: %s: %s\n" % (label, msg))
            if args.verbose:
                traceback.print_exc()
            return 1
    if not args.out:
        p.error("--out DIR is required")
    if args.trials < 0:
        p.error("--trials must be at least 0")
    if args.seed < 0 or args.seed + args.trials + 1 >= 2 ** 64:
        p.error("--seed must be at least 0 and S + N + 1 below 2^64")
    if args.time and (not (args.time_budget_ms > 0) or math.isinf(args.time_budget_ms)):
        p.error("--time-budget-ms must be a positive number")
    label = args.problem
    try:
        generate(args.problem, args.out, trials=args.trials, seed=args.seed, device=args.device,
                 time_it=args.time, budget_ms=args.time_budget_ms, compile=not args.no_compile)
    except RefError as e:
        sys.stderr.write("torchref: %s: %s\n" % (label, _one_line(e)))
        if args.verbose and e.cause is not None:
            traceback.print_exception(type(e.cause), e.cause, e.cause.__traceback__)
        return 1
    except KeyboardInterrupt:
        sys.stderr.write("torchref: %s: interrupted\n" % label)
        return 130
    except Exception as e:
        sys.stderr.write("torchref: %s: unexpected %s\n" % (label, _describe(e)))
        if args.verbose:
            traceback.print_exc()
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
