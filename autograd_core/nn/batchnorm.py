"""Batch normalization: each channel of a batch shifted and scaled to mean 0 and variance 1, then
given a learned scale (``weight``) and shift (``bias``).

    bn = nn.BatchNorm1d(100)          # makemore part 3's layer
    bn(h)                             # training: the batch's mean and variance, running averages updated
    bn.eval(); bn(h)                  # evaluation: the running averages

The output's node is ``NativeBatchNormBackward0``, as PyTorch's. Its backward is written with
tensor operations: in training it recomputes the batch's mean and variance from the saved input
with the engine's ops, so the gradient depends on them as it should and can be differentiated again.
"""
from __future__ import annotations

import math

import numpy as np

from .. import grad_mode
from ..function import Op
from ..tensor import Tensor, _type_name
from .lazy import LazyModuleMixin
from .module import Module
from .parameter import UninitializedBuffer, UninitializedParameter


class NativeBatchNormBackward0(Op):
    @staticmethod
    def forward(ctx, input, weight, bias, mean, invstd, eps, training):
        ctx.save_for_backward(input, weight)
        ctx.mean, ctx.invstd, ctx.eps, ctx.training = mean, invstd, eps, training
        x = input._data
        shape = _channel_shape(x.ndim)
        out = (x - mean.reshape(shape)) * invstd.reshape(shape)
        if weight is not None:
            out = out * weight._data.reshape(shape)
        if bias is not None:
            out = out + bias._data.reshape(shape)
        return out.astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        input, weight = ctx.saved_tensors
        need_input, need_weight, need_bias = ctx.needs_input_grad
        dims, shape = _reduced_dims(input.ndim), _channel_shape(input.ndim)
        if ctx.training:  # the batch's statistics, recomputed as tensors (they depend on the input)
            centred = input - input.mean(dims, keepdim=True)
            invstd = 1 / ((centred * centred).mean(dims, keepdim=True) + ctx.eps).sqrt()
        else:  # the running averages: constants
            centred = input - Tensor._make(ctx.mean.reshape(shape).astype(input._data.dtype))
            invstd = Tensor._make(ctx.invstd.reshape(shape).astype(input._data.dtype))
        normalized = centred * invstd
        grad_input = grad_weight = grad_bias = None
        if need_input:
            g = grad * weight.reshape(shape) if weight is not None else grad
            if ctx.training:
                n = input.numel() // input.shape[1]
                grad_input = invstd / n * (n * g - g.sum(dims, keepdim=True)
                                           - normalized * (g * normalized).sum(dims, keepdim=True))
            else:
                grad_input = g * invstd
        if need_weight:
            grad_weight = (grad * normalized).sum(dims)
        if need_bias:
            grad_bias = grad.sum(dims)
        return grad_input, grad_weight, grad_bias


def _reduced_dims(ndim):
    return (0, *range(2, ndim))  # every dimension but the channels'


def _channel_shape(ndim):
    return (1, -1) + (1,) * (ndim - 2)


def _check_dtypes(input, *parameters):
    """PyTorch's CPU rule: the parameters (weight, bias, running mean, running variance) share the input's
    dtype, or, for a half-precision input only, are all float32."""
    given = [p for p in parameters if p is not None]
    if not given:
        return
    if given[0].dtype != input.dtype:  # mixed: allowed only as float16 input with float32 parameters
        if any(p.dtype != np.float32 for p in given):
            raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of Float")
        if input.dtype != np.float16:
            raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")
        return
    for p in given:
        if p.dtype != input.dtype:
            raise RuntimeError(f"expected scalar type {_type_name(input.dtype)} but found {_type_name(p.dtype)}")


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5):
    """Normalize each channel (dimension 1) of ``input``: by the batch's statistics when ``training``
    (and then update ``running_mean``/``running_var`` in place), else by the running ones."""
    _check_dtypes(input._data, *(None if t is None else t._data for t in (weight, bias, running_mean, running_var)))
    x = input._data
    dims = _reduced_dims(x.ndim)
    if training:
        size = input.shape
        if size[0] * math.prod(size[2:]) == 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input size {size}")
        wide = x.astype(np.float64)  # the statistics in double, then rounded once
        mean = wide.mean(dims)
        var = wide.var(dims)
        n = x.size // x.shape[1]
        if running_mean is not None:
            with grad_mode.no_grad():
                # written as PyTorch's kernel writes them, with no version bump: they are buffers, not
                # saved for backward, and a tensor saved from them earlier reads the new values there too
                running_mean._data[...] = (1 - momentum) * running_mean._data + momentum * mean
                running_var._data[...] = (1 - momentum) * running_var._data + momentum * var * n / (n - 1)
        mean, invstd = mean.astype(x.dtype), (1 / np.sqrt(var + eps)).astype(x.dtype)
    else:
        mean = running_mean._data
        invstd = (1 / np.sqrt(running_var._data.astype(np.float64) + eps)).astype(x.dtype)
    return NativeBatchNormBackward0.apply(input, weight, bias, mean=mean, invstd=invstd, eps=eps, training=training)


