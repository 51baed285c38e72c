"""Softmax over long rows, many of them (4096 x 16384 f32, 256 MB in: about
0.1 ms on an H200, over kloop's 0.07 ms, so timed by its stream's events,
not profiled): bench/gpu/usec.sh's long kernel, softmax.cu's code."""
import torch
import torch.nn as nn

batch_size = 4096
dim = 16384


class Model(nn.Module):
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, x):
        return torch.softmax(x, dim=1)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
