# attention_bf16/reference.py - the KernelBench-style PyTorch reference:
# scaled dot-product attention of bf16 Q, K, V [batch, heads, seq, head_dim]
# with the default scale 1/sqrt(head_dim), as
# torch.nn.functional.scaled_dot_product_attention computes it (fp32 softmax
# inside, bf16 output); IS_CAUSAL masks keys after each query.
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 4
heads = 16
seq = 2048
head_dim = 64
IS_CAUSAL = False


class Model(nn.Module):
    """O = softmax(Q K^T / sqrt(head_dim) [+ causal mask]) V."""

    def __init__(self):
        super().__init__()

    def forward(self, Q: torch.Tensor, K: torch.Tensor, V: torch.Tensor) -> torch.Tensor:
        if hasattr(F, "scaled_dot_product_attention"):
            return F.scaled_dot_product_attention(Q, K, V, is_causal=IS_CAUSAL)
        # PyTorch before 2.0: the same math, the softmax in fp32 (or float64)
        acc = torch.promote_types(Q.dtype, torch.float32)
        s = Q.to(acc) @ K.to(acc).transpose(-2, -1) / math.sqrt(Q.shape[-1])
        if IS_CAUSAL:
            n = s.shape[-1]
            s = s.masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), float("-inf"))
        return (torch.softmax(s, dim=-1) @ V.to(acc)).to(Q.dtype)


def get_inputs():
    shape = (batch, heads, seq, head_dim)
    return [torch.randn(shape, dtype=torch.float32).bfloat16() for _ in range(3)]


def get_init_inputs():
    return []
