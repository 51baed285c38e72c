# gemm_bias_relu/reference.py - KernelBench level 2, 76_Gemm_Add_ReLU, as that
# problem writes it: a bias-free nn.Linear (self.gemm), then its own bias
# parameter, then ReLU.  kloop's in[] is x, then the parameters as
# named_parameters() gives them - the module's own (bias) before its
# submodule's (gemm.weight) - whatever order __init__ assigns them in:
# x, bias, gemm.weight, as task.json lists them.
import torch
import torch.nn as nn

batch_size = 1024
in_features = 4096
out_features = 4096
bias_shape = (out_features,)


class Model(nn.Module):
    """Matrix multiplication, bias add and ReLU."""

    def __init__(self, in_features, out_features, bias_shape):
        super(Model, self).__init__()
        self.gemm = nn.Linear(in_features, out_features, bias=False)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        x = self.gemm(x)
        x = x + self.bias
        x = torch.relu(x)
        return x


def get_inputs():
    return [torch.rand(batch_size, in_features) * 2 - 1]


def get_init_inputs():
    return [in_features, out_features, bias_shape]