class _BatchNorm(Module):
    _dims = None  # the input dimensions the layer takes (with and without a batch)

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 device=None, dtype=None, *, bias=True):
        super().__init__()
        from ..creation import empty, ones, tensor, zeros
        from .parameter import Parameter

        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        if affine:
            self.weight = Parameter(empty(num_features, dtype=dtype))
            if bias:
                self.bias = Parameter(empty(num_features, dtype=dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", zeros(num_features, dtype=dtype))
            self.register_buffer("running_var", ones(num_features, dtype=dtype))
            self.register_buffer("num_batches_tracked", tensor(0))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self):
        """Running mean 0, variance 1, no batch counted (in place: each buffer at version 1, as in PyTorch)."""
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self):
        """Running statistics reset; scale 1 and shift 0 (in place, as in PyTorch: each at version 1)."""
        from . import init

        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def _check_input_dim(self, input):
        if input.dim() not in self._dims:
            wanted = " or ".join(f"{d}D" for d in self._dims)
            raise ValueError(f"expected {wanted} input (got {input.dim()}D input)")

    def forward(self, input):
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            factor = 1.0 / float(self.num_batches_tracked) if self.momentum is None else self.momentum
        use_batch = self.training or (self.running_mean is None and self.running_var is None)
        keep = not self.training or self.track_running_stats
        return batch_norm(input, self.running_mean if keep else None, self.running_var if keep else None,
                          self.weight, self.bias, use_batch, factor, self.eps)

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    """``nn.BatchNorm1d(C)``: inputs (N, C) or (N, C, L), normalized per channel C."""

    _dims = (2, 3)


class BatchNorm2d(_BatchNorm):
    """``nn.BatchNorm2d(C)``: images (N, C, H, W), normalized per channel C."""

    _dims = (4,)


class _LazyBatchNorm(LazyModuleMixin, _BatchNorm):
    """A batch norm whose ``num_features`` is read from its first input (``input.shape[1]``): until then its
    weight and bias are ``UninitializedParameter``s and its running statistics ``UninitializedBuffer``s."""

    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None, dtype=None, *,
                 bias=True):
        from ..creation import tensor

        super().__init__(0, eps, momentum, False, False, device, dtype, bias=False)  # nothing made yet
        self.affine, self.track_running_stats = affine, track_running_stats
        if affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            if bias:
                self.bias = UninitializedParameter(device=device, dtype=dtype)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)
            self.num_batches_tracked = tensor(0)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        if self.has_uninitialized_params():
            with grad_mode.no_grad():
                self.num_features = input.shape[1]
                for t in (self.weight, self.bias, self.running_mean, self.running_var):
                    if t is not None:
                        t.materialize((self.num_features,))
                self.reset_parameters()


class LazyBatchNorm1d(_LazyBatchNorm):
    """``BatchNorm1d`` with ``num_features`` read from its first input; becomes a ``BatchNorm1d`` there."""

    _dims = BatchNorm1d._dims
    cls_to_become = BatchNorm1d


class LazyBatchNorm2d(_LazyBatchNorm):
    """``BatchNorm2d`` with ``num_features`` read from its first input; becomes a ``BatchNorm2d`` there."""

    _dims = BatchNorm2d._dims
    cls_to_become = BatchNorm2d
