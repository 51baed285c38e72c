# hgemm/reference.py - the KernelBench-style PyTorch reference: the f16 matrix
# product C[M, N] = A[M, K] B[K, N] with fp32 accumulation and f16 output (what
# torch.matmul does for half tensors on the GPU).
import torch
import torch.nn as nn

M = 4096
K = 4096
N = 4096


class Model(nn.Module):
    """C = A @ B for half A and B, accumulated in fp32, returned as half."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


def get_inputs():
    A = torch.rand(M, K, dtype=torch.float32).mul_(2).sub_(1).half()
    B = torch.rand(K, N, dtype=torch.float32).mul_(2).sub_(1).half()
    return [A, B]


def get_init_inputs():
    return []
