"""The graph nodes of a network's layers and losses, forward and backward side by side (as in
``ops.py``), named as PyTorch names them: ``loss.grad_fn`` is ``<MseLossBackward0>`` here too.

Each could be written with the engine's elementwise operations (lesson 9 wrote the squared
loss that way); as one node, the graph has the node PyTorch shows, and the backward formula
is the one a student would derive by hand.
"""
from __future__ import annotations

import numpy as np

from .. import float32_math
from ..function import Op
from ..tensor import Tensor

_REDUCTIONS = ("none", "mean", "sum")


def _reduce(loss, reduction):
    if reduction == "mean":
        return loss.mean(dtype=loss.dtype) if loss.size else np.asarray(np.nan, loss.dtype)
    return loss.sum(dtype=loss.dtype) if reduction == "sum" else loss


def _reduced_grad(grad, shape, reduction):
    """The gradient of each element of an unreduced loss, given the gradient of the reduced one."""
    if reduction == "mean":
        return grad / int(np.prod(shape))
    return grad  # "sum" broadcasts a 0-d gradient; "none" already has the loss's shape


class AddmmBackward0(Op):
    """``bias + input @ weight_t``: ``nn.Linear`` on a batch of rows."""

    @staticmethod
    def forward(ctx, bias, input, weight_t):
        need_bias, need_input, need_weight = ctx.needs_input_grad or (False, False, False)
        ctx.save_for_backward(input if need_weight else None, weight_t if need_input else None)
        return bias._data + input._data @ weight_t._data

    @staticmethod
    def backward(ctx, grad):
        input, weight_t = ctx.saved_tensors
        need_bias, need_input, need_weight = ctx.needs_input_grad
        return (grad if need_bias else None,  # summed over the rows where bias was broadcast
                grad.mm(weight_t.t()) if need_input else None,
                input.t().mm(grad) if need_weight else None)


class MseLossBackward0(Op):
    """``mean((input - target) ** 2)`` (or its sum, or no reduction)."""

    @staticmethod
    def forward(ctx, input, target, reduction):
        ctx.save_for_backward(input, target)
        ctx.reduction = reduction
        d = input._data - target._data
        return _reduce(d * d, reduction)

    @staticmethod
    def backward(ctx, grad):
        input, target = ctx.saved_tensors
        g = _reduced_grad(grad, np.broadcast_shapes(input._data.shape, target._data.shape), ctx.reduction)
        d = 2 * (input - target) * g
        return d, (-d if ctx.needs_input_grad[1] else None)


class NllLossBackward0(Op):
    """``-mean(input[i, target[i]])``: with ``input`` = log_softmax(logits), the cross-entropy."""

    @staticmethod
    def forward(ctx, input, target, reduction):
        ctx.save_for_backward(input)
        ctx.target, ctx.reduction = target, reduction
        x = input._data
        picked = -x[np.arange(x.shape[0]), target] if x.ndim == 2 else -x[target]
        return _reduce(picked, reduction)

    @staticmethod
    def backward(ctx, grad):
        (input,) = ctx.saved_tensors
        target = ctx.target
        n = target.size
        g = grad._data / n if ctx.reduction == "mean" else grad._data
        onehot = np.zeros_like(input._data)
        if input._data.ndim == 2:
            onehot[np.arange(n), target] = -1
            g = g.reshape(-1, 1) if np.ndim(g) else g
        else:
            onehot[target] = -1
        return (Tensor._make(np.asarray(onehot * g, dtype=input._data.dtype)),)


class BinaryCrossEntropyWithLogitsBackward0(Op):
    """``-(t log sigmoid(x) + (1 - t) log(1 - sigmoid(x)))``, computed without overflow."""

    @staticmethod
    def forward(ctx, input, target, reduction):
        ctx.save_for_backward(input, target)
        ctx.reduction = reduction
        x, t = input._data, target._data
        # (1 - t) x + log(1 + exp(-x)), with the log term written to stay finite for large |x|
        loss = (1 - t) * x + np.maximum(-x, 0) + float32_math.log(
            float32_math.exp(-np.maximum(-x, 0)) + float32_math.exp(-x - np.maximum(-x, 0)))
        return _reduce(loss.astype(x.dtype, copy=False), reduction)

    @staticmethod
    def backward(ctx, grad):
        input, target = ctx.saved_tensors
        g = _reduced_grad(grad, input._data.shape, ctx.reduction)
        return (input.sigmoid() - target) * g, (-input * g if ctx.needs_input_grad[1] else None)


class BinaryCrossEntropyBackward0(Op):
    """``-(t log p + (1 - t) log(1 - p))``, each log clamped at -100 as PyTorch does."""

    @staticmethod
    def forward(ctx, input, target, reduction):
        ctx.save_for_backward(input, target)
        ctx.reduction = reduction
        p, t = input._data, target._data
        with np.errstate(divide="ignore"):
            log_p = np.maximum(float32_math.log(p), -100)
            log_q = np.maximum(float32_math.log(1 - p), -100)
        return _reduce((-(t * log_p + (1 - t) * log_q)).astype(p.dtype, copy=False), reduction)

    @staticmethod
    def backward(ctx, grad):
        input, target = ctx.saved_tensors
        g = _reduced_grad(grad, input._data.shape, ctx.reduction)
        eps = 1e-12  # PyTorch's guard against dividing by zero at p = 0 or 1
        return ((input - target) / ((1 - input) * input).clamp(min=eps) * g, None)


class LeakyReluBackward0(Op):
    """``x`` where ``x > 0``, ``negative_slope * x`` elsewhere."""

    @staticmethod
    def forward(ctx, input, negative_slope):
        ctx.save_for_backward(input)
        ctx.negative_slope = negative_slope
        x = input._data
        return np.where(x > 0, x, x * np.asarray(negative_slope, x.dtype))

    @staticmethod
    def backward(ctx, grad):
        (input,) = ctx.saved_tensors
        slope = Tensor._make(np.asarray(ctx.negative_slope, grad._data.dtype))
        return (grad * (input > 0) + grad * slope * (input <= 0),)
