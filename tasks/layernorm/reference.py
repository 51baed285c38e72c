# layernorm/reference.py - the KernelBench-style PyTorch reference: nn.LayerNorm
# over (features, dim1, dim2) of x[batch, features, dim1, dim2], eps 1e-5; its
# parameters (weight, then bias) follow x in task.json's inputs.
import torch
import torch.nn as nn

batch = 16
features = 64
dim1 = 256
dim2 = 256


class Model(nn.Module):
    """y = layer_norm(x) over the trailing (features, dim1, dim2), with weight and bias."""

    def __init__(self, normalized_shape):
        super().__init__()
        self.ln = nn.LayerNorm(normalized_shape, eps=1e-5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.ln(x)


def get_inputs():
    return [torch.randn(batch, features, dim1, dim2, dtype=torch.float32)]


def get_init_inputs():
    return [(features, dim1, dim2)]
