# gemm_bias_relu/reference.py - the KernelBench-style PyTorch reference: a linear
# layer followed by ReLU, y = relu(x W^T + b); the layer's parameters (weight
# [out_features, in_features], then bias [out_features]) follow x in task.json.
import torch
import torch.nn as nn

batch = 1024
in_features = 4096
out_features = 4096


class Model(nn.Module):
    """y = relu(linear(x)), one nn.Linear with bias."""

    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features, bias=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.linear(x))


def get_inputs():
    return [torch.rand(batch, in_features, dtype=torch.float32) * 2 - 1]


def get_init_inputs():
    return [in_features, out_features]
