"""usec.py PROBLEM.py CAND.so [RUNS] - run a kloop candidate (a .so with
kl_run) RUNS times (30) on a KernelBench problem's inputs on the GPU, the L2
flushed before each, for Nsight Compute to time its kernels beside kloop's
own numbers (bench/gpu/usec.sh).  The output is checked against the
problem's Model once."""
import ctypes
import importlib.util
import sys

import torch

DTYPES = {torch.float32: 0, torch.float16: 1, torch.bfloat16: 2, torch.float64: 3,
          torch.int32: 4, torch.int64: 5, torch.int8: 6, torch.uint8: 7}


class KlTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("dtype", ctypes.c_int), ("ndim", ctypes.c_int),
                ("shape", ctypes.c_int64 * 8)]


def kl(ts):
    arr = (KlTensor * len(ts))()
    for k, t in enumerate(ts):
        arr[k].data = t.data_ptr()
        arr[k].dtype = DTYPES[t.dtype]
        arr[k].ndim = t.dim()
        for i, s in enumerate(t.shape):
            arr[k].shape[i] = s
    return arr


def main():
    prob, so = sys.argv[1], sys.argv[2]
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 30
    spec = importlib.util.spec_from_file_location("problem", prob)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    torch.manual_seed(0)
    xs = [t.cuda().contiguous() for t in m.get_inputs()]
    with torch.no_grad():
        ref = m.Model(*m.get_init_inputs()).cuda()(*xs)
    refs = list(ref) if isinstance(ref, (tuple, list)) else [ref]
    outs = [torch.empty_like(r) for r in refs]
    lib = ctypes.CDLL(so)
    kin, kout = kl(xs), kl(outs)
    stream = torch.cuda.current_stream().cuda_stream
    flush = torch.empty(2 * torch.cuda.get_device_properties(0).L2_cache_size,
                        dtype=torch.uint8, device="cuda")
    for i in range(runs + 1):
        flush.fill_(i & 0xff)
        torch.cuda.synchronize()
        rc = lib.kl_run(kin, len(xs), kout, len(outs), ctypes.c_void_p(stream))
        torch.cuda.synchronize()
        assert rc == 0, rc
        if i == 0:
            for o, r in zip(outs, refs):
                assert torch.allclose(o, r, atol=1e-4, rtol=1e-3), (o, r)
    print("ran %d times" % runs)


if __name__ == "__main__":
    main()
