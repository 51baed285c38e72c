# fp8_gemm/reference.py - the KernelBench-style PyTorch reference: the fp8
# e4m3 matrix product with per-tensor scales, C[M, N] = scale_a scale_b
# A[M, K] B[N, K]^T, fp32 accumulation, bf16 output.  On the GPU it is
# torch._scaled_mm (cuBLASLt's fp8 GEMM, full fp32 accumulation: its
# use_fast_accum stays off), what a PyTorch user calls for fp8; elsewhere,
# or where this PyTorch or device has no fp8 GEMM, the same product in fp32.
import torch
import torch.nn as nn

M = 4096
K = 4096
N = 4096


class Model(nn.Module):
    """C = scale_a * scale_b * (A @ B.T) for float8_e4m3fn A and B, accumulated
    in fp32, returned as bfloat16."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor, scale_a: torch.Tensor,
                scale_b: torch.Tensor) -> torch.Tensor:
        if A.dtype == torch.float8_e4m3fn and A.is_cuda and hasattr(torch, "_scaled_mm") and \
                torch.cuda.get_device_capability(A.device) >= (8, 9):
            return torch._scaled_mm(A, B.t(), scale_a=scale_a.reshape(()).float(),
                                    scale_b=scale_b.reshape(()).float(),
                                    out_dtype=torch.bfloat16)
        # the same product elsewhere: in fp32 for fp8 inputs, and in the
        # inputs' own precision when they come as float64 (kloop's float64
        # reference, its outputs not rounded to bf16)
        wide = torch.float64 if A.dtype == torch.float64 else torch.float32
        C = A.to(wide) @ B.to(wide).t()
        C = C * (scale_a.to(wide) * scale_b.to(wide))
        return C if wide == torch.float64 else C.bfloat16()


def get_inputs():
    A = torch.rand(M, K).mul_(4).sub_(2).to(torch.float8_e4m3fn)
    B = torch.rand(N, K).mul_(4).sub_(2).to(torch.float8_e4m3fn)
    scale_a = torch.rand(1).mul_(1.5).add_(0.5)
    scale_b = torch.rand(1).mul_(1.5).add_(0.5)
    return [A, B, scale_a, scale_b]


def get_init_inputs():
    return []
