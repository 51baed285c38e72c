"""A sum over a dimension at KernelBench's earlier size (level 1,
47_Sum_reduction_over_a_dimension: 16 x 256 x 256 f32 over dim 1, kept):
bench/gpu/usec.sh's microsecond table."""
import torch
import torch.nn as nn

batch_size = 16
dim1 = 256
dim2 = 256


class Model(nn.Module):
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, x):
        return torch.sum(x, dim=1, keepdim=True)


def get_inputs():
    return [torch.randn(batch_size, dim1, dim2)]


def get_init_inputs():
    return []
