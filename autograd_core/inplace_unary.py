"""In-place forms of the elementwise functions: ``t.cos_()`` is ``t = t.cos()`` written into ``t``.

Recorded like every in-place change (``inplace.write``): the node of the function takes ``t``'s
place in the graph and ``t``'s version goes up.
"""
from __future__ import annotations

from . import inplace


_NAMES = ("exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid", "relu", "abs", "neg", "reciprocal", "sign")


def _in_place(name):
    def method(self):
        return inplace.write(self, lambda t: getattr(t, name)())

    method.__name__ = name + "_"
    method.__doc__ = f"``x.{name}()`` written into ``x``."
    return method


METHODS = {name + "_": _in_place(name) for name in _NAMES}  # attached to Tensor by methods.py
