"""Tensor's methods: everything a tensor can *do* is attached to ``Tensor`` here, and only here.

``tensor.py`` says what a tensor is (data, autograd state, conversions) and imports none
of the engine above it; this module, at the top, gives it

* every operation of the registry as a method: ``x.exp()``, ``x.sum(dim=0)``, ``x.view(2, 3)``
  (``functional.METHODS``; ``x.T`` and the dtype conversions are in it too);
* the operators: ``x + y``, ``x @ y``, ``-x``, ``x == y``, ... (the table ``OPERATORS`` below);
* indexing, ``x[key]`` and ``x[key] = value`` (``indexing.py``);
* the in-place versions, ``x.add_(y)``, ``x += y``, ``x.zero_()``, ... (``inplace.py``);
* ``x.backward()`` (``autograd/api.py``) and the legacy constructor ``torch.Tensor(data)``.

``attach()`` is called once, by the package's ``__init__``.
"""
from __future__ import annotations

import numbers

import numpy as np

from . import _speed, beyond, dtypes, indexing, inplace, inplace_unary, legacy, new_tensors, ops, update_ops
from . import inplace_masked
from .autograd import api
from .creation import empty, tensor
from .functional import _SCALARS, METHODS
from .tensor import Tensor

_OPERANDS = (Tensor, *_SCALARS)


def _legacy_init(self, *args, **kwargs):
    """``torch.Tensor(data)`` / ``torch.Tensor(2, 3)``: the legacy constructor, float32.
    ``torch.Tensor(t)`` of a tensor is an alias of ``t``, as in PyTorch: the same memory, the same
    dtype (``r = torch.Tensor(t); r.zero_()`` zeroes ``t``), ``AliasBackward0`` if ``t`` requires grad."""
    if len(args) == 1 and isinstance(args[0], Tensor) and not kwargs:
        alias = ops.AliasBackward0.apply(args[0])
        self._data, self._requires_grad, self._grad_fn = alias._data, alias._requires_grad, alias._grad_fn
        self._grad, self._output_nr, self._counter = None, 0, alias._counter
        self.__dict__.update(alias.__dict__)  # what made it a view of t (_base, ...)
        self._counter.add_view(self)  # (told of in-place changes of t's memory, as alias was)
        return
    if len(args) == 1 and not isinstance(args[0], numbers.Integral):
        t = tensor(args[0], dtype=dtypes.get_default_dtype())
    else:
        t = empty(*args)
    self._data, self._requires_grad, self._grad_fn = t._data, False, None
    self._grad, self._output_nr, self._counter = None, 0, None


def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    """Compute the gradient of this tensor with respect to the graph leaves.

    For a scalar, ``gradient`` defaults to 1; for anything else pass the
    vector ``v`` of the vector-Jacobian product ``v^T J`` you want.
    """
    api.backward(self, gradient, retain_graph, create_graph, inputs=inputs)


# -- operators ---------------------------------------------------------------------------------
def _operator(f):
    """``x + other``: Python's own TypeError (via NotImplemented) for operands that are not tensors or numbers."""
    return lambda self, other: f(self, other) if isinstance(other, _OPERANDS) else NotImplemented


def _reflected(f):
    """``other + x``, as ``f(other, x)``."""
    return lambda self, other: f(other, self) if isinstance(other, _OPERANDS) else NotImplemented


def _equality(f):
    def dunder(self, other):
        try:
            return f(self, other)
        except TypeError:  # x == None, x == "text": not comparable, so Python says False
            return NotImplemented
    return dunder


def _bitwise(logical, bitwise):
    """``&`` and ``|``: logical on bool tensors, bitwise on integers."""
    def dunder(self, other):
        data = self._data
        return Tensor._make(logical(data, ops._data(other)) if data.dtype.kind == "b" else bitwise(data, ops._data(other)))
    return dunder


def _integer_op(ufunc):
    return lambda self, other: Tensor._make(np.asarray(ufunc(self._data, ops._data(other))))


F = METHODS  # (the same functions as torch.<name>, without the out= of some of those)
# number + x and number * x record the same nodes as x + number and x * number; number - x is RsubBackward1.
OPERATORS = {
    "__add__": _speed.arithmetic(_operator(F["add"]), np.add, ops.AddBackward0),
    "__radd__": _speed.arithmetic(_operator(F["add"]), np.add, ops.AddBackward0),
    "__mul__": _speed.arithmetic(_operator(F["mul"]), np.multiply, ops.MulBackward0),
    "__rmul__": _speed.arithmetic(_operator(F["mul"]), np.multiply, ops.MulBackward0),
    "__sub__": _speed.arithmetic(_operator(F["sub"]), np.subtract, ops.SubBackward0),
    "__rsub__": _speed.arithmetic(_reflected(F["sub"]), np.subtract, reflected=True),
    "__truediv__": _operator(F["div"]),
    "__rtruediv__": _reflected(F["div"]),
    "__pow__": _operator(F["pow"]),
    "__rpow__": _reflected(F["pow"]),
    "__matmul__": F["matmul"],
    "__rmatmul__": _reflected(F["matmul"]),
    "__neg__": F["neg"],
    "__pos__": lambda self: self,
    "__abs__": F["abs"],
    "__eq__": _equality(F["eq"]),
    "__ne__": _equality(F["ne"]),
    "__lt__": F["lt"],
    "__le__": F["le"],
    "__gt__": F["gt"],
    "__ge__": F["ge"],
    "__and__": _bitwise(np.logical_and, np.bitwise_and),
    "__or__": _bitwise(np.logical_or, np.bitwise_or),
    "__invert__": lambda self: Tensor._make(~self._data),
    "__floordiv__": _integer_op(np.floor_divide),
    "__mod__": _integer_op(np.mod),
    "__getitem__": indexing.index,
    "__setitem__": indexing.setitem,
    **inplace.OPERATORS,
}
del F


def _missing_attribute(self, name):
    """``x.name`` for a name a tensor lacks (Python calls this only then): PyTorch's AttributeError,
    or, for what PyTorch's tensors have (``x.stft``), the one-line error of what is beyond the engine."""
    raise beyond.missing("Tensor", name, self)


def attach():
    """Give ``Tensor`` all of the above."""
    Tensor.__init__ = _legacy_init
    Tensor.__getattr__ = _missing_attribute
    Tensor.backward = backward
    for table in (METHODS, inplace.METHODS, OPERATORS, legacy.METHODS, update_ops.METHODS, inplace_unary.METHODS,
                  new_tensors.METHODS, inplace_masked.METHODS):
        for name, f in table.items():
            setattr(Tensor, name, f)
