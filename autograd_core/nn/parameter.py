"""``nn.Parameter``: a leaf tensor that requires grad and that a ``Module`` registers as its own.

A parameter is nothing more than what lesson 2 called a leaf: ``requires_grad=True``, no
``grad_fn``, and ``.grad`` filled by ``backward()``. Here it is an ordinary ``Tensor`` marked as a
parameter (so every operation treats it exactly like any other tensor); ``isinstance(p,
nn.Parameter)`` reads the mark, and it prints as PyTorch prints one.
"""
from __future__ import annotations

from ..tensor import Tensor


class _ParameterType(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj._is_parameter

    def __call__(cls, data=None, requires_grad=True):
        from ..creation import empty

        data = empty(0) if data is None else data
        p = Tensor._make(data._data, False)  # shares data's numbers, as PyTorch's Parameter does
        p._version_counter = data._version_counter
        p.requires_grad = requires_grad
        p._is_parameter = True
        return p

    def __repr__(cls):
        return "<class 'torch.nn.parameter.Parameter'>"


class Parameter(metaclass=_ParameterType):
    """``nn.Parameter(torch.randn(3))``: a leaf that requires grad, registered by the module it is assigned to."""
