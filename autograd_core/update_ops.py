"""``lerp``, ``addcmul``, ``addcdiv``: the pointwise combinations an optimizer's update is made of.

    a.lerp(b, w)             a + w * (b - a)
    a.addcmul(t1, t2, v)     a + v * t1 * t2
    a.addcdiv(t1, t2, v)     a + v * t1 / t2

Each is written with the engine's own operations (so when recorded, the graph holds those,
not PyTorch's single ``AddcmulBackward0`` node); the in-place forms (``lerp_`` ...) are what
``optim.Adam`` runs under ``no_grad``.
"""
from __future__ import annotations

from . import inplace



def lerp(input, end, weight):
    return input + weight * (end - input)


def addcmul(input, tensor1, tensor2, *, value=1):
    return input + value * tensor1 * tensor2


def addcdiv(input, tensor1, tensor2, *, value=1):
    return input + value * tensor1 / tensor2


def _in_place(function):
    def method(self, *args, **kwargs):
        return inplace.write(self, lambda t: function(t, *args, **kwargs), *args)

    method.__name__ = function.__name__ + "_"
    return method


# attached to Tensor by methods.py: x.lerp(...), x.lerp_(...), ...
METHODS = {f.__name__: f for f in (lerp, addcmul, addcdiv)}
METHODS.update({f.__name__ + "_": _in_place(f) for f in (lerp, addcmul, addcdiv)})
