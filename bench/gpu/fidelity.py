"""fidelity.py - time a compiled kloop candidate (.so with kl_run) outside
kloop, as an anchor for kloop's own numbers:

  python3 fidelity.py SO do_bench     triton.testing.do_bench median (ms)
  python3 fidelity.py SO ncu-driver   run kl_run 20 times (for ncu to measure)
  python3 fidelity.py SO events-flush  kloop's sequence outside kloop: fresh inputs,
                                      the L2 flushed by reading twice its size, then
                                      start event, kl_run, end event; median (ms)
  python3 fidelity.py SO ncu-flush     that sequence 20 times (for ncu with
                                      --cache-control none to measure)

The input is softmax-shaped: x[4096, 8192] f32, normal(0, 1)."""
import ctypes
import sys

import torch


class KlTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("dtype", ctypes.c_int), ("ndim", ctypes.c_int),
                ("shape", ctypes.c_int64 * 8)]


def tensor(t):
    k = KlTensor()
    k.data = t.data_ptr()
    k.dtype = 0  # KL_F32
    k.ndim = t.dim()
    for i, s in enumerate(t.shape):
        k.shape[i] = s
    return k


def main():
    so, mode = sys.argv[1], sys.argv[2]
    lib = ctypes.CDLL(so)
    torch.manual_seed(0)
    x = torch.randn(4096, 8192, device="cuda")
    y = torch.empty_like(x)
    kin, kout = tensor(x), tensor(y)
    stream = torch.cuda.current_stream().cuda_stream

    def run():
        rc = lib.kl_run(ctypes.byref(kin), 1, ctypes.byref(kout), 1, ctypes.c_void_p(stream))
        assert rc == 0

    run()
    torch.cuda.synchronize()
    assert torch.allclose(y, torch.softmax(x, -1), atol=1e-5, rtol=1e-4)
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    flush = torch.empty(2 * l2 // 4, device="cuda")
    flush.fill_(1.0)

    def kloop_like(fresh=True):
        if fresh:
            x.normal_()
        flush.sum()  # a read of twice the L2: it holds only clean lines after
    if mode == "events-flush":
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        ts = []
        for i in range(220):
            kloop_like()
            e0.record()
            run()
            e1.record()
            e1.synchronize()
            if i >= 20:
                ts.append(e0.elapsed_time(e1))
        ts.sort()
        print("%.6f" % ts[len(ts) // 2])
    elif mode == "ncu-flush":
        for _ in range(20):
            kloop_like()
            run()
            torch.cuda.synchronize()
    elif mode == "do_bench":
        import triton.testing
        ms = triton.testing.do_bench(run, warmup=100, rep=1000, return_mode="median")
        print("%.6f" % ms)
    else:
        for _ in range(20):
            run()
        torch.cuda.synchronize()


if __name__ == "__main__":
    main()
