"""``nn.init``: filling parameters with starting values, in place and without recording.

``init.normal_(net[0].weight, std=0.01)`` is ``with torch.no_grad(): weight.normal_(0, 0.01)``.
"""
from __future__ import annotations

import math
import warnings

from .. import grad_mode
from .. import beyond as _beyond


def _fill(tensor, how):
    with grad_mode.no_grad():
        how()
    return tensor


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    return _fill(tensor, lambda: tensor.uniform_(a, b, generator=generator))


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    return _fill(tensor, lambda: tensor.normal_(mean, std, generator=generator))


def constant_(tensor, val):
    return _fill(tensor, lambda: tensor.fill_(val))


def zeros_(tensor):
    return _fill(tensor, tensor.zero_)


def ones_(tensor):
    return constant_(tensor, 1.0)


def calculate_gain(nonlinearity, param=None):
    """PyTorch's recommended scale for each activation (``relu``: sqrt(2))."""
    if nonlinearity in ("linear", "sigmoid", "conv1d", "conv2d", "conv3d"):
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else param
        return math.sqrt(2.0 / (1 + slope ** 2))
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _fans(tensor):
    if tensor.dim() < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    receptive = math.prod(tensor.shape[2:])
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


# The bounds below are computed in PyTorch's order (std first, then sqrt(3) * std): the same
# double, so the same float32 bound, so the same numbers.

def xavier_uniform_(tensor, gain=1.0, generator=None):
    fan_in, fan_out = _fans(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    fan_in, fan_out = _fans(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)), generator)


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    fan = _fans(tensor)[0 if mode == "fan_in" else 1]
    std = calculate_gain(nonlinearity, a) / math.sqrt(fan)
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    fan = _fans(tensor)[0 if mode == "fan_in" else 1]
    return normal_(tensor, 0.0, calculate_gain(nonlinearity, a) / math.sqrt(fan), generator)

__getattr__ = _beyond.module_getattr("torch.nn.init")  # what PyTorch has here and the engine has not: its error
