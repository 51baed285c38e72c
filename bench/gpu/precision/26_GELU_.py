import torch
import torch.nn as nn


class Model(nn.Module):
    """GELU (KernelBench level 1, 26_GELU_): the exact, erf form."""

    def __init__(self):
        super(Model, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.gelu(x)


batch_size = 4096
dim = 16384


def get_inputs():
    x = torch.rand(batch_size, dim)
    return [x]


def get_init_inputs():
    return []
