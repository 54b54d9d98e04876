"""``x.masked_fill_(mask, value)``, ``x.tril_()``, ``x.triu_()``: the masking functions written into ``x``.

Recorded like every in-place change (``inplace.write``): the function's node takes ``x``'s place
in the graph and ``x``'s version goes up.
"""
from __future__ import annotations

from . import inplace


def masked_fill_(self, mask, value):
    """``value`` written where ``mask`` is True."""
    return inplace.write(self, lambda t: t.masked_fill(mask, value), value)


def tril_(self, diagonal=0):
    return inplace.write(self, lambda t: t.tril(diagonal))


def triu_(self, diagonal=0):
    return inplace.write(self, lambda t: t.triu(diagonal))


METHODS = {f.__name__: f for f in (masked_fill_, tril_, triu_)}  # attached to Tensor by methods.py
