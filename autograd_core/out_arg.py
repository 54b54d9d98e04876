"""``torch.add(x, y, out=result)``: functions that write their result into a tensor given as ``out=``.

As in PyTorch: not with autograd (an input that requires grad is refused while grad mode is on);
the result's dtype must be castable to ``out``'s (no float into an int tensor, nothing but bool into
a bool one); an ``out`` of another shape is resized (with PyTorch's warning if it held elements);
``out`` itself is returned.
"""
from __future__ import annotations

import functools

import numpy as np

from . import grad_mode, torch_warnings
from .tensor import Tensor, _type_name


def _can_cast(source, target):
    if source.kind == "f" and target.kind in "iub":
        return False
    return not (source.kind != "b" and target.kind == "b")


def _inputs(args, kwargs):
    for a in (*args, *kwargs.values()):
        if isinstance(a, Tensor):
            yield a
        elif isinstance(a, (list, tuple)):
            yield from (t for t in a if isinstance(t, Tensor))


def accepts_out(f):
    """``f`` (a ``torch.name`` function) with PyTorch's ``out=`` keyword."""
    @functools.wraps(f)
    def call(*args, out=None, **kwargs):
        if out is None:
            return f(*args, **kwargs)
        if grad_mode.is_grad_enabled() and (out._requires_grad or any(t._requires_grad for t in _inputs(args, kwargs))):
            raise RuntimeError(
                f"{f.__name__}(): functions with out=... arguments don't support automatic differentiation, "
                "but one of the arguments requires grad."
            )
        result = f(*args, **kwargs)._data
        if not _can_cast(result.dtype, out._data.dtype):
            raise RuntimeError(
                f"result type {_type_name(result.dtype)} can't be cast to the desired output type "
                f"{_type_name(out._data.dtype)}"
            )
        if out._data.shape != result.shape:
            if out._data.size:
                torch_warnings.warn(
                    f"An output with one or more elements was resized since it had shape {list(out._data.shape)}, "
                    f"which does not match the required output shape {list(result.shape)}. This behavior is "
                    "deprecated, and in a future PyTorch release outputs will not be resized unless they have zero "
                    "elements. You can explicitly reuse an out tensor t by resizing it, inplace, to zero elements "
                    "with t.resize_(0).", "out resized",
                )
            out._data = np.empty(result.shape, out._data.dtype)
        out._data[...] = result
        out._version_counter.bump()
        return out

    return call
