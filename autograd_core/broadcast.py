"""Undoing broadcasting, in one place.

When ``x`` of shape (3,) is added to ``m`` of shape (2, 3), NumPy stretches
``x`` over two rows. In backward each of those copies sends back a gradient,
so the gradient for ``x`` is the sum over the stretched dimension. The engine
calls ``sum_to_shape`` on every gradient an op returns, so no op has to.

Forward, ``check_broadcast`` raises PyTorch's error for shapes that do not fit.
"""
from __future__ import annotations

import numpy as np


def sum_to_shape(grad, shape):
    """Sum ``grad`` (a Tensor) over the dims that broadcasting added or stretched."""
    gshape = grad._data.shape
    if gshape == shape:
        return grad
    lead = len(gshape) - len(shape)
    dims = tuple(range(lead)) + tuple(
        lead + i for i, s in enumerate(shape) if s == 1 and gshape[lead + i] != 1
    )
    if dims:
        grad = grad.sum(dim=dims, keepdim=True)
    return grad.reshape(shape) if grad._data.shape != shape else grad


def check_broadcast(a_shape, b_shape):
    """PyTorch's error if two shapes cannot be broadcast together."""
    try:
        np.broadcast_shapes(a_shape, b_shape)
    except ValueError:
        raise broadcast_error(a_shape, b_shape) from None


def broadcast_error(a_shape, b_shape):
    """PyTorch's wording for shapes that cannot be broadcast together."""
    a, b = list(a_shape), list(b_shape)
    n = max(len(a), len(b))
    a, b = [1] * (n - len(a)) + a, [1] * (n - len(b)) + b
    for i in range(n - 1, -1, -1):
        if a[i] != b[i] and a[i] != 1 and b[i] != 1:
            return RuntimeError(
                f"The size of tensor a ({a[i]}) must match the size of tensor b ({b[i]}) "
                f"at non-singleton dimension {i}"
            )
    return RuntimeError(f"shapes {list(a_shape)} and {list(b_shape)} cannot be broadcast together")
