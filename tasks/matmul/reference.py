# matmul/reference.py - the KernelBench-style PyTorch reference: the fp32 matrix
# product C[M, N] = A[M, K] B[K, N] (the cuda shape set of task.json).
import torch
import torch.nn as nn

M = 1024
K = 4096
N = 2048


class Model(nn.Module):
    """C = A @ B in fp32."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


def get_inputs():
    A = torch.rand(M, K, dtype=torch.float32) * 2 - 1
    B = torch.rand(K, N, dtype=torch.float32) * 2 - 1
    return [A, B]


def get_init_inputs():
    return []
