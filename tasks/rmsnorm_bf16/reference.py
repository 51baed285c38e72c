# rmsnorm_bf16/reference.py - the KernelBench-style PyTorch reference: RMSNorm
# of the bf16 x[rows, cols] over its last dimension with the bf16 weight w,
# computed as torch's RMSNorm does for low-precision inputs (in fp32, then
# cast back): y = x * rsqrt(mean(x^2) + eps) * w. In float64 (the precision
# verdict's run) it stays in float64.
import torch
import torch.nn as nn

rows = 8192
cols = 4096
eps = 1e-6


class Model(nn.Module):
    """y = x / sqrt(mean(x^2, -1) + eps) * w, fp32 math for bf16 x and w, bf16 out."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        acc = torch.promote_types(x.dtype, torch.float32)
        xf = x.to(acc)
        y = xf * torch.rsqrt(xf.pow(2).mean(dim=-1, keepdim=True) + eps) * w.to(acc)
        return y.to(x.dtype)


def get_inputs():
    x = torch.randn(rows, cols, dtype=torch.float32).bfloat16()
    w = torch.rand(cols, dtype=torch.float32).add_(0.5).bfloat16()
    return [x, w]


def get_init_inputs():
    return []
