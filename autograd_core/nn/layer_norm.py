"""Layer normalization: each example (its last dims) shifted and scaled to mean 0 and variance 1,
then given a learned elementwise scale (``weight``) and shift (``bias``); a transformer's norm.

    ln = nn.LayerNorm(384)            # the GPT lecture's layer
    ln(x)                             # x of shape (..., 384): every row normalized by its own statistics

The output's node is ``NativeLayerNormBackward0``, as PyTorch's; its backward recomputes the
statistics from the saved input with tensor operations, so it can be differentiated again.
"""
from __future__ import annotations

import numbers

import numpy as np

from ..creation import ones, zeros
from ..function import Op
from .module import Module
from .parameter import Parameter


class NativeLayerNormBackward0(Op):
    @staticmethod
    def forward(ctx, input, weight, bias, dims, eps):
        ctx.save_for_backward(input, weight)
        ctx.dims, ctx.eps = dims, eps
        x = input._data
        wide = x.astype(np.float64)  # the statistics in float64, rounded once (PyTorch's order differs in the last bit)
        mean = wide.mean(axis=dims, keepdims=True)
        var = ((wide - mean) ** 2).mean(axis=dims, keepdims=True)
        out = ((wide - mean) / np.sqrt(var + eps)).astype(x.dtype)
        if weight is not None:
            out = out * weight._data
        if bias is not None:
            out = out + bias._data
        return out.astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        input, weight = ctx.saved_tensors
        need_input, need_weight, need_bias = ctx.needs_input_grad
        dims = ctx.dims
        centred = input - input.mean(dims, keepdim=True)
        rstd = 1 / ((centred * centred).mean(dims, keepdim=True) + ctx.eps).sqrt()
        normalized = centred * rstd
        batch = tuple(range(input.ndim - len(dims)))  # the dims the weight was broadcast over
        grad_input = grad_weight = grad_bias = None
        if need_input:
            g = grad * weight if weight is not None else grad
            grad_input = rstd * (g - g.mean(dims, keepdim=True) - normalized * (g * normalized).mean(dims, keepdim=True))
        if need_weight:
            grad_weight = (grad * normalized).sum(batch) if batch else grad * normalized
        if need_bias:
            grad_bias = grad.sum(batch) if batch else grad
        return grad_input, grad_weight, grad_bias


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Normalize ``input`` over its last dims (``normalized_shape``), then ``* weight + bias``."""
    shape = _as_shape(normalized_shape)
    k = len(shape)
    if tuple(input.shape[input.ndim - k:]) != shape or input.ndim < k:
        raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape [*, "
                           f"{', '.join(str(s) for s in shape)}], but got input of size{list(input.shape)}")
    dims = tuple(range(input.ndim - k, input.ndim))
    return NativeLayerNormBackward0.apply(input, weight, bias, dims=dims, eps=eps)


def _as_shape(normalized_shape):
    return (normalized_shape,) if isinstance(normalized_shape, numbers.Integral) else tuple(normalized_shape)


class LayerNorm(Module):
    """``nn.LayerNorm(384)``: weight ones and bias zeros of ``normalized_shape`` (``elementwise_affine=False``: none)."""

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, device=None, dtype=None):
        super().__init__()
        self.normalized_shape = _as_shape(normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(ones(*self.normalized_shape, dtype=dtype))
            if bias:
                self.bias = Parameter(zeros(*self.normalized_shape, dtype=dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def forward(self, input):
        return layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}, "
                f"bias={self.bias is not None}")
