# bf16_gemm/reference.py - the KernelBench-style PyTorch reference: the bf16
# matrix product C[M, N] = A[M, K] B[K, N] with fp32 accumulation and bf16
# output (what torch.matmul does for bfloat16 tensors on the GPU).
import torch
import torch.nn as nn

M = 4096
K = 4096
N = 4096


class Model(nn.Module):
    """C = A @ B for bfloat16 A and B, accumulated in fp32, returned as bfloat16."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


def get_inputs():
    A = torch.rand(M, K, dtype=torch.float32).mul_(2).sub_(1).bfloat16()
    B = torch.rand(K, N, dtype=torch.float32).mul_(2).sub_(1).bfloat16()
    return [A, B]


def get_init_inputs():
    return []
