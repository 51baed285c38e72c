"""load_inline_softmax.py - the path KernelBench uses to build a candidate:
torch.utils.cpp_extension.load_inline of the softmax seed's kernel, timed from
a cold build directory.  Prints the seconds."""
import os
import sys
import tempfile
import time

import torch
from torch.utils.cpp_extension import load_inline

KERNEL = open(os.path.join(os.path.dirname(__file__), "../../tasks/softmax/seed.cu")).read()
KERNEL = KERNEL.split('extern "C"')[0].replace('#include "kloop.h"', "")
CUDA = KERNEL + r"""
#include <torch/extension.h>
torch::Tensor run(torch::Tensor x) {
    auto y = torch::empty_like(x);
    int cols = x.size(-1), rows = x.numel() / cols;
    softmax_rows<<<rows, THREADS>>>(x.data_ptr<float>(), y.data_ptr<float>(), cols);
    return y;
}
"""
CPP = "torch::Tensor run(torch::Tensor x);"

t0 = time.time()
with tempfile.TemporaryDirectory() as d:
    mod = load_inline(name="softmax_seed_%d" % os.getpid(), cpp_sources=CPP, cuda_sources=CUDA,
                      functions=["run"], build_directory=d, verbose=False,
                      extra_cuda_cflags=["-O3"])
    x = torch.randn(64, 8192, device="cuda")
    y = mod.run(x)
    torch.cuda.synchronize()
    ok = torch.allclose(y, torch.softmax(x, -1), atol=1e-5, rtol=1e-4)
print("%.2f %s" % (time.time() - t0, "correct" if ok else "WRONG"))
sys.exit(0 if ok else 1)
