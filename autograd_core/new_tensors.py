"""``x.new_zeros(2, 3)``, ``x.new_tensor(data)``, ...: new tensors with ``x``'s dtype, and ``x.resize_``.

``new_*`` take the dtype of the tensor they are called on unless given one (``new_tensor([1, 2])``
of a float32 tensor is float32), and are leaves that do not require grad unless asked.
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from . import creation, dtypes
from .tensor import Tensor


def new_tensor(self, data, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False):
    if isinstance(data, Tensor):
        warnings.warn(
            "To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() or "
            "sourceTensor.detach().clone().requires_grad_(True), rather than tensor.new_tensor(sourceTensor).",
            UserWarning, stacklevel=2,
        )
        data = data._data.copy()
    return creation.tensor(data, dtype=dtype or self.dtype, device=device, requires_grad=requires_grad)


def new_zeros(self, *size, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False):
    return creation.zeros(*size, dtype=dtype or self.dtype, device=device, requires_grad=requires_grad)


def new_ones(self, *size, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False):
    return creation.ones(*size, dtype=dtype or self.dtype, device=device, requires_grad=requires_grad)


def new_empty(self, *size, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False):
    return creation.empty(*size, dtype=dtype or self.dtype, device=device, requires_grad=requires_grad)


def new_full(self, size, fill_value, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False):
    return creation.full(size, fill_value, dtype=dtype or self.dtype, device=device, requires_grad=requires_grad)


def resize_(self, *sizes, memory_format=None):
    """Give this tensor the shape ``sizes`` in place: its first elements (in memory order) stay,
    new ones are uninitialised in PyTorch (zeros here)."""
    if self._requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    shape = creation._size(sizes)
    if shape == self._data.shape:
        return self  # nothing changes, and the version stays (as in PyTorch)
    n = math.prod(shape)
    flat = self._data.reshape(-1)
    kept = flat[:n] if n <= flat.size else np.concatenate([flat, np.zeros(n - flat.size, flat.dtype)])
    self._data = np.ascontiguousarray(kept).reshape(shape)
    self._version_counter.bump()
    return self


def resize_as_(self, other, memory_format=None):
    return resize_(self, *other.shape)


METHODS = {f.__name__: f for f in (new_tensor, new_zeros, new_ones, new_empty, new_full, resize_, resize_as_)}
del dtypes
