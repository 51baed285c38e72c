"""Mean squared error at KernelBench's earlier size (level 1, 94_MSELoss:
128 x 4096 f32 to a scalar; two kernels): bench/gpu/usec.sh's microsecond
table."""
import torch
import torch.nn as nn

batch_size = 128
input_shape = (4096,)


class Model(nn.Module):
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, predictions, targets):
        return torch.mean((predictions - targets) ** 2)


def get_inputs():
    return [torch.randn(batch_size, *input_shape), torch.randn(batch_size, *input_shape)]


def get_init_inputs():
    return []
