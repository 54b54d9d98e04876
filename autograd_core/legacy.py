"""Names from older PyTorch that tutorials still in circulation use.

* ``torch.FloatTensor([1, 2])``, ``torch.LongTensor(2, 3)``: a tensor of that dtype;
  ``isinstance(x, torch.FloatTensor)`` asks for the dtype; ``x.type()`` names it.
* ``torch.autograd.Variable(t, requires_grad=True)``: since PyTorch 0.4 every tensor is a
  Variable; calling it gives a new leaf sharing ``t``'s numbers.
"""
from __future__ import annotations

import numbers

from . import dtypes
from .tensor import Tensor


class _LegacyTensorType(type):
    """The type of ``torch.FloatTensor`` and its siblings (PyTorch's ``torch.tensortype``)."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.dtype is cls.dtype

    def __call__(cls, *args):
        from .creation import empty, tensor

        if len(args) == 1 and not isinstance(args[0], numbers.Integral):
            return tensor(args[0], dtype=cls.dtype)
        return empty(*args, dtype=cls.dtype)

    def __repr__(cls):
        return f"<class 'torch.{cls.__name__}'>"


def _legacy_type(d):
    return _LegacyTensorType(d.legacy_name, (), {"dtype": d})


FloatTensor, DoubleTensor, HalfTensor = (_legacy_type(d) for d in (dtypes.float32, dtypes.float64, dtypes.float16))
LongTensor, IntTensor, ShortTensor = (_legacy_type(d) for d in (dtypes.int64, dtypes.int32, dtypes.int16))
CharTensor, ByteTensor, BoolTensor = (_legacy_type(d) for d in (dtypes.int8, dtypes.uint8, dtypes.bool))
_BY_NAME = {f"torch.{t.__name__}": t for t in (FloatTensor, DoubleTensor, HalfTensor, LongTensor, IntTensor,
                                                ShortTensor, CharTensor, ByteTensor, BoolTensor)}


def tensor_type(self, dtype=None, non_blocking=False, **kwargs):
    """``x.type()`` is ``'torch.FloatTensor'``; ``x.type(torch.float64)`` converts, as ``x.to`` does."""
    if dtype is None:
        return f"torch.{self.dtype.legacy_name}"
    if isinstance(dtype, str):
        if dtype not in _BY_NAME:
            raise ValueError(f"invalid type: '{dtype}'")
        dtype = _BY_NAME[dtype]
    if isinstance(dtype, _LegacyTensorType):
        dtype = dtype.dtype
    return self.to(dtype)


def cuda(self, device=None, non_blocking=False):
    """No GPU here: PyTorch's errors on a build without CUDA (a device given by its number is
    looked up among the accelerators first, and there are none)."""
    if isinstance(device, int) and not isinstance(device, bool):
        if device < 0:
            raise RuntimeError("Device index must not be negative")
        raise RuntimeError("Cannot access accelerator device when none is available.")
    raise AssertionError("Torch not compiled with CUDA enabled")


METHODS = {"type": tensor_type, "cuda": cuda}  # attached to Tensor by methods.py


class _VariableType(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor)

    def __call__(cls, data, requires_grad=False, volatile=False):
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        leaf = data.detach()
        leaf.requires_grad = requires_grad
        return leaf


class Variable(metaclass=_VariableType):
    """``Variable(t, requires_grad=True)``: what ``t.detach().requires_grad_()`` is today."""
