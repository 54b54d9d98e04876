"""``torch.nn.functional``: the layers and losses as functions (``F.relu(x)``, ``F.mse_loss(y, t)``).

The modules in ``nn`` call these; each checks its arguments with PyTorch's messages and hands
the work to a node in ``nn/ops.py`` or to the engine's own operations.
"""
from __future__ import annotations

import warnings

import numpy as np

from .. import functional as _engine
from ..tensor import Tensor, _wrap_dim
from . import ops
from .conv import conv1d, conv2d, conv_transpose2d, fold, unfold  # noqa: F401  (F.conv2d, ...: the op families live in their own files)
from .batchnorm import batch_norm  # noqa: F401
from .dropout import dropout  # noqa: F401
from .embedding import embedding  # noqa: F401
from .layer_norm import layer_norm  # noqa: F401
from .pooling import adaptive_avg_pool2d, avg_pool2d, max_pool2d  # noqa: F401
from .. import beyond as _beyond

relu, sigmoid, tanh = (_engine.FUNCTIONS[name] for name in ("relu", "sigmoid", "tanh"))  # F.relu is torch.relu


def linear(input, weight, bias=None):
    """``input @ weight.T + bias``: what ``nn.Linear`` computes."""
    if input.shape[-1] != weight.shape[-1]:
        rows = int(np.prod(input.shape[:-1])) if input.ndim > 1 else 1
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({rows}x{input.shape[-1]} and "
            f"{weight.shape[1]}x{weight.shape[0]})"
        )
    if input.ndim != 2:  # rows of any batch shape: fold them into one matrix and back (ViewBackward0)
        flat = linear(input.reshape(-1, input.shape[-1]), weight, bias)
        return flat.view(*input.shape[:-1], weight.shape[0])
    if bias is None:
        return input.mm(weight.t())
    return ops.AddmmBackward0.apply(bias, input, weight.t())


def leaky_relu(input, negative_slope=0.01, inplace=False):
    """``input`` where it is positive, ``negative_slope * input`` elsewhere."""
    out = ops.LeakyReluBackward0.apply(input, negative_slope=negative_slope)
    return input.copy_(out) if inplace else out


def softmax(input, dim=None, dtype=None):
    return _engine.softmax(input, _implicit_dim(input, dim, "softmax"), dtype)


def log_softmax(input, dim=None, dtype=None):
    return _engine.log_softmax(input, _implicit_dim(input, dim, "log_softmax"), dtype)


def _implicit_dim(input, dim, name):
    if dim is not None:
        return dim
    warnings.warn(
        f"Implicit dimension choice for {name} has been deprecated. Change the call to include dim=X as an argument.",
        UserWarning, stacklevel=3,
    )
    return 0 if input.ndim in (0, 1, 3) else 1


def one_hot(tensor, num_classes=-1):
    """``one_hot(tensor([0, 2]), 3)`` is ``tensor([[1, 0, 0], [0, 0, 1]])``: int64, no gradient."""
    if not isinstance(tensor, Tensor) or tensor._data.dtype != np.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    data = tensor._data
    if num_classes == -1:
        if data.size == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(data.max()) + 1
    if data.size and data.min() < 0:
        raise RuntimeError("Class values must be non-negative.")
    if data.size and data.max() >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    return Tensor._make((data[..., None] == np.arange(num_classes)).astype(np.int64))


def _check_reduction(reduction):
    if reduction not in ops._REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """Mean of the squared differences (``reduction="sum"``: their sum; ``"none"``: each)."""
    _check_reduction(reduction)
    if target.shape != input.shape:
        warnings.warn(
            f"Using a target size ({target.shape}) that is different to the input size ({input.shape}). "
            "This will likely lead to incorrect results due to broadcasting. Please ensure they have the same size.",
            UserWarning, stacklevel=2,
        )
    shape = np.broadcast_shapes(tuple(input.shape), tuple(target.shape))
    input = input if tuple(input.shape) == shape else input.expand(*shape)
    target = target if tuple(target.shape) == shape else target.expand(*shape)
    input, target = _engine._coerce(input, target)
    return ops.MseLossBackward0.apply(input, target, reduction=reduction)


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    """``-input[i, target[i]]``, averaged: the loss when ``input`` holds log-probabilities."""
    _check_reduction(reduction)
    if target._data.dtype.kind not in "iu":
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {target.dtype.legacy_name[:-6]}")
    if input.ndim not in (1, 2):
        raise ValueError(f"Expected 2 or 1 dimensions (got {input.ndim})")  # (images: not in this kit)
    if input.ndim == 2 and input.shape[0] != target.shape[0]:
        raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target batch_size ({target.shape[0]}).")
    classes = input.shape[-1]
    bad = target._data[(target._data < 0) | (target._data >= classes)]
    if bad.size:
        raise IndexError(f"Target {int(bad[0])} is out of bounds.")
    return ops.NllLossBackward0.apply(input, target=target._data, reduction=reduction)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean",
                  label_smoothing=0.0):
    """``nll_loss(log_softmax(input, 1), target)``: softmax and the log-likelihood of the right class.

    ``target`` holds class indices; a float ``target`` of ``input``'s shape holds probabilities.
    """
    _check_reduction(reduction)
    dim = 0 if input.ndim == 1 else 1
    if target._data.dtype.kind == "f":  # class probabilities
        loss = -(log_softmax(input, dim) * target).sum(dim)
        return loss.mean() if reduction == "mean" else loss.sum() if reduction == "sum" else loss
    return nll_loss(log_softmax(input, dim), target, reduction=reduction)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None, reduction="mean",
                                     pos_weight=None):
    """Binary cross-entropy of ``sigmoid(input)``, computed from the logits so it never overflows."""
    _check_reduction(reduction)
    if target.shape != input.shape:
        raise ValueError(f"Target size ({target.shape}) must be the same as input size ({input.shape})")
    input, target = _engine._coerce(input, target)
    return ops.BinaryCrossEntropyWithLogitsBackward0.apply(input, target, reduction=reduction)


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """Binary cross-entropy of probabilities ``input`` (each in [0, 1]) against ``target``."""
    _check_reduction(reduction)
    if target.shape != input.shape:
        raise ValueError(
            f"Using a target size ({target.shape}) that is different to the input size ({input.shape}) is "
            "deprecated. Please ensure they have the same size."
        )
    if ((input._data < 0) | (input._data > 1)).any():
        raise RuntimeError("all elements of input should be between 0 and 1")
    return ops.BinaryCrossEntropyBackward0.apply(input, target, reduction=reduction)

__getattr__ = _beyond.module_getattr("torch.nn.functional")  # what PyTorch has here and the engine has not: its error
