"""GELU at KernelBench's earlier size (level 1, 26_GELU_: 16 x 16384 f32, a
4 us kernel on an H200): bench/gpu/usec.sh's microsecond table."""
import torch
import torch.nn as nn

batch_size = 16
dim = 16384


class Model(nn.Module):
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, x):
        return torch.nn.functional.gelu(x)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
