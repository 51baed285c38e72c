# softmax/reference.py - the KernelBench-style PyTorch reference: row softmax
# over the last dimension of x[rows, cols] (the cuda shape set of task.json).
import torch
import torch.nn as nn

rows = 4096
cols = 8192


class Model(nn.Module):
    """y = softmax(x) over the last dimension."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=-1)


def get_inputs():
    return [torch.randn(rows, cols, dtype=torch.float32)]


def get_init_inputs():
    return []
